"""Reaching with the bundled 7-DoF arm (position servos)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.assets import asset_path
from jaxart.envs.base import Env, State
from jaxart.kinematics import eval_fk
from jaxart.math.transform import transform_point
from jaxart.sim.builder import ModelBuilder


class Reacher7(Env):
    """Bring the end-effector site ``"ee"`` of the bundled ``arm7`` to a random reachable target.

    Targets are the end-effector positions of random joint configurations (within
    ``target_range`` of each joint's range), so every target is reachable. Actions in [-1, 1] map
    linearly onto each servo's joint range (absolute position targets). Reward
    ``-‖ee - target‖ - 1e-3 ‖q̇‖²``; never done.

    Observation ``(cos q, sin q, q̇, ee, target - ee)`` (7 + 7 + 7 + 3 + 3 = 27).

    Args:
        dt: Physics step [s] (default 0.005).
        action_repeat: Physics steps per environment step (default 4).
        target_range: Fraction of each joint's range used to sample target configurations.
        dtype: Model float dtype.
    """

    def __init__(self, *, dt: float = 0.005, action_repeat: int = 4, target_range: float = 0.5,
                 dtype=None) -> None:
        b = ModelBuilder()
        b.add_mjcf(asset_path("arm7"))
        model = b.finalize(dtype=dtype)
        super().__init__(model, dt=dt, action_repeat=action_repeat)
        labels = list(model.topology.shape_label)
        if "ee" not in labels:
            raise ValueError("Reacher7: the arm7 asset has no 'ee' site")
        ee = labels.index("ee")
        self._ee_body = int(np.asarray(model.shape_body)[ee])
        self._ee_local = np.asarray(model.shape_transform)[ee, :3]
        lo, hi = np.asarray(model.joint_limit_lower), np.asarray(model.joint_limit_upper)
        self._mid, self._half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        self.target_range = float(target_range)

    @property
    def action_size(self) -> int:
        return 7

    def ee_position(self, ps) -> jax.Array:
        """World position of the end-effector site for a physics state."""
        return transform_point(ps.body_q[self._ee_body], jnp.asarray(self._ee_local, ps.body_q.dtype))

    def reset(self, rng: jax.Array) -> State:
        ft = self.model.joint_q.dtype
        k_target, k_init = jax.random.split(rng)
        mid, half = jnp.asarray(self._mid, ft), jnp.asarray(self._half, ft)
        q_target = mid + self.target_range * half * jax.random.uniform(k_target, (7,), ft, -1.0, 1.0)
        target = self.ee_position(eval_fk(self.model, q_target, jnp.zeros(7, ft)))
        q0 = 0.1 * jax.random.uniform(k_init, (7,), ft, -1.0, 1.0)
        ps = self.pipeline_init(q0, jnp.zeros(7, ft))
        zero = jnp.zeros((), ft)
        metrics = {"distance": jnp.linalg.norm(self.ee_position(ps) - target)}
        return State(ps, self._obs(ps, target), zero, zero, metrics, {"rng": rng, "target": target})

    def step(self, state: State, action: jax.Array) -> State:
        a = self._check_action(action)
        control = self.model.control()
        ft = control.joint_target_q.dtype
        q_target = jnp.asarray(self._mid, ft) + jnp.asarray(self._half, ft) * a.astype(ft)
        ps = self.pipeline_step(state.pipeline_state, control.replace(joint_target_q=q_target))
        target = state.info["target"]
        dist = jnp.sqrt(jnp.sum((self.ee_position(ps) - target) ** 2) + 1e-12)
        reward = -dist - 1e-3 * jnp.sum(ps.joint_qd**2)
        return state.replace(pipeline_state=ps, obs=self._obs(ps, target), reward=reward,
                             metrics={**state.metrics, "distance": dist})

    def _obs(self, ps, target) -> jax.Array:
        ee = self.ee_position(ps)
        return jnp.concatenate([jnp.cos(ps.joint_q), jnp.sin(ps.joint_q), ps.joint_qd, ee, target - ee])
