"""Ray casts against meshes and height fields as triangle sets (MuJoCo's ``mj_ray`` rules for these geometries).

MuJoCo casts rays against a mesh's own triangles (not its convex hull: a ray through a concavity passes), and
against a height field's top triangles, its four side walls (from the base up to the edge profile) and its base
box; every triangle is hit from either side, so from inside a mesh or height field the ray stops at the first
surface it crosses (for a height field the base box's top counts, the prisms' inner walls do not). Here both
become a static triangle table in the shape frame (unscaled; :func:`mesh_triangles`, :func:`heightfield_triangles`)
scaled per axis by the traced ``shape_scale`` at every cast (:func:`ray_triangle_set`), so the distance is smooth in
the ray, the shape pose and the scale away from grazing hits and triangle edges. The cost is linear in the number
of triangles (no acceleration structure: every ray tests every triangle).

Height-field geometry follows :class:`~jaxart.sim.heightfield.Heightfield` and the collision's triangulation
(:mod:`jaxart.collision.narrow_hfield`: grid vertex ``(r, c)`` at ``x = (2c/(ncol−1) − 1) hx``,
``y = (2r/(nrow−1) − 1) hy``, top ``heights[r, c]``; cell diagonal from ``(r, c)`` to ``(r+1, c+1)``; the base box
from ``min_z − base`` to ``min_z``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.sim.heightfield import DEFAULT_HFIELD_BASE, Heightfield

_EPS = 1e-15


def mesh_triangles(mesh) -> np.ndarray:
    """``(t, 3, 3)`` triangles [m] of a :class:`~jaxart.sim.builder_shapes.Mesh` in its shape frame (unscaled).

    Raises:
        ValueError: The mesh has no triangles.
    """
    idx = np.asarray(mesh.indices, np.int64).reshape(-1, 3)
    if not idx.size:
        raise ValueError("mesh_triangles: the mesh has no triangles (rays need its faces)")
    return np.asarray(mesh.vertices, np.float64)[idx]


def _quads(a, b, c, d) -> np.ndarray:
    """Two triangles per quad ``a b c d`` (arrays of ``(n, 3)`` corners in order)."""
    return np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def heightfield_triangles(hf: Heightfield) -> np.ndarray:
    """``(t, 3, 3)`` triangles [m] of a height field's surface, side walls and base box in its shape frame (unscaled).

    Args:
        hf: The :class:`~jaxart.sim.heightfield.Heightfield`.

    Returns:
        Top triangles ``2 (nrow−1)(ncol−1)``, side walls ``4 (nrow−1 + ncol−1)``, base box 12.
    """
    h = np.asarray(hf.heights, np.float64)
    nr, nc = h.shape
    xs = np.linspace(-hf.hx, hf.hx, nc)
    ys = np.linspace(-hf.hy, hf.hy, nr)
    pts = np.stack([np.broadcast_to(xs[None, :], h.shape), np.broadcast_to(ys[:, None], h.shape), h], -1)
    p00, p10, p01, p11 = (pts[:-1, :-1].reshape(-1, 3), pts[1:, :-1].reshape(-1, 3), pts[:-1, 1:].reshape(-1, 3),
                          pts[1:, 1:].reshape(-1, 3))
    top = np.concatenate([np.stack([p10, p00, p11], 1), np.stack([p00, p01, p11], 1)])
    z0 = float(hf.min_z)
    walls = []
    for edge in (pts[0], pts[-1], pts[:, 0], pts[:, -1]):  # rows y = ∓hy, columns x = ∓hx
        low = edge.copy()
        low[:, 2] = z0
        walls.append(_quads(low[:-1], low[1:], edge[1:], edge[:-1]))
    zb = z0 - (DEFAULT_HFIELD_BASE if hf.base is None else float(hf.base))
    corners = np.array([[x, y, z] for z in (zb, z0) for y in (-hf.hy, hf.hy) for x in (-hf.hx, hf.hx)])
    faces = [(0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5)]
    box = np.concatenate([_quads(*(corners[[f[k]]] for k in range(4))) for f in faces])
    return np.concatenate([top, *walls, box])


def stack_triangles(tables: list[np.ndarray]) -> np.ndarray:
    """``(s, t_max, 3, 3)`` triangle tables padded with degenerate (never hit) triangles."""
    t = max(len(x) for x in tables)
    out = np.zeros((len(tables), t, 3, 3))
    for i, x in enumerate(tables):
        out[i, : len(x)] = x
    return out


def ray_triangle_set(triangles: jax.Array, scale: jax.Array, origin: jax.Array, direction: jax.Array) -> jax.Array:
    """Distance parameter of the first hit of rays on triangle sets (either side), in the shape frame.

    Args:
        triangles: ``(..., t, 3, 3)`` unscaled triangles [m] (degenerate rows are never hit).
        scale: ``(..., 3)`` per-axis scale of the triangles (``Model.shape_scale``).
        origin: ``(..., 3)`` ray origins in the shape frame [m].
        direction: ``(..., 3)`` ray directions in the shape frame (unit: the result is a distance [m]).

    Returns:
        ``(...)`` smallest non-negative hit parameter (``inf``: no hit).
    """
    tri = triangles * scale[..., None, None, :]
    v0, e1, e2 = tri[..., 0, :], tri[..., 1, :] - tri[..., 0, :], tri[..., 2, :] - tri[..., 0, :]
    d = direction[..., None, :]
    s = origin[..., None, :] - v0
    p = jnp.cross(d, e2)
    det = jnp.sum(e1 * p, -1)
    ok = jnp.abs(det) > _EPS
    inv = 1.0 / jnp.where(ok, det, 1.0)
    q = jnp.cross(s, e1)
    u = jnp.sum(s * p, -1) * inv
    v = jnp.sum(d * q, -1) * inv
    x = jnp.sum(e2 * q, -1) * inv
    hit = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (x >= 0.0)
    return jnp.min(jnp.where(hit, x, jnp.inf), axis=-1)
