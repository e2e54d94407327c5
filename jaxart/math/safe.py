"""Gradient-safe elementary functions (double-``where`` rule)."""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.math import small

TINY = 1e-30


def safe_norm(v: jnp.ndarray, axis: int = -1, keepdims: bool = False) -> jnp.ndarray:
    """Euclidean norm whose gradient at ``v = 0`` is zero instead of NaN.

    Args:
        v: Array of vectors.
        axis: Axis along which the norm is taken.
        keepdims: Keep the reduced axis with size one.

    Returns:
        The norm, with the reduced axis removed unless ``keepdims``.
    """
    sq = small.sum_axis(v * v, axis, keepdims=keepdims)
    is_zero = sq <= TINY
    safe_sq = jnp.where(is_zero, 1.0, sq)
    return jnp.where(is_zero, 0.0, jnp.sqrt(safe_sq))


def safe_normalize(v: jnp.ndarray, axis: int = -1, fallback: jnp.ndarray | None = None) -> jnp.ndarray:
    """Normalise vectors along ``axis``; zero vectors map to ``fallback`` (default: zeros).

    Args:
        v: Array of vectors.
        axis: Axis holding the vector components.
        fallback: Value returned where ``v`` is zero; broadcast against ``v``.

    Returns:
        Unit vectors (or the fallback) with the shape of ``v``.
    """
    n = small.spread(safe_norm(v, axis=axis, keepdims=True), v.shape[axis], axis)  # see small.py: no reduce
    is_zero = n <= 0.0
    out = v / jnp.where(is_zero, 1.0, n)
    if fallback is None:
        fallback = jnp.zeros_like(v)
    return jnp.where(is_zero, fallback, out)


def safe_atan2(y: jnp.ndarray, x: jnp.ndarray) -> jnp.ndarray:
    """``atan2`` with a zero (not NaN) gradient at ``x = y = 0``.

    Args:
        y: Sine-like argument.
        x: Cosine-like argument.

    Returns:
        The angle in ``(-pi, pi]``; 0 where both arguments vanish.
    """
    both_zero = (x * x + y * y) <= TINY
    return jnp.where(both_zero, 0.0, jnp.arctan2(jnp.where(both_zero, 0.0, y), jnp.where(both_zero, 1.0, x)))


def safe_sinc_half(theta: jnp.ndarray) -> jnp.ndarray:
    """``sin(theta / 2) / theta`` with a Taylor branch near zero (value 1/2 at 0).

    Args:
        theta: Angle in radians.

    Returns:
        ``sin(theta/2)/theta``, smooth and exactly differentiable through zero.
    """
    small = jnp.abs(theta) < 1e-3
    t = jnp.where(small, 1.0, theta)
    taylor = 0.5 - theta * theta / 48.0 + theta**4 / 3840.0
    return jnp.where(small, taylor, jnp.sin(0.5 * t) / t)


def inv3(m: jnp.ndarray, eps: float = 1e-12) -> jnp.ndarray:
    """Inverse of 3×3 matrices ``(..., 3, 3)`` by the adjugate (no LAPACK custom call).

    Near-singular matrices (``|det| < eps``) return the adjugate divided by ``±eps`` instead of
    dividing by zero, so values and gradients stay finite.
    """
    c0 = jnp.cross(m[..., 1, :], m[..., 2, :])
    c1 = jnp.cross(m[..., 2, :], m[..., 0, :])
    c2 = jnp.cross(m[..., 0, :], m[..., 1, :])
    det = small.dot_last(m[..., 0, :], c0)[..., None, None]
    det = jnp.where(jnp.abs(det) < eps, jnp.where(det < 0.0, -eps, eps), det)
    return jnp.stack([c0, c1, c2], axis=-1) / det
