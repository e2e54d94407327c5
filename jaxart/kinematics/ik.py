"""Inverse kinematics: world body poses and COM twists → generalized coordinates."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.joints import euler_chain, gather_axes
from jaxart.kinematics.masks import articulation_mask
from jaxart.math import (
    inv3,
    matrix_to_euler_xyz,
    quat_rotate_inv,
    quat_to_matrix,
    quat_twist_angle,
    small,
    transform_identity,
    transform_inverse,
    transform_mul,
    transform_point,
)
from jaxart.sim.enums import BodyFlags


def eval_ik(model, state, joint_q=None, joint_qd=None, mask=None, indices=None,
            body_flag_filter: int = BodyFlags.ALL) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Evaluate inverse kinematics (Newton's ``eval_ik``, functional).

    Revolute (and 1-axis D6) angles are ``2·atan2(axis · q_pc.xyz, q_pc.w)`` in (−2π, 2π]; BALL
    returns ``q_p⁻¹ q_c`` without hemisphere flipping; 2/3-axis D6 invert the intrinsic Euler chain
    (any handedness); FREE/DISTANCE velocities are the child-COM twist in the parent-anchor frame.
    Linear coordinates are the exact inverse of :func:`~jaxart.eval_fk` (velocities are relative
    velocities seen from the moving parent anchor).

    Args:
        model: The model.
        state: State holding ``body_q`` and ``body_qd``.
        joint_q: Coordinates to update; ``state.joint_q`` when ``None``.
        joint_qd: Velocities to update; ``state.joint_qd`` when ``None``.
        mask: Optional ``(articulation_count,)`` booleans selecting articulations.
        indices: Optional articulation indices (exclusive with ``mask``).
        body_flag_filter: Only joints whose child body matches these flags are written.

    Returns:
        ``(joint_q, joint_qd)``; entries not selected keep their input values.
    """
    with jax.named_scope("jaxart.eval_ik"):
        art = articulation_mask(model, mask, indices)
        joint_q = state.joint_q if joint_q is None else jnp.asarray(joint_q, state.body_q.dtype)
        joint_qd = state.joint_qd if joint_qd is None else jnp.asarray(joint_qd, state.body_q.dtype)
        q_new, qd_new = ik_all(model, state.body_q, state.body_qd, joint_q, joint_qd)
        q_upd, qd_upd = _update_masks(model, art, body_flag_filter)
        return jnp.where(q_upd, q_new, joint_q), jnp.where(qd_upd, qd_new, joint_qd)


def ik_all(model, body_q, body_qd, joint_q, joint_qd):
    """Coordinates of every tree joint (others copied from the inputs), without masking."""
    sch = model.schedule
    tj = sch.tree_joint.array
    child = model.topology.joint_child.array[tj]
    parent = sch.body_parent.array[child]
    dt = body_q.dtype
    bq = jnp.concatenate([body_q, transform_identity(dt)[None]], 0)
    com_w = transform_point(body_q, model.body_com)
    origin = jnp.concatenate([body_qd[:, :3] - jnp.cross(body_qd[:, 3:], com_w), body_qd[:, 3:]], -1)
    origin = jnp.concatenate([origin, jnp.zeros((1, 6), dt)], 0)
    x_wpa = transform_mul(bq[parent], model.joint_X_p[tj])
    x_wca = transform_mul(bq[child], model.joint_X_c[tj])
    x_j = transform_mul(transform_inverse(x_wpa), x_wca)
    rel = origin[child] - origin[parent]
    w_rel = rel[:, 3:]
    ref = jnp.where(jnp.asarray(sch.is_com_ref.array)[:, None], com_w[child], x_wca[:, :3])
    qp = x_wpa[:, 3:]
    v_p = quat_rotate_inv(qp, rel[:, :3] + jnp.cross(w_rel, ref))
    w_p = quat_rotate_inv(qp, w_rel)
    lin_axes, ang_axes = gather_axes(model)
    pad = jnp.asarray(np.arange(3)[None, :] >= sch.n_lin.array[:, None], dt)
    gram = small.matmul(lin_axes, jnp.swapaxes(lin_axes, -1, -2)) + pad[:, :, None] * jnp.eye(3, dtype=dt)
    g_inv = inv3(gram)
    q_lin = small.matvec(g_inv, small.matvec(lin_axes, x_j[:, :3]))
    qd_lin = small.matvec(g_inv, small.matvec(lin_axes, v_p))
    q_ang, qd_ang = _angular(sch, ang_axes, x_j[:, 3:], w_p)

    q_ext = jnp.concatenate([joint_q, jnp.zeros((2,), dt)])
    q_ext = q_ext.at[sch.lin_q.array].set(q_lin).at[sch.ang_q.array].set(q_ang)
    q_ext = q_ext.at[sch.quat_q.array].set(x_j[:, 3:])
    qd_ext = jnp.concatenate([joint_qd, jnp.zeros((1,), dt)])
    is_quat = jnp.asarray(sch.is_quat.array)[:, None]
    qd_ext = qd_ext.at[sch.lin_qd.array].set(qd_lin)
    qd_ext = qd_ext.at[sch.ang_qd.array].set(jnp.where(is_quat, w_p, qd_ang))
    return q_ext[: model.joint_coord_count], qd_ext[: model.joint_dof_count]


