"""Sensors of joints, tendons and time: JOINTPOS, JOINTVEL, JOINTACTFRC, BALLQUAT, BALLANGVEL, TENDONPOS, TENDONVEL,
TENDONACTFRC, CLOCK."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.joint_forces import acceleration_dofs, dof_positions, dof_static
from jaxart.dynamics.tendons import eval_tendon_actuator_forces, eval_tendon_lengths, eval_tendon_velocities
from jaxart.math import quat_normalize, quat_rotate_inv
from jaxart.sensors.context import SensorContext
from jaxart.sim.sensor_types import SensorType


def joint_pos(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Coordinate of each sensor's scalar DOF [m or rad]."""
    coord = dof_static(ctx.model.topology).coord[ctx.objid(rows)]
    return ctx.state.joint_q[coord][:, None]


def joint_vel(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Velocity of each sensor's DOF [m/s or rad/s]."""
    return ctx.state.joint_qd[ctx.objid(rows)][:, None]


def joint_actuator_force(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Drive force of each sensor's DOF at the state: ``ke (q* − q) + kd (q̇* − q̇) + joint_act``, clipped to
    ``joint_effort_limit`` [N or N·m] (MuJoCo's actuator force at the joint; the drive acts inside limits too).

    Raises:
        NotImplementedError: A sensed DOF has an ACCELERATION drive (its force depends on the effective inertia).
    """
    model, state, control = ctx.model, ctx.state, ctx.control
    dofs = ctx.objid(rows)
    if acceleration_dofs(model.topology)[dofs].any():
        raise NotImplementedError("eval_sensors: JOINTACTFRC on a DOF with an ACCELERATION drive is not supported")
    st = dof_static(model.topology)
    _, err = dof_positions(model, state.joint_q, control.joint_target_q)
    ke = model.joint_target_ke * jnp.asarray(st.use_ke, state.joint_q.dtype)
    kd = model.joint_target_kd * jnp.asarray(st.use_kd, state.joint_q.dtype)
    v_t = jnp.where(jnp.asarray(st.use_kd), control.joint_target_qd, 0.0)
    drive = ke * err + kd * (v_t - state.joint_qd) + control.joint_act
    limit = model.joint_effort_limit
    return jnp.clip(drive, -limit, limit)[dofs][:, None]


def _ball_quats(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """``(k, 4)`` normalised ``xyzw`` quaternions of the sensors' BALL joints."""
    topo = ctx.model.topology
    dof = ctx.objid(rows)
    joint = np.searchsorted(topo.joint_qd_start.array, dof, side="right") - 1
    coords = topo.joint_q_start.array[joint][:, None] + np.arange(4)
    return quat_normalize(ctx.state.joint_q[coords])


def ball_quat(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """BALL joint rotation, ``(w, x, y, z)``."""
    q = _ball_quats(ctx, rows)
    return jnp.concatenate([q[:, 3:], q[:, :3]], axis=-1)


def ball_angvel(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """BALL joint angular velocity in the child anchor's axes [rad/s] (``joint_qd`` holds it in the parent's)."""
    dof = ctx.objid(rows)[:, None] + np.arange(3)
    return quat_rotate_inv(_ball_quats(ctx, rows), ctx.state.joint_qd[dof])


def tendon_pos(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Tendon length [m]."""
    return eval_tendon_lengths(ctx.model, ctx.state)[ctx.objid(rows)][:, None]


def tendon_vel(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Tendon length rate [m/s]."""
    return eval_tendon_velocities(ctx.model, ctx.state)[ctx.objid(rows)][:, None]


def tendon_actuator_force(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Tendon actuator force [N]."""
    return eval_tendon_actuator_forces(ctx.model, ctx.state, ctx.control)[ctx.objid(rows)][:, None]


def clock(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Simulation time [s]."""
    t = jnp.asarray(ctx.require("time", SensorType.CLOCK), ctx.state.joint_q.dtype)
    return jnp.broadcast_to(t.reshape(1, 1), (len(rows), 1))
