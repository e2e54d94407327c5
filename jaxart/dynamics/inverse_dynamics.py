"""Inverse-dynamics utilities (Newton's ``eval_inverse_dynamics_*`` and PhysX's suite), functional.

Manipulator equation ``τ = M(q) q̈ + C(q, q̇) q̇ + g(q)`` with ``g = ∂U/∂q`` (positive sign).
``M`` is per-articulation ``(A, D, D)`` in generalized coordinates; the force vectors are
``(joint_dof_count,)`` in the ``Control.joint_f`` convention (FREE/DISTANCE entries are world
wrenches at the child COM, as in Newton). Poses are recomputed from ``state.joint_q``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.dynamics.convert import generalized_to_joint_f
from jaxart.dynamics.jacobian import apply_mask
from jaxart.dynamics.layout import dynamics_layout
from jaxart.dynamics.mass_matrix import block_armature, crba, tendon_armature_blocks
from jaxart.dynamics.motion import block_terms
from jaxart.dynamics.rnea import body_wrenches, gather_dofs, gravity_wrenches, project_wrenches, rnea, scatter_dofs
from jaxart.kinematics.masks import articulation_mask
from jaxart.sim import checks
from jaxart.sim.model import State


def _dof_mask(model, mask, values: jnp.ndarray) -> jnp.ndarray:
    art = articulation_mask(model, mask, None)
    if art is None:
        return values
    lay = dynamics_layout(model)
    sel = jnp.zeros((model.joint_dof_count + 1,), bool).at[lay.dof_index].set(art[:, None])
    return jnp.where(sel[:-1], values, 0.0)


def tendon_armature_force(model, state: State, joint_qdd) -> jnp.ndarray:
    """``(nd,)`` generalized force ``Σ_t a_t J_tᵀ (J_t q̈ + J̇_t q̇)`` of the tendons' armature (zero without tendons)."""
    nd = model.joint_dof_count
    if not model.tendon.tendon_count:  # static
        return jnp.zeros((nd,), state.joint_qd.dtype)
    from jaxart.dynamics.tendon_jacobian import tendon_jacobian_rate

    jac, bias = tendon_jacobian_rate(model, state.joint_q, state.joint_qd, state.body_q)
    jac = jnp.where(dynamics_layout(model).in_tree_dof, jac, 0.0)  # loop-joint DOFs carry no inverse dynamics
    return jac.T @ (model.tendon_armature * (jac @ jnp.asarray(joint_qdd, jac.dtype) + bias))


@jax.jit
def eval_inverse_dynamics_passive(model, state: State, mask=None):
    """Mass matrix, gravity force and Coriolis force (Newton's ``eval_inverse_dynamics_passive``).

    Args:
        model: The model.
        state: The state (``joint_q``, ``joint_qd``).
        mask: Optional ``(articulation_count,)`` booleans; unselected entries are zero.

    Returns:
        ``(mass_matrix (A, D, D) with joint and tendon armature (see :func:`~jaxart.eval_mass_matrix`),
        gravity_force (nd,) = ∂U/∂q, coriolis_force (nd,) = C(q, q̇) q̇)`` (with the tendon armature's velocity
        product ``Σ a Jᵀ J̇q̇``).
    """
    checks.check_dynamics("eval_inverse_dynamics_passive", model, state)
    with jax.named_scope("jaxart.eval_inverse_dynamics_passive"):
        lay = dynamics_layout(model)
        nd = model.joint_dof_count
        terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
        h = crba(terms, lay) + jnp.eye(lay.max_dofs, dtype=terms.S.dtype) * block_armature(model, lay)[:, None, :]
        h = h + tendon_armature_blocks(model, lay, state.joint_q, state.body_q)
        grav = -project_wrenches(terms, lay, gravity_wrenches(model, terms))
        cor = rnea(terms, lay, None, None)
        g = generalized_to_joint_f(model, terms.cols, scatter_dofs(lay, grav, nd))
        cor = scatter_dofs(lay, cor, nd) + tendon_armature_force(model, state, jnp.zeros((nd,), cor.dtype))
        c = generalized_to_joint_f(model, terms.cols, cor)
        return apply_mask(model, h, mask), _dof_mask(model, mask, g), _dof_mask(model, mask, c)


@jax.jit
def eval_inverse_dynamics_force(model, state: State, joint_qdd, mask=None) -> jnp.ndarray:
    """Joint forces realising ``joint_qdd``: ``τ = M q̈ + C q̇ + g`` (joint and tendon armature included: the
    tendons add ``Σ a Jᵀ (J q̈ + J̇q̇)``, as MuJoCo's ``mj_inverse``).

    Args:
        model: The model.
        state: The state.
        joint_qdd: ``(joint_dof_count,)`` accelerations (derivatives of ``joint_qd``).
        mask: Optional ``(articulation_count,)`` booleans.

    Returns:
        ``(joint_dof_count,)`` forces in the ``Control.joint_f`` convention.
    """
    checks.check_dynamics("eval_inverse_dynamics_force", model, state, joint_qdd=joint_qdd)
    with jax.named_scope("jaxart.eval_inverse_dynamics_force"):
        lay = dynamics_layout(model)
        nd = model.joint_dof_count
        terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
        qdd = gather_dofs(lay, jnp.asarray(joint_qdd, terms.S.dtype))
        tau = rnea(terms, lay, qdd, gravity_wrenches(model, terms)) + block_armature(model, lay) * qdd
        tau = scatter_dofs(lay, tau, nd) + tendon_armature_force(model, state, joint_qdd)
        return _dof_mask(model, mask, generalized_to_joint_f(model, terms.cols, tau))


@jax.jit
def eval_generalized_external_force(model, state: State, body_f=None, mask=None) -> jnp.ndarray:
    """Joint forces that counteract external link wrenches (PhysX ``computeGeneralizedExternalForce``).

    Returns ``−Jᵀ f`` so that applying it as ``Control.joint_f`` together with ``body_f`` leaves the
    accelerations unchanged. Wrenches are world ``(f, τ about the COM)`` per body.

    Args:
        model: The model.
        state: The state (pose).
        body_f: ``(body_count, 6)`` wrenches; ``state.body_f`` when ``None``.
        mask: Optional ``(articulation_count,)`` booleans.

    Returns:
        ``(joint_dof_count,)`` forces in the ``Control.joint_f`` convention.
    """
    checks.check_dynamics("eval_generalized_external_force", model, state, body_f=body_f)
    with jax.named_scope("jaxart.eval_generalized_external_force"):
        lay = dynamics_layout(model)
        terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
        wrench = body_wrenches(terms, lay, state.body_f if body_f is None else jnp.asarray(body_f, terms.S.dtype))
        tau = -scatter_dofs(lay, project_wrenches(terms, lay, wrench), model.joint_dof_count)
        return _dof_mask(model, mask, generalized_to_joint_f(model, terms.cols, tau))
