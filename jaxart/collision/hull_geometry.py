"""Convex-hull tables inside the narrow phase: scaling, world placement, closest points.

A hull arrives as the static tables of :mod:`jaxart.sim.mesh_hull`, padded per pair group:
``verts (H, 3)``, ``vmask (H,)``, ``planes (F, 4)``, ``faces (F, P)`` and ``edges (E, 4)``
(padding rows repeat a real row, so maxima and minima over them are unchanged). Functions here
act on one hull (the narrow phase ``vmap``s them over pairs).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.collision.geometry import frame, unit
from jaxart.sim.mesh_hull import HullTables, convex_hull_tables


class Hull(NamedTuple):
    """A convex hull in one frame (mesh frame after ``shape_scale``, or the world).

    Attributes:
        verts: ``(H, 3)`` vertices [m].
        vmask: ``(H,)`` which vertex rows are real.
        normals: ``(F, 3)`` outward unit face normals.
        offsets: ``(F,)`` face plane offsets [m] (``normal · x <= offset`` inside).
        faces: ``(F, P)`` int32 counter-clockwise polygon vertex indices (last vertex repeated as padding).
        edges: ``(E, 4)`` int32 ``(vertex 0, vertex 1, face 0, face 1)``.
    """

    verts: jnp.ndarray
    vmask: jnp.ndarray
    normals: jnp.ndarray
    offsets: jnp.ndarray
    faces: jnp.ndarray
    edges: jnp.ndarray


def scaled_hull(verts: jnp.ndarray, vmask: jnp.ndarray, planes: jnp.ndarray, faces: jnp.ndarray, edges: jnp.ndarray,
                scale: jnp.ndarray) -> Hull:
    """The hull of one mesh's tables under its per-axis ``shape_scale`` ``(3,)``.

    Vertices scale with ``scale``; face planes map by the inverse transpose (normals ``n / scale``
    renormalised, offsets divided by the same norm), so they stay exact for non-uniform scales.
    """
    n = planes[:, :3] / scale
    length = jnp.linalg.norm(n, axis=-1)
    return Hull(verts * scale, vmask, n / length[:, None], planes[:, 3] / length, faces, edges)


def world_hull(h: Hull, x: jnp.ndarray) -> Hull:
    """``h`` placed at the world transform ``x`` ``(7,)``."""
    c, rot = frame(x)
    normals = h.normals @ rot.T
    return h._replace(verts=c + h.verts @ rot.T, normals=normals, offsets=h.offsets + normals @ c)


def _pad_rows(rows: list[np.ndarray]) -> np.ndarray:
    """Stack arrays padded to the longest by repeating their first row (no minimum or maximum changes)."""
    n = max(len(r) for r in rows)
    return np.stack([np.concatenate([r, np.repeat(r[:1], n - len(r), axis=0)]) for r in rows])


def stack_hulls(hulls: list[HullTables], dtype=jnp.float32) -> tuple[jnp.ndarray, ...]:
    """Narrow-phase arrays ``(verts, vmask, planes, faces, edges)`` of hulls, with a leading axis over ``hulls``.

    Each table is padded to the largest among ``hulls``: padding rows repeat a real row (face
    polygons also repeat their last vertex) and ``vmask`` marks the real vertices.

    Args:
        hulls: :class:`~jaxart.sim.mesh_hull.HullTables` (e.g. ``mesh.hull`` of each mesh shape).
        dtype: Float dtype of the vertex and plane tables.

    Returns:
        ``verts (n, H, 3)``, ``vmask (n, H)``, ``planes (n, F, 4)``, ``faces (n, F, P)`` int32 and
        ``edges (n, E, 4)`` int32.
    """
    if not hulls or not all(isinstance(h, HullTables) for h in hulls):
        raise TypeError("stack_hulls: hulls must be a non-empty list of HullTables (Mesh.hull)")
    p = max(h.faces.shape[1] for h in hulls)
    faces = [np.concatenate([h.faces, np.repeat(h.faces[:, -1:], p - h.faces.shape[1], axis=1)], axis=1)
             for h in hulls]
    nv = max(len(h.vertices) for h in hulls)
    mask = np.array([np.arange(nv) < len(h.vertices) for h in hulls])
    return (jnp.asarray(_pad_rows([h.vertices for h in hulls]), dtype), jnp.asarray(mask),
            jnp.asarray(_pad_rows([h.planes for h in hulls]), dtype), jnp.asarray(_pad_rows(faces), jnp.int32),
            jnp.asarray(_pad_rows([h.edges for h in hulls]), jnp.int32))


def _unit_box_tables():
    corners = np.array([[i, j, k] for i in (-1.0, 1.0) for j in (-1.0, 1.0) for k in (-1.0, 1.0)])
    t = convex_hull_tables(corners, np.zeros((0, 3), np.int64), -1)
    return t.vertices, t.planes, t.faces, t.edges


_BOX = _unit_box_tables()


def box_hull(half_extents: jnp.ndarray) -> Hull:
    """A box of half extents ``(3,)`` as a hull (8 vertices, 6 quads, 12 edges) in its own frame."""
    v, p, f, e = _BOX
    dt = half_extents.dtype
    return scaled_hull(jnp.asarray(v, dt), jnp.ones(8, bool), jnp.asarray(p, dt), jnp.asarray(f), jnp.asarray(e),
                       half_extents)


def polygon_sides(poly: jnp.ndarray, normal: jnp.ndarray, q: jnp.ndarray) -> jnp.ndarray:
    """Signed side values ``(..., P)`` of points ``q (..., 3)`` against the edges of a CCW polygon ``(P, 3)``.

    Non-negative for every edge = inside (zero-length padding edges give 0).
    """
    e = jnp.roll(poly, -1, axis=0) - poly
    rel = q[..., None, :] - poly
    return jnp.einsum("...pk,k->...p", jnp.cross(e, rel), normal)


def hull_closest(p: jnp.ndarray, h: Hull) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Closest hull-surface point, outward unit normal and signed distance of a point (same frame as ``h``).

    Inside: the face plane of least penetration (exact for a convex polytope). Outside: the nearest
    of the face interiors (projection inside the polygon) and the edges (which include the
    vertices). Cost ``O(F·P + E)``.
    """
    s = h.normals @ p - h.offsets
    f = jnp.argmax(s)
    inside = s[f] <= 0.0
    q = p - s[:, None] * h.normals
    polys = h.verts[h.faces]  # (F, P, 3)
    size = jnp.max(jnp.abs(h.verts))
    side = jnp.einsum("fpk,fk->fp", jnp.cross(jnp.roll(polys, -1, axis=1) - polys, q[:, None, :] - polys),
                      h.normals)
    tol = 1e2 * float(jnp.finfo(p.dtype).eps) * size * size
    in_face = (s > 0.0) & jnp.all(side >= -tol, axis=1)
    big = jnp.asarray(jnp.finfo(p.dtype).max, p.dtype)
    d_face = jnp.where(in_face, s, big)
    a, b = h.verts[h.edges[:, 0]], h.verts[h.edges[:, 1]]
    pts = _closest_on_edges(p, a, b)
    d2 = jnp.sum((pts - p) ** 2, axis=-1)
    k = jnp.argmin(d2)
    n_edge, d_edge = unit(p - pts[k], h.normals[f], eps=1e-12)
    fo = jnp.argmin(d_face)
    use_face = d_face[fo] <= d_edge
    surf_out = jnp.where(use_face, q[fo], pts[k])
    n_out = jnp.where(use_face, h.normals[fo], n_edge)
    d_out = jnp.where(use_face, d_face[fo], d_edge)
    return (jnp.where(inside, q[f], surf_out), jnp.where(inside, h.normals[f], n_out),
            jnp.where(inside, s[f], d_out))


def _closest_on_edges(p, a, b):
    """Closest points ``(E, 3)`` of segments ``[a_e, b_e]`` to ``p``."""
    d = b - a
    dd = jnp.sum(d * d, axis=-1)
    ok = dd > 1e-20
    t = jnp.clip(jnp.sum((p - a) * d, axis=-1) / jnp.where(ok, dd, 1.0), 0.0, 1.0)
    return a + jnp.where(ok, t, 0.0)[:, None] * d


def hull_sdf(p: jnp.ndarray, h: Hull) -> jnp.ndarray:
    """Signed distance of a point to the hull (negative inside)."""
    return hull_closest(p, h)[2]
