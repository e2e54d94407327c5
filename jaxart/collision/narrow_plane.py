"""Narrow phase: plane (shape A) against every convex shape (shape B).

A plane's normal is its local +Z; ``shape_scale[:2]`` are its half width / half length along
local X / Y (Newton's collision treats them as half extents), both 0 = infinite. For a finite
plane a contact is valid only where the deepest point of B projects inside the rectangle.

Each function returns a :class:`~jaxart.collision.geometry.NarrowResult` with the plane normal
as contact normal (from A = plane toward B), ``dist = n · (q − plane origin)`` for the deepest
points ``q`` of B, and the contact point midway between ``q`` and its projection on the plane.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.collision.geometry import NarrowResult, frame, keep_deepest, unit

#: Maximum contacts generated for a plane–mesh pair (the deepest vertices are kept).
MESH_PLANE_MAX_POINTS = 16


def plane_points(xa: jnp.ndarray, sa: jnp.ndarray, q: jnp.ndarray, valid=None) -> NarrowResult:
    """Contacts of plane ``(xa, sa)`` with world points ``q`` ``(K, 3)`` lying on shape B's surface."""
    p, rot = frame(xa)
    n = rot[:, 2]
    rel = q - p
    dist = rel @ n
    local = rel @ rot
    infinite = (sa[0] == 0.0) & (sa[1] == 0.0)
    inside = (jnp.abs(local[:, 0]) <= sa[0]) & (jnp.abs(local[:, 1]) <= sa[1])
    ok = infinite | inside
    if valid is not None:
        ok = ok & valid
    point = q - 0.5 * dist[:, None] * n
    return NarrowResult(dist, point, jnp.broadcast_to(n, q.shape), ok)


def plane_sphere(xa, sa, xb, sb) -> NarrowResult:
    """Plane–sphere: one contact at the sphere's deepest point."""
    n = frame(xa)[1][:, 2]
    return plane_points(xa, sa, (xb[:3] - sb[0] * n)[None])


def plane_capsule(xa, sa, xb, sb) -> NarrowResult:
    """Plane–capsule: two contacts, one per end-cap sphere (a lying capsule is supported at both)."""
    n = frame(xa)[1][:, 2]
    c, rot = frame(xb)
    ax = rot[:, 2] * sb[1]
    ends = jnp.stack([c + ax, c - ax])
    return plane_points(xa, sa, ends - sb[0] * n)


def plane_box(xa, sa, xb, sb) -> NarrowResult:
    """Plane–box: the four deepest of the eight corners (Newton also keeps four)."""
    c, rot = frame(xb)
    signs = jnp.array([[i, j, k] for i in (-1.0, 1.0) for j in (-1.0, 1.0) for k in (-1.0, 1.0)], dtype=xb.dtype)
    corners = c + (signs * sb) @ rot.T
    return keep_deepest(plane_points(xa, sa, corners), 4)


def plane_ellipsoid(xa, sa, xb, sb) -> NarrowResult:
    """Plane–ellipsoid: one contact at the support point in the direction −n.

    The support point of radii ``r`` in local direction ``d`` is ``r² d / |r d|`` (smooth in the
    poses for any unit ``d``).
    """
    n = frame(xa)[1][:, 2]
    c, rot = frame(xb)
    d = rot.T @ (-n)
    rd = sb * d
    local = sb * rd / jnp.sqrt(jnp.dot(rd, rd))
    return plane_points(xa, sa, (c + rot @ local)[None])


def plane_cylinder(xa, sa, xb, sb) -> NarrowResult:
    """Plane–cylinder: the four deepest of eight rim points (four per cap at 90° steps).

    Each cap's points start at its deepest rim direction, ``−n`` projected onto the cap plane; when
    the cylinder stands upright (projection below 1e-6) it falls back to the cylinder's local X
    axis (held fixed), so an upright cylinder gets four supporting points on its lower rim and a
    lying one its two deepest rim points, one per cap.
    """
    n = frame(xa)[1][:, 2]
    c, rot = frame(xb)
    ax = rot[:, 2]
    w = -(n - jnp.dot(n, ax) * ax)
    d, _ = unit(w, rot[:, 0], eps=1e-6)
    e = jnp.cross(ax, d)
    dirs = jnp.stack([d, e, -d, -e])
    rim = sb[0] * dirs
    pts = jnp.concatenate([c + sb[1] * ax + rim, c - sb[1] * ax + rim])
    return keep_deepest(plane_points(xa, sa, pts), 4)


def plane_mesh(xa, sa, xb, sb, verts: jnp.ndarray, vmask: jnp.ndarray, *hull_tables) -> NarrowResult:
    """Plane–mesh: the deepest ``min(H, MESH_PLANE_MAX_POINTS)`` vertices of the mesh's convex hull.

    Args:
        verts: ``(H, 3)`` hull vertices in the mesh frame (unscaled; ``sb`` scales them).
        vmask: ``(H,)`` which rows are real vertices (padding rows are ignored).
        *hull_tables: The hull's face and edge tables (unused: only vertices matter against a plane).
    """
    c, rot = frame(xb)
    world = c + (verts * sb) @ rot.T
    return keep_deepest(plane_points(xa, sa, world, vmask), min(verts.shape[0], MESH_PLANE_MAX_POINTS))
