"""Joint forces of ``SolverSemiImplicit``: every joint as a penalty spring between its anchor frames.

Follows Newton's ``eval_body_joints`` (semi-implicit kernels): the free directions of a joint carry
the per-DOF force law (drive per ``joint_target_mode``, limits ``limit_ke/kd`` replacing the
drive, passive ``stiffness``/``damping``, ``Control.joint_f`` and ``joint_act``); the constrained
directions carry ``joint_attach_ke`` / ``joint_attach_kd`` springs (angular attachment damping
scaled by 0.01 as Newton). Extensions beyond Newton, documented in the solver:

* BALL joints get drives (rotation-vector error ``log(q* ⊗ q⁻¹)`` per axis) and passive
  stiffness, not only ``joint_f`` and damping;
* FREE and DISTANCE joints take drives and ``joint_act`` with SolverFeatherstone's DOFs
  (:mod:`jaxart.solvers.maximal.free_joints`);
* DISTANCE joints keep their anchor distance in ``[min, max]`` (limits on the first DOF,
  negative = unlimited) with the ``joint_attach_ke/kd`` spring;
* loop-closing and orphan joints are treated exactly like tree joints.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.laws.joint import drive, penalty_limit, spring_damper
from jaxart.math import quat_conjugate, quat_mul, quat_normalize, quat_rotate, quat_rotate_inv
from jaxart.math.small import dot_last, matvec, sum_axis
from jaxart.sim.enums import JointType
from jaxart.solvers.maximal.free_joints import free_wrenches
from jaxart.solvers.maximal.joints import (
    angular_coordinates,
    constrained_joints,
    gather_dof,
    gather_joint_axes,
    joint_frames,
    joint_static,
    rotate_rows,
    rotation_vector,
    scalar_dof_force,
    scatter_body_wrench,
)
from jaxart.solvers.maximal.sums import segment_sum

ANGULAR_DAMPING_SCALE = 0.01  # Newton's scale of the angular attachment damping


def joint_wrenches(model, state, control, *, attach_ke: float, attach_kd: float, free_drives: bool = True):
    """World wrenches ``(body_count, 6)`` (about the COMs) of all enabled joints.

    FREE/DISTANCE joints add ``joint_act`` and (``free_drives``) their explicit drives
    (:func:`~jaxart.solvers.maximal.free_joints.free_wrenches`).
    """
    st = joint_static(model.topology)
    nb = model.body_count
    if model.joint_count == 0:
        return jnp.zeros((nb, 6), state.body_q.dtype)
    jt = st.jtype
    is_free = np.isin(jt, [JointType.FREE, JointType.DISTANCE])
    total = jnp.zeros((nb, 6), state.body_q.dtype)
    if np.any(constrained_joints(st)):
        total = total + _constraint_wrenches(model, state, control, st, attach_ke, attach_kd)
    # FREE / DISTANCE: Control.joint_f is a world wrench at the child COM
    free_on = st.enabled & is_free
    if free_on.any():
        jf = control.joint_f.astype(total.dtype)
        wrench = jnp.concatenate([gather_dof(jf, st.lin_dof), gather_dof(jf, st.ang_dof)], -1)
        wrench = jnp.where(jnp.asarray(free_on)[:, None], wrench, 0.0)
        total = total + segment_sum(wrench, st.child, nb)
        total = total + free_wrenches(model, state, control, drives=free_drives)
    return total


def _constraint_wrenches(model, state, control, st, attach_ke, attach_kd):
    nb = model.body_count
    fr = joint_frames(model, state.body_q, state.body_qd)
    jt = st.jtype
    is_free = np.isin(jt, [JointType.FREE, JointType.DISTANCE])
    attach = not (_static_zero(attach_ke) and _static_zero(attach_kd))  # static: springs present
    lin_f = _linear(model, control, st, fr, attach_ke, attach_kd, attach=attach)
    ang_t = _angular(model, control, st, fr, attach_ke, attach_kd, attach=attach)
    on = jnp.asarray(st.enabled & ~is_free)[:, None]
    force = jnp.where(on, lin_f, 0.0)
    if attach:  # the DISTANCE spring is ke/kd times a bounded term: exactly zero without springs
        dist_on = jnp.asarray(st.enabled & (jt == JointType.DISTANCE))[:, None]
        force = force + jnp.where(dist_on, _distance(model, st, fr, attach_ke, attach_kd), 0.0)
    torque = jnp.where(on, ang_t, 0.0)
    return scatter_body_wrench(nb, st.parent, st.child, fr.r_p, fr.r_c, force, torque)


def _static_zero(x) -> bool:
    """``x`` is a Python/numpy number equal to zero (e.g. SolverXPBD's passive-force call)."""
    return isinstance(x, (int, float, np.number)) and float(x) == 0.0


def _combine(coef, rows):
    """``Σ_k coef[:, k] rows[:, k]`` for ``(J, k)`` coefficients and ``(J, k, 3)`` rows."""
    return sum_axis(coef[:, :, None] * rows, 1)


def _linear(model, control, st, fr, ke, kd, *, attach: bool = True):
    """World force of the linear DOFs plus (``attach``) the attachment springs of the locked directions."""
    lin_ax, _ = gather_joint_axes(model, st)
    axes = rotate_rows(fr.x_p[:, 3:], lin_ax.astype(fr.x_err.dtype))
    q = matvec(axes, fr.x_err)
    qd = matvec(axes, fr.v_err)
    f = scalar_dof_force(model, control, st, st.lin_dof, st.lin_coord, q, qd, angular=False)
    f = f + gather_dof(control.joint_f.astype(q.dtype), st.lin_dof)
    force = _combine(f, axes)
    if not attach:
        return force
    proj = _combine(q, axes)
    vproj = _combine(qd, axes)
    return force - ke * (fr.x_err - proj) - kd * (fr.v_err - vproj)


def _angular(model, control, st, fr, ke, kd, *, attach: bool = True):
    """World torque of the angular DOFs plus (``attach``) the attachment springs (BALL: :func:`_ball`)."""
    dt = fr.x_err.dtype
    kda = kd * ANGULAR_DAMPING_SCALE
    _, ang_ax = gather_joint_axes(model, st)
    ang_ax = ang_ax.astype(dt)
    qp = fr.x_p[:, 3:]
    angles, cov = angular_coordinates(st.n_ang, ang_ax, fr.q_rel)
    cov_w = rotate_rows(qp, cov)
    qd = matvec(cov_w, fr.w_err)
    tau = scalar_dof_force(model, control, st, st.ang_dof, st.ang_coord, angles, qd, angular=True)
    tau = tau + gather_dof(control.joint_f.astype(dt), st.ang_dof)
    dof_t = _combine(tau, cov_w)
    n = st.n_ang[:, None]
    ball = jnp.asarray(st.jtype == JointType.BALL)[:, None]
    if not attach:  # no attachment springs: locked rotations carry no torque (n_ang == 0 → 0, as fix_t)
        torque = jnp.where(jnp.asarray(n == 0), 0.0, dof_t)
        return jnp.where(ball, _ball(model, control, st, fr, ang_ax), torque)
    # n_ang == 2: the locked middle angle (row 2) is held by the attachment spring
    lock_t = -(ke * angles[:, 2] + kda * qd[:, 2])[:, None] * cov_w[:, 2]
    # n_ang == 1: swing of the axis held by the attachment spring
    axis_p = cov_w[:, 0]
    axis_c = quat_rotate(fr.x_c[:, 3:], ang_ax[:, 0])
    swing_t = -ke * jnp.cross(axis_p, axis_c) - kda * (fr.w_err - qd[:, :1] * axis_p)
    # n_ang == 0: full rotation held
    fix_t = -ke * quat_rotate(qp, rotation_vector(fr.q_rel)) - kda * fr.w_err
    torque = jnp.where(jnp.asarray(n == 2), dof_t + lock_t, jnp.where(jnp.asarray(n == 1), dof_t + swing_t, dof_t))
    torque = jnp.where(jnp.asarray(n == 0), fix_t, torque)
    return jnp.where(ball, _ball(model, control, st, fr, ang_ax), torque)


def _ball(model, control, st, fr, ang_ax):
    """BALL: drive toward the target quaternion, passive spring/damping, ``joint_f`` (per axis)."""
    dt = fr.x_err.dtype
    qp = fr.x_p[:, 3:]
    nq = model.joint_coord_count
    t_ext = jnp.concatenate([control.joint_target_q.astype(dt), jnp.array([0.0, 1.0], dt)])
    q_t = quat_normalize(jnp.where(jnp.asarray(st.ball_coord[:, :1] < nq), t_ext[st.ball_coord],
                                   jnp.array([0.0, 0.0, 0.0, 1.0], dt)))
    err = rotation_vector(quat_mul(q_t, quat_conjugate(fr.q_rel)))
    pos = rotation_vector(fr.q_rel)
    w_p = quat_rotate_inv(qp, fr.w_err)
    e_k = matvec(ang_ax, err)
    p_k = matvec(ang_ax, pos)
    v_k = matvec(ang_ax, w_p)
    dof = st.ang_dof
    use_ke, use_kd = jnp.asarray(st.use_ke[dof]), jnp.asarray(st.use_kd[dof])
    v_t = gather_dof(control.joint_target_qd.astype(dt), dof)
    target, _ = drive(e_k, v_k, v_t, use_ke * gather_dof(model.joint_target_ke.astype(dt), dof),
                      use_kd * gather_dof(model.joint_target_kd.astype(dt), dof))
    stiffness = gather_dof(model.joint_stiffness.astype(dt), dof)
    passive = spring_damper(p_k, v_k, gather_dof(model.joint_rest_q, dof), stiffness,
                            gather_dof(model.joint_damping.astype(dt), dof))
    tau = (target.force + passive.force
           + gather_dof(control.joint_act.astype(dt), dof) + gather_dof(control.joint_f.astype(dt), dof))
    return _combine(tau, rotate_rows(qp, ang_ax))


def _distance(model, st, fr, ke, kd):
    """DISTANCE: spring keeping ``|x_err|`` inside ``[min, max]`` (negative = unlimited side)."""
    dt = fr.x_err.dtype
    d0 = st.lin_dof[:, 0]
    lo = gather_dof(model.joint_limit_lower.astype(dt), d0)
    hi = gather_dof(model.joint_limit_upper.astype(dt), d0)
    d2 = dot_last(fr.x_err, fr.x_err)
    ok = d2 > 1e-20
    dist = jnp.sqrt(jnp.where(ok, d2, 1.0))
    u = jnp.where(ok[:, None], fr.x_err / dist[:, None], 0.0)
    dist = jnp.where(ok, dist, 0.0)
    lim, active = penalty_limit(dist, dot_last(u, fr.v_err), jnp.where(lo >= 0.0, lo, 0.0),
                                jnp.where(hi >= 0.0, hi, jnp.inf), ke, kd)
    return jnp.where(active[:, None], lim.force[:, None] * u, 0.0)
