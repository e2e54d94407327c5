"""Cylinder (shape A) against boxes, cylinders and convex meshes: a feature-sampling narrow phase.

Candidates, each tested exactly against the other shape's signed distance:

* **rim points** of each cap of every cylinder: four points at 90° steps, starting at the rim
  point deepest toward the other shape's nearest surface (the cap plane's projection of minus the
  other shape's outward normal at its point closest to the cap centre; local X when that
  projection vanishes, held fixed). This is exact for a cylinder standing, lying or tilted on a
  face (cans on tables, boxes on cans' barrels or caps);
* **vertices** of the other shape (box corners, mesh hull vertices) against the cylinder;
* **edge points** of the other shape: on each box / hull edge, the point deepest inside the
  cylinder (golden-section search on the cylinder's signed distance along the edge, parameter
  under ``stop_gradient``), which catches an edge crossing the barrel or a cap with both of its
  vertices outside;
* **barrels** of two cylinders: the closest points of their axis segments when both lie strictly
  inside the segments (two cylinders crossing in an X at mid-length), exact like capsule–capsule.

The ``features.MAX_POINTS`` (8) deepest candidates are kept after merging near-coincident ones.
Meshes collide through their convex hull (:mod:`jaxart.sim.mesh_hull`). Missed: a rim arc crossing
a face edge or the other barrel between the sampled rim points. Like the other pairs, normals
point from A (the cylinder) to B and points lie midway between the surfaces.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.collision.features import box_corners, merge_deepest, vertices_against
from jaxart.collision.geometry import (
    NarrowResult,
    box_closest,
    cylinder_closest,
    cylinder_sdf,
    frame,
    golden_min,
    segment_segment,
    sphere_pair,
    unit,
)
from jaxart.collision.hull_geometry import hull_closest, scaled_hull
from jaxart.collision.narrow_convex import PARALLEL_SIN2

#: The 12 edges of ``features.box_corners`` (corner ``i`` has signs from the bits of ``i``: x = 4, y = 2, z = 1).
_BOX_EDGES = np.array([(i, i | b) for i in range(8) for b in (1, 2, 4) if not i & b], np.int32)


def _rim_points(xc, sc, xq, closest_q) -> jnp.ndarray:
    """Eight world rim points of cylinder ``(xc, sc)``, oriented toward shape Q (see module docstring)."""
    c, rot = frame(xc)
    pq, rq = frame(xq)
    ax = rot[:, 2]
    pts = []
    for side in (1.0, -1.0):
        cap = c + side * sc[1] * ax
        n_q = rq @ closest_q(rq.T @ (cap - pq))[1]
        d, _ = unit(-(n_q - jnp.dot(n_q, ax) * ax), rot[:, 0], eps=1e-6)
        e = jnp.cross(ax, d)
        pts.append(cap + sc[0] * jnp.stack([d, e, -d, -e]))
    return jnp.concatenate(pts)


def _cyl_closest(s):
    return lambda q: cylinder_closest(q, s[0], s[1])


def _combine(*parts: NarrowResult, size) -> NarrowResult:
    return merge_deepest(NarrowResult(*(jnp.concatenate(x, axis=0) for x in zip(*parts, strict=True))), size)


def _edge_points(p0, p1, xc, sc):
    """Per edge ``[p0_e, p1_e]`` (world ``(E, 3)``) its point deepest inside cylinder ``(xc, sc)`` and validity."""
    c, rot = frame(xc)
    l0, l1 = (p0 - c) @ rot, (p1 - c) @ rot

    def search(a, b):
        return golden_min(lambda u: cylinder_sdf(a + u * (b - a), sc[0], sc[1]), p0.dtype)

    t = jax.lax.stop_gradient(jax.vmap(search)(l0, l1))
    return p0 + t[:, None] * (p1 - p0), (t > 1e-4) & (t < 1.0 - 1e-4)


def cylinder_box(xa, sa, xb, sb) -> NarrowResult:
    """Cylinder–box (``features.MAX_POINTS`` slots)."""
    box = lambda q: box_closest(q, sb)  # noqa: E731
    r1 = vertices_against(_rim_points(xa, sa, xb, box), jnp.ones(8, bool), xb, box, 1.0)
    corners = box_corners(xb, sb)
    r2 = vertices_against(corners, jnp.ones(8, bool), xa, _cyl_closest(sa), -1.0)
    pts, ok = _edge_points(corners[_BOX_EDGES[:, 0]], corners[_BOX_EDGES[:, 1]], xa, sa)
    r3 = vertices_against(pts, ok, xa, _cyl_closest(sa), -1.0)
    return _combine(r1, r2, r3, size=sa[0] + sa[1] + jnp.sum(sb))


def _barrels(xa, sa, xb, sb) -> NarrowResult:
    """Barrel–barrel contact of two crossing cylinders (one slot): closest points of the axes, both interior.

    Interior closest points of non-parallel axis segments are joined by a common perpendicular, so
    the contact lies on both barrels; intersecting axes fall back to the axes' cross product
    (oriented toward B, held fixed).
    """
    ca, ra = frame(xa)
    cb, rb = frame(xb)
    da, db = ra[:, 2] * sa[1], rb[:, 2] * sb[1]
    s, t = segment_segment(ca - da, ca + da, cb - db, cb + db)
    cross = jnp.cross(da, db)
    sin2 = jnp.dot(cross, cross) / (jnp.dot(da, da) * jnp.dot(db, db))
    fb, _ = unit(cross * jnp.where(jnp.dot(cross, cb - ca) >= 0.0, 1.0, -1.0), ra[:, 0], eps=1e-12)
    res = sphere_pair(ca - da + 2.0 * s * da, sa[0], cb - db + 2.0 * t * db, sb[0], fb)
    ok = (sin2 > PARALLEL_SIN2) & (s > 1e-4) & (s < 1.0 - 1e-4) & (t > 1e-4) & (t < 1.0 - 1e-4)
    return res._replace(valid=ok[None])


def cylinder_cylinder(xa, sa, xb, sb) -> NarrowResult:
    """Cylinder–cylinder (``features.MAX_POINTS`` slots): each rim against the other cylinder, and the barrels."""
    r1 = vertices_against(_rim_points(xa, sa, xb, _cyl_closest(sb)), jnp.ones(8, bool), xb, _cyl_closest(sb), 1.0)
    r2 = vertices_against(_rim_points(xb, sb, xa, _cyl_closest(sa)), jnp.ones(8, bool), xa, _cyl_closest(sa), -1.0)
    return _combine(r1, r2, _barrels(xa, sa, xb, sb), size=sa[0] + sa[1] + sb[0] + sb[1])


def cylinder_mesh(xa, sa, xb, sb, verts, vmask, planes, faces, edges) -> NarrowResult:
    """Cylinder–mesh hull (``features.MAX_POINTS`` slots): rim points, hull vertices and hull edge points."""
    h = scaled_hull(verts, vmask, planes, faces, edges, sb)
    mesh = lambda q: hull_closest(q, h)  # noqa: E731
    r1 = vertices_against(_rim_points(xa, sa, xb, mesh), jnp.ones(8, bool), xb, mesh, 1.0)
    c, rot = frame(xb)
    world = c + h.verts @ rot.T
    r2 = vertices_against(world, vmask, xa, _cyl_closest(sa), -1.0)
    pts, ok = _edge_points(world[edges[:, 0]], world[edges[:, 1]], xa, sa)
    r3 = vertices_against(pts, ok, xa, _cyl_closest(sa), -1.0)
    return _combine(r1, r2, r3, size=sa[0] + sa[1] + jnp.max(jnp.abs(h.verts)))
