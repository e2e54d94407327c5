"""Gradient-safe geometric primitives shared by the narrow-phase functions.

All functions act on a single configuration (no batch axes); the narrow phase ``vmap``s them
over pairs. Divisions and square roots follow the double-``where`` rule so that touching and
degenerate configurations give finite gradients.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax import lax

from jaxart.math.quat import quat_to_matrix
from jaxart.math.safe import safe_norm


class NarrowResult(NamedTuple):
    """Fixed-size output of a narrow-phase function for one shape pair (``K`` contact slots).

    Attributes:
        dist: ``(K,)`` signed geometric distance between the two surfaces along ``normal`` [m]
            (negative = penetration; shape margins are *not* subtracted here).
        point: ``(K, 3)`` world contact point, midway between the two surfaces.
        normal: ``(K, 3)`` world unit normal pointing from shape A toward shape B.
        valid: ``(K,)`` whether the slot holds a contact.
    """

    dist: jnp.ndarray
    point: jnp.ndarray
    normal: jnp.ndarray
    valid: jnp.ndarray


def concat(*results: NarrowResult) -> NarrowResult:
    """Concatenate results along the slot axis."""
    return NarrowResult(*(jnp.concatenate(parts, axis=0) for parts in zip(*results, strict=True)))


def frame(x: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Position ``(3,)`` and rotation matrix ``(3, 3)`` (columns = local axes) of a transform."""
    return x[:3], quat_to_matrix(x[3:])


def unit(v: jnp.ndarray, fallback: jnp.ndarray, eps: float = 1e-9) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Normalise vectors ``v`` ``(..., 3)``; below ``eps`` return ``fallback`` (held fixed: zero gradient).

    Returns:
        ``(unit vector, norm)``; the norm is the gradient-safe ``|v|``.
    """
    n = safe_norm(v, keepdims=True)
    small = n <= eps
    u = v / jnp.where(small, 1.0, n)
    return jnp.where(small, fallback, u), n[..., 0]


def sphere_pair(ca: jnp.ndarray, ra, cb: jnp.ndarray, rb, fallback: jnp.ndarray) -> NarrowResult:
    """Contact between two spheres (centres ``ca``, ``cb``, radii ``ra``, ``rb``); one slot.

    Coincident centres use ``fallback`` as the normal (held fixed).
    """
    n, length = unit(cb - ca, fallback)
    dist = length - ra - rb
    pa = ca + ra * n
    pb = cb - rb * n
    return NarrowResult(dist[None], (0.5 * (pa + pb))[None], n[None], jnp.ones((1,), bool))


def closest_on_segment(p: jnp.ndarray, a: jnp.ndarray, b: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Closest point of segment ``[a, b]`` to ``p`` and its parameter ``t ∈ [0, 1]``."""
    d = b - a
    dd = jnp.dot(d, d)
    ok = dd > 1e-20
    t = jnp.clip(jnp.dot(p - a, d) / jnp.where(ok, dd, 1.0), 0.0, 1.0)
    t = jnp.where(ok, t, 0.0)
    return a + t * d, t


def segment_segment(p1, q1, p2, q2) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Parameters ``(s, t)`` of the closest points of segments ``[p1, q1]`` and ``[p2, q2]``.

    Follows Ericson, *Real-Time Collision Detection* §5.1.9, with sanitised divisions. For
    (near-)parallel segments ``s`` is taken at 0 (then clamped), so the answer is one of the
    closest pairs; callers wanting both overlap ends handle parallelism themselves.
    """
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = jnp.dot(d1, d1), jnp.dot(d2, d2), jnp.dot(d2, r)
    c, b = jnp.dot(d1, r), jnp.dot(d1, d2)
    denom = a * e - b * b
    par = denom <= 1e-12 * a * e
    safe_a = jnp.where(a > 1e-20, a, 1.0)
    safe_e = jnp.where(e > 1e-20, e, 1.0)
    s = jnp.where(par, 0.0, jnp.clip((b * f - c * e) / jnp.where(par, 1.0, denom), 0.0, 1.0))
    t = (b * s + f) / safe_e
    s = jnp.where(t < 0.0, jnp.clip(-c / safe_a, 0.0, 1.0), jnp.where(t > 1.0, jnp.clip((b - c) / safe_a, 0.0, 1.0), s))
    t = jnp.clip(t, 0.0, 1.0)
    return s, t


def box_sdf(p: jnp.ndarray, h: jnp.ndarray) -> jnp.ndarray:
    """Signed distance of a local point ``p`` to a box of half extents ``h`` (negative inside)."""
    q = jnp.abs(p) - h
    outside = safe_norm(jnp.maximum(q, 0.0))
    inside = jnp.minimum(jnp.max(q), 0.0)
    return outside + inside


def box_closest(p: jnp.ndarray, h: jnp.ndarray, eps: float = 1e-12) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Closest box-surface point, outward unit normal and signed distance for a local point ``p``.

    Outside the box the normal is the direction from the closest surface point to ``p``; inside
    (or on the surface) it is the normal of the face of least penetration.

    Returns:
        ``(surface point, outward normal, signed distance)`` in the box frame.
    """
    q = jnp.clip(p, -h, h)
    diff = p - q
    out_sq = jnp.dot(diff, diff)
    outside = out_sq > eps * eps
    length = jnp.sqrt(jnp.where(outside, out_sq, 1.0))
    n_out = diff / length
    # inside: face of least penetration
    pen = h - jnp.abs(p)
    k = jnp.argmin(pen)
    sgn = jnp.where(p[k] >= 0.0, 1.0, -1.0)
    eye = jnp.eye(3, dtype=p.dtype)
    n_in = sgn * eye[k]
    s_in = p + (sgn * h[k] - p[k]) * eye[k]
    point = jnp.where(outside, q, s_in)
    normal = jnp.where(outside, n_out, n_in)
    dist = jnp.where(outside, length, -pen[k])
    return point, normal, dist


