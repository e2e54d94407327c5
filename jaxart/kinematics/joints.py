"""Vectorised joint transforms and joint twists for every tree joint at once.

All joint types share one fixed-width block (≤ 3 linear + ≤ 3 angular axes, plus a quaternion
branch for BALL/FREE/DISTANCE) selected by static masks, so program size does not grow with the
number of distinct joint signatures.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxart.math import make_transform, quat_from_axis_angle, quat_mul, quat_normalize, quat_rotate


class JointMotion(NamedTuple):
    """Per tree joint (ordered as ``schedule.tree_joint``), in the parent-anchor frame.

    Attributes:
        X_j: ``(t, 7)`` joint transform parent anchor → child anchor.
        v: ``(t, 3)`` linear joint velocity (child anchor origin, or child COM for FREE/DISTANCE).
        w: ``(t, 3)`` angular joint velocity.
        lin_axes: ``(t, 3, 3)`` linear DOF axes (rows; zero rows for absent DOFs).
        ang_axes: ``(t, 3, 3)`` angular DOF axes transported through the Euler chain (rows).
    """

    X_j: jnp.ndarray
    v: jnp.ndarray
    w: jnp.ndarray
    lin_axes: jnp.ndarray
    ang_axes: jnp.ndarray


def gather_axes(model) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Authored ``(t, 3, 3)`` linear and angular axes of the tree joints (zero rows = no DOF)."""
    sch = model.schedule
    axis_ext = jnp.concatenate([model.joint_axis, jnp.zeros((1, 3), model.joint_axis.dtype)], axis=0)
    return axis_ext[sch.lin_qd.array], axis_ext[sch.ang_qd.array]


def joint_motion(model, joint_q: jnp.ndarray, joint_qd: jnp.ndarray) -> JointMotion:
    """Evaluate every tree joint's transform and twist from generalized coordinates.

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities.

    Returns:
        A :class:`JointMotion`.
    """
    sch = model.schedule
    dt = joint_q.dtype
    q_ext = jnp.concatenate([joint_q, jnp.array([0.0, 1.0], dt)])
    qd_ext = jnp.concatenate([joint_qd, jnp.zeros((1,), joint_qd.dtype)])
    lin_axes, ang_axes = gather_axes(model)
    ql, qa = q_ext[sch.lin_q.array], q_ext[sch.ang_q.array]
    qdl, qda = qd_ext[sch.lin_qd.array], qd_ext[sch.ang_qd.array]
    pos = jnp.sum(ql[..., None] * lin_axes, axis=-2)
    rot_e, transported = euler_chain(ang_axes, qa)
    is_quat = jnp.asarray(sch.is_quat.array)[:, None]
    rot = jnp.where(is_quat, quat_normalize(q_ext[sch.quat_q.array]), rot_e)
    axes = jnp.where(is_quat[..., None], ang_axes, transported)
    w = jnp.sum(qda[..., None] * axes, axis=-2)
    v = jnp.sum(qdl[..., None] * lin_axes, axis=-2)
    return JointMotion(make_transform(pos, rot), v, w, lin_axes, axes)


def euler_chain(axes: jnp.ndarray, angles: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Intrinsic rotation ``R(a0,q0) R(a1,q1) R(a2,q2)`` and its transported axes.

    Args:
        axes: ``(..., 3, 3)`` axes as rows (zero rows contribute identity).
        angles: ``(..., 3)`` angles [rad].

    Returns:
        ``(quaternion (..., 4), transported axes (..., 3, 3))`` where row k is the world-of-parent
        direction of axis k after the rotations before it (the angular Jacobian columns).
    """
    r0 = quat_from_axis_angle(axes[..., 0, :], angles[..., 0])
    r1 = quat_from_axis_angle(axes[..., 1, :], angles[..., 1])
    r2 = quat_from_axis_angle(axes[..., 2, :], angles[..., 2])
    r01 = quat_mul(r0, r1)
    w1 = quat_rotate(r0, axes[..., 1, :])
    w2 = quat_rotate(r01, axes[..., 2, :])
    return quat_mul(r01, r2), jnp.stack([axes[..., 0, :], w1, w2], axis=-2)
