"""Unit quaternions stored as ``(x, y, z, w)`` with the Hamilton product.

All functions broadcast over leading dimensions; the quaternion is the last axis (size 4).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.math import small
from jaxart.math.safe import safe_atan2, safe_norm


def quat_identity(dtype=jnp.float32) -> jnp.ndarray:
    """Return the identity rotation ``(0, 0, 0, 1)``.

    Args:
        dtype: Floating dtype of the result.
    """
    return jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)


def quat_mul(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Hamilton product ``a ⊗ b`` (applies ``b`` first, then ``a``).

    Args:
        a: Quaternions ``(..., 4)``.
        b: Quaternions ``(..., 4)``.

    Returns:
        The product ``(..., 4)``.
    """
    av, aw = a[..., :3], a[..., 3:]
    bv, bw = b[..., :3], b[..., 3:]
    v = small.spread(aw, 3) * bv + small.spread(bw, 3) * av + jnp.cross(av, bv)  # spread: see small.py
    w = aw * bw - small.dot_last(av, bv, keepdims=True)
    return jnp.concatenate([v, w], axis=-1)


def quat_conjugate(q: jnp.ndarray) -> jnp.ndarray:
    """Conjugate ``(-x, -y, -z, w)``."""
    return jnp.concatenate([-q[..., :3], q[..., 3:]], axis=-1)


def quat_inverse(q: jnp.ndarray) -> jnp.ndarray:
    """Inverse of a unit quaternion (its conjugate; the input is assumed normalised)."""
    return quat_conjugate(q)


def quat_rotate(q: jnp.ndarray, v: jnp.ndarray) -> jnp.ndarray:
    """Rotate vectors ``v`` by unit quaternions ``q`` (``R(q) v``).

    Args:
        q: Quaternions ``(..., 4)``.
        v: Vectors ``(..., 3)``.

    Returns:
        Rotated vectors ``(..., 3)``.
    """
    u, w = q[..., :3], q[..., 3:]
    t = 2.0 * jnp.cross(u, v)
    return v + small.spread(w, 3) * t + jnp.cross(u, t)


def quat_rotate_inv(q: jnp.ndarray, v: jnp.ndarray) -> jnp.ndarray:
    """Rotate vectors by the inverse rotation (``R(q)ᵀ v``)."""
    return quat_rotate(quat_conjugate(q), v)


def quat_normalize(q: jnp.ndarray) -> jnp.ndarray:
    """Normalise quaternions; a zero quaternion maps to the identity (gradient-safe)."""
    n = small.spread(safe_norm(q, keepdims=True), 4)  # repeated, not broadcast: no reduction in reverse mode
    bad = n <= 0.0
    ident = jnp.zeros_like(q).at[..., 3].set(1.0)
    return jnp.where(bad, ident, q / jnp.where(bad, 1.0, n))


def quat_from_axis_angle(axis: jnp.ndarray, angle: jnp.ndarray) -> jnp.ndarray:
    """Rotation of ``angle`` radians about the unit vector ``axis``.

    Args:
        axis: Unit axes ``(..., 3)``; a zero axis gives the identity.
        angle: Angles ``(...)`` in radians.

    Returns:
        Quaternions ``(..., 4)``.
    """
    angle = jnp.asarray(angle)[..., None]
    half = 0.5 * angle
    return jnp.concatenate([axis * jnp.sin(half), jnp.cos(half) * jnp.ones_like(axis[..., :1])], -1)


def quat_exp(v: jnp.ndarray) -> jnp.ndarray:
    """Quaternion of the rotation vector ``v`` (axis times angle), exact and smooth at ``v = 0``.

    The Jacobian at ``v = 0`` is ``½ I`` on the vector part (not zero, not NaN).

    Args:
        v: Rotation vectors ``(..., 3)`` in radians.

    Returns:
        Unit quaternions ``(..., 4)``.
    """
    sq = small.dot_last(v, v, keepdims=True)
    tiny = sq < 1e-8
    theta = jnp.sqrt(jnp.where(tiny, 1.0, sq))
    k = jnp.where(tiny, 0.5 - sq / 48.0, jnp.sin(0.5 * theta) / theta)
    w = jnp.where(tiny, 1.0 - sq / 8.0, jnp.cos(0.5 * theta))
    return jnp.concatenate([v * small.spread(k, 3), w], axis=-1)


