"""Per-DOF joint forces of the reduced-coordinate solver: drives, limits, springs, damping, friction.

Every force is split as ``f(q_{n+1}, q̇_{n+1}) ≈ f0 − (k dt² + c dt) q̈`` for semi-implicit Euler
(``q̇_{n+1} = q̇ + dt q̈``, ``q_{n+1} = q + dt q̇_{n+1}``), so the solver folds ``k dt² + c dt``
into the mass-matrix diagonal (implicit, PhysX-style) or uses ``k = c = 0`` (explicit, Newton's
closed form). Positions per DOF: scalar coordinates for PRISMATIC/REVOLUTE/D6; for BALL and the
angular DOFs of FREE/DISTANCE joints the rotation vector ``log(q)`` of the joint quaternion
(parent-anchor frame, the frame of ``joint_qd``'s ω), with drive errors ``log(q_target ⊗ q⁻¹)``
(= ``−R(q_target) log(q_target⁻¹ ⊗ q)``: the rotation vector of ``q_target⁻¹ q`` expressed in the
parent-anchor frame, sign such that ``ke·error`` pulls toward the target); for the linear DOFs of
FREE/DISTANCE joints the child-anchor position ``joint_q[0:3]`` (parent-anchor frame) paired with the
child-COM velocity ``joint_qd[0:3]`` (they coincide when the COM is at the child anchor). FREE DOFs
take drives, springs and per-DOF limits like any DOF; DISTANCE DOFs take drives and springs, and their
distance limits ``[joint_limit_lower, joint_limit_upper]`` of the first DOF (negative = unlimited)
act on the anchor distance ``|p|`` as the penalty ``limit_ke (d_lim − d) − limit_kd ḋ`` along
``u = p/|p|`` at the child anchor (generalized force ``F·(u, r × u)``, ``r`` = COM→anchor); in
implicit mode its exact rank-one stiffness ``(k dt² + c dt) J Jᵀ`` is returned as ``dyad``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.joints import append_rows
from jaxart.laws.angles import wrap_angle
from jaxart.laws.joint import drive, penalty_limit, smooth_friction, spring_damper
from jaxart.math import quat_normalize, quat_rotate, soa, transform_inverse, transform_point
from jaxart.math.safe import safe_norm
from jaxart.math.static_index import take_rows
from jaxart.sim.enums import JointDriveType, JointTargetMode, JointType


class DofStatic(NamedTuple):
    """Static per-DOF gathers: scalar coordinate, BALL quaternion coordinates and component."""

    coord: np.ndarray  # (nd,) coordinate of scalar DOFs, nq for others
    is_scalar: np.ndarray
    is_angular_scalar: np.ndarray
    is_ball: np.ndarray
    ball_quat: np.ndarray  # (nd, 4) quaternion coordinates of BALL DOFs (identity sentinel)
    ball_k: np.ndarray  # (nd,) component 0..2
    use_ke: np.ndarray
    use_kd: np.ndarray
    is_distance: np.ndarray  # (nd,) DOF of a DISTANCE joint (per-DOF limits replaced by the distance limit)
    dist_joint: np.ndarray  # (K,) DISTANCE joints
    dist_q0: np.ndarray  # (K,) first coordinate
    dist_d0: np.ndarray  # (K,) first DOF


@functools.lru_cache(maxsize=64)
def dof_static(topo) -> DofStatic:
    """Derive the :class:`DofStatic` of a topology (numpy, cached)."""
    nq, nd = topo.joint_coord_count, topo.joint_dof_count
    coord = np.full(nd, nq, np.int64)
    is_scalar = np.zeros(nd, bool)
    is_ang = np.zeros(nd, bool)
    is_ball = np.zeros(nd, bool)
    ball_quat = np.tile(np.array([nq, nq, nq, nq + 1]), (nd, 1))
    ball_k = np.zeros(nd, np.int64)
    is_dist = np.zeros(nd, bool)
    dist = []
    qs, ds, dims = topo.joint_q_start.array, topo.joint_qd_start.array, topo.joint_dof_dim.array
    for j in range(topo.joint_count):
        jt = JointType(int(topo.joint_type.array[j]))
        d0, n = ds[j], ds[j + 1] - ds[j]
        if jt == JointType.BALL:
            is_ball[d0:d0 + 3] = True
            ball_quat[d0:d0 + 3] = qs[j] + np.arange(4)
            ball_k[d0:d0 + 3] = np.arange(3)
        elif jt in (JointType.FREE, JointType.DISTANCE):
            coord[d0:d0 + 3] = qs[j] + np.arange(3)
            is_scalar[d0:d0 + 3] = True
            is_ball[d0 + 3:d0 + 6] = True
            ball_quat[d0 + 3:d0 + 6] = qs[j] + 3 + np.arange(4)
            ball_k[d0 + 3:d0 + 6] = np.arange(3)
            if jt == JointType.DISTANCE:
                is_dist[d0:d0 + 6] = True
                dist.append((j, qs[j], d0))
        else:
            coord[d0:d0 + n] = qs[j] + np.arange(n)
            is_scalar[d0:d0 + n] = True
            is_ang[d0 + dims[j, 0]:d0 + n] = True
    mode = topo.joint_target_mode.array
    pos_modes = (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY)
    vel_modes = (*pos_modes, JointTargetMode.VELOCITY)
    dist = np.asarray(dist, np.int64).reshape(-1, 3)
    return DofStatic(coord, is_scalar, is_ang, is_ball, ball_quat, ball_k,
                     np.isin(mode, [int(m) for m in pos_modes]), np.isin(mode, [int(m) for m in vel_modes]),
                     is_dist, dist[:, 0], dist[:, 1], dist[:, 2])


@functools.lru_cache(maxsize=64)
def acceleration_dofs(topo) -> np.ndarray:
    """Static ``(nd,)`` mask of the DOFs with an ``ACCELERATION`` drive (:class:`JointDriveType`)."""
    if topo.joint_drive_type is None:
        return np.zeros(topo.joint_dof_count, bool)
    return np.asarray(topo.joint_drive_type.array) == int(JointDriveType.ACCELERATION)


def static_columns(x: jnp.ndarray):
    """Reshape static per-row numpy arrays to broadcast against ``x`` (``(rows,)`` or ``(rows, L)``)."""
    return lambda a: np.reshape(a, a.shape + (1,) * (x.ndim - 1))


@functools.lru_cache(maxsize=64)
def _ball_sources(topo) -> tuple[np.ndarray, np.ndarray]:
    """Static ``(quaternion coordinates (k, 4), (nd,) index into concat(scalar (nd), r_x, r_y, r_z))``."""
    st = dof_static(topo)
    nd = topo.joint_dof_count
    rows = np.nonzero(st.is_ball)[0]  # consecutive (k = 0, 1, 2) triples sharing one quaternion
    k = len(rows) // 3
    src = np.arange(nd)
    src[rows] = nd + st.ball_k[rows] * k + np.repeat(np.arange(k), 3)
    return st.ball_quat[rows[::3]], src


def dof_positions(model, joint_q: jnp.ndarray, target_q: jnp.ndarray):
    """Per-DOF positions and drive errors.

    Layout-generic: per world (``(nq,)`` coordinates) or in the lane layout of
    :mod:`jaxart.math.lanes` (``(nq, L)``; the targets may have one lane).

    Returns:
        ``(pos (nd,), drive_error (nd,))`` (with the lane axis if given); BALL DOFs use rotation
        vectors, FREE DOFs zero.
    """
    st = dof_static(model.topology)
    col = static_columns(joint_q)
    q_ext = append_rows(joint_q, [0.0, 1.0])
    t_ext = append_rows(jnp.asarray(target_q, joint_q.dtype), [0.0, 1.0])
    scalar = col(st.is_scalar)
    pos = jnp.where(scalar, take_rows(q_ext, st.coord), 0.0)
    err = jnp.where(scalar, take_rows(t_ext, st.coord) - take_rows(q_ext, st.coord), 0.0)
    if not st.is_ball.any():  # static: no quaternion branch in the program
        return pos, err
    quat_idx, src = _ball_sources(model.topology)
    quat = soa.qnormalize(tuple(take_rows(q_ext, quat_idx[:, i]) for i in range(4)))
    quat_t = soa.qnormalize(tuple(take_rows(t_ext, quat_idx[:, i]) for i in range(4)))
    rot = soa.qlog(quat)
    rot_err = soa.qlog(soa.qmul(quat_t, soa.qconj(quat)))
    return _place(pos, rot, src), _place(err, rot_err, src)


def _place(base: jnp.ndarray, parts: tuple, src: np.ndarray) -> jnp.ndarray:
    """``concat(base, *parts)[src]`` (a static gather instead of a scatter into ``base``)."""
    lanes_ = jnp.broadcast_shapes(base.shape[1:], *(x.shape[1:] for x in parts))
    rows = [jnp.broadcast_to(x, (x.shape[0], *lanes_)) for x in (base, *parts)]
    return take_rows(jnp.concatenate(rows), src)


def joint_forces(model, control, joint_q, joint_qd, dt, *, implicit: bool, friction_eps: float,
                 drive_inertia=None, limit_impulse: bool = False):
    """Joint-space forces and implicit diagonal terms.

    Args:
        model: The model.
        control: Control (targets, ``joint_act``).
        joint_q: Coordinates.
        joint_qd: Velocities.
        dt: Time step.
        implicit: Fold stiffness/damping into the matrix.
        friction_eps: Velocity scale of the smooth Coulomb friction ``−μ tanh(q̇/ε)``.
        drive_inertia: ``(nd,)`` effective inertias (:func:`~jaxart.dynamics.engine.drive_inertia.drive_inertia`)
            that scale the gains of ``ACCELERATION`` drives; required when the model has any.
        limit_impulse: ``joint_effort_limit`` is an impulse per step (PhysX without
            ``eDRIVE_LIMITS_ARE_FORCES``): the drive force is clamped to ``effort_limit / dt``.

    Returns:
        ``(f0 (nd,), diag (nd,), dyad)``: force at the current state (with the implicit position
        look-ahead), ``k dt² + c dt`` to add to the mass-matrix diagonal, and ``None`` or the
        ``(nd,)`` vector ``w`` of the DISTANCE-limit rows (``√(k dt² + c dt)·J`` on each joint's six
        DOFs): add ``w_i w_k`` to the matrix for DOFs ``i, k`` of the same joint (:func:`dyad_mask`).
    """
    st = dof_static(model.topology)
    col = static_columns(joint_qd)
    v = joint_qd
    pos, err = dof_positions(model, joint_q, control.joint_target_q)
    is_scalar, is_ball, is_dist = col(st.is_scalar), col(st.is_ball), col(st.is_distance)
    use_ke, use_kd, is_angular_scalar = col(st.use_ke), col(st.use_kd), col(st.is_angular_scalar)
    lo, hi = model.joint_limit_lower, model.joint_limit_upper
    look = dt if implicit else 0.0
    limit, limited = penalty_limit(pos, v, lo, hi, model.joint_limit_ke, model.joint_limit_kd,
                                   enabled=(is_scalar | is_ball) & ~is_dist, look=look)
    drivable = is_scalar | is_ball
    ke = jnp.where(limited | ~drivable, 0.0, model.joint_target_ke * use_ke)
    kd = jnp.where(limited | ~drivable, 0.0, model.joint_target_kd * use_kd)
    accel = acceleration_dofs(model.topology)
    if accel.any():  # static: acceleration drives scale their gains by the DOF's effective inertia
        if drive_inertia is None:
            raise NotImplementedError("joint_forces: ACCELERATION drives need the effective inertias (drive_inertia)")
        scale = jnp.where(col(accel), drive_inertia, 1.0)
        ke, kd = ke * scale, kd * scale
    v_t = jnp.where(use_kd, control.joint_target_qd, 0.0)
    spring_pos = jnp.where(is_angular_scalar, wrap_angle(pos), pos)
    stiff = jnp.where(is_scalar | is_ball, model.joint_stiffness, 0.0)
    effort = model.joint_effort_limit / dt if limit_impulse else model.joint_effort_limit
    drv, _ = drive(err, v, v_t, ke, kd, act=control.joint_act, effort_limit=effort, look=look)
    spring = spring_damper(spring_pos, v, model.joint_rest_q, stiff, model.joint_damping, look=look)
    fric = smooth_friction(v, model.joint_friction, friction_eps)
    f0 = drv.force + spring.force + limit.force + fric.force
    if implicit:
        k = drv.stiffness + spring.stiffness + limit.stiffness
        c = drv.damping + spring.damping + limit.damping + fric.damping
    else:
        k = jnp.zeros_like(v)
        c = fric.damping
    if st.dist_joint.size:  # static: only models with DISTANCE joints
        f_d, dyad = distance_limit_forces(model, joint_q, joint_qd, dt, implicit=implicit)
        return f0 + f_d, k * dt * dt + c * dt, dyad
    return f0, k * dt * dt + c * dt, None


def distance_limit_forces(model, joint_q, joint_qd, dt, *, implicit: bool):
    """Penalty forces of the DISTANCE joints' anchor-distance limits (module docstring).

    Returns:
        ``(f (nd,), w (nd,) or None)``: generalized forces and, in implicit mode, the rank-one rows.
    """
    st = dof_static(model.topology)
    nd, dtype = model.joint_dof_count, joint_q.dtype
    q0, d0 = st.dist_q0, st.dist_d0
    p = joint_q[q0[:, None] + np.arange(3)]
    quat = quat_normalize(joint_q[q0[:, None] + 3 + np.arange(4)])
    qd = joint_qd[d0[:, None] + np.arange(6)]
    child = model.topology.joint_child.array[st.dist_joint]
    r_com = transform_point(transform_inverse(model.joint_X_c[st.dist_joint]), model.body_com[child])
    r = -quat_rotate(quat, r_com.astype(dtype))  # COM -> child anchor, parent-anchor frame
    d = safe_norm(p)
    u = p / jnp.where(d > 1e-12, d, 1.0)[:, None]
    jac = jnp.concatenate([u, jnp.cross(r, u)], -1)  # ḋ = J · (v, ω)
    lo, hi = model.joint_limit_lower[d0], model.joint_limit_upper[d0]
    d_dot = jnp.sum(jac * qd, -1)
    lim, _ = penalty_limit(d, d_dot, jnp.where(lo >= 0.0, lo, 0.0), jnp.where(hi >= 0.0, hi, jnp.inf),
                           model.joint_limit_ke[d0], model.joint_limit_kd[d0], enabled=d > 1e-12,
                           look=dt if implicit else 0.0)
    force, k, c = lim
    idx = d0[:, None] + np.arange(6)
    f = jnp.zeros((nd,), dtype).at[idx].add(force[:, None] * jac)
    if not implicit:
        return f, None
    g = k * dt * dt + c * dt
    gain = jnp.where(g > 0.0, jnp.sqrt(jnp.where(g > 0.0, g, 1.0)), 0.0)  # NaN-free gradient at 0
    return f, jnp.zeros((nd,), dtype).at[idx].add(gain[:, None] * jac)


def dyad_mask(model, dof_index: np.ndarray) -> np.ndarray:
    """``(A, D, D)`` static mask of DOF-slot pairs belonging to the same DISTANCE joint.

    Args:
        model: The model.
        dof_index: ``(A, D)`` global DOF of every block slot (``nd`` for padding).
    """
    st = dof_static(model.topology)
    group = np.full(model.joint_dof_count + 1, -1, np.int64)
    for k, d0 in enumerate(st.dist_d0):
        group[d0:d0 + 6] = k
    g = group[dof_index]
    return (g[:, :, None] == g[:, None, :]) & (g[:, :, None] >= 0)
