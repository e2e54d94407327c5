"""Bounding volumes of shapes and a lower bound of the distance between two shapes, for the broad phase.

Every shape but planes and height fields gets a bounding sphere about its frame origin, computed from
``Model.shape_scale`` (so randomised sizes stay bounded) and, for meshes, the static vertex data:

* sphere ``r``; capsule ``r + h`` (radius, half height); cylinder and cone ``√(r² + h²)``;
  ellipsoid ``max(a, b, c)``; box ``|(hx, hy, hz)|``; mesh ``max_v |v| · max_i |s_i|``;
* a type without a rule gets an infinite radius (its pairs are always kept).

The pair bound :func:`pair_bound` never exceeds the separation that the narrow phase reports for any of
the pair's contact slots (so a pair whose bound is above the contact threshold cannot have an active
contact):

* plane (always shape A) against shape B: the signed distance of B's centre to the plane minus B's
  radius (valid for finite planes too: the rectangle lies in the plane);
* height field (always shape A): the distance from B's centre to the grid's box
  ``|x| ≤ hx, |y| ≤ hy, z ≤ top`` (unbounded below: a shape under the terrain is kept) minus B's radius;
* box–box: the largest gap along the six face normals (the box–box narrow phase reports the
  separating-axis gap, which is at least this, while the distance of the bounding spheres may exceed it);
* any other pair: centre distance minus both radii.

The bounds are discrete decisions only: they are computed under ``stop_gradient``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxart.math.quat import quat_to_matrix
from jaxart.math.static_index import take_rows
from jaxart.sim.enums import GeoType

G = GeoType

_MESH_TYPES = (int(G.MESH), int(G.CONVEX_MESH))


def shape_bounding_radius(model, dtype) -> jnp.ndarray:
    """Bounding-sphere radius [m] of every shape about its frame origin, ``(shape_count,)``.

    Planes and height fields get 0 (their pairs use :func:`pair_bound`'s special rules).

    Args:
        model: The :class:`~jaxart.Model`.
        dtype: Float dtype of the result.

    Returns:
        ``(shape_count,)`` radii (``inf`` for shape types without a rule).
    """
    s = jnp.abs(lax.stop_gradient(model.shape_scale).astype(dtype))
    return radii_from_scales(np.asarray(model.topology.shape_type), s, _mesh_radii(model), jnp)


def shape_bounding_radius_host(model) -> np.ndarray:
    """:func:`shape_bounding_radius` in host numpy (float64) for a model with concrete ``shape_scale``.

    Raises:
        jax.errors.TracerArrayConversionError: ``shape_scale`` is traced.
    """
    s = np.abs(np.asarray(model.shape_scale, np.float64))
    return radii_from_scales(np.asarray(model.topology.shape_type), s, _mesh_radii(model), np)


def radii_from_scales(types: np.ndarray, s, mesh_r: np.ndarray, xp):
    """The bounding-radius rules of the module docstring for ``(n, 3)`` absolute scales ``s``.

    Args:
        types: ``(n,)`` static :class:`GeoType` values.
        s: ``(n, 3)`` absolute ``shape_scale`` rows (numpy or traced).
        mesh_r: ``(n,)`` largest unscaled vertex norm of mesh shapes (0 elsewhere).
        xp: ``numpy`` or ``jax.numpy``, matching ``s``.

    Returns:
        ``(n,)`` radii [m].
    """
    zero = xp.zeros_like(s[:, 0])
    rules = {
        G.PLANE: zero,
        G.HFIELD: zero,
        G.SPHERE: s[:, 0],
        G.CAPSULE: s[:, 0] + s[:, 1],
        G.CYLINDER: xp.sqrt(s[:, 0] ** 2 + s[:, 1] ** 2),
        G.CONE: xp.sqrt(s[:, 0] ** 2 + s[:, 1] ** 2),
        G.ELLIPSOID: xp.max(s, axis=1),
        G.BOX: xp.sqrt(xp.sum(s * s, axis=1)),
        G.MESH: xp.asarray(mesh_r, s.dtype) * xp.max(s, axis=1),
    }
    rules[G.CONVEX_MESH] = rules[G.MESH]
    out = xp.full(s.shape[:1], xp.inf, dtype=s.dtype)
    for t, r in rules.items():
        out = xp.where(types == int(t), r, out)
    return out


def _mesh_radii(model) -> np.ndarray:
    """``(shape_count,)`` largest unscaled vertex norm of each mesh shape (0 for other shapes)."""
    types = np.asarray(model.topology.shape_type)
    mesh_r = np.zeros(len(types))
    for i in np.nonzero(np.isin(types, _MESH_TYPES))[0]:
        mesh_r[i] = _mesh_vertex_radius(model, int(i))
    return mesh_r


def _mesh_vertex_radius(model, shape: int) -> float:
    """Largest vertex norm [m] of a mesh shape's unscaled vertices (``inf`` without vertex data)."""
    mesh = model.meshes[shape] if shape < len(model.meshes) else None
    verts = getattr(mesh, "vertices", None)
    if verts is None or len(verts) == 0:
        return float("inf")
    return float(np.max(np.linalg.norm(np.asarray(verts, np.float64), axis=1)))


def pair_bound(model, xw: jnp.ndarray, radius: jnp.ndarray, group) -> jnp.ndarray:
    """Lower bound [m] of the narrow-phase distance of each pair of a group (see the module docstring).

    Args:
        model: The :class:`~jaxart.Model`.
        xw: ``(shape_count, 7)`` world transforms of the shapes.
        radius: ``(shape_count,)`` bounding radii from :func:`shape_bounding_radius`.
        group: A :class:`~jaxart.collision.pairs.PairGroup` (``p`` pairs).

    Returns:
        ``(p,)`` bounds (``stop_gradient``-ed).
    """
    xw = lax.stop_gradient(xw)
    xa, xb = take_rows(xw, group.shape_a), take_rows(xw, group.shape_b)
    rb = take_rows(radius, group.shape_b)
    if group.type_a == G.PLANE:
        n = quat_to_matrix(xa[:, 3:])[:, :, 2]
        return jnp.sum((xb[:, :3] - xa[:, :3]) * n, axis=1) - rb
    if group.type_a == G.HFIELD:
        return _hfield_bound(model, xa, xb, group.shape_a) - rb
    if group.type_a == G.BOX and group.type_b == G.BOX:
        return _box_face_bound(model, xa, xb, group)
    d = jnp.sqrt(jnp.sum((xb[:, :3] - xa[:, :3]) ** 2, axis=1))
    return d - take_rows(radius, group.shape_a) - rb


def _hfield_bound(model, xa, xb, shapes: np.ndarray) -> jnp.ndarray:
    """Distance from B's centre to each height field's box ``|x| ≤ hx, |y| ≤ hy, z ≤ top`` (its frame)."""
    grid = np.zeros((len(shapes), 4))
    known = np.zeros(len(shapes), bool)
    for i, s in enumerate(shapes):
        hf = model.meshes[int(s)] if int(s) < len(model.meshes) else None
        if hasattr(hf, "hx"):
            grid[i], known[i] = (hf.hx, hf.hy, hf.min_z, hf.max_z), True
    scale = take_rows(lax.stop_gradient(model.shape_scale), shapes).astype(xa.dtype)
    top = jnp.maximum(grid[:, 2] * scale[:, 2], grid[:, 3] * scale[:, 2])
    rot = quat_to_matrix(xa[:, 3:])
    local = jnp.einsum("pji,pj->pi", rot, xb[:, :3] - xa[:, :3])
    dx = jnp.maximum(jnp.abs(local[:, 0]) - grid[:, 0] * jnp.abs(scale[:, 0]), 0.0)
    dy = jnp.maximum(jnp.abs(local[:, 1]) - grid[:, 1] * jnp.abs(scale[:, 1]), 0.0)
    dz = jnp.maximum(local[:, 2] - top, 0.0)
    return jnp.where(known, jnp.sqrt(dx * dx + dy * dy + dz * dz), -jnp.inf)


def _box_face_bound(model, xa, xb, group) -> jnp.ndarray:
    """Largest gap between two boxes along their six face normals."""
    scale = lax.stop_gradient(model.shape_scale).astype(xa.dtype)
    ha, hb = jnp.abs(take_rows(scale, group.shape_a)), jnp.abs(take_rows(scale, group.shape_b))
    ra, rb = quat_to_matrix(xa[:, 3:]), quat_to_matrix(xb[:, 3:])
    axes = jnp.concatenate([ra, rb], axis=2)  # (p, 3, 6): columns = face normals
    d = jnp.abs(jnp.einsum("pi,pik->pk", xb[:, :3] - xa[:, :3], axes))
    sup_a = jnp.einsum("pi,pik->pk", ha, jnp.abs(jnp.einsum("pji,pjk->pik", ra, axes)))
    sup_b = jnp.einsum("pi,pik->pk", hb, jnp.abs(jnp.einsum("pji,pjk->pik", rb, axes)))
    return jnp.max(d - sup_a - sup_b, axis=1)
