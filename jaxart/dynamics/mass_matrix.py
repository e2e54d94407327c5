"""Joint-space mass matrix by the composite-rigid-body algorithm in dense block form."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxart.dynamics.jacobian import apply_mask
from jaxart.dynamics.layout import DynamicsLayout, dynamics_layout
from jaxart.dynamics.motion import BlockTerms, block_terms
from jaxart.math import small
from jaxart.sim import checks
from jaxart.sim.model import State


def crba(terms: BlockTerms, lay: DynamicsLayout) -> jnp.ndarray:
    """``(A, D, D)`` mass matrices without armature.

    Composite inertias ``Ic = subtree · I`` (static mask product), ``F_d = Ic[body(d)] S_d`` and
    ``H_ij = S_i · F_j`` when ``body(i)`` is an ancestor-or-self of ``body(j)`` (mirrored
    otherwise); DOFs on unrelated branches couple by zero.
    """
    dt = terms.S.dtype
    ic = jnp.einsum("aik,akxy->aixy", jnp.asarray(lay.subtree, dt), terms.inertia)
    ic_d = jnp.take_along_axis(ic, jnp.asarray(lay.dof_link)[:, :, None, None], axis=1)
    f = small.matvec(ic_d, terms.S)
    upper = jnp.einsum("aik,ajk->aij", terms.S, f)
    return jnp.asarray(lay.dof_anc, dt) * upper + jnp.asarray(lay.dof_desc, dt) * jnp.swapaxes(upper, -1, -2)


def block_armature(model, lay: DynamicsLayout) -> jnp.ndarray:
    """``(A, D)`` armature per DOF slot (zero for padding)."""
    arm = jnp.concatenate([model.joint_armature, jnp.zeros((1,), model.joint_armature.dtype)])
    return arm[lay.dof_index]


def tendon_armature_blocks(model, lay: DynamicsLayout, joint_q: jnp.ndarray, body_q: jnp.ndarray) -> jnp.ndarray:
    """``(A, D, D)`` tendon armature ``Σ_t a_t J_tᵀ J_t`` (MuJoCo's tendon term of ``qM``) per articulation block.

    A tendon spanning two articulations also couples their blocks; those off-diagonal blocks have no place in the
    per-articulation layout and are left out (the solvers and :func:`~jaxart.eval_forward_dynamics` apply them).
    """
    from jaxart.dynamics.tendon_jacobian import tendon_jacobian

    if not model.tendon.tendon_count:  # static
        return jnp.zeros((*lay.dof_index.shape, lay.max_dofs), joint_q.dtype)
    jac = tendon_jacobian(model, joint_q, body_q)
    ext = jnp.concatenate([jac, jnp.zeros((jac.shape[0], 1), jac.dtype)], axis=1)[:, lay.dof_index]  # (T, A, D)
    return jnp.einsum("t,tai,taj->aij", model.tendon_armature.astype(jac.dtype), ext, ext)


@functools.partial(jax.jit, static_argnames=('include_armature',))
def eval_mass_matrix(model, state: State, mask=None, *, include_armature: bool = True) -> jnp.ndarray:
    """Generalized mass matrix of every articulation (Newton's ``eval_mass_matrix``).

    ``H`` relates ``joint_qd``-space accelerations to generalized forces (for BALL/FREE the
    angular rows refer to angular velocity, not quaternion rates; FREE rows are in the joint's
    parent-anchor frame) and ``½ q̇ᵀ H q̇`` is the kinetic energy. Poses are recomputed from
    ``state.joint_q``. Padded rows/columns and unselected articulations are zero.

    Args:
        model: The model.
        state: The state.
        mask: Optional ``(articulation_count,)`` booleans.
        include_armature: Add ``joint_armature`` to the diagonal and the tendons' armature ``Σ a JᵀJ``
            (:func:`tendon_armature_blocks`; MuJoCo's ``qM`` holds both).

    Returns:
        ``(articulation_count, max_dofs, max_dofs)`` array.
    """
    checks.check_dynamics("eval_mass_matrix", model, state)
    with jax.named_scope("jaxart.eval_mass_matrix"):
        lay = dynamics_layout(model)
        terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
        h = crba(terms, lay)
        if include_armature:
            h = h + jnp.eye(lay.max_dofs, dtype=h.dtype) * block_armature(model, lay)[:, None, :]
            h = h + tendon_armature_blocks(model, lay, state.joint_q, state.body_q)
        return apply_mask(model, h, mask)
