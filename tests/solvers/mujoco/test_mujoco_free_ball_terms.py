"""SolverMuJoCo: ball springs and FREE/DISTANCE joints below a body or with per-DOF terms (slides + a ball).

Oracle: MuJoCo C's ``mj_forward`` accelerations on the converted model, mapped to jaxart DOFs (for hinges,
slides and balls the velocity map is linear at fixed ``q`` and ``d(R ω_local)/dt = R ω̇_local``, so ``qacc``
maps like ``qvel``), against the accelerations SolverFeatherstone integrates: its explicit joint forces
(:func:`~jaxart.dynamics.joint_forces.joint_forces`) through the articulated-body solve (a third of the compile
time of a full step); one slow test steps SolverMuJoCo and SolverFeatherstone side by side.
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.dynamics.aba import aba_accelerations
from jaxart.dynamics.joint_forces import joint_forces
from jaxart.sim.enums import JointDriveType
from jaxart.sim.enums import JointTargetMode as M
from jaxart.solvers import SolverMuJoCo
from jaxart.solvers.featherstone.solver import SolverFeatherstone
from jaxart.solvers.mujoco.convert import model_to_spec, resolve_options
from jaxart.solvers.mujoco.state import (
    joint_q_to_qpos,
    joint_qd_to_qvel,
    qpos_to_joint_q,
    qvel_to_joint_qd,
)

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
T = mujoco.mjtJoint
DT = 1e-3


def qrot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]])


def convert(model):
    spec, rec = model_to_spec(model, resolve_options())
    mj = spec.compile()
    return mj, rec.resolve(mj, model.body_count)


def mj_qdd(model, q, qd, control):
    """MuJoCo C accelerations in jaxart's DOF convention (module docstring), through ``SolverMuJoCo.to_mj_data``."""
    solver = SolverMuJoCo(model)
    d = solver.to_mj_data(jaxart.eval_fk(model, q, qd, model.state()), control)
    return np.asarray(qvel_to_joint_qd(solver.layout, d.qpos, d.qacc, model.joint_dof_count))


@jax.jit
def _fs_qdd(model, state, control):
    f0, _, _ = joint_forces(model, control, state.joint_q, state.joint_qd, DT, implicit=False, friction_eps=1e-2)
    return aba_accelerations(model, state.joint_q, state.joint_qd, state.body_q, control.joint_f, f0,
                             model.joint_armature, state.body_f)


def fs_qdd(model, q, qd, control):
    return np.asarray(_fs_qdd(model, jaxart.eval_fk(model, q, qd, model.state()), control))


def assert_qdd_match(model, q, qd, control=None):
    control = model.control() if control is None else control
    a, b = mj_qdd(model, q, qd, control), fs_qdd(model, q, qd, control)
    assert np.abs(a).max() > 1.0  # the check is not vacuous
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8)


# ------------------------------------------------------------------ BALL springs
def _ball_builder(stiffness):
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.3, com=(0.1, -0.05, -0.3), inertia=np.diag([0.02, 0.03, 0.04]), label="bob")
    j = b.add_joint_ball(-1, link, parent_xform=((0, 0, 1.0), qrot([1, 2, 0], 0.5)),
                         child_xform=((0.0, 0.1, 0.0), qrot([0, 0, 1], 0.3)), stiffness=stiffness, damping=0.2,
                         label="sph")
    b.add_articulation([j])
    return b


def test_ball_spring_with_zero_rest_matches_featherstone():
    model = _ball_builder(3.0).finalize(dtype=F64)
    mj, _ = convert(model)
    assert mj.jnt_stiffness[0] == 3.0 and np.allclose(mj.qpos_spring, [1, 0, 0, 0])
    q, qd = jnp.asarray(qrot([0.3, -1, 0.5], 1.1)), jnp.array([0.3, -0.5, 0.2])
    assert_qdd_match(model, q, qd)


