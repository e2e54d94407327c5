"""Drives and ``joint_act`` on FREE and DISTANCE joints in SolverXPBD and SolverSemiImplicit.

The DOFs are SolverFeatherstone's (:mod:`jaxart.solvers.maximal.free_joints`). Oracles: SolverFeatherstone's
trajectories on the same models (implicit drives for XPBD, explicit for SemiImplicit; the bodies have isotropic
inertia, so the comparison does not mix in the solvers' different treatment of the gyroscopic term), the targets a
settled drive reaches, the closed-form first-order velocity recursions of a VELOCITY drive (symplectic Euler for
SemiImplicit, backward Euler for XPBD), the mass independence of ACCELERATION drives, and conservation of the total
momentum under the internal drive and ``joint_act`` forces between two floating bodies.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart import JointDriveType
from jaxart.math import transform_point
from jaxart.sim.configs import JointDofConfig
from jaxart.sim.enums import Axis, JointTargetMode, JointType
from jaxart.solvers import SolverFeatherstone, SolverSemiImplicit, SolverXPBD
from jaxart.solvers.maximal.free_joints import free_wrenches
from jaxart.solvers.xpbd import step as xpbd_step_module

F64 = jnp.float64
AXES = (Axis.X, Axis.Y, Axis.Z)
PV = JointTargetMode.POSITION_VELOCITY


def _dofs(ke, kd, *, mode=PV, drive_type=JointDriveType.FORCE):
    return [JointDofConfig(axis=a, target_ke=ke, target_kd=kd, actuator_mode=mode, drive_type=drive_type)
            for a in AXES]


def _body(jts=(JointType.FREE,), *, lin=(20.0, 6.0), ang=(4.0, 1.0), mass=2.0, inertia=(0.2, 0.2, 0.2),
          com=(0.1, -0.05, 0.2), mode=PV, drive_type=JointDriveType.FORCE, tilt=0.3):
    """Bodies on FREE or DISTANCE joints (wide distance limits [−, 10 m]) to the world, zero gravity."""
    b = jaxart.ModelBuilder(gravity=0.0)
    for jt in jts:
        body = b.add_link(mass=mass, com=com, inertia=np.diag(inertia), lock_inertia=True)
        lin_cfg = _dofs(*lin, mode=mode, drive_type=drive_type)
        if jt == JointType.DISTANCE:
            lin_cfg[0].limit_lower, lin_cfg[0].limit_upper = -1.0, 10.0
        x_p = ((0.1, 0.0, -0.2), (0.0, np.sin(tilt), 0.0, np.cos(tilt)))
        b.add_articulation([b.add_joint(jt, -1, body, linear_axes=lin_cfg,
                                        angular_axes=_dofs(*ang, mode=mode, drive_type=drive_type), parent_xform=x_p)])
    return b.finalize(dtype=F64)


@functools.partial(jax.jit, static_argnums=(4,))
def _rollout(solver, state, control, dt, steps):
    def body(s, _):
        s = solver.step(s, control, None, dt)
        return s, (s.joint_q, s.joint_qd, s.body_qd)

    return jax.lax.scan(body, state, None, length=steps)


def _target(model):
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    q = np.concatenate([[0.3, -0.2, 0.5], axis * np.sin(0.4), [np.cos(0.4)]])  # 0.8 rad about a skew axis
    return model.control().replace(joint_target_q=jnp.asarray(np.tile(q, model.joint_count)))


def _quat_close(a, b):
    return min(np.abs(a - b).max(), np.abs(a + b).max())


def test_position_drives_match_featherstone_and_settle():
    model = _body((JointType.FREE, JointType.DISTANCE))
    ctrl = _target(model)
    target = np.asarray(ctrl.joint_target_q)[:7]
    state = model.state()
    ref = {drive: _rollout(SolverFeatherstone(model, drive=drive, angular_damping=0.0), state, ctrl, 1e-3, 300)[1][0]
           for drive in ("implicit", "explicit")}
    for solver, drive in ((SolverXPBD(model, iterations=8), "implicit"),
                          (SolverSemiImplicit(model, angular_damping=0.0), "explicit")):
        jq = _rollout(solver, state, ctrl, 1e-3, 300)[1][0]
        # same force law and time discretisation (XPBD: its implicit rows converged), so equal up to the XPBD rows'
        # residual and the log-map linearisation over one step
        np.testing.assert_allclose(jq, ref[drive], atol=1e-6)
        assert np.abs(np.asarray(jq[-1, :3])).max() > 0.15  # moved a good part of the way
        final = _rollout(solver, state, ctrl, 2e-2, 300)[1]  # 6 s, ~6 decay times (ζω = 1.5/s)
        for j in range(2):
            np.testing.assert_allclose(final[0][-1, 7 * j:7 * j + 3], target[:3], atol=2e-4)
            assert _quat_close(np.asarray(final[0][-1, 7 * j + 3:7 * j + 7]), target[3:]) < 2e-4
        np.testing.assert_allclose(final[1][-1], 0.0, atol=1e-3)


@pytest.mark.slow
def test_xpbd_lane_kernel_matches_per_world_path(monkeypatch):
    model = _body((JointType.DISTANCE, JointType.FREE))
    model = model.replace(joint_stiffness=jnp.asarray([2.0, 0.0, 1.0, 0.3, 0.0, 0.2] * 2),  # passive terms in the rows
                          joint_damping=jnp.asarray([0.5, 0.2, 0.0, 0.0, 0.1, 0.05] * 2),
                          joint_rest_q=jnp.asarray([0.1, -0.2, 0.05, 0.2, -0.1, 0.3] * 2),
                          joint_limit_upper=model.joint_limit_upper.at[6].set(-0.15))  # FREE x position limit
    ctrl = _target(model).replace(joint_act=jnp.asarray([0.3, 0.0, -0.2, 0.0, 0.05, 0.01] * 2))
    solver = SolverXPBD(model, iterations=4)
    assert solver.free_passive_rows == (0, 1) and solver.free_position_limits
    lanes = _rollout(solver, model.state(), ctrl, 1e-2, 20)[1][0]
    monkeypatch.setattr(xpbd_step_module, "LANE_KERNEL", False)
    xpbd_step_module.xpbd_step.clear_cache()
    _rollout.clear_cache()
    try:
        world = _rollout(solver, model.state(), ctrl, 1e-2, 20)[1][0]
    finally:
        xpbd_step_module.xpbd_step.clear_cache()
        _rollout.clear_cache()
    assert np.abs(np.asarray(lanes[-1, :3])).max() > 1e-2
    np.testing.assert_allclose(lanes, world, atol=1e-12)


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_velocity_drive_first_order_decay():
    """Linear VELOCITY drive (COM at the anchor) and a spin about a principal axis: the drive is the only force, so
    SemiImplicit follows ``v ← v + a (v* − v)`` and XPBD ``v ← (v + a v*) / (1 + a)`` with ``a = kd dt / m``."""
    m, inertia, kd, kd_ang = 2.0, (0.1, 0.2, 0.3), 3.0, 1.2
    model = _body(lin=(0.0, kd), ang=(0.0, kd_ang), mass=m, inertia=inertia, com=(0.0, 0.0, 0.0),
                  mode=JointTargetMode.VELOCITY, tilt=0.0)
    v_t = np.array([0.4, -0.3, 0.2, 0.0, 0.0, 1.5])  # spin about the parent-anchor z: a principal axis of the body
    ctrl = model.control().replace(joint_target_qd=jnp.asarray(v_t))
    dt, n = 1e-2, 200
    a = np.array([kd / m] * 3 + [kd_ang / i for i in inertia]) * dt
    k = np.arange(1, n + 1)[:, None]
    # XPBD's rotation (first-order quaternion updates, Newton's velocity 2 sin(ω dt/2)/dt from the quaternion change)
    # falls short by O((ω dt)²) relative each step, which the drive makes up with the lag (1 + a)/a: measured 1.06e-3
    # at 1.5 rad/s (a = 0.04); the linear recursion is exact
    xpbd_tol = np.array([1e-12] * 3 + [2e-3] * 3)
    for solver, decay, tol in ((SolverSemiImplicit(model, angular_damping=0.0), (1.0 - a) ** k, 1e-12),
                               (SolverXPBD(model, iterations=2), (1.0 + a) ** -k, xpbd_tol)):
        jqd = np.asarray(_rollout(solver, model.state(), ctrl, dt, n)[1][1])
        assert np.all(np.abs(jqd - v_t * (1.0 - decay)) <= tol)
        assert abs(jqd[-1, 5] - 1.5) < 3e-3  # reached the target velocity


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_acceleration_drives_do_not_depend_on_the_mass():
    light = _body(mass=1.0, inertia=(0.1, 0.15, 0.2), drive_type=JointDriveType.ACCELERATION)
    heavy = light.replace(body_mass=light.body_mass * 7.0, body_inertia=light.body_inertia * 7.0)
    ctrl = _target(light)
    for make in (lambda m: SolverXPBD(m, iterations=4), lambda m: SolverSemiImplicit(m, angular_damping=0.0)):
        a, b = (np.asarray(_rollout(make(m), m.state(), ctrl, 5e-3, 200)[1][0]) for m in (light, heavy))
        assert np.abs(a[-1, :3]).max() > 0.1
        np.testing.assert_allclose(a, b, atol=1e-10)
    # the force drive with the light body's gains moves the heavy body differently
    force = _body(mass=7.0, inertia=(0.7, 1.05, 1.4))
    c = np.asarray(_rollout(SolverSemiImplicit(force, angular_damping=0.0), force.state(), ctrl, 5e-3, 200)[1][0])
    assert np.abs(c - a).max() > 1e-2


def _floating_pair():
    """A floating base and a body on a driven DISTANCE joint from it (both offset COMs, anisotropic inertias)."""
    b = jaxart.ModelBuilder(gravity=0.0)
    base = b.add_link(mass=3.0, com=(0.05, 0.0, 0.02), inertia=np.diag([0.3, 0.2, 0.25]), lock_inertia=True)
    body = b.add_link(mass=1.0, com=(0.1, -0.05, 0.0), inertia=np.diag([0.05, 0.06, 0.07]), lock_inertia=True,
                      xform=((0.4, 0.1, 0.0), (0.0, 0.0, 0.0, 1.0)))
    lin = _dofs(20.0, 4.0)
    lin[0].limit_lower, lin[0].limit_upper = -1.0, 10.0
    x_p = ((0.2, 0.1, 0.0), (0.0, 0.0, np.sin(0.2), np.cos(0.2)))
    b.add_articulation([b.add_joint_free(base),
                        b.add_joint(JointType.DISTANCE, base, body, linear_axes=lin, angular_axes=_dofs(3.0, 0.6),
                                    parent_xform=x_p)])
    model = b.finalize(dtype=F64)
    tq = np.array(model.joint_q)
    axis = np.array([0.3, 1.0, -0.4]) / np.linalg.norm([0.3, 1.0, -0.4])
    tq[7:14] = np.concatenate([[0.3, -0.1, 0.2], axis * np.sin(0.3), [np.cos(0.3)]])
    act = np.zeros(model.joint_dof_count)
    act[6:12] = [0.5, 0.0, -0.3, 0.05, 0.02, 0.0]
    return model, model.control().replace(joint_target_q=jnp.asarray(tq), joint_act=jnp.asarray(act))


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_drive_and_joint_act_between_floating_bodies_are_internal():
    model, ctrl = _floating_pair()
    state = model.state()
    qd = np.zeros(model.joint_dof_count)
    qd[6:12] = [0.2, -0.1, 0.3, 0.5, -0.4, 0.2]
    state = jaxart.eval_fk(model, state.joint_q, jnp.asarray(qd), state)
    # the explicit wrenches sum to zero force and zero moment about the origin
    w = np.asarray(free_wrenches(model, state, ctrl))
    com_w = np.asarray(transform_point(state.body_q, model.body_com))
    assert np.abs(w[:, :3]).max() > 0.1
    np.testing.assert_allclose(w[:, :3].sum(0), 0.0, atol=1e-12)
    np.testing.assert_allclose((np.cross(com_w, w[:, :3]) + w[:, 3:]).sum(0), 0.0, atol=1e-12)
    mass = np.asarray(model.body_mass)[None, :, None]
    for solver, tol in ((SolverSemiImplicit(model, angular_damping=0.0), 1e-12), (SolverXPBD(model, iterations=4),
                                                                                   1e-9)):
        body_qd = np.asarray(_rollout(solver, state, ctrl, 2e-3, 200)[1][2])
        p = (mass * body_qd[..., :3]).sum(1)
        np.testing.assert_allclose(p, np.broadcast_to(p[0], p.shape), atol=tol)
        assert np.abs(body_qd[-1, 1] - body_qd[0, 1]).max() > 0.1  # the drive did act


def test_free_joint_limits_and_passive_terms_raise_naming_the_joint():
    """Terms a solver does not model on FREE/DISTANCE DOFs raise naming the joint and the term: SolverXPBD's angular
    per-DOF limits on FREE joints, both solvers' per-DOF limits on a DISTANCE joint's DOFs other than the first
    (SolverFeatherstone has none there either); passive stiffness/damping, FREE position limits (both) and angular
    limits (SemiImplicit) and a DISTANCE joint's distance limits (first DOF) are accepted."""
    model = _body((JointType.FREE, JointType.DISTANCE))
    xpbd, semi = jaxart.solvers.SolverXPBD, jaxart.solvers.SolverSemiImplicit
    # (field, DOF, value, {solver: expected message or None = accepted}); DOFs 0-5 FREE, 6-11 DISTANCE
    cases = [("joint_stiffness", 7, 1.0, {}), ("joint_damping", 1, 0.5, {}),
             ("joint_limit_upper", 7, 0.3, {xpbd: "joint_1.*per-DOF limits", semi: "joint_1.*per-DOF limits"}),
             ("joint_limit_upper", 1, 0.3, {}), ("joint_limit_lower", 4, -0.3, {xpbd: "joint_0.*angular per-DOF"})]
    for make in (xpbd, semi):
        make(model)  # drives and the distance limits: accepted
        for field, dof, value, raises in cases:
            bad = model.replace(**{field: getattr(model, field).at[dof].set(value)})
            if make not in raises:
                make(bad)  # modelled (test_*_match_featherstone*, test_xpbd_free_position_limits_are_hard)
                continue
            with pytest.raises(NotImplementedError, match=f"{make.__name__}.*{raises[make]}"):
                make(bad)

