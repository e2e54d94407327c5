"""Dense joint-space solves: ``H q̈ = rhs`` per articulation block (CRBA + RNEA + Cholesky).

Derivatives of :func:`dense_accelerations` are implicit. The accelerations ``x`` solve
``r(inputs, x) = A x + C q̇ + g − Jᵀ f_ext − τ = 0`` with ``A = H + diag(e)`` (plus the DISTANCE-limit
dyads), so ``A ẋ = −∂r/∂inputs · inputs_dot``. ``r`` at a fixed ``x`` is one RNEA pass, and ``A⁻¹`` reuses
the primal Cholesky factor. Neither mode differentiates the mass matrix or the factorisation. Humanoid,
100-step rollout gradient: batch 1 21.5 → 18.9 ms, ``vmap`` of 64 477 → 404 ms (forward 3.2 / 52 ms).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxart.dynamics.cholesky import cho_solve, cholesky, spd_solve
from jaxart.dynamics.convert import joint_f_to_generalized
from jaxart.dynamics.joint_forces import dyad_mask
from jaxart.dynamics.layout import DynamicsLayout, dynamics_layout
from jaxart.dynamics.mass_matrix import crba
from jaxart.dynamics.motion import block_terms
from jaxart.dynamics.rnea import body_wrenches, gather_dofs, gravity_wrenches, rnea, scatter_dofs
from jaxart.math import small


def _free_mask(lay: DynamicsLayout) -> jnp.ndarray:
    """``(A, D)`` block slots with an unknown acceleration (not kinematic, not padding)."""
    kin = np.append(lay.is_kinematic_dof, True)[lay.dof_index]  # padding counts as fixed
    return jnp.asarray(~kin)


def _fixed_rows(lay: DynamicsLayout, h: jnp.ndarray) -> jnp.ndarray:
    """``h`` with the rows/columns of fixed slots replaced by the identity (their solution is 0)."""
    free = _free_mask(lay)
    keep = (free[:, :, None] & free[:, None, :]).astype(h.dtype)
    return h * keep + jnp.eye(h.shape[-1], dtype=h.dtype) * (~free)[:, None, :].astype(h.dtype)


def solve_blocks(lay: DynamicsLayout, h: jnp.ndarray, rhs: jnp.ndarray) -> jnp.ndarray:
    """Solve ``h q̈ = rhs`` per articulation block; padding and kinematic DOFs get ``q̈ = 0``.

    Args:
        lay: Layout.
        h: ``(A, D, D)`` SPD blocks (padding rows/columns may be zero).
        rhs: ``(A, D)`` right-hand sides.

    Returns:
        ``(A, D)`` accelerations.
    """
    return spd_solve(_fixed_rows(lay, h), jnp.where(_free_mask(lay), rhs, 0.0))


def _dyad_blocks(model, lay: DynamicsLayout, dyad: jnp.ndarray) -> jnp.ndarray:
    """``(A, D, D)`` rank-one blocks ``w wᵀ`` of the implicit DISTANCE limits."""
    w = gather_dofs(lay, dyad)
    return jnp.where(dyad_mask(model, lay.dof_index), w[:, :, None] * w[:, None, :], 0.0)


def _block_tau(model, lay, terms, joint_f, tau_extra) -> jnp.ndarray:
    return gather_dofs(lay, joint_f_to_generalized(model, terms.cols, joint_f) + tau_extra)


def _external(model, lay, terms, body_f) -> jnp.ndarray:
    return gravity_wrenches(model, terms) + body_wrenches(terms, lay, body_f)


def _residual(model, terms, joint_f, tau_extra, d_extra, body_f, dyad, x):
    """``(A, D)`` residual ``(H + diag(e) + Σ w wᵀ) x + C q̇ + g − Jᵀ f_ext − τ`` at block accelerations ``x``:
    one RNEA pass with ``x`` (no mass matrix)."""
    lay = dynamics_layout(model)
    r = rnea(terms, lay, x, _external(model, lay, terms, body_f)) + gather_dofs(lay, d_extra) * x
    if dyad is not None:
        r = r + small.matvec(_dyad_blocks(model, lay, dyad), x)
    return r - _block_tau(model, lay, terms, joint_f, tau_extra)


def _system(model, terms, joint_f, tau_extra, d_extra, body_f, dyad):
    """``(A, D, D)`` matrices ``H + diag(e) (+ w wᵀ)`` with fixed rows replaced, and ``(A, D)`` right-hand sides."""
    lay = dynamics_layout(model)
    bias = rnea(terms, lay, None, _external(model, lay, terms, body_f))
    diag = small.spread(gather_dofs(lay, d_extra)[:, None, :], lay.max_dofs, 1)  # no reduction in reverse mode
    h = crba(terms, lay) + jnp.eye(lay.max_dofs, dtype=diag.dtype) * diag
    if dyad is not None:
        h = h + _dyad_blocks(model, lay, dyad)
    rhs = _block_tau(model, lay, terms, joint_f, tau_extra) - bias
    return _fixed_rows(lay, h), jnp.where(_free_mask(lay), rhs, 0.0)


@jax.custom_jvp
def _accelerations(model, joint_q, joint_qd, body_q_base, joint_f, tau_extra, d_extra, body_f, dyad):
    lay = dynamics_layout(model)
    h, rhs = _system(model, block_terms(model, joint_q, joint_qd, body_q_base), joint_f, tau_extra, d_extra,
                     body_f, dyad)
    return scatter_dofs(lay, spd_solve(h, rhs), model.joint_dof_count)


@_accelerations.defjvp
def _accelerations_jvp(primals, tangents):
    """Implicit differentiation: ``A ẋ = −∂r/∂(inputs) · (input tangents)`` at the solution ``x``.

    The tangent of the residual is one forward-mode RNEA pass (:func:`_residual`), and ``A⁻¹`` reuses
    the primal Cholesky factor through ``lax.custom_linear_solve``: the mass matrix and the
    factorisation are never differentiated (reverse mode keeps only the RNEA linearisation and the
    factor).
    """
    model, joint_q, joint_qd, base, joint_f, tau_extra, d_extra, body_f, dyad = primals
    t_model, t_q, t_qd, t_base, *t_rest = tangents
    lay = dynamics_layout(model)
    terms, t_terms = jax.jvp(block_terms, (model, joint_q, joint_qd, base), (t_model, t_q, t_qd, t_base))
    h, rhs = _system(model, terms, joint_f, tau_extra, d_extra, body_f, dyad)
    low = cholesky(h)
    x = cho_solve(low, rhs)
    residual = lambda m, t, *rest: _residual(m, t, *rest, x)  # noqa: E731
    _, r_dot = jax.jvp(residual, (model, terms, joint_f, tau_extra, d_extra, body_f, dyad),
                       (t_model, t_terms, *t_rest))
    x_dot = lax.custom_linear_solve(lambda v: small.matvec(h, v), jnp.where(_free_mask(lay), -r_dot, 0.0),
                                    lambda _, r: cho_solve(low, r), symmetric=True)
    nd = model.joint_dof_count
    return scatter_dofs(lay, x, nd), scatter_dofs(lay, x_dot, nd)


def dense_accelerations(model, joint_q, joint_qd, body_q_base, joint_f, tau_extra, d_extra, body_f, dyad=None):
    """The same accelerations by CRBA + RNEA and a dense per-articulation Cholesky solve.

    Arguments as :data:`~jaxart.dynamics.aba.aba_accelerations`; ``dyad`` optionally adds the rank-one blocks
    ``w wᵀ`` of :func:`~jaxart.dynamics.joint_forces.joint_forces` (implicit DISTANCE limits) to ``H``.
    Derivatives are implicit (see :func:`_accelerations_jvp`): one RNEA linearisation and two triangular
    solves with the primal factor, instead of differentiating ``H``.
    """
    return _accelerations(model, joint_q, joint_qd, body_q_base, joint_f, tau_extra, d_extra, body_f, dyad)
