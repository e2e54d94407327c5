"""Linearly implicit compliant contact: the default contact law of ``SolverFeatherstone``.

Each active contact row is a spring–damper on the relative velocity ``u = v_B(p) − v_A(p)`` of the two
bodies at the contact point ``p`` (the midpoint ``Contacts.point``), evaluated at the *end* of the step
(semi-implicit Euler: ``u' = u + dt·J q̈`` at the current configuration). The force on B is

``f = f0 − W u'``,  ``f0 = ke·(−d)·n``,  ``W = α n nᵀ + β (I − n nᵀ)``

* **normal**: ``α = kd + dt·ke``. With ``d' = d + dt·u_n'`` this is ``ke·(−d') − kd·u_n'``: the spring
  and damper are integrated implicitly (backward Euler), stable for any ``ke``/``kd`` and mass ratio,
  and dissipative (no energy gain). A row is *on* when it penetrates (``d < 0``) or when the current
  velocity would close its gap within the step (``d + dt·u_n < 0``: speculative contact, so a fast body
  cannot tunnel deep in one large step). Rows that are off exert nothing. One linear solve cannot
  enforce ``f_n ≥ 0``: a penetrating row that separates during the step may pull for that one step (a
  dissipative, one-step adhesion; the next step starts with a gap and the row is off).
* **friction**: a viscous law with a *lagged* coefficient ``β = μ·λ / √(|u_t|² + ε²)``, where
  ``λ = max(ke·(−d), 0)`` is the spring's normal force at the start of the step and ``ε`` the stiction
  velocity. While sliding, the force is ``μλ`` against the motion (Coulomb, up to the factor
  ``|u_t|/(|u_t| + dt·μλ/m)`` of the implicit damping, which never reverses the sliding direction);
  once ``|u_t| ≲ ε`` the implicit damping holds the contact with a creep velocity ``ε·|f_t|/(μλ)``
  below ``ε`` (sticking: a box on an incline flatter than the friction angle creeps at ``ε·tanθ/μ``).

Materials are Newton's mean of the two shapes' ``shape_material_ke/kd/mu`` (:func:`average_materials`).

Gradients: the law is piecewise smooth. Within a fixed contact set (same rows on, same slip/stick
regime) the derivatives are exact derivatives of the discrete step. At the touch/separate boundary the
on-gate is a hard switch (zero gradient across it; the force is continuous where ``ke·(−d) − α u_n``
crosses zero). The friction coefficient is smooth in ``u_t`` (no kink at stick/slip), and while
sticking the derivative of the friction force with respect to the tangential load is that of a stiff
damper (well conditioned: the contact velocity changes by ``ε/(μλ)`` per newton).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.contact.penalty import average_materials
from jaxart.math import small, transform_point

__all__ = ["ImplicitContactRows", "implicit_contact_forces", "implicit_contact_rows"]


class ImplicitContactRows(NamedTuple):
    """Per-row inputs of the implicit contact terms in the joint-space solve.

    Attributes:
        point: ``(c, 3)`` world contact point ``p`` [m] (both bodies' Jacobians are taken there).
        normal: ``(c, 3)`` world unit normal from A toward B.
        force0: ``(c, 3)`` force on B at the start of the step ``f0 = ke·(−d)·n`` [N] (zero when off).
        alpha: ``(c,)`` normal damping of the implicit law ``kd + dt·ke`` [N·s/m] (zero when off).
        beta: ``(c,)`` tangential damping ``μλ / √(|u_t|² + ε²)`` [N·s/m] (zero when off).
        body_a: ``(c,)`` body of shape A (−1 static), numpy when static at trace time.
        body_b: ``(c,)`` body of shape B (−1 static), numpy when static at trace time.
        dt: Scalar time step [s] (the implicit terms are ``dt·JᵀWJ``).
    """

    point: jax.Array
    normal: jax.Array
    force0: jax.Array
    alpha: jax.Array
    beta: jax.Array
    body_a: jax.Array | np.ndarray
    body_b: jax.Array | np.ndarray
    dt: jax.Array


def _point_velocity(model, state, body, point):
    """World velocity of ``point`` moving with ``body`` (zero for static bodies −1)."""
    b = jnp.maximum(body, 0)
    com = transform_point(state.body_q[b], model.body_com[b].astype(point.dtype))
    qd = state.body_qd[b]
    vel = qd[:, :3] + jnp.cross(qd[:, 3:], point - com)
    return jnp.where((jnp.asarray(body) < 0)[:, None], 0.0, vel)


def implicit_contact_rows(model, state, contacts, dt, *, stiction_velocity: float = 1e-4) -> ImplicitContactRows:
    """Evaluate the implicit contact law of every row (see the module docstring).

    Args:
        model: The model (materials, ``body_com``).
        state: Current state (``body_q``, ``body_qd``).
        contacts: :class:`~jaxart.collision.Contacts` from ``model.collide(state)``.
        dt: Time step [s].
        stiction_velocity: ``ε`` [m/s]: tangential speed below which a contact sticks.

    Returns:
        The :class:`ImplicitContactRows` (rows that are off or inactive have zero force and damping).
    """
    dtype = contacts.separation.dtype
    dt = jnp.asarray(dt, dtype)
    ke, kd, _, _, mu = average_materials(model, contacts)
    body_a, body_b = (contacts.body_a, contacts.body_b) if contacts.slot_bodies is None else (
        np.asarray(b, np.int32) for b in contacts.slot_bodies)
    n, d, p = contacts.normal, contacts.separation, contacts.point
    u = _point_velocity(model, state, body_b, p) - _point_velocity(model, state, body_a, p)
    un = small.dot_last(u, n)
    ut = u - un[:, None] * n
    alpha = kd + dt * ke
    on = contacts.active & ((d < 0.0) | (d + dt * un < 0.0))
    lam = jnp.maximum(ke * (-d), 0.0)
    speed = jnp.sqrt(small.dot_last(ut, ut) + jnp.asarray(stiction_velocity, dtype) ** 2)
    beta = mu * lam / speed
    zero = jnp.zeros_like(d)
    return ImplicitContactRows(point=p, normal=n, force0=jnp.where(on[:, None], (ke * (-d))[:, None] * n, 0.0),
                               alpha=jnp.where(on, alpha, zero), beta=jnp.where(on, beta, zero),
                               body_a=body_a, body_b=body_b, dt=dt)


def implicit_contact_forces(model, state, contacts, joint_qd_next, dt, *,
                            stiction_velocity: float = 1e-4) -> jax.Array:
    """World force of every contact row on shape B's body during the step ``state → joint_qd_next`` [N].

    The implicit law's force ``f0 − W u'`` with the end-of-step point velocity ``u'`` of the new joint
    velocities at the step's (old) configuration, i.e. the force the solve applied. Shape A's body
    receives ``−f`` at the same point (:attr:`ImplicitContactRows.point`); zero for rows that are off.

    Args:
        model: The model.
        state: State at the start of the step (the one passed to ``solver.step``).
        contacts: ``model.collide(state)``, as passed to the step.
        joint_qd_next: ``(joint_dof_count,)`` joint velocities the step returned.
        dt: The step's time step [s].
        stiction_velocity: The solver's ``stiction_velocity`` [m/s].

    Returns:
        ``(capacity, 3)`` forces on B [N].
    """
    from jaxart.kinematics.fk import eval_fk

    rows = implicit_contact_rows(model, state, contacts, dt, stiction_velocity=stiction_velocity)
    moved = eval_fk(model, state.joint_q, joint_qd_next, state)
    u = _point_velocity(model, moved, rows.body_b, rows.point) - _point_velocity(model, moved, rows.body_a, rows.point)
    un = small.dot_last(u, rows.normal)
    wu = rows.beta[:, None] * u + ((rows.alpha - rows.beta) * un)[:, None] * rows.normal
    return rows.force0 - wu
