"""Angle wrapping shared by the joint laws, the XPBD rows and the equality/tendon coordinates."""

from __future__ import annotations

import jax.numpy as jnp

__all__ = ["nearest_turn", "whole_turns", "wrap_angle"]


def whole_turns(angle: jnp.ndarray) -> jnp.ndarray:
    """The whole turns ``2π·⌊(θ + π) / 2π⌋`` [rad] that :func:`wrap_angle` removes from ``angle`` (any shape)."""
    return 2.0 * jnp.pi * jnp.floor((angle + jnp.pi) / (2.0 * jnp.pi))


def wrap_angle(angle: jnp.ndarray) -> jnp.ndarray:
    """``angle`` [rad] (any shape) wrapped into ``[−π, π)``."""
    return angle - whole_turns(angle)


def nearest_turn(angle: jnp.ndarray, reference: jnp.ndarray) -> jnp.ndarray:
    """The copy ``θ + 2πk`` of ``angle`` [rad] nearest to ``reference`` [rad] (broadcast shapes)."""
    return angle + 2.0 * jnp.pi * jnp.round((reference - angle) / (2.0 * jnp.pi))
