"""Policy and value networks (flax linen MLPs) and running observation statistics."""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from flax import linen as nn
from flax import struct


class MLP(nn.Module):
    """A multilayer perceptron: ``Dense → ELU`` per hidden layer, then a linear output layer.

    Attributes:
        hidden: Widths of the hidden layers.
        out: Width of the output layer.
        out_scale: Scale of the output layer's initial weights (small for policies: near-zero first actions).
    """

    hidden: Sequence[int]
    out: int
    out_scale: float = 1.0

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        for width in self.hidden:
            x = nn.elu(nn.Dense(width)(x))
        init = nn.initializers.variance_scaling(self.out_scale, "fan_in", "truncated_normal")
        return nn.Dense(self.out, kernel_init=init)(x)


class GaussianActor(nn.Module):
    """A tanh-squashed Gaussian policy: ``a = tanh(μ(obs) + σ·ε)`` with a learned, state-independent ``log σ``.

    Attributes:
        hidden: Widths of the hidden layers.
        action_size: Length of the action vector.
        init_log_std: Initial ``log σ`` of every action component.
    """

    hidden: Sequence[int]
    action_size: int
    init_log_std: float = -1.0

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(μ, log σ)``, each ``(..., action_size)``, for normalised observations ``obs`` ``(..., obs_size)``."""
        mean = MLP(self.hidden, self.action_size, out_scale=0.01)(obs)
        log_std = self.param("log_std", nn.initializers.constant(self.init_log_std), (self.action_size,))
        return mean, jnp.broadcast_to(log_std, mean.shape)


class ValueCritic(nn.Module):
    """A state-value network ``V(obs)``.

    Attributes:
        hidden: Widths of the hidden layers.
    """

    hidden: Sequence[int]

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        """Values ``(...)`` of normalised observations ``obs`` ``(..., obs_size)``."""
        return MLP(self.hidden, 1)(obs)[..., 0]


@struct.dataclass
class RunningStats:
    """Running mean and variance of observations (parallel Welford update).

    Attributes:
        mean: Mean of every observation component ``(obs_size,)``.
        var: Variance of every observation component ``(obs_size,)``.
        count: Number of observations seen (scalar; starts at a small positive value).
    """

    mean: jax.Array
    var: jax.Array
    count: jax.Array

    @classmethod
    def create(cls, size: int, dtype=jnp.float32) -> RunningStats:
        """Zero mean, unit variance statistics of ``size`` components."""
        return cls(jnp.zeros(size, dtype), jnp.ones(size, dtype), jnp.asarray(1e-4, dtype))

    def update(self, batch: jax.Array) -> RunningStats:
        """Statistics including ``batch`` ``(..., obs_size)`` (all leading axes are samples)."""
        x = jnp.reshape(batch, (-1, self.mean.shape[0])).astype(self.mean.dtype)
        n = jnp.asarray(x.shape[0], self.mean.dtype)
        b_mean, b_var = jnp.mean(x, axis=0), jnp.var(x, axis=0)
        total = self.count + n
        delta = b_mean - self.mean
        mean = self.mean + delta * n / total
        m2 = self.var * self.count + b_var * n + delta**2 * self.count * n / total
        return RunningStats(mean, m2 / total, total)

    def normalize(self, obs: jax.Array) -> jax.Array:
        """``(obs - mean) / sqrt(var + 1e-5)`` (the statistics are constants for gradients)."""
        mean, var = jax.lax.stop_gradient(self.mean), jax.lax.stop_gradient(self.var)
        return (obs - mean.astype(obs.dtype)) / jnp.sqrt(var.astype(obs.dtype) + 1e-5)
