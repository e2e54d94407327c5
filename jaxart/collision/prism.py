"""Height-field prisms as convex hulls, and closed-form sphere and capsule contacts against one prism.

A prism is one triangle of a height-field cell (three top vertices, counter-clockwise seen from
above) extruded straight down to the base elevation ``z_base``: six vertices (top ``0, 1, 2``,
bottom ``3, 4, 5`` below them), five faces (top, bottom, three vertical sides) and nine edges. Its
combinatorics are static, so it is expressed as a :class:`~jaxart.collision.hull_geometry.Hull`
(vertex, face and edge tables) and every polytope routine of the narrow phase applies to it.

Closed forms (all in the height-field frame, no iteration):

* point: :func:`~jaxart.collision.hull_geometry.hull_closest` (nearest face interior or edge outside,
  face plane of least penetration inside), exact;
* segment (capsule core): the separating-axis test over the five face normals and the nine edge
  directions crossed with the segment (the complete axis set of a segment against a polytope) gives
  the exact penetration depth and normal when the segment meets the prism; otherwise the distance is
  the smallest of the two end points' closest distances and the nine segment–edge distances (the
  closest pair of a segment and a disjoint convex polytope involves an end point or a polytope edge).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.collision.geometry import segment_segment, unit
from jaxart.collision.hull_geometry import Hull, hull_closest

#: Face polygons ``(5, 4)`` (counter-clockwise about the outward normal; triangles repeat their last vertex):
#: top, bottom, then the side under top edge ``i → i+1``.
PRISM_FACES = np.array([[0, 1, 2, 2], [3, 5, 4, 4], [0, 3, 4, 1], [1, 4, 5, 2], [2, 5, 3, 0]], np.int32)

#: Edges ``(9, 4)``: ``(vertex 0, vertex 1, face 0, face 1)``: top, bottom, vertical.
PRISM_EDGES = np.array([[0, 1, 0, 2], [1, 2, 0, 3], [2, 0, 0, 4],
                        [3, 4, 1, 2], [4, 5, 1, 3], [5, 3, 1, 4],
                        [0, 3, 4, 2], [1, 4, 2, 3], [2, 5, 3, 4]], np.int32)


class SegmentContact(NamedTuple):
    """Contact of a segment with a prism (height-field frame).

    Attributes:
        dist: Scalar signed distance [m] from the prism to the segment (negative: penetration depth).
        normal: ``(3,)`` unit normal from the prism toward the segment.
        on_prism: ``(3,)`` witness point on the prism's surface [m].
        on_segment: ``(3,)`` witness point on the segment [m].
    """

    dist: jnp.ndarray
    normal: jnp.ndarray
    on_prism: jnp.ndarray
    on_segment: jnp.ndarray


def prism_hull(tri: jnp.ndarray, z_base) -> Hull:
    """The prism under a top triangle as a :class:`Hull` (height-field frame).

    Args:
        tri: ``(3, 3)`` top vertices [m], counter-clockwise seen from +z, above ``z_base``.
        z_base: Scalar base elevation [m].

    Returns:
        The prism's hull: 6 vertices, 5 faces (:data:`PRISM_FACES`), 9 edges (:data:`PRISM_EDGES`).
    """
    dt = tri.dtype
    verts = jnp.concatenate([tri, tri.at[:, 2].set(z_base)])
    n_top = jnp.cross(tri[1] - tri[0], tri[2] - tri[0])
    e = jnp.roll(tri, -1, axis=0) - tri
    side = jnp.stack([e[:, 1], -e[:, 0], jnp.zeros(3, dt)], axis=1)  # e × z: outward for a CCW top
    normals = jnp.concatenate([n_top[None], jnp.array([[0.0, 0.0, -1.0]], dt), side])
    normals = normals / jnp.sqrt(jnp.sum(normals * normals, axis=-1, keepdims=True))
    anchor = verts[PRISM_FACES[:, 0]]
    offsets = jnp.sum(normals * anchor, axis=-1)
    return Hull(verts, jnp.ones(6, bool), normals, offsets, jnp.asarray(PRISM_FACES), jnp.asarray(PRISM_EDGES))


def _sat(a: jnp.ndarray, b: jnp.ndarray, h: Hull):
    """Least overlap of segment ``[a, b]`` and the prism over the complete axis set.

    Returns:
        ``(overlap, axis (3,), index)``: ``-overlap`` is the separation along the prism→segment ``axis``;
        ``index < 5`` is a face normal, else edge ``(index - 5) % 9`` crossed with the segment.
    """
    dt = a.dtype
    ea = h.verts[PRISM_EDGES[:, 1]] - h.verts[PRISM_EDGES[:, 0]]
    d = b - a
    cr = jnp.cross(ea, d)
    sq = jnp.sum(cr * cr, axis=-1)
    ok = sq > 1e-12 * jnp.sum(ea * ea, axis=-1) * jnp.dot(d, d)
    cr = cr / jnp.sqrt(jnp.where(ok, sq, 1.0))[:, None]
    axes = jnp.concatenate([h.normals, cr, -cr])
    proj = axes @ h.verts.T
    top = jnp.max(proj, axis=1)
    overlap = top - jnp.minimum(axes @ a, axes @ b)
    # an edge axis counts only with its own edge on the prism's support (parallel edges give the same axis)
    v0 = h.verts[PRISM_EDGES[:, 0]]
    e_proj = jnp.sum(axes[5:] * jnp.concatenate([v0, v0]), axis=-1)
    tol = 1e3 * float(jnp.finfo(dt).eps) * (jnp.max(jnp.abs(h.verts - h.verts[0])) + jnp.max(jnp.abs(d)))
    supported = e_proj >= top[5:] - tol
    valid = jnp.concatenate([jnp.ones(5, bool), ok & supported[:9], ok & supported[9:]])
    big = jnp.asarray(jnp.finfo(dt).max, dt)
    k = jnp.argmin(jnp.where(valid, overlap, big))
    return overlap[k], axes[k], k


def _inside_span(a: jnp.ndarray, b: jnp.ndarray, h: Hull):
    """Parameters ``(t0, t1)`` of the part of segment ``[a, b]`` inside the prism (clipped by its 5 planes)."""
    fa, fb = h.normals @ a - h.offsets, h.normals @ b - h.offsets  # ≤ 0 inside
    den = fa - fb
    ok = jnp.abs(den) > 1e-30
    t = fa / jnp.where(ok, den, 1.0)
    entering = ok & (fa > fb)  # outside at a, inside towards b
    leaving = ok & (fa < fb)
    t0 = jnp.max(jnp.where(entering, t, 0.0))
    t1 = jnp.min(jnp.where(leaving, t, 1.0))
    return jnp.clip(t0, 0.0, 1.0), jnp.clip(jnp.maximum(t0, t1), 0.0, 1.0)


def _penetrating(a, b, h: Hull, overlap, axis, k, seg_pts) -> SegmentContact:
    """Witnesses of a segment that meets the prism: ``overlap`` along ``axis`` (from :func:`_sat`)."""
    t0, t1 = _inside_span(a, b, h)
    d = b - a
    slope = jnp.dot(axis, d) * (t1 - t0)
    tol = 1e-6 * jnp.sqrt(jnp.dot(d, d) + 1e-30)
    t_face = jnp.where(slope > tol, t0, jnp.where(slope < -tol, t1, 0.5 * (t0 + t1)))
    edge = jnp.maximum(k - 5, 0) % 9
    s = jnp.where(k < 5, a + t_face * d, seg_pts[edge])
    return SegmentContact(-overlap, axis, s + overlap * axis, s)


def _separated(a, b, h: Hull, axis, seg_pts, edge_pts) -> SegmentContact:
    """Exact closest points of a segment disjoint from the prism: end points or edges."""
    qa, _, da = hull_closest(a, h)
    qb, _, db = hull_closest(b, h)
    de = jnp.sqrt(jnp.sum((seg_pts - edge_pts) ** 2, axis=-1))
    dist = jnp.concatenate([da[None], db[None], de])
    on_seg = jnp.concatenate([a[None], b[None], seg_pts])
    on_prism = jnp.concatenate([qa[None], qb[None], edge_pts])
    j = jnp.argmin(dist)
    n, length = unit(on_seg[j] - on_prism[j], axis, eps=1e-12)
    return SegmentContact(length, n, on_prism[j], on_seg[j])


def segment_prism(a: jnp.ndarray, b: jnp.ndarray, h: Hull) -> SegmentContact:
    """Signed distance, normal and witness points of segment ``[a, b]`` and a prism (see the module docstring).

    Args:
        a, b: ``(3,)`` segment end points [m] in the prism's frame.
        h: The prism (:func:`prism_hull`).

    Returns:
        A :class:`SegmentContact` (a capsule of radius ``r``: ``dist - r``, witness ``on_segment - r·normal``).
    """
    e0, e1 = h.verts[PRISM_EDGES[:, 0]], h.verts[PRISM_EDGES[:, 1]]
    s, t = jax.vmap(lambda p, q: segment_segment(a, b, p, q))(e0, e1)
    seg_pts = a + s[:, None] * (b - a)
    edge_pts = e0 + t[:, None] * (e1 - e0)
    overlap, axis, k = _sat(a, b, h)
    pen = _penetrating(a, b, h, overlap, axis, k, seg_pts)
    sep = _separated(a, b, h, axis, seg_pts, edge_pts)
    return jax.tree_util.tree_map(lambda p, q: jnp.where(overlap >= 0.0, p, q), pen, sep)
