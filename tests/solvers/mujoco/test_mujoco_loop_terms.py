"""SolverMuJoCo: terms on loop-closing joints — rate actuators (damping and drive damping on multi-axis D6 loops,
damping on loop FREE joints), ACCELERATION drives and ``Control.joint_f`` on loop joints, checked against
SolverFeatherstone's loop axes (:mod:`jaxart.dynamics.engine.loop_axes`) on a parallelogram closed at one corner."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from equality_models import F64, fourbar_builder

import jaxart
from jaxart.dynamics.engine.loop_axes import loop_axis_plan, loop_coordinates
from jaxart.solvers import SolverFeatherstone, SolverMuJoCo
from jaxart.solvers.mujoco.convert import model_to_spec, resolve_options
from jaxart.solvers.mujoco.loop_rates import update_rate_model
from jaxart.solvers.mujoco.step_model import effective_inertia, update_step_model

jax.config.update("jax_enable_x64", True)

QD0 = [2.0, -2.0, 2.0]  # crank, coupler, rocker: the parallelogram's motion


def _d6_model():
    """D6 loop (slide z, hinges x then y) with damping on its three axes, a POSITION drive on the slide and a
    VELOCITY drive on the x hinge."""
    b, lj = fourbar_builder("d6")
    d0 = b.joint_qd_start[lj]
    for k, damp in enumerate([5.0, 0.3, 0.2]):
        b.joint_dof["damping"][d0 + k] = damp
    b.joint_target_mode[d0] = int(jaxart.JointTargetMode.POSITION)
    b.joint_dof["target_ke"][d0], b.joint_dof["target_kd"][d0] = 50.0, 2.0
    b.joint_target_q[b.joint_q_start[lj]] = 0.02
    b.joint_target_mode[d0 + 1] = int(jaxart.JointTargetMode.VELOCITY)
    b.joint_dof["target_kd"][d0 + 1], b.joint_dof["target_qd"][d0 + 1] = 0.5, 0.3
    return b.finalize(dtype=F64), lj


def _free_model(**terms):
    """The REVOLUTE-closed parallelogram plus a loop FREE joint coupler → rocker with per-DOF damping (and
    ``terms``: ``{dof field: value}`` on its first DOF)."""
    b, _ = fourbar_builder("revolute")
    tilt = (0.3, 0.2, 0.1, float(np.sqrt(1.0 - 0.14)))  # a tilted parent-anchor frame: every axis's rate moves
    fj = b.add_joint_free(2, parent=1, parent_xform=((0, 0.5, 0), tilt), child_xform=((0, 0, -0.5), (0, 0, 0, 1)),
                          label="floop")
    fd = b.joint_qd_start[fj]
    for k in range(6):
        b.joint_dof["damping"][fd + k] = 2.0 if k < 3 else 0.05
    for field, value in terms.items():
        b.joint_dof[field][fd] = value
    return b.finalize(dtype=F64), fj


def _state(model, q=None):
    jq = jnp.asarray(model.joint_q)
    if q is not None:
        jq = jq.at[model.joint_q_start[:3]].set(q)
    return jaxart.eval_fk(model, jq, jnp.asarray(model.joint_qd).at[:3].set(QD0), model.state())


def _rollouts(model, controls=(None,), n: int = 150, dt: float = 2e-3, solvers=("mujoco", "featherstone"),
              **mujoco_options):
    """Body positions ``(n, 3, 3)`` of the three links per solver in ``solvers``, per control (one compilation each)."""
    st = _state(model)
    out = []
    for kind in solvers:
        solver = (SolverMuJoCo(model, **mujoco_options) if kind == "mujoco"
                  else SolverFeatherstone(model, angular_damping=0.0))
        run = jax.jit(lambda s0, c, solver=solver: jax.lax.scan(
            lambda s, _: (lambda s1: (s1, s1.body_q[:3, :3]))(solver.step(s, c, None, dt)), s0, None, length=n)[1])
        out.append([np.asarray(run(st, model.control() if c is None else c)) for c in controls])
    return [o[0] for o in out] if len(controls) == 1 else out


def _without(model, **fields):
    """``model`` with the per-DOF arrays ``fields`` (``{name: (dofs, value)}``) changed."""
    return model.replace(**{f: getattr(model, f).at[np.asarray(d)].set(v) for f, (d, v) in fields.items()})


# ------------------------------------------------------------------ rate actuators
@pytest.mark.parametrize("kind", ["d6", "free"])
def test_rate_actuators_measure_featherstone_loop_rates(kind):
    """Away from the converted configuration, with the per-step reference sites and gears, each rate actuator's
    velocity (MuJoCo C) is SolverFeatherstone's rate of its loop axis; the auxiliary joints carry no damping."""
    model, lj = _d6_model() if kind == "d6" else _free_model()
    solver = SolverMuJoCo(model)  # implicit-fast: no NotImplementedError any more
    mj = solver.mj_model
    assert not mj.dof_damping.any()  # no damping on any MuJoCo DOF (D6: none on its auxiliary joints)
    if kind == "d6":  # the slide drive's stiffness on the auxiliary slide, its kd (q̇* − q̇) a rate actuator
        a = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, "loop_lin_pos")
        assert mj.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
        np.testing.assert_allclose(mj.actuator_biasprm[a, :3], [0.0, -50.0, 0.0])
        a = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, "loop_0_vel")
        np.testing.assert_allclose([mj.actuator_gainprm[a, 0], *mj.actuator_biasprm[a, :3]], [2.0, 0.0, 0.0, -2.0])
    st = _state(model, [0.4, -0.4, 0.5])  # rocker off the parallelogram: the loop's free axes all move
    st = st.replace(joint_qd=st.joint_qd.at[:3].set([1.5, -0.7, 2.0]))
    m = update_rate_model(solver.mjx_model, solver._accel.rates, model, st.body_q)
    mj.site_pos[:] = np.asarray(m.site_pos)
    mj.actuator_gear[:] = np.asarray(m.actuator_gear)
    d = solver.to_mj_data(st)
    _, rate, _ = loop_coordinates(model, st.joint_q, st.joint_qd, st.body_q, loop_axis_plan(model))
    d0 = int(model.joint_qd_start[lj])
    names = ["0_damp", "1_damp", "2_damp", "0_vel", "1_vel"] if kind == "d6" else [f"{k}_damp" for k in range(6)]
    acts = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, f"{model.joint_label[lj]}_{n}") for n in names]
    want = np.asarray(rate)[[d0 + int(n[0]) for n in names]]
    assert np.sum(np.abs(want) > 1e-2) >= (4 if kind == "d6" else 6)  # planar motion: the D6's y hinge stays
    np.testing.assert_allclose(d.actuator_velocity[acts], want, rtol=1e-10, atol=1e-12)


