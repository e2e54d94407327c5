"""Reinforcement-learning environments with Brax's ``Env`` protocol (no Brax import needed).

::

    env = jaxart.envs.PendulumSwingup()
    state = jax.jit(env.reset)(jax.random.PRNGKey(0))
    state = jax.jit(env.step)(state, jnp.zeros(env.action_size))     # obs, reward, done, metrics, ...
    batched = jax.vmap(env.reset)(jax.random.split(key, 1024))        # batched worlds

Every step is differentiable (analytic policy gradients). Brax's trainers take these environments
unchanged: ``pip install "jaxart[brax]"`` (see the README for the pinned versions).
"""

from jaxart.envs.base import Env, State
from jaxart.envs.classic import CartpoleSwingup, PendulumSwingup, cartpole_model
from jaxart.envs.quadruped import QuadrupedWalk
from jaxart.envs.randomization import DomainRandomization, model_axes
from jaxart.envs.reacher import Reacher7

_ENVS = {"pendulum_swingup": PendulumSwingup, "cartpole_swingup": CartpoleSwingup, "reacher7": Reacher7,
         "quadruped_walk": QuadrupedWalk}


def make(name: str, **kwargs) -> Env:
    """Create an environment by name (``pendulum_swingup``, ``cartpole_swingup``, ``reacher7``,
    ``quadruped_walk``); ``kwargs`` go to its constructor.

    Raises:
        ValueError: Unknown name.
    """
    if name not in _ENVS:
        raise ValueError(f"jaxart.envs.make: unknown environment {name!r}; choose one of {sorted(_ENVS)}")
    return _ENVS[name](**kwargs)


__all__ = ["CartpoleSwingup", "DomainRandomization", "Env", "PendulumSwingup", "QuadrupedWalk", "Reacher7",
           "State", "cartpole_model", "make", "model_axes"]
