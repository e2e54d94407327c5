"""jaxart.learn: TD(λ) targets, the SHAC actor loss's gradient (finite differences), learning on small tasks."""

import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jax.flatten_util import ravel_pytree  # noqa: E402

from jaxart.envs.base import State  # noqa: E402
from jaxart.learn import SHAC, SHACConfig, episode_return, td_lambda_targets, train_with_evaluations  # noqa: E402


class PointMass:
    """A 2-D point mass pushed toward the origin (closed-form dynamics: compiles in well under a second).

    State ``(x, v)``, action a force in [-1, 1]² (``v += dt·a``, ``x += dt·v``); reward ``-‖x‖² - 0.01‖a‖²``;
    ``done`` when ``‖x‖ > limit`` (so termination paths are exercised).
    """

    backend = "test"
    action_size = 2
    observation_size = 4

    def __init__(self, dt=0.1, limit=3.0):
        self.dt, self.limit = dt, limit

    def reset(self, rng):
        x = jax.random.uniform(rng, (4,), jnp.float64, -1.0, 1.0) * jnp.array([1.0, 1.0, 0.2, 0.2])
        zero = jnp.zeros((), jnp.float64)
        return State(x, x, zero, zero, {}, {})

    def step(self, state, action):
        a = jnp.clip(action, -1.0, 1.0)
        x, v = state.pipeline_state[:2], state.pipeline_state[2:]
        v = v + self.dt * a
        x = x + self.dt * v
        ps = jnp.concatenate([x, v])
        reward = -jnp.sum(x**2) - 0.01 * jnp.sum(a**2)
        done = (jnp.sum(x**2) > self.limit**2).astype(jnp.float64)
        return state.replace(pipeline_state=ps, obs=ps, reward=reward, done=done)


def _reference_td_lambda(r, v, end, gamma, lam):
    h = r.shape[0]
    g = np.zeros_like(r)
    for t in reversed(range(h)):
        if t == h - 1:
            g[t] = r[t] + gamma * v[t]
        else:
            g[t] = r[t] + gamma * np.where(end[t], v[t], (1 - lam) * v[t] + lam * g[t + 1])
    return g


def test_td_lambda_targets_match_the_recursion_and_limits():
    rng = np.random.default_rng(0)
    r, v = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    end = np.zeros((6, 3), bool)
    end[2, 1] = end[4, 0] = True
    for lam in (0.0, 0.7, 1.0):
        got = td_lambda_targets(r, v, end, gamma=0.9, lam=lam)
        np.testing.assert_allclose(got, _reference_td_lambda(r, v, end, 0.9, lam), rtol=1e-12)
    # λ = 0: one-step targets; λ = 1 without episode ends: discounted rewards plus the bootstrapped tail
    np.testing.assert_allclose(td_lambda_targets(r, v, end, gamma=0.9, lam=0.0), r + 0.9 * v, rtol=1e-12)
    mc = td_lambda_targets(r, v, np.zeros_like(end), gamma=0.9, lam=1.0)[0]
    np.testing.assert_allclose(mc, (0.9 ** np.arange(6)) @ r + 0.9**6 * v[-1], rtol=1e-12)
    with pytest.raises(ValueError, match="rewards, next_values and episode_end"):
        td_lambda_targets(r, v[:-1], end, gamma=0.9, lam=0.5)