def test_free_loop_terms_without_mapping_raise():
    """Drives, springs, armature, friction and per-DOF limits on a loop FREE joint still raise, naming the term."""
    for terms, what in (({"stiffness": 1.0}, "joint_stiffness"), ({"armature": 0.1}, "joint_armature"),
                        ({"friction": 0.1}, "joint_friction"), ({"limit_upper": 0.2}, "per-DOF limits")):
        model, _ = _free_model(**terms)
        with pytest.raises(NotImplementedError, match=f"'floop'.*{what}.*loop-closing FREE"):
            model_to_spec(model, resolve_options())


@pytest.mark.slow
def test_damped_d6_loop_matches_featherstone():
    """Damped, velocity-driven D6 loop with MuJoCo's implicit-fast and Euler integrators vs SolverFeatherstone over
    0.3 s."""
    model, lj = _d6_model()
    mj, ref = _rollouts(model)
    d0 = int(model.joint_qd_start[lj])
    (undamped,) = _rollouts(_without(model, joint_damping=([d0, d0 + 1, d0 + 2], 0.0)), solvers=("featherstone",))
    assert np.abs(undamped - ref).max() > 5e-3  # the damping matters
    np.testing.assert_allclose(mj, ref, atol=2e-4)
    mj_euler, _ = _rollouts(model, integrator="euler")
    np.testing.assert_allclose(mj_euler, ref, atol=6e-4)


@pytest.mark.slow
def test_damped_free_loop_matches_featherstone():
    """Loop FREE joint with linear and angular damping (rate actuators) vs SolverFeatherstone over 0.3 s."""
    model, fj = _free_model()
    mj, ref = _rollouts(model)
    d0 = int(model.joint_qd_start[fj])
    (undamped,) = _rollouts(_without(model, joint_damping=(np.arange(d0, d0 + 6), 0.0)), solvers=("featherstone",))
    assert np.abs(undamped - ref).max() > 1e-3  # the damping matters
    np.testing.assert_allclose(mj, ref, atol=3e-5)  # measured 6.2e-6


# ------------------------------------------------------------------ ACCELERATION drives
def _accel_model(drive_type=jaxart.JointDriveType.ACCELERATION):
    b, lj = fourbar_builder("revolute")
    d = b.joint_qd_start[lj]
    b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION)
    b.joint_drive_type[d] = int(drive_type)
    b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = 100.0, 10.0
    b.joint_target_q[b.joint_q_start[lj]] = 0.5
    return b.finalize(dtype=F64), lj


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_loop_acceleration_drive_gains_are_scaled_by_the_constrained_inertia():
    """The loop hinge's site actuator gets ``ke m_L`` / ``(0, −ke m_L, −kd m_L)`` with ``m_L`` SolverFeatherstone's
    constrained effective inertia of the loop axis (not 0, the tree-DOF value of a loop DOF)."""
    model, lj = _accel_model()
    solver = SolverMuJoCo(model)
    st = _state(model, [0.3, -0.3, 0.3])
    m = update_step_model(solver.mjx_model, solver._accel, model, st)
    m_l = float(effective_inertia(model, st, loops=True)[model.joint_qd_start[lj]])
    assert 0.05 < m_l < 10.0
    a = mujoco.mj_name2id(solver.mj_model, mujoco.mjtObj.mjOBJ_ACTUATOR, "loop_pos")
    np.testing.assert_allclose(m.actuator_gainprm[a, 0], 100.0 * m_l, rtol=1e-12)
    np.testing.assert_allclose(m.actuator_biasprm[a, :3], [0.0, -100.0 * m_l, -10.0 * m_l], rtol=1e-12)


