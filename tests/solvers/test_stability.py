"""No silent blow-ups: stable-step estimates of explicit springs and the warning when ``dt`` exceeds them.

The closed-form bound of a damped oscillator under semi-implicit Euler is checked against a direct
simulation just below and above it; the solvers warn once (naming the element that sets the bound) when
a concrete ``dt`` exceeds their estimate, and SolverFeatherstone's implicit defaults never warn.
"""

import math
import warnings

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import mjcf_model

import jaxart
from jaxart.solvers.stability import drive_stable_step, oscillator_stable_step


def _grows(k, c, m, dt, steps=4000) -> bool:
    """Whether the state grows by orders of magnitude (stable steps keep it bounded, near the bound too)."""
    x, v = 1.0, 1.0
    for _ in range(steps):
        v += dt * (-k * x - c * v) / m
        x += dt * v
    return not abs(x) + abs(v) < 1e3  # NaN (overflow) counts as growth


@pytest.mark.parametrize("k, c, m", [(100.0, 0.0, 1.0), (1e4, 50.0, 0.3), (10.0, 30.0, 2.0), (0.0, 5.0, 1.0)])
def test_oscillator_bound_separates_stable_from_unstable_steps(k, c, m):
    dt = oscillator_stable_step(k, c, m)
    assert math.isfinite(dt) and dt > 0
    assert not _grows(k, c, m, 0.98 * dt)
    assert _grows(k, c, m, 1.02 * dt)


@pytest.fixture(scope="module")
def quadruped():
    return mjcf_model(jaxart.assets.asset_path("quadruped"), jnp.float32)


def _warnings(solver, model, dt, contacts=True, calls=2):
    state = model.state()
    c = model.collide(state) if contacts else None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(calls):
            solver.step(state, None, c, dt)
    return [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]


def test_semi_implicit_warns_once_per_cause_naming_the_element(quadruped):
    msgs = _warnings(jaxart.solvers.SolverSemiImplicit(quadruped), quadruped, 2e-3)
    assert len(msgs) == 2  # penalty contact and attachment springs, once each over two calls
    assert any("penalty contact" in m and "foot" in m for m in msgs)
    assert any("attachment springs" in m and "joint" in m for m in msgs)
    assert _warnings(jaxart.solvers.SolverSemiImplicit(quadruped), quadruped, 5e-5) == []


@pytest.mark.slow
def test_featherstone_warns_only_in_explicit_modes(quadruped):
    assert _warnings(jaxart.solvers.SolverFeatherstone(quadruped), quadruped, 16e-3) == []
    msgs = _warnings(jaxart.solvers.SolverFeatherstone(quadruped, contact="explicit"), quadruped, 2e-3)
    assert len(msgs) == 1 and "penalty contact" in msgs[0]
    assert _warnings(jaxart.solvers.SolverFeatherstone(quadruped, contact="explicit"), quadruped, 2e-3,
                     contacts=False) == []


def test_explicit_drive_estimate_uses_the_joint_space_inertia():
    """A 1 kg point mass on a 0.5 m massless arm (inertia 0.25 kg·m²) with a stiff explicit drive."""
    b = jaxart.ModelBuilder()
    link = b.add_link(com=(0.5, 0.0, 0.0), mass=1.0, inertia=np.eye(3) * 1e-6, label="arm")
    j = b.add_joint_revolute(-1, link, axis=(0.0, 0.0, 1.0), target_ke=1e4, target_kd=10.0, label="hinge")
    b.add_articulation([j])
    model = b.finalize(dtype=jnp.float32)
    est = drive_stable_step(model)
    np.testing.assert_allclose(est.dt, oscillator_stable_step(1e4, 10.0, 0.25 + 1e-6), rtol=1e-4)
    assert "hinge" in est.reason
    msgs = _warnings(jaxart.solvers.SolverFeatherstone(model, drive="explicit"), model, 2 * est.dt, contacts=False)
    assert len(msgs) == 1 and "hinge" in msgs[0]
    assert _warnings(jaxart.solvers.SolverFeatherstone(model), model, 2 * est.dt, contacts=False) == []
