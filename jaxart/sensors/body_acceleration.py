"""Classical body accelerations from joint accelerations (the acceleration-stage sensors' kinematics)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.dynamics.layout import dynamics_layout
from jaxart.dynamics.motion import block_terms, link_twists
from jaxart.dynamics.rnea import gather_dofs


def body_accelerations(model, state, joint_qdd: jax.Array) -> jax.Array:
    """``(body_count, 6)`` classical accelerations ``(a_com [m/s²], α [rad/s²])`` in world axes.

    From the articulation blocks of the dynamics (world-origin spatial accelerations ``Σ (Ṡ q̇ + S q̈)`` of each
    link, :mod:`jaxart.dynamics.motion`), converted to the classical acceleration of the COM:
    ``a_c = a_o + α × c + ω × v_c``.

    Args:
        model: The model.
        state: The state (``joint_q``, ``joint_qd``; ``body_q`` of bodies without a tree joint).
        joint_qdd: ``(joint_dof_count,)`` joint accelerations.

    Returns:
        Accelerations; zero for bodies outside the articulated trees.
    """
    lay = dynamics_layout(model)
    terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
    dtype = terms.S.dtype
    qdd = gather_dofs(lay, jnp.asarray(joint_qdd, dtype))
    vel = link_twists(terms, lay.link_dof)
    cols = terms.Sdot_qd + terms.S * qdd[..., None]
    acc = jnp.einsum("ald,adk->alk", jnp.asarray(lay.link_dof, dtype), cols)
    com, omega, alpha = terms.link_com, vel[..., 3:], acc[..., 3:]
    a_com = acc[..., :3] + jnp.cross(alpha, com) + jnp.cross(omega, vel[..., :3] + jnp.cross(omega, com))
    n = model.body_count
    out = jnp.zeros((n + 1, 6), dtype).at[lay.link_body.reshape(-1)].set(
        jnp.concatenate([a_com, alpha], axis=-1).reshape(-1, 6))
    return out[:n]
