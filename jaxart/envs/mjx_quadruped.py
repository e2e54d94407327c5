"""The quadruped walking task of :class:`~jaxart.envs.QuadrupedWalk` on MuJoCo XLA (MJX), for comparisons.

Same bundled model file, observation, action mapping, reward, termination and reset noise as
:class:`~jaxart.envs.QuadrupedWalk`; only the physics differ: ``mjx.step`` on the MJCF compiled by
MuJoCo (its soft contacts and position actuators) instead of jaxart's solver. Training both with the
same Brax trainer compares the simulators on one task (``examples/rl/quadruped_vs_mjx.py``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.assets import asset_path
from jaxart.envs.base import State
from jaxart.envs.quadruped import servo_targets, walk_obs, walk_reward
from jaxart.math.quat import quat_rotate


class MjxQuadrupedWalk:
    """Walk forward (+X) with the bundled quadruped, simulated by ``mujoco.mjx``.

    Brax's ``Env`` protocol (``reset``, ``step``, ``observation_size``, ``action_size``);
    ``pipeline_state`` is an ``mjx.Data``.

    Args:
        dt: Physics step [s] (default: the model file's 2 ms).
        action_repeat: Physics steps per environment step (default 10: a 50 Hz policy at 2 ms).
        action_scale: Servo target offset at ``|a| = 1`` [rad].
        target_speed: Forward speed above which the velocity reward saturates [m/s].
        min_height: Torso height below which the episode ends [m].
        solver: MuJoCo constraint solver, ``"newton"`` (the model's) or ``"cg"``.
        iterations: Constraint solver iterations (``None``: the model's).

    Raises:
        ValueError: Non-positive ``dt`` or ``action_repeat``, unknown ``solver``.
    """

    backend = "mjx"

    def __init__(self, *, dt: float | None = None, action_repeat: int = 10, action_scale: float = 0.4,
                 target_speed: float = 1.0, min_height: float = 0.18, solver: str = "newton",
                 iterations: int | None = None) -> None:
        import mujoco

        from jaxart.solvers.mujoco import mjx

        mj = mujoco.MjModel.from_xml_path(asset_path("quadruped"))
        mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_SENSOR  # the task reads the state, not the sensors
        if dt is not None:
            if not float(dt) > 0:
                raise ValueError(f"MjxQuadrupedWalk: dt must be positive, got {dt!r}")
            mj.opt.timestep = float(dt)
        if int(action_repeat) != action_repeat or int(action_repeat) < 1:
            raise ValueError(f"MjxQuadrupedWalk: action_repeat must be a positive integer, got {action_repeat!r}")
        solvers = {"newton": mujoco.mjtSolver.mjSOL_NEWTON, "cg": mujoco.mjtSolver.mjSOL_CG}
        if solver not in solvers:
            raise ValueError(f"MjxQuadrupedWalk: solver must be one of {sorted(solvers)}, got {solver!r}")
        mj.opt.solver = solvers[solver]
        if iterations is not None:
            mj.opt.iterations = int(iterations)
        self.mj_model = mj
        self.sys = mjx.put_model(mj)
        self.dt = float(mj.opt.timestep)
        self.action_repeat = int(action_repeat)
        self.action_scale = float(action_scale)
        self.target_speed = float(target_speed)
        self.min_height = float(min_height)
        self._q0 = np.asarray(mj.qpos0)
        self._lo, self._hi = np.asarray(mj.jnt_range[1:, 0]), np.asarray(mj.jnt_range[1:, 1])

    @property
    def action_size(self) -> int:
        return 12

    @property
    def observation_size(self) -> int:
        return int(jax.eval_shape(self.reset, jax.random.PRNGKey(0)).obs.shape[-1])

    @property
    def unwrapped(self):
        return self

    @property
    def control_dt(self) -> float:
        """Time per environment step [s]."""
        return self.dt * self.action_repeat

    def reset(self, rng: jax.Array) -> State:
        """Start an episode: the standing pose with the noise of :meth:`QuadrupedWalk.reset`."""
        from jaxart.solvers.mujoco import mjx

        ft = self.sys.qpos0.dtype  # float64 when jax_enable_x64 is on
        kq, kd = jax.random.split(rng)
        q = jnp.asarray(self._q0, ft).at[7:].add(0.05 * jax.random.uniform(kq, (12,), ft, -1.0, 1.0))
        qd = 0.05 * jax.random.uniform(kd, (18,), ft, -1.0, 1.0)
        d = mjx.forward(self.sys, mjx.make_data(self.sys).replace(qpos=q, qvel=qd))
        zero = jnp.zeros((), ft)
        metrics = {"forward_velocity": zero, "height": q[2]}
        return State(d, self._obs(d), zero, zero, metrics, {"rng": rng})

    def step(self, state: State, action: jax.Array) -> State:
        """``action_repeat`` MJX steps with the servo targets of ``action`` (clipped to [-1, 1])."""
        from jaxart.solvers.mujoco import mjx

        a = jnp.clip(jnp.asarray(action, self.sys.qpos0.dtype), -1.0, 1.0)
        if a.shape != (12,):
            raise ValueError(f"MjxQuadrupedWalk.step: action must have shape (12,), got {a.shape}")
        ctrl = servo_targets(a, self._q0[7:], self._lo, self._hi, self.action_scale)
        d = state.pipeline_state.replace(ctrl=ctrl)
        d = jax.lax.fori_loop(0, self.action_repeat, lambda _, x: mjx.step(self.sys, x), d)
        quat, twist = self._torso(d)
        reward, done, metrics = walk_reward(twist[0], d.qpos[2], quat, a, target_speed=self.target_speed,
                                            min_height=self.min_height)
        return state.replace(pipeline_state=d, obs=self._obs(d), reward=reward, done=done,
                             metrics={**state.metrics, **metrics})

    @staticmethod
    def _torso(d):
        """Torso quaternion (xyzw) and COM twist in world axes (the torso's COM is its frame origin)."""
        quat = jnp.concatenate([d.qpos[4:7], d.qpos[3:4]])
        return quat, jnp.concatenate([d.qvel[0:3], quat_rotate(quat, d.qvel[3:6])])

    def _obs(self, d) -> jax.Array:
        quat, twist = self._torso(d)
        return walk_obs(d.qpos[2], quat, d.qpos[7:], twist, d.qvel[6:])
