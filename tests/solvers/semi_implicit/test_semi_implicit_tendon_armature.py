"""Tendon armature in ``SolverSemiImplicit`` (:mod:`jaxart.solvers.semi_implicit.tendon_armature`).

Oracles: the closed form ``q̈ = F / (m + a c²)`` of a slider pushed through a fixed tendon ``L = c q``;
``SolverFeatherstone``'s accelerations (``a JᵀJ`` in the inertia and ``−a J̇q̇``, checked against MuJoCo C's
``qacc`` in ``test_tendon_friction_armature.py``) for two spinning free bodies joined by two spatial tendons in
zero gravity; single worlds for ``vmap``; central finite differences for a forward-mode derivative through a few
steps. Float64 (conftest). Every scenario changes traced leaves only, so each compiled step serves all of them.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.solvers import SolverFeatherstone, SolverSemiImplicit
from jaxart.solvers.semi_implicit.tendon_armature import armature_tendons

DT = 1e-3


@functools.lru_cache(maxsize=1)
def _slider() -> jaxart.Model:
    """A 2 kg slider along X (no gravity, COM on the joint axis) with one fixed tendon ``L = c q`` (c = 1)."""
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=2.0, inertia=np.eye(3) * 0.01)
    j = b.add_joint_prismatic(-1, link, axis=(1, 0, 0))
    b.add_articulation([j])
    b.add_tendon_fixed([(j, 1.0)], label="t", armature=0.5)
    return b.finalize(dtype=jnp.float64)


@functools.lru_cache(maxsize=1)
def _pair() -> jaxart.Model:
    """Two free bodies (distinct inertias, COMs off their origins) joined by a spatial tendon from a world point
    over body ``a`` to body ``b`` and a second one from ``a`` to ``b``; armatures 0.3 and 0.8, no gravity."""
    b = jaxart.ModelBuilder(gravity=0.0)
    a = b.add_body(xform=(0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0), mass=1.2, com=(0.02, -0.01, 0.03),
                   inertia=np.diag([0.02, 0.03, 0.015]), label="a")
    c = b.add_body(xform=(0.4, 0.1, 0.3, 0.0, 0.2, 0.0, np.sqrt(0.96)), mass=0.7, com=(-0.03, 0.0, 0.01),
                   inertia=np.diag([0.01, 0.008, 0.012]), label="b")
    b.add_tendon_spatial([(-1, (-0.3, 0.2, 0.9)), (a, (0.05, 0.02, 0.1)), (c, (-0.04, 0.03, 0.02))],
                         label="world_a_b", armature=0.3)
    b.add_tendon_spatial([(a, (0.1, -0.05, -0.02)), (c, (0.02, -0.06, 0.05))], label="a_b", armature=0.8)
    return b.finalize(dtype=jnp.float64)


def _states(model, seed):
    rng = np.random.default_rng(seed)
    return jnp.asarray(model.joint_q), jnp.asarray(rng.uniform(-2.0, 2.0, model.joint_dof_count))


@jax.jit
def _semi(model, joint_q, joint_qd, joint_f, tendon_f, steps=1):
    """``steps`` (traced) SemiImplicit steps (no angular damping) from ``(q, q̇)``: ``(start state, end state)``."""
    st = jaxart.eval_fk(model, joint_q, joint_qd, model.state())
    ctrl = model.control().replace(joint_f=joint_f, tendon_f=tendon_f)
    solver = SolverSemiImplicit(model, angular_damping=0.0)
    end = jax.lax.fori_loop(0, steps, lambda _, s: solver.step(s, ctrl, None, DT), st)
    return st, end


def _accelerations(start, end):
    return np.asarray(end.body_qd - start.body_qd) / DT


def test_slider_closed_form():
    """From rest under a joint force or a tendon force: ``q̈ = F c / (m + a c²)`` for the tendon force
    ``F`` (``F`` for the joint force), over 20 steps (semi-implicit Euler: ``q̇ = n dt q̈``)."""
    m, a, push, steps = 2.0, 0.5, 3.0, 20
    base = _slider()
    q0, qd0 = jnp.zeros(1), jnp.zeros(1)
    assert armature_tendons(base) == (0,)
    for coef in (1.0, 2.0):
        model = base.replace(tendon_joint_coef=jnp.asarray([coef]))
        for joint_f, tendon_f, gen in ((push, 0.0, push), (0.0, push, coef * push)):
            _, end = _semi(model, q0, qd0, jnp.asarray([joint_f]), jnp.asarray([tendon_f]), steps=steps)
            expect = gen / (m + a * coef * coef)
            np.testing.assert_allclose(end.joint_qd, [steps * DT * expect], rtol=1e-9)
            np.testing.assert_allclose(end.body_qd[0], [steps * DT * expect, 0, 0, 0, 0, 0], atol=1e-12)
    _, plain = _semi(base.replace(tendon_armature=jnp.zeros(1)), q0, qd0, jnp.asarray([push]), jnp.zeros(1),
                     steps=steps)
    np.testing.assert_allclose(plain.joint_qd, [steps * DT * push / m], rtol=1e-9)


@jax.jit
def _featherstone(model, joint_q, joint_qd):
    st = jaxart.eval_fk(model, joint_q, joint_qd, model.state())
    return st, SolverFeatherstone(model, angular_damping=0.0).step(st, None, None, DT)


@pytest.mark.parametrize("seed", [3, 4])
def test_free_bodies_match_featherstone(seed):
    """Spinning, moving free bodies: the first step's body accelerations equal SolverFeatherstone's (whose
    FREE joints integrate the same COM twists), and differ from the armature-free ones by far more."""
    model = _pair()
    q, qd = _states(model, seed)
    zf, zt = jnp.zeros(model.joint_dof_count), jnp.zeros(model.tendon.tendon_count)
    acc = _accelerations(*_semi(model, q, qd, zf, zt))
    ref = _accelerations(*_featherstone(model, q, qd))
    np.testing.assert_allclose(acc, ref, atol=1e-9 * np.abs(ref).max())
    plain = _accelerations(*_semi(model.replace(tendon_armature=jnp.zeros(2)), q, qd, zf, zt))
    assert np.abs(plain - acc).max() > 1e5 * 1e-9 * np.abs(ref).max()


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_vmap_and_forward_gradient():
    """Two worlds (different states and armatures) under ``vmap``: the body twists after 5 steps equal the worlds
    stepped alone, and their forward-mode derivatives along (armature, initial spin) equal central differences of
    the single worlds (one compiled ``vmap(jvp(...))``)."""
    model = _pair()
    zf, zt = jnp.zeros(model.joint_dof_count), jnp.zeros(model.tendon.tendon_count)
    (q0, qd0), (q1, qd1) = _states(model, 5), _states(model, 6)
    arm = jnp.asarray([[0.3, 0.8], [1.1, 0.05]])
    direction = jnp.asarray([0.7, -0.4])
    spin = jnp.zeros(model.joint_dof_count).at[3:6].set([0.3, -0.2, 0.5])

    def final(s, a, q, qd):
        return _semi(model.replace(tendon_armature=a + s * direction), q, qd + s * spin, zf, zt, 5)[1].body_qd

    primal, tangent = jax.vmap(lambda a, q, qd: jax.jvp(lambda s: final(s, a, q, qd), (0.0,), (1.0,)))(
        arm, jnp.stack([q0, q1]), jnp.stack([qd0, qd1]))
    h = 1e-5
    for k, (q, qd) in enumerate(((q0, qd0), (q1, qd1))):
        np.testing.assert_allclose(primal[k], final(0.0, arm[k], q, qd), rtol=1e-12, atol=1e-12)
        fd = (final(h, arm[k], q, qd) - final(-h, arm[k], q, qd)) / (2 * h)
        assert np.abs(np.asarray(tangent[k])).max() > 1e-2
        np.testing.assert_allclose(tangent[k], fd, rtol=1e-6, atol=1e-8)


@functools.lru_cache(maxsize=1)
def _arm() -> jaxart.Model:
    """A two-link arm under gravity (shoulder about Y, elbow about X) with a fixed tendon ``q0 − 0.5 q1`` and a
    spatial tendon from the world over the upper arm to the forearm; armatures 0.3 and 0.6."""
    b = jaxart.ModelBuilder()
    inertia = np.diag([0.02, 0.025, 0.01])
    upper = b.add_link(mass=1.0, inertia=inertia, com=(0.04, 0.0, -0.2))
    shoulder = b.add_joint_revolute(-1, upper, axis=(0, 1, 0))
    x_e = (0.0, 0.0, -0.4, 0.0, 0.0, 0.0, 1.0)
    fore = b.add_link(xform=x_e, mass=0.6, inertia=inertia, com=(0.0, 0.03, -0.2))
    elbow = b.add_joint_revolute(upper, fore, axis=(1, 0, 0), parent_xform=x_e)
    b.add_articulation([shoulder, elbow])
    b.add_tendon_fixed([(shoulder, 1.0), (elbow, -0.5)], armature=0.3)
    b.add_tendon_spatial([(-1, (0.2, 0.1, 0.1)), (upper, (0.1, 0.0, -0.25)), (fore, (0.0, 0.08, -0.3))],
                         armature=0.6)
    b.joint_q[:] = [0.3, -0.4]
    return b.finalize(dtype=jnp.float64)


@pytest.mark.slow
def test_arm_follows_featherstone():
    """A jointed arm swinging under gravity for 0.3 s (dt = 0.1 ms, stiff attachment springs): the joint angles
    follow SolverFeatherstone's within the penalty joints' accuracy, far closer than without armature."""
    dt, steps = 1e-4, 3000

    @jax.jit
    def run(model):
        st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
        fs = SolverFeatherstone(model, angular_damping=0.0)
        si = SolverSemiImplicit(model, angular_damping=0.0, joint_attach_ke=1e5, joint_attach_kd=1e2)
        ref = jax.lax.fori_loop(0, steps, lambda _, s: fs.step(s, None, None, dt), st)
        return ref.joint_q, jax.lax.fori_loop(0, steps, lambda _, s: si.step(s, None, None, dt), st).joint_q

    ref, semi = (np.asarray(x) for x in run(_arm()))
    plain = np.asarray(run(_arm().replace(tendon_armature=jnp.zeros(2)))[0])
    np.testing.assert_allclose(semi, ref, atol=1e-4)
    assert np.abs(plain - ref).max() > 1e-2


def test_static_selection():
    """Only the tendons with armature take part; a traced model includes all; a replaced armature is read."""
    model = _pair()
    assert armature_tendons(model) == (0, 1)
    assert armature_tendons(model.replace(tendon_armature=jnp.asarray([0.0, 0.8]))) == (1,)
    assert jax.jit(lambda m: jnp.asarray(armature_tendons(m) is None))(model)
    assert SolverSemiImplicit(model.replace(tendon_armature=jnp.zeros(2))).armature_tendons == ()