def test_ball_drives_with_any_target_match_featherstone():
    """BALL actuators act along the parent-anchor axes (``mjTRN_JOINTINPARENT``, so velocity targets are exact) and
    their ``ctrl`` adds the current rotation vector to jaxart's error ``log(q_t q⁻¹)`` (exact position targets)."""
    b = _ball_builder(0.0)
    b.joint_target_mode[:] = [int(M.POSITION_VELOCITY)] * 3
    b.joint_dof["target_ke"][:] = [40.0, 40.0, 40.0]
    b.joint_dof["target_kd"][:] = [2.0, 2.0, 2.0]
    model = b.finalize(dtype=F64)
    q, qd = jnp.asarray(qrot([0.3, -1, 0.5], 1.1)), jnp.array([0.3, -0.5, 0.2])
    ctrl = model.control().replace(joint_target_q=jnp.asarray(qrot([1, 0.2, 0], 0.7)),
                                   joint_target_qd=jnp.array([0.5, -0.3, 0.8]))
    assert_qdd_match(model, q, qd, ctrl)


def test_position_drives_take_the_velocity_target_as_featherstone():
    """POSITION mode is ``kp (q* − q) + kd (q̇* − q̇)``: the actuator's ``ctrl`` adds ``(kd/kp) q̇*``; with
    ``kp = 0`` the actuator is a velocity actuator (ball axes and a hinge below the ball)."""
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.3, com=(0.1, -0.05, -0.3), inertia=np.diag([0.02, 0.03, 0.04]), label="bob")
    ball = b.add_joint_ball(-1, link, parent_xform=((0, 0, 1.0), qrot([1, 2, 0], 0.5)), label="sph")
    arm = b.add_link(mass=0.7, com=(0.0, 0.0, -0.2), inertia=np.diag([0.01, 0.02, 0.01]), label="arm")
    hinge = b.add_joint_revolute(link, arm, axis=(0, 1, 0), parent_xform=((0, 0, -0.4), (0, 0, 0, 1)), label="hinge")
    b.add_articulation([ball, hinge])
    b.joint_target_mode[:] = [int(M.POSITION)] * 4
    b.joint_dof["target_ke"][:] = [40.0, 25.0, 0.0, 30.0]
    b.joint_dof["target_kd"][:] = [2.0, 1.0, 3.0, 1.5]
    model = b.finalize(dtype=F64)
    mj, _ = convert(model)
    assert mj.nu == 4
    q = jnp.concatenate([jnp.asarray(qrot([0.3, -1, 0.5], 1.1)), jnp.array([0.4])])
    qd = jnp.array([0.3, -0.5, 0.2, -0.7])
    ctrl = model.control().replace(joint_target_q=jnp.concatenate([jnp.asarray(qrot([1, 0.2, 0], 0.7)),
                                                                    jnp.array([-0.2])]),
                                   joint_target_qd=jnp.array([0.5, -0.3, 0.8, 1.2]))
    assert_qdd_match(model, q, qd, ctrl)
    still = ctrl.replace(joint_target_qd=jnp.zeros(4))
    assert np.abs(mj_qdd(model, q, qd, ctrl) - mj_qdd(model, q, qd, still)).max() > 0.5  # the targets matter


def test_ball_springs_with_rest_and_per_axis_terms():
    """MuJoCo's joint spring cannot hold a rest rotation: with ``qpos_spring = exp(rest)`` MuJoCo C's torque (parent
    frame) is ``k log(q_s q⁻¹)``, not jaxart's ``k (rest − log q)``. Such springs and per-axis damping become
    parent-axis actuators instead (exact); per-axis armature still raises."""
    rest = np.array([0.4, 0.0, 0.3])
    mj, _ = convert(_ball_builder(3.0).finalize(dtype=F64))
    q = qrot([0.3, -1, 0.5], 1.1)
    q_s = np.asarray(qrot(rest, np.linalg.norm(rest)))
    mj.qpos_spring[:] = q_s[[3, 0, 1, 2]]
    d = mujoco.MjData(mj)
    d.qpos[:] = q[[3, 0, 1, 2]]
    mujoco.mj_forward(mj, d)
    tau_mj = np.asarray(jaxart.math.quat_rotate(jnp.asarray(q), jnp.asarray(d.qfrc_spring)))
    log_q = np.asarray(jaxart.solvers.mujoco.state.quat_rotation_vector(jnp.asarray(q)))
    assert np.abs(tau_mj - 3.0 * (rest - log_q)).max() > 0.05
    b = _ball_builder(3.0)
    b.joint_dof["rest_q"][:] = list(rest)
    b.joint_dof["stiffness"][:] = [3.0, 2.0, 1.5]
    b.joint_dof["damping"][:] = [0.2, 0.5, 0.1]
    model = b.finalize(dtype=F64)
    mj, _ = convert(model)
    assert mj.nu == 6 and mj.jnt_stiffness[0] == 0.0 and np.all(mj.dof_damping == 0.0)
    assert_qdd_match(model, jnp.asarray(q), jnp.array([0.3, -0.5, 0.2]))
    b.joint_dof["armature"][:] = [0.1, 0.2, 0.1]
    with pytest.raises(NotImplementedError, match="'sph'.*per-axis joint_armature"):
        convert(b.finalize(dtype=F64))


