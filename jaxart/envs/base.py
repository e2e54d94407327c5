"""The environment protocol of Brax (``reset``/``step`` on a ``State`` pytree), without importing Brax.

Brax's training agents (``brax.training.agents.ppo`` / ``apg``) only use an environment through
``reset(rng)``, ``step(state, action)``, ``observation_size``, ``action_size`` and ``backend`` and the
``State`` fields ``pipeline_state``, ``obs``, ``reward``, ``done``, ``metrics``, ``info``; jaxart's
environments provide exactly these, so they train unchanged (``pip install "jaxart[brax]"``).
"""

from __future__ import annotations

import copy
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxart.kinematics import eval_fk
from jaxart.sim.model import Control, Model


@struct.dataclass
class State:
    """Environment state (field names and meaning of ``brax.envs.base.State``).

    Attributes:
        pipeline_state: The physics state (a :class:`jaxart.State`).
        obs: Observation vector ``(observation_size,)``.
        reward: Scalar reward of the last step.
        done: 1.0 when the episode terminated, else 0.0.
        metrics: Scalars logged by trainers (same keys at reset and step).
        info: Auxiliary data (random keys, targets, step counters of wrappers).
    """

    pipeline_state: Any
    obs: jax.Array
    reward: jax.Array
    done: jax.Array
    metrics: dict[str, jax.Array] = struct.field(default_factory=dict)
    info: dict[str, Any] = struct.field(default_factory=dict)


class Env:
    """Base class: a Model, a solver class, a physics step and an action repeat.

    Subclasses implement :meth:`reset`, :meth:`step` and :attr:`action_size`, and advance physics with
    :meth:`pipeline_step`. The solver is rebuilt from :attr:`sys` inside every traced call, so swapping
    ``env.sys`` for a randomised Model (see :class:`~jaxart.envs.DomainRandomization`, or Brax's
    ``randomization_fn``, which assigns ``env.sys``) needs no other change.

    Args:
        model: The jaxart model.
        solver_cls: A jaxart-native solver class (default :class:`jaxart.solvers.SolverFeatherstone`).
        solver_kwargs: Keyword options of the solver.
        dt: Physics step [s].
        action_repeat: Physics steps per environment step.
        contacts: Run ``model.collide`` before every physics step.

    Raises:
        TypeError: ``model`` is not a ``jaxart.Model``.
        ValueError: Non-positive ``dt`` or ``action_repeat``.
    """

    backend = "jaxart"

    def __init__(self, model: Model, *, solver_cls=None, solver_kwargs: dict | None = None, dt: float,
                 action_repeat: int = 1, contacts: bool = False) -> None:
        if not isinstance(model, Model):
            raise TypeError(f"{type(self).__name__}: model must be a jaxart.Model, got {type(model).__name__}")
        if not float(dt) > 0:
            raise ValueError(f"{type(self).__name__}: dt must be positive, got {dt!r}")
        if int(action_repeat) != action_repeat or int(action_repeat) < 1:
            raise ValueError(f"{type(self).__name__}: action_repeat must be a positive integer, got {action_repeat!r}")
        if solver_cls is None:
            from jaxart.solvers import SolverFeatherstone

            solver_cls = SolverFeatherstone
        self._model = model
        self.solver_cls = solver_cls
        self.solver_kwargs = dict(solver_kwargs or {})
        self.dt = float(dt)
        self.action_repeat = int(action_repeat)
        self.contacts = bool(contacts)
        solver_cls(model, **self.solver_kwargs)  # validate the options once, eagerly

    # ------------------------------------------------------------------ Brax protocol
    def reset(self, rng: jax.Array) -> State:
        """Start an episode (``rng``: a PRNG key)."""
        raise NotImplementedError(f"{type(self).__name__}.reset")

    def step(self, state: State, action: jax.Array) -> State:
        """Advance one environment step (``action_repeat`` physics steps) with ``action`` in [-1, 1]."""
        raise NotImplementedError(f"{type(self).__name__}.step")

    @property
    def action_size(self) -> int:
        """Length of the action vector."""
        raise NotImplementedError(f"{type(self).__name__}.action_size")

    @property
    def observation_size(self) -> int:
        """Length of the observation vector (from an abstract evaluation of ``reset``)."""
        obs = jax.eval_shape(self.reset, jax.random.PRNGKey(0)).obs
        return int(obs.shape[-1])

    @property
    def unwrapped(self) -> Env:
        return self

    # ------------------------------------------------------------------ model / physics
    @property
    def sys(self) -> Model:
        """The Model (Brax's name; assigning it swaps in e.g. a randomised Model)."""
        return self._model

    @sys.setter
    def sys(self, model: Model) -> None:
        self._model = model

    @property
    def model(self) -> Model:
        """The Model (jaxart's name for :attr:`sys`)."""
        return self._model

    @property
    def control_dt(self) -> float:
        """Time per environment step [s] (``dt * action_repeat``)."""
        return self.dt * self.action_repeat

    def with_model(self, model: Model) -> Env:
        """A shallow copy of this environment simulating ``model`` (e.g. one randomised world)."""
        env = copy.copy(self)
        env._model = model
        return env

    def pipeline_init(self, joint_q: jax.Array, joint_qd: jax.Array):
        """Physics state for generalized coordinates (forward kinematics)."""
        return eval_fk(self._model, joint_q, joint_qd)

    def pipeline_step(self, pipeline_state, control: Control):
        """``action_repeat`` physics steps with a constant ``control`` (a ``lax.scan``, differentiable)."""
        model = self._model
        solver = self.solver_cls(model, **self.solver_kwargs)

        def body(s, _):
            contacts = model.collide(s) if self.contacts else None
            return solver.step(s, control, contacts, self.dt), None

        if self.action_repeat == 1:
            return body(pipeline_state, None)[0]
        return jax.lax.scan(body, pipeline_state, None, length=self.action_repeat)[0]

    def _check_action(self, action: jax.Array) -> jax.Array:
        action = jnp.asarray(action)
        if action.shape != (self.action_size,):
            raise ValueError(f"{type(self).__name__}.step: action must have shape ({self.action_size},), "
                             f"got {action.shape}")
        return jnp.clip(action, -1.0, 1.0)
