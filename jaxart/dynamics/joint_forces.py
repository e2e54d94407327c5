"""Per-DOF joint forces of the reduced-coordinate solver: drives, limits, springs, damping, friction.

Every force is split as ``f(q_{n+1}, q̇_{n+1}) ≈ f0 − (k dt² + c dt) q̈`` for semi-implicit Euler
(``q̇_{n+1} = q̇ + dt q̈``, ``q_{n+1} = q + dt q̇_{n+1}``), so the solver folds ``k dt² + c dt``
into the mass-matrix diagonal (implicit, PhysX-style) or uses ``k = c = 0`` (explicit, Newton's
closed form). Positions per DOF: scalar coordinates for PRISMATIC/REVOLUTE/D6; for BALL the
rotation vector of the joint quaternion (parent-anchor frame), with drive errors
``log(q_target ⊗ q⁻¹)``; FREE/DISTANCE DOFs take only damping and friction.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.integrate import quat_log
from jaxart.math import quat_conjugate, quat_mul, quat_normalize
from jaxart.sim.enums import JointTargetMode, JointType


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
    qs, ds, dims = topo.joint_q_start.array, topo.joint_qd_start.array, topo.joint_dof_dim.array
    for j in range(topo.joint_count):
        jt = JointType(int(topo.joint_type.array[j]))
        d0, n = ds[j], ds[j + 1] - ds[j]
        if jt == JointType.BALL:
            is_ball[d0:d0 + 3] = True
            ball_quat[d0:d0 + 3] = qs[j] + np.arange(4)
            ball_k[d0:d0 + 3] = np.arange(3)
        elif jt not in (JointType.FREE, JointType.DISTANCE):
            coord[d0:d0 + n] = qs[j] + np.arange(n)
            is_scalar[d0:d0 + n] = True
            is_ang[d0 + dims[j, 0]:d0 + n] = True
    mode = topo.joint_target_mode.array
    pos_modes = (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY)
    vel_modes = (*pos_modes, JointTargetMode.VELOCITY)
    return DofStatic(coord, is_scalar, is_ang, is_ball, ball_quat, ball_k,
                     np.isin(mode, [int(m) for m in pos_modes]), np.isin(mode, [int(m) for m in vel_modes]))


def dof_positions(model, joint_q: jnp.ndarray, target_q: jnp.ndarray):
    """Per-DOF positions and drive errors.

    Returns:
        ``(pos (nd,), drive_error (nd,))``; BALL DOFs use rotation vectors, FREE DOFs zero.
    """
    st = dof_static(model.topology)
    dt = joint_q.dtype
    ext = jnp.array([0.0, 1.0], dt)
    q_ext = jnp.concatenate([joint_q, ext])
    t_ext = jnp.concatenate([jnp.asarray(target_q, dt), ext])
    pos = jnp.where(st.is_scalar, q_ext[st.coord], 0.0)
    err = jnp.where(st.is_scalar, t_ext[st.coord] - q_ext[st.coord], 0.0)
    if not st.is_ball.any():  # static: no quaternion branch in the program
        return pos, err
    quat = quat_normalize(q_ext[st.ball_quat])
    quat_t = quat_normalize(t_ext[st.ball_quat])
    k = st.ball_k[:, None]
    rot = jnp.take_along_axis(quat_log(quat), k, axis=-1)[:, 0]
    rot_err = jnp.take_along_axis(quat_log(quat_mul(quat_t, quat_conjugate(quat))), k, axis=-1)[:, 0]
    return jnp.where(st.is_ball, rot, pos), jnp.where(st.is_ball, rot_err, err)


def joint_forces(model, control, joint_q, joint_qd, dt, *, implicit: bool, friction_eps: float):
    """Joint-space forces and implicit diagonal terms.

    Args:
        model: The model.
        control: Control (targets, ``joint_act``).
        joint_q: Coordinates.
        joint_qd: Velocities.
        dt: Time step.
        implicit: Fold stiffness/damping into the matrix.
        friction_eps: Velocity scale of the smooth Coulomb friction ``−μ tanh(q̇/ε)``.

    Returns:
        ``(f0 (nd,), diag (nd,))``: force at the current state (with the implicit position
        look-ahead) and ``k dt² + c dt`` to add to the mass-matrix diagonal.
    """
    st = dof_static(model.topology)
    v = joint_qd
    pos, err = dof_positions(model, joint_q, control.joint_target_q)
    lo, hi = model.joint_limit_lower, model.joint_limit_upper
    limited = (st.is_scalar | st.is_ball) & ((pos < lo) | (pos > hi))
    # FREE/DISTANCE DOFs carry no position: drives, springs and limits are rejected by the solver
    e_lim = jnp.where(pos < lo, lo - pos, hi - pos)
    drivable = st.is_scalar | st.is_ball
    ke = jnp.where(limited | ~drivable, 0.0, model.joint_target_ke * st.use_ke)
    kd = jnp.where(limited | ~drivable, 0.0, model.joint_target_kd * st.use_kd)
    v_t = jnp.where(st.use_kd, control.joint_target_qd, 0.0)
    wrapped = pos - 2.0 * jnp.pi * jnp.floor((pos + jnp.pi) / (2.0 * jnp.pi))
    spring_pos = jnp.where(st.is_angular_scalar, wrapped, pos)
    e_rest = jnp.where(st.is_scalar | st.is_ball, model.joint_rest_q - spring_pos, 0.0)
    k_lim = jnp.where(limited, model.joint_limit_ke, 0.0)
    c_lim = jnp.where(limited, model.joint_limit_kd, 0.0)
    stiff = jnp.where(st.is_scalar | st.is_ball, model.joint_stiffness, 0.0)
    th = jnp.tanh(v / friction_eps)
    fric = -model.joint_friction * th
    c_fric = model.joint_friction / friction_eps * (1.0 - th * th)
    look = dt if implicit else 0.0
    drive = ke * (err - look * v) + kd * (v_t - v) + control.joint_act
    limit = model.joint_effort_limit
    saturated = jnp.abs(drive) > limit
    drive = jnp.clip(drive, -limit, limit)
    f0 = (drive + stiff * (e_rest - look * v) - model.joint_damping * v + k_lim * (e_lim - look * v) - c_lim * v
          + fric)
    if implicit:
        k = jnp.where(saturated, 0.0, ke) + stiff + k_lim
        c = jnp.where(saturated, 0.0, kd) + model.joint_damping + c_lim + c_fric
    else:
        k = jnp.zeros_like(v)
        c = c_fric
    return f0, k * dt * dt + c * dt