# ------------------------------------------------------------------ FREE / DISTANCE as slides + ball
def _bob_on_arm(kind="free"):
    """A revolute arm carrying a free-jointed (or distance-jointed) bob with rotated anchors and a COM offset."""
    b = jaxart.ModelBuilder()
    arm = b.add_link(mass=1.0, com=(0, 0, -0.4), inertia=np.diag([0.02, 0.03, 0.01]), label="arm")
    bob = b.add_link(mass=0.5, com=(0.05, 0.02, -0.1), inertia=np.diag([0.01, 0.02, 0.015]), label="bob")
    xp, xc = ((0, 0.1, -0.8), qrot([1, 0, 1], 0.3)), ((0.0, 0.05, 0.1), qrot([0, 1, 1], -0.4))
    ja = b.add_joint_revolute(-1, arm, axis=(1, 0, 0), parent_xform=((0, 0, 2.0), qrot([0, 1, 0], 0.2)))
    if kind == "free":
        jb = b.add_joint_free(bob, parent=arm, parent_xform=xp, child_xform=xc, label="bobj")
    else:
        jb = b.add_joint_distance(arm, bob, parent_xform=xp, child_xform=xc, min_distance=0.1, max_distance=2.0,
                                  label="bobj")
    b.add_articulation([ja, jb])
    return b


Q_BOB = jnp.concatenate([jnp.array([0.6, 0.1, -0.2, 0.05]), jnp.asarray(qrot([1, -2, 0.5], 0.8))])
QD_BOB = jnp.array([0.8, 0.3, -0.4, 0.2, 1.1, -0.6, 0.7])


@pytest.fixture(scope="module")
def bob_model():
    b = _bob_on_arm()
    b.joint_dof["damping"][1:] = [0.3, 0.4, 0.5, 0.2, 0.2, 0.2]
    b.joint_dof["armature"][1:] = [0.05, 0.05, 0.05, 0.01, 0.01, 0.01]
    return b.finalize(dtype=F64)


def test_free_joint_below_a_body_kinematics(bob_model):
    model = bob_model
    mj, lay = convert(model)
    assert list(mj.jnt_type) == [T.mjJNT_HINGE, T.mjJNT_SLIDE, T.mjJNT_SLIDE, T.mjJNT_SLIDE, T.mjJNT_BALL]
    d = mujoco.MjData(mj)
    d.qpos[:] = joint_q_to_qpos(lay, Q_BOB)
    d.qvel[:] = joint_qd_to_qvel(lay, Q_BOB, QD_BOB)
    mujoco.mj_forward(mj, d)
    st = jaxart.eval_fk(model, Q_BOB, QD_BOB)
    com_w = np.asarray(jaxart.math.transform_point(st.body_q, model.body_com))
    for b in range(model.body_count):
        k = lay.body_mj[b]
        vel = np.zeros(6)
        mujoco.mj_objectVelocity(mj, d, mujoco.mjtObj.mjOBJ_BODY, k, vel, 0)  # (ω, v at the COM), world
        np.testing.assert_allclose(d.xipos[k], com_w[b], atol=1e-12)
        np.testing.assert_allclose(np.concatenate([vel[3:], vel[:3]]), st.body_qd[b], atol=1e-12)
    np.testing.assert_allclose(qpos_to_joint_q(lay, d.qpos, model.joint_coord_count), Q_BOB, atol=1e-12)
    np.testing.assert_allclose(qvel_to_joint_qd(lay, d.qpos, d.qvel, model.joint_dof_count), QD_BOB, atol=1e-12)


