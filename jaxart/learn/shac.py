"""Short-Horizon Actor-Critic (SHAC): analytic policy gradients through jaxart's differentiable step.

After Xu et al., "Accelerated Policy Learning with Parallel Differentiable Simulation" (ICLR 2022). Each
update rolls ``num_envs`` batched worlds (``jax.vmap`` of ``env.step``) ``horizon`` steps from where the
previous window stopped, and descends the actor loss

    L(θ) = -1/(h·N) Σ_worlds [ Σ_{t<h} γ^t r_t + γ^h V(s_h) ]

by backpropagating through the simulator (episodes that end inside the window contribute their
discounted rewards plus ``γ^t V`` of the state they ended in, zero when terminated). Gradients are cut
between windows (the window's start state is a constant), the actor gradient's global norm is
clipped, and non-finite gradients skip the update. The critic fits TD(λ) targets computed with a
slowly tracking target critic, by minibatch regression over the window's states.

::

    trainer = SHAC(jaxart.envs.PendulumSwingup(), SHACConfig(num_envs=32, horizon=32))
    state = trainer.init(jax.random.PRNGKey(0))
    update = jax.jit(trainer.update)
    for _ in range(100):
        state, metrics = update(state)
    act = trainer.policy(state)            # deterministic: obs -> action in [-1, 1]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxart.learn.networks import GaussianActor, RunningStats, ValueCritic
from jaxart.learn.returns import td_lambda_targets


@dataclasses.dataclass(frozen=True)
class SHACConfig:
    """Hyperparameters of :class:`SHAC` (defaults after the paper's locomotion settings, smaller networks).

    Attributes:
        num_envs: Worlds simulated in parallel.
        horizon: Steps ``h`` of each differentiated window.
        episode_length: Environment steps after which an episode is truncated (and its world reset).
        gamma: Discount factor per environment step.
        lam: λ of the critic's TD(λ) targets.
        actor_lr: Adam learning rate of the actor.
        critic_lr: Adam learning rate of the critic.
        max_grad_norm: Global-norm clip of the actor's and critic's gradients.
        lr_decay_iterations: Updates over which both learning rates fall linearly to zero (0: constant rates).
        critic_iterations: Passes over the window's states per critic update.
        critic_minibatches: Minibatches per pass (must divide ``horizon * num_envs``).
        target_alpha: Target-critic smoothing ``target ← α·target + (1 - α)·critic`` per update.
        actor_hidden: Hidden widths of the actor MLP.
        critic_hidden: Hidden widths of the critic MLP.
        init_log_std: Initial log standard deviation of the exploration noise (before the tanh).
        normalize_observations: Standardise observations with running statistics.
    """

    num_envs: int = 64
    horizon: int = 32
    episode_length: int = 1000
    gamma: float = 0.99
    lam: float = 0.95
    actor_lr: float = 2e-3
    critic_lr: float = 2e-3
    max_grad_norm: float = 1.0
    lr_decay_iterations: int = 0
    critic_iterations: int = 16
    critic_minibatches: int = 4
    target_alpha: float = 0.2
    actor_hidden: tuple[int, ...] = (64, 64)
    critic_hidden: tuple[int, ...] = (64, 64)
    init_log_std: float = -1.0
    normalize_observations: bool = True

    def __post_init__(self) -> None:
        for name in ("num_envs", "horizon", "episode_length", "critic_iterations", "critic_minibatches"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"SHACConfig: {name} must be a positive integer, got {value!r}")
        if not isinstance(self.lr_decay_iterations, int) or self.lr_decay_iterations < 0:
            raise ValueError(f"SHACConfig: lr_decay_iterations must be a non-negative integer, "
                             f"got {self.lr_decay_iterations!r}")
        if (self.num_envs * self.horizon) % self.critic_minibatches:
            raise ValueError(f"SHACConfig: critic_minibatches ({self.critic_minibatches}) must divide "
                             f"horizon * num_envs ({self.horizon * self.num_envs})")
        for name in ("gamma", "lam", "target_alpha"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"SHACConfig: {name} must lie in [0, 1], got {getattr(self, name)!r}")
        for name in ("actor_lr", "critic_lr", "max_grad_norm"):
            if not getattr(self, name) > 0:
                raise ValueError(f"SHACConfig: {name} must be positive, got {getattr(self, name)!r}")


@struct.dataclass
class SHACState:
    """Everything one SHAC update reads and writes (a pytree; ``N`` = ``num_envs``).

    Attributes:
        actor_params: Parameters of the :class:`~jaxart.learn.networks.GaussianActor`.
        critic_params: Parameters of the :class:`~jaxart.learn.networks.ValueCritic`.
        target_params: Parameters of the target critic (bootstraps the actor loss and the targets).
        actor_opt: Optimiser state of the actor.
        critic_opt: Optimiser state of the critic.
        obs_stats: Running observation statistics.
        env_state: Batched environment state, leading axis ``N``.
        episode_step: Environment steps since each world's reset ``(N,)`` int.
        key: PRNG key for exploration noise and resets.
        env_steps: Environment steps taken so far (scalar int).
    """

    actor_params: Any
    critic_params: Any
    target_params: Any
    actor_opt: Any
    critic_opt: Any
    obs_stats: RunningStats
    env_state: Any
    episode_step: jax.Array
    key: jax.Array
    env_steps: jax.Array


@struct.dataclass
class Window:
    """What the critic learns from one differentiated window (constants; ``h`` steps of ``N`` worlds).

    Attributes:
        obs: Observations the actions were taken from ``(h, N, obs_size)`` (raw, not normalised).
        rewards: Rewards ``(h, N)``.
        next_values: Target-critic values of the reached states ``(h, N)`` (zero where terminated).
        episode_end: Whether an episode ended at each step ``(h, N)`` bool.
    """

    obs: jax.Array
    rewards: jax.Array
    next_values: jax.Array
    episode_end: jax.Array


def _where_worlds(mask: jax.Array, a: Any, b: Any) -> Any:
    """Per-world select of two batched pytrees (``mask`` ``(N,)``): ``a`` where true, else ``b``."""
    return jax.tree.map(lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (y.ndim - 1)), x, y).astype(y.dtype),
                        a, b)


class SHAC:
    """The SHAC trainer for one environment with Brax's ``Env`` protocol (e.g. any of :mod:`jaxart.envs`).

    Args:
        env: The environment: ``reset(key)``, ``step(state, action)`` (differentiable), ``action_size``,
            ``observation_size``; ``state.done`` marks termination.
        config: Hyperparameters.

    Raises:
        TypeError: ``env`` lacks the protocol's methods, or ``config`` is not a :class:`SHACConfig`.
    """

    def __init__(self, env, config: SHACConfig | None = None) -> None:
        for name in ("reset", "step", "action_size", "observation_size"):
            if not hasattr(env, name):
                raise TypeError(f"SHAC: env must follow Brax's Env protocol (missing {name!r})")
        config = SHACConfig() if config is None else config
        if not isinstance(config, SHACConfig):
            raise TypeError(f"SHAC: config must be a SHACConfig, got {type(config).__name__}")
        self.env = env
        self.config = config
        self.actor = GaussianActor(config.actor_hidden, env.action_size, config.init_log_std)
        self.critic = ValueCritic(config.critic_hidden)
        self.actor_tx = self._optimizer(config.actor_lr, 1)
        self.critic_tx = self._optimizer(config.critic_lr, config.critic_iterations * config.critic_minibatches)

    def _optimizer(self, lr: float, steps_per_update: int) -> optax.GradientTransformation:
        """Adam (the paper's β = (0.7, 0.95)) after a global-norm clip, with the configured learning-rate decay."""
        n = self.config.lr_decay_iterations * steps_per_update
        schedule = optax.linear_schedule(lr, 0.0, n) if n else lr
        return optax.chain(optax.clip_by_global_norm(self.config.max_grad_norm), optax.adam(schedule, b1=0.7, b2=0.95))

    # ------------------------------------------------------------------ public
    def init(self, key: jax.Array) -> SHACState:
        """Fresh networks, optimisers, statistics and ``num_envs`` reset worlds."""
        k_actor, k_critic, k_env, key = jax.random.split(key, 4)
        env_state = jax.vmap(self.env.reset)(jax.random.split(k_env, self.config.num_envs))
        obs = env_state.obs
        actor_params = self.actor.init(k_actor, obs[0])
        critic_params = self.critic.init(k_critic, obs[0])
        stats = RunningStats.create(obs.shape[-1], obs.dtype)
        return SHACState(actor_params, critic_params, critic_params, self.actor_tx.init(actor_params),
                         self.critic_tx.init(critic_params), stats, env_state,
                         jnp.zeros(self.config.num_envs, jnp.int32), key, jnp.zeros((), jnp.int32))

    def update(self, state: SHACState) -> tuple[SHACState, dict[str, jax.Array]]:
        """One SHAC iteration: a differentiated window, an actor step, a critic fit (jit it)."""
        cfg = self.config
        key, k_noise, k_reset = jax.random.split(state.key, 3)
        noise = jax.random.normal(k_noise, (cfg.horizon, cfg.num_envs, self.env.action_size))
        resets = jax.vmap(self.env.reset)(jax.random.split(k_reset, cfg.num_envs))
        grad_fn = jax.value_and_grad(self.actor_loss, has_aux=True)
        (loss, (end_state, window)), grads = grad_fn(state.actor_params, state, noise, resets)
        finite = jnp.all(jnp.asarray([jnp.all(jnp.isfinite(g)) for g in jax.tree.leaves(grads)]))
        grads = jax.tree.map(lambda g: jnp.where(finite, g, 0.0), grads)
        updates, actor_opt = self.actor_tx.update(grads, state.actor_opt, state.actor_params)
        actor_params = optax.apply_updates(state.actor_params, updates)
        actor_params, actor_opt = jax.tree.map(lambda new, old: jnp.where(finite, new, old), (actor_params, actor_opt),
                                               (state.actor_params, state.actor_opt))
        state = state.replace(actor_params=actor_params, actor_opt=actor_opt, key=key,
                              env_state=end_state[0], episode_step=end_state[1],
                              env_steps=state.env_steps + cfg.horizon * cfg.num_envs)
        state, critic_loss = self.fit_critic(state, window)
        if cfg.normalize_observations:
            state = state.replace(obs_stats=state.obs_stats.update(window.obs))
        metrics = {"actor_loss": loss, "critic_loss": critic_loss, "grad_norm": optax.tree.norm(grads),
                   "finite_grad": finite, "mean_reward": jnp.mean(window.rewards)}
        return state, metrics

    def policy(self, state: SHACState) -> Callable[[jax.Array], jax.Array]:
        """The deterministic policy ``obs -> tanh(μ)`` of ``state`` (batched or single observations)."""
        params, stats = state.actor_params, state.obs_stats

        def act(obs: jax.Array) -> jax.Array:
            return jnp.tanh(self.actor.apply(params, stats.normalize(obs))[0])

        return act

    # ------------------------------------------------------------------ actor
    def actor_loss(self, actor_params: Any, state: SHACState, noise: jax.Array, resets: Any):
        """The short-horizon actor loss and, as auxiliary output, the end state and the critic's :class:`Window`.

        Args:
            actor_params: Actor parameters (the differentiated argument).
            state: Trainer state (start of the window; treated as constant).
            noise: Standard normal exploration noise ``(h, N, action_size)``.
            resets: Batched reset states swapped in where an episode ends.

        Returns:
            ``(loss, ((env_state, episode_step), window))``.
        """
        cfg, stats = self.config, state.obs_stats
        value = lambda obs: self.critic.apply(state.target_params, stats.normalize(obs))
        start = jax.lax.stop_gradient(state.env_state)
        ft = start.reward.dtype
        zeros = jnp.zeros(cfg.num_envs, ft)

        def body(carry, eps):
            s, step, ret, disc, total = carry
            mean, log_std = self.actor.apply(actor_params, stats.normalize(s.obs))
            nxt = jax.vmap(self.env.step)(s, jnp.tanh(mean + jnp.exp(log_std) * eps))
            step = step + 1
            bad = ~jnp.all(jnp.isfinite(nxt.obs), axis=-1)
            term = (nxt.done > 0.5) | bad
            end = term | (step >= cfg.episode_length)
            v_next = jnp.where(term, 0.0, value(jnp.where(bad[:, None], 0.0, nxt.obs))).astype(ft)
            ret = ret + disc * jnp.where(bad, 0.0, nxt.reward)
            disc = disc * cfg.gamma
            total = total + jnp.where(end, ret + disc * v_next, 0.0)
            ret, disc = jnp.where(end, 0.0, ret), jnp.where(end, 1.0, disc)
            out = (s.obs, nxt.reward, v_next, end)
            s = _where_worlds(end, resets, nxt)
            return (s, jnp.where(end, 0, step), ret, disc, total), jax.lax.stop_gradient(out)

        init = (start, state.episode_step, zeros, jnp.ones(cfg.num_envs, ft), zeros)
        (s, step, ret, disc, total), out = jax.lax.scan(body, init, noise.astype(ft))
        total = total + ret + disc * value(s.obs)
        loss = -jnp.sum(total) / (cfg.horizon * cfg.num_envs)
        return loss, ((jax.lax.stop_gradient(s), step), Window(*out))

    # ------------------------------------------------------------------ critic
    def fit_critic(self, state: SHACState, window: Window) -> tuple[SHACState, jax.Array]:
        """Regress the critic on the window's TD(λ) targets; then move the target critic toward it."""
        cfg = self.config
        targets = td_lambda_targets(window.rewards, window.next_values, window.episode_end, gamma=cfg.gamma,
                                    lam=cfg.lam)
        obs = state.obs_stats.normalize(window.obs.reshape(-1, window.obs.shape[-1]))
        targets = targets.reshape(-1)
        n_mb = cfg.critic_minibatches
        key, k_perm = jax.random.split(state.key)

        def minibatch(carry, idx):
            params, opt = carry
            loss, grads = jax.value_and_grad(lambda p: jnp.mean((self.critic.apply(p, obs[idx]) - targets[idx]) ** 2))(
                params)
            updates, opt = self.critic_tx.update(grads, opt, params)
            return (optax.apply_updates(params, updates), opt), loss

        def epoch(carry, k):
            perm = jax.random.permutation(k, targets.shape[0]).reshape(n_mb, -1)
            return jax.lax.scan(minibatch, carry, perm)

        (params, opt), losses = jax.lax.scan(epoch, (state.critic_params, state.critic_opt),
                                             jax.random.split(k_perm, cfg.critic_iterations))
        a = cfg.target_alpha
        target = jax.tree.map(lambda t, p: a * t + (1.0 - a) * p, state.target_params, params)
        return state.replace(critic_params=params, critic_opt=opt, target_params=target, key=key), losses[-1].mean()
