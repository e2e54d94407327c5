"""Dense joint-space solves: ``H q̈ = rhs`` per articulation block (CRBA + RNEA + Cholesky)."""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.dynamics.cholesky import spd_solve
from jaxart.dynamics.convert import joint_f_to_generalized
from jaxart.dynamics.joint_forces import dyad_mask
from jaxart.dynamics.layout import DynamicsLayout, dynamics_layout
from jaxart.dynamics.mass_matrix import crba
from jaxart.dynamics.motion import block_terms
from jaxart.dynamics.rnea import body_wrenches, gather_dofs, gravity_wrenches, rnea, scatter_dofs
from jaxart.math import small


def solve_blocks(lay: DynamicsLayout, h: jnp.ndarray, rhs: jnp.ndarray) -> jnp.ndarray:
    """Solve ``h q̈ = rhs`` per articulation block; padding and kinematic DOFs get ``q̈ = 0``.

    Args:
        lay: Layout.
        h: ``(A, D, D)`` SPD blocks (padding rows/columns may be zero).
        rhs: ``(A, D)`` right-hand sides.

    Returns:
        ``(A, D)`` accelerations.
    """
    kin = jnp.asarray(lay.is_kinematic_dof, bool)
    kin = jnp.concatenate([kin, jnp.ones((1,), bool)])[lay.dof_index]  # padding counts as fixed
    free = ~kin
    keep = (free[:, :, None] & free[:, None, :]).astype(h.dtype)
    h = h * keep + jnp.eye(h.shape[-1], dtype=h.dtype) * kin[:, None, :].astype(h.dtype)
    return spd_solve(h, jnp.where(free, rhs, 0.0))


def dense_accelerations(model, joint_q, joint_qd, body_q_base, joint_f, tau_extra, d_extra, body_f, dyad=None):
    """The same accelerations by CRBA + RNEA and a dense per-articulation Cholesky solve.

    Arguments as :data:`~jaxart.dynamics.aba.aba_accelerations`; ``dyad`` optionally adds the rank-one blocks
    ``w wᵀ`` of :func:`~jaxart.dynamics.joint_forces.joint_forces` (implicit DISTANCE limits) to ``H``.
    """
    lay = dynamics_layout(model)
    terms = block_terms(model, joint_q, joint_qd, body_q_base)
    f_ext = gravity_wrenches(model, terms) + body_wrenches(terms, lay, body_f)
    bias = rnea(terms, lay, None, f_ext)
    tau = joint_f_to_generalized(model, terms.cols, joint_f) + tau_extra
    diag = small.spread(gather_dofs(lay, d_extra)[:, None, :], lay.max_dofs, 1)  # no reduction in reverse mode
    h = crba(terms, lay) + jnp.eye(lay.max_dofs, dtype=joint_q.dtype) * diag
    if dyad is not None:
        w = gather_dofs(lay, dyad)
        h = h + jnp.where(dyad_mask(model, lay.dof_index), w[:, :, None] * w[:, None, :], 0.0)
    return scatter_dofs(lay, solve_blocks(lay, h, gather_dofs(lay, tau) - bias), model.joint_dof_count)