def golden_min(f, dtype, lo: float = 0.0, hi: float = 1.0, iters: int = 24) -> jnp.ndarray:
    """Minimiser of a convex scalar function on ``[lo, hi]`` by golden-section search.

    The iteration count is fixed (no ``while_loop``). The result is meant to be wrapped in
    ``stop_gradient`` by callers (envelope theorem: the derivative of the minimum value does not
    depend on how the minimiser moves).
    """
    g = 0.6180339887498949

    def body(_, ab):
        a, b = ab
        c = b - g * (b - a)
        d = a + g * (b - a)
        left = f(c) < f(d)
        return jnp.where(left, a, c), jnp.where(left, d, b)

    a, b = lax.fori_loop(0, iters, body, (jnp.asarray(lo, dtype), jnp.asarray(hi, dtype)))
    return 0.5 * (a + b)


def cylinder_sdf(p: jnp.ndarray, r, h) -> jnp.ndarray:
    """Signed distance of a local point ``p`` to a Z-axis cylinder (radius ``r``, half height ``h``)."""
    rho = safe_norm(p[:2])
    d = jnp.stack([rho - r, jnp.abs(p[2]) - h])
    return jnp.minimum(jnp.max(d), 0.0) + safe_norm(jnp.maximum(d, 0.0))


def cylinder_closest(p: jnp.ndarray, r, h) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Closest surface point, outward unit normal and signed distance for a local point ``p``.

    Outside: the nearest of barrel, cap disc or rim. Inside: the surface of least penetration
    (barrel or cap). On the axis the radial direction falls back to local +X (held fixed).

    Returns:
        ``(surface point, outward normal, signed distance)`` in the cylinder frame.
    """
    dt = p.dtype
    radial, rho = unit(jnp.concatenate([p[:2], jnp.zeros((1,), dt)]), jnp.array([1.0, 0.0, 0.0], dt), eps=1e-12)
    sz = jnp.where(p[2] >= 0.0, 1.0, -1.0)
    ez = jnp.array([0.0, 0.0, 1.0], dt)
    # nearest point of the solid cylinder (clamped), used outside
    q = jnp.minimum(rho, r) * radial + jnp.clip(p[2], -h, h) * ez
    n_out, d_out = unit(p - q, radial, eps=1e-12)
    outside = (rho > r) | (jnp.abs(p[2]) > h)
    # inside: least penetration
    pen_barrel, pen_cap = r - rho, h - jnp.abs(p[2])
    use_cap = pen_cap < pen_barrel
    n_in = jnp.where(use_cap, sz * ez, radial)
    s_in = jnp.where(use_cap, p.at[2].set(sz * h), r * radial + p[2] * ez)
    d_in = -jnp.minimum(pen_barrel, pen_cap)
    return jnp.where(outside, q, s_in), jnp.where(outside, n_out, n_in), jnp.where(outside, d_out, d_in)


def dedup(pts: jnp.ndarray, ok: jnp.ndarray, radius) -> jnp.ndarray:
    """Drop candidates ``(m, 3)`` lying within ``radius`` of an earlier valid candidate."""
    d2 = jnp.sum((pts[:, None, :] - pts[None, :, :]) ** 2, axis=-1)
    m = pts.shape[0]
    earlier = jnp.arange(m)[None, :] < jnp.arange(m)[:, None]
    dup = jnp.any(earlier & ok[None, :] & (d2 < radius * radius), axis=1)
    return ok & ~dup


def keep_deepest(res: NarrowResult, k: int) -> NarrowResult:
    """The ``k`` valid slots of smallest distance (invalid slots sort last)."""
    big = jnp.asarray(jnp.finfo(res.dist.dtype).max, res.dist.dtype)
    _, idx = lax.top_k(jnp.where(res.valid, -res.dist, -big), k)
    return NarrowResult(res.dist[idx], res.point[idx], res.normal[idx], res.valid[idx])
