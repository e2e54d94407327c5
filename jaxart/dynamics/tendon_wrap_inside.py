"""MuJoCo's *inside* wrapping in the plane: the shortest path between two points that touches a circle.

When a wrapping geometry's side point lies inside it (MuJoCo's rule: ``|side − centre| < r`` in 3D, for spheres
and cylinders alike), the tendon must pass through the disk instead of around it. In the wrap plane (circle of
radius ``r`` at the origin, endpoints ``e0``, ``e1`` outside it):

* No wrap (straight) when an endpoint is inside or on the circle, the radius or an endpoint distance is below
  ``1e−15``, the straight segment already crosses the disk, or the endpoints are opposite (``cos G < −1 + 1e−15``,
  ``G`` the angle between them at the centre); MuJoCo's ``wrap_inside`` tests.
* Otherwise the path is ``e0 → t → e1`` with one point ``t`` on the circle, between the endpoints' directions,
  where the length ``|t − e0| + |e1 − t|`` is stationary (the legs make equal angles with the normal). MuJoCo
  finds it by Newton's method on the law-of-sines equation ``asin(A z) + asin(B z) − 2 asin(z) + G = 0``
  (``z`` the sine of the angle at ``t``, ``A = r/|e0|``, ``B = r/|e1|``); its source falls back to the
  direction of ``e0 + e1`` when the iteration does not start well, but MuJoCo 4.0's results are the exact
  stationary point there too. Here ``t = r·(cos sφ û0 + sin sφ û0⊥)`` (``û0 = e0/|e0|``, ``s`` the turning
  sign from ``e0`` to ``e1``) and ``φ ∈ [0, G]`` is found by bisection of ``dL/dφ`` (negative at 0, positive at
  ``G``) with a fixed number of halvings (to ``G·2⁻⁵⁴``): jit/vmap-safe, no failure branch.

The bisection runs on stopped-gradient inputs (``lax.fori_loop``). The root's derivative comes from one
implicit-function step ``φ − (g(φ; θ) − g(φ; θ₀))/g'(φ)`` with ``g = dL/dφ`` (value unchanged, derivative
``−∂g/∂θ / g'``), so first and second derivatives of the length are those of the exact stationary path; its
gradient equals MuJoCo's Jacobian (the touching point held fixed on the geometry). Normalisations use the safe
helpers, so values and gradients stay finite in the branches not taken.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.math.safe import safe_norm, safe_normalize

__all__ = ["inside_wrap"]

_MINVAL = 1e-15  # MuJoCo's mjMINVAL
_HALVINGS = 54


def _perp(v):
    """``v`` rotated by +90°: ``(−v_y, v_x)``."""
    return jnp.stack([-v[1], v[0]])


def _point(phi, u, s, r):
    """The circle point ``r·(cos sφ u + sin sφ u⊥)``."""
    return r * (jnp.cos(s * phi) * u + jnp.sin(s * phi) * _perp(u))


def _slope(phi, e0, e1, u, s, r):
    """``dL/dφ`` of ``L = |t − e0| + |e1 − t|`` at ``t = _point(φ)``."""
    t = _point(phi, u, s, r)
    dt = s * r * (-jnp.sin(s * phi) * u + jnp.cos(s * phi) * _perp(u))
    return (safe_normalize(t - e0) + safe_normalize(t - e1)) @ dt


def _bisect(e0, e1, u, s, r, g):
    """The root of :func:`_slope` in ``[0, g]`` by a fixed number of halvings (stopped-gradient inputs)."""
    e0, e1, u, s, r, g = (jax.lax.stop_gradient(x) for x in (e0, e1, u, s, r, g))

    def body(_, lohi):
        lo, hi = lohi
        mid = 0.5 * (lo + hi)
        rising = _slope(mid, e0, e1, u, s, r) >= 0.0
        return jnp.where(rising, lo, mid), jnp.where(rising, mid, hi)

    lo, hi = jax.lax.fori_loop(0, _HALVINGS, body, (jnp.zeros_like(g), g))
    return 0.5 * (lo + hi)


def inside_wrap(e0: jnp.ndarray, e1: jnp.ndarray, r) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Inside wrap of the planar endpoints ``e0``, ``e1`` through the circle of radius ``r`` at the origin.

    Args:
        e0, e1: ``(2,)`` endpoints in the wrap plane.
        r: Radius [m].

    Returns:
        ``(wrapped, t)``: whether the path wraps (else it is straight) and its one ``(2,)`` point on the circle
        (both tangent points of the caller's path; the arc between them is zero).
    """
    len0, len1 = safe_norm(e0), safe_norm(e1)
    dif = e1 - e0
    dd = dif @ dif
    a = -(dif @ e0) / jnp.where(dd > _MINVAL, dd, 1.0)
    crosses = (dd > _MINVAL) & (a > 0.0) & (a < 1.0) & (safe_norm(e0 + a * dif) <= r)
    wrapped = ~((len0 <= r) | (len1 <= r) | (r < _MINVAL) | (len0 < _MINVAL) | (len1 < _MINVAL) | crosses)
    cos_g = (len0 * len0 + len1 * len1 - dd) / (2.0 * jnp.maximum(len0, _MINVAL) * jnp.maximum(len1, _MINVAL))
    wrapped = wrapped & (cos_g >= -1.0 + _MINVAL)
    cross = e0[0] * e1[1] - e0[1] * e1[0]
    g = jnp.arccos(jnp.clip(cos_g, -1.0 + _MINVAL, 1.0 - _MINVAL))
    u = safe_normalize(e0, fallback=jnp.array([1.0, 0.0], e0.dtype))
    s = jnp.where(cross < 0.0, -1.0, 1.0)
    phi = _bisect(e0, e1, u, s, r, g)
    # implicit-function step: value φ, derivative −(∂g/∂θ)/g'(φ)
    slope = _slope(phi, e0, e1, u, s, r)
    curv = jax.lax.stop_gradient(jax.grad(_slope)(phi, *(jax.lax.stop_gradient(x) for x in (e0, e1, u, s, r))))
    ok = curv > _MINVAL
    phi = phi - jnp.where(ok, (slope - jax.lax.stop_gradient(slope)) / jnp.where(ok, curv, 1.0), 0.0)
    return wrapped, _point(phi, u, s, r)
