"""Dense articulation Jacobians (Newton's ``eval_jacobian``, functional)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.dynamics.layout import dynamics_layout
from jaxart.dynamics.motion import BlockTerms, block_terms
from jaxart.kinematics.masks import articulation_mask
from jaxart.sim import checks
from jaxart.sim.model import State


def origin_jacobians(terms: BlockTerms, link_dof) -> jnp.ndarray:
    """``(A, L, 6, D)`` Jacobians of the links' world-origin twists."""
    return jnp.einsum("ald,adk->alkd", jnp.asarray(link_dof, terms.S.dtype), terms.S)


def com_jacobians(terms: BlockTerms, link_dof) -> jnp.ndarray:
    """``(A, L, 6, D)`` Jacobians of the links' COM twists ``(v_com, ω)`` (Newton's ``body_qd``)."""
    jo = origin_jacobians(terms, link_dof)
    lin, ang = jo[:, :, :3], jo[:, :, 3:]
    c = terms.link_com[..., :, None]
    # v_com = v_o + ω × c = v_o − c × ω, column by column
    shift = jnp.cross(jnp.broadcast_to(c, ang.shape), ang, axis=-2)
    return jnp.concatenate([lin - shift, ang], axis=2)


@jax.jit
def eval_jacobian(model, state: State, mask=None) -> jnp.ndarray:
    """Spatial Jacobian of every articulation's links (Newton's ``eval_jacobian``).

    ``J[a, 6*l:6*l+6, :] @ qd_a == body_qd[link]`` where link ``l`` is the child of joint
    ``articulation_start[a] + l`` and ``qd_a`` the articulation's slice of ``joint_qd`` (zero
    padded to ``max_dofs``). Rows are COM-referenced world twists ``(v_com, ω)``. Poses are
    recomputed from ``state.joint_q`` (``state.body_q`` is read only for bodies without a tree
    joint), so ``eval_fk`` need not run first. Unselected articulations are zero.

    Args:
        model: The model.
        state: The state.
        mask: Optional ``(articulation_count,)`` booleans.

    Returns:
        ``(articulation_count, 6 * max_links, max_dofs)`` array.
    """
    checks.check_dynamics("eval_jacobian", model, state)
    with jax.named_scope("jaxart.eval_jacobian"):
        lay = dynamics_layout(model)
        terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
        jc = com_jacobians(terms, lay.link_dof)
        a, l_, _, d = jc.shape
        out = jc.reshape(a, l_ * 6, d)
        return apply_mask(model, out, mask)


def apply_mask(model, out: jnp.ndarray, mask) -> jnp.ndarray:
    art = articulation_mask(model, mask, None)
    if art is None:
        return out
    return jnp.where(art.reshape((-1,) + (1,) * (out.ndim - 1)), out, 0.0)
