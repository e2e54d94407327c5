"""Policy learning on jaxart's differentiable environments (today's JAX; flax networks, optax optimisers).

:class:`SHAC` (Short-Horizon Actor-Critic) backpropagates short rollouts of batched worlds through the
simulator and bootstraps them with a learned critic. :func:`episode_return` evaluates any deterministic
policy, :func:`train_with_evaluations` runs a trainer with periodic evaluations.

``jaxart.learn.gymnax_env.GymnaxEnv`` (needs ``pip install "jaxart[rl]"``) presents a jaxart environment to
gymnax-based trainers such as rejax's PPO.
"""

from jaxart.learn.evaluate import episode_return, train_with_evaluations
from jaxart.learn.networks import GaussianActor, RunningStats, ValueCritic
from jaxart.learn.returns import td_lambda_targets
from jaxart.learn.shac import SHAC, SHACConfig, SHACState, Window

__all__ = ["SHAC", "GaussianActor", "RunningStats", "SHACConfig", "SHACState", "ValueCritic", "Window",
           "episode_return", "td_lambda_targets", "train_with_evaluations"]
