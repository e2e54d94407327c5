"""The Featherstone step under ``vmap``: one lane kernel (forces, root blocks, ABA levels, integration, FK)
must give the per-world step's values (single worlds take the per-world stages)."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import MJX_HUMANOID, mjcf_model, quat_from_axis_angle_np, random_coords

import jaxart
from jaxart.dynamics.engine.aba_schedule import aba_schedule
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
PV = jaxart.JointTargetMode.POSITION_VELOCITY


def _forest() -> jaxart.Model:
    """Several articulations whose roots are multi-DOF joints (FREE, BALL, 2-axis D6, a kinematic FREE
    root, a lone FREE body) with drives on every DOF, rotated anchors and COM offsets."""
    b = jaxart.ModelBuilder()
    rot = quat_from_axis_angle_np([1, 2, 3], 0.7)
    J = jaxart.JointDofConfig

    def link(i, **kw):
        return b.add_link(mass=1.0 + 0.3 * i, com=(0.05 * i, -0.02, 0.1), inertia=np.diag([0.1, 0.2, 0.3]) + 0.01 * i,
                          **kw)

    a = [link(i) for i in range(3)]
    b.add_articulation([
        b.add_joint_free(a[0], parent_xform=((0.1, 0.2, 0.3), rot), child_xform=((0.0, 0.1, 0.0), rot)),
        b.add_joint_revolute(a[0], a[1], axis=(0.0, 0.6, 0.8), parent_xform=((0.3, 0, 0), rot), actuator_mode=PV),
        b.add_joint_ball(a[1], a[2], parent_xform=((0, 0, 0.5), rot), actuator_mode=PV)])
    c = [link(i) for i in range(2)]
    b.add_articulation([b.add_joint_ball(-1, c[0], child_xform=((0, 0, 0.3), rot), actuator_mode=PV),
                        b.add_joint_prismatic(c[0], c[1], axis=(1.0, 1.0, 0.0), actuator_mode=PV)])
    k = [link(0, is_kinematic=True), link(1)]
    b.add_articulation([b.add_joint_free(k[0]), b.add_joint_revolute(k[0], k[1], axis=(1.0, 0.0, 0.0))])
    d = [link(i) for i in range(2)]
    b.add_articulation([
        b.add_joint_d6(-1, d[0], angular_axes=[J(axis=(1, 0, 0), actuator_mode=PV), J(axis=(0, 0, 1))],
                       parent_xform=((0.2, 0, 0), rot)),
        b.add_joint_revolute(d[0], d[1], axis=(0.0, 1.0, 0.0))])
    b.add_articulation([b.add_joint_free(link(4))])
    return b.finalize(dtype=F64)


def _randomised(model, rng):
    """Every per-DOF force term active: drives, springs, damping, friction, limits, clamps."""
    nd = model.joint_dof_count
    u = lambda lo, hi: jnp.asarray(rng.uniform(lo, hi, nd))  # noqa: E731
    return model.replace(joint_target_ke=u(5.0, 50.0), joint_target_kd=u(0.5, 3.0), joint_stiffness=u(0.0, 2.0),
                         joint_damping=u(0.0, 0.5), joint_friction=u(0.0, 0.3), joint_armature=u(0.0, 0.05),
                         joint_limit_lower=u(-0.6, -0.1), joint_limit_upper=u(0.1, 0.6),
                         joint_limit_ke=u(100.0, 500.0), joint_limit_kd=u(1.0, 5.0), joint_effort_limit=u(5.0, 40.0),
                         joint_velocity_limit=u(2.0, 8.0))


def _batch(model, rng, n):
    qs, qds = zip(*(random_coords(model, rng, scale=0.5) for _ in range(n)), strict=True)
    q, qd = jnp.asarray(np.stack(qs)), jnp.asarray(np.stack(qds))
    states = jax.vmap(lambda a, b: jaxart.eval_fk(model, a, b))(q, qd)
    body_f = jnp.asarray(rng.normal(size=(n, model.body_count, 6)))
    targets = jnp.asarray(np.stack([random_coords(model, rng, scale=0.5)[0] for _ in range(n)]))
    ctrl = model.control()
    controls = jax.vmap(lambda t, f, v: ctrl.replace(joint_target_q=t, joint_f=f, joint_target_qd=v))(
        targets, jnp.asarray(rng.normal(size=(n, model.joint_dof_count))),
        jnp.asarray(rng.normal(size=(n, model.joint_dof_count))))
    return states.replace(body_f=body_f), controls


def _check_batched_matches_single(model, n=3, dt=2e-3, seed=0):
    rng = np.random.default_rng(seed)
    model = _randomised(model, rng)
    solver = SolverFeatherstone(model)
    states, controls = _batch(model, rng, n)
    step = jax.jit(lambda s, c: solver.step(s, c, None, dt))
    batched = jax.jit(jax.vmap(lambda s, c: solver.step(s, c, None, dt)))(states, controls)
    for i in range(n):
        one = step(*jax.tree_util.tree_map(lambda x, i=i: x[i], (states, controls)))
        for name in ("joint_q", "joint_qd", "body_q", "body_qd"):
            ref = getattr(one, name)
            np.testing.assert_allclose(getattr(batched, name)[i], ref, rtol=1e-9,
                                       atol=1e-9 * (1.0 + float(jnp.max(jnp.abs(ref)))), err_msg=name)
    return solver, states, controls, batched


@pytest.mark.slow
def test_forest_of_root_blocks_matches_single_worlds():
    model = _forest()
    sched = aba_schedule(model)
    assert sched.blocks is not None and sched.blocks.dof.shape == (5, 6)  # FREE, BALL, FREE (kin.), D6, FREE
    assert sched.blocks.kinematic.tolist() == [False, False, True, False, False]
    _, states, _, batched = _check_batched_matches_single(model)
    # the kinematic root keeps its velocity
    kin = np.flatnonzero(np.asarray(model.body_flags) == int(jaxart.BodyFlags.KINEMATIC))[0]
    free = int(np.flatnonzero(np.asarray(model.joint_child) == kin)[0])
    d0 = model.joint_qd_start[free]
    np.testing.assert_allclose(batched.joint_qd[:, d0:d0 + 6], states.joint_qd[:, d0:d0 + 6], atol=1e-12)


@pytest.mark.slow
def test_humanoid_matches_single_worlds_and_nan_stays_in_its_world():
    solver, states, controls, batched = _check_batched_matches_single(mjcf_model(MJX_HUMANOID), n=3)
    assert len(aba_schedule(solver.model).runs[0].level_dof) < 10  # the FREE root adds no levels
    bad = states.replace(joint_qd=states.joint_qd.at[1, 7].set(jnp.nan))
    out = jax.jit(jax.vmap(lambda s, c: solver.step(s, c, None, 2e-3)))(bad, controls)
    assert not np.isfinite(np.asarray(out.joint_qd[1])).all()
    for i in (0, 2):
        np.testing.assert_array_equal(np.asarray(out.joint_q[i]), np.asarray(batched.joint_q[i]))
