"""``Control.joint_f`` convention ↔ generalized forces.

For FREE/DISTANCE joints ``joint_f`` is a world wrench ``(f, τ)`` at the child COM, whereas the
generalized force of a DOF is ``S_dᵀ w`` with the DOF's world-origin column. Because FREE angular
columns rotate about the child COM, ``S_dᵀ (f, τ + c × f)`` reduces to ``a_d · f`` for linear DOFs
and ``a_d · τ`` for angular ones, ``a_d`` being the DOF's world direction (the parent-anchor axes).
All other joint types use generalized forces directly.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.layout import dynamics_layout
from jaxart.math import small


def dof_directions(model, cols: jnp.ndarray) -> jnp.ndarray:
    """``(nd, 3)`` world direction of every DOF (linear part for linear DOFs, axis for angular)."""
    lay = dynamics_layout(model)
    nd = model.joint_dof_count
    return jnp.where(jnp.asarray(lay.is_lin_dof)[:, None], cols[:nd, :3], cols[:nd, 3:])


def joint_f_to_generalized(model, cols: jnp.ndarray, joint_f: jnp.ndarray) -> jnp.ndarray:
    """Generalized forces of ``joint_f`` (FREE/DISTANCE entries are world COM wrenches)."""
    lay = dynamics_layout(model)
    if not lay.is_free_dof.any():
        return joint_f
    dirs = dof_directions(model, cols)
    ext = jnp.concatenate([joint_f, jnp.zeros((1,), joint_f.dtype)])
    wrench = ext[lay.free_joint_dofs]  # (nd, 6)
    part = jnp.where(jnp.asarray(lay.is_lin_dof)[:, None], wrench[:, :3], wrench[:, 3:])
    gen = small.dot_last(dirs, part)
    return jnp.where(jnp.asarray(lay.is_free_dof), gen, joint_f)


def generalized_to_joint_f(model, cols: jnp.ndarray, tau: jnp.ndarray) -> jnp.ndarray:
    """Inverse of :func:`joint_f_to_generalized` (FREE/DISTANCE entries become world wrenches)."""
    lay = dynamics_layout(model)
    if not lay.is_free_dof.any():
        return tau
    nd = model.joint_dof_count
    dirs = jnp.concatenate([dof_directions(model, cols), jnp.zeros((1, 3), tau.dtype)])
    ext = jnp.concatenate([tau, jnp.zeros((1,), tau.dtype)])
    idx = lay.free_joint_dofs
    t6, d6 = ext[idx], dirs[idx]  # (nd, 6), (nd, 6, 3)
    f = small.sum_axis(t6[:, :3, None] * d6[:, :3], -2)
    torque = small.sum_axis(t6[:, 3:, None] * d6[:, 3:], -2)
    w = jnp.concatenate([f, torque], axis=-1)
    k = np.clip(np.arange(nd) - idx[:, 0], 0, 5)
    return jnp.where(jnp.asarray(lay.is_free_dof), w[np.arange(nd), k], tau)
