"""Sensors that look at other shapes: TOUCH (contact forces in a site's volume) and RANGEFINDER (a ray along a
site's +Z axis; primitives by :mod:`jaxart.sensors.rays`, meshes and height fields as triangle sets by
:mod:`jaxart.sensors.ray_triangles`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_rotate, quat_rotate_inv
from jaxart.sensors.context import SensorContext
from jaxart.sensors.frames import FrameRefs, frame_poses
from jaxart.sensors.ray_triangles import heightfield_triangles, mesh_triangles, ray_triangle_set, stack_triangles
from jaxart.sensors.rays import RAY_TYPES, ray_shape
from jaxart.sim.builder_shapes import SHAPE_FLAG_SITE
from jaxart.sim.enums import GeoType
from jaxart.sim.heightfield import Heightfield
from jaxart.sim.sensor_types import SensorType


def _by_site_type(ctx: SensorContext, rows: np.ndarray, kind: SensorType):
    """Static groups ``(positions in rows, shape type)`` of the sensors' site shapes."""
    types = np.asarray(ctx.model.topology.shape_type.array)[ctx.objid(rows)]
    for geo in np.unique(types):
        if GeoType(int(geo)) not in RAY_TYPES or GeoType(int(geo)) == GeoType.PLANE:
            raise ValueError(f"eval_sensors: {kind.name} sites must be spheres, capsules, ellipsoids, cylinders or "
                             f"boxes, got {GeoType(int(geo)).name}")
        yield np.flatnonzero(types == geo), GeoType(int(geo))


def touch(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Normal contact force [N] on each site's body from the contacts in its zone (MuJoCo's rule: the contact
    point, cast along the normal toward the other body, meets the site's volume)."""
    contacts = ctx.require("contacts", SensorType.TOUCH)
    force = ctx.require("contact_force", SensorType.TOUCH)
    x = ctx.object_poses(rows)
    bodies = jnp.asarray(ctx.objects(rows).body)[:, None]
    on_a, on_b = jnp.asarray(contacts.body_a)[None, :] == bodies, jnp.asarray(contacts.body_b)[None, :] == bodies
    n = contacts.normal.astype(x.dtype)
    fn = jnp.sum(jnp.asarray(force, x.dtype) * n, axis=-1)
    use = (on_a ^ on_b) & (contacts.active & (fn > 0.0))[None, :]
    direction = jnp.where(on_a[..., None], n[None], -n[None])
    out = jnp.zeros((len(rows),), x.dtype)
    scale = ctx.model.shape_scale[ctx.objid(rows)].astype(x.dtype)
    for pos, geo in _by_site_type(ctx, rows, SensorType.TOUCH):
        q = x[pos, 3:][:, None, :]
        origin = quat_rotate_inv(q, contacts.point.astype(x.dtype)[None] - x[pos, None, :3])
        hit = jnp.isfinite(ray_shape(geo, scale[pos, None, :], origin, quat_rotate_inv(q, direction[pos])))
        out = out.at[pos].set(jnp.sum(jnp.where(use[pos] & hit, fn[None, :], 0.0), axis=-1))
    return out[:, None]


#: Shape types rays hit as triangle sets (MuJoCo casts against a mesh's triangles, not its hull).
TRIANGLE_RAY_TYPES = (GeoType.MESH, GeoType.CONVEX_MESH, GeoType.HFIELD)


def ray_targets(model) -> dict[GeoType, np.ndarray]:
    """Static shapes a rangefinder can hit, per type: every non-site shape of a ray-castable type (primitives,
    meshes and height fields)."""
    topo = model.topology
    types, flags = np.asarray(topo.shape_type.array), np.asarray(topo.shape_flags.array)
    targets = {}
    for geo in (*RAY_TYPES, *TRIANGLE_RAY_TYPES):
        idx = np.flatnonzero((types == int(geo)) & ((flags & SHAPE_FLAG_SITE) == 0))
        if idx.size:
            targets[geo] = idx
    return targets


def rangefinder(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Distance [m] along each site's +Z axis to the nearest shape not on the site's body (−1: none)."""
    model, state = ctx.model, ctx.state
    x = ctx.object_poses(rows)
    site_body = ctx.objects(rows).body
    origin = x[:, :3]
    direction = quat_rotate(x[:, 3:], jnp.broadcast_to(jnp.asarray([0.0, 0.0, 1.0], x.dtype), origin.shape))
    best = jnp.full((len(rows),), jnp.inf, x.dtype)
    shape_body = np.asarray(model.topology.shape_body.array)
    for geo, shapes in ray_targets(model).items():
        pose = frame_poses(model, state, FrameRefs(shape_body[shapes], shapes),
                           jnp.broadcast_to(jnp.asarray([0.0] * 6 + [1.0], x.dtype), (len(shapes), 7)))
        q = pose[None, :, 3:]
        o = quat_rotate_inv(q, origin[:, None, :] - pose[None, :, :3])
        d = quat_rotate_inv(q, jnp.broadcast_to(direction[:, None, :], o.shape))
        scale = model.shape_scale[shapes].astype(x.dtype)[None]
        if geo == GeoType.PLANE:  # the extent rays see (MuJoCo: finite for rays even where collision is not)
            scale = scale.at[..., :2].set(model.shape_ray_extent[shapes].astype(x.dtype)[None])
        if geo in TRIANGLE_RAY_TYPES:
            dist = ray_triangle_set(jnp.asarray(triangle_table(model, shapes), x.dtype)[None], scale, o, d)
        else:
            dist = ray_shape(geo, scale, o, d)
        other = jnp.asarray(shape_body[shapes][None, :] != site_body[:, None])
        best = jnp.minimum(best, jnp.min(jnp.where(other, dist, jnp.inf), axis=-1))
    return jnp.where(jnp.isfinite(best), best, -1.0)[:, None]


def triangle_table(model, shapes: np.ndarray) -> np.ndarray:
    """``(len(shapes), t, 3, 3)`` padded unscaled triangles of mesh / height-field ``shapes`` (host data).

    Raises:
        ValueError: A shape without its :class:`~jaxart.sim.builder_shapes.Mesh` or
            :class:`~jaxart.sim.heightfield.Heightfield`.
    """
    tables = []
    for s in shapes:
        src = model.meshes[int(s)] if int(s) < len(model.meshes) else None
        if isinstance(src, Heightfield):
            tables.append(heightfield_triangles(src))
        elif src is not None and hasattr(src, "indices"):
            tables.append(mesh_triangles(src))
        else:
            raise ValueError(f"eval_sensors: rays need the vertex data of shape {model.topology.shape_label[int(s)]!r}")
    return stack_triangles(tables)
