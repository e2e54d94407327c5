"""Cylinder (shape A) against boxes, cylinders and convex meshes: a feature-sampling narrow phase.

Candidates, each tested exactly against the other shape's signed distance:

* **rim points** of each cap of every cylinder: four points at 90° steps, starting at the rim
  point deepest toward the other shape's nearest surface (the cap plane's projection of minus the
  other shape's outward normal at its point closest to the cap centre; local X when that
  projection vanishes, held fixed). This is exact for a cylinder standing, lying or tilted on a
  face (cans on tables, boxes on cans' barrels or caps);
* **vertices** of the other shape (box corners, mesh vertices) against the cylinder.

The ``features.MAX_POINTS`` (8) deepest candidates are kept after merging near-coincident ones.
Missed: edge-on-barrel and barrel-on-barrel crossings with no rim point or vertex inside the other
shape (two cylinders crossing in an X at mid-length). Like the other pairs, normals point from A
(the cylinder) to B and points lie midway between the surfaces.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.collision.features import box_corners, merge_deepest, vertices_against
from jaxart.collision.geometry import NarrowResult, box_closest, cylinder_closest, frame, unit
from jaxart.collision.narrow_mesh import _triangles, mesh_closest


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


def _combine(r1: NarrowResult, r2: NarrowResult, size) -> NarrowResult:
    return merge_deepest(NarrowResult(*(jnp.concatenate(x, axis=0) for x in zip(r1, r2, strict=True))), size)


def cylinder_box(xa, sa, xb, sb) -> NarrowResult:
    """Cylinder–box (``features.MAX_POINTS`` slots)."""
    box = lambda q: box_closest(q, sb)  # noqa: E731
    r1 = vertices_against(_rim_points(xa, sa, xb, box), jnp.ones(8, bool), xb, box, 1.0)
    r2 = vertices_against(box_corners(xb, sb), jnp.ones(8, bool), xa, _cyl_closest(sa), -1.0)
    return _combine(r1, r2, sa[0] + sa[1] + jnp.sum(sb))


def cylinder_cylinder(xa, sa, xb, sb) -> NarrowResult:
    """Cylinder–cylinder (``features.MAX_POINTS`` slots): each cylinder's rim against the other."""
    r1 = vertices_against(_rim_points(xa, sa, xb, _cyl_closest(sb)), jnp.ones(8, bool), xb, _cyl_closest(sb), 1.0)
    r2 = vertices_against(_rim_points(xb, sb, xa, _cyl_closest(sa)), jnp.ones(8, bool), xa, _cyl_closest(sa), -1.0)
    return _combine(r1, r2, sa[0] + sa[1] + sb[0] + sb[1])


def cylinder_mesh(xa, sa, xb, sb, verts, vmask, tris) -> NarrowResult:
    """Cylinder–convex mesh (``features.MAX_POINTS`` slots): rim points and mesh vertices."""
    geom = _triangles(verts, sb, tris)
    mesh = lambda q: mesh_closest(q, geom)  # noqa: E731
    r1 = vertices_against(_rim_points(xa, sa, xb, mesh), jnp.ones(8, bool), xb, mesh, 1.0)
    c, rot = frame(xb)
    r2 = vertices_against(c + (verts * sb) @ rot.T, vmask, xa, _cyl_closest(sa), -1.0)
    return _combine(r1, r2, sa[0] + sa[1] + jnp.max(jnp.abs(verts * sb)))
