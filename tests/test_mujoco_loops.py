"""SolverMuJoCo: run-time ``enabled`` flags (MJX ``eq_active``), drives on loop-closing joints (site transmission)
and loop-closing PRISMATIC / D6 joints (auxiliary body welded to the child)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from equality_models import F64, all_types_builder, fourbar_builder
from scipy.optimize import brentq

import jaxart
from jaxart.sim.equality import set_constraints_enabled
from jaxart.sim.validate import np_quat_mul
from jaxart.solvers import SolverFeatherstone, SolverMuJoCo
from jaxart.solvers.mujoco.loops import AUX_MASS

jax.config.update("jax_enable_x64", True)


def _loop_angle(bq) -> np.ndarray:
    """Parallelogram: angle about x of the rocker's (unrotated) anchor frame relative to the coupler's."""
    q1, q2 = np.asarray(bq[:, 1, 3:]), np.asarray(bq[:, 2, 3:])
    rel = np.array([np_quat_mul(np.array([-a[0], -a[1], -a[2], a[3]]), c) for a, c in zip(q1, q2, strict=True)])
    return 2.0 * np.arctan2(rel[:, 0], rel[:, 3])


# ------------------------------------------------------------------ run-time enabled flags
def test_enabled_flags_set_eq_active_each_step_without_retracing():
    """All four constraint kinds, the WELD disabled at conversion (emitted inactive); three flag settings through
    one jitted step of ``solver.with_model(m)``: one trace, each equal to MuJoCo C with the same ``eq_active`` (one
    step from rest: MuJoCo 4's C solver adds J̇q̇ to equality reference accelerations and MJX does not, so later steps
    drift apart at ~1e-4 under the large corrective velocities of these initially violated constraints)."""
    b, _ = all_types_builder()
    b.equality_constraint_enabled[1] = False
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model, integrator="euler")
    mj = solver.mj_model
    np.testing.assert_array_equal(mj.eq_active0, [1, 0, 1, 1])  # the disabled WELD is still a row
    traces, dt = [], 2e-3

    @jax.jit
    def run(m, st):
        traces.append(1)
        return solver.with_model(m).step(st, None, None, dt)

    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    mj.opt.timestep = dt
    finals = []
    for eq_flags, mimic in (([1, 0, 1], [1]), ([0, 1, 1], [0]), ([1, 1, 0], [1])):
        m = set_constraints_enabled(model, equality=eq_flags, mimic=mimic)
        out = run(m, st)
        d = solver.with_model(m).to_mj_data(st)
        np.testing.assert_array_equal(d.eq_active, eq_flags + mimic)
        mujoco.mj_step(mj, d)
        np.testing.assert_allclose(out.joint_q, d.qpos, atol=1e-12)  # hinge/slide only: qpos == joint_q
        finals.append(np.asarray(out.joint_q))
    assert len(traces) == 1
    assert min(np.abs(finals[i] - finals[j]).max() for i, j in ((0, 1), (0, 2), (1, 2))) > 1e-5  # the flags act


def test_with_model_rejects_other_structures():
    b, _ = all_types_builder()
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    with pytest.raises(TypeError, match="with_model: model must be a jaxart.Model"):
        solver.with_model(None)
    other, _ = fourbar_builder("revolute")
    with pytest.raises(ValueError, match="static structure"):
        solver.with_model(other.finalize(dtype=F64))


# ------------------------------------------------------------------ drives on loop-closing joints
def test_revolute_loop_drive_is_a_site_transmission_settling_at_the_closed_form():
    """Parallelogram, POSITION drive (ke 50, kd 5, target 0.5 rad) on its REVOLUTE loop joint: the site transmission's
    length / velocity are the loop angle / rate, and it settles where ``ke (θ* − θ) = 9.81 sin θ``."""
    b, lj = fourbar_builder("revolute")
    d = b.joint_qd_start[lj]
    b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION)
    b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = 50.0, 5.0
    b.joint_target_q[b.joint_q_start[lj]] = 0.5
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    assert mj.nu == 1 and mj.actuator_trntype[0] == mujoco.mjtTrn.mjTRN_SITE
    np.testing.assert_allclose(mj.actuator_gainprm[0, :1], [50.0])
    np.testing.assert_allclose(mj.actuator_biasprm[0, :3], [0.0, -50.0, -5.0])
    q, w = 0.3, 0.7
    st = jaxart.eval_fk(model, jnp.asarray(model.joint_q).at[:3].set([q, -q, q]),
                        jnp.asarray(model.joint_qd).at[:3].set([w, -w, w]), model.state())
    data = solver.to_mj_data(st)
    np.testing.assert_allclose([data.actuator_length[0], data.actuator_velocity[0]], [q, w], atol=1e-12)
    np.testing.assert_allclose(data.ctrl, [0.5])

    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    run = jax.jit(lambda s0: jax.lax.scan(lambda s, _: (solver.step(s, None, None, 5e-3), s.body_q), s0, None,
                                          length=400)[1])
    angle = _loop_angle(np.asarray(run(st)))
    theta = brentq(lambda t: 50.0 * (0.5 - t) - 9.81 * np.sin(t), 0.0, 0.5)
    assert abs(angle[-1] - theta) < 3e-4  # MuJoCo's soft CONNECT rows leave ~1e-4
    assert angle.max() > theta  # it overshoots (underdamped) and settles


def test_revolute_loop_position_velocity_drive_maps_two_site_actuators():
    """POSITION_VELOCITY on the loop joint: a position and a velocity servo on the same site pair (the tree
    mapping's gains), controls from the loop joint's ``joint_target_q`` / ``joint_target_qd``, force ranges from
    its effort limit."""
    b, lj = fourbar_builder("revolute")
    d = b.joint_qd_start[lj]
    b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION_VELOCITY)
    b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d], b.joint_dof["effort_limit"][d] = 30.0, 4.0, 7.0
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    assert [mj.actuator(i).name for i in range(mj.nu)] == ["loop_pos", "loop_vel"]
    np.testing.assert_array_equal(mj.actuator_trntype, [mujoco.mjtTrn.mjTRN_SITE] * 2)
    np.testing.assert_allclose(mj.actuator_gainprm[:, 0], [30.0, 4.0])
    np.testing.assert_allclose(mj.actuator_biasprm[:, :3], [[0.0, -30.0, 0.0], [0.0, 0.0, -4.0]])
    np.testing.assert_allclose(mj.actuator_forcerange, [[-7.0, 7.0]] * 2)
    np.testing.assert_allclose(mj.actuator_gear[:, 3:], [[1.0, 0.0, 0.0]] * 2)
    control = model.control()
    control = control.replace(joint_target_q=control.joint_target_q.at[model.joint_q_start[lj]].set(0.25),
                              joint_target_qd=control.joint_target_qd.at[d].set(-1.5))
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    np.testing.assert_allclose(solver.to_mj_data(st, control).ctrl, [0.25, -1.5])


def test_ball_loop_drives_still_raise():
    b, lj = fourbar_builder("ball")
    b.joint_target_mode[b.joint_qd_start[lj]] = int(jaxart.JointTargetMode.POSITION)
    with pytest.raises(NotImplementedError, match="'loop'.*drives on loop-closing BALL joints"):
        SolverMuJoCo(b.finalize(dtype=F64))


# ------------------------------------------------------------------ loop-closing PRISMATIC / D6 joints
@pytest.mark.parametrize("loop", ["prismatic", "d6"])
def test_prismatic_and_d6_loops_get_a_welded_auxiliary_body(loop):
    """The auxiliary body carries the loop joint's DOFs at the parent anchor; the weld to the child holds at
    consistent configurations, and the MuJoCo coordinates are the loop coordinates measured from the tree."""
    b, lj = fourbar_builder(loop)
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    aux = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "loop__aux")
    child = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "rocker")
    assert mj.body_parentid[aux] == mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "coupler")
    np.testing.assert_allclose(mj.body_mass[aux], AUX_MASS)
    np.testing.assert_allclose(mj.body_invweight0[aux], mj.body_invweight0[child])
    assert list(mj.eq_type) == [mujoco.mjtEq.mjEQ_WELD] and mj.eq_obj1id[0] == aux and mj.eq_obj2id[0] == child
    nl, na = (int(x) for x in model.joint_dof_dim[lj])
    assert mj.njnt == 3 + nl + na
    # crank at a, coupler level (−a), rocker at b: the child anchor sits 0.5 (sin b − sin a, cos a − cos b) from the
    # parent anchor in (y, z); the slide takes the z part, the y part is the weld's residual, and the relative
    # rotation b about x is free for the D6 (its first hinge) and locked for the PRISMATIC joint. The state's loop
    # entries are stale (0.3): the bridge re-measures them from the tree.
    qs = model.joint_q_start[lj]
    sel = solver.layout.q_src >= qs
    order = np.argsort(solver.layout.q_src[sel])
    for a, bb in ((0.0, 0.0), (0.4, 0.4), (0.2, 0.5)):
        jq = jnp.asarray(model.joint_q).at[model.joint_q_start[:3]].set([a, -a, bb]).at[qs:].set(0.3)
        d = solver.to_mj_data(jaxart.eval_fk(model, jq, model.joint_qd, model.state()))
        want = [0.5 * (np.cos(a) - np.cos(bb))] + ([bb, 0.0] if loop == "d6" else [])
        np.testing.assert_allclose(d.qpos[solver.layout.q_dst[sel][order]], want, atol=1e-12)
        res = d.efc_pos[d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
        rot = 0.0 if loop == "d6" else np.sin(bb / 2)
        np.testing.assert_allclose([np.linalg.norm(res[:3]), np.linalg.norm(res[3:])],
                                   [0.5 * abs(np.sin(bb) - np.sin(a)), rot], atol=1e-12)


@pytest.mark.slow
def test_driven_prismatic_loop_matches_featherstone():
    """Parallelogram closed by a PRISMATIC loop joint (slide along the coupler's z) with a POSITION drive on the
    slide, from rest: MuJoCo (auxiliary body + weld, soft) vs SolverFeatherstone (hard rows) over 0.4 s."""
    b, lj = fourbar_builder("prismatic")
    d = b.joint_qd_start[lj]
    b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION)
    b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = 200.0, 10.0
    b.joint_target_q[b.joint_q_start[lj]] = 0.05
    model = b.finalize(dtype=F64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

    def run(solver):
        step = jax.jit(lambda s: solver.step(s, None, None, 2e-3))
        s, out = st, []
        for _ in range(200):
            s = step(s)
            out.append((np.asarray(s.body_q), np.asarray(s.joint_q)))
        return [np.stack(x) for x in zip(*out, strict=True)]

    bq, jq = run(SolverMuJoCo(model))
    ref, _ = run(SolverFeatherstone(model, angular_damping=0.0))
    assert np.abs(ref[:, :, :3] - ref[0, :, :3]).max() > 0.05  # it moves
    np.testing.assert_allclose(bq, ref, atol=2e-3)
    slide = jq[:, model.joint_q_start[lj]]
    assert np.abs(slide).max() > 0.01  # the loop coordinate is written back
