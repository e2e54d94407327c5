"""Vectorised joint transforms and joint twists for every tree joint at once.

All joint types share one fixed-width block (≤ 3 linear + ≤ 3 angular axes, plus a quaternion
branch for BALL/FREE/DISTANCE) selected by static masks, so program size does not grow with the
number of distinct joint signatures. The core works in structure-of-arrays form
(:mod:`jaxart.math.soa`); :func:`joint_motion` returns the usual stacked arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxart.math import soa


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


class JointMotionSoA(NamedTuple):
    """:class:`JointMotion` in SoA form: transforms ``(p, q)``, vectors and lists of 3 axes."""

    X_j: tuple
    v: tuple
    w: tuple
    lin_axes: tuple
    ang_axes: tuple


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
        A :class:`JointMotion` (stacked arrays).
    """
    m = joint_motion_soa(model, joint_q, joint_qd)
    axes = lambda ax: jnp.stack([soa.stack(*a) for a in ax], axis=-2)  # noqa: E731
    return JointMotion(soa.from_transform(m.X_j), soa.stack(*m.v), soa.stack(*m.w), axes(m.lin_axes),
                       axes(m.ang_axes))


def joint_motion_soa(model, joint_q: jnp.ndarray, joint_qd: jnp.ndarray) -> JointMotionSoA:
    """SoA core of :func:`joint_motion` (each component has the tree-joint axis last)."""
    sch = model.schedule
    dt = joint_q.dtype
    q_ext = jnp.concatenate([joint_q, jnp.array([0.0, 1.0], dt)])
    qd_ext = jnp.concatenate([joint_qd, jnp.zeros((1,), joint_qd.dtype)])
    axis_ext = jnp.concatenate([model.joint_axis, jnp.zeros((1, 3), model.joint_axis.dtype)], axis=0)
    col = lambda idx, k: idx.array[:, k]  # noqa: E731
    lin = [soa.unstack(axis_ext[col(sch.lin_qd, k)]) for k in range(3)]
    ang = [soa.unstack(axis_ext[col(sch.ang_qd, k)]) for k in range(3)]
    ql = [q_ext[..., col(sch.lin_q, k)] for k in range(3)]
    qa = [q_ext[..., col(sch.ang_q, k)] for k in range(3)]
    qdl = [qd_ext[..., col(sch.lin_qd, k)] for k in range(3)]
    qda = [qd_ext[..., col(sch.ang_qd, k)] for k in range(3)]
    pos = soa.add(soa.add(soa.scale(lin[0], ql[0]), soa.scale(lin[1], ql[1])), soa.scale(lin[2], ql[2]))
    rot_e, transported = euler_chain_soa(ang, qa)
    is_quat = jnp.asarray(sch.is_quat.array)
    quat = soa.qnormalize(tuple(q_ext[..., col(sch.quat_q, i)] for i in range(4)))
    rot = soa.where(is_quat, quat, rot_e)
    axes = [ang[0]] + [soa.where(is_quat, ang[k], transported[k]) for k in (1, 2)]
    w = soa.add(soa.add(soa.scale(axes[0], qda[0]), soa.scale(axes[1], qda[1])), soa.scale(axes[2], qda[2]))
    v = soa.add(soa.add(soa.scale(lin[0], qdl[0]), soa.scale(lin[1], qdl[1])), soa.scale(lin[2], qdl[2]))
    return JointMotionSoA((pos, rot), v, w, tuple(lin), tuple(axes))


def euler_chain_soa(axes, angles) -> tuple[tuple, list]:
    """Intrinsic rotation ``R(a0,q0) R(a1,q1) R(a2,q2)`` and its transported axes (SoA).

    Args:
        axes: Three SoA axes (zero axes contribute the identity).
        angles: Three angle arrays [rad].

    Returns:
        ``(quaternion, [w0, w1, w2])`` where ``w_k`` is axis k after the rotations before it.
    """
    r0 = soa.qfrom_axis_angle(axes[0], angles[0])
    r1 = soa.qfrom_axis_angle(axes[1], angles[1])
    r2 = soa.qfrom_axis_angle(axes[2], angles[2])
    r01 = soa.qmul(r0, r1)
    return soa.qmul(r01, r2), [axes[0], soa.qrot(r0, axes[1]), soa.qrot(r01, axes[2])]


def euler_chain(axes: jnp.ndarray, angles: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Stacked-array version of :func:`euler_chain_soa`.

    Args:
        axes: ``(..., 3, 3)`` axes as rows.
        angles: ``(..., 3)`` angles [rad].

    Returns:
        ``(quaternion (..., 4), transported axes (..., 3, 3))``.
    """
    ax = [soa.unstack(axes[..., k, :]) for k in range(3)]
    rot, w = euler_chain_soa(ax, [angles[..., k] for k in range(3)])
    return soa.stack(*rot), jnp.stack([soa.stack(*a) for a in w], axis=-2)