def test_free_joint_below_a_body_dynamics_with_damping_armature_and_joint_f(bob_model):
    """Damping and armature act on the COM velocity and ω, so they map for any COM; ``joint_f`` is a world wrench
    at the child COM with the reaction on the parent (a joint-space force), ``joint_act`` a generalized force in the
    parent-anchor frame."""
    ctrl = bob_model.control().replace(joint_f=jnp.array([0.4, 1.5, -2.0, 0.7, 0.3, -0.8, 0.5]),
                                       joint_act=jnp.array([0.2, -0.6, 0.9, 0.4, -0.3, 0.5, 0.2]))
    assert_qdd_match(bob_model, Q_BOB, QD_BOB, ctrl)


@pytest.mark.slow
def test_free_bob_on_a_swinging_arm_steps_like_featherstone():
    """30 SolverMuJoCo (MJX, Euler) steps against SolverFeatherstone (explicit) with ``joint_f``/``joint_act`` on
    the free bob: without damping (MuJoCo's Euler integrates damping implicitly) both integrate alike (the
    quaternion updates differ at O(dt²), ~1e-8 here)."""
    model = _bob_on_arm().finalize(dtype=F64)
    ctrl = model.control().replace(joint_f=jnp.array([0.4, 1.5, -2.0, 0.7, 0.3, -0.8, 0.5]),
                                   joint_act=jnp.array([0.2, -0.6, 0.9, 0.4, -0.3, 0.5, 0.2]))
    st = jaxart.eval_fk(model, Q_BOB, QD_BOB, model.state())

    def roll(solver):
        return jax.jit(lambda s: jax.lax.scan(lambda x, _: (solver.step(x, ctrl, None, DT), None), s, None,
                                              length=30)[0])(st)

    a = roll(SolverMuJoCo(model, integrator="euler"))
    f = roll(SolverFeatherstone(model, angular_damping=0.0, drive="explicit"))
    assert np.abs(f.joint_qd - QD_BOB).max() > 1.0
    np.testing.assert_allclose(a.joint_q, f.joint_q, atol=1e-7)
    np.testing.assert_allclose(a.joint_qd, f.joint_qd, atol=1e-7)
    np.testing.assert_allclose(a.body_q, f.body_q, atol=1e-7)


def test_world_free_joint_with_terms_uses_slides_and_ball():
    b = jaxart.ModelBuilder()
    b.add_body(xform=((0.1, 0.2, 0.9), qrot([1, 1, 0], 0.4)), com=(0.2, -0.1, 0.05), mass=2.0,
               inertia=np.diag([0.1, 0.2, 0.3]), label="box")
    mj, _ = convert(b.finalize(dtype=F64))
    assert list(mj.jnt_type) == [T.mjJNT_FREE]  # no terms: a MuJoCo free joint
    b.joint_dof["damping"][:] = [0.7] * 6
    model = b.finalize(dtype=F64)
    mj, _ = convert(model)
    assert list(mj.jnt_type) == [T.mjJNT_SLIDE] * 3 + [T.mjJNT_BALL]
    q = model.joint_q
    qd = jnp.array([0.3, -0.2, 0.5, 1.0, -0.7, 0.4])
    assert_qdd_match(model, q, qd)


def _driven_free(com=(0.0, 0.0, 0.0)):
    """A world FREE joint with rotated anchors, linear position and angular position/velocity drives, springs and
    linear limits; COM at the child anchor unless ``com`` is given."""
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.5, com=com, inertia=np.diag([0.05, 0.06, 0.07]), label="box")
    j = b.add_joint_free(link, parent_xform=((0.2, 0.0, 1.0), qrot([0, 1, 1], 0.6)), label="float")
    b.add_articulation([j])
    b.joint_target_mode[:] = [int(M.POSITION)] * 3 + [int(M.POSITION_VELOCITY)] * 3
    b.joint_dof["target_ke"][:] = [40.0, 30.0, 20.0, 5.0, 5.0, 5.0]
    b.joint_dof["target_kd"][:] = [2.0, 1.0, 3.0, 0.5, 0.5, 0.5]
    b.joint_dof["stiffness"][:] = [3.0, 0.0, 1.0, 2.0, 1.0, 3.0]
    b.joint_dof["rest_q"][:] = [0.1, -0.2, 0.3, 0.2, 0.0, -0.1]
    b.joint_dof["limit_lower"][:3] = [-2.0, -2.0, -2.0]
    b.joint_dof["limit_upper"][:3] = [2.0, 2.0, 2.0]
    return b


