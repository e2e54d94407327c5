"""Shared plumbing of the solver classes: each solver is a pytree whose only leaf is the model."""

from __future__ import annotations

import jax
import numpy as np


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
