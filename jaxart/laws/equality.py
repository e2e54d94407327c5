"""Equality-constraint quantities shared by the reduced- and maximal-coordinate solvers."""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.math import quat_conjugate, quat_rotate, transform_point
from jaxart.math.small import dot_last

__all__ = ["connect_anchor2", "joint_polynomial", "mimic_polynomial"]


def connect_anchor2(x1_0, x2_0, anchor1) -> jnp.ndarray:
    """CONNECT's body-2 point: where ``anchor1`` (body-1 frame) lies in body 2 at the initial poses.

    Args:
        x1_0: ``(..., 7)`` initial world pose of body 1 (identity for the world).
        x2_0: ``(..., 7)`` initial world pose of body 2.
        anchor1: ``(..., 3)`` the anchor in body 1's frame [m].

    Returns:
        ``(..., 3)`` the anchor in body 2's frame [m].
    """
    return quat_rotate(quat_conjugate(x2_0[..., 3:]), transform_point(x1_0, anchor1) - x2_0[..., :3])


def joint_polynomial(coef, x) -> tuple[jnp.ndarray, jnp.ndarray]:
    """JOINT equality's polynomial ``P(x) = Σ_k c_k x^k`` (k = 0..4) and its slope ``P'(x)``.

    Args:
        coef: ``(..., 5)`` coefficients ``c_0..c_4``.
        x: ``(...)`` the second joint's coordinate [m or rad].

    Returns:
        ``(value, slope)``, each ``(...)``.
    """
    x2 = x * x
    powers = jnp.stack([jnp.ones_like(x), x, x2, x2 * x, x2 * x2], -1)
    value = dot_last(coef, powers)
    slope = dot_last(coef[..., 1:], jnp.asarray([1.0, 2.0, 3.0, 4.0], x.dtype) * powers[..., :4])
    return value, slope


def mimic_polynomial(coef0, coef1) -> jnp.ndarray:
    """A mimic constraint ``q_0 = coef0 + coef1·q_1`` as JOINT polynomial coefficients ``(coef0, coef1, 0, 0, 0)``.

    Args:
        coef0: ``(...)`` offset [m or rad].
        coef1: ``(...)`` ratio.

    Returns:
        ``(..., 5)`` coefficients for :func:`joint_polynomial`.
    """
    zero = jnp.zeros_like(coef0)
    return jnp.stack([coef0, coef1, zero, zero, zero], -1)
