"""Recursive Newton–Euler in dense block form (world-origin Plücker coordinates).

Forward pass: link twists ``V = Σ_anc S q̇`` and accelerations ``A = Σ_anc (S q̈ + Ṡ q̇)`` as
static ancestor-mask products. Per link ``f = I A + V ×* (I V) − f_ext``. Backward pass: subtree
sums of ``f`` (static mask product) projected on each DOF column: ``τ_d = S_dᵀ Σ_subtree f``.
External wrenches (gravity, ``body_f``, later contacts) enter only through ``f_ext``, i.e. as
``Jᵀ f``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.dynamics.layout import DynamicsLayout
from jaxart.dynamics.motion import BlockTerms, link_twists, origin_wrench
from jaxart.math import cross_force, small


def gravity_wrenches(model, terms: BlockTerms) -> jnp.ndarray:
    """``(A, L, 6)`` gravity wrenches about the world origin ``(m g, c × m g)`` (``m`` net of gravity
    compensation, :func:`jaxart.sim.gravity.gravity_mass`)."""
    f = terms.link_gravity_mass[..., None] * model.gravity
    return jnp.concatenate([f, jnp.cross(terms.link_com, f)], axis=-1)


def body_wrenches(terms: BlockTerms, lay: DynamicsLayout, body_f: jnp.ndarray) -> jnp.ndarray:
    """``(A, L, 6)`` world-origin wrenches of per-body world wrenches ``(f, τ about the COM)``."""
    ext = jnp.concatenate([body_f, jnp.zeros((1, 6), body_f.dtype)], axis=0)[lay.link_body]
    return origin_wrench(ext, terms.link_com)


def project_wrenches(terms: BlockTerms, lay: DynamicsLayout, f: jnp.ndarray) -> jnp.ndarray:
    """``(A, D)`` generalized forces ``τ_d = S_dᵀ Σ_{links moved by d} f`` (i.e. ``Jᵀ f``)."""
    sub = jnp.einsum("aik,akx->aix", jnp.asarray(lay.subtree, f.dtype), f)
    sub_d = jnp.take_along_axis(sub, jnp.asarray(lay.dof_link)[:, :, None], axis=1)
    return small.dot_last(terms.S, sub_d) * jnp.asarray(lay.dof_valid, f.dtype)


def rnea(terms: BlockTerms, lay: DynamicsLayout, qdd: jnp.ndarray | None, f_ext: jnp.ndarray | None) -> jnp.ndarray:
    """``(A, D)`` joint forces ``M q̈ + C q̇ − Jᵀ f_ext``.

    Args:
        terms: Block terms.
        lay: Layout.
        qdd: ``(A, D)`` block accelerations, or ``None`` for zero.
        f_ext: ``(A, L, 6)`` external world-origin wrenches (gravity included by the caller), or
            ``None``.

    Returns:
        Generalized forces per DOF slot.
    """
    return project_wrenches(terms, lay, link_net_wrenches(terms, lay, qdd, f_ext))


def link_net_wrenches(terms: BlockTerms, lay: DynamicsLayout, qdd: jnp.ndarray | None,
                      f_ext: jnp.ndarray | None) -> jnp.ndarray:
    """``(A, L, 6)`` per-link ``f = I A + V ×* (I V) − f_ext`` (world origin): the wrench the link's
    joints must supply beyond ``f_ext`` (RNEA's forward pass; arguments as :func:`rnea`)."""
    dt = terms.S.dtype
    link_dof = jnp.asarray(lay.link_dof, dt)
    vel = link_twists(terms, lay.link_dof)
    acc_cols = terms.Sdot_qd if qdd is None else terms.Sdot_qd + terms.S * small.spread(qdd[..., None], 6)
    acc = jnp.einsum("ald,adk->alk", link_dof, acc_cols)
    inertia = terms.inertia
    momentum = small.matvec(inertia, vel)
    f = small.matvec(inertia, acc) + cross_force(vel, momentum)
    return f if f_ext is None else f - f_ext


def scatter_dofs(lay: DynamicsLayout, block: jnp.ndarray, nd: int) -> jnp.ndarray:
    """Scatter ``(A, D)`` block values to the global ``(nd,)`` DOF vector (non-tree DOFs zero)."""
    out = jnp.zeros((nd + 1,), block.dtype).at[lay.dof_index].add(block)
    return out[:nd]


def gather_dofs(lay: DynamicsLayout, values: jnp.ndarray) -> jnp.ndarray:
    """Gather a global ``(nd,)`` DOF vector into ``(A, D)`` blocks (padding zero)."""
    ext = jnp.concatenate([values, jnp.zeros((1,), values.dtype)])
    return ext[lay.dof_index]
