"""Shared plumbing of the solver classes: each solver is a pytree whose only leaf is the model."""

from __future__ import annotations


class SolverBase:
    """Pytree base for solvers (register subclasses with ``jax.tree_util.register_pytree_node_class``).

    The model is the only child, so ``jit``/``vmap`` over a solver (e.g. over randomised models)
    works; the scalar options named in ``_OPTIONS`` are static aux data (changing them recompiles).
    """

    _OPTIONS: tuple[str, ...] = ()

    def tree_flatten(self):
        return (self.model,), tuple(getattr(self, k) for k in self._OPTIONS)

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.model = children[0]
        for k, v in zip(cls._OPTIONS, aux, strict=True):
            setattr(obj, k, v)
        return obj

    def notify_model_changed(self, flags: int = 0) -> None:
        """Newton compatibility: nothing is cached between steps, so this is a no-op."""
