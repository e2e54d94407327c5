"""Derivatives of SolverFeatherstone steps through its closed-loop and tendon paths vs central finite differences.

Each test differentiates a few steps of a small model with respect to model leaves and the initial state by forward
mode (:func:`jax.jvp`, the same ``custom_jvp`` rules that reverse mode transposes) and compares every Jacobian column
with central differences of the same compiled function (:mod:`fd_check`): the loop joints' measured
``joint_q``/``joint_qd`` written into the state, an ACCELERATION drive on a loop axis (its constrained effective
inertia), hard DISTANCE limit rows (tree and loop, active for the step, away from the gate's switch), a step driven by
fixed and spatial tendons (stiffness, damping, dead band, penalty limit, saturated and unsaturated actuators with
effort limits) and CONNECT rows switched on and off by their traced ``enabled`` flag. All float64.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fd_check import assert_jacobian_matches_fd, jvp_of

import jaxart
from jaxart.math import transform_point
from jaxart.sim.validate import np_transform_inverse, np_transform_mul
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
INERTIA = [0.01, 0.012, 0.008]


def _steps(model, state, steps: int, dt: float, control=None):
    solver = SolverFeatherstone(model, angular_damping=0.0)
    return jax.lax.fori_loop(0, steps, lambda _, s: solver.step(s, control, None, dt), state)


def _flat(state, joint=True):
    parts = [state.body_q.reshape(-1), state.body_qd.reshape(-1)]
    if joint:
        parts += [state.joint_q, state.joint_qd]
    return jnp.concatenate(parts)


# ------------------------------------------------------------------ loop joint state + ACCELERATION loop drive
HINGE = np.array([0.1, -0.2, 1.5])


@functools.lru_cache(maxsize=1)
def _door():
    """A body on a FREE root hung from the world by a loop REVOLUTE joint about z, driven by an ACCELERATION drive."""
    x_p = (tuple(HINGE), (0.0, 0.0, np.sin(0.35), np.cos(0.35)))
    x_c = ((0.15, 0.05, 0.02), (0.0, 0.0, 0.0, 1.0))
    b = jaxart.ModelBuilder()
    x_b = np_transform_mul(np.r_[x_p[0], x_p[1]], np_transform_inverse(np.r_[x_c[0], x_c[1]]))
    body = b.add_link(xform=(x_b[:3], x_b[3:]), mass=1.0, com=(0.3, 0.1, 0.0), inertia=INERTIA, label="door")
    b.add_articulation([b.add_joint_free(body)])
    b.add_joint_revolute(-1, body, axis=(0, 0, 1), parent_xform=x_p, child_xform=x_c, label="hinge")
    d = len(b.joint_target_mode) - 1
    b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION)
    b.joint_drive_type[d] = int(jaxart.JointDriveType.ACCELERATION)
    b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = 40.0, 4.0
    return b.finalize(dtype=F64)


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_loop_state_and_acceleration_loop_drive_derivatives_match_finite_differences():
    """d(state after 3 steps) / d(drive ke, kd, target, body mass, COM, initial spin): the loop joint's measured
    angle and rate in ``joint_q``/``joint_qd`` and the free body's motion, through the loop axis's constrained
    effective inertia (which makes the hinge angle independent of the mass, so its mass derivative vanishes)."""
    model = _door()
    d = model.joint_dof_count - 1

    def fn(p):
        m = model.replace(joint_target_ke=model.joint_target_ke.at[d].set(p[0]),
                          joint_target_kd=model.joint_target_kd.at[d].set(p[1]),
                          joint_target_q=model.joint_target_q.at[-1].set(p[2]),
                          body_mass=model.body_mass.at[0].set(p[3]),
                          body_com=model.body_com.at[0, 0].set(p[4]))
        com = transform_point(m.body_q[0], m.body_com[0])
        v = jnp.cross(jnp.array([0.0, 0.0, 1.0]) * p[5], com - HINGE)  # spinning about the hinge
        st = m.state().replace(joint_qd=m.joint_qd.at[:3].set(v).at[5].set(p[5]))
        st = jaxart.eval_fk(m, st.joint_q, st.joint_qd, st)
        return _flat(_steps(m, st, 3, 5e-3))

    p0 = jnp.array([40.0, 4.0, 0.8, 1.0, 0.3, 1.5])
    jac = assert_jacobian_matches_fd(fn, p0, [1e-3, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4])  # steps above the solve's rounding
    angle = 13 * model.body_count + model.joint_coord_count - 1  # the loop joint's measured angle in joint_q
    assert abs(jac[angle, 0]) > 1e-6 and abs(jac[angle, 5]) > 1e-3  # it moves with the gains and the spin
    assert abs(jac[angle, 3]) < 1e-2 * abs(jac[angle, 5])  # ... and hardly with the mass (acceleration drive)


# ------------------------------------------------------------------ hard DISTANCE limit rows (tree and loop)
ANCHOR_UP, TIP = ((0, 0, 1.0), (0, 0, 0, 1)), ((0, 0, 0.1), (0, 0, 0, 1))
DT_ROPE = 1e-2


@functools.lru_cache(maxsize=1)
def _ropes():
    """A body on a tree DISTANCE rope and a FREE body on a loop DISTANCE rope (max 0.5 m, hard limits)."""
    b = jaxart.ModelBuilder()
    tree = b.add_link(mass=1.0, inertia=INERTIA, label="tree")
    loop = b.add_link(xform=((0.6, 0.05, 0.43), (0, 0, 0, 1)), mass=2.0, inertia=INERTIA, label="loop")
    b.add_articulation([b.add_joint_distance(-1, tree, parent_xform=ANCHOR_UP, child_xform=TIP, max_distance=0.5)])
    b.add_articulation([b.add_joint_free(loop)])
    b.add_joint_distance(-1, loop, parent_xform=((0.5, 0, 1.0), (0, 0, 0, 1)), child_xform=TIP, max_distance=0.5)
    b.joint_q[:3] = [0.1, 0.0, -0.48]  # the tree rope's end 0.49 m from its anchor
    return b.finalize(dtype=F64)


def _rope_state(model, v_tree, v_loop):
    qd = model.joint_qd.at[:6].set(jnp.stack([0.5, 0.3, v_tree, 0.2, -0.1, 0.3]))
    qd = qd.at[6:12].set(jnp.stack([-0.2, 0.4, v_loop, 0.1, 0.2, -0.3]))
    st = model.state().replace(joint_qd=qd)
    return jaxart.eval_fk(model, st.joint_q, st.joint_qd, st)


@pytest.mark.slow
def test_hard_distance_limit_rows_derivatives_match_finite_differences():
    """One step in which both ropes' predicted distances cross 0.5 m by ~0.02 m (their gated rows are on, far from
    the switch): d(state) / d(downward speeds, max distances, masses), including the loop rope's measured
    ``joint_q``/``joint_qd``; the end distance is the limit, so it moves one-for-one with ``max_distance``."""
    model = _ropes()
    d_loop = 12  # first DOF of the loop DISTANCE joint

    def fn(p):
        m = model.replace(joint_limit_upper=model.joint_limit_upper.at[0].set(p[2]).at[d_loop].set(p[3]),
                          body_mass=model.body_mass.at[0].set(p[4]).at[1].set(p[5]))
        return _flat(_steps(m, _rope_state(m, p[0], p[1]), 1, DT_ROPE))

    p0 = jnp.array([-3.0, -4.0, 0.5, 0.5, 1.0, 2.0])
    st0 = _rope_state(model, p0[0], p0[1])
    start = np.asarray(st0.body_q)
    assert max(np.linalg.norm(start[b, :3] + [0, 0, 0.1] - a) for b, a in ((0, (0, 0, 1.0)), (1, (0.5, 0, 1.0)))) < 0.5
    jvp = jvp_of(fn)
    jac = assert_jacobian_matches_fd(fn, p0, [1e-6] * 6, compiled=jvp)
    final = np.asarray(jvp(p0, jnp.zeros_like(p0))[0][:14]).reshape(2, 7)

    def dist(x, anchor):
        return np.linalg.norm(np_transform_mul(x, np.r_[TIP[0], TIP[1]])[:3] - np.asarray(anchor))

    for body, anchor, col in ((0, (0, 0, 1.0), 2), (1, (0.5, 0, 1.0), 3)):
        # the velocity row held the limit up to the step's O(dt²) curvature drift
        assert dist(final[body], anchor) == pytest.approx(0.5, abs=2e-3)
        # d(pose) / d max_distance: the rope's end moves with the limit (≈ one-for-one: the drift above depends on
        # the rope length too), which it would not if the gated row were off
        dx = jac[7 * body:7 * body + 7, col]
        h = 1e-6
        assert (dist(final[body] + h * dx, anchor) - dist(final[body] - h * dx, anchor)) / (2 * h) == pytest.approx(
            1.0, abs=0.1)


# ------------------------------------------------------------------ tendon-driven step
@functools.lru_cache(maxsize=1)
def _tendon_arm():
    """Two-link arm (no gravity) with a fixed tendon ``q0 − 0.7 q1`` (spring with a dead band, damping, an active
    penalty limit, a saturated actuator with an effort limit) and a spatial tendon world → l0 → l1 (spring, damping,
    an unsaturated actuator with an effort limit)."""
    b = jaxart.ModelBuilder(gravity=0.0)
    inertia = np.diag([0.01, 0.02, 0.02])
    l0 = b.add_link(mass=1.0, inertia=inertia, com=(0.25, 0.0, 0.0), lock_inertia=True)
    l1 = b.add_link(mass=0.7, inertia=inertia, com=(0.2, 0.0, 0.0), lock_inertia=True)
    j0 = b.add_joint_revolute(-1, l0, axis=(0, 0, 1))
    j1 = b.add_joint_revolute(l0, l1, axis=(0, 0, 1), parent_xform=((0.5, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)))
    b.add_articulation([j0, j1])
    b.joint_q[:] = [0.3, 0.6]  # fixed length 0.3 − 0.42 = −0.12
    b.add_tendon_fixed([(j0, 1.0), (j1, -0.7)], stiffness=20.0, damping=0.5, springlength=(0.05, 0.1),
                       limit_range=(0.0, 0.5), limit_ke=500.0, limit_kd=5.0, target_ke=100.0, target_kd=2.0,
                       target_length=0.4, effort_limit=3.0)
    b.add_tendon_spatial([(-1, (0.0, 0.3, 0.0)), (l0, (0.3, 0.05, 0.0)), (l1, (0.4, 0.0, 0.0))], stiffness=50.0,
                         damping=1.0, springlength=0.5, target_ke=40.0, target_kd=2.0, effort_limit=50.0)
    return b.finalize(dtype=F64)


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_tendon_driven_step_derivatives_match_finite_differences():
    """3 implicit steps: d(state) / d(tendon stiffnesses, limit stiffness, effort limits, tendon force, target
    length, initial rates). The fixed tendon's actuator stays saturated (its force is the effort limit, so the
    effort-limit derivative is nonzero) and its length below the limit; the spatial actuator stays unsaturated (its
    effort-limit derivative is zero)."""
    model = _tendon_arm()

    def fn(p):
        m = model.replace(tendon_stiffness=p[0:2], tendon_limit_ke=model.tendon_limit_ke.at[0].set(p[2]),
                          tendon_effort_limit=p[3:5])
        ctrl = m.control().replace(tendon_f=jnp.stack([0.0, p[5]]),
                                   tendon_target_length=m.tendon_target_length.at[1].set(p[6]))
        st = m.state().replace(joint_qd=p[7:9])
        st = jaxart.eval_fk(m, st.joint_q, st.joint_qd, st)
        return _flat(_steps(m, st, 3, 1e-2, ctrl), joint=False)

    p0 = jnp.concatenate([jnp.array([20.0, 50.0, 500.0, 3.0, 50.0, 0.4]), model.tendon_target_length[1:] - 0.05,
                          jnp.array([-0.3, 0.2])])
    jac = assert_jacobian_matches_fd(fn, p0, [1e-4, 1e-4, 1e-3, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6, 1e-6])
    assert np.abs(jac[:, 3]).max() > 1e-4  # saturated: the effort limit is the fixed actuator's force
    np.testing.assert_allclose(jac[:, 4], 0.0, atol=1e-12)  # unsaturated: the limit does not act
    assert np.abs(jac[:, 2]).max() > 1e-7  # the penalty limit acts


# ------------------------------------------------------------------ equality rows switched by ``enabled``
@functools.lru_cache(maxsize=1)
def _connect():
    """The pinned bob of tests/solvers/featherstone/test_featherstone_constraints.py: a FREE body hung from a
    two-link chain's second link by a CONNECT, beside a slider."""
    from equality_models import chain_builder

    b, ix = chain_builder()
    bob = b.add_body(xform=((0.3, 0.1, 0.4), (0, 0, 0, 1)), mass=0.7, com=(0.05, 0, -0.1), inertia=INERTIA,
                     label="bob")
    b.joint_q[:3] = [0.3, -0.2, 0.05]
    b.add_equality_constraint_connect(bob, ix["l2"], anchor=(0.0, 0.0, 0.15), label="pin")
    return b.finalize(dtype=F64)


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_equality_rows_switched_by_enabled_derivatives_match_finite_differences():
    """2 steps with the CONNECT on and off (one compilation: the flag is traced): d(state) / d(chain rates, bob
    rate, masses) match central differences in both; off, the bob's motion does not depend on the chain."""
    from jaxart.sim.equality import set_constraints_enabled

    base = _connect()
    bob = base.body_count - 1
    n_tree = base.joint_dof_count - 6

    def fn(p, flag):
        m = set_constraints_enabled(base, equality=flag[None])
        m = m.replace(body_mass=m.body_mass.at[0].set(p[4]).at[bob].set(p[5]))
        qd = m.joint_qd.at[:n_tree].set(p[:3]).at[n_tree + 1].set(p[3])
        st = m.state().replace(joint_qd=qd)
        return _flat(_steps(m, jaxart.eval_fk(m, st.joint_q, st.joint_qd, st), 2, 2e-3), joint=False)

    p0 = jnp.array([0.8, -0.5, 0.3, 0.4, 1.0, 0.7])
    eps, jvp = [1e-4] * 6, jvp_of(fn)  # smaller steps reach the solve's rounding (2.8e-8 at 1e-6 vs 6e-10 here)
    on, off = (assert_jacobian_matches_fd(fn, p0, eps, (jnp.asarray(f),), compiled=jvp) for f in (1.0, 0.0))
    rows = np.r_[7 * bob:7 * bob + 7, 7 * base.body_count + 6 * bob:7 * base.body_count + 6 * bob + 6]
    np.testing.assert_allclose(off[rows][:, [0, 1, 4]], 0.0, atol=1e-12)  # free fall: no chain dependence
    assert np.abs(on[rows][:, [0, 1, 4]]).max() > 1e-3
