"""MuJoCo's muscle model: activation time scales, force–length–velocity gain and passive force.

Parameters per muscle (``Model.actuator_muscle`` columns, see :data:`MUSCLE_COLUMNS`): activation and
deactivation time constants ``τa``, ``τd`` [s] and the smoothing width ``w`` of their blend; the operating range
``(r0, r1)`` of normalised lengths; the peak force ``F0`` [N]; the length-curve bounds ``lmin``, ``lmax``; the
shortening velocity ``vmax`` [L0/s]; the passive-force scale ``fpmax`` and the lengthening force ``fvmax`` (in
``F0``); the actuator-length range ``(ℓ0, ℓ1)`` [m or rad] that maps onto ``(r0, r1)``.

With actuator length ``ℓ`` and velocity ``ℓ̇`` (``gear`` times the joint coordinate or tendon length):
``L0 = (ℓ1 − ℓ0)/(r1 − r0)``, normalised length ``L = r0 + (ℓ − ℓ0)/L0`` and velocity ``V = ℓ̇/(L0 vmax)``;
the force is ``−F0 (FL(L) FV(V) a + FP(L))`` (negative: the muscle pulls), with FL two pairs of quadratic
arcs peaking at ``L = 1``, FV quadratic to ``fvmax`` and FP a cubic then linear passive term. The activation rate
is ``(u − a)/τ`` with ``τ = τa (0.5 + 1.5 a)`` when activating and ``τd / (0.5 + 1.5 a)`` when deactivating
(blended over ``|u − a| < w/2`` by a quintic smoothstep), ``u`` and ``a`` clipped to ``[0, 1]`` there.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["MUSCLE_COLUMNS", "muscle_activation_rate", "muscle_force"]

#: Column names of ``Model.actuator_muscle``.
MUSCLE_COLUMNS = ("tau_act", "tau_deact", "tau_smooth", "range0", "range1", "force", "lmin", "lmax", "vmax",
                  "fpmax", "fvmax", "lengthrange0", "lengthrange1")
_TINY = 1e-15


def _col(prm: jax.Array, name: str) -> jax.Array:
    return prm[..., MUSCLE_COLUMNS.index(name)]


def _pos(x):
    return jnp.maximum(_TINY, x)


def _smoothstep(x):
    """Quintic step: 0 below 0, 1 above 1, ``x³(6x² − 15x + 10)`` between."""
    y = jnp.clip(x, 0.0, 1.0)
    return y**3 * (3.0 * y * (2.0 * y - 5.0) + 10.0)


def muscle_activation_rate(prm: jax.Array, ctrl: jax.Array, act: jax.Array) -> jax.Array:
    """``ȧ`` of each muscle for inputs ``ctrl`` and activations ``act`` (``(n,)`` each, ``prm`` ``(n, 13)``)."""
    u = jnp.clip(ctrl, 0.0, 1.0)
    a = jnp.clip(act, 0.0, 1.0)
    tau_a = _col(prm, "tau_act") * (0.5 + 1.5 * a)
    tau_d = _col(prm, "tau_deact") / (0.5 + 1.5 * a)
    w = _col(prm, "tau_smooth")
    du = u - a
    sharp = jnp.where(du > 0.0, tau_a, tau_d)
    blend = tau_d + (tau_a - tau_d) * _smoothstep(du / _pos(w) + 0.5)
    return du / _pos(jnp.where(w < _TINY, sharp, blend))


def _length_curve(L, lmin, lmax):
    a, b = 0.5 * (lmin + 1.0), 0.5 * (1.0 + lmax)
    rise = 0.5 * ((L - lmin) / _pos(a - lmin)) ** 2
    top_lo = 1.0 - 0.5 * ((1.0 - L) / _pos(1.0 - a)) ** 2
    top_hi = 1.0 - 0.5 * ((L - 1.0) / _pos(b - 1.0)) ** 2
    fall = 0.5 * ((lmax - L) / _pos(lmax - b)) ** 2
    out = jnp.where(L <= a, rise, jnp.where(L <= 1.0, top_lo, jnp.where(L <= b, top_hi, fall)))
    return jnp.where((L < lmin) | (L > lmax), 0.0, out)


def _velocity_curve(V, fvmax):
    y = fvmax - 1.0
    mid = fvmax - (y - V) ** 2 / _pos(y)
    return jnp.where(V <= -1.0, 0.0, jnp.where(V <= 0.0, (V + 1.0) ** 2, jnp.where(V <= y, mid, fvmax)))


def _passive_curve(L, lmax, fpmax):
    b = 0.5 * (1.0 + lmax)
    cubic = 0.25 * fpmax * ((L - 1.0) / _pos(b - 1.0)) ** 3
    linear = 0.25 * fpmax * (1.0 + 3.0 * (L - b) / _pos(b - 1.0))
    return jnp.where(L <= 1.0, 0.0, jnp.where(L <= b, cubic, linear))


def muscle_force(prm: jax.Array, length: jax.Array, velocity: jax.Array, act: jax.Array) -> jax.Array:
    """Actuator force [N or N·m] of each muscle (negative in tension), MuJoCo's ``gain·act + bias``.

    Args:
        prm: ``(n, 13)`` muscle parameters (:data:`MUSCLE_COLUMNS`).
        length: ``(n,)`` actuator lengths ``ℓ`` (gear times the joint coordinate or tendon length).
        velocity: ``(n,)`` actuator velocities ``ℓ̇``.
        act: ``(n,)`` activations.

    Returns:
        ``(n,)`` actuator forces (the generalized force is ``gear`` times this).
    """
    l0 = (_col(prm, "lengthrange1") - _col(prm, "lengthrange0")) / _pos(_col(prm, "range1") - _col(prm, "range0"))
    L = _col(prm, "range0") + (length - _col(prm, "lengthrange0")) / _pos(l0)
    V = velocity / _pos(l0 * _col(prm, "vmax"))
    gain = _length_curve(L, _col(prm, "lmin"), _col(prm, "lmax")) * _velocity_curve(V, _col(prm, "fvmax"))
    passive = _passive_curve(L, _col(prm, "lmax"), _col(prm, "fpmax"))
    return -_col(prm, "force") * (gain * act + passive)
