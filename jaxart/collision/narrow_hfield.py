"""Narrow phase: height field (shape A) against sphere, capsule, ellipsoid, cylinder, box and mesh (B).

MuJoCo's construction (``mjc_ConvexHField``): every grid cell under the other shape is split into
two triangles along the diagonal from grid vertex ``(row r, col c)`` to ``(r + 1, c + 1)``:
``{(r+1, c), (r, c), (r+1, c+1)}`` and ``{(r, c), (r, c+1), (r+1, c+1)}`` (counter-clockwise seen
from above). Each triangle, extruded down to the base plane, is a convex prism
(:mod:`jaxart.collision.prism`); each prism is collided with the shape and the
:data:`~jaxart.collision.features.MAX_POINTS` deepest distinct contacts are kept:

* sphere: the exact closest point of the prism to the centre (one contact per prism, closed form);
* capsule: the exact segment–prism distance or separating-axis penetration (one contact per prism,
  closed form, :func:`~jaxart.collision.prism.segment_prism`);
* box and mesh: the polytope separating-axis test with a clipped face manifold
  (:func:`~jaxart.collision.narrow_hull.hull_box`, and ``hull_hull`` as box–mesh, :data:`PRISM_SLOTS` spread
  points per prism; separated prisms report the separating-axis gap, a lower bound of the
  distance);
* cylinder: the exact separating-axis penetration over a complete axis set, one contact per prism
  (:func:`~jaxart.collision.prism_cylinder.cylinder_prism`);
* ellipsoid: the exact separating-axis penetration over faces, edge arcs and vertex–surface normals, one
  contact per prism (:func:`~jaxart.collision.prism_ellipsoid.ellipsoid_prism`).

Geometry in the height-field shape frame (jaxart's :class:`~jaxart.sim.heightfield.Heightfield`,
shape scale ``(sx, sy, sz)``, positive): grid vertex ``(r, c)`` at ``x = (2c/(ncol-1) - 1) hx sx``,
``y = (2r/(nrow-1) - 1) hy sy``, top ``z = sz · heights[r, c]``; the prisms' base lies at
``z = sz (min_z - base)`` (MuJoCo's ``-size[3]`` below its shifted origin).

Static program: a fixed window of ``(wr, wc)`` cells (on the host, from the other shape's bounding
radius plus margins and gaps and the grid spacing: ``floor(2 reach / cell) + 2`` cells cover every
cell that the shape's bounding box can touch) is placed around the shape's position with
``lax.dynamic_slice`` and clamped to the grid; cells beyond a smaller grid are invalid. MuJoCo
applies the detection margin by raising the prism tops; here prisms are exact and ``collide``
applies margin and gap as for every pair.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from jaxart.collision.features import merge_deepest
from jaxart.collision.geometry import NarrowResult, frame
from jaxart.collision.hull_geometry import Hull, box_hull, hull_closest, scaled_hull, world_hull
from jaxart.collision.narrow_hull import hull_box, hull_hull
from jaxart.collision.prism import prism_hull, segment_prism
from jaxart.collision.prism_cylinder import cylinder_prism
from jaxart.collision.prism_ellipsoid import ellipsoid_prism
from jaxart.math.transform import transform_inverse, transform_mul

#: Face-contact points kept per prism for boxes and meshes (the window's prisms are merged to ``MAX_POINTS``
#: afterwards).
PRISM_SLOTS = 4

#: Grid-table columns of ``info`` (per pair): half extents, grid size, base elevation (unscaled).
INFO_FIELDS = ("hx", "hy", "nrow", "ncol", "z_base")


def _window_origin(xa, sa, xb, info, window):
    """Grid indices ``(r0, c0)`` of the window's first cell around B's position."""
    c, rot = frame(xa)
    local = rot.T @ (xb[:3] - c)
    hx, hy, nrow, ncol = info[0] * sa[0], info[1] * sa[1], info[2], info[3]
    fc = (local[0] + hx) / (2.0 * hx) * (ncol - 1.0)
    fr = (local[1] + hy) / (2.0 * hy) * (nrow - 1.0)
    c0 = jnp.clip(jnp.floor(fc - 0.5 * (window[1] - 1)), 0.0, jnp.maximum(ncol - 1.0 - window[1], 0.0))
    r0 = jnp.clip(jnp.floor(fr - 0.5 * (window[0] - 1)), 0.0, jnp.maximum(nrow - 1.0 - window[0], 0.0))
    return lax.stop_gradient(r0).astype(jnp.int32), lax.stop_gradient(c0).astype(jnp.int32)


def _cell_prisms(heights, sa, info, r0, c0, window):
    """Top triangles ``(2 wr wc, 3, 3)`` (local, scaled) of the window's prisms and their validity."""
    wr, wc = window
    sub = lax.dynamic_slice(heights, (r0, c0), (wr + 1, wc + 1)) * sa[2]
    hx, hy, nrow, ncol = info[0] * sa[0], info[1] * sa[1], info[2], info[3]
    rows = (r0 + jnp.arange(wr + 1)).astype(heights.dtype)
    cols = (c0 + jnp.arange(wc + 1)).astype(heights.dtype)
    ys = 2.0 * rows / (nrow - 1.0) * hy - hy
    xs = 2.0 * cols / (ncol - 1.0) * hx - hx
    pts = jnp.stack([jnp.broadcast_to(xs[None, :], sub.shape), jnp.broadcast_to(ys[:, None], sub.shape), sub], -1)
    p00, p10, p01, p11 = pts[:-1, :-1], pts[1:, :-1], pts[:-1, 1:], pts[1:, 1:]  # p{dr}{dc}
    t1 = jnp.stack([p10, p00, p11], axis=2).reshape(-1, 3, 3)
    t2 = jnp.stack([p00, p01, p11], axis=2).reshape(-1, 3, 3)
    ok = ((rows[:-1, None] < nrow - 1.0) & (cols[None, :-1] < ncol - 1.0)).reshape(-1)
    return jnp.concatenate([t1, t2]), jnp.concatenate([ok, ok])


