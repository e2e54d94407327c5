"""Domain randomisation: one environment, a batch of Models, ``vmap`` over the batched Model leaves."""

from __future__ import annotations

import jax

from jaxart.envs.base import Env, State
from jaxart.sim.model import Model


def model_axes(model: Model, models: Model):
    """``vmap`` in_axes of ``models``: 0 for leaves with one extra leading axis, ``None`` for shared ones.

    Raises:
        ValueError: The two Models differ in structure (topology) or a leaf has an unexpected shape.
    """
    if jax.tree_util.tree_structure(model) != jax.tree_util.tree_structure(models):
        raise ValueError("DomainRandomization: models must be the environment's Model with batched leaves "
                         "(same topology), e.g. jax.vmap(lambda s: env.sys.replace(body_mass=...))(scales)")

    def axis(path, base, leaf):
        if leaf.shape == base.shape:
            return None
        if leaf.shape[1:] == base.shape:
            return 0
        raise ValueError(f"DomainRandomization: Model leaf {jax.tree_util.keystr(path)} has shape {leaf.shape}; "
                         f"expected {base.shape} (shared) or (worlds,) + {base.shape} (randomised)")

    return jax.tree_util.tree_map_with_path(axis, model, models)


class DomainRandomization:
    """Batch an environment over randomised Models: world ``i`` simulates ``models[i]``.

    ``reset`` takes a batch of keys ``(worlds, 2)`` and ``step`` batched states and actions, like
    Brax's ``VmapWrapper``; each world's Model is selected by ``vmap`` over the batched leaves of
    ``models`` (leaves without the leading axis are shared). The same idea as Brax's
    ``randomization_fn``, which also works with jaxart environments (they expose ``sys``).

    Args:
        env: A jaxart environment.
        models: ``env.sys`` with a leading world axis on the randomised leaves, e.g.
            ``jax.vmap(lambda s: env.sys.replace(body_mass=env.sys.body_mass * s))(scales)``.

    Raises:
        TypeError: ``env`` is not a jaxart ``Env``.
        ValueError: ``models`` does not match ``env.sys`` or has no batched leaf.
    """

    def __init__(self, env: Env, models: Model) -> None:
        if not isinstance(env, Env):
            raise TypeError(f"DomainRandomization: env must be a jaxart.envs.Env, got {type(env).__name__}")
        self.env = env
        self.models = models
        self.axes = model_axes(env.sys, models)
        sizes = {leaf.shape[0] for leaf, ax in zip(jax.tree_util.tree_leaves(models),
                                                   jax.tree_util.tree_leaves(self.axes, is_leaf=lambda x: x is None),
                                                   strict=True) if ax == 0}
        if len(sizes) != 1:
            raise ValueError(f"DomainRandomization: models need one common world count on their batched leaves, "
                             f"got {sorted(sizes) or 'no batched leaf'}")
        self.worlds = sizes.pop()

    @property
    def observation_size(self) -> int:
        return self.env.observation_size

    @property
    def action_size(self) -> int:
        return self.env.action_size

    @property
    def backend(self) -> str:
        return self.env.backend

    @property
    def unwrapped(self) -> Env:
        return self.env

    def reset(self, rng: jax.Array) -> State:
        """Reset every world; ``rng``: ``(worlds, 2)`` keys."""
        if rng.shape[0] != self.worlds:
            raise ValueError(f"DomainRandomization.reset: need {self.worlds} keys, got rng of shape {rng.shape}")
        return jax.vmap(lambda m, r: self.env.with_model(m).reset(r), in_axes=(self.axes, 0))(self.models, rng)

    def step(self, state: State, action: jax.Array) -> State:
        """Step every world with its own Model; ``action``: ``(worlds, action_size)``."""
        return jax.vmap(lambda m, s, a: self.env.with_model(m).step(s, a),
                        in_axes=(self.axes, 0, 0))(self.models, state, action)
