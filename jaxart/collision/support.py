"""Support functions of convex shapes for the generic convex solver (:mod:`jaxart.collision.gjk`).

A support function maps a world direction ``d`` ``(3,)`` (any length > 0) to a world point ``(3,)``
of the shape maximising ``d · p``. :class:`Convex` bundles it with the shape's world centre and a
bounding radius. Ties (faces, edges) are broken deterministically (``argmax`` / sign rules); the
solver never differentiates through the choice (see :mod:`jaxart.collision.gjk`).

Shape parameters follow ``Model.shape_scale``: sphere ``(r, ·, ·)``, capsule / cylinder
``(r, half height, ·)`` along local Z, ellipsoid ``(rx, ry, rz)``, box half extents ``(hx, hy, hz)``;
vertex sets are ``(V, 3)`` points in the shape frame (already scaled) with a ``(V,)`` mask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp
from jax import lax

from jaxart.collision.geometry import frame
from jaxart.math.safe import safe_norm


class Convex(NamedTuple):
    """A convex shape seen through its support function.

    Attributes:
        support: World direction ``(3,)`` → world support point ``(3,)`` [m].
        center: ``(3,)`` world point inside the shape [m].
        radius: Scalar bounding radius about ``center`` [m].
        smooth: Static: the support point is unique and continuous in the direction (sphere,
            ellipsoid), so it is the contact witness on this shape.
        normals: ``(k, 3)`` world outward face normals (flat faces: candidate contact normals).
        kinks: ``(m, 3)`` world unit vectors ``e``: the support jumps across the great circle
            ``u · e = 0`` (edges along ``e``, a capsule's or cylinder's side).
        features: Optional ``direction -> (face normal (3,), edge direction (3,))`` of the plane
            through the three most extreme vertices and the line through the two most extreme
            (vertex sets with unknown faces; candidate normals near a face or edge contact).
    """

    support: Callable
    center: jnp.ndarray
    radius: jnp.ndarray
    smooth: bool = False
    normals: jnp.ndarray | None = None
    kinks: jnp.ndarray | None = None
    features: Callable | None = None

    def face_normals(self) -> jnp.ndarray:
        """``normals`` or an empty ``(0, 3)`` array."""
        return jnp.zeros((0, 3), self.center.dtype) if self.normals is None else self.normals

    def kink_axes(self) -> jnp.ndarray:
        """``kinks`` or an empty ``(0, 3)`` array."""
        return jnp.zeros((0, 3), self.center.dtype) if self.kinks is None else self.kinks


def _unit(d: jnp.ndarray, fallback: jnp.ndarray) -> jnp.ndarray:
    n = safe_norm(d)
    return jnp.where(n > 1e-12, d / jnp.where(n > 1e-12, n, 1.0), fallback)


def _posed(x: jnp.ndarray, local_support: Callable, radius, smooth: bool = False, normals=None, kinks=None) -> Convex:
    c, rot = frame(x)
    nw = None if normals is None else normals @ rot.T
    kw = None if kinks is None else kinks @ rot.T
    return Convex(lambda d: c + rot @ local_support(rot.T @ d), c, radius, smooth, nw, kw)


def _sgn(v):
    return jnp.where(v >= 0.0, 1.0, -1.0).astype(v.dtype)


def sphere(x: jnp.ndarray, s: jnp.ndarray) -> Convex:
    """Sphere of radius ``s[0]`` at pose ``x`` ``(7,)``."""
    ex = jnp.array([1.0, 0.0, 0.0], x.dtype)
    return _posed(x, lambda d: s[0] * _unit(d, ex), s[0], True)


def capsule(x: jnp.ndarray, s: jnp.ndarray) -> Convex:
    """Capsule of radius ``s[0]`` and core half length ``s[1]`` along local Z."""
    ex = jnp.array([1.0, 0.0, 0.0], x.dtype)
    ez = jnp.array([0.0, 0.0, 1.0], x.dtype)
    return _posed(x, lambda d: s[0] * _unit(d, ex) + _sgn(d[2]) * s[1] * ez, s[0] + s[1], kinks=ez[None])


def ellipsoid(x: jnp.ndarray, s: jnp.ndarray) -> Convex:
    """Ellipsoid of radii ``s``: support ``r² d / |r d|`` (``r`` = radii, local direction ``d``)."""
    ex = jnp.array([1.0, 0.0, 0.0], x.dtype)

    def sup(d):
        rd = s * d
        return s * _unit(rd, ex)

    return _posed(x, sup, jnp.max(s), True)


def box(x: jnp.ndarray, s: jnp.ndarray) -> Convex:
    """Box of half extents ``s``."""
    eye = jnp.eye(3, dtype=x.dtype)
    return _posed(x, lambda d: _sgn(d) * s, safe_norm(s), normals=jnp.concatenate([eye, -eye]), kinks=eye)


def cylinder(x: jnp.ndarray, s: jnp.ndarray) -> Convex:
    """Cylinder of radius ``s[0]`` and half height ``s[1]`` along local Z."""
    ex = jnp.array([1.0, 0.0, 0.0], x.dtype)
    ez = jnp.array([0.0, 0.0, 1.0], x.dtype)

    def sup(d):
        radial = _unit(d * jnp.array([1.0, 1.0, 0.0], d.dtype), ex)
        return s[0] * radial + _sgn(d[2]) * s[1] * ez

    return _posed(x, sup, jnp.sqrt(s[0] ** 2 + s[1] ** 2), normals=jnp.stack([ez, -ez]), kinks=ez[None])


def vertex_set(x: jnp.ndarray, verts: jnp.ndarray, vmask: jnp.ndarray, normals=None, kinks=None) -> Convex:
    """Convex hull of the masked points ``verts`` ``(V, 3)`` (shape frame, scaled) at pose ``x``.

    ``normals`` / ``kinks`` (shape frame, optional): known face normals and edge directions.
    """
    big = jnp.asarray(jnp.finfo(verts.dtype).max, verts.dtype)
    n = jnp.maximum(jnp.sum(vmask), 1)
    centre_local = jnp.sum(jnp.where(vmask[:, None], verts, 0.0), axis=0) / n
    radius = jnp.max(jnp.where(vmask, safe_norm(verts - centre_local, axis=-1), 0.0))

    def sup(d):
        return verts[jnp.argmax(jnp.where(vmask, verts @ d, -big))]

    def features(d):
        local = rot.T @ d
        _, idx = lax.top_k(jnp.where(vmask, verts @ local, -big), 3)
        p = verts[idx]
        n = jnp.cross(p[1] - p[0], p[2] - p[0])
        n = n * jnp.where(jnp.dot(n, local) >= 0.0, 1.0, -1.0)
        return rot @ _unit(n, local), rot @ _unit(p[1] - p[0], local)

    c, rot = frame(x)
    nw = None if normals is None else normals @ rot.T
    kw = None if kinks is None else kinks @ rot.T
    return Convex(lambda d: c + rot @ sup(rot.T @ d), c + rot @ centre_local, radius, False, nw, kw,
                  None if verts.shape[0] < 3 else features)


def mesh(x: jnp.ndarray, scale: jnp.ndarray, verts: jnp.ndarray, vmask: jnp.ndarray) -> Convex:
    """A mesh shape (unscaled vertices ``(V, 3)`` times ``scale``) as the hull of its vertices."""
    return vertex_set(x, verts * scale, vmask)


#: Support constructors of the primitive shapes by name (pose ``(7,)``, shape_scale ``(3,)``).
PRIMITIVES = {"sphere": sphere, "capsule": capsule, "ellipsoid": ellipsoid, "box": box, "cylinder": cylinder}
