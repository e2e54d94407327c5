"""Structure-of-arrays (SoA) rigid-body algebra for hot loops.

A vector is a tuple ``(x, y, z)`` of equally shaped arrays, a quaternion ``(x, y, z, w)``, a
transform a pair ``(p, q)``. Keeping components in separate arrays lets XLA vectorise over the
body and batch axes (an array-of-structs layout with a trailing axis of 3, 4 or 7 is several times
slower on CPU). Conventions are those of :mod:`jaxart.math`.
"""

from __future__ import annotations

import functools
import operator

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math.safe import TINY, safe_atan2
from jaxart.math.static_index import take_rows

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


# --- lane-kernel helpers: 3×3 matrices as row tuples, nested selects, sums, static item subsets ---


def select(c, a, b):
    """Component-wise ``jnp.where`` of (possibly nested) tuples."""
    if isinstance(a, tuple):
        return tuple(select(c, x, y) for x, y in zip(a, b, strict=True))
    return jnp.where(c, a, b)


def total(terms):
    """Left-to-right sum of a sequence (the order of :func:`jaxart.math.small.sum_axis`)."""
    return functools.reduce(operator.add, terms)


def transpose(m) -> tuple:
    """Transpose of a 3×3 row tuple."""
    return tuple(tuple(m[r][c] for r in range(3)) for c in range(3))


def safe_norm(v):
    """:func:`jaxart.math.safe_norm` of a component tuple (0 with a zero gradient at the origin)."""
    sq = total(x * x for x in v)
    z = sq <= TINY
    return jnp.where(z, 0.0, jnp.sqrt(jnp.where(z, 1.0, sq)))


def inv3(m, eps: float = 1e-12) -> tuple:
    """:func:`jaxart.math.inv3` of a 3×3 row tuple (adjugate; ``|det| < eps`` divides by ``±eps``)."""
    c0 = cross(m[1], m[2])
    c1 = cross(m[2], m[0])
    c2 = cross(m[0], m[1])
    det = dot(m[0], c0)
    det = jnp.where(jnp.abs(det) < eps, jnp.where(det < 0.0, -eps, eps), det)
    return tuple(tuple(c[i] / det for c in (c0, c1, c2)) for i in range(3))


def euler_xyz(m) -> tuple:
    """:func:`jaxart.math.matrix_to_euler_xyz` of a 3×3 row tuple: intrinsic X-Y-Z angles."""
    sb = jnp.clip(m[0][2], -1.0, 1.0)
    cb = safe_norm((m[0][0], m[0][1]))
    return (safe_atan2(-m[1][2], m[2][2]), safe_atan2(sb, cb), safe_atan2(-m[0][1], m[0][0]))


def twist_angle(axis: Vec, q: Quat):
    """:func:`jaxart.math.quat_twist_angle`: ``2·atan2(axis · q.xyz, q.w)`` in (−2π, 2π]."""
    return 2.0 * safe_atan2(dot(axis, q[:3]), q[3])


def rows(tree, idx: np.ndarray):
    """Rows ``idx`` (static) of every item-first leaf (``(items, L)`` and ``(items, 1)`` alike)."""
    return jax.tree_util.tree_map(lambda x: take_rows(x, idx), tree)


def unrows(tree, idx: np.ndarray, count: int):
    """Inverse of :func:`rows`: ``count`` rows holding the subset rows at ``idx`` and zeros elsewhere."""
    if len(idx) == count and np.array_equal(idx, np.arange(count)):
        return tree
    pos = np.full(count, len(idx), np.int32)
    pos[idx] = np.arange(len(idx), dtype=np.int32)

    def one(x):
        return take_rows(jnp.concatenate([x, jnp.zeros((1, *x.shape[1:]), x.dtype)], 0), pos)

    return jax.tree_util.tree_map(one, tree)


def on_subset(fn, sel: np.ndarray, *args):
    """``fn(*args)`` evaluated only on the items where the static mask ``sel`` holds (zeros elsewhere)."""
    idx = np.flatnonzero(sel).astype(np.int32)
    return unrows(fn(*rows(args, idx)), idx, len(sel))


def qlog(q: Quat) -> Vec:
    """Rotation vector (axis · angle, angle in [0, π]) of a unit quaternion; smooth at the identity
    (:func:`jaxart.dynamics.integrate.quat_log`'s formula)."""
    flip = q[3] < 0.0
    v = tuple(jnp.where(flip, -x, x) for x in q[:3])
    w = jnp.where(flip, -q[3], q[3])
    s = safe_norm(v)
    small = s < 1e-8
    ratio = jnp.where(small, 2.0 / jnp.where(small, w, 1.0), 2.0 * safe_atan2(s, w) / jnp.where(small, 1.0, s))
    return scale(v, ratio)
