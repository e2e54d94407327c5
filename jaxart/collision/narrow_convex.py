"""Narrow phase between spheres, capsules, boxes and cylinders (shape A has the lower :class:`GeoType`).

Every function takes ``(xa, sa, xb, sb)`` = world transform ``(7,)`` and ``shape_scale`` ``(3,)``
of shapes A and B and returns a :class:`~jaxart.collision.geometry.NarrowResult` whose normal
points from A toward B and whose point lies midway between the two surfaces.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.collision.geometry import (
    NarrowResult,
    box_closest,
    box_sdf,
    closest_on_segment,
    concat,
    cylinder_closest,
    cylinder_sdf,
    frame,
    golden_min,
    segment_segment,
    sphere_pair,
)

#: Below this ``sin²`` of the angle between two capsule axes, capsules are treated as parallel.
PARALLEL_SIN2 = 1e-6


def _z_fallback(x):
    return jnp.array([0.0, 0.0, 1.0], dtype=x.dtype)


def _segment(x, s):
    c, rot = frame(x)
    ax = rot[:, 2] * s[1]
    return c - ax, c + ax


def sphere_sphere(xa, sa, xb, sb) -> NarrowResult:
    """Sphere–sphere: one contact; coincident centres use the world +Z normal (held fixed)."""
    return sphere_pair(xa[:3], sa[0], xb[:3], sb[0], _z_fallback(xa))


def sphere_capsule(xa, sa, xb, sb) -> NarrowResult:
    """Sphere–capsule: sphere against the closest point of the capsule's core segment."""
    b0, b1 = _segment(xb, sb)
    q, _ = closest_on_segment(xa[:3], b0, b1)
    return sphere_pair(xa[:3], sa[0], q, sb[0], _z_fallback(xa))


def capsule_capsule(xa, sa, xb, sb) -> NarrowResult:
    """Capsule–capsule: two slots.

    Non-parallel axes: one contact between the closest points of the two core segments (second
    slot invalid). Parallel axes (``sin² < PARALLEL_SIN2``) with overlapping projections: two
    contacts at the ends of the overlap interval, so a capsule lying on another is supported along
    its length. When the closest points of the core segments coincide (intersecting axes) the
    normal falls back to world +Z (held fixed).
    """
    a0, a1 = _segment(xa, sa)
    b0, b1 = _segment(xb, sb)
    fb = _z_fallback(xa)
    s, t = segment_segment(a0, a1, b0, b1)
    da, db = a1 - a0, b1 - b0
    general = sphere_pair(a0 + s * da, sa[0], b0 + t * db, sb[0], fb)
    # parallel: overlap interval of B's projection on A
    aa = jnp.dot(da, da)
    cross = jnp.cross(da, db)
    sin2 = jnp.dot(cross, cross) / (aa * jnp.dot(db, db))
    u0, u1 = jnp.dot(b0 - a0, da) / aa, jnp.dot(b1 - a0, da) / aa
    lo = jnp.clip(jnp.minimum(u0, u1), 0.0, 1.0)
    hi = jnp.clip(jnp.maximum(u0, u1), 0.0, 1.0)
    parallel = (sin2 < PARALLEL_SIN2) & (jnp.maximum(u0, u1) > 0.0) & (jnp.minimum(u0, u1) < 1.0)
    ends = []
    for u in (lo, hi):
        pa = a0 + u * da
        q, _ = closest_on_segment(pa, b0, b1)
        ends.append(sphere_pair(pa, sa[0], q, sb[0], fb))
    par = concat(*ends)
    gen = concat(general, general._replace(valid=jnp.zeros((1,), bool)))
    return NarrowResult(*(jnp.where(parallel, p, g) for p, g in zip(par, gen, strict=True)))


def _sphere_vs_local(c_world, r, xb, closest) -> NarrowResult:
    """Sphere (centre, radius) as shape A against shape B given B's local ``closest`` function; one slot."""
    p, rot = frame(xb)
    surf, n_local, d = closest(rot.T @ (c_world - p))
    n_world = -(rot @ n_local)  # from the sphere (A) toward B
    dist = d - r
    surf_w = p + rot @ surf
    sphere_pt = c_world + r * n_world
    return NarrowResult(dist[None], (0.5 * (surf_w + sphere_pt))[None], n_world[None], jnp.ones((1,), bool))


def _capsule_vs(xa, sa, xb, closest, sdf) -> NarrowResult:
    """Capsule A against a convex shape B given B's local ``closest`` point and ``sdf``; three slots."""
    a0, a1 = _segment(xa, sa)
    p, rot = frame(xb)
    l0, l1 = rot.T @ (a0 - p), rot.T @ (a1 - p)
    t = jax.lax.stop_gradient(golden_min(lambda u: sdf(l0 + u * (l1 - l0)), xa.dtype))
    mid = _sphere_vs_local(a0 + t * (a1 - a0), sa[0], xb, closest)
    e0 = _sphere_vs_local(a0, sa[0], xb, closest)
    e1 = _sphere_vs_local(a1, sa[0], xb, closest)
    tol = 1e-7 * (jnp.max(jnp.abs(l1 - l0)) + sa[0])
    ok = (t > 1e-4) & (t < 1.0 - 1e-4) & (mid.dist[0] < jnp.minimum(e0.dist[0], e1.dist[0]) - tol)
    return concat(e0, e1, mid._replace(valid=ok[None]))


def sphere_box(xa, sa, xb, sb) -> NarrowResult:
    """Sphere–box: one contact; a centre inside the box uses the face of least penetration."""
    return _sphere_vs_local(xa[:3], sa[0], xb, lambda q: box_closest(q, sb))


def sphere_cylinder(xa, sa, xb, sb) -> NarrowResult:
    """Sphere–cylinder: one contact against the nearest of barrel, cap or rim (inside: least penetration)."""
    return _sphere_vs_local(xa[:3], sa[0], xb, lambda q: cylinder_closest(q, sb[0], sb[1]))


def capsule_box(xa, sa, xb, sb) -> NarrowResult:
    """Capsule–box: three slots.

    Slots 0 and 1 are the two end-cap spheres against the box. Slot 2 is the point of the core
    segment with the smallest box signed distance (golden-section search on this convex function,
    its parameter under ``stop_gradient``: the gradient of the distance is exact by the envelope
    theorem); it is valid only strictly inside the segment and deeper than both ends by more than
    1e-7·size, so a capsule lying flat on a face gets exactly the two end contacts.
    """
    return _capsule_vs(xa, sa, xb, lambda q: box_closest(q, sb), lambda q: box_sdf(q, sb))


def capsule_cylinder(xa, sa, xb, sb) -> NarrowResult:
    """Capsule–cylinder: three slots, built like :func:`capsule_box` with the cylinder's distance."""
    return _capsule_vs(xa, sa, xb, lambda q: cylinder_closest(q, sb[0], sb[1]),
                       lambda q: cylinder_sdf(q, sb[0], sb[1]))
