"""Joint-space length Jacobians of the tendons, ``L̇ = J q̇``, and their velocity products ``J̇q̇``.

Used by the mass matrix and inverse/forward dynamics (tendon armature ``a JᵀJ`` and ``−a J̇q̇``) and by
SolverFeatherstone's implicit tendon rows (:mod:`jaxart.dynamics.engine.tendon_terms`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.layout import DynamicsLayout, body_slot_masks, dynamics_layout
from jaxart.dynamics.motion import dof_columns
from jaxart.dynamics.tendon_forces import fixed_entries, tendon_points

__all__ = ["tendon_jacobian", "tendon_jacobian_rate"]


@functools.lru_cache(maxsize=32)
def _dof_body_masks(lay: DynamicsLayout, body_count: int, dof_count: int) -> np.ndarray:
    """``(n + 1, nd)`` static masks: DOF ``d`` moves body ``b`` (last row: the world, all zero)."""
    slots = body_slot_masks(lay, body_count)  # (n + 1, A·D)
    out = np.zeros((body_count + 1, dof_count + 1), bool)
    out[:, lay.dof_index.reshape(-1)] = slots  # padding slots land in the sentinel column nd
    return out[:, :dof_count]


def tendon_jacobian(model, joint_q: jnp.ndarray, body_q_base: jnp.ndarray) -> jnp.ndarray:
    """``(tendon_count, joint_dof_count)`` length Jacobians ``J = ∂L̇/∂q̇`` (MuJoCo's ``ten_J``).

    FIXED tendons: the coefficients at their joints' DOFs. SPATIAL tendons: ``Σ_e g_eᵀ J_{p_e} + r_eᵀ J_{ω_e}``
    over the path entries, with ``g_e``, ``r_e`` the entries' linear and angular length gradients
    (:func:`~jaxart.dynamics.tendon_path.spatial_gradients`; ``g = ±u`` at the ends of a straight segment) and
    ``J_p`` / ``J_ω`` the world point / angular Jacobians of the entries' bodies (columns ``S_lin + S_ang × p`` and
    ``S_ang`` of the DOFs that move the body).

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        body_q_base: ``(body_count, 7)`` poses; only bodies without a tree joint (static roots) are read.

    Returns:
        The Jacobian rows (FREE/DISTANCE columns in the ``joint_qd`` convention: child-COM velocity and ω
        in the parent-anchor frame).
    """
    from jaxart.dynamics.tendon_path import path_layout, spatial_gradients

    t = model.tendon
    nd, dtype = model.joint_dof_count, model.tendon_stiffness.dtype
    jac = jnp.zeros((t.tendon_count, nd), dtype)
    _, di, ten = fixed_entries(model)
    if ten.size:
        jac = jac.at[ten, di].add(model.tendon_joint_coef)
    if not np.asarray(t.tendon_attachment_body).size:
        return jac
    cols, (body_q, _) = dof_columns(model, joint_q.astype(dtype), body_q_base.astype(dtype))
    p, _, _, axis, _ = tendon_points(model, body_q, jnp.zeros((model.body_count, 6), dtype))
    _, g_lin, g_rot = spatial_gradients(model, p, axis)
    bodies = np.asarray(t.tendon_attachment_body)
    moves = _dof_body_masks(dynamics_layout(model), model.body_count, nd)[np.where(bodies < 0, model.body_count,
                                                                                   bodies)]
    c = cols[:nd]
    m = jnp.asarray(moves, dtype)[:, :, None]
    point_cols = (c[None, :, :3] + jnp.cross(c[None, :, 3:], p[:, None, :])) * m
    rows = jnp.einsum("ek,enk->en", g_lin, point_cols) + jnp.einsum("ek,enk->en", g_rot, c[None, :, 3:] * m)
    return jac.at[path_layout(t).entry_tendon].add(rows)


def tendon_jacobian_rate(model, joint_q: jnp.ndarray, joint_qd: jnp.ndarray, body_q_base: jnp.ndarray):
    """``(J, J̇q̇)``: the length Jacobians (:func:`tendon_jacobian`) and the tendons' velocity-product
    accelerations ``J̇q̇ (nten,)`` (``L̈`` at ``q̈ = 0``; one forward-mode derivative of ``J`` along the coordinate
    rates :func:`~jaxart.dynamics.motion.coord_rates`). Zero without spatial tendons (constant fixed rows)."""
    from jaxart.dynamics.motion import coord_rates

    if not np.asarray(model.tendon.tendon_attachment_body).size:  # static: fixed tendons only
        jac = tendon_jacobian(model, joint_q, body_q_base)
        return jac, jnp.zeros((jac.shape[0],), jac.dtype)
    q_dot = coord_rates(model, joint_q, joint_qd)
    jac, jac_dot = jax.jvp(lambda q: tendon_jacobian(model, q, body_q_base), (joint_q,), (q_dot,))
    return jac, jac_dot @ joint_qd.astype(jac.dtype)
