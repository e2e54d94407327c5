"""Compliant (XPBD) constraint rows: the Lagrange-multiplier update and a drive row's compliance."""

from __future__ import annotations

import jax.numpy as jnp

__all__ = ["drive_compliance", "xpbd_delta"]


def xpbd_delta(c, lam, w, alpha_tilde):
    """``Δλ = (−C − α̃ λ) / (w + α̃)`` (0 where ``w + α̃ ≤ 0``), elementwise.

    Args:
        c: Constraint error ``C`` [m or rad].
        lam: Accumulated multiplier ``λ`` [N·s² or N·m·s²].
        w: Generalized inverse mass of the row [1/kg or 1/(kg·m²)].
        alpha_tilde: Time-scaled compliance ``α / dt²``.
    """
    den = w + alpha_tilde
    ok = den > 0.0
    return jnp.where(ok, (-c - alpha_tilde * lam) / jnp.where(ok, den, 1.0), 0.0)


def drive_compliance(stiffness, dt) -> tuple[jnp.ndarray, jnp.ndarray]:
    """A drive row's time-scaled compliance ``α̃ = 1 / (k dt²)`` and its on-mask ``k > 0``.

    Args:
        stiffness: Drive stiffness ``k`` [N/m or N·m/rad] (any shape).
        dt: Time step [s].

    Returns:
        ``(alpha_tilde, on)``: ``α̃`` (0 where the drive is off) and the mask.
    """
    on = stiffness > 0.0
    return jnp.where(on, 1.0 / jnp.where(on, stiffness, 1.0), 0.0) / (dt * dt), on
