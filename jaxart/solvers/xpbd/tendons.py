"""Tendons of SolverXPBD: one compliant row, one friction row and one hard limit row per tendon.

Each tendon's length ``L`` and its per-body gradient entries come from :mod:`jaxart.solvers.maximal.tendons`
(fixed tendons from the joints' anchor frames, spatial tendons from the attachment points). Per round of the
projection, after the joint and equality rows:

* **compliant row** ``C = L − L̃`` with stiffness ``k`` (compliance ``1/k``, XPBD
  ``Δλ = (−C − α̃λ)/(w + α̃)``, ``λ`` carried over the rounds): the implicit form of the spring, damping and
  actuator drive, as the joint drive rows of :mod:`jaxart.solvers.xpbd.joints`. With the spring ``k_s`` (active
  when the step-start length ``L₀`` is outside the dead band ``tendon_springlength``, toward its nearest edge
  ``L_s``), damping ``d``, actuator gains ``ke, kd`` and targets ``L*, L̇*``:

  ``k = k_s + ke + (d + kd)/dt + a/dt²``,
  ``L̃ = (k_s L_s + ke L* + (d/dt) L₀ + (kd/dt)(L₀ + L̇* dt) + (a/dt²)(L₀ + L̇₀ dt)) / k``,

  i.e. the force ``k_s (L_s − L) + ke (L* − L) + kd (L̇* − L̇) − d L̇ − a (L̇ − L̇₀)/dt`` at the end-of-step length
  and rate ``L̇ = (L − L₀)/dt``; stable at any stiffness and step. The last term is the tendon armature ``a``
  (``tendon_armature``, an inertia of the length: the force ``−a L̈`` of the kinetic energy ``½ a L̇²``, implicit
  Euler, ``L̇₀`` the step-start rate).
* **friction row** (``tendon_frictionloss`` ``μ``, Coulomb): ``C = L − L₀`` (the tendon at rest over the step)
  with its accumulated multiplier clamped to ``|λ| ≤ μ dt²`` (a force of at most ``μ``), like the contacts'
  static friction: the tendon sticks while the other forces along it stay below ``μ`` and slips with the
  force ``μ`` otherwise.
* **limit row** (hard, zero compliance): ``C = L − clip(L, lower + margin, upper − margin)`` projected to zero
  when violated (``tendon_margin``: the range shrunk as in :func:`~jaxart.dynamics.tendon_forces.tendon_limit_bounds`;
  ``tendon_limit_ke/kd`` are the penalty gains of the explicit solvers and are not used here).
* **effort limit** ``tendon_effort_limit`` bounds the actuator force as in ``SolverFeatherstone``'s implicit
  actuator (:mod:`jaxart.dynamics.tendon_forces`): the actuator's force at the step start with the look-ahead,
  ``f* = tendon_f + ke (L* − L₀ − dt L̇₀) + kd (L̇* − L̇₀)``, decides once per step; while ``|f*|`` exceeds the
  limit the actuator is the constant force ``clip(f*, ±limit)``, applied explicitly like ``tendon_f``, and its
  gains ``ke, kd`` leave the compliant row (a saturated drive adds no stiffness). Unsaturated, the row is the one
  above (the limit does not bound the drive part of the row's force within the step, as in SolverFeatherstone).

``Control.tendon_f`` is an explicit force: its body wrenches join the prediction's external forces. The rows
of different tendons are solved together (Jacobi); the generalised inverse mass ``w = J M⁻¹ Jᵀ`` of a row
sums the products of its entries that share a body (e.g. a spatial tendon with two points on one link).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxart.dynamics.tendon_forces import tendon_controls, tendon_limit_bounds
from jaxart.laws.compliance import drive_compliance, xpbd_delta
from jaxart.math.small import matvec
from jaxart.solvers.maximal.tendons import TendonEntries, tendon_entries, tendon_speeds, tendon_wrenches
from jaxart.solvers.xpbd.common import Bodies, apply_impulses, make_bodies

__all__ = ["TendonRows", "initial_lambda", "solve_tendons", "tendon_rows"]


class TendonRows(NamedTuple):
    """Per-step constants of the tendon rows (traced).

    Attributes:
        q_ref: ``(joint_coord_count,)`` step-start ``joint_q`` (unwrapping reference of fixed-tendon angles).
        target: ``(T,)`` compliant-row target length ``L̃`` [m].
        stiffness: ``(T,)`` compliant-row stiffness ``k`` [N/m] (0: no row).
        lower, upper: ``(T,)`` length limits [m], shrunk by the margins.
        force: ``(body_count, 6)`` body wrenches of ``Control.tendon_f`` and of saturated actuators (explicit, in
            the prediction).
        length0: ``(T,)`` step-start lengths [m] (the friction row's target).
        friction: ``(T,)`` bound ``μ dt²`` of the friction row's multiplier.
    """

    q_ref: jnp.ndarray
    target: jnp.ndarray
    stiffness: jnp.ndarray
    lower: jnp.ndarray
    upper: jnp.ndarray
    force: jnp.ndarray
    length0: jnp.ndarray
    friction: jnp.ndarray


def initial_lambda(rows: TendonRows) -> jnp.ndarray:
    """``(2, T)`` zero multipliers of the compliant and friction rows (the projection rounds' carry)."""
    return jnp.zeros((2, *rows.target.shape), rows.target.dtype)


def tendon_rows(model, state, control, dt) -> TendonRows:
    """The rows' constants for one step from its starting ``state`` (module docstring)."""
    ent = tendon_entries(model, state.body_q, state.joint_q)
    length0 = ent.length
    f_act, target_len, target_vel = tendon_controls(model, control)
    f_act = f_act.astype(length0.dtype)
    low, high = model.tendon_springlength[:, 0], model.tendon_springlength[:, 1]
    k_s = jnp.where((length0 > high) | (length0 < low), model.tendon_stiffness, 0.0)
    rest = jnp.clip(length0, low, high)
    ke, kd, d = model.tendon_target_ke, model.tendon_target_kd, model.tendon_damping
    # effort limit (module docstring): a saturated actuator is its clamped look-ahead force, without its gains
    speed0 = tendon_speeds(ent, state.body_qd)
    ahead = f_act + ke * (target_len - length0 - dt * speed0) + kd * (target_vel - speed0)
    limit = model.tendon_effort_limit
    saturated = jnp.abs(ahead) > limit
    f_act = jnp.where(saturated, jnp.clip(ahead, -limit, limit), f_act)
    ke, kd = jnp.where(saturated, 0.0, ke), jnp.where(saturated, 0.0, kd)
    inertia = model.tendon_armature / (dt * dt)
    k = k_s + ke + (d + kd) / dt + inertia
    num = (k_s * rest + ke * target_len + d / dt * length0 + kd / dt * (length0 + target_vel * dt)
           + inertia * (length0 + speed0 * dt))
    ok = k > 0.0
    target = jnp.where(ok, num / jnp.where(ok, k, 1.0), length0)
    force = tendon_wrenches(ent, f_act.astype(length0.dtype), model.body_count)
    lower, upper = tendon_limit_bounds(model)
    return TendonRows(state.joint_q, target, k, lower, upper, force.astype(state.body_q.dtype), length0,
                      model.tendon_frictionloss * dt * dt)


def _weights(b: Bodies, ent: TendonEntries) -> jnp.ndarray:
    """``(T,)`` generalised inverse masses ``J M⁻¹ Jᵀ`` of the rows (entries on one body combined)."""
    inv_m, inv_iw = b.inv_m[ent.bodies], b.inv_iw[ent.bodies]  # (T, K), (T, K, 3, 3)
    lin = ent.lin * inv_m[..., None]
    i_ang = matvec(inv_iw, ent.ang)
    same = ent.bodies[:, :, None] == ent.bodies[:, None, :]  # static (T, K, K); the world has zero inverse mass
    pair = jnp.einsum("tid,tjd->tij", lin, ent.lin) + jnp.einsum("tid,tjd->tij", i_ang, ent.ang)
    return jnp.sum(jnp.where(jnp.asarray(same), pair, 0.0), (1, 2))


def _project(model, b: Bodies, ent: TendonEntries, dlam):
    """Move the bodies by the positional impulses ``Δλ (T,)`` along the rows' entries."""
    lin = (ent.lin * dlam[:, None, None]).reshape(-1, 3)
    ang = (ent.ang * dlam[:, None, None]).reshape(-1, 3)
    return apply_impulses(model, b, ent.bodies.reshape(-1), lin, ang)


def solve_tendons(model, rows: TendonRows, q, lam, inv_m, inv_i, dt):
    """One projection of the compliant rows, the friction rows, then the limit rows.

    Returns:
        ``(poses (n, 7), λ (2, T))``: the multipliers of the compliant and friction rows (:func:`initial_lambda`).
    """
    dtype = q.dtype
    b = make_bodies(model, q, inv_m, inv_i)
    ent = tendon_entries(model, q, rows.q_ref)
    alpha_t, on = drive_compliance(rows.stiffness, dt)
    dlam = jnp.where(on, xpbd_delta(ent.length - rows.target, lam[0], _weights(b, ent), alpha_t), 0.0)
    q = _project(model, b, ent, dlam.astype(dtype))
    b = make_bodies(model, q, inv_m, inv_i)
    ent = tendon_entries(model, q, rows.q_ref)
    stick = lam[1] + xpbd_delta(ent.length - rows.length0, jnp.zeros_like(dlam), _weights(b, ent), 0.0)
    lam_f = jnp.clip(stick, -rows.friction, rows.friction)
    q = _project(model, b, ent, (lam_f - lam[1]).astype(dtype))
    b = make_bodies(model, q, inv_m, inv_i)
    ent = tendon_entries(model, q, rows.q_ref)
    c = ent.length - jnp.clip(ent.length, rows.lower, rows.upper)
    dlim = xpbd_delta(c, jnp.zeros_like(c), _weights(b, ent), 0.0)
    return _project(model, b, ent, dlim.astype(dtype)), jnp.stack([lam[0] + dlam, lam_f])
