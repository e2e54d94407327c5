"""Effective joint-space inertia of acceleration drives (PhysX ``PxArticulationDriveType::eACCELERATION``).

An acceleration drive's gains ``target_ke`` [1/s²] and ``target_kd`` [1/s] are multiplied by the DOF's
effective inertia ``m_i = 1 / (H⁻¹)_ii`` (``H`` the articulation's mass matrix with armature): the inverse
of the DOF's own acceleration response to a unit generalized force when every other DOF is free, which
is how PhysX scales its drive impulses by the joint's unit response. A drive force ``m_i a`` on DOF ``i``
alone then accelerates it by exactly ``a``, whatever the link masses; other forces (gravity, velocity
products, other joints' drives) still act through the coupled dynamics. Kinematic DOFs get ``m_i = 1``.

Free axes of loop-closing joints (:mod:`jaxart.dynamics.engine.loop_axes`, Jacobian row ``J`` of the axis's coordinate)
get ``m_L = 1 / (J W Jᵀ)`` with ``W = A⁻¹ − A⁻¹Gᵀ (G A⁻¹ Gᵀ + R)⁻¹ G A⁻¹`` the response of the constrained
system: ``A`` the mass matrix with armature (the loop axes' armature ``Jᵀ diag(a) J`` included), ``G`` the hard
rows of the loop joints and equality/mimic constraints with their regularisation ``R``
(:mod:`jaxart.dynamics.engine.dense_solve`). A loop axis's coordinate only moves with its joint's locked directions
held, so its unit response is taken with the rows enforced: a REVOLUTE loop joint hanging a free body from the
world then has ``m_L`` = the body's inertia about the hinge, as the tree REVOLUTE joint in its place. Tree DOFs
keep the articulation's ``1/(H⁻¹)_ii`` (PhysX's articulation unit response, loop rows not included), so the
two agree where the loop joint is the only closure of its DOF, not in general (a tree DOF inside a loop).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.engine.constraint_rows import constraint_rows
from jaxart.dynamics.engine.dense_solve import fixed_rows, free_mask, initial_poses, world_matrix
from jaxart.dynamics.engine.loop_axes import loop_axis_rows
from jaxart.dynamics.joint_forces import acceleration_dofs
from jaxart.dynamics.layout import dynamics_layout
from jaxart.dynamics.mass_matrix import block_armature, crba
from jaxart.dynamics.motion import block_terms
from jaxart.dynamics.rnea import scatter_dofs
from jaxart.kinematics.fk import base_bodies
from jaxart.math.cholesky import spd_solve

__all__ = ["acceleration_dofs", "drive_inertia", "loop_drive_inertia"]


def drive_inertia(model, joint_q: jnp.ndarray, body_q: jnp.ndarray) -> jnp.ndarray:
    """``(joint_dof_count,)`` effective inertia ``1 / (H⁻¹)_ii`` per DOF [kg or kg·m²] at ``joint_q``.

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        body_q: ``(body_count, 7)`` poses; only bodies without a tree joint (static roots) are read.

    Returns:
        Effective inertias (1 for kinematic DOFs, 0 for DOFs outside the articulated trees).
    """
    lay = dynamics_layout(model)
    terms = block_terms(model, joint_q, jnp.zeros((model.joint_dof_count,), joint_q.dtype), body_q)
    eye = jnp.eye(lay.max_dofs, dtype=joint_q.dtype)
    h = fixed_rows(free_mask(lay), crba(terms, lay) + eye * block_armature(model, lay)[:, None, :])
    inv_cols = spd_solve(h[:, None], jnp.broadcast_to(eye, h.shape))  # [a, k] = H⁻¹ e_k
    m_eff = 1.0 / jnp.diagonal(inv_cols, axis1=-2, axis2=-1)
    return scatter_dofs(lay, jnp.where(jnp.asarray(lay.dof_valid), m_eff, 0.0), model.joint_dof_count)


def _full_poses(model, base_q: jnp.ndarray) -> jnp.ndarray:
    base = base_bodies(model.schedule)
    slot = np.full(model.body_count, len(base))
    slot[base] = np.arange(len(base))
    ident = jnp.asarray([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], base_q.dtype)
    return jnp.concatenate([base_q, ident])[slot]


def loop_drive_inertia(model, joint_q: jnp.ndarray, base_q: jnp.ndarray, constraints, m_eff: jnp.ndarray):
    """``m_eff`` with the loop axes' entries set to ``1 / (J W Jᵀ)`` (module docstring), at ``joint_q``.

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        base_q: ``(k, 7)`` poses of the :func:`~jaxart.kinematics.fk.base_bodies`.
        constraints: :class:`~jaxart.dynamics.engine.dense_solve.Constraints` with loop axes.
        m_eff: ``(joint_dof_count,)`` effective inertias of the tree DOFs (:func:`drive_inertia`).

    Returns:
        ``(joint_dof_count,)`` effective inertias.
    """
    body_q, axes, dtype = _full_poses(model, base_q), constraints.axes, joint_q.dtype
    lay = dynamics_layout(model)
    terms = block_terms(model, joint_q, jnp.zeros((model.joint_dof_count,), dtype), body_q)
    eye = jnp.eye(lay.max_dofs, dtype=dtype)
    free = free_mask(lay).reshape(1, -1)
    rows = loop_axis_rows(model, lay, terms, axes)[1] * free.astype(dtype)
    a = world_matrix(crba(terms, lay) + eye * block_armature(model, lay)[:, None, :])
    a = fixed_rows(free, a + (rows.T @ (model.joint_armature[axes.dofs][:, None] * rows))[None])[0]
    x = spd_solve(a, rows)  # (n_L, N): rows of (A⁻¹ Jᵀ)ᵀ
    resp = jnp.sum(rows * x, axis=-1)
    if not constraints.plan.empty:
        g_mat, _, on = constraint_rows(model, lay, terms, joint_q, constraints.plan,
                                       initial_poses(model, base_q, constraints), with_enabled=True)
        g_mat = g_mat * free.astype(dtype)
        s = g_mat @ spd_solve(a, g_mat).T
        s_diag = jnp.diagonal(s)
        mean = jnp.sum(s_diag) / jnp.maximum(jnp.sum(on), 1.0)  # the solve's regularisation (dense_solve)
        r_diag = constraints.regularization * (s_diag + 1e-3 * mean + jnp.finfo(dtype).tiny ** 0.5) + (1.0 - on)
        gx = g_mat @ x.T  # (m, n_L)
        resp = resp - jnp.sum(gx * spd_solve(s + jnp.diag(r_diag), gx.T).T, axis=0)
    # an axis the constrained system cannot move (zero response up to the rows' regularisation, e.g. a planar body's
    # out-of-plane slide) gets m_L = 0: its acceleration drive exerts no force (1/0 made the step NaN)
    moves = resp > jnp.sqrt(jnp.finfo(dtype).eps) * jnp.max(resp)
    return m_eff.at[axes.dofs].set(jnp.where(moves, 1.0 / jnp.where(moves, resp, 1.0), 0.0))
