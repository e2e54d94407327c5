"""Length of one spatial-tendon segment wrapped around a sphere or an (infinite) cylinder (MuJoCo's rule).

A segment runs between two world points ``x0``, ``x1``; with a wrapping geometry (centre ``c``, radius ``r``,
cylinder axis ``a``) and optionally a side point, its length follows MuJoCo's ``mju_wrap``:

* The problem is reduced to a circle in a plane: for a sphere the plane through ``c``, ``x0`` and ``x1``; for a
  cylinder the cross-section (the points projected along ``a``).
* No wrap (the straight distance ``|x1 − x0|``) when an endpoint is inside the circle, the endpoints coincide,
  or the straight segment misses the circle, unless a side point is given and the segment passes on the side
  opposite to it (then the path goes around the circle on the side point's side).
* Otherwise the path is: straight to a tangent point, along the circle, straight from the second tangent point.
  Of the two tangent-point pairs (one on each side), the one whose chord midpoint direction is closest to the side
  point is taken (without a side point: the one with the shorter chord); a pair whose straight legs cross is
  rejected, and if the chosen pair's legs cross there is no wrap.
* Cylinder: the unrolled path is straight, so the tangent points' heights along ``a`` are interpolated by the
  planar path length and the arc becomes a helix ``√(arc² + Δh²)``.

Every branch is a ``jnp.where`` over finite quantities (clamped square roots, safe norms and angles), so the
length is differentiable in ``x0``, ``x1``, ``c`` and ``a`` wherever the branch choice is locally constant, and
gradients stay finite in the branch not taken.

A side point inside the geometry (``|side − centre| < r`` in 3D, for a cylinder too: MuJoCo's test) selects
MuJoCo's *inside* wrapping instead (:func:`~jaxart.dynamics.tendon_wrap_inside.inside_wrap`): the path passes
through the disk, touching the circle at one point (zero arc; for a cylinder both tangent heights coincide).
The side point may sit on any body: only its world position is read, and it selects branches without entering
the length (its gradient is zero).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.dynamics.tendon_wrap_inside import inside_wrap
from jaxart.math.safe import safe_atan2, safe_norm, safe_normalize

__all__ = ["wrapped_length"]

_MINVAL = 1e-15  # MuJoCo's mjMINVAL
_TINY = 1e-30


def _perp(v):
    """``v`` rotated by −90° in the plane: ``(v_y, −v_x)``."""
    return jnp.stack([v[1], -v[0]])


def _cross2(a, b):
    return a[0] * b[1] - a[1] * b[0]


def _legs_cross(p1, p2, p3, p4):
    """Whether the 2D segments ``p1→p2`` and ``p3→p4`` intersect (parallel segments never do)."""
    d12, d34, d31 = p2 - p1, p4 - p3, p1 - p3
    det = _cross2(d12, d34)
    ok = jnp.abs(det) >= _MINVAL
    inv = 1.0 / jnp.where(ok, det, 1.0)
    s = _cross2(d34, d31) * inv
    t = _cross2(d12, d31) * inv
    return ok & (s >= 0) & (s <= 1) & (t >= 0) & (t <= 1)


def _tangent_pairs(e0, e1, r):
    """The two tangent-point pairs ``(t0, t1)`` of the endpoints ``e0``, ``e1`` (outside the circle)."""
    sq0, sq1, sqr = e0 @ e0, e1 @ e1, r * r
    root0 = jnp.sqrt(jnp.maximum(sq0 - sqr, _TINY))
    root1 = jnp.sqrt(jnp.maximum(sq1 - sqr, _TINY))
    inv0, inv1 = 1.0 / jnp.maximum(sq0, _TINY), 1.0 / jnp.maximum(sq1, _TINY)
    pairs = []
    for sgn in (1.0, -1.0):
        t0 = (e0 * sqr + sgn * r * root0 * _perp(e0)) * inv0
        t1 = (e1 * sqr - sgn * r * root1 * _perp(e1)) * inv1
        pairs.append((t0, t1))
    return pairs


def _circle_wrap(e0, e1, side, has_side, r):
    """Planar wrap of the endpoints ``e0``, ``e1`` around the circle of radius ``r`` at the origin.

    Returns:
        ``(wrapped, t0, t1, arc)``: whether the path wraps, its tangent points and the arc length.
    """
    sqr = r * r
    dif = e1 - e0
    dd = dif @ dif
    a = jnp.clip(-(dif @ e0) / jnp.maximum(dd, _TINY), 0.0, 1.0)
    near = e0 + a * dif
    miss = (near @ near > sqr) & (~has_side | (side @ near >= 0.0))
    wrapped = (e0 @ e0 >= sqr) & (e1 @ e1 >= sqr) & (r >= _MINVAL) & (dd >= _MINVAL) & ~miss
    (a0, a1), (b0, b1) = _tangent_pairs(e0, e1, r)
    good_a = jnp.where(has_side, safe_normalize(a0 + a1) @ side, -((a0 - a1) @ (a0 - a1)))
    good_b = jnp.where(has_side, safe_normalize(b0 + b1) @ side, -((b0 - b1) @ (b0 - b1)))
    good_a = jnp.where(_legs_cross(e0, a0, e1, a1), -10000.0, good_a)
    good_b = jnp.where(_legs_cross(e0, b0, e1, b1), -10000.0, good_b)
    first = good_a > good_b
    t0, t1 = jnp.where(first, a0, b0), jnp.where(first, a1, b1)
    wrapped = wrapped & ~_legs_cross(e0, t0, e1, t1)
    # angle in [0, π] between the tangent points, the long way round when the chosen side requires it
    c = _cross2(t1, t0)
    angle = safe_atan2(jnp.abs(c), t0 @ t1)
    flip = jnp.where(first, c < 0.0, c > 0.0)
    angle = jnp.where(flip, 2.0 * jnp.pi - angle, angle)
    return wrapped, t0, t1, r * angle


def _plane_frame(p0, p1, axis, cylinder):
    """Orthonormal in-plane axes ``(u, v)`` of the wrap circle (relative coordinates ``p0``, ``p1``)."""
    ex, ey = jnp.array([1.0, 0.0, 0.0], p0.dtype), jnp.array([0.0, 1.0, 0.0], p0.dtype)
    u_cyl = safe_normalize(jnp.cross(axis, jnp.where(jnp.abs(axis[0]) < 0.9, ex, ey)))
    u = safe_normalize(p0)
    n = jnp.cross(p0, p1)
    parallel = safe_norm(n) < _MINVAL
    k = jnp.argmax(jnp.abs(u))  # p0 ∥ p1: any plane through them (MuJoCo's choice of helper)
    helper = jnp.ones(3, p0.dtype).at[k].set(0.0)
    n = safe_normalize(jnp.where(parallel, jnp.cross(u, helper), n))
    u = jnp.where(cylinder, u_cyl, u)
    return u, jnp.where(cylinder, jnp.cross(axis, u_cyl), safe_normalize(jnp.cross(n, u)))


def wrapped_length(x0, x1, centre, axis, radius, side=None, *, cylinder, has_side=None):
    """Length of the segment ``x0 → x1`` wrapped around a sphere or an infinite cylinder (module docstring).

    Args:
        x0, x1: ``(3,)`` world endpoints.
        centre: ``(3,)`` world centre of the geometry.
        axis: ``(3,)`` world unit axis of the cylinder (ignored for a sphere).
        radius: Radius [m].
        side: ``(3,)`` world side point, or ``None`` (inside the geometry: inside wrapping).
        cylinder: ``True`` for a cylinder, ``False`` for a sphere (a bool or a traced boolean).
        has_side: Whether ``side`` is used (a bool or a traced boolean; default: ``side is not None``).

    Returns:
        The scalar length [m].
    """
    if has_side is None:
        has_side = side is not None
    if side is None:
        side = centre
    straight = safe_norm(x1 - x0)
    p0, p1 = x0 - centre, x1 - centre
    u, v = _plane_frame(p0, p1, axis, cylinder)
    e0, e1 = jnp.stack([p0 @ u, p0 @ v]), jnp.stack([p1 @ u, p1 @ v])
    s = side - centre
    sd = safe_normalize(jnp.stack([s @ u, s @ v])) * radius
    wrapped, t0, t1, arc = _circle_wrap(e0, e1, sd, has_side, radius)
    inside = has_side & (safe_norm(s) < radius)
    wrapped_in, t_in = inside_wrap(e0, e1, radius)
    wrapped = jnp.where(inside, wrapped_in, wrapped)
    t0, t1 = jnp.where(inside, t_in, t0), jnp.where(inside, t_in, t1)
    arc = jnp.where(inside, 0.0, arc)
    w0 = t0[0] * u + t0[1] * v
    w1 = t1[0] * u + t1[1] * v
    # cylinder: heights along the axis interpolated by the planar path length (zero factor for a sphere)
    along = jnp.where(cylinder, 1.0, 0.0)
    h0, h1 = p0 @ axis, p1 @ axis
    leg0, leg1 = safe_norm(e0 - t0), safe_norm(e1 - t1)
    total = jnp.maximum(leg0 + arc + leg1, _TINY)
    z0 = h0 + (h1 - h0) * leg0 / total
    z1 = h0 + (h1 - h0) * (leg0 + arc) / total
    w0, w1 = w0 + along * z0 * axis, w1 + along * z1 * axis
    arc = safe_norm(jnp.stack([arc, along * (z1 - z0)]))
    around = safe_norm(p0 - w0) + arc + safe_norm(w1 - p1)
    too_close = (safe_norm(p0) < _MINVAL) | (safe_norm(p1) < _MINVAL)
    return jnp.where(wrapped & ~too_close, around, straight)
