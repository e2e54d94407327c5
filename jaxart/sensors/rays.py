"""Ray casts against primitive shapes, in the shape's frame (MuJoCo's ``mj_ray`` rules for one geometry).

A ray ``o + x d`` (``x ≥ 0``, ``d`` not necessarily unit) hits a shape at the smallest non-negative ``x`` on its
surface; from inside a closed shape that is the exit point. Planes are hit only from their front (+Z) side and
are infinite when their half sizes are 0. The functions return ``inf`` where the ray misses; they are smooth in
the ray and the shape parameters away from grazing hits.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.sim.enums import GeoType

_EPS = 1e-15


def _safe(d: jax.Array) -> jax.Array:
    return jnp.where(jnp.abs(d) > _EPS, d, 1.0)


def _quad(a: jax.Array, b: jax.Array, c: jax.Array) -> jax.Array:
    """Smallest non-negative root of ``a x² + 2 b x + c`` (``inf`` if none)."""
    det = b * b - a * c
    ok = (det >= 0.0) & (a > _EPS)
    root = jnp.sqrt(jnp.where(ok, det, 0.0))
    a = jnp.where(ok, a, 1.0)
    x0, x1 = (-b - root) / a, (-b + root) / a
    x = jnp.where(x0 >= 0.0, x0, jnp.where(x1 >= 0.0, x1, jnp.inf))
    return jnp.where(ok, x, jnp.inf)


def _sphere(o: jax.Array, d: jax.Array, r: jax.Array, centre_z=0.0) -> jax.Array:
    p = o - jnp.stack([jnp.zeros_like(r), jnp.zeros_like(r), jnp.broadcast_to(centre_z, r.shape)], axis=-1)
    return _quad(jnp.sum(d * d, -1), jnp.sum(p * d, -1), jnp.sum(p * p, -1) - r * r)


def _round_side(o: jax.Array, d: jax.Array, r: jax.Array, h: jax.Array) -> jax.Array:
    """Lateral surface of a Z-axis cylinder of radius ``r`` between ``z = ±h``."""
    x = _quad(d[..., 0] ** 2 + d[..., 1] ** 2, d[..., 0] * o[..., 0] + d[..., 1] * o[..., 1],
              o[..., 0] ** 2 + o[..., 1] ** 2 - r * r)
    z = o[..., 2] + jnp.where(jnp.isfinite(x), x, 0.0) * d[..., 2]
    return jnp.where(jnp.abs(z) <= h, x, jnp.inf)


def _face(o: jax.Array, d: jax.Array, axis: int, level: jax.Array, inside) -> jax.Array:
    """Hit of the plane ``coord[axis] = level`` accepted where ``inside(point)``."""
    x = (level - o[..., axis]) / _safe(d[..., axis])
    ok = (jnp.abs(d[..., axis]) > _EPS) & (x >= 0.0)
    point = o + jnp.where(ok, x, 0.0)[..., None] * d
    return jnp.where(ok & inside(point), x, jnp.inf)


def _cylinder(o, d, s):
    r, h = s[..., 0], s[..., 1]
    disc = lambda p: p[..., 0] ** 2 + p[..., 1] ** 2 <= r * r  # noqa: E731
    return jnp.minimum(_round_side(o, d, r, h), jnp.minimum(_face(o, d, 2, h, disc), _face(o, d, 2, -h, disc)))


def _capsule(o, d, s):
    r, h = s[..., 0], s[..., 1]
    caps = jnp.minimum(_sphere(o, d, r, h), _sphere(o, d, r, -h))
    return jnp.minimum(_round_side(o, d, r, h), caps)


def _box(o, d, s):
    out = jnp.full(o.shape[:-1], jnp.inf, o.dtype)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3

        def inside(p, j=j, k=k):
            return (jnp.abs(p[..., j]) <= s[..., j]) & (jnp.abs(p[..., k]) <= s[..., k])

        out = jnp.minimum(out, jnp.minimum(_face(o, d, i, s[..., i], inside), _face(o, d, i, -s[..., i], inside)))
    return out


def _plane(o, d, s):
    x = -o[..., 2] / _safe(d[..., 2])
    ok = (d[..., 2] < -_EPS) & (x >= 0.0)
    p = o + jnp.where(ok, x, 0.0)[..., None] * d
    within = ((s[..., 0] <= 0.0) | (jnp.abs(p[..., 0]) <= s[..., 0])) & (
        (s[..., 1] <= 0.0) | (jnp.abs(p[..., 1]) <= s[..., 1]))
    return jnp.where(ok & within, x, jnp.inf)


def _ellipsoid(o, d, s):
    inv = 1.0 / jnp.where(s > 0.0, s, 1.0)
    return _sphere(o * inv, d * inv, jnp.ones_like(s[..., 0]))


#: Shape types a ray can hit.
RAY_TYPES = (GeoType.PLANE, GeoType.SPHERE, GeoType.CAPSULE, GeoType.ELLIPSOID, GeoType.CYLINDER, GeoType.BOX)


def ray_shape(geo: GeoType, scale: jax.Array, origin: jax.Array, direction: jax.Array) -> jax.Array:
    """Distance parameter of the first hit of rays on one kind of shape, in the shape's frame.

    Args:
        geo: The shape type (static; one of :data:`RAY_TYPES`).
        scale: ``(..., 3)`` shape parameters (``Model.shape_scale`` convention).
        origin: ``(..., 3)`` ray origins in the shape frame [m].
        direction: ``(..., 3)`` ray directions in the shape frame (unit: the result is a distance [m]).

    Returns:
        ``(...)`` hit parameters (``inf``: no hit).

    Raises:
        ValueError: ``geo`` is not a ray-castable type.
    """
    geo = GeoType(int(geo))
    if geo == GeoType.SPHERE:
        return _sphere(origin, direction, scale[..., 0])
    fns = {GeoType.PLANE: _plane, GeoType.CAPSULE: _capsule, GeoType.ELLIPSOID: _ellipsoid,
           GeoType.CYLINDER: _cylinder, GeoType.BOX: _box}
    if geo not in fns:
        raise ValueError(f"ray_shape: rays against {geo.name} shapes are not supported (supported: "
                         f"{[t.name for t in RAY_TYPES]})")
    return fns[geo](origin, direction, scale)
