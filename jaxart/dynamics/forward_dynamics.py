"""Forward dynamics ``q̈ = M⁻¹ (τ − C q̇ − g + Jᵀ f_ext)`` (PhysX ``computeJointAcceleration``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.dynamics.cholesky import spd_solve
from jaxart.dynamics.convert import joint_f_to_generalized
from jaxart.dynamics.layout import DynamicsLayout, dynamics_layout
from jaxart.dynamics.mass_matrix import block_armature, crba
from jaxart.dynamics.motion import block_terms
from jaxart.dynamics.rnea import body_wrenches, gather_dofs, gravity_wrenches, rnea, scatter_dofs
from jaxart.sim.model import Control, State


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


@jax.jit
def eval_forward_dynamics(model, state: State, control: Control | None = None) -> jnp.ndarray:
    """Joint accelerations under ``joint_f``, ``state.body_f``, gravity and velocity products.

    Joint drives, limits, passive springs/damping and friction are excluded (as PhysX's
    ``computeJointAcceleration``); armature is included. Kinematic bodies' DOFs get ``q̈ = 0``.

    Args:
        model: The model.
        state: The state.
        control: Control (``joint_f``); zero forces when ``None``.

    Returns:
        ``(joint_dof_count,)`` accelerations (time derivatives of ``joint_qd``; zero for DOFs of
        non-tree joints).
    """
    with jax.named_scope("jaxart.eval_forward_dynamics"):
        lay = dynamics_layout(model)
        nd = model.joint_dof_count
        terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
        joint_f = jnp.zeros((nd,), terms.S.dtype) if control is None else control.joint_f
        tau = gather_dofs(lay, joint_f_to_generalized(model, terms.cols, joint_f))
        f_ext = gravity_wrenches(model, terms) + body_wrenches(terms, lay, state.body_f)
        bias = rnea(terms, lay, None, f_ext)
        h = crba(terms, lay) + jnp.eye(lay.max_dofs, dtype=tau.dtype) * block_armature(model, lay)[:, None, :]
        return scatter_dofs(lay, solve_blocks(lay, h, tau - bias), nd)
