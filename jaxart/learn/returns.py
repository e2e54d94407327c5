"""Value targets of short rollouts: TD(λ) returns with episode boundaries."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def td_lambda_targets(rewards: jax.Array, next_values: jax.Array, episode_end: jax.Array, *, gamma: float,
                      lam: float) -> jax.Array:
    """TD(λ) returns ``G_t`` of a window of ``h`` steps of ``N`` worlds.

    ``G_t = r_t + γ·((1 - λ)·v_{t+1} + λ·G_{t+1})``, cut to ``r_t + γ·v_{t+1}`` where an episode ends at
    step ``t`` and at the window's last step.

    Args:
        rewards: Rewards ``r_t`` ``(h, N)``.
        next_values: Values ``v_{t+1}`` of the states reached by each step ``(h, N)``: zero where the episode
            terminated, the value of the state before the reset where it was truncated by the time limit.
        episode_end: Whether an episode ended at step ``t`` (terminated or truncated) ``(h, N)`` bool.
        gamma: Discount factor per step.
        lam: λ of TD(λ) (0: one-step targets, 1: Monte-Carlo returns to the window's end).

    Returns:
        The targets ``(h, N)``.

    Raises:
        ValueError: Arrays of different shapes or not two-dimensional.
    """
    rewards, next_values, episode_end = map(jnp.asarray, (rewards, next_values, episode_end))
    if rewards.ndim != 2 or next_values.shape != rewards.shape or episode_end.shape != rewards.shape:
        raise ValueError("td_lambda_targets: rewards, next_values and episode_end must all have shape (h, N), got "
                         f"{rewards.shape}, {next_values.shape}, {episode_end.shape}")

    def back(g_next, xs):
        r, v, end = xs
        g = r + gamma * jnp.where(end, v, (1.0 - lam) * v + lam * g_next)
        return g, g

    _, targets = jax.lax.scan(back, next_values[-1], (rewards, next_values, episode_end), reverse=True)
    return targets
