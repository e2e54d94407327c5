"""Rigid transforms stored as 7 floats ``(px, py, pz, qx, qy, qz, qw)``.

A transform ``T = (p, q)`` maps local points to the parent frame: ``x = p + R(q) x_local``.
``transform_mul(A, B)`` is ``A * B``: it applies ``B`` first.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.math.quat import quat_conjugate, quat_mul, quat_rotate


def make_transform(p: jnp.ndarray, q: jnp.ndarray) -> jnp.ndarray:
    """Pack translations ``(..., 3)`` and quaternions ``(..., 4)`` into transforms ``(..., 7)``."""
    p, q = jnp.broadcast_arrays(p, q[..., :3])[0], q
    return jnp.concatenate([p, q], axis=-1)


def transform_identity(dtype=jnp.float32) -> jnp.ndarray:
    """The identity transform ``(0, 0, 0, 0, 0, 0, 1)``."""
    return jnp.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], dtype=dtype)


def transform_translation(t: jnp.ndarray) -> jnp.ndarray:
    """Translation part ``(..., 3)``."""
    return t[..., :3]


def transform_rotation(t: jnp.ndarray) -> jnp.ndarray:
    """Rotation part ``(..., 4)``."""
    return t[..., 3:]


def transform_mul(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """Composition ``a * b`` (``b`` applied first)."""
    qa = a[..., 3:]
    p = a[..., :3] + quat_rotate(qa, b[..., :3])
    return jnp.concatenate([p, quat_mul(qa, b[..., 3:])], axis=-1)


def transform_inverse(t: jnp.ndarray) -> jnp.ndarray:
    """Inverse transform ``(−Rᵀp, q*)``."""
    qi = quat_conjugate(t[..., 3:])
    return jnp.concatenate([-quat_rotate(qi, t[..., :3]), qi], axis=-1)


def transform_point(t: jnp.ndarray, x: jnp.ndarray) -> jnp.ndarray:
    """Map points ``x`` ``(..., 3)`` from the local to the parent frame."""
    return t[..., :3] + quat_rotate(t[..., 3:], x)


def transform_vector(t: jnp.ndarray, v: jnp.ndarray) -> jnp.ndarray:
    """Rotate free vectors ``v`` ``(..., 3)`` into the parent frame (no translation)."""
    return quat_rotate(t[..., 3:], v)
