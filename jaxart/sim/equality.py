"""Static structure of equality and mimic constraints, and their ``finalize`` wiring.

The integer/label fields are static (:class:`EqualityTopology`, part of ``Model``'s aux data:
changing them recompiles); anchors, poses, scales, coefficients and the ``enabled`` flags are traced
``Model`` leaves (see :class:`~jaxart.sim.model.Model`), so :func:`set_constraints_enabled` (or
``model.replace(equality_constraint_enabled=...)``) switches constraints on and off under ``jit``
without recompiling.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxart.sim.static import StaticArray, StaticRecord

#: Static per-constraint fields exposed on ``Model`` as numpy arrays (labels as lists).
EQUALITY_STATIC_FIELDS = (
    "equality_constraint_type",
    "equality_constraint_body1",
    "equality_constraint_body2",
    "equality_constraint_joint1",
    "equality_constraint_joint2",
    "equality_constraint_dof1",
    "equality_constraint_dof2",
    "equality_constraint_tendon1",
    "equality_constraint_tendon2",
    "equality_constraint_label",
    "constraint_mimic_joint0",
    "constraint_mimic_joint1",
    "constraint_mimic_label",
    "equality_constraint_count",
    "constraint_mimic_count",
)


@dataclasses.dataclass(frozen=True, eq=False)
class EqualityTopology(StaticRecord):
    """Static structure of a model's constraints (hashable; part of ``Model``'s static data).

    Attributes:
        equality_constraint_type: ``(neq,)`` :class:`~jaxart.sim.enums.EqType` values.
        equality_constraint_body1: ``(neq,)`` first body (CONNECT/WELD), −1 = world / unused.
        equality_constraint_body2: ``(neq,)`` second body (CONNECT/WELD), −1 = world / unused.
        equality_constraint_joint1: ``(neq,)`` constrained joint (JOINT), −1 = unused.
        equality_constraint_joint2: ``(neq,)`` reference joint (JOINT), −1 = none.
        equality_constraint_dof1: ``(neq,)`` DOF of ``joint1`` whose coordinate is constrained (JOINT; 0 for a
            REVOLUTE/PRISMATIC joint, the DOF's position in a D6 joint, linear DOFs first).
        equality_constraint_dof2: ``(neq,)`` DOF of ``joint2`` (JOINT; 0 when unused).
        equality_constraint_tendon1: ``(neq,)`` constrained tendon (TENDON), −1 = unused.
        equality_constraint_tendon2: ``(neq,)`` reference tendon (TENDON), −1 = none.
        equality_constraint_label: ``neq`` names.
        constraint_mimic_joint0: ``(nmimic,)`` follower joints.
        constraint_mimic_joint1: ``(nmimic,)`` leader joints.
        constraint_mimic_label: ``nmimic`` names.
    """

    equality_constraint_type: StaticArray
    equality_constraint_body1: StaticArray
    equality_constraint_body2: StaticArray
    equality_constraint_joint1: StaticArray
    equality_constraint_joint2: StaticArray
    equality_constraint_dof1: StaticArray
    equality_constraint_dof2: StaticArray
    equality_constraint_tendon1: StaticArray
    equality_constraint_tendon2: StaticArray
    equality_constraint_label: tuple[str, ...]
    constraint_mimic_joint0: StaticArray
    constraint_mimic_joint1: StaticArray
    constraint_mimic_label: tuple[str, ...]

    @property
    def equality_constraint_count(self) -> int:
        """Number of equality constraints."""
        return len(self.equality_constraint_label)

    @property
    def constraint_mimic_count(self) -> int:
        """Number of mimic constraints."""
        return len(self.constraint_mimic_label)

    @property
    def any_constraint(self) -> bool:
        """Whether the model has any equality or mimic constraint (enabled or not)."""
        return bool(self.equality_constraint_count or self.constraint_mimic_count)


def equality_fields(builder, arr) -> dict:
    """``Model`` constructor arguments for the builder's constraints.

    Args:
        builder: The :class:`~jaxart.ModelBuilder`.
        arr: ``arr(values, shape)`` → traced array of the model's dtype (from ``finalize``).

    Returns:
        Keyword arguments: the traced float fields (the ``enabled`` flags as 1.0/0.0) and ``equality``
        (:class:`EqualityTopology`).
    """
    b = builder
    ne, nm = b.equality_constraint_count, b.constraint_mimic_count

    def ints(x):
        return StaticArray(np.asarray(x, dtype=np.int32).reshape(-1))

    topo = EqualityTopology(
        equality_constraint_type=ints(b.equality_constraint_type),
        equality_constraint_body1=ints(b.equality_constraint_body1),
        equality_constraint_body2=ints(b.equality_constraint_body2),
        equality_constraint_joint1=ints(b.equality_constraint_joint1),
        equality_constraint_joint2=ints(b.equality_constraint_joint2),
        equality_constraint_dof1=ints(b.equality_constraint_dof1),
        equality_constraint_dof2=ints(b.equality_constraint_dof2),
        equality_constraint_tendon1=ints(b.equality_constraint_tendon1),
        equality_constraint_tendon2=ints(b.equality_constraint_tendon2),
        equality_constraint_label=tuple(b.equality_constraint_label),
        constraint_mimic_joint0=ints(b.constraint_mimic_joint0),
        constraint_mimic_joint1=ints(b.constraint_mimic_joint1),
        constraint_mimic_label=tuple(b.constraint_mimic_label),
    )
    return dict(
        equality_constraint_anchor=arr(b.equality_constraint_anchor, (ne, 3)),
        equality_constraint_torquescale=arr(b.equality_constraint_torquescale, (ne,)),
        equality_constraint_relpose=arr(b.equality_constraint_relpose, (ne, 7)),
        equality_constraint_polycoef=arr(b.equality_constraint_polycoef, (ne, 5)),
        constraint_mimic_coef0=arr(b.constraint_mimic_coef0, (nm,)),
        constraint_mimic_coef1=arr(b.constraint_mimic_coef1, (nm,)),
        equality_constraint_enabled=arr(np.asarray(b.equality_constraint_enabled, np.float64), (ne,)),
        constraint_mimic_enabled=arr(np.asarray(b.constraint_mimic_enabled, np.float64), (nm,)),
        equality=topo,
    )


def set_constraints_enabled(model, *, equality=None, mimic=None):
    """``model`` with new ``enabled`` flags of its equality and/or mimic constraints (traceable: no recompile).

    Args:
        model: The :class:`~jaxart.Model`.
        equality: ``(equality_constraint_count,)`` flags (bool or 0/1; a traced array is fine), or ``None``
            to keep the model's.
        mimic: ``(constraint_mimic_count,)`` flags, or ``None`` to keep the model's.

    Returns:
        The model with ``equality_constraint_enabled`` / ``constraint_mimic_enabled`` replaced (as 1.0/0.0
        in the dtype of the model's other flags).

    Raises:
        ValueError: A flag array of the wrong shape.
    """
    out = {}
    for name, flags in (("equality_constraint_enabled", equality), ("constraint_mimic_enabled", mimic)):
        if flags is None:
            continue
        old = getattr(model, name)
        new = jnp.asarray(flags)
        if new.shape != old.shape:
            raise ValueError(f"set_constraints_enabled: {name.split('_enabled')[0].replace('_', ' ')} flags must "
                             f"have shape {old.shape}, got {new.shape}")
        out[name] = new.astype(old.dtype)
    return model.replace(**out)
