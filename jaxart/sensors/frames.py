"""World poses, velocities and accelerations of the frames sensors read (a body frame or a shape frame, composed
with the sensor's offset).

Object and reference lists are static numpy arrays (from the model's sensor table); poses are ``(p, q_xyzw)``,
velocities and accelerations are of the frame origin, in world axes.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import transform_mul, transform_point
from jaxart.sim.sensor_types import SensorObjType

_IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


class FrameRefs(NamedTuple):
    """Static description of a list of frames.

    Attributes:
        body: ``(k,)`` body each frame moves with (−1 = world).
        shape: ``(k,)`` shape whose transform the frame starts from (−1 = the body frame itself).
    """

    body: np.ndarray
    shape: np.ndarray


def frame_refs(model, objtype: np.ndarray, objid: np.ndarray) -> FrameRefs:
    """Bodies and shapes of BODY/SHAPE objects (NONE: the world frame)."""
    objtype, objid = np.asarray(objtype), np.asarray(objid)
    shape_body = np.asarray(model.topology.shape_body.array)
    is_shape = objtype == int(SensorObjType.SHAPE)
    is_body = objtype == int(SensorObjType.BODY)
    shape = np.where(is_shape, objid, -1)
    body = np.where(is_shape, shape_body[np.maximum(objid, 0)] if shape_body.size else -1,
                    np.where(is_body, objid, -1))
    return FrameRefs(body.astype(np.int64), shape.astype(np.int64))


def _with_world(rows: jax.Array, world_row) -> jax.Array:
    return jnp.concatenate([rows, jnp.asarray([world_row], rows.dtype).reshape(1, -1)])


def frame_poses(model, state, refs: FrameRefs, xform: jax.Array) -> jax.Array:
    """``(k, 7)`` world poses: body pose · shape transform · ``xform``."""
    dtype = state.body_q.dtype
    body_q = _with_world(state.body_q, _IDENTITY)[refs.body]
    local = _with_world(model.shape_transform.astype(dtype), _IDENTITY)[refs.shape]
    return transform_mul(transform_mul(body_q, local), xform.astype(dtype))


def body_coms(model, state) -> jax.Array:
    """``(body_count, 3)`` world centres of mass."""
    return transform_point(state.body_q, model.body_com.astype(state.body_q.dtype))


def point_velocities(model, state, body: np.ndarray, point: jax.Array) -> tuple[jax.Array, jax.Array]:
    """World ``(v, ω)`` ``(k, 3)`` of points moving with ``body`` (zero for the world)."""
    dtype = state.body_q.dtype
    twist = _with_world(state.body_qd, (0.0,) * 6)[body]
    com = _with_world(body_coms(model, state), (0.0,) * 3)[body]
    omega = twist[:, 3:]
    return twist[:, :3] + jnp.cross(omega, point - com), omega.astype(dtype)


def point_accelerations(model, state, body_acc: jax.Array, body: np.ndarray,
                        point: jax.Array) -> tuple[jax.Array, jax.Array]:
    """World classical accelerations ``(a, α)`` ``(k, 3)`` of points moving with ``body``.

    ``body_acc`` is ``(body_count, 6)``: ``(a_com, α)`` (:func:`jaxart.sensors.acceleration.body_accelerations`).
    """
    acc = _with_world(body_acc, (0.0,) * 6)[body]
    twist = _with_world(state.body_qd, (0.0,) * 6)[body]
    com = _with_world(body_coms(model, state), (0.0,) * 3)[body]
    r = point - com
    omega, alpha = twist[:, 3:], acc[:, 3:]
    return acc[:, :3] + jnp.cross(alpha, r) + jnp.cross(omega, jnp.cross(omega, r)), alpha
