"""Position- and velocity-stage frame sensors: FRAMEPOS/QUAT/axes/LINVEL/ANGVEL, VELOCIMETER, GYRO, MAGNETOMETER.

Each function maps a static array of sensor rows of one kind to a ``(k, dim)`` array (see
:class:`~jaxart.sim.sensor_types.SensorType` for the values and frames).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_conjugate, quat_mul, quat_rotate, quat_rotate_inv
from jaxart.sensors.context import SensorContext
from jaxart.sensors.frames import point_velocities


def _relative_pose(ctx: SensorContext, rows: np.ndarray) -> tuple[jax.Array, jax.Array]:
    return ctx.object_poses(rows), ctx.reference_poses(rows)


def frame_pos(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Object origin in the reference frame [m]."""
    x, ref = _relative_pose(ctx, rows)
    return quat_rotate_inv(ref[:, 3:], x[:, :3] - ref[:, :3])


def frame_quat(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Object orientation relative to the reference frame, ``(w, x, y, z)`` (MuJoCo's order)."""
    x, ref = _relative_pose(ctx, rows)
    q = quat_mul(quat_conjugate(ref[:, 3:]), x[:, 3:])
    return jnp.concatenate([q[:, 3:], q[:, :3]], axis=-1)


def frame_axis(axis: int):
    """FRAMEXAXIS/YAXIS/ZAXIS: the object's ``axis`` (0, 1, 2) in the reference frame's axes."""

    def evaluate(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
        x, ref = _relative_pose(ctx, rows)
        e = jnp.zeros((len(rows), 3), x.dtype).at[:, axis].set(1.0)
        return quat_rotate_inv(ref[:, 3:], quat_rotate(x[:, 3:], e))

    return evaluate


def _relative_velocity(ctx: SensorContext, rows: np.ndarray) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(v_rel, ω_rel)`` in world axes (MuJoCo's rotating-reference rule) and the reference pose."""
    x, ref = _relative_pose(ctx, rows)
    v, w = point_velocities(ctx.model, ctx.state, ctx.objects(rows).body, x[:, :3])
    v_ref, w_ref = point_velocities(ctx.model, ctx.state, ctx.references(rows).body, ref[:, :3])
    v_rel = v - v_ref - jnp.cross(w_ref, x[:, :3] - ref[:, :3])
    return v_rel, w - w_ref, ref


def frame_linvel(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Object origin velocity relative to the reference frame, in its axes [m/s]."""
    v, _, ref = _relative_velocity(ctx, rows)
    return quat_rotate_inv(ref[:, 3:], v)


def frame_angvel(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Object angular velocity relative to the reference frame, in its axes [rad/s]."""
    _, w, ref = _relative_velocity(ctx, rows)
    return quat_rotate_inv(ref[:, 3:], w)


def velocimeter(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Site origin velocity in the site's axes [m/s]."""
    x = ctx.object_poses(rows)
    v, _ = point_velocities(ctx.model, ctx.state, ctx.objects(rows).body, x[:, :3])
    return quat_rotate_inv(x[:, 3:], v)


def gyro(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Site angular velocity in the site's axes [rad/s]."""
    x = ctx.object_poses(rows)
    _, w = point_velocities(ctx.model, ctx.state, ctx.objects(rows).body, x[:, :3])
    return quat_rotate_inv(x[:, 3:], w)


def magnetometer(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """``Model.sensor_magnetic_field`` in the site's axes."""
    x = ctx.object_poses(rows)
    field = jnp.broadcast_to(ctx.model.sensor_magnetic_field.astype(x.dtype), (len(rows), 3))
    return quat_rotate_inv(x[:, 3:], field)
