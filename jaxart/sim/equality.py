"""Static structure of equality and mimic constraints, and their ``finalize`` wiring.

The integer/boolean/label fields are static (:class:`EqualityTopology`, part of ``Model``'s aux
data: changing them recompiles); anchors, poses, scales and coefficients are traced ``Model``
leaves (see :class:`~jaxart.sim.model.Model`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxart.sim.static import StaticArray, StaticRecord

#: Static per-constraint fields exposed on ``Model`` as numpy arrays (labels as lists).
EQUALITY_STATIC_FIELDS = (
    "equality_constraint_type",
    "equality_constraint_body1",
    "equality_constraint_body2",
    "equality_constraint_joint1",
    "equality_constraint_joint2",
    "equality_constraint_enabled",
    "equality_constraint_label",
    "constraint_mimic_joint0",
    "constraint_mimic_joint1",
    "constraint_mimic_enabled",
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
        equality_constraint_enabled: ``(neq,)`` bool; whether solvers enforce the constraint.
        equality_constraint_label: ``neq`` names.
        constraint_mimic_joint0: ``(nmimic,)`` follower joints.
        constraint_mimic_joint1: ``(nmimic,)`` leader joints.
        constraint_mimic_enabled: ``(nmimic,)`` bool.
        constraint_mimic_label: ``nmimic`` names.
    """

    equality_constraint_type: StaticArray
    equality_constraint_body1: StaticArray
    equality_constraint_body2: StaticArray
    equality_constraint_joint1: StaticArray
    equality_constraint_joint2: StaticArray
    equality_constraint_enabled: StaticArray
    equality_constraint_label: tuple[str, ...]
    constraint_mimic_joint0: StaticArray
    constraint_mimic_joint1: StaticArray
    constraint_mimic_enabled: StaticArray
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
    def any_enabled(self) -> bool:
        """Whether any equality or mimic constraint is enabled."""
        return bool(self.equality_constraint_enabled.array.any() or self.constraint_mimic_enabled.array.any())


def equality_fields(builder, arr) -> dict:
    """``Model`` constructor arguments for the builder's constraints.

    Args:
        builder: The :class:`~jaxart.ModelBuilder`.
        arr: ``arr(values, shape)`` → traced array of the model's dtype (from ``finalize``).

    Returns:
        Keyword arguments: the traced float fields and ``equality`` (:class:`EqualityTopology`).
    """
    b = builder
    ne, nm = b.equality_constraint_count, b.constraint_mimic_count

    def ints(x):
        return StaticArray(np.asarray(x, dtype=np.int32).reshape(-1))

    def flags(x):
        return StaticArray(np.asarray(x, dtype=bool).reshape(-1))

    topo = EqualityTopology(
        equality_constraint_type=ints(b.equality_constraint_type),
        equality_constraint_body1=ints(b.equality_constraint_body1),
        equality_constraint_body2=ints(b.equality_constraint_body2),
        equality_constraint_joint1=ints(b.equality_constraint_joint1),
        equality_constraint_joint2=ints(b.equality_constraint_joint2),
        equality_constraint_enabled=flags(b.equality_constraint_enabled),
        equality_constraint_label=tuple(b.equality_constraint_label),
        constraint_mimic_joint0=ints(b.constraint_mimic_joint0),
        constraint_mimic_joint1=ints(b.constraint_mimic_joint1),
        constraint_mimic_enabled=flags(b.constraint_mimic_enabled),
        constraint_mimic_label=tuple(b.constraint_mimic_label),
    )
    return dict(
        equality_constraint_anchor=arr(b.equality_constraint_anchor, (ne, 3)),
        equality_constraint_torquescale=arr(b.equality_constraint_torquescale, (ne,)),
        equality_constraint_relpose=arr(b.equality_constraint_relpose, (ne, 7)),
        equality_constraint_polycoef=arr(b.equality_constraint_polycoef, (ne, 5)),
        constraint_mimic_coef0=arr(b.constraint_mimic_coef0, (nm,)),
        constraint_mimic_coef1=arr(b.constraint_mimic_coef1, (nm,)),
        equality=topo,
    )