def hfield_prisms(xa, sa, xb, heights, info, window: tuple[int, int], one: Callable) -> NarrowResult:
    """Contacts of B with every prism of its window by a closed form ``one``; ``MAX_POINTS`` slots.

    Args:
        xa, sa: Height-field pose ``(7,)`` and scale ``(3,)``.
        xb: Pose ``(7,)`` of B (places the window).
        heights: ``(R, C)`` grid elevations [m] in the shape frame, unscaled (padded to the group's largest grid).
        info: ``(5,)`` ``INFO_FIELDS``: ``hx, hy`` [m], ``nrow, ncol`` (as floats), base elevation [m] (unscaled).
        window: Static ``(rows, cols)`` of cells tested around B.
        one: ``prism Hull (height-field frame) -> NarrowResult`` with ``k`` slots in the height-field
            frame (normals from the prism toward B).

    Returns:
        The deepest distinct contacts, world frame.
    """
    r0, c0 = _window_origin(xa, sa, xb, info, window)
    tris, ok = _cell_prisms(heights, sa, info, r0, c0, window)
    z_base = info[4] * sa[2]
    res = jax.vmap(lambda t: one(prism_hull(t, z_base)))(tris)
    c, rot = frame(xa)
    res = NarrowResult(res.dist.reshape(-1), c + res.point.reshape(-1, 3) @ rot.T, res.normal.reshape(-1, 3) @ rot.T,
                       (res.valid & ok[:, None]).reshape(-1))
    return merge_deepest(res, info[0] * sa[0] + info[1] * sa[1])


def _local_pose(xa, xb):
    """Pose ``(7,)`` of B in the height-field frame."""
    return transform_mul(transform_inverse(xa), xb)


def hfield_sphere(xa, sa, xb, sb, heights, info, *, window) -> NarrowResult:
    """Height field – sphere: the exact closest point of each prism to the centre (closed form)."""
    centre, r = _local_pose(xa, xb)[:3], sb[0]

    def one(h: Hull) -> NarrowResult:
        q, n, d = hull_closest(centre, h)
        return NarrowResult((d - r)[None], (0.5 * (q + centre - r * n))[None], n[None], jnp.ones((1,), bool))

    return hfield_prisms(xa, sa, xb, heights, info, window, one)


def hfield_capsule(xa, sa, xb, sb, heights, info, *, window) -> NarrowResult:
    """Height field – capsule: the exact segment–prism distance or penetration of each prism (closed form)."""
    c, rot = frame(_local_pose(xa, xb))
    a, b, r = c - sb[1] * rot[:, 2], c + sb[1] * rot[:, 2], sb[0]

    def one(h: Hull) -> NarrowResult:
        s = segment_prism(a, b, h)
        point = 0.5 * (s.on_prism + s.on_segment - r * s.normal)
        return NarrowResult((s.dist - r)[None], point[None], s.normal[None], jnp.ones((1,), bool))

    return hfield_prisms(xa, sa, xb, heights, info, window, one)
def hfield_ellipsoid(xa, sa, xb, sb, heights, info, *, window) -> NarrowResult:
    """Height field – ellipsoid: the exact separating-axis penetration per prism (:mod:`.prism_ellipsoid`)."""
    c, rot = frame(_local_pose(xa, xb))
    return hfield_prisms(xa, sa, xb, heights, info, window, lambda h: ellipsoid_prism(c, rot, sb, h))


def hfield_cylinder(xa, sa, xb, sb, heights, info, *, window) -> NarrowResult:
    """Height field – cylinder: the exact separating-axis penetration per prism (:mod:`.prism_cylinder`)."""
    c, rot = frame(_local_pose(xa, xb))
    return hfield_prisms(xa, sa, xb, heights, info, window, lambda h: cylinder_prism(c, rot[:, 2], sb[0], sb[1], h))


def hfield_box(xa, sa, xb, sb, heights, info, *, window) -> NarrowResult:
    """Height field – box: separating axes and face clipping against each prism."""
    xl = _local_pose(xa, xb)
    hb = world_hull(box_hull(sb), xl)
    rot = frame(xl)[1]
    return hfield_prisms(xa, sa, xb, heights, info, window, lambda h: hull_box(h, hb, rot, sb, PRISM_SLOTS))


def hfield_mesh(xa, sa, xb, sb, heights, info, verts, vmask, planes, faces, edges, *, window) -> NarrowResult:
    """Height field – mesh hull (tables ``verts, vmask, planes, faces, edges`` as for box–mesh), as a box."""
    hb = world_hull(scaled_hull(verts, vmask, planes, faces, edges, sb), _local_pose(xa, xb))
    return hfield_prisms(xa, sa, xb, heights, info, window, lambda h: hull_hull(h, hb, PRISM_SLOTS))
