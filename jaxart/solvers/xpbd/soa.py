"""Structure-of-arrays algebra for the XPBD lane kernel (:mod:`jaxart.solvers.xpbd.lanes`).

A vector is a tuple ``(x, y, z)`` of equally shaped arrays (items first, lanes last), a quaternion
``(x, y, z, w)``, a pose a pair ``(p, q)`` and a 3×3 matrix a tuple of three row vectors. The
formulas (and their order of floating-point operations) are those of the stacked-array versions
in :mod:`jaxart.math` and :mod:`jaxart.solvers.xpbd.common`, so the lane kernel computes the
same numbers as the per-world code. Helpers whose formulas coincide are :mod:`jaxart.math.soa`'s.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxart.math.lanes import materialize
from jaxart.math.safe import TINY, safe_atan2
from jaxart.math.soa import (  # noqa: F401  (re-exported for the kernel)
    add,
    cross,
    dot,
    qconj,
    safe_norm,
    scale,
    sub,
    total,
    transpose,
)
from jaxart.math.soa import qmatrix as rotmat  # noqa: F401
from jaxart.math.soa import rows as take  # noqa: F401
from jaxart.math.soa import select as where  # noqa: F401
from jaxart.math.static_index import item


def comps(a: jnp.ndarray) -> tuple:
    """Split axis 1 of an ``(items, k, L)`` lane array into a tuple of ``(items, L)`` arrays."""
    return tuple(item(a, i, 1) for i in range(a.shape[1]))












def neg(a) -> tuple:
    """Component-wise negation."""
    return tuple(-x for x in a)


def qmul(a, b) -> tuple:
    """Hamilton product (``quat_mul``'s formula)."""
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    c = cross(av, bv)
    return (*(aw * bv[i] + bw * av[i] + c[i] for i in range(3)), aw * bw - dot(av, bv))




def qrot(q, v) -> tuple:
    """``R(q) v`` (``quat_rotate``'s formula)."""
    u, w = q[:3], q[3]
    t = scale(cross(u, v), 2.0)
    c = cross(u, t)
    return tuple(v[i] + w * t[i] + c[i] for i in range(3))


def qnormalize(q) -> tuple:
    """``quat_normalize``: divide by the norm; a zero quaternion maps to the identity."""
    sq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
    bad = sq <= TINY
    n = jnp.sqrt(jnp.where(bad, 1.0, sq))
    out = tuple(x / n for x in q)
    return (*(jnp.where(bad, 0.0, x) for x in out[:3]), jnp.where(bad, 1.0, out[3]))


def qintegrate(q, omega, dt) -> tuple:
    """``quat_integrate``: ``normalize(q + ½ dt [ω, 0] ⊗ q)``."""
    zero = jnp.zeros_like(omega[0])
    d = qmul((*omega, zero), q)
    h = 0.5 * dt
    return qnormalize(tuple(x + h * y for x, y in zip(q, d, strict=True)))


def qexp(v) -> tuple:
    """``quat_exp``: the unit quaternion of rotation vector ``v``, smooth at ``v = 0``."""
    sq = dot(v, v)
    tiny = sq < 1e-8
    theta = jnp.sqrt(jnp.where(tiny, 1.0, sq))
    k = jnp.where(tiny, 0.5 - sq / 48.0, jnp.sin(0.5 * theta) / theta)
    w = jnp.where(tiny, 1.0 - sq / 8.0, jnp.cos(0.5 * theta))
    return (*scale(v, k), w)


def tmul(a, b) -> tuple:
    """Pose composition ``a * b`` (``b`` first)."""
    return add(a[0], qrot(a[1], b[0])), qmul(a[1], b[1])


def matmul(a, b) -> tuple:
    """``a @ b`` (``small.matmul``'s order)."""
    return tuple(tuple(total(a[r][i] * b[i][c] for i in range(3)) for c in range(3)) for r in range(3))


def matvec(m, v) -> tuple:
    """``m @ v``."""
    return tuple(dot(m[r], v) for r in range(3))


def quad(m, v):
    """``vᵀ m v`` (``maximal_xpbd_common.quad``)."""
    return dot(v, matvec(m, v))


def safe_unit(v, eps: float = 1e-12):
    """``(|v|, v/|v|)`` with zeros for ``|v|² ≤ eps²`` (``maximal_xpbd_common.safe_unit``)."""
    n2 = dot(v, v)
    ok = n2 > eps * eps
    n = jnp.sqrt(jnp.where(ok, n2, 1.0))
    return jnp.where(ok, n, 0.0), tuple(jnp.where(ok, x / n, 0.0) for x in v)


def rotation_vector(q) -> tuple:
    """``maximal_joints.rotation_vector``: shortest-arc axis·angle, NaN-free."""
    flip = q[3] < 0.0
    q = tuple(jnp.where(flip, -x, x) for x in q)
    v, w = q[:3], q[3]
    n2 = dot(v, v)
    small = n2 < 1e-12
    n = jnp.sqrt(jnp.where(small, 1.0, n2))
    k = jnp.where(small, 2.0 / jnp.maximum(w, 1e-6), 2.0 * safe_atan2(n, w) / n)
    return scale(v, k)


class Bodies(NamedTuple):
    """Per-body SoA data at an iterate (world row last): poses, world COMs, inverse mass and world inverse inertia."""

    p: tuple
    q: tuple
    com_w: tuple
    inv_m: jnp.ndarray
    inv_iw: tuple


#: Lane chunks of :func:`stage` (a loop of at least two trips is what XLA does not inline).


#: ``fn(*args)`` evaluated once and stored behind a loop boundary (see :func:`jaxart.math.lanes.materialize`).
stage = materialize
