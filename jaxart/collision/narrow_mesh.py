"""Narrow phase for mesh shapes (MESH / CONVEX_MESH) against spheres, capsules, boxes and meshes.

Every mesh collides through its **convex hull** (computed once per mesh at model build, capped
at ``Mesh.maxhullvert`` vertices; see :mod:`jaxart.sim.mesh_hull`). A non-convex mesh is
therefore approximated by its hull (its cavities are filled); split it into convex parts (several
shapes) where concavity matters. The raw triangles never enter the narrow phase.

Hull data arrives as padded static arrays, in the mesh frame and scaled here by ``shape_scale``:
``verts (H, 3)``, ``vmask (H,)`` (real vertex rows), ``planes (F, 4)`` (outward unit normal,
offset), ``faces (F, P)`` (CCW polygon vertex indices) and ``edges (E, 4)`` (two vertices, two
adjacent faces); padding rows repeat real rows.

* sphere–mesh: exact (hull closest point, ``O(F·P + E)``).
* capsule–mesh: the two end caps and the deepest interior point of the core segment
  (golden-section search on the hull's signed distance, as capsule–box).
* box–mesh and mesh–mesh: separating-axis test over face normals and Gauss-map-pruned edge
  pairs, with a clipped multi-point face manifold or one edge–edge contact
  (:mod:`jaxart.collision.narrow_hull`).
"""

from __future__ import annotations

from jaxart.collision.geometry import NarrowResult
from jaxart.collision.hull_geometry import box_hull, hull_closest, hull_sdf, scaled_hull, world_hull
from jaxart.collision.narrow_convex import _capsule_vs, _sphere_vs_local
from jaxart.collision.narrow_hull import hull_hull


def sphere_mesh(xa, sa, xb, sb, verts, vmask, planes, faces, edges) -> NarrowResult:
    """Sphere–mesh hull: one exact contact."""
    h = scaled_hull(verts, vmask, planes, faces, edges, sb)
    return _sphere_vs_local(xa[:3], sa[0], xb, lambda q: hull_closest(q, h))


def capsule_mesh(xa, sa, xb, sb, verts, vmask, planes, faces, edges) -> NarrowResult:
    """Capsule–mesh hull: three slots (two end caps and the deepest interior point), as capsule–box."""
    h = scaled_hull(verts, vmask, planes, faces, edges, sb)
    return _capsule_vs(xa, sa, xb, lambda q: hull_closest(q, h), lambda q: hull_sdf(q, h))


def box_mesh(xa, sa, xb, sb, verts, vmask, planes, faces, edges) -> NarrowResult:
    """Box–mesh hull: SAT + clipping (``narrow_hull.MAX_POINTS`` slots)."""
    hb = world_hull(scaled_hull(verts, vmask, planes, faces, edges, sb), xb)
    return hull_hull(world_hull(box_hull(sa), xa), hb)


def mesh_mesh(xa, sa, xb, sb, verts_a, vmask_a, planes_a, faces_a, edges_a,
              verts_b, vmask_b, planes_b, faces_b, edges_b) -> NarrowResult:
    """Mesh hull–mesh hull: SAT + clipping (``narrow_hull.MAX_POINTS`` slots)."""
    ha = world_hull(scaled_hull(verts_a, vmask_a, planes_a, faces_a, edges_a, sa), xa)
    hb = world_hull(scaled_hull(verts_b, vmask_b, planes_b, faces_b, edges_b, sb), xb)
    return hull_hull(ha, hb)
