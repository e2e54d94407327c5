"""Shared plumbing of the solver classes: each solver is a pytree whose only leaf is the model.

Every solver's ``step`` runs :func:`step_with_inputs` around its own update, the one place where the model's
stateful inputs enter a step whatever the solver: mocap poses (:mod:`jaxart.sim.mocap`), actuator activation
dynamics (:mod:`jaxart.laws.activation`, written into the ``Control`` the solver sees) and fluid forces
(:mod:`jaxart.laws.fluid`, added to ``body_f`` for the step).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.tendons import eval_tendon_lengths, eval_tendon_velocities
from jaxart.laws.activation import activation_control, next_activation
from jaxart.laws.fluid import fluid_body_wrenches
from jaxart.sim import checks
from jaxart.sim.actuators import TENDON_OUTPUTS, ActuatorDynType
from jaxart.sim.mocap import set_mocap
from jaxart.sim.state import Control, State


class SolverBase:
    """Pytree base for solvers (register subclasses with ``jax.tree_util.register_pytree_node_class``).

    The model is the only child, so ``jit``/``vmap`` over a solver (e.g. over randomised models)
    works; the scalar options named in ``_OPTIONS`` are static aux data (changing them recompiles).
    """

    _OPTIONS: tuple[str, ...] = ()
    #: ``step`` runs under :func:`jaxart.math.checkpoint.light` (its step function is a ``checkpointed_jit``):
    #: reverse mode stores only gathers, products, reductions and factorisations of the step and recomputes
    #: elementwise work. ``rollout(remat="light")`` then adds no checkpoint of its own: nested, the two
    #: measured slower than either alone.
    checkpointed_step: bool = False

    @property
    def detects_contacts(self) -> bool:
        """Whether ``step`` finds contacts itself and ignores its ``contacts`` argument.

        ``False`` for jaxart's native solvers (they step the :class:`~jaxart.Contacts` they are given);
        :func:`jaxart.rollout` reads it to decide whether to call ``model.collide`` before each step.
        """
        return False

    def step(self, state_in: State, control: Control | None, contacts, dt) -> State:
        """Advance one step and return the new state (``body_f`` is kept, not cleared).

        Mocap poses, activation dynamics and fluid forces are applied by :func:`step_with_inputs`; the
        solver's own update is its ``_advance`` (see each solver's feature table).

        Args:
            state_in: Current state.
            control: Control, or ``None`` for the model's defaults.
            contacts: ``None`` or ``model.collide(state_in)`` (see the solver's documentation).
            dt: Time step [s].

        Returns:
            The new :class:`State`.
        """
        checks.check_step(self, state_in, control, contacts, dt)
        return step_with_inputs(self.model, lambda s, c: self._advance(s, c, contacts, dt), state_in, control, dt)

    def tree_flatten(self):
        return (self.model,), tuple(getattr(self, k) for k in self._OPTIONS)

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.model = children[0]
        for k, v in zip(cls._OPTIONS, aux, strict=True):
            setattr(obj, k, v)
        return obj

    def _reject_equality_constraints(self, model) -> None:
        """Raise ``NotImplementedError`` for enabled equality/mimic constraints (jaxart-native solvers)."""
        reject_equality_constraints(model, type(self).__name__)

    def notify_model_changed(self, flags: int = 0) -> None:
        """Newton compatibility: nothing is cached between steps, so this is a no-op."""


def reject_equality_constraints(model, solver: str) -> None:
    """Raise when ``model`` has enabled equality or mimic constraints that ``solver`` cannot enforce.

    The ``enabled`` flags are traced model leaves; they are read here, at construction. With traced flags
    (a solver built under ``jit``/``vmap``) any equality or mimic constraint is rejected.

    Args:
        model: A jaxart :class:`~jaxart.Model`.
        solver: Solver class name for the message.

    Raises:
        NotImplementedError: Naming the enabled constraints and pointing at the solvers that enforce them.
    """
    eq = getattr(model, "equality", None)
    if eq is None or not eq.any_constraint:
        return
    try:
        on_eq = np.asarray(jax.device_get(model.equality_constraint_enabled)) != 0.0
        on_mimic = np.asarray(jax.device_get(model.constraint_mimic_enabled)) != 0.0
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        on_eq = np.ones(eq.equality_constraint_count, bool)
        on_mimic = np.ones(eq.constraint_mimic_count, bool)
    names = [n for n, on in zip(eq.equality_constraint_label, on_eq, strict=True) if on]
    names += [n for n, on in zip(eq.constraint_mimic_label, on_mimic, strict=True) if on]
    if not names:
        return
    shown = ", ".join(repr(n) for n in names[:5]) + (f", … ({len(names)} total)" if len(names) > 5 else "")
    raise NotImplementedError(
        f"{solver}: equality/mimic constraints ({shown}) are not supported by this solver (it would ignore "
        "them; enabling them after construction is ignored as well); use SolverFeatherstone, SolverXPBD or "
        "SolverMuJoCo, or build them with enabled=False to simulate without them")


def has_step_inputs(model) -> bool:
    """Whether ``model`` has mocap bodies, stateful actuators or a fluid (:func:`has_fluid`)."""
    return bool(model.mocap_joint) or bool(model.actuator.actuator_count) or has_fluid(model)


def has_fluid(model) -> bool:
    """Whether ``model`` has fluid forces (the static ``Model.fluid_enabled``)."""
    return bool(model.fluid_enabled)


def step_with_inputs(model, advance: Callable[[State, Control | None], State], state: State,
                     control: Control | None, dt) -> State:
    """One solver step with the model's stateful inputs (mocap, activation, fluid) around ``advance``.

    Order (MuJoCo's ``mj_step``): mocap bodies are put at their ``Control`` pose; the actuators' outputs of the
    step use the activation at its start (end for ``actearly``) and are written into the control; the fluid
    wrenches at the step's start are added to ``body_f``; ``advance`` steps; the new state carries the next
    activation and the caller's ``body_f``.

    Args:
        model: The solver's :class:`~jaxart.Model`.
        advance: ``advance(state, control) -> State``, the solver's own update.
        state: Current state (checked by the caller).
        control: Control or ``None``.
        dt: Time step [s].

    Returns:
        The new :class:`State`.
    """
    if not has_step_inputs(model):
        return advance(state, control)
    nact = model.actuator.actuator_count
    if nact and control is None:
        control = model.control()
    inner = set_mocap(model, state, control)
    act_next = None
    if nact:
        act = model.actuator_act0 if state.actuator_act is None else state.actuator_act
        ctrl = jnp.zeros_like(act) if control.actuator_ctrl is None else jnp.asarray(control.actuator_ctrl, act.dtype)
        act_next = next_activation(model, act, ctrl, dt)
        control = activation_control(model, control, act, act_next, _transmission(model, inner))
    if has_fluid(model):
        fluid = fluid_body_wrenches(model, inner.body_q, inner.body_qd)
        inner = inner.replace(body_f=inner.body_f + fluid.astype(inner.body_f.dtype))
    out = advance(inner, control)
    return out.replace(body_f=state.body_f, actuator_act=act_next)


def _transmission(model, state: State):
    """``(length, velocity)`` of each stateful actuator's joint coordinate or tendon, when a muscle reads them."""
    topo = model.actuator
    if not np.any(np.asarray(topo.actuator_dyntype) == ActuatorDynType.MUSCLE):
        return None
    coord = np.asarray(topo.actuator_coord)
    target = np.asarray(topo.actuator_target)
    on_tendon = np.isin(np.asarray(topo.actuator_output), [int(k) for k in TENDON_OUTPUTS])
    length = state.joint_q[np.maximum(coord, 0)]
    velocity = state.joint_qd[np.where(on_tendon, 0, target)]
    if on_tendon.any():
        idx = np.where(on_tendon, target, 0)
        length = jnp.where(on_tendon, eval_tendon_lengths(model, state)[idx], length)
        velocity = jnp.where(on_tendon, eval_tendon_velocities(model, state)[idx], velocity)
    return length, velocity
