"""Motion subspaces, body inertias and velocity-product terms in world-origin Plücker coordinates.

Twists are ``(v_at_world_origin, ω)`` and wrenches ``(f, τ about the world origin)``, so the twist
of a body is the plain sum of the DOF columns ``S_d q̇_d`` of its ancestors. Column conventions:

* linear DOF with world direction ``a``: ``S = (a, 0)``;
* angular DOF with world axis ``w`` through point ``r`` (child anchor, or child COM for
  FREE/DISTANCE): ``S = (r × w, w)`` because the origin velocity of a rotation about ``r`` is
  ``ω × (0 − r) = r × ω``.

``Ṡ q̇`` (the velocity-product acceleration): each column is fixed in the frame of the motion that
carries it, so ``Ṡ_d = V_carrier ×ₘ S_d`` where the carrier is the parent body plus the DOFs of the
same joint applied before ``d`` (D6 Euler chains, translation before rotation; FREE angular axes
through the moving COM are carried by the linear DOFs). :func:`coord_rates` gives the coordinate
rates ``q̇_coord(q, q̇)`` (quaternions ``½ [ω, 0] ⊗ q``; FREE positions ``v − ω × (R r_com)``),
with which the tests check ``Ṡ`` against a JVP of :func:`dof_columns`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.integrate import coord_terms
from jaxart.dynamics.layout import dynamics_layout
from jaxart.kinematics.fk import fk_frames_soa
from jaxart.math import (
    cross_motion,
    quat_mul,
    quat_rotate,
    quat_to_matrix,
    small,
    soa,
    spatial_inertia_world,
)
from jaxart.math.static_index import take_rows
from jaxart.sim.gravity import gravity_mass


class BlockTerms(NamedTuple):
    """Per-articulation block quantities (``A`` articulations, ``L`` links, ``D`` DOFs).

    Attributes:
        body_q: ``(n, 7)`` world body poses from ``joint_q``.
        com: ``(n, 3)`` world COM positions.
        cols: ``(nd + 1, 6)`` world-origin motion column of every DOF (last row zero).
        S: ``(A, D, 6)`` block columns.
        Sdot_qd: ``(A, D, 6)`` ``Ṡ_d q̇_d``.
        qd: ``(A, D)`` block velocities.
        inertia: ``(A, L, 6, 6)`` spatial inertias about the world origin.
        link_com: ``(A, L, 3)`` world COM of each link.
        link_mass: ``(A, L)`` masses [kg].
        link_gravity_mass: ``(A, L)`` masses gravity acts on after gravity compensation [kg]
            (:func:`jaxart.sim.gravity.gravity_mass`).
    """

    body_q: jnp.ndarray
    com: jnp.ndarray
    cols: jnp.ndarray
    S: jnp.ndarray
    Sdot_qd: jnp.ndarray
    qd: jnp.ndarray
    inertia: jnp.ndarray
    link_com: jnp.ndarray
    link_mass: jnp.ndarray
    link_gravity_mass: jnp.ndarray


def dof_columns(model, joint_q: jnp.ndarray, body_q_base: jnp.ndarray):
    """World-origin motion columns of all DOFs and the world body poses.

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        body_q_base: ``(n, 7)`` poses of bodies without a tree joint (static roots).

    Returns:
        ``(cols (nd + 1, 6), (body_q (n, 7), com (n, 3)))``.
    """
    sch = model.schedule
    n, nd = model.body_count, model.joint_dof_count
    dt = joint_q.dtype
    fr = fk_frames_soa(model, joint_q, jnp.zeros((nd,), dt), body_q_base)
    rot = fr.x_wpa[1]
    zero = jnp.zeros_like(fr.ref[0])
    lin = [soa.qrot(rot, a) for a in fr.motion.lin_axes]
    ang = [soa.qrot(rot, a) for a in fr.motion.ang_axes]
    s_lin = [(*a, zero, zero, zero) for a in lin]  # 6 components per axis slot, (t,) each
    s_ang = [(*soa.cross(fr.ref, a), *a) for a in ang]
    rows = dof_rows(sch, nd)

    def column(c: int) -> jnp.ndarray:  # component c of every DOF column, ordered like lin_qd/ang_qd.ravel()
        flat = [jnp.stack([s[k][c] for k in range(3)], axis=-1).reshape(*zero.shape[:-1], -1) for s in (s_lin, s_ang)]
        return jnp.concatenate([*flat, jnp.zeros((*zero.shape[:-1], 1), dt)], axis=-1)[..., rows]

    cols = jnp.stack([column(c) for c in range(6)], axis=-1)
    body_q = soa.from_transform(soa.take(fr.world, slice(0, n)))
    return cols, (body_q, soa.stack(*fr.com_w))


def dof_rows(sch, nd: int) -> np.ndarray:
    """Static ``(nd + 1,)`` row of each DOF in ``concat(lin axes (t·3), ang axes (t·3), zero)``.

    A gather instead of scattering the axis columns into place: XLA:CPU scatters are serial loops.
    """
    lin, ang = sch.lin_qd.array.ravel(), sch.ang_qd.array.ravel()
    rows = np.full(nd + 1, len(lin) + len(ang), dtype=np.int32)
    for offset, idx in ((0, lin), (len(lin), ang)):
        valid = idx < nd
        rows[idx[valid]] = offset + np.flatnonzero(valid)
    return rows


def coord_rates(model, joint_q: jnp.ndarray, joint_qd: jnp.ndarray) -> jnp.ndarray:
    """Time derivative of ``joint_q`` for velocities ``joint_qd`` (all joint types).

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities.

    Returns:
        ``(joint_coord_count,)`` coordinate rates (zero for non-tree joints).
    """
    sch = model.schedule
    nq, dt = model.joint_coord_count, joint_q.dtype
    _, qdl, qda, quat, r_com = coord_terms(model, joint_q, joint_qd)
    w = qda  # quaternion joints: angular velocity in the parent-anchor frame (identity axes)
    v_free = qdl - jnp.cross(w, quat_rotate(quat, r_com))
    lin_rate = jnp.where(jnp.asarray(sch.is_com_ref.array)[:, None], v_free, qdl)
    w4 = jnp.concatenate([w, jnp.zeros_like(w[:, :1])], axis=-1)
    quat_rate = 0.5 * quat_mul(w4, quat)
    out = jnp.zeros((nq + 2,), dt)
    out = out.at[sch.lin_q.array].set(lin_rate).at[sch.ang_q.array].set(qda)
    is_quat = jnp.asarray(sch.is_quat.array)[:, None]
    out = out.at[sch.quat_q.array].add(jnp.where(is_quat, quat_rate, 0.0))
    return out[:nq]


def block_terms(model, joint_q: jnp.ndarray, joint_qd: jnp.ndarray, body_q_base: jnp.ndarray) -> BlockTerms:
    """Evaluate the per-articulation block quantities used by every dynamics function.

    Args:
        model: The model.
        joint_q: Coordinates.
        joint_qd: Velocities.
        body_q_base: ``(n, 7)`` poses of bodies without a tree joint.

    Returns:
        The :class:`BlockTerms`.
    """
    lay = dynamics_layout(model)
    dt = joint_q.dtype
    cols, (body_q, com) = dof_columns(model, joint_q, body_q_base)
    qd_ext = jnp.concatenate([joint_qd, jnp.zeros((1,), dt)])
    qd = take_rows(qd_ext, lay.dof_index)
    s_blk = take_rows(cols, lay.dof_index)
    vel = jnp.einsum("ald,adk->alk", jnp.asarray(lay.link_dof, dt), s_blk * small.spread(qd[..., None], 6))
    # Ṡ_d q̇_d = (V_child − Σ_rest S_m q̇_m) ×ₘ S_d q̇_d  (see DynamicsLayout.sdot_rest)
    v_child = jnp.take_along_axis(vel, jnp.asarray(lay.dof_link)[:, :, None], axis=1)
    qd_rest = take_rows(qd_ext, lay.sdot_rest)[..., None]
    rest = small.sum_axis(take_rows(cols, lay.sdot_rest) * small.spread(qd_rest, 6), -2)
    carrier = v_child - take_rows(jnp.concatenate([rest, jnp.zeros((1, 6), dt)]), lay.dof_index)
    rot = quat_to_matrix(body_q[:, 3:])
    inertia_w = small.matmul(small.matmul(rot, model.body_inertia), jnp.swapaxes(rot, -1, -2))
    spatial = spatial_inertia_world(model.body_mass, com, inertia_w)
    spatial = jnp.concatenate([spatial, jnp.zeros((1, 6, 6), dt)], axis=0)
    com_ext = jnp.concatenate([com, jnp.zeros((1, 3), dt)], axis=0)
    mass_ext = jnp.concatenate([model.body_mass, jnp.zeros((1,), dt)], axis=0)
    gc_ext = jnp.concatenate([model.body_gravcomp.astype(dt), jnp.zeros((1,), dt)], axis=0)
    return BlockTerms(
        body_q=body_q,
        com=com,
        cols=cols,
        S=s_blk,
        Sdot_qd=cross_motion(carrier, s_blk) * small.spread(qd[..., None], 6),
        qd=qd,
        inertia=take_rows(spatial, lay.link_body),
        link_com=take_rows(com_ext, lay.link_body),
        link_mass=take_rows(mass_ext, lay.link_body),
        link_gravity_mass=take_rows(gravity_mass(mass_ext, gc_ext), lay.link_body),
    )


def link_twists(terms: BlockTerms, link_dof) -> jnp.ndarray:
    """``(A, L, 6)`` world-origin twists of the links (``Σ`` of ancestor columns times ``q̇``)."""
    scaled = terms.S * small.spread(terms.qd[..., None], 6)
    return jnp.einsum("ald,adk->alk", jnp.asarray(link_dof, terms.S.dtype), scaled)


def origin_wrench(wrench_com: jnp.ndarray, com: jnp.ndarray) -> jnp.ndarray:
    """Move wrenches ``(f, τ about the COM)`` to the world origin: ``(f, τ + c × f)``."""
    f = wrench_com[..., :3]
    return jnp.concatenate([f, wrench_com[..., 3:] + jnp.cross(com, f)], axis=-1)
