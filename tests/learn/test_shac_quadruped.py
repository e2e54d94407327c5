"""SHAC through the quadruped's contact step: the short-horizon actor loss's gradient against finite differences
(slow: compiles the differentiated batched contact step; benchmarks/learning.py runs the whole trainer on it)."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jax.flatten_util import ravel_pytree  # noqa: E402

from jaxart import envs  # noqa: E402
from jaxart.learn import SHAC, SHACConfig  # noqa: E402


@pytest.mark.slow  # minutes: compiles the reverse-mode batched Featherstone contact step
@pytest.mark.timeout(1800)
def test_quadruped_actor_loss_gradient_matches_finite_differences():
    env = envs.QuadrupedWalk(dtype=jnp.float64)
    cfg = SHACConfig(num_envs=2, horizon=4, episode_length=50, critic_minibatches=2, critic_iterations=2,
                     actor_hidden=(16,), critic_hidden=(16,))
    trainer = SHAC(env, cfg)
    state = trainer.init(jax.random.PRNGKey(0))
    as64 = lambda tree: jax.tree.map(lambda x: jnp.asarray(x, jnp.float64), tree)  # flax's parameters are float32
    state = state.replace(actor_params=as64(state.actor_params), target_params=as64(state.target_params))
    noise = jax.random.normal(jax.random.PRNGKey(1), (4, 2, 12))
    resets = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(2), 2))
    loss = lambda p: trainer.actor_loss(p, state, noise, resets)[0]
    value, grad = jax.jit(jax.value_and_grad(loss))(state.actor_params)
    flat, unravel = ravel_pytree(state.actor_params)
    g = ravel_pytree(grad)[0]
    assert np.isfinite(float(value)) and np.all(np.isfinite(g)) and float(jnp.linalg.norm(g)) > 0
    direction = jax.random.normal(jax.random.PRNGKey(3), flat.shape)
    eps = 1e-6
    fd = jax.jit(lambda d: (loss(unravel(flat + eps * d)) - loss(unravel(flat - eps * d))) / (2 * eps))(direction)
    np.testing.assert_allclose(float(jnp.dot(g, direction)), float(fd), rtol=1e-4)