@pytest.mark.slow
def test_loop_acceleration_drive_matches_featherstone():
    """ACCELERATION POSITION drive on the REVOLUTE loop joint: MuJoCo (soft CONNECT rows) vs SolverFeatherstone over
    0.3 s (measured 1.4e-3 while the drive swings the parallelogram by 0.24 m)."""
    model, _ = _accel_model()
    mj, ref = _rollouts(model)
    (force,) = _rollouts(_accel_model(jaxart.JointDriveType.FORCE)[0], solvers=("featherstone",))
    assert np.abs(force - ref).max() > 1e-2  # the same gains as forces: 1.9e-2 apart (m_L is near 1 here)
    np.testing.assert_allclose(mj, ref, atol=3e-3)


# ------------------------------------------------------------------ joint_f on loop joints without MuJoCo DOFs
def _effort_model(loop: str):
    b, lj = fourbar_builder(loop)
    b.joint_target_mode[b.joint_qd_start[lj]] = int(jaxart.JointTargetMode.EFFORT)  # SolverFeatherstone applies it
    model = b.finalize(dtype=F64)
    return model, int(model.joint_qd_start[lj])


@pytest.mark.parametrize("loop", ["revolute", "ball"])
def test_loop_joint_f_becomes_body_torques(loop):
    """``joint_f`` on a CONNECT-mapped loop joint (no MuJoCo DOF) becomes the torques ``±R_P covᵀ f`` on the child /
    parent (``xfrc_applied``; it used to be dropped)."""
    model, d0 = _effort_model(loop)
    solver = SolverMuJoCo(model)
    st = _state(model, [0.5, -0.2, 0.3])
    f = np.array([3.0]) if loop == "revolute" else np.array([3.0, 0.5, -1.0])
    control = model.control()
    control = control.replace(joint_f=control.joint_f.at[d0:d0 + f.size].set(f))
    d = solver.to_mj_data(st, control)
    torque = np.asarray(jaxart.math.quat_to_matrix(st.body_q[1, 3:])) @ np.concatenate([f, [0.0, 0.0]])[:3]
    coupler, rocker = solver.layout.body_mj[[1, 2]]
    np.testing.assert_allclose(d.xfrc_applied[[coupler, rocker], 3:], [-torque, torque], atol=1e-12)
    assert not np.delete(d.xfrc_applied, [coupler, rocker], axis=0).any()
    np.testing.assert_allclose(d.xfrc_applied[:, :3], 0.0)


@pytest.mark.slow
def test_loop_joint_f_matches_featherstone():
    """A constant ``joint_f`` on the REVOLUTE loop joint: MuJoCo vs SolverFeatherstone over 0.3 s (measured 2.5e-5)."""
    model, d0 = _effort_model("revolute")
    control = model.control()
    control = control.replace(joint_f=control.joint_f.at[d0].set(3.0))
    (mj, mj_free), (ref, ref_free) = _rollouts(model, (control, None))
    assert np.abs(ref - ref_free).max() > 1e-2  # the torque matters
    np.testing.assert_allclose(mj, ref, atol=1e-4)
    np.testing.assert_allclose(mj_free, ref_free, atol=1e-4)


@pytest.mark.parametrize("kind", ["free", "ball"])
def test_loop_joint_f_wrenches_are_featherstones_generalized_force(kind):
    """The body wrenches of ``joint_f`` on a loop FREE joint (force at the child COM, tilted parent anchor) or BALL
    joint exert on the tree DOFs exactly SolverFeatherstone's ``J_Lᵀ f`` (``J_L`` the loop axes' rows)."""
    from jaxart.dynamics import eval_generalized_external_force
    from jaxart.dynamics.engine.loop_axes import loop_axis_rates
    from jaxart.solvers.mujoco.loop_forces import loop_joint_wrenches

    if kind == "free":
        model, lj = _free_model()
        f = [1.0, -2.0, 0.5, 0.3, -0.2, 0.7]
    else:
        model, _ = _effort_model("ball")
        lj = model.joint_count - 1  # fourbar_builder adds the loop joint last
        f = [0.3, -0.2, 0.7]
    solver = SolverMuJoCo(model)
    st = _state(model, [0.4, -0.4, 0.5])
    d0 = int(model.joint_qd_start[lj])
    joint_f = jnp.zeros(model.joint_dof_count, F64).at[d0:d0 + len(f)].set(f)
    wrenches = loop_joint_wrenches(solver.layout, model, st.body_q, joint_f)
    axes = loop_axis_plan(model)
    f_l = joint_f[axes.dofs]
    want = jax.grad(lambda qd: loop_axis_rates(model, st.joint_q, qd, st.body_q, axes) @ f_l)(st.joint_qd)[:3]
    got = -eval_generalized_external_force(model, st, body_f=wrenches)[:3]
    assert np.abs(want).max() > 0.1
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
