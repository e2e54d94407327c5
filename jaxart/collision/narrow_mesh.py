"""Narrow phase for convex triangle meshes (MESH / CONVEX_MESH) against spheres, capsules, boxes, meshes.

A mesh shape is treated as the convex solid bounded by its triangles (outward winding, as Newton's
convex-hull collision assumes): its signed distance is the distance to the nearest triangle
outside and ``max_f n_f · (p − a_f)`` (the nearest face plane) inside. Non-convex meshes are not
detected as such; their inside test is wrong.

Mesh data arrives as padded static arrays: ``verts (V, 3)`` in the mesh frame (scaled here by
``shape_scale``), ``vmask (V,)`` marking real vertices, and ``tris (T, 3)`` vertex indices
(padding rows repeat a real triangle, which changes no minimum or maximum).

* sphere–mesh and capsule–mesh are exact (the capsule uses the golden-section search of
  :func:`~jaxart.collision.narrow_convex.capsule_box` on the mesh's convex distance).
* box–mesh and mesh–mesh are **vertex-based**: every vertex (box corner) of each shape is tested
  against the other's signed distance and the ``features.MAX_POINTS`` deepest are kept (near-coincident
  candidates merged). Resting and face contacts are exact; an edge crossing an edge with no vertex
  inside the other shape is missed, and so is the overlap of two faces whose vertices all lie on
  the other shape's side planes (equal, aligned boxes: use BOX shapes there).

Cost: ``O(V·T)`` per pair for vertex–mesh tests (every vertex against every triangle).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.collision.features import box_corners, merge_deepest, vertices_against
from jaxart.collision.geometry import NarrowResult, box_closest, closest_on_segment, frame, unit
from jaxart.collision.narrow_convex import _capsule_vs, _sphere_vs_local


def _triangles(verts, scale, tris):
    v = verts * scale
    a, b, c = v[tris[:, 0]], v[tris[:, 1]], v[tris[:, 2]]
    n, area2 = unit(jnp.cross(b - a, c - a), jnp.zeros(3, verts.dtype), eps=1e-18)
    return a, b, c, n, area2 > 1e-18


def _closest_on_triangles(p, a, b, c, n):
    """Closest points ``(T, 3)`` on each triangle to ``p``."""
    q = p - jnp.sum((p - a) * n, axis=-1, keepdims=True) * n

    def side(u, w):
        return jnp.sum(jnp.cross(w - u, q - u) * n, axis=-1) >= 0.0

    inside = side(a, b) & side(b, c) & side(c, a)
    edge_pts = [_closest_on_segments(p, u, w) for u, w in ((a, b), (b, c), (c, a))]
    cands = jnp.stack([q, *edge_pts], axis=1)  # (T, 4, 3)
    d2 = jnp.sum((cands - p) ** 2, axis=-1)
    d2 = d2.at[:, 0].set(jnp.where(inside, d2[:, 0], jnp.inf))
    k = jnp.argmin(d2, axis=1)
    return jnp.take_along_axis(cands, k[:, None, None], axis=1)[:, 0]


def _closest_on_segments(p, a, b):
    """Closest points on segments ``[a_i, b_i]`` ``(T, 3)`` to the point ``p``."""
    return jax.vmap(lambda u, w: closest_on_segment(p, u, w)[0])(a, b)


def mesh_closest(p, geom):
    """Closest surface point, outward normal and signed distance of a local point to a convex mesh."""
    a, b, c, n, ok = geom
    plane = jnp.where(ok, jnp.sum((p - a) * n, axis=-1), -jnp.inf)
    f = jnp.argmax(plane)
    inside = plane[f] <= 0.0
    pts = _closest_on_triangles(p, a, b, c, n)
    d2 = jnp.where(ok, jnp.sum((pts - p) ** 2, axis=-1), jnp.inf)
    t = jnp.argmin(d2)
    n_out, d_out = unit(p - pts[t], n[t], eps=1e-12)
    surf = jnp.where(inside, p - plane[f] * n[f], pts[t])
    return surf, jnp.where(inside, n[f], n_out), jnp.where(inside, plane[f], d_out)


def mesh_sdf(p, geom):
    """Signed distance of a local point to a convex mesh (negative inside)."""
    return mesh_closest(p, geom)[2]


def sphere_mesh(xa, sa, xb, sb, verts, vmask, tris) -> NarrowResult:
    """Sphere–convex mesh: one exact contact."""
    geom = _triangles(verts, sb, tris)
    return _sphere_vs_local(xa[:3], sa[0], xb, lambda q: mesh_closest(q, geom))


def capsule_mesh(xa, sa, xb, sb, verts, vmask, tris) -> NarrowResult:
    """Capsule–convex mesh: three slots (two end caps and the deepest interior point), as capsule–box."""
    geom = _triangles(verts, sb, tris)
    return _capsule_vs(xa, sa, xb, lambda q: mesh_closest(q, geom), lambda q: mesh_sdf(q, geom))


def box_mesh(xa, sa, xb, sb, verts, vmask, tris) -> NarrowResult:
    """Box–convex mesh, vertex-based (``features.MAX_POINTS`` slots; see the module docstring)."""
    geom = _triangles(verts, sb, tris)
    corners = box_corners(xa, sa)
    r1 = vertices_against(corners, jnp.ones(8, bool), xb, lambda q: mesh_closest(q, geom), 1.0)
    c, rot = frame(xb)
    mverts = c + (verts * sb) @ rot.T
    r2 = vertices_against(mverts, vmask, xa, lambda q: box_closest(q, sa), -1.0)
    res = NarrowResult(*(jnp.concatenate(x, axis=0) for x in zip(r1, r2, strict=True)))
    return merge_deepest(res, jnp.sum(sa))


def mesh_mesh(xa, sa, xb, sb, verts_a, vmask_a, tris_a, verts_b, vmask_b, tris_b) -> NarrowResult:
    """Convex mesh–convex mesh, vertex-based (``features.MAX_POINTS`` slots; see the module docstring)."""
    ga, gb = _triangles(verts_a, sa, tris_a), _triangles(verts_b, sb, tris_b)
    ca, ra = frame(xa)
    cb, rb = frame(xb)
    wa = ca + (verts_a * sa) @ ra.T
    wb = cb + (verts_b * sb) @ rb.T
    r1 = vertices_against(wa, vmask_a, xb, lambda q: mesh_closest(q, gb), 1.0)
    r2 = vertices_against(wb, vmask_b, xa, lambda q: mesh_closest(q, ga), -1.0)
    res = NarrowResult(*(jnp.concatenate(x, axis=0) for x in zip(r1, r2, strict=True)))
    size = jnp.max(jnp.abs(verts_a * sa)) + jnp.max(jnp.abs(verts_b * sb))
    return merge_deepest(res, size)