def test_actor_loss_gradient_matches_finite_differences():
    """The short-horizon loss through resets (time limit and termination) and the critic bootstrap."""
    env = PointMass(limit=1.2)
    cfg = SHACConfig(num_envs=3, horizon=5, episode_length=3, critic_minibatches=3, actor_hidden=(8,),
                     critic_hidden=(8,), init_log_std=-0.5)
    trainer = SHAC(env, cfg)
    state = trainer.init(jax.random.PRNGKey(1))
    as64 = lambda tree: jax.tree.map(lambda x: jnp.asarray(x, jnp.float64), tree)  # flax's parameters are float32
    state = state.replace(actor_params=as64(state.actor_params), target_params=as64(state.target_params),
                          obs_stats=state.obs_stats.update(jax.random.normal(jax.random.PRNGKey(2), (10, 4))))
    noise = jax.random.normal(jax.random.PRNGKey(3), (5, 3, 2))
    resets = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(4), 3))
    loss = jax.jit(lambda p: trainer.actor_loss(p, state, noise, resets)[0])
    _, aux = trainer.actor_loss(state.actor_params, state, noise, resets)
    assert np.asarray(aux[1].episode_end).sum() >= 3  # every world hit the time limit inside the window
    grad = jax.jit(jax.grad(loss))(state.actor_params)
    flat, unravel = ravel_pytree(state.actor_params)
    direction = jax.random.normal(jax.random.PRNGKey(5), flat.shape)
    eps = 1e-6
    fd = (loss(unravel(flat + eps * direction)) - loss(unravel(flat - eps * direction))) / (2 * eps)
    ad = jnp.dot(ravel_pytree(grad)[0], direction)
    assert abs(float(ad)) > 1e-3
    np.testing.assert_allclose(float(ad), float(fd), rtol=1e-6)


def test_shac_improves_the_return_of_a_small_task():
    env = PointMass()
    cfg = SHACConfig(num_envs=16, horizon=16, episode_length=40, gamma=0.95, critic_iterations=4,
                     actor_hidden=(32, 32), critic_hidden=(32, 32), actor_lr=3e-3)
    t0 = time.perf_counter()
    state, records = train_with_evaluations(SHAC(env, cfg), jax.random.PRNGKey(0), iterations=40, eval_every=40,
                                            num_eval_envs=32)
    before, after = records[0]["eval_return"], records[-1]["eval_return"]
    assert records[-1]["env_steps"] == 40 * 16 * 16 == int(state.env_steps)
    assert np.isfinite(after) and after > before + 0.5 * abs(before), (before, after)
    print(f"SHAC on the point mass: return {before:.2f} -> {after:.2f} in {time.perf_counter() - t0:.1f} s")


def test_config_and_protocol_are_validated():
    with pytest.raises(ValueError, match="critic_minibatches"):
        SHACConfig(num_envs=3, horizon=5, critic_minibatches=4)
    with pytest.raises(ValueError, match="gamma"):
        SHACConfig(gamma=1.5)
    with pytest.raises(ValueError, match="horizon"):
        SHACConfig(horizon=0)
    with pytest.raises(ValueError, match="lr_decay_iterations"):
        SHACConfig(lr_decay_iterations=-1)
    with pytest.raises(TypeError, match="Env protocol"):
        SHAC(object())
    with pytest.raises(TypeError, match="SHACConfig"):
        SHAC(PointMass(), {"horizon": 4})
    with pytest.raises(ValueError, match="num_envs"):
        episode_return(PointMass(), lambda o: o[:2], jax.random.PRNGKey(0), num_envs=0, episode_length=3)


def test_gymnax_adapter_steps_resets_and_truncates():
    pytest.importorskip("gymnax")
    from jaxart.learn.gymnax_env import GymnaxEnv

    genv = GymnaxEnv(PointMass(), episode_length=3)
    params = genv.default_params
    assert genv.action_space(params).shape == (2,) and genv.observation_space(params).shape == (4,)
    obs, s = genv.reset(jax.random.PRNGKey(0), params)
    dones = []
    for i in range(3):
        obs, s, reward, done, _ = genv.step(jax.random.PRNGKey(i + 1), s, jnp.ones(2), params)
        dones.append(bool(done))
        assert np.isfinite(float(reward)) and obs.shape == (4,)
    assert dones == [False, False, True] and int(s.time) == 0  # truncated at the limit, then reset inside step
    with pytest.raises(ValueError, match="episode_length"):
        GymnaxEnv(PointMass(), episode_length=0)
