"""A jaxart environment behind gymnax's ``Environment`` interface, for gymnax-based trainers (rejax's PPO).

Needs gymnax (``pip install "jaxart[rl]"``, which pins gymnax below 1.0: rejax 0.1.3 unpacks the
five-value ``step`` of gymnax 0.0.x)::

    from rejax import PPO
    env = GymnaxEnv(jaxart.envs.QuadrupedWalk(), episode_length=500)
    algo = PPO.create(env=env, env_params=env.default_params, num_envs=64, ...)
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from gymnax.environments import spaces
from gymnax.environments.environment import Environment


@struct.dataclass
class GymnaxEnvParams:
    """Static episode settings seen by gymnax trainers.

    Attributes:
        max_steps_in_episode: Environment steps after which an episode is truncated.
    """

    max_steps_in_episode: int = 1000


@struct.dataclass
class GymnaxEnvState:
    """The wrapped environment's state and the step counter.

    Attributes:
        env_state: The jaxart environment's ``State``.
        time: Environment steps since the reset (scalar int).
    """

    env_state: Any
    time: jax.Array


class GymnaxEnv(Environment):
    """Present an environment with Brax's ``Env`` protocol as a gymnax ``Environment``.

    Actions live in the box ``[-1, 1]^action_size``; an episode ends when the environment's ``done`` is
    set or after ``episode_length`` steps (gymnax then resets it inside ``step``).

    Args:
        env: The environment (e.g. :class:`jaxart.envs.QuadrupedWalk`).
        episode_length: Steps per episode.

    Raises:
        ValueError: Non-positive ``episode_length``.
    """

    def __init__(self, env, *, episode_length: int = 1000) -> None:
        super().__init__()
        if int(episode_length) < 1:
            raise ValueError(f"GymnaxEnv: episode_length must be a positive integer, got {episode_length!r}")
        self.env = env
        self.episode_length = int(episode_length)

    @property
    def default_params(self) -> GymnaxEnvParams:
        """Episodes of ``episode_length`` steps."""
        return GymnaxEnvParams(max_steps_in_episode=self.episode_length)

    def step_env(self, key: jax.Array, state: GymnaxEnvState, action: jax.Array, params: GymnaxEnvParams):
        """One environment step: ``(obs, state, reward, done, info)``; ``done`` includes the time limit."""
        nxt = self.env.step(state.env_state, action)
        time = state.time + 1
        done = (nxt.done > 0.5) | (time >= params.max_steps_in_episode)
        return nxt.obs, GymnaxEnvState(nxt, time), nxt.reward, done, {}

    def reset_env(self, key: jax.Array, params: GymnaxEnvParams):
        """``(obs, state)`` of a reset environment."""
        s = self.env.reset(key)
        return s.obs, GymnaxEnvState(s, jnp.zeros((), jnp.int32))

    def get_obs(self, state: GymnaxEnvState, params=None, key=None) -> jax.Array:
        """The wrapped state's observation."""
        return state.env_state.obs

    def is_terminal(self, state: GymnaxEnvState, params: GymnaxEnvParams) -> jax.Array:
        """Terminated by the environment or past the time limit."""
        return (state.env_state.done > 0.5) | (state.time >= params.max_steps_in_episode)

    @property
    def name(self) -> str:
        """The wrapped environment's class name."""
        return type(self.env).__name__

    @property
    def num_actions(self) -> int:
        """Length of the action vector."""
        return self.env.action_size

    def action_space(self, params: GymnaxEnvParams | None = None) -> spaces.Box:
        """The box ``[-1, 1]^action_size``."""
        return spaces.Box(low=-1.0, high=1.0, shape=(self.env.action_size,))

    def observation_space(self, params: GymnaxEnvParams | None = None) -> spaces.Box:
        """The unbounded box of ``observation_size`` components."""
        return spaces.Box(low=-jnp.inf, high=jnp.inf, shape=(self.env.observation_size,))
