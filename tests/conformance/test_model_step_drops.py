"""Robots dropped at their own MJCF time step stay physical, in every solver that claims it.

Parametrised by the README's feature table (:mod:`claims`, row "physical at the model's step"). The MJX test-data
humanoid (5 ms), our bundled humanoid and quadruped (2 ms; SolverFeatherstone also 5 ms) fall uncontrolled from
their initial pose: every value stays finite, the kinetic + gravitational energy never exceeds its initial value
and contact penetration stays below 2 cm. (``SolverSemiImplicit`` is explicit and warns at these steps:
tests/solvers/test_stability.py.)

SolverXPBD runs with its default options: passive joint stiffness and damping are implicit rows of its drive
phase (an explicit damping torque on a light link, ``d·dt/I > 2``, used to pump energy in at the quadruped's
2 ms step). Also checked for it: a damped, sprung hinge follows the closed-form implicit-Euler recurrence at
``d·dt/I = 5``, where the old explicit damping diverged, and the bundled quadruped without contact never gains
energy at 2 ms (the regression: +1160 J before).

Energy tolerance: 1e-3·|E₀| (0.05 J of the quadruped's 47 J, 0.34 J of the MJX humanoid's 341 J), the float32
rounding of summing ~10–20 bodies' energies of order |E₀| over the run; measured maxima stay below E₀ (the first
step already dissipates). XPBD's drive rows' targets hold the joint springs' energy, which the kinetic +
gravitational energy cannot exceed either (every run starts at rest at q = 0).
"""

import functools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from claims import Elsewhere, claimants
from helpers import MJX_HUMANOID, mjcf_model

import jaxart

#: Per claimant: its solver and the drops it runs ``(model, dt or None for the model's step, seconds, slow)``.
#: SolverXPBD's drops are slow: one contact-step compile per model, ~1.5–3 min each on a loaded 2-core machine.
CASES = {
    "featherstone": (jaxart.solvers.SolverFeatherstone, [("mjx_humanoid", None, 1.0, False),
                                                         ("humanoid", None, 1.0, False),
                                                         ("quadruped", None, 1.0, False),
                                                         ("quadruped", 5e-3, 1.0, False)]),
    "xpbd": (jaxart.solvers.SolverXPBD, [("quadruped", None, 0.5, True), ("humanoid", None, 1.0, True),
                                         ("mjx_humanoid", None, 1.0, True)]),
    # MuJoCo's own integrator and constraint solver: the bridge steps as MuJoCo C does on the humanoid
    "mujoco": Elsewhere(("tests/solvers/mujoco/test_solver_mujoco.py::test_mjx_test_data_humanoid_via_add_mjcf",)),
}


def _drops():
    params = []
    for key in claimants("model_step"):
        if isinstance(CASES.get(key), tuple):
            for name, dt, seconds, slow in CASES[key][1]:
                marks = (pytest.mark.slow,) if slow else ()
                dt_id = "" if dt is None else f"-{dt * 1e3:g}ms"
                params.append(pytest.param(key, name, dt, seconds, marks=marks, id=f"{key}-{name}{dt_id}"))
    return params


def _energy(model, body_q, body_qd):
    com = jaxart.math.transform_point(body_q, model.body_com)
    rot = jaxart.math.quat_to_matrix(body_q[:, 3:])
    inertia = rot @ model.body_inertia @ jnp.swapaxes(rot, -1, -2)
    v, w = body_qd[:, :3], body_qd[:, 3:]
    kin = 0.5 * jnp.sum(model.body_mass * jnp.sum(v * v, -1)) + 0.5 * jnp.einsum("bi,bij,bj->", w, inertia, w)
    return kin - jnp.sum(model.body_mass * (com @ model.gravity))


@functools.partial(jax.jit, static_argnames=("key", "steps", "dt", "contacts"))
def _drop(model, key: str, steps: int, dt: float, contacts: bool = True):
    solver = CASES[key][0](model)

    def step(s, _):
        c = model.collide(s) if contacts else None
        s = solver.step(s, None, c, dt)
        pen = -jnp.min(jnp.where(c.active, c.separation, 0.0)) if contacts else jnp.zeros(())
        return s, (_energy(model, s.body_q, s.body_qd), pen, jnp.all(jnp.isfinite(s.body_q)))

    return jax.lax.scan(step, model.state(), None, length=steps)[1]


