"""Spatial algebra with ``(linear, angular)`` 6-vectors in world axes.

Twists ``(v, ω)`` name the reference point at which ``v`` is measured; wrenches ``(f, τ)`` name
the point about which ``τ`` is taken. Internally jaxart's tree recurrences use twists and wrenches
referenced at the world origin (Plücker coordinates), where twists of a chain simply add up.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.math import small


def twist_point_velocity(twist: jnp.ndarray, ref: jnp.ndarray, point: jnp.ndarray) -> jnp.ndarray:
    """Velocity of ``point`` for a twist whose linear part is measured at ``ref``.

    Args:
        twist: Twists ``(..., 6)`` = ``(v_ref, ω)``.
        ref: Reference points ``(..., 3)``.
        point: Query points ``(..., 3)``.

    Returns:
        ``v_ref + ω × (point − ref)`` with shape ``(..., 3)``.
    """
    return twist[..., :3] + jnp.cross(twist[..., 3:], point - ref)


def shift_twist(twist: jnp.ndarray, ref: jnp.ndarray, new_ref: jnp.ndarray) -> jnp.ndarray:
    """Re-reference a twist's linear part from ``ref`` to ``new_ref`` (same axes)."""
    v = twist_point_velocity(twist, ref, new_ref)
    return jnp.concatenate([v, twist[..., 3:]], axis=-1)


def cross_motion(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Spatial motion cross product ``a ×ₘ b`` for ``(linear, angular)`` twists at one point."""
    va, wa = a[..., :3], a[..., 3:]
    vb, wb = b[..., :3], b[..., 3:]
    return jnp.concatenate([jnp.cross(wa, vb) + jnp.cross(va, wb), jnp.cross(wa, wb)], axis=-1)


def cross_force(a: jnp.ndarray, f: jnp.ndarray) -> jnp.ndarray:
    """Spatial force cross product ``a ×* f`` for a twist ``a`` and a wrench ``f = (force, torque)``."""
    va, wa = a[..., :3], a[..., 3:]
    fl, ta = f[..., :3], f[..., 3:]
    return jnp.concatenate([jnp.cross(wa, fl), jnp.cross(wa, ta) + jnp.cross(va, fl)], axis=-1)


def spatial_inertia_world(mass: jnp.ndarray, com: jnp.ndarray, inertia: jnp.ndarray) -> jnp.ndarray:
    """6×6 spatial inertia about the world origin for twists/wrenches in ``(linear, angular)`` order.

    Args:
        mass: Masses ``(...)`` in kg.
        com: World COM positions ``(..., 3)`` in m.
        inertia: World-axes inertia tensors about the COM ``(..., 3, 3)`` in kg·m².

    Returns:
        ``(..., 6, 6)`` matrices ``I`` with ``wrench = I @ twist`` (both at the origin).
    """
    m = mass[..., None, None]
    cx = _skew(com)
    eye = jnp.broadcast_to(jnp.eye(3, dtype=com.dtype), cx.shape)
    top = jnp.concatenate([m * eye, -m * cx], axis=-1)
    bot = jnp.concatenate([m * cx, inertia - m * small.matmul(cx, cx)], axis=-1)
    return jnp.concatenate([top, bot], axis=-2)


def _skew(v: jnp.ndarray) -> jnp.ndarray:
    """Skew-symmetric cross-product matrices ``(..., 3, 3)`` with ``skew(v) @ u = v × u``."""
    z = jnp.zeros_like(v[..., 0])
    x, y, w = v[..., 0], v[..., 1], v[..., 2]
    return jnp.stack(
        [jnp.stack([z, -w, y], -1), jnp.stack([w, z, -x], -1), jnp.stack([-y, x, z], -1)], -2
    )


skew = _skew
