"""Forward dynamics ``q̈ = M⁻¹ (τ − C q̇ − g + Jᵀ f_ext)`` (PhysX ``computeJointAcceleration``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.dynamics.aba import aba_accelerations, dense_from_base
from jaxart.dynamics.engine.dense_solve import solve_blocks
from jaxart.dynamics.tendon_jacobian import tendon_jacobian_rate
from jaxart.sim import checks
from jaxart.sim.model import Control, State

__all__ = ["eval_forward_dynamics", "solve_blocks"]


@jax.jit
def eval_forward_dynamics(model, state: State, control: Control | None = None) -> jnp.ndarray:
    """Joint accelerations under ``joint_f``, ``state.body_f``, gravity and velocity products.

    Joint drives, limits, passive springs/damping and friction are excluded (as PhysX's
    ``computeJointAcceleration``); joint and tendon armature are included (the tendons' ``a JᵀJ`` and
    ``a Jᵀ J̇q̇``, as MuJoCo; models with tendons take the dense solve). Kinematic bodies' DOFs get ``q̈ = 0``.
    Under ``vmap`` the O(n) articulated-body algorithm runs batch-minor; single worlds and
    derivatives use CRBA + RNEA and a dense Cholesky (see :mod:`jaxart.dynamics.aba`).

    Args:
        model: The model.
        state: The state.
        control: Control (``joint_f``); zero forces when ``None``.

    Returns:
        ``(joint_dof_count,)`` accelerations (time derivatives of ``joint_qd``; zero for DOFs of
        non-tree joints).
    """
    checks.check_dynamics("eval_forward_dynamics", model, state, control=control)
    with jax.named_scope("jaxart.eval_forward_dynamics"):
        nd = model.joint_dof_count
        zeros = jnp.zeros((nd,), state.joint_q.dtype)
        joint_f = zeros if control is None else control.joint_f
        if model.tendon.tendon_count:  # static: the tendons' armature couples DOFs (rank-one rows, dense solve)
            jac, bias = tendon_jacobian_rate(model, state.joint_q, state.joint_qd, state.body_q)
            arm = model.tendon_armature.astype(jac.dtype)
            return dense_from_base(model, state.joint_q, state.joint_qd, state.body_q, joint_f, -jac.T @ (arm * bias),
                                   model.joint_armature, state.body_f, lowrank=(jac, arm))
        return aba_accelerations(model, state.joint_q, state.joint_qd, state.body_q, joint_f, zeros,
                                 model.joint_armature, state.body_f)