def _load(name):
    path = MJX_HUMANOID if name == "mjx_humanoid" else jaxart.assets.asset_path(name)
    return mjcf_model(path, jnp.float32), float(mujoco.MjModel.from_xml_path(path).opt.timestep)


def _check(model, out):
    s0 = model.state()
    e0 = float(_energy(model, s0.body_q, s0.body_qd))
    energy, pen, finite = (np.asarray(x) for x in out)
    assert finite.all()
    assert energy.max() <= e0 + 1e-3 * abs(e0), f"energy gain {energy.max() - e0:.3f} J"
    assert pen.max() < 0.02
    return energy, e0


@pytest.mark.parametrize("key, name, dt, seconds", _drops())
def test_uncontrolled_drop_at_the_model_step_stays_physical(key, name, dt, seconds):
    model, model_dt = _load(name)
    dt = model_dt if dt is None else dt
    _check(model, _drop(model, key, int(round(seconds / dt)), dt))


@pytest.mark.slow
def test_xpbd_quadruped_without_contact_never_gains_energy_at_2ms():
    """Explicit damping exceeded the tolerance after 58 steps (+990 J after 105): 150 steps catch it."""
    model, dt = _load("quadruped")
    assert dt == 2e-3
    energy, e0 = _check(model, _drop(model, "xpbd", 150, dt, False))
    assert np.all(np.diff(energy) <= 1e-3 * abs(e0))  # no step gains energy either


def _hinge(inertia: float, *, stiffness: float, damping: float, rest: float):
    """One link on a world hinge about z with its COM on the axis (no gravity torque)."""
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=1.0, inertia=np.diag([1.0, 1.0, inertia]))
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, 0.0, 1.0), stiffness=stiffness, damping=damping,
                                             rest_q=rest)])
    return b.finalize(dtype=jnp.float64)


@pytest.mark.parametrize("q0", [-0.2, 2.0 * np.pi - 0.004])
def test_xpbd_passive_hinge_follows_the_implicit_euler_recurrence(q0):
    """``d·dt/I = 5``: explicit damping would multiply the velocity by ``1 − 5`` every step. From
    ``2π − 0.004`` the measured angle wraps past ``2π`` (to ``−2π``) within the first step; the spring
    pulls toward the nearest copy of its rest angle."""
    inertia, dt, steps, rest, stiffness, damping = 2e-3, 2e-3, 60, 0.3, 40.0, 5.0
    model = _hinge(inertia, stiffness=stiffness, damping=damping, rest=rest)
    s0 = model.state()
    s0 = jaxart.eval_fk(model, jnp.array([q0]), jnp.array([4.0]), s0)
    solver = jaxart.solvers.SolverXPBD(model)

    def body(s, _):
        s = solver.step(s, None, None, dt)
        return s, (s.joint_q[0], s.joint_qd[0])

    q, qd = (np.asarray(x) for x in jax.jit(lambda s: jax.lax.scan(body, s, None, length=steps)[1])(s0))
    # implicit Euler: I (w' - w) = dt (k (rest - q') - d w'),  q' = q + dt w'
    ref_q, ref_w, x, w = [], [], q0, 4.0
    rest = rest + 2.0 * np.pi * np.floor((q0 + np.pi) / (2.0 * np.pi))
    for _ in range(steps):
        w = (inertia * w + dt * stiffness * (rest - x)) / (inertia + dt * damping + dt * dt * stiffness)
        x = x + dt * w
        ref_q.append(x)
        ref_w.append(w)
    # to the first-order quaternion updates' O((ω dt)³) angle error per step (2e-7 accumulated here)
    err = (q - np.asarray(ref_q) + np.pi) % (2.0 * np.pi) - np.pi  # the same angle up to whole turns
    np.testing.assert_allclose(err, 0.0, atol=1e-6)
    np.testing.assert_allclose(qd, ref_w, rtol=1e-4, atol=1e-5)