def test_free_joint_drives_springs_and_limits_match_featherstone():
    """Linear drives, springs and limits need the COM at the child anchor; angular drives and springs (per axis,
    with a rest rotation) map like a BALL joint's."""
    model = _driven_free().finalize(dtype=F64)
    mj, _ = convert(model)
    assert mj.nu == 3 + 6 + 3 and np.all(mj.jnt_limited[:3]) and not mj.jnt_limited[3]  # + 3 spring actuators
    q = jnp.concatenate([jnp.array([0.3, -0.5, 0.4]), jnp.asarray(qrot([1, 0.5, -1], 0.7))])
    qd = jnp.array([0.2, 0.1, -0.3, 0.5, -0.4, 0.6])
    target = jnp.concatenate([jnp.array([0.5, 0.2, -0.1]), jnp.asarray(qrot([0.2, -1, 0.4], 0.9))])
    ctrl = model.control().replace(joint_target_q=target, joint_target_qd=jnp.array([0, 0, 0, 0.3, -0.2, 0.1]))
    assert_qdd_match(model, q, qd, ctrl)


def test_free_joint_terms_without_exact_form_raise():
    b = _driven_free(com=(0.0, 0.1, 0.0))
    with pytest.raises(NotImplementedError, match="'float'.*COM"):
        convert(b.finalize(dtype=F64))
    b = _driven_free()
    b.joint_dof["limit_upper"][4] = 1.0
    with pytest.raises(NotImplementedError, match="'float'.*ball joint limits.*cone"):
        convert(b.finalize(dtype=F64))
    b = _driven_free()
    b.joint_dof["armature"][3:] = [0.1, 0.2, 0.1]
    with pytest.raises(NotImplementedError, match="'float'.*per-axis joint_armature"):
        convert(b.finalize(dtype=F64))


def test_distance_joint_below_a_body():
    """Slides + ball below the arm and the distance limits as a limited tendon between the anchors (inactive
    here, so the accelerations match)."""
    model = _bob_on_arm("distance").finalize(dtype=F64)
    mj, _ = convert(model)
    assert list(mj.jnt_type) == [T.mjJNT_HINGE] + [T.mjJNT_SLIDE] * 3 + [T.mjJNT_BALL]
    assert mj.ntendon == 1 and mj.tendon_limited[0] and np.allclose(mj.tendon_range[0], [0.1, 2.0])
    assert_qdd_match(model, Q_BOB, QD_BOB)


@pytest.mark.slow
def test_acceleration_drives_on_a_free_joint_below_a_body():
    """ACCELERATION drives (gains × the DOF's effective inertia, per step) on the slides and ball of a free bob:
    one SolverMuJoCo Euler step against SolverFeatherstone (explicit)."""
    b = _bob_on_arm()
    b.joint_target_mode[1:] = [int(M.VELOCITY)] * 3 + [int(M.POSITION)] * 3  # linear VELOCITY: any COM
    b.joint_drive_type[1:] = [int(JointDriveType.ACCELERATION)] * 6
    b.joint_dof["target_ke"][1:] = [0.0, 0.0, 0.0, 20.0, 20.0, 20.0]
    b.joint_dof["target_kd"][1:] = [3.0, 3.0, 3.0, 1.0, 1.0, 1.0]
    model = b.finalize(dtype=F64)
    ctrl = model.control().replace(
        joint_target_q=model.joint_target_q.at[4:8].set(jnp.asarray(qrot([1, 1, 0], 0.5))),
        joint_target_qd=jnp.array([0.0, 0.3, -0.2, 0.4, 0.0, 0.0, 0.0]))
    st = jaxart.eval_fk(model, Q_BOB, QD_BOB, model.state())
    a = jax.jit(lambda s: SolverMuJoCo(model, integrator="euler").step(s, ctrl, None, DT))(st)
    f = jax.jit(lambda s: SolverFeatherstone(model, angular_damping=0.0, drive="explicit").step(s, ctrl, None, DT))(st)
    qdd = (f.joint_qd - QD_BOB) / DT
    assert np.abs(qdd).max() > 1.0
    np.testing.assert_allclose((a.joint_qd - QD_BOB) / DT, qdd, atol=1e-8)
