"""Implicit tendon terms of :class:`~jaxart.solvers.SolverFeatherstone` (joint-space Jacobian and rank-one rows).

Each tendon's scalar force ``f(L, L̇)`` (spring, damping, penalty limit and actuator drive of
:mod:`jaxart.dynamics.tendons`) is evaluated at the end-of-step length and rate, linearised about the
step's start: with ``J`` the tendon's ``(1, nv)`` length Jacobian (``L̇ = J q̇``), ``K = −∂f/∂L`` and
``D = −∂f/∂L̇`` (the active stiffnesses and dampings), the semi-implicit Euler step
``q̇' = q̇ + dt q̈``, ``L' ≈ L + dt J q̇'`` gives

``f' = f − K dt L̇ − (D dt + K dt²) J q̈``,

so the joint-space system of the step gains ``Σ_t w_t J_tᵀ J_t`` with ``w_t = D dt + K dt²`` (a rank-one
term per tendon, solved by :func:`~jaxart.dynamics.engine.dense_solve.dense_accelerations` as its ``lowrank``
argument), and the right-hand side the loads of ``f − K dt L̇``, applied like explicit tendon forces
(fixed: ``c·f`` on the joints; spatial: point forces on the links). ``K`` and ``D`` are non-negative,
so the added term is positive semi-definite and a tendon spring alone never adds energy.

A tendon actuator with an effort limit is treated like a joint drive with one
(:func:`~jaxart.dynamics.joint_forces.joint_forces`): its force with the look-ahead is clamped to
``±tendon_effort_limit`` and, while saturated, its gains leave ``K`` and ``D`` (the clamped force is a constant
load), :func:`jaxart.dynamics.tendons.tendon_step_loads`.

Tendon friction (its slope ``μ/ε (1 − tanh²)``) joins ``D``, and tendon armature ``a`` (an inertia of the length)
adds ``a`` to ``w`` (``a JᵀJ`` in the matrix) and ``−a J̇q̇`` to the tendon force, ``J̇q̇`` from
:func:`tendon_jacobian_rate`; these rows are used in both drive modes.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.engine.contact_terms import body_slot_masks
from jaxart.dynamics.layout import DynamicsLayout, dynamics_layout
from jaxart.dynamics.motion import dof_columns

__all__ = ["lowrank_apply", "lowrank_matrix", "tendon_jacobian", "tendon_jacobian_rate"]


@functools.lru_cache(maxsize=32)
def _dof_body_masks(lay: DynamicsLayout, body_count: int, dof_count: int) -> np.ndarray:
    """``(n + 1, nd)`` static masks: DOF ``d`` moves body ``b`` (last row: the world, all zero)."""
    slots = body_slot_masks(lay, body_count)  # (n + 1, A·D)
    out = np.zeros((body_count + 1, dof_count + 1), bool)
    out[:, lay.dof_index.reshape(-1)] = slots  # padding slots land in the sentinel column nd
    return out[:, :dof_count]


def tendon_jacobian(model, joint_q: jnp.ndarray, body_q_base: jnp.ndarray) -> jnp.ndarray:
    """``(tendon_count, joint_dof_count)`` length Jacobians ``J = ∂L̇/∂q̇`` (MuJoCo's ``ten_J``).

    FIXED tendons: the coefficients at their joints' DOFs. SPATIAL tendons: ``Σ_e g_eᵀ J_{p_e} + r_eᵀ J_{ω_e}``
    over the path entries, with ``g_e``, ``r_e`` the entries' linear and angular length gradients
    (:func:`~jaxart.dynamics.tendon_path.spatial_gradients`; ``g = ±u`` at the ends of a straight segment) and
    ``J_p`` / ``J_ω`` the world point / angular Jacobians of the entries' bodies (columns ``S_lin + S_ang × p`` and
    ``S_ang`` of the DOFs that move the body).

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        body_q_base: ``(body_count, 7)`` poses; only bodies without a tree joint (static roots) are read.

    Returns:
        The Jacobian rows (FREE/DISTANCE columns in the ``joint_qd`` convention: child-COM velocity and ω
        in the parent-anchor frame).
    """
    from jaxart.dynamics.tendon_path import path_layout, spatial_gradients
    from jaxart.dynamics.tendons import _fixed_entries, _points

    t = model.tendon
    nd, dtype = model.joint_dof_count, model.tendon_stiffness.dtype
    jac = jnp.zeros((t.tendon_count, nd), dtype)
    _, di, ten = _fixed_entries(model)
    if ten.size:
        jac = jac.at[ten, di].add(model.tendon_joint_coef)
    if not np.asarray(t.tendon_attachment_body).size:
        return jac
    cols, (body_q, _) = dof_columns(model, joint_q.astype(dtype), body_q_base.astype(dtype))
    p, _, _, axis, _ = _points(model, body_q, jnp.zeros((model.body_count, 6), dtype))
    _, g_lin, g_rot = spatial_gradients(model, p, axis)
    bodies = np.asarray(t.tendon_attachment_body)
    moves = _dof_body_masks(dynamics_layout(model), model.body_count, nd)[np.where(bodies < 0, model.body_count,
                                                                                   bodies)]
    c = cols[:nd]
    m = jnp.asarray(moves, dtype)[:, :, None]
    point_cols = (c[None, :, :3] + jnp.cross(c[None, :, 3:], p[:, None, :])) * m
    rows = jnp.einsum("ek,enk->en", g_lin, point_cols) + jnp.einsum("ek,enk->en", g_rot, c[None, :, 3:] * m)
    return jac.at[path_layout(t).entry_tendon].add(rows)


def tendon_jacobian_rate(model, joint_q: jnp.ndarray, joint_qd: jnp.ndarray, body_q_base: jnp.ndarray):
    """``(J, J̇q̇)``: the length Jacobians (:func:`tendon_jacobian`) and the tendons' velocity-product
    accelerations ``J̇q̇ (nten,)`` (``L̈`` at ``q̈ = 0``; one forward-mode derivative of ``J`` along the coordinate
    rates :func:`~jaxart.dynamics.motion.coord_rates`). Zero without spatial tendons (constant fixed rows)."""
    from jaxart.dynamics.motion import coord_rates

    if not np.asarray(model.tendon.tendon_attachment_body).size:  # static: fixed tendons only
        jac = tendon_jacobian(model, joint_q, body_q_base)
        return jac, jnp.zeros((jac.shape[0],), jac.dtype)
    q_dot = coord_rates(model, joint_q, joint_qd)
    jac, jac_dot = jax.jvp(lambda q: tendon_jacobian(model, q, body_q_base), (joint_q,), (q_dot,))
    return jac, jac_dot @ joint_qd.astype(jac.dtype)


def _flat_rows(lay: DynamicsLayout, jac: jnp.ndarray) -> jnp.ndarray:
    """``(k, nd)`` DOF rows → ``(k, A·D)`` rows over the flat block slots (padding zero)."""
    ext = jnp.concatenate([jac, jnp.zeros((jac.shape[0], 1), jac.dtype)], axis=1)
    return ext[:, lay.dof_index.reshape(-1)]


def lowrank_matrix(lay: DynamicsLayout, lowrank: tuple) -> jnp.ndarray:
    """``(A·D, A·D)`` world matrix ``Σ_k w_k j_k j_kᵀ`` of the rank-one rows ``lowrank = (J (k, nd), w (k,))``."""
    jac, w = lowrank
    rows = _flat_rows(lay, jac)
    return jnp.einsum("kn,km->nm", rows * w[:, None], rows)


def lowrank_apply(lay: DynamicsLayout, lowrank: tuple, x: jnp.ndarray) -> jnp.ndarray:
    """``Σ_k w_k j_k (j_k · x)`` for a flat ``(A·D,)`` vector ``x`` (no matrix formed)."""
    jac, w = lowrank
    rows = _flat_rows(lay, jac)
    return (w * (rows @ x)) @ rows
