"""Linearly implicit compliant contact with Coulomb friction: the default law of ``SolverFeatherstone``.

Each contact row is a spring–damper on the relative velocity ``u = v_B(p) − v_A(p)`` of the two bodies at
the contact point ``p`` (the midpoint ``Contacts.point``), evaluated at the *end* of the step (semi-implicit
Euler: ``u' = u + dt·J q̈`` at the current configuration). With the separation ``d`` and normal ``n`` (A → B)
the force on B is

* **normal**: ``f_n = max(ke·(−d) − α·u_n', 0)``, ``α = kd + dt·ke``. With the end-of-step separation
  ``d' = d + dt·u_n'`` this is ``max(ke·(−d') − kd·u_n', 0)``: spring and damper integrated implicitly
  (backward Euler), stable for any ``ke``/``kd`` and mass ratio, dissipative, and never pulling. The row is
  on exactly when the *predicted* end-of-step force is positive, so the force is a continuous function of
  the state: it grows from zero as the predicted gap closes (a fast body cannot tunnel in one large step)
  and falls to zero as the row separates, with no switch at ``d = 0``.
* **friction**: ``f_t = −μ·f_n·u_t' / √(|u_t'|² + ε²)``: Coulomb's law bounded by the normal force *of the
  same step* (spring, damper and implicit response together), regularised below the stiction velocity
  ``ε`` (a sticking contact creeps at ``ε·|f_t|/(μ f_n) < ε``).

Solve. For fixed linearisation the law is affine, ``f = f0 − W u'`` with ``f0 = ke·(−d)·n`` and
``W = α nnᵀ + β (I − nnᵀ)``, ``β = μ f_n / √(|u_t|² + ε²)``, and enters the joint-space system as
``(H + diag(e) + dt·Σ JᵀWJ) q̈ = τ − C q̇ − g + Σ Jᵀ(f0 − W J q̇)`` (:mod:`jaxart.dynamics.engine.contact_terms`).
:func:`linearize` evaluates the on-gate, ``f_n`` and ``β`` at a guess of ``u'``; the step solves a fixed
number of times (``contact_iterations``), each time at the previous solve's ``u'`` (the first at the
start-of-step velocity). Its fixed point is the law above: the normal on-set is that of the complementarity
problem (one iteration settles a single row), and the friction coefficient is the secant of the Coulomb law
(it converges monotonically and never reverses the sliding direction; at an impact that removes a fraction
``r`` of the slip speed in one step, the friction impulse is within ``r^k`` of Coulomb's after ``k``
corrections). No ``while_loop``: every iteration is one linear solve, differentiated implicitly.

Materials are Newton's mean of the two shapes' ``shape_material_ke/kd/mu``, or an explicit contact pair's own
``contact_pair_ke/kd/mu`` (:func:`average_materials`).

Gradients are the exact derivatives of the discrete step (every iteration is differentiated). The normal
force is continuous across touch/separate (its gradient jumps there, from the spring–damper's to zero);
the friction coefficient is smooth in ``u_t`` (no kink at stick/slip), and while sticking the derivative
of the friction force with respect to the tangential load is that of a stiff damper (well conditioned:
the contact velocity changes by ``ε/(μ f_n)`` per newton).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.contact.penalty import average_materials
from jaxart.math import transform_point

__all__ = ["ContactLaw", "ImplicitContactRows", "contact_law", "implicit_contact_forces", "implicit_contact_rows",
           "law_forces", "linearize"]


class ContactLaw(NamedTuple):
    """Per-row inputs of the implicit contact law (layout-generic: leaves may carry a trailing lane axis).

    Attributes:
        point: ``(c, 3)`` world contact point ``p`` [m] (both bodies' Jacobians are taken there).
        normal: ``(c, 3)`` world unit normal from A toward B.
        separation: ``(c,)`` signed distance ``d`` [m] (negative: penetration).
        ke: ``(c,)`` normal stiffness [N/m].
        kd: ``(c,)`` normal damping [N·s/m].
        mu: ``(c,)`` friction coefficient.
        active: ``(c,)`` whether the row holds a contact (padding rows are inactive).
        body_a: ``(c,)`` body of shape A (−1 static), numpy when static at trace time (``None`` in lanes).
        body_b: ``(c,)`` body of shape B (−1 static), numpy when static at trace time (``None`` in lanes).
        dt: Scalar time step [s].
        stiction_velocity: Scalar ``ε`` [m/s].
        activation_length: Scalar ``δ`` [m]: the normal force fades in over the last ``δ`` of predicted approach.
    """

    point: jax.Array
    normal: jax.Array
    separation: jax.Array
    ke: jax.Array
    kd: jax.Array
    mu: jax.Array
    active: jax.Array
    body_a: jax.Array | np.ndarray | None
    body_b: jax.Array | np.ndarray | None
    dt: jax.Array
    stiction_velocity: jax.Array
    activation_length: jax.Array


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


def _dot3(a, b):
    """Row-wise dot product over axis 1 (components), for ``(c, 3)`` or lane ``(c, 3, L)`` arrays."""
    return a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]


def contact_law(model, state, contacts, dt, *, stiction_velocity: float = 1e-4,
                activation_length: float = 1e-5) -> tuple[ContactLaw, jax.Array]:
    """The per-row law inputs and the start-of-step row velocities ``u`` (``(c, 3)``, B relative to A).

    Args:
        model: The model (materials, ``body_com``).
        state: Current state (``body_q``, ``body_qd``).
        contacts: :class:`~jaxart.collision.Contacts` from ``model.collide(state)``.
        dt: Time step [s].
        stiction_velocity: ``ε`` [m/s]: tangential speed below which a contact sticks.
        activation_length: ``δ`` [m] of the smooth normal force.

    Returns:
        ``(law, u)``.
    """
    dtype = contacts.separation.dtype
    ke, kd, _, _, mu = average_materials(model, contacts)
    body_a, body_b = (contacts.body_a, contacts.body_b) if contacts.slot_bodies is None else (
        np.asarray(b, np.int32) for b in contacts.slot_bodies)
    p = contacts.point
    u = _point_velocity(model, state, body_b, p) - _point_velocity(model, state, body_a, p)
    law = ContactLaw(point=p, normal=contacts.normal, separation=contacts.separation, ke=ke, kd=kd, mu=mu,
                     active=contacts.active, body_a=body_a, body_b=body_b, dt=jnp.asarray(dt, dtype),
                     stiction_velocity=jnp.asarray(stiction_velocity, dtype),
                     activation_length=jnp.asarray(activation_length, dtype))
    return law, u


def _smooth(law: ContactLaw, force):
    """``(F, σ)``: the smooth positive part ``F = s·softplus(force/s)`` of a normal force and its slope
    ``σ = sigmoid(force/s)``, with the force scale ``s = ke·δ`` (zero on inactive rows)."""
    scale = jnp.maximum(law.ke * law.activation_length, jnp.finfo(force.dtype).tiny)
    x = force / scale
    return (jnp.where(law.active, scale * jax.nn.softplus(x), 0.0),
            jnp.where(law.active, jax.nn.sigmoid(x), 0.0))


def _predicted_force(law: ContactLaw, un):
    """The spring–damper's normal force ``ke·(−d) − α·u_n`` at normal velocity ``un`` (before the positive part)."""
    return law.ke * (-law.separation) - (law.kd + law.dt * law.ke) * un


def _slip_scale(law: ContactLaw, u, un):
    """``1 / √(|u_t|² + ε²)`` of the tangential part of ``u``."""
    return jax.lax.rsqrt(jnp.maximum(_dot3(u, u) - un * un, 0.0) + law.stiction_velocity ** 2)


def linearize(law: ContactLaw, u, *, first: bool = False) -> ImplicitContactRows:
    """The affine law ``f = f0 − W u'`` at a guess ``u`` of the end-of-step row velocities.

    Normal: the tangent of ``f_n(u') = F(ke·(−d) − α·u_n')`` at ``u`` (``F`` the smooth positive part), i.e. the
    normal damping ``σ·α`` and ``f0·n`` with ``f0 = f_n(u) + σ·α·u_n``. Friction: ``β = μ f_n(u) / √(|u_t|² + ε²)``
    (the secant of the regularised Coulomb law at ``u``). Every coefficient is a smooth function of ``u`` and of
    the state. Layout-generic (rows and components lead, lanes trail).

    Args:
        law: The per-row inputs.
        u: ``(c, 3)`` row velocities (B relative to A) [m/s].
        first: The first linearisation, at the start-of-step velocities: friction then takes the spring's
            force ``F(ke·(−d))`` as its normal force (a lower bound at an impact, so the iterations approach the
            slip speed from above, where the secant converges fastest and never overshoots).

    Returns:
        The :class:`ImplicitContactRows` (inactive rows have zero force and damping).
    """
    n = law.normal
    un = _dot3(u, n)
    alpha = law.kd + law.dt * law.ke
    f_n, slope = _smooth(law, _predicted_force(law, un))
    lam = _smooth(law, law.ke * (-law.separation))[0] if first else f_n
    beta = law.mu * lam * _slip_scale(law, u, un)
    return ImplicitContactRows(point=law.point, normal=n, force0=(f_n + slope * alpha * un)[:, None] * n,
                               alpha=slope * alpha, beta=beta, body_a=law.body_a, body_b=law.body_b, dt=law.dt)


def law_forces(law: ContactLaw, u) -> jax.Array:
    """The law's force on B at end-of-step row velocities ``u`` (``(c, 3)``) [N]: the nonlinear law itself
    (equal to the affine force ``f0 − W u`` of the last linearisation once the iterations converged)."""
    n = law.normal
    un = _dot3(u, n)
    f_n = _smooth(law, _predicted_force(law, un))[0]
    ut = u - un[:, None] * n
    return f_n[:, None] * n - (law.mu * f_n * _slip_scale(law, u, un))[:, None] * ut


def implicit_contact_rows(model, state, contacts, dt, *, stiction_velocity: float = 1e-4,
                          activation_length: float = 1e-5) -> ImplicitContactRows:
    """The law linearised at the start-of-step velocities (the first iteration of the step's solve).

    Args:
        model: The model (materials, ``body_com``).
        state: Current state (``body_q``, ``body_qd``).
        contacts: :class:`~jaxart.collision.Contacts` from ``model.collide(state)``.
        dt: Time step [s].
        stiction_velocity: ``ε`` [m/s]: tangential speed below which a contact sticks.
        activation_length: ``δ`` [m] of the smooth normal force.

    Returns:
        The :class:`ImplicitContactRows`.
    """
    law, u = contact_law(model, state, contacts, dt, stiction_velocity=stiction_velocity,
                         activation_length=activation_length)
    return linearize(law, u, first=True)


def implicit_contact_forces(model, state, contacts, joint_qd_next, dt, *, stiction_velocity: float = 1e-4,
                            activation_length: float = 1e-5) -> jax.Array:
    """World force of every contact row on shape B's body during the step ``state → joint_qd_next`` [N].

    The law's force at the end-of-step point velocity ``u'`` of the new joint velocities at the step's
    (old) configuration (:func:`law_forces`). Shape A's body receives ``−f`` at the same point
    (``Contacts.point``); zero for rows that are off.

    Args:
        model: The model.
        state: State at the start of the step (the one passed to ``solver.step``).
        contacts: ``model.collide(state)``, as passed to the step.
        joint_qd_next: ``(joint_dof_count,)`` joint velocities the step returned.
        dt: The step's time step [s].
        stiction_velocity: The solver's ``stiction_velocity`` [m/s].
        activation_length: The solver's ``contact_activation_length`` [m].

    Returns:
        ``(capacity, 3)`` forces on B [N].
    """
    from jaxart.kinematics.fk import eval_fk

    law, _ = contact_law(model, state, contacts, dt, stiction_velocity=stiction_velocity,
                         activation_length=activation_length)
    moved = eval_fk(model, state.joint_q, joint_qd_next, state)
    u = _point_velocity(model, moved, law.body_b, law.point) - _point_velocity(model, moved, law.body_a, law.point)
    return law_forces(law, u)