def quat_integrate(q: jnp.ndarray, omega: jnp.ndarray, dt) -> jnp.ndarray:
    """Newton's quaternion integrator ``normalize(q + ½ [ω, 0] ⊗ q · dt)``.

    ``omega`` is expressed in the frame in which ``q`` is the orientation (world or parent
    frame). The update is polynomial in ``omega`` before normalisation, so its Jacobian with
    respect to ``omega`` is ``dt/2``-like at ``ω = 0`` (never zero or NaN).

    Args:
        q: Unit quaternions ``(..., 4)``.
        omega: Angular velocities ``(..., 3)`` in rad/s.
        dt: Time step in seconds.

    Returns:
        The integrated, normalised quaternions.
    """
    w = jnp.concatenate([omega, jnp.zeros_like(omega[..., :1])], axis=-1)
    return quat_normalize(q + 0.5 * dt * quat_mul(w, q))


def quat_to_matrix(q: jnp.ndarray) -> jnp.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of unit quaternions ``(..., 4)``."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def quat_from_matrix(m: jnp.ndarray) -> jnp.ndarray:
    """Unit quaternion ``(x, y, z, w)`` of a rotation matrix ``(..., 3, 3)`` (w ≥ 0 branch).

    Uses the numerically best of the four Shepperd branches, each with a sanitised square root.
    """
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    tr = m00 + m11 + m22
    cands = []
    diags = [tr, m00 - m11 - m22, m11 - m00 - m22, m22 - m00 - m11]
    for k, d in enumerate(diags):
        s = jnp.sqrt(jnp.maximum(1.0 + d, 1e-12)) * 2.0
        if k == 0:
            c = [(m[..., 2, 1] - m[..., 1, 2]) / s, (m[..., 0, 2] - m[..., 2, 0]) / s,
                 (m[..., 1, 0] - m[..., 0, 1]) / s, 0.25 * s]
        elif k == 1:
            c = [0.25 * s, (m[..., 0, 1] + m[..., 1, 0]) / s, (m[..., 0, 2] + m[..., 2, 0]) / s,
                 (m[..., 2, 1] - m[..., 1, 2]) / s]
        elif k == 2:
            c = [(m[..., 0, 1] + m[..., 1, 0]) / s, 0.25 * s, (m[..., 1, 2] + m[..., 2, 1]) / s,
                 (m[..., 0, 2] - m[..., 2, 0]) / s]
        else:
            c = [(m[..., 0, 2] + m[..., 2, 0]) / s, (m[..., 1, 2] + m[..., 2, 1]) / s, 0.25 * s,
                 (m[..., 1, 0] - m[..., 0, 1]) / s]
        cands.append(jnp.stack(c, axis=-1))
    best = jnp.argmax(jnp.stack(diags, axis=-1), axis=-1)
    q = jnp.take_along_axis(jnp.stack(cands, axis=-2), best[..., None, None], axis=-2)[..., 0, :]
    q = jnp.where(q[..., 3:] < 0.0, -q, q)
    return quat_normalize(q)


def quat_twist_angle(axis: jnp.ndarray, q: jnp.ndarray) -> jnp.ndarray:
    """Signed twist angle of ``q`` about ``axis``: ``2·atan2(axis · q.xyz, q.w)`` in (−2π, 2π].

    Args:
        axis: Unit axes ``(..., 3)``.
        q: Quaternions ``(..., 4)``.

    Returns:
        Angles ``(...)`` in radians.
    """
    return 2.0 * safe_atan2(small.dot_last(axis, q[..., :3]), q[..., 3])


def quat_to_euler_xyz(q: jnp.ndarray) -> jnp.ndarray:
    """Intrinsic X-Y-Z angles ``(a, b, c)`` with ``R(q) = Rx(a) Ry(b) Rz(c)``.

    Returns angles with ``b`` in [−π/2, π/2]; gradient-safe at gimbal lock (the split between
    ``a`` and ``c`` is then arbitrary but finite).
    """
    return matrix_to_euler_xyz(quat_to_matrix(q))


def matrix_to_euler_xyz(m: jnp.ndarray) -> jnp.ndarray:
    """Intrinsic X-Y-Z angles of rotation matrices ``(..., 3, 3)`` (see :func:`quat_to_euler_xyz`)."""
    sb = jnp.clip(m[..., 0, 2], -1.0, 1.0)
    cb = safe_norm(jnp.stack([m[..., 0, 0], m[..., 0, 1]], axis=-1))
    a = safe_atan2(-m[..., 1, 2], m[..., 2, 2])
    b = safe_atan2(sb, cb)
    c = safe_atan2(-m[..., 0, 1], m[..., 0, 0])
    return jnp.stack([a, b, c], axis=-1)
