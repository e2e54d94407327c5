"""Joint-space terms of the implicit contact law (:mod:`jaxart.contact.implicit`) for the dense solve.

The DOF slots of all articulation blocks are flattened into one world vector of ``N = A·D`` slots, so a
contact between bodies of two articulations (a robot and a free box, two robots) couples their blocks.
Per contact row ``c`` with point ``p``, the ``(3, N)`` Jacobian of the relative point velocity is
``J_c = J_B(p) − J_A(p)``, where column ``k`` of ``J_b(p)`` is ``S_k,lin + S_k,ang × p`` if slot ``k``
moves body ``b`` (world-origin Plücker columns, :mod:`jaxart.dynamics.motion`) and zero otherwise
(static bodies −1 have no columns). With ``W_c = α nnᵀ + β (I − nnᵀ)`` the step solves

``(H + diag(e) + dt·Σ_c J_cᵀ W_c J_c) q̈ = τ − C q̇ − g + Jᵀ f_ext + Σ_c J_cᵀ (f0_c − W_c J_c q̇)``,

i.e. the contact force ``f0 − W u'`` at the end-of-step point velocity ``u' = J (q̇ + dt q̈)``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.contact.implicit import ImplicitContactRows
from jaxart.dynamics.layout import DynamicsLayout, body_slot_masks
from jaxart.dynamics.motion import BlockTerms
from jaxart.math import small

__all__ = ["contact_apply", "contact_matrix", "contact_rhs", "row_jacobians"]


def _masks(lay: DynamicsLayout, body_count: int, body, dtype) -> jnp.ndarray:
    table = body_slot_masks(lay, body_count)
    if isinstance(body, np.ndarray):  # static rows: a numpy gather, a constant in the program
        return jnp.asarray(table[np.where(body < 0, body_count, body)], dtype)
    return jnp.asarray(table, dtype)[jnp.where(body < 0, body_count, body)]


def row_jacobians(lay: DynamicsLayout, terms: BlockTerms, rows: ImplicitContactRows) -> jnp.ndarray:
    """``(c, 3, N)`` Jacobians of the rows' relative point velocities over the flat DOF slots.

    Args:
        lay: Dynamics layout.
        terms: Block terms (their columns ``S``).
        rows: Contact rows.

    Returns:
        ``J_c`` with ``u_c = J_c q̇`` (flat block velocities).
    """
    dtype = terms.S.dtype
    n = terms.body_q.shape[0]
    cols = terms.S.reshape(-1, 6)
    p = rows.point.astype(dtype)
    moving = _masks(lay, n, rows.body_b, dtype) - _masks(lay, n, rows.body_a, dtype)  # (c, N)
    point_cols = cols[None, :, :3] + jnp.cross(cols[None, :, 3:], p[:, None, :])  # (c, N, 3)
    return jnp.swapaxes(point_cols * moving[:, :, None], 1, 2)


def _gamma(rows: ImplicitContactRows) -> jnp.ndarray:
    return rows.alpha - rows.beta


def contact_apply(jac: jnp.ndarray, rows: ImplicitContactRows, x: jnp.ndarray) -> jnp.ndarray:
    """``dt·Σ_c J_cᵀ W_c J_c x`` for a flat ``(N,)`` vector ``x`` (no matrix formed)."""
    u = jnp.einsum("ckn,n->ck", jac, x)
    return rows.dt * jnp.einsum("ckn,ck->n", jac, _weighted(rows, u))


def _weighted(rows: ImplicitContactRows, u: jnp.ndarray) -> jnp.ndarray:
    """``W u`` per row: ``β u + (α − β)(n·u) n``."""
    return rows.beta[:, None] * u + (_gamma(rows) * small.dot_last(rows.normal, u))[:, None] * rows.normal


def contact_matrix(jac: jnp.ndarray, rows: ImplicitContactRows) -> jnp.ndarray:
    """``(N, N)`` matrix ``dt·Σ_c J_cᵀ W_c J_c`` (symmetric positive semi-definite)."""
    jn = small.sum_axis(jac * rows.normal[:, :, None], 1)  # (c, N): J_cᵀ n
    h = jnp.einsum("ckn,ckm->nm", jac * rows.beta[:, None, None], jac)
    return rows.dt * (h + jnp.einsum("cn,cm->nm", jn * _gamma(rows)[:, None], jn))


def contact_rhs(jac: jnp.ndarray, rows: ImplicitContactRows, qd: jnp.ndarray) -> jnp.ndarray:
    """``(N,)`` generalized force ``Σ_c J_cᵀ (f0_c − W_c J_c q̇)`` at the current velocities ``qd`` (flat)."""
    u = jnp.einsum("ckn,n->ck", jac, qd)
    return jnp.einsum("ckn,ck->n", jac, rows.force0 - _weighted(rows, u))
