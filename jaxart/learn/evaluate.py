"""Evaluation of a policy by its episode return, and a host-side training loop with evaluations."""

from __future__ import annotations

import time
from collections.abc import Callable

import jax
import jax.numpy as jnp


def episode_return(env, policy: Callable[[jax.Array], jax.Array], key: jax.Array, *, num_envs: int,
                   episode_length: int) -> jax.Array:
    """Mean undiscounted return of ``num_envs`` episodes of at most ``episode_length`` steps (jittable).

    An episode stops accumulating reward at the first step whose ``state.done`` is set (that step's
    reward counts), as Brax's evaluator does.

    Args:
        env: Environment with Brax's ``Env`` protocol.
        policy: Deterministic policy ``obs (obs_size,) -> action (action_size,)``.
        key: PRNG key for the resets.
        num_envs: Episodes evaluated in parallel.
        episode_length: Steps per episode.

    Returns:
        The mean return (scalar).

    Raises:
        ValueError: Non-positive ``num_envs`` or ``episode_length``.
    """
    if int(num_envs) < 1 or int(episode_length) < 1:
        raise ValueError(f"episode_return: num_envs and episode_length must be positive, got {num_envs!r}, "
                         f"{episode_length!r}")

    def one(k):
        def body(carry, _):
            s, alive, total = carry
            s = env.step(s, policy(s.obs))
            total = total + alive * s.reward
            return (s, alive * (1.0 - s.done), total), None

        s0 = env.reset(k)
        one_ = jnp.ones((), s0.reward.dtype)
        return jax.lax.scan(body, (s0, one_, 0.0 * one_), None, length=int(episode_length))[0][2]

    return jnp.mean(jax.vmap(one)(jax.random.split(key, int(num_envs))))


def train_with_evaluations(trainer, key: jax.Array, *, iterations: int, eval_every: int, num_eval_envs: int = 16,
                           eval_length: int | None = None, progress: Callable[[dict], None] | None = None):
    """Run ``iterations`` jitted updates of ``trainer`` (e.g. :class:`~jaxart.learn.SHAC`), evaluating as it goes.

    Args:
        trainer: Object with ``init(key)``, ``update(state) -> (state, metrics)``, ``policy(state)``, ``env`` and
            ``config.episode_length``.
        key: PRNG key (training and evaluation keys are split from it).
        iterations: Updates to run.
        eval_every: Updates between evaluations (one also runs before the first update and after the last).
        num_eval_envs: Episodes per evaluation.
        eval_length: Steps per evaluation episode (default: the trainer's ``episode_length``).
        progress: Called with each evaluation record.

    Returns:
        ``(state, records)``: the final trainer state and one record per evaluation, a dict with ``iteration``,
        ``env_steps``, ``wall_s`` (since the call, compilation included), ``cpu_s`` (this process's CPU time since
        the call, all threads) and ``eval_return``.

    Raises:
        ValueError: Non-positive ``iterations`` or ``eval_every``.
    """
    if int(iterations) < 1 or int(eval_every) < 1:
        raise ValueError(f"train_with_evaluations: iterations and eval_every must be positive, got {iterations!r}, "
                         f"{eval_every!r}")
    t0, c0 = time.perf_counter(), time.process_time()
    k_init, k_eval = jax.random.split(key)
    length = int(eval_length or trainer.config.episode_length)
    update = jax.jit(trainer.update)
    evaluate = jax.jit(lambda s, k: episode_return(trainer.env, trainer.policy(s), k, num_envs=num_eval_envs,
                                                   episode_length=length))
    state = jax.jit(trainer.init)(k_init)
    records = []

    def record(i):
        ret = float(evaluate(state, k_eval))
        records.append({"iteration": i, "env_steps": int(state.env_steps), "wall_s": time.perf_counter() - t0,
                        "cpu_s": time.process_time() - c0, "eval_return": ret})
        if progress is not None:
            progress(records[-1])

    record(0)
    for i in range(1, int(iterations) + 1):
        state, _ = update(state)
        if i % int(eval_every) == 0 or i == int(iterations):
            record(i)
    return state, records