def _passive_limited(model, *, limits: bool = True):
    """``model`` (a FREE then a DISTANCE joint) with passive springs/dampers toward a rest pose on all twelve DOFs
    and (``limits``) upper penalty limits on the FREE joint's x position (starts at −0.195) and x rotation-vector
    component (starts at 0), which its drive toward :func:`_target` (0.3 and 0.35) pushes past."""
    k = jnp.asarray([5.0, 3.0, 4.0, 1.0, 0.5, 0.8] * 2)
    c = jnp.asarray([1.0, 0.5, 0.8, 0.2, 0.1, 0.15] * 2)
    rest = jnp.asarray([0.1, -0.2, 0.05, 0.2, -0.1, 0.3] * 2)
    model = model.replace(joint_stiffness=k, joint_damping=c, joint_rest_q=rest)
    if not limits:
        return model
    return model.replace(joint_limit_upper=model.joint_limit_upper.at[0].set(-0.13).at[3].set(0.05),
                         joint_limit_ke=model.joint_limit_ke.at[0].set(300.0).at[3].set(40.0),
                         joint_limit_kd=model.joint_limit_kd.at[0].set(4.0).at[3].set(0.5))


def test_semi_implicit_passive_springs_and_limits_match_featherstone():
    """SolverSemiImplicit's explicit passive springs ``k (rest − x) − c ẋ`` (rotation vectors for the angular DOFs)
    and per-DOF penalty limits (drive off beyond a limit) on FREE/DISTANCE DOFs follow SolverFeatherstone's explicit
    law on the same model."""
    base = _body((JointType.FREE, JointType.DISTANCE))
    ctrl = _target(base)
    runs = {}
    for limits in (True, False):
        model = _passive_limited(base, limits=limits)
        ref = _rollout(SolverFeatherstone(model, drive="explicit", angular_damping=0.0), model.state(), ctrl, 1e-3,
                       300)[1][0]
        jq = _rollout(SolverSemiImplicit(model, angular_damping=0.0), model.state(), ctrl, 1e-3, 300)[1][0]
        np.testing.assert_allclose(jq, ref, atol=1e-6)
        runs[limits] = np.asarray(jq)
    lim, free = runs[True], runs[False]
    assert free[:, 0].max() > -0.04 and lim[:, 0].max() < -0.07  # the position limit held the FREE joint back
    assert np.abs(lim[:, 7:] - free[:, 7:]).max() < 1e-12  # the DISTANCE joint has no per-DOF limits
    assert np.abs(lim[:, 3:7] - free[:, 3:7]).max() > 1e-2


