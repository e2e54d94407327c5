"""Narrow phase for ellipsoid pairs through the generic convex solver (:mod:`jaxart.collision.epa`).

Ellipsoid against sphere, capsule, ellipsoid, cylinder, box and (convex) mesh: one contact per pair,
the deepest point / closest points of the two convex solids (MuJoCo also returns one contact for
ellipsoids). Shape A has the lower :class:`~jaxart.GeoType` (sphere and capsule are A against an
ellipsoid; the ellipsoid is A against cylinder, box and mesh); the normal points from A to B.
Gradient semantics: see :mod:`jaxart.collision.epa`.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from jaxart.collision import support
from jaxart.collision.epa import signed_distance
from jaxart.collision.geometry import NarrowResult


def convex_pair(make_a: Callable, xa, sa, make_b: Callable, xb, sb) -> NarrowResult:
    """One-slot :class:`NarrowResult` of two support-function shapes (constructors ``(pose, params) -> Convex``)."""
    c = signed_distance(make_a, xa, sa, make_b, xb, sb)
    return NarrowResult(c.dist[None], c.point[None], c.normal[None], jnp.ones((1,), bool))


def mesh_support(verts: jnp.ndarray, vmask: jnp.ndarray) -> Callable:
    """Constructor ``(pose, scale) -> Convex`` of a mesh shape: the hull of its masked vertices ``(V, 3)``."""
    return lambda x, s: support.mesh(x, s, verts, vmask)


def sphere_ellipsoid(xa, sa, xb, sb) -> NarrowResult:
    """Sphere (A) – ellipsoid (B)."""
    return convex_pair(support.sphere, xa, sa, support.ellipsoid, xb, sb)


def capsule_ellipsoid(xa, sa, xb, sb) -> NarrowResult:
    """Capsule (A) – ellipsoid (B)."""
    return convex_pair(support.capsule, xa, sa, support.ellipsoid, xb, sb)


def ellipsoid_ellipsoid(xa, sa, xb, sb) -> NarrowResult:
    """Ellipsoid – ellipsoid."""
    return convex_pair(support.ellipsoid, xa, sa, support.ellipsoid, xb, sb)


def ellipsoid_cylinder(xa, sa, xb, sb) -> NarrowResult:
    """Ellipsoid (A) – cylinder (B)."""
    return convex_pair(support.ellipsoid, xa, sa, support.cylinder, xb, sb)


def ellipsoid_box(xa, sa, xb, sb) -> NarrowResult:
    """Ellipsoid (A) – box (B)."""
    return convex_pair(support.ellipsoid, xa, sa, support.box, xb, sb)


def ellipsoid_mesh(xa, sa, xb, sb, verts, vmask, *rest) -> NarrowResult:
    """Ellipsoid (A) – mesh (B), the mesh as the convex hull of its vertices ``verts (V, 3)`` / ``vmask (V,)``.

    Further mesh arrays (``rest``) are accepted and unused.
    """
    return convex_pair(support.ellipsoid, xa, sa, mesh_support(verts, vmask), xb, sb)
