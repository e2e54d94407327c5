"""Implicit tendon terms of :class:`~jaxart.solvers.SolverFeatherstone` (joint-space Jacobian and rank-one rows).

Each tendon's scalar force ``f(L, L̇)`` (spring, damping, penalty limit and actuator drive of
:mod:`jaxart.dynamics.tendon_forces`) is evaluated at the end-of-step length and rate, linearised about the
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
load), :func:`tendon_step_loads`.

Tendon friction (its slope ``μ/ε (1 − tanh²)``) joins ``D``, and tendon armature ``a`` (an inertia of the length)
adds ``a`` to ``w`` (``a JᵀJ`` in the matrix) and ``−a J̇q̇`` to the tendon force, ``J̇q̇`` from
:func:`~jaxart.dynamics.tendon_jacobian.tendon_jacobian_rate`; these rows are used in both drive modes.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.dynamics.layout import DynamicsLayout
from jaxart.dynamics.tendon_forces import (
    tendon_actuator_forces,
    tendon_friction,
    tendon_gains,
    tendon_kinematics,
    tendon_loads,
    tendon_scalar_forces,
)
from jaxart.dynamics.tendon_jacobian import tendon_jacobian_rate

__all__ = ["flat_dof_rows", "lowrank_apply", "lowrank_matrix", "tendon_step_loads"]


def flat_dof_rows(lay: DynamicsLayout, jac: jnp.ndarray) -> jnp.ndarray:
    """``(k, nd)`` DOF rows → ``(k, A·D)`` rows over the flat block slots (padding zero)."""
    ext = jnp.concatenate([jac, jnp.zeros((jac.shape[0], 1), jac.dtype)], axis=1)
    return ext[:, lay.dof_index.reshape(-1)]


def lowrank_matrix(lay: DynamicsLayout, lowrank: tuple) -> jnp.ndarray:
    """``(A·D, A·D)`` world matrix ``Σ_k w_k j_k j_kᵀ`` of the rank-one rows ``lowrank = (J (k, nd), w (k,))``."""
    jac, w = lowrank
    rows = flat_dof_rows(lay, jac)
    return jnp.einsum("kn,km->nm", rows * w[:, None], rows)


def lowrank_apply(lay: DynamicsLayout, lowrank: tuple, x: jnp.ndarray) -> jnp.ndarray:
    """``Σ_k w_k j_k (j_k · x)`` for a flat ``(A·D,)`` vector ``x`` (no matrix formed)."""
    jac, w = lowrank
    rows = flat_dof_rows(lay, jac)
    return (w * (rows @ x)) @ rows


def tendon_step_loads(model, control, joint_q, joint_qd, body_q, body_qd, dt, *, implicit: bool,
                      friction_eps: float = 1e-2):
    """Tendon loads of one :class:`~jaxart.solvers.SolverFeatherstone` step (passive forces, friction, armature
    and actuators).

    Args:
        model: The model.
        control: Control (``tendon_f`` and drive targets) or ``None``.
        joint_q, joint_qd, body_q, body_qd: The step's starting state.
        dt: Time step [s].
        implicit: Linearise the forces at the end of the step (:mod:`jaxart.dynamics.engine.tendon_terms`).
        friction_eps: Velocity scale ``ε`` [m/s] of the smooth Coulomb friction (the solver's
            ``friction_smoothing``).

    Returns:
        ``(joint_f (nd,), body_f (nb, 6), lowrank)``: loads of the forces ``f + f_fric − a J̇q̇ − K dt L̇``
        (explicit: without ``K dt L̇``) and the rank-one rows ``(J (nten, nd), w (nten,))`` of the joint-space
        matrix with ``w = a + C dt + D dt + K dt²`` (explicit: ``w = a + C dt``; ``a`` the armature, ``C`` the
        friction's slope). The actuator force is clamped by ``tendon_effort_limit`` (implicit: with its
        look-ahead, and a saturated actuator leaves ``K``, ``D``; module docstring).
    """
    length, speed, spatial = tendon_kinematics(model, joint_q, joint_qd, body_q, body_qd)
    passive = tendon_scalar_forces(model, length, speed)
    act, saturated = tendon_actuator_forces(model, control, length, speed, look=dt if implicit else 0.0)
    fric, c_fric = tendon_friction(model, speed, friction_eps)
    jac, bias = tendon_jacobian_rate(model, joint_q, joint_qd, body_q)
    armature = model.tendon_armature
    f = passive + act + fric - armature * bias
    w = armature + c_fric * dt
    if implicit:
        k, d = tendon_gains(model, length, saturated)
        k_passive = k - jnp.where(saturated, 0.0, model.tendon_target_ke)  # the actuator's look-ahead is in ``act``
        f = f - k_passive * dt * speed
        w = w + d * dt + k * dt * dt
    joint_f, body_f = tendon_loads(model, f, spatial)
    return joint_f, body_f, (jac, w)
