"""SolverMuJoCo: run-time ``enabled`` flags (MJX ``eq_active``), drives on loop-closing joints (site transmission)
and loop-closing PRISMATIC / D6 joints (auxiliary body welded to the child)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from equality_models import F64, all_types_builder, chain_builder, fourbar_builder
from scipy.optimize import brentq

import jaxart
from jaxart.sim.equality import set_constraints_enabled
from jaxart.sim.validate import np_quat_mul
from jaxart.solvers import SolverFeatherstone, SolverMuJoCo
from jaxart.solvers.mujoco.convert import model_to_spec, resolve_options
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


def test_driven_damped_ball_loop_gets_an_auxiliary_ball_settling_at_the_closed_form():
    """Parallelogram closed by a BALL loop joint with a POSITION drive (ke 50, kd 5, target 0.5 rad about the hinge
    axis) and damping on its three DOFs: an auxiliary body carries a MuJoCo ball welded to the rocker, the drive and
    the damping are per-axis site actuators (rotation-vector ``gear``, as the tree BALL mapping), and MuJoCo C settles
    where ``ke (θ* − θ) = 9.81 sin θ`` with the weld intact."""
    b, lj = fourbar_builder("ball")
    d0, q0 = b.joint_qd_start[lj], b.joint_q_start[lj]
    for d in range(d0, d0 + 3):
        b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION)
        b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d], b.joint_dof["damping"][d] = 50.0, 5.0, 0.1
    b.joint_target_q[q0:q0 + 4] = [np.sin(0.25), 0.0, 0.0, np.cos(0.25)]
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    aux = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "loop__aux")
    jnt = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "loop")
    assert mj.jnt_bodyid[jnt] == aux and mj.jnt_type[jnt] == mujoco.mjtJoint.mjJNT_BALL
    assert list(mj.eq_type) == [mujoco.mjtEq.mjEQ_WELD]
    np.testing.assert_allclose(mj.dof_damping[mj.jnt_dofadr[jnt]:][:3], 0.0)  # damping moved to the dampers
    names = [mj.actuator(i).name for i in range(mj.nu)]
    assert names == [f"loop_{a}_{k}" for a in "xyz" for k in ("pos", "damp")]
    np.testing.assert_array_equal(mj.actuator_trntype, [mujoco.mjtTrn.mjTRN_SITE] * 6)
    np.testing.assert_allclose(mj.actuator_gear[:, 3:], np.repeat(np.eye(3), 2, axis=0))
    np.testing.assert_allclose(mj.actuator_biasprm[:, :3], [[0.0, -50.0, -5.0], [0.0, 0.0, -0.1]] * 3)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    data = solver.to_mj_data(st)
    np.testing.assert_allclose(data.ctrl[::2], [0.5, 0.0, 0.0], atol=1e-12)
    mj.opt.timestep = 5e-3
    adr = mj.jnt_qposadr[jnt]
    angle = []
    for _ in range(400):
        mujoco.mj_step(mj, data)
        w, x = data.qpos[adr], data.qpos[adr + 1]
        angle.append(2.0 * np.arctan2(x, w))
    theta = brentq(lambda t: 50.0 * (0.5 - t) - 9.81 * np.sin(t), 0.0, 0.5)
    assert abs(angle[-1] - theta) < 1e-3  # MuJoCo's soft weld leaves ~1e-4
    assert max(angle) > theta  # it overshoots (underdamped) and settles
    np.testing.assert_allclose(data.qpos[adr + 2:adr + 4], 0.0, atol=1e-6)  # it stays planar
    assert np.abs(data.efc_pos).max() < 1e-3  # the weld holds (with damping on the auxiliary ball it would not)


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


# ------------------------------------------------------------------ limits and passive terms on REVOLUTE loops
def _featherstone_rollout(model, st, dt, n):
    solver = SolverFeatherstone(model, angular_damping=0.0)
    run = jax.jit(lambda s0: jax.lax.scan(lambda s, _: (lambda s1: (s1, (s1.joint_q, s1.body_q)))(
        solver.step(s, None, None, dt)), s0, None, length=n)[1])
    return [np.asarray(x) for x in run(st)]


def _limited_fourbar_run(dt: float = 2e-3, n: int = 300):
    """Parallelogram closed by a REVOLUTE loop joint limited to ±0.3 rad (penalty ke 1e4, kd 10), launched so that
    it would swing to ~0.40 rad, stepped with MuJoCo C: ``(model, state, solver, qpos of j0-j2, loop hinge qpos)``."""
    b, lj = fourbar_builder("revolute")
    d = b.joint_qd_start[lj]
    b.joint_dof["limit_lower"][d], b.joint_dof["limit_upper"][d] = -0.3, 0.3
    b.joint_dof["limit_ke"][d], b.joint_dof["limit_kd"][d] = 1e4, 10.0
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    jnt = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "loop")
    st = jaxart.eval_fk(model, model.joint_q, jnp.asarray(model.joint_qd).at[:3].set([2.0, -2.0, 2.0]),
                        model.state())
    data = solver.to_mj_data(st)
    mj.opt.timestep = dt
    tree = solver.layout.q_dst[np.argsort(solver.layout.q_src)][:3]  # qpos of j0, j1, j2
    mj_q, mj_loop = [], []
    for _ in range(n):
        mujoco.mj_step(mj, data)
        mj_q.append(data.qpos[tree].copy())
        mj_loop.append(data.qpos[mj.jnt_qposadr[jnt]])
    return model, st, solver, np.asarray(mj_q), np.asarray(mj_loop)


def test_limited_revolute_loop_holds_its_limit():
    """The limited REVOLUTE loop joint becomes an auxiliary-body hinge with the limit (its ``dof_invweight0`` the
    rocker's rotational one, not the tiny auxiliary inertia's), and MuJoCo C holds the limit."""
    _, _, solver, mj_q, mj_loop = _limited_fourbar_run()
    mj = solver.mj_model
    jnt = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "loop")
    aux = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "loop__aux")
    rocker = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "rocker")
    assert mj.jnt_bodyid[jnt] == aux and mj.jnt_type[jnt] == mujoco.mjtJoint.mjJNT_HINGE and mj.jnt_limited[jnt]
    np.testing.assert_allclose(mj.jnt_range[jnt], [-0.3, 0.3])
    np.testing.assert_allclose(mj.jnt_solref[jnt], [-1e4, -10.0])
    np.testing.assert_allclose(mj.dof_invweight0[mj.jnt_dofadr[jnt]], mj.body_invweight0[rocker, 1])
    assert list(mj.eq_type) == [mujoco.mjtEq.mjEQ_WELD] and mj.nu == 0
    # it reaches and holds the limit (unlimited: 0.40 rad); at the stop MuJoCo's soft limit lets the loop 0.014 rad
    # past it and its soft weld lets the auxiliary hinge lag the loop angle by 0.012 rad
    assert 0.29 < mj_q[:, 0].max() < 0.32
    np.testing.assert_allclose(mj_loop, mj_q[:, 0], atol=2e-2)  # the hinge is the loop angle (= crank angle)


@pytest.mark.slow
def test_limited_revolute_loop_matches_featherstone():
    """The same run against SolverFeatherstone (which enforces loop limits along the loop axis, penalty 0.006 rad
    past the stop)."""
    model, st, _, mj_q, _ = _limited_fourbar_run()
    fs_q, _ = _featherstone_rollout(model, st, 2e-3, len(mj_q))
    assert 0.29 < fs_q[:, 0].max() < 0.31
    np.testing.assert_allclose(mj_q, fs_q[:, :3], atol=3e-2)  # measured 1.9e-2


# ------------------------------------------------------------------ DISTANCE joints
def _rope_builder(loop_ke: float = 0.0):
    """Three rope-hung spheres: ``bob`` on a tree DISTANCE joint (min 0.2, max 1.0) from (0, 0, 2), released taut at
    37°; ``ball`` on a FREE joint with a loop DISTANCE joint (max 0.8) from (2, 0, 2), released taut; ``rod`` on a tree
    DISTANCE joint (min 0.5, max 2.0) from (4, 0, 2), 0.8 below it, thrown up at 3 m/s (hits the minimum)."""
    b = jaxart.ModelBuilder()
    inertia = [0.004, 0.004, 0.004]

    def sphere(pos, label):
        return b.add_link(xform=(pos, (0, 0, 0, 1)), mass=1.0, inertia=inertia, label=label)

    bob = sphere((0.6, 0.0, 1.2), "bob")
    j_bob = b.add_joint_distance(-1, bob, parent_xform=((0, 0, 2), (0, 0, 0, 1)), min_distance=0.2,
                                 max_distance=1.0, label="rope")
    ball = sphere((2.48, 0.0, 1.36), "ball")
    j_ball = b.add_joint_free(ball, label="ball_free")
    rod = sphere((4.0, 0.0, 1.2), "rod")
    j_rod = b.add_joint_distance(-1, rod, parent_xform=((4, 0, 2), (0, 0, 0, 1)), min_distance=0.5,
                                 max_distance=2.0, label="strut")
    for j in (j_bob, j_ball, j_rod):
        b.add_articulation([j])
    lj = b.add_joint_distance(-1, ball, parent_xform=((2, 0, 2), (0, 0, 0, 1)), max_distance=0.8, label="tether")
    d = b.joint_qd_start[lj]
    b.joint_dof["limit_ke"][d], b.joint_dof["limit_kd"][d] = loop_ke, 0.1 * loop_ke
    b.joint_qd[b.joint_qd_start[j_rod] + 2] = 3.0
    return b, (bob, ball, rod)


def test_distance_joints_map_to_free_joints_and_limited_tendons():
    """Tree DISTANCE → free joint (FREE coordinates) + a spatial tendon between the anchors with range [min, max]
    (an unlimited side: 0 / 1e10); a loop DISTANCE joint → the tendon only; hard limits keep MuJoCo's default solref,
    penalty ones map to the direct (−ke, −kd)."""
    b, bodies = _rope_builder(loop_ke=500.0)
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    np.testing.assert_array_equal(mj.jnt_type, [mujoco.mjtJoint.mjJNT_FREE] * 3)
    assert mj.neq == 0 and mj.nu == 0
    names = [mj.tendon(i).name for i in range(mj.ntendon)]
    assert names == ["rope__distance", "strut__distance", "tether__distance"]
    np.testing.assert_allclose(mj.tendon_range, [[0.2, 1.0], [0.5, 2.0], [0.0, 0.8]])  # no minimum: 0
    np.testing.assert_allclose(mj.tendon_solref_lim, [[0.02, 1.0], [0.02, 1.0], [-500.0, -50.0]])
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    data = solver.to_mj_data(st)
    np.testing.assert_allclose(data.ten_length, [1.0, 0.8, 0.8], atol=1e-12)
    np.testing.assert_allclose(data.xpos[solver.layout.body_mj[list(bodies)]], np.asarray(st.body_q)[:, :3],
                               atol=1e-12)
    np.testing.assert_allclose(data.qvel[mj.jnt_dofadr[2]:][:3], [0.0, 0.0, 3.0], atol=1e-12)


def _ropes_run(dt: float = 2e-3, n: int = 250):
    """The hard-limited rope model stepped with MuJoCo C: ``(model, state, sphere positions (n, 3, 3))``."""
    b, bodies = _rope_builder()
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    data = solver.to_mj_data(st)
    mj.opt.timestep = dt
    pos = []
    for _ in range(n):
        mujoco.mj_step(mj, data)
        pos.append(data.xpos[solver.layout.body_mj[list(bodies)]].copy())
    return model, st, np.asarray(pos)


def _check_ropes(traj, soft: float) -> None:
    """Distances in [min − soft, max + 2 mm], the limits act, the pendulums swing."""
    dist = np.linalg.norm(traj - np.array([[0.0, 0.0, 2.0], [2.0, 0.0, 2.0], [4.0, 0.0, 2.0]]), axis=-1)
    assert np.all(dist[:, :2] < [1.0 + 2e-3, 0.8 + 2e-3]) and np.all(dist[:, :2] > [0.99, 0.79])  # taut ropes
    assert 0.5 - soft < dist[:, 2].min() < 0.5 + 1e-3  # the strut stops at its minimum (unlimited: 0.34)
    assert np.abs(traj[-1, :2, 0] - traj[0, :2, 0]).max() > 0.1  # the pendulums swing


def test_distance_ropes_hold_their_limits():
    """The three rope-hung spheres with hard limits over 0.5 s at 2 ms in MuJoCo C: the distances stay in [min, max]
    up to MuJoCo's soft limit (1.6 mm stretch of the ropes, 12 mm at the strut's 1.8 m/s stop)."""
    _check_ropes(_ropes_run()[2], soft=0.015)


@pytest.mark.slow
def test_distance_ropes_match_featherstone():
    """The same run against SolverFeatherstone (hard rows): its distances hold exactly and the motion agrees."""
    model, st, pos = _ropes_run()
    ref = _featherstone_rollout(model, st, 2e-3, len(pos))[1][:, :3, :3]  # bob, ball, rod are bodies 0-2
    _check_ropes(ref, soft=1e-4)
    np.testing.assert_allclose(pos[:, :2], ref[:, :2], atol=1e-2)  # measured 4.8e-3
    np.testing.assert_allclose(pos[:, 2], ref[:, 2], atol=6e-2)  # soft vs hard stop: 4.1e-2 after falling back


def test_loop_free_and_distance_joints_without_coordinates():
    """A loop FREE joint maps to nothing; terms other than damping on loop FREE / DISTANCE joints (no MuJoCo
    coordinates) raise naming the joint (tree FREE / DISTANCE joints below a body or with per-DOF terms:
    tests/solvers/mujoco/test_mujoco_free_ball_terms.py)."""
    b, ix = chain_builder()
    b.add_joint_free(ix["l3"], parent=ix["l1"], label="loop")
    model = b.finalize(dtype=F64)
    mj = SolverMuJoCo(model).mj_model
    assert mj.neq == 0 and mj.njnt == 3 and mj.nbody == 4
    b.joint_dof["stiffness"][-1] = 0.5
    with pytest.raises(NotImplementedError, match="'loop'.*joint_stiffness.*loop-closing FREE"):
        SolverMuJoCo(b.finalize(dtype=F64))
    b, _ = _rope_builder()
    b.joint_target_mode[-6] = int(jaxart.JointTargetMode.POSITION)
    with pytest.raises(NotImplementedError, match="'tether'.*loop-closing DISTANCE"):
        SolverMuJoCo(b.finalize(dtype=F64))


def test_constraints_name_auxiliary_loop_joints_and_mjcf_warns(tmp_path):
    """A JOINT equality, a mimic and a fixed tendon on a loop PRISMATIC joint act on its auxiliary slide; saving
    such a model as MJCF warns that the invweight0 overrides are lost."""
    b, lj = fourbar_builder("prismatic")
    b.add_equality_constraint_joint(lj, 0, polycoef=[0.0, 0.1], label="eq")
    b.add_constraint_mimic(lj, 0, coef1=0.1, label="mimic")
    b.add_tendon_fixed([(lj, 1.0)], label="ten")
    model = b.finalize(dtype=F64)
    solver = SolverMuJoCo(model)
    mj = solver.mj_model
    slide = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "loop")
    j0 = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "j0")
    joint_rows = mj.eq_type == mujoco.mjtEq.mjEQ_JOINT
    np.testing.assert_array_equal(mj.eq_obj1id[joint_rows], [slide, slide])
    np.testing.assert_array_equal(mj.eq_obj2id[joint_rows], [j0, j0])
    assert mj.wrap_objid[mj.tendon_adr[0]] == slide
    with pytest.warns(UserWarning, match="invweight0"):
        solver.save_to_mjcf(str(tmp_path / "loop.xml"))


def test_damped_multi_axis_d6_loop_maps_damping_to_rate_actuators():
    """Damping on a multi-axis D6 loop joint is not on its auxiliary joints (an implicit integrator would cancel the
    weld there) but a rate actuator between coupler and rocker per axis, with every integrator (compile only;
    :mod:`tests.test_mujoco_loop_terms` checks the rates and the motion)."""
    b, lj = fourbar_builder("d6")
    b.joint_dof["damping"][b.joint_qd_start[lj]] = 0.5
    model = b.finalize(dtype=F64)
    for integrator in ("implicitfast", "rk4"):
        mj = model_to_spec(model, resolve_options(integrator=integrator))[0].compile()
        assert not mj.dof_damping.any()
        a = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, "loop_0_damp")
        assert mj.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_SITE
        np.testing.assert_allclose(mj.actuator_biasprm[a, :3], [0.0, 0.0, -0.5])
