"""Quadruped locomotion on flat ground with the bundled quadruped (12 position servos, contacts)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.assets import asset_path
from jaxart.envs.base import Env, State
from jaxart.envs.sensing import check_sensing, sensed_step, sensors_at
from jaxart.sim.builder import ModelBuilder


class QuadrupedWalk(Env):
    """Walk forward (+X) on flat ground.

    Actions in [-1, 1] are offsets of ``action_scale`` rad from the standing pose, clipped to the
    joint ranges, sent as position-servo targets. Reward: forward COM velocity of the torso (capped
    at ``target_speed``) + 0.5 while healthy - 1e-2 ‖a‖²; done when the torso drops below
    ``min_height`` or tilts past 60°.

    Observation (``observation="state"``, the default) ``(z, torso quaternion, joint angles, torso velocity
    and angular velocity, joint velocities)`` (1 + 4 + 12 + 6 + 12 = 35). With ``observation="sensors"``
    the observation is what a real robot measures: the model's MJCF sensors, evaluated by
    :func:`jaxart.sensors.eval_sensors` in MuJoCo's ``sensordata`` layout (torso IMU accelerometer, gyro,
    orientation quaternion and velocimeter, four foot touch sensors, 12 joint encoders and 12 joint rates:
    3 + 3 + 4 + 3 + 4 + 12 + 12 = 41; :func:`jaxart.sensors.sensor_dict` names them). As MuJoCo after
    ``mj_step``, they are read at the start of the last physics step of the action, with that step's joint
    accelerations and implicit-law contact forces; the episode's first observation reads the step the
    physics would take from the reset state under the neutral action (the state is not advanced).

    Physics: :class:`jaxart.solvers.SolverFeatherstone` (its defaults: implicit ground contact via
    ``model.collide``) at ``dt`` with ``action_repeat`` steps per action: 4 ms × 5, a 50 Hz policy.

    Args:
        dt: Physics step [s] (default 0.004).
        action_repeat: Physics steps per environment step (default 5: a 50 Hz policy).
        action_scale: Servo target offset at ``|a| = 1`` [rad].
        target_speed: Forward speed above which the velocity reward saturates [m/s].
        min_height: Torso height below which the episode ends [m].
        solver_kwargs: Options of ``SolverFeatherstone``.
        dtype: Model float dtype.
        observation: ``"state"`` (default) or ``"sensors"``.

    Raises:
        ValueError: Unknown ``observation``.
        NotImplementedError: ``observation="sensors"`` with ``solver_kwargs`` selecting a contact law other
            than the implicit one.
    """

    def __init__(self, *, dt: float = 0.004, action_repeat: int = 5, action_scale: float = 0.4,
                 target_speed: float = 1.0, min_height: float = 0.18, solver_kwargs: dict | None = None,
                 dtype=None, observation: str = "state") -> None:
        if observation not in ("state", "sensors"):
            raise ValueError(f"QuadrupedWalk: observation must be 'state' or 'sensors', got {observation!r}")
        b = ModelBuilder()
        b.add_mjcf(asset_path("quadruped"))
        model = b.finalize(dtype=dtype)
        super().__init__(model, solver_kwargs=solver_kwargs, dt=dt, action_repeat=action_repeat, contacts=True)
        self._q0 = np.asarray(model.joint_q)
        self._lo = np.asarray(model.joint_limit_lower)[6:]
        self._hi = np.asarray(model.joint_limit_upper)[6:]
        self.action_scale = float(action_scale)
        self.target_speed = float(target_speed)
        self.min_height = float(min_height)
        self.observation = observation
        if observation == "sensors":
            check_sensing(self)

    @property
    def action_size(self) -> int:
        return 12

    def reset(self, rng: jax.Array) -> State:
        ft = self.model.joint_q.dtype
        kq, kd = jax.random.split(rng)
        q = jnp.asarray(self._q0, ft)
        q = q.at[7:].add(0.05 * jax.random.uniform(kq, (12,), ft, -1.0, 1.0))
        qd = 0.05 * jax.random.uniform(kd, (18,), ft, -1.0, 1.0)
        ps = self.pipeline_init(q, qd)
        zero = jnp.zeros((), ft)
        metrics = {"forward_velocity": zero, "height": ps.body_q[0, 2]}
        obs = sensors_at(self, ps, self._control(jnp.zeros(12, ft))) if self.observation == "sensors" else self._obs(ps)
        return State(ps, obs, zero, zero, metrics, {"rng": rng})

    def step(self, state: State, action: jax.Array) -> State:
        a = self._check_action(action)
        control = self._control(a)
        if self.observation == "sensors":
            sensed = sensed_step(self, state.pipeline_state, control)
            ps, obs = sensed.state, sensed.sensordata
        else:
            ps = self.pipeline_step(state.pipeline_state, control)
            obs = self._obs(ps)
        reward, done, metrics = walk_reward(ps.body_qd[0, 0], ps.body_q[0, 2], ps.body_q[0, 3:7], a,
                                            target_speed=self.target_speed, min_height=self.min_height)
        return state.replace(pipeline_state=ps, obs=obs, reward=reward, done=done,
                             metrics={**state.metrics, **metrics})

    def _control(self, a: jax.Array):
        """Servo targets of action ``a`` (clipped to [-1, 1]) as a Control."""
        control = self.model.control()
        ft = control.joint_target_q.dtype
        target = servo_targets(a.astype(ft), self._q0[7:], self._lo, self._hi, self.action_scale)
        # joint_target_q is per coordinate: the free joint's seven coordinates come first.
        return control.replace(joint_target_q=control.joint_target_q.at[7:].set(target))

    @staticmethod
    def _obs(ps) -> jax.Array:
        return walk_obs(ps.body_q[0, 2], ps.body_q[0, 3:7], ps.joint_q[7:], ps.body_qd[0], ps.joint_qd[6:])


def servo_targets(a: jax.Array, q0, lo, hi, scale: float) -> jax.Array:
    """Servo targets ``clip(q0 + scale·a, lo, hi)`` of the 12 leg joints (``a`` in [-1, 1])."""
    ft = a.dtype
    return jnp.clip(jnp.asarray(q0, ft) + scale * a, jnp.asarray(lo, ft), jnp.asarray(hi, ft))


def walk_reward(vx, z, quat_xyzw, a, *, target_speed: float, min_height: float):
    """Reward, done flag and metrics of the walking task (shared by the jaxart and MJX versions).

    Args:
        vx: Forward (world +X) velocity of the torso's centre of mass [m/s].
        z: Torso height [m].
        quat_xyzw: Torso orientation quaternion ``(x, y, z, w)``.
        a: Action ``(12,)`` in [-1, 1].
        target_speed: Speed above which the velocity reward saturates [m/s].
        min_height: Torso height below which the episode ends [m].

    Returns:
        ``(reward, done, metrics)``; ``metrics`` holds ``forward_velocity`` and ``height``.
    """
    ft = vx.dtype
    up_z = 1.0 - 2.0 * (quat_xyzw[0] ** 2 + quat_xyzw[1] ** 2)  # world z of the torso's z axis
    healthy = (z > min_height) & (up_z > 0.5)
    reward = jnp.minimum(vx, target_speed) + 0.5 * healthy - 1e-2 * jnp.sum(a**2)
    done = jnp.where(healthy, 0.0, 1.0).astype(ft)
    return reward.astype(ft), done, {"forward_velocity": vx, "height": z}


def walk_obs(z, quat_xyzw, joint_q, twist, joint_qd) -> jax.Array:
    """Observation ``(z, torso quaternion xyzw, joint angles, torso (v_com, ω) in world axes, joint rates)``."""
    return jnp.concatenate([jnp.reshape(z, (1,)), quat_xyzw, joint_q, twist, joint_qd])
