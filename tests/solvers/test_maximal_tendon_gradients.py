"""Tendons in the maximal-coordinate solvers: derivatives of their steps and SolverXPBD's tendon effort limits.

Oracles: central finite differences of the same compiled step (:mod:`fd_check`) for the derivatives of two
SolverXPBD / SolverSemiImplicit steps with respect to the initial state and the tendons' stiffness and rest length
(a fixed and a spatial tendon in one model), and SolverFeatherstone's clamped implicit tendon actuator for
SolverXPBD's effort limit: on two sliders pulled along their axes by a fixed and a spatial tendon actuator, both
solvers' steps are the same law (the slide is linear in the tendon length), so both follow the clamped actuator's
closed-form recursion to round-off through the saturated phase (a constant force at the effort limit) and the
unsaturated approach to the target. All float64.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fd_check import assert_jacobian_matches_fd

import jaxart

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
INERTIA = np.diag([0.02, 0.03, 0.01])


@functools.lru_cache(maxsize=1)
def _pendulums():
    """Two pendulums hinged to the world (axes y and oblique) coupled by a fixed tendon ``q0 − 0.5 q1`` and a
    spatial tendon between points on the links, each with a spring (active: the lengths are outside their rest
    lengths), damping and an actuator drive."""
    b = jaxart.ModelBuilder()
    links, joints = [], []
    for i in range(2):
        x = (0.6 * i, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        link = b.add_link(xform=x, mass=1.0 + 0.5 * i, inertia=INERTIA, com=(0.0, 0.0, -0.3), label=f"l{i}")
        j = b.add_joint_revolute(-1, link, axis=((0.0, 1.0, 0.0), (0.0, 0.8, 0.6))[i], parent_xform=x, label=f"j{i}")
        b.add_articulation([j])
        links.append(link)
        joints.append(j)
    b.joint_q[:] = [0.3, -0.2]  # fixed length 0.4
    b.add_tendon_fixed([(joints[0], 1.0), (joints[1], -0.5)], stiffness=30.0, damping=0.5, springlength=0.2,
                       target_ke=5.0, target_length=0.3, label="fixed")
    b.add_tendon_spatial([(links[0], (0.05, 0.0, -0.4)), (links[1], (-0.05, 0.02, -0.35))], stiffness=80.0,
                         damping=0.5, springlength=0.45, target_ke=3.0, target_kd=0.2, label="spatial")
    return b.finalize(dtype=F64)


_SOLVERS = {"xpbd": (lambda m: jaxart.solvers.SolverXPBD(m, iterations=4), 1e-2),
            "semi_implicit": (lambda m: jaxart.solvers.SolverSemiImplicit(m, angular_damping=0.0), 1e-3)}


@pytest.mark.parametrize("solver", [pytest.param("xpbd", marks=pytest.mark.slow), "semi_implicit"])
def test_tendon_step_derivatives_match_finite_differences(solver):
    """d(body poses and twists after 2 steps) / d(tendon stiffnesses, rest lengths, initial joint rates)."""
    model = _pendulums()
    make, dt = _SOLVERS[solver]

    def fn(p):
        m = model.replace(tendon_stiffness=p[0:2], tendon_springlength=jnp.stack([p[2:4], p[2:4]], 1))
        s = make(m)
        st = jaxart.eval_fk(m, m.joint_q, p[4:6], m.state())
        st = jax.lax.fori_loop(0, 2, lambda _, x: s.step(x, None, None, dt), st)
        return jnp.concatenate([st.body_q.reshape(-1), st.body_qd.reshape(-1)])

    length0 = jaxart.dynamics.eval_tendon_lengths(model, jaxart.eval_fk(model, model.joint_q, model.joint_qd,
                                                                       model.state()))
    p0 = jnp.array([30.0, 80.0, 0.2, 0.45, 0.7, -0.4])
    assert np.all(np.abs(np.asarray(length0) - np.asarray(p0[2:4])) > 0.02)  # both springs stretched
    jac = assert_jacobian_matches_fd(fn, p0, [1e-4, 1e-4, 1e-6, 1e-6, 1e-6, 1e-6], rtol=1e-5)
    assert np.all(np.abs(jac).max(0) > 1e-6)  # every input acts


# ------------------------------------------------------------------ SolverXPBD's tendon effort limits
LIMIT, KE, KD, DT, STEPS = 5.0, 50.0, 15.0, 5e-3, 200


@functools.lru_cache(maxsize=1)
def _sliders():
    """Two 1 kg sliders along x (no gravity): slider 0 on a fixed tendon ``L = x0``, slider 1 on a spatial tendon
    from a world point 2 m ahead on its axis (``L = 2 − x1``); both actuators pull toward ``L* = 1`` with gains
    far above the effort limit (saturated until close to the target)."""
    b = jaxart.ModelBuilder(gravity=0.0)
    links, joints = [], []
    for i in range(2):
        x = (0.0, float(i), 0.0, 0.0, 0.0, 0.0, 1.0)
        links.append(b.add_link(xform=x, mass=1.0, inertia=INERTIA, label=f"s{i}"))
        joints.append(b.add_joint_prismatic(-1, links[i], axis=(1.0, 0.0, 0.0), parent_xform=x, label=f"j{i}"))
        b.add_articulation([joints[i]])
    gains = dict(target_ke=KE, target_kd=KD, target_length=1.0, effort_limit=LIMIT)
    b.add_tendon_fixed([(joints[0], 1.0)], **gains, label="fixed")
    b.add_tendon_spatial([(-1, (2.0, 1.0, 0.0)), (links[1], (0.0, 0.0, 0.0))], **gains, label="spatial")
    return b.finalize(dtype=F64)


@functools.partial(jax.jit, static_argnames="xpbd")
def _slide(model, xpbd: bool):
    solver = (jaxart.solvers.SolverXPBD(model, iterations=2) if xpbd
              else jaxart.solvers.SolverFeatherstone(model, angular_damping=0.0))
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

    def body(s, _):
        s = solver.step(s, None, None, DT)
        return s, jnp.stack([s.body_q[0, 0], s.body_q[1, 0]])

    return jax.lax.scan(body, st, None, length=STEPS)[1]


def _clamped_drive() -> tuple[np.ndarray, np.ndarray]:
    """SolverFeatherstone's clamped implicit actuator on a 1 kg slide ``x`` (``L* − L = 1 − x``), semi-implicit
    Euler: saturated (look-ahead force beyond the limit) the force is ``clip(·, ±LIMIT)``, else the implicit PD law.
    Returns the positions and the saturation flags per step."""
    x = v = 0.0
    xs, sat = [], []
    for _ in range(STEPS):
        ahead = KE * (1.0 - x - DT * v) - KD * v
        sat.append(abs(ahead) > LIMIT)
        a = np.clip(ahead, -LIMIT, LIMIT) if sat[-1] else ahead / (1.0 + KD * DT + KE * DT * DT)
        v += DT * a
        x += DT * v
        xs.append(x)
    return np.array(xs), np.array(sat)


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_xpbd_tendon_effort_limit_matches_featherstone_clamped_actuator():
    """Both solvers follow the clamped actuator's recursion to round-off: a constant force at the effort limit while
    saturated (the first 70 steps), then the implicit drive; without the limit XPBD's first step is the stiff
    drive's."""
    model = _sliders()
    ref, sat = _clamped_drive()
    assert sat[:70].all() and (~sat).sum() > 100  # both regimes
    xp, fs = np.asarray(_slide(model, True)), np.asarray(_slide(model, False))
    np.testing.assert_allclose(fs, ref[:, None] * [1, 1], atol=1e-9)
    np.testing.assert_allclose(xp, ref[:, None] * [1, 1], atol=1e-9)
    unlimited = np.asarray(_slide(model.replace(tendon_effort_limit=jnp.full(2, jnp.inf)), True))
    assert unlimited[0, 0] > 5 * xp[0, 0]
