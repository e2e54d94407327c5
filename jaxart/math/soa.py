"""Structure-of-arrays (SoA) rigid-body algebra for hot loops.

A vector is a tuple ``(x, y, z)`` of equally shaped arrays, a quaternion ``(x, y, z, w)``, a
transform a pair ``(p, q)``. Keeping components in separate arrays lets XLA vectorise over the
body and batch axes (an array-of-structs layout with a trailing axis of 3, 4 or 7 is several times
slower on CPU). Conventions are those of :mod:`jaxart.math`.
"""

from __future__ import annotations

import jax.numpy as jnp

Vec = tuple
Quat = tuple


def unstack(a: jnp.ndarray) -> tuple:
    """Split the last axis into a tuple of arrays."""
    return tuple(a[..., i] for i in range(a.shape[-1]))


def stack(*comps) -> jnp.ndarray:
    """Join components along a new last axis."""
    return jnp.stack(comps, axis=-1)


def to_transform(a: jnp.ndarray) -> tuple[Vec, Quat]:
    """``(..., 7)`` array → SoA transform."""
    c = unstack(a)
    return c[:3], c[3:]


def from_transform(t: tuple[Vec, Quat]) -> jnp.ndarray:
    """SoA transform → ``(..., 7)`` array."""
    return stack(*t[0], *t[1])


def add(a: Vec, b: Vec) -> Vec:
    """Component-wise sum."""
    return tuple(x + y for x, y in zip(a, b, strict=True))


def sub(a: Vec, b: Vec) -> Vec:
    """Component-wise difference."""
    return tuple(x - y for x, y in zip(a, b, strict=True))


def scale(a: Vec, s) -> Vec:
    """Multiply every component by ``s``."""
    return tuple(x * s for x in a)


def dot(a: Vec, b: Vec):
    """Dot product."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vec, b: Vec) -> Vec:
    """Cross product."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def where(c, a: tuple, b: tuple) -> tuple:
    """Component-wise ``jnp.where``."""
    return tuple(jnp.where(c, x, y) for x, y in zip(a, b, strict=True))


def qmul(a: Quat, b: Quat) -> Quat:
    """Hamilton product ``a ⊗ b``."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + bw * ax + ay * bz - az * by,
        aw * by + bw * ay + az * bx - ax * bz,
        aw * bz + bw * az + ax * by - ay * bx,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def qconj(q: Quat) -> Quat:
    """Conjugate (inverse of a unit quaternion)."""
    return (-q[0], -q[1], -q[2], q[3])


def qrot(q: Quat, v: Vec) -> Vec:
    """Rotate ``v`` by unit quaternion ``q``."""
    u, w = q[:3], q[3]
    t = scale(cross(u, v), 2.0)
    return add(add(v, scale(t, w)), cross(u, t))


def qrot_inv(q: Quat, v: Vec) -> Vec:
    """Rotate ``v`` by the inverse of ``q``."""
    return qrot(qconj(q), v)


def qfrom_axis_angle(axis: Vec, angle) -> Quat:
    """Rotation of ``angle`` about unit ``axis`` (a zero axis gives the identity)."""
    s, c = jnp.sin(0.5 * angle), jnp.cos(0.5 * angle)
    return (axis[0] * s, axis[1] * s, axis[2] * s, c)


def qnormalize(q: Quat) -> Quat:
    """Normalise; a zero quaternion maps to the identity (gradient-safe)."""
    sq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    bad = sq <= 1e-30
    inv = jnp.where(bad, 0.0, 1.0 / jnp.sqrt(jnp.where(bad, 1.0, sq)))
    return (q[0] * inv, q[1] * inv, q[2] * inv, jnp.where(bad, 1.0, q[3] * inv))


def qmatrix(q: Quat) -> tuple:
    """Rows of the rotation matrix of a unit quaternion (``quat_to_matrix``'s formula)."""
    x, y, z, w = q
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))


def tmul(a: tuple, b: tuple) -> tuple:
    """Compose transforms ``a * b`` (``b`` first)."""
    return add(a[0], qrot(a[1], b[0])), qmul(a[1], b[1])


def tinv(t: tuple) -> tuple:
    """Inverse transform."""
    qi = qconj(t[1])
    return scale(qrot(qi, t[0]), -1.0), qi


def tpoint(t: tuple, x: Vec) -> Vec:
    """Map a local point to the parent frame."""
    return add(t[0], qrot(t[1], x))


def take(a: tuple, idx) -> tuple:
    """Gather every component (nested tuples allowed) along its last axis with ``idx``."""
    if isinstance(a, tuple):
        return tuple(take(x, idx) for x in a)
    return a[..., idx]