def _angular(sch, axes, q_rel, w_p):
    """Angular coordinates/velocities of REVOLUTE/D6 joints (1, 2 or 3 axes)."""
    n_ang = sch.n_ang.array
    dt = axes.dtype
    eye = jnp.broadcast_to(jnp.eye(3, dtype=dt), axes.shape)
    a0, a1 = axes[:, 0], axes[:, 1]
    two = jnp.asarray(n_ang == 2)[:, None, None]
    three = jnp.asarray(n_ang == 3)[:, None, None]
    # 2 axes: decompose in (a0, a0 x a1, a1) with the middle (locked) angle ~ 0 (Newton)
    basis = jnp.where(two, jnp.stack([a0, jnp.cross(a0, a1), a1], 1), jnp.where(three, axes, eye))
    s = jnp.sign(small.dot_last(jnp.cross(basis[:, 0], basis[:, 1]), basis[:, 2]))
    s = jnp.where(s == 0.0, 1.0, s)
    b_rh = jnp.stack([basis[:, 0], basis[:, 1], jnp.cross(basis[:, 0], basis[:, 1])], axis=-1)  # columns
    m = small.matmul(small.matmul(jnp.swapaxes(b_rh, -1, -2), quat_to_matrix(q_rel)), b_rh)
    e = matrix_to_euler_xyz(m)
    angles = jnp.stack([e[:, 0], e[:, 1], s * e[:, 2]], -1)
    _, transported = euler_chain(basis, angles)
    vel = small.matvec(inv3(jnp.swapaxes(transported, -1, -2)), w_p)
    one_q = quat_twist_angle(a0, q_rel)
    one_qd = small.dot_last(a0, w_p)
    n1 = jnp.asarray(n_ang == 1)[:, None]
    pick = jnp.where(jnp.asarray(n_ang == 2)[:, None], jnp.array([0, 2, 1]), jnp.array([0, 1, 2]))
    angles = jnp.take_along_axis(angles, pick, -1)
    vel = jnp.take_along_axis(vel, pick, -1)
    z = jnp.zeros((len(n_ang), 2), dt)
    q = jnp.where(n1, jnp.concatenate([one_q[:, None], z], -1), angles)
    qd = jnp.where(n1, jnp.concatenate([one_qd[:, None], z], -1), vel)
    return q, qd


def _update_masks(model, art, body_flag_filter):
    """Per-coordinate and per-DOF write masks."""
    topo = model.topology
    flags = topo.body_flags.array
    ok_joint = (topo.joint_articulation.array >= 0) & (
        (flags[topo.joint_child.array] & int(BodyFlags(int(body_flag_filter)))) != 0)
    q_start, qd_start = topo.joint_q_start.array, topo.joint_qd_start.array
    coord_joint = np.repeat(np.arange(topo.joint_count), np.diff(q_start))
    dof_joint = np.repeat(np.arange(topo.joint_count), np.diff(qd_start))
    q_m = jnp.asarray(ok_joint[coord_joint])
    qd_m = jnp.asarray(ok_joint[dof_joint])
    if art is not None:
        ja = np.maximum(topo.joint_articulation.array, 0)
        q_m = q_m & art[ja[coord_joint]]
        qd_m = qd_m & art[ja[dof_joint]]
    return q_m, qd_m