@pytest.mark.slow  # four compilations (~40 s); the SemiImplicit check and the XPBD limit check stay default
def test_xpbd_passive_springs_match_featherstone_implicit():
    """SolverXPBD folds passive stiffness/damping on FREE/DISTANCE DOFs into the implicit drive rows
    (SolverFeatherstone's implicit law), with drives and without (rows made for the passive terms alone)."""
    for mode in (PV, JointTargetMode.NONE):
        model = _passive_limited(_body((JointType.FREE, JointType.DISTANCE), mode=mode), limits=False)
        ctrl = _target(model)
        ref = _rollout(SolverFeatherstone(model, angular_damping=0.0), model.state(), ctrl, 1e-3, 300)[1][0]
        jq = _rollout(SolverXPBD(model, iterations=8), model.state(), ctrl, 1e-3, 300)[1][0]
        np.testing.assert_allclose(jq, ref, atol=1e-6)
        assert np.abs(np.asarray(jq[-1] - jq[0])).max() > 2e-2  # the springs moved the bodies


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_xpbd_free_position_limits_are_hard():
    """SolverXPBD holds a FREE joint's per-DOF position limits as hard rows (the drive target clipped into them, as
    for scalar DOFs): the anchor x stops at its upper limit while the drive pulls it past; unlimited, it passes."""
    model = _body()
    ctrl = _target(model)
    hi = -0.1  # x starts at −0.195, the drive target is 0.3
    limited = model.replace(joint_limit_upper=model.joint_limit_upper.at[0].set(hi))
    run = {m is limited: np.asarray(_rollout(SolverXPBD(m, iterations=8), m.state(), ctrl, 1e-2, 150)[1][0])
           for m in (model, limited)}
    assert run[False][:, 0].max() > 0.2
    assert run[True][:, 0].max() < hi + 1e-4
    np.testing.assert_allclose(run[True][-1, 0], hi, atol=1e-3)
    np.testing.assert_allclose(run[True][-1, 1:3], run[False][-1, 1:3], atol=2e-3)  # other DOFs still reach the target
