"""Acceleration-stage sensors: FRAMELINACC, FRAMEANGACC, ACCELEROMETER, FORCE and TORQUE.

Body accelerations come from the articulation blocks the dynamics use
(:func:`jaxart.sensors.body_acceleration.body_accelerations`). Linear
accelerations are MuJoCo's: the classical acceleration of the frame origin minus gravity (a resting accelerometer
reads ``−g`` in its axes). FORCE/TORQUE read :func:`jaxart.dynamics.eval_joint_wrenches` of the site's body
(MuJoCo's ``cfrc_int``), moved to the site.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_rotate_inv
from jaxart.sensors.context import SensorContext
from jaxart.sensors.frames import body_coms, point_accelerations
from jaxart.sim.sensor_types import SensorType


def _site_acceleration(ctx: SensorContext, rows: np.ndarray, kind: SensorType):
    ctx.require("joint_qdd", kind)
    x = ctx.object_poses(rows)
    a, alpha = point_accelerations(ctx.model, ctx.state, ctx.body_acc, ctx.objects(rows).body, x[:, :3])
    return x, a - ctx.model.gravity.astype(a.dtype), alpha


def frame_linacc(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Frame origin acceleration minus gravity, world axes [m/s²]."""
    return _site_acceleration(ctx, rows, SensorType.FRAMELINACC)[1]


def frame_angacc(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Frame angular acceleration, world axes [rad/s²]."""
    return _site_acceleration(ctx, rows, SensorType.FRAMEANGACC)[2]


def accelerometer(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Site acceleration minus gravity in the site's axes [m/s²]."""
    x, a, _ = _site_acceleration(ctx, rows, SensorType.ACCELEROMETER)
    return quat_rotate_inv(x[:, 3:], a)


def _body_joints(model, bodies: np.ndarray, kind: SensorType) -> np.ndarray:
    """Static tree joint whose child is each body."""
    topo = model.topology
    child, art = np.asarray(topo.joint_child.array), np.asarray(topo.joint_articulation.array)
    out = []
    for b in bodies:
        hits = np.flatnonzero((child == b) & (art >= 0))
        if b < 0 or hits.size != 1:
            raise ValueError(f"eval_sensors: a {kind.name} sensor's site is on body {int(b)}, which has no "
                             "articulated joint to its parent (FORCE/TORQUE read that joint's wrench)")
        out.append(int(hits[0]))
    return np.asarray(out, np.int64)


def _site_wrench(ctx: SensorContext, rows: np.ndarray, kind: SensorType) -> tuple[jax.Array, jax.Array]:
    """Force and torque about the site, in the site's axes."""
    ctx.require("joint_qdd", kind)
    bodies = ctx.objects(rows).body
    joints = _body_joints(ctx.model, bodies, kind)
    w = ctx.joint_wrenches[joints]
    x = ctx.object_poses(rows)
    com = body_coms(ctx.model, ctx.state)[bodies]
    torque = w[:, 3:] + jnp.cross(com - x[:, :3], w[:, :3])
    return quat_rotate_inv(x[:, 3:], w[:, :3]), quat_rotate_inv(x[:, 3:], torque)


def force(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Force the site's body receives from its parent, site axes [N]."""
    return _site_wrench(ctx, rows, SensorType.FORCE)[0]


def torque(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Torque about the site the body receives from its parent, site axes [N·m]."""
    return _site_wrench(ctx, rows, SensorType.TORQUE)[1]
