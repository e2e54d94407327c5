"""Equality-constraint and mimic-constraint methods of ``ModelBuilder`` (mixin).

Semantics (Newton 1.8 / MuJoCo ``mjEQ_*``; all frames are jaxart body frames, −1 = world):

* ``EqType.CONNECT``: the point ``anchor`` of ``body1`` stays at the point of ``body2`` where it
  lies in the model's initial configuration (ball-and-socket).
* ``EqType.WELD``: ``x1 + R1 · relpose.p == x2 + R2 · anchor`` (``anchor`` on ``body2``) and
  ``R2 == R1 · R(relpose.q)``; ``torquescale`` [m] weighs the angular residual.
* ``EqType.JOINT``: ``q(joint1) == Σ_k polycoef[k] · q(joint2)^k`` for scalar joints
  (``joint2 = −1``: ``q(joint1) == polycoef[0]``).
* Mimic (Newton's deprecated ``add_constraint_mimic``): ``q(joint0) == coef0 + coef1 · q(joint1)``
  for REVOLUTE/PRISMATIC joints (mapped to ``mjEQ_JOINT`` by ``SolverMuJoCo``).

``SolverFeatherstone``, ``SolverXPBD``, ``SolverMuJoCo`` and ``SolverSemiImplicit`` (penalty springs) enforce
them. ``enabled`` becomes a traced ``Model`` leaf
(:func:`jaxart.sim.equality.set_constraints_enabled` switches it without recompiling).
"""

from __future__ import annotations

import numpy as np

from jaxart.sim.enums import EqType, JointType
from jaxart.sim.validate import (
    as_array,
    as_float,
    as_transform,
    as_vec3,
    np_transform_inverse,
    np_transform_mul,
)

_IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


class EqualityBuilderMixin:
    """Equality/mimic constraint methods; expects the body/joint lists of ``ModelBuilder``."""

    def _init_equality(self) -> None:
        self.equality_constraint_type: list[int] = []
        self.equality_constraint_body1: list[int] = []
        self.equality_constraint_body2: list[int] = []
        self.equality_constraint_anchor: list[np.ndarray] = []
        self.equality_constraint_torquescale: list[float] = []
        self.equality_constraint_relpose: list[np.ndarray] = []
        self.equality_constraint_joint1: list[int] = []
        self.equality_constraint_joint2: list[int] = []
        self.equality_constraint_polycoef: list[np.ndarray] = []
        self.equality_constraint_enabled: list[bool] = []
        self.equality_constraint_label: list[str] = []
        self.constraint_mimic_joint0: list[int] = []
        self.constraint_mimic_joint1: list[int] = []
        self.constraint_mimic_coef0: list[float] = []
        self.constraint_mimic_coef1: list[float] = []
        self.constraint_mimic_enabled: list[bool] = []
        self.constraint_mimic_label: list[str] = []

    @property
    def equality_constraint_count(self) -> int:
        """Number of equality constraints added so far."""
        return len(self.equality_constraint_type)

    @property
    def constraint_mimic_count(self) -> int:
        """Number of mimic constraints added so far."""
        return len(self.constraint_mimic_joint0)

    # ------------------------------------------------------------------ public API
    def add_equality_constraint(self, constraint_type, body1: int = -1, body2: int = -1, anchor=None,
                                torquescale: float | None = None, relpose=None, joint1: int = -1, joint2: int = -1,
                                polycoef=None, label: str | None = None, enabled: bool = True) -> int:
        """Add an equality constraint of any :class:`EqType` (see the module docstring).

        Args:
            constraint_type: ``EqType.CONNECT``, ``EqType.WELD`` or ``EqType.JOINT``.
            body1: First body (CONNECT/WELD), −1 for the world.
            body2: Second body (CONNECT/WELD), −1 for the world.
            anchor: ``(3,)`` point [m]: on ``body1`` (CONNECT) or on ``body2`` (WELD); default origin.
            torquescale: WELD angular residual scale [m] (default 1; 0 for other types).
            relpose: WELD pose ``(p, q_xyzw)`` of body2 in body1 (``p``: where ``anchor`` is held in
                body1's frame); default identity.
            joint1: Constrained scalar joint (JOINT).
            joint2: Reference scalar joint (JOINT), −1 for none.
            polycoef: Up to 5 polynomial coefficients (JOINT), padded with zeros; default zeros.
            label: Unique name (default ``equality_constraint_<index>``).
            enabled: Whether solvers enforce the constraint.

        Returns:
            The constraint index.

        Raises:
            ValueError: Unknown type, bodies or joints, arguments that do not belong to the type,
                non-finite values, wrong shapes.
            TypeError: Non-integer indices or non-numeric values.
        """
        idx = self.equality_constraint_count
        name = self._check_label(label, f"equality_constraint_{idx}", self.equality_constraint_label,
                                 "equality constraint")
        try:
            eq = EqType(int(constraint_type))
        except (TypeError, ValueError):
            raise ValueError(f"add_equality_constraint(label={name!r}): unknown constraint_type "
                             f"{constraint_type!r}; use jaxart.sim.enums.EqType") from None
        what = f"add_equality_constraint(label={name!r}, type={eq.name})"
        enabled = _as_bool(enabled, f"{what}: enabled")
        if eq == EqType.JOINT:
            _unused(what, body1=(body1, -1), body2=(body2, -1), anchor=(anchor, None), relpose=(relpose, None),
                    torquescale=(torquescale, None))
            self._eq_joint(joint1, f"{what}: joint1", allow_none=False)
            self._eq_joint(joint2, f"{what}: joint2", allow_none=True)
            if int(joint1) == int(joint2):
                raise ValueError(f"{what}: joint1 and joint2 are the same joint {joint1}")
            coef = np.zeros(5) if polycoef is None else _polycoef(polycoef, f"{what}: polycoef")
            row = (-1, -1, np.zeros(3), 0.0, _IDENTITY.copy(), int(joint1), int(joint2), coef)
        else:
            _unused(what, joint1=(joint1, -1), joint2=(joint2, -1), polycoef=(polycoef, None))
            if eq == EqType.CONNECT:
                _unused(what, relpose=(relpose, None), torquescale=(torquescale, None))
            self._check_body(body1, f"{what}: body1", allow_world=True)
            self._check_body(body2, f"{what}: body2", allow_world=True)
            if int(body1) == int(body2):
                raise ValueError(f"{what}: body1 and body2 are the same {'world' if body1 < 0 else 'body'} "
                                 f"{body1}; a constraint needs two distinct bodies")
            a = np.zeros(3) if anchor is None else as_vec3(anchor, f"{what}: anchor")
            ts = 0.0
            if eq == EqType.WELD:
                ts = 1.0 if torquescale is None else as_float(torquescale, f"{what}: torquescale", nonneg=True)
            rp = as_transform(relpose, f"{what}: relpose")
            row = (int(body1), int(body2), a, ts, rp, -1, -1, np.zeros(5))
        self._append_equality(int(eq), row, enabled, name)
        return idx

    def add_equality_constraint_connect(self, body1: int = -1, body2: int = -1, anchor=None,
                                        label: str | None = None, enabled: bool = True) -> int:
        """Add a CONNECT (ball-and-socket) constraint; ``anchor`` [m] is in ``body1``'s frame.

        The matching point on ``body2`` is where the anchor lies in the model's initial
        configuration (MuJoCo's ``qpos0`` rule).
        """
        return self.add_equality_constraint(EqType.CONNECT, body1=body1, body2=body2, anchor=anchor, label=label,
                                            enabled=enabled)

    def add_equality_constraint_weld(self, body1: int = -1, body2: int = -1, anchor=None, relpose=None,
                                     torquescale: float | None = None, label: str | None = None,
                                     enabled: bool = True) -> int:
        """Add a WELD constraint (see :meth:`add_equality_constraint`).

        When ``relpose`` is ``None`` the bodies' current relative pose (their ``xform`` in this
        builder) is preserved: ``relpose = (X1⁻¹ · X2 · anchor, q1⁻¹ q2)`` (Newton's
        ``add_equality_weld`` default).
        """
        what = f"add_equality_constraint_weld(label={label!r})"
        if relpose is None:
            self._check_body(body1, f"{what}: body1", allow_world=True)
            self._check_body(body2, f"{what}: body2", allow_world=True)
            a = np.zeros(3) if anchor is None else as_vec3(anchor, f"{what}: anchor")
            x1 = self.body_q[body1] if body1 >= 0 else _IDENTITY
            x2 = self.body_q[body2] if body2 >= 0 else _IDENTITY
            rel = np_transform_mul(np_transform_inverse(x1), x2)
            point = np_transform_mul(rel, np.concatenate([a, _IDENTITY[3:]]))
            relpose = np.concatenate([point[:3], rel[3:]])
        return self.add_equality_constraint(EqType.WELD, body1=body1, body2=body2, anchor=anchor, relpose=relpose,
                                            torquescale=torquescale, label=label, enabled=enabled)

    def add_equality_constraint_joint(self, joint1: int = -1, joint2: int = -1, polycoef=None,
                                      label: str | None = None, enabled: bool = True) -> int:
        """Add a JOINT coupling ``q1 = Σ polycoef[k] q2^k``; ``polycoef`` defaults to ``(0, 1)`` (q1 = q2)."""
        return self.add_equality_constraint(EqType.JOINT, joint1=joint1, joint2=joint2,
                                            polycoef=(0.0, 1.0) if polycoef is None else polycoef,
                                            label=label, enabled=enabled)

    def add_constraint_mimic(self, joint0: int, joint1: int, coef0: float = 0.0, coef1: float = 1.0,
                             enabled: bool = True, label: str | None = None) -> int:
        """Add a mimic constraint ``q(joint0) = coef0 + coef1 · q(joint1)`` (URDF mimic semantics).

        Args:
            joint0: Follower joint (REVOLUTE or PRISMATIC).
            joint1: Leader joint (REVOLUTE or PRISMATIC).
            coef0: Offset [m or rad].
            coef1: Scale.
            enabled: Whether solvers enforce the constraint.
            label: Unique name (default ``constraint_mimic_<index>``).

        Returns:
            The mimic-constraint index.
        """
        idx = self.constraint_mimic_count
        name = self._check_label(label, f"constraint_mimic_{idx}", self.constraint_mimic_label, "mimic constraint")
        what = f"add_constraint_mimic(label={name!r})"
        for arg, j in (("joint0", joint0), ("joint1", joint1)):
            self._eq_joint(j, f"{what}: {arg}", allow_none=False, scalar=False)
            if int(self.joint_type[j]) not in (JointType.REVOLUTE, JointType.PRISMATIC):
                raise ValueError(f"{what}: {arg} {self.joint_label[j]!r} is "
                                 f"{JointType(self.joint_type[j]).name}; mimic constraints need REVOLUTE or "
                                 "PRISMATIC joints")
        if int(joint0) == int(joint1):
            raise ValueError(f"{what}: joint0 and joint1 are the same joint {joint0}")
        c0 = as_float(coef0, f"{what}: coef0")
        c1 = as_float(coef1, f"{what}: coef1")
        self.constraint_mimic_joint0.append(int(joint0))
        self.constraint_mimic_joint1.append(int(joint1))
        self.constraint_mimic_coef0.append(c0)
        self.constraint_mimic_coef1.append(c1)
        self.constraint_mimic_enabled.append(_as_bool(enabled, f"{what}: enabled"))
        self.constraint_mimic_label.append(name)
        return idx

    # ------------------------------------------------------------------ helpers
    def _append_equality(self, eq_type: int, row: tuple, enabled: bool, label: str) -> None:
        b1, b2, anchor, ts, relpose, j1, j2, coef = row
        self.equality_constraint_type.append(eq_type)
        self.equality_constraint_body1.append(b1)
        self.equality_constraint_body2.append(b2)
        self.equality_constraint_anchor.append(np.asarray(anchor, np.float64))
        self.equality_constraint_torquescale.append(float(ts))
        self.equality_constraint_relpose.append(np.asarray(relpose, np.float64))
        self.equality_constraint_joint1.append(j1)
        self.equality_constraint_joint2.append(j2)
        self.equality_constraint_polycoef.append(np.asarray(coef, np.float64))
        self.equality_constraint_enabled.append(enabled)
        self.equality_constraint_label.append(label)

    def _eq_joint(self, joint, what: str, *, allow_none: bool, scalar: bool = True) -> None:
        if isinstance(joint, bool) or not isinstance(joint, int | np.integer):
            raise TypeError(f"{what} must be a joint index (int), got {joint!r}")
        if allow_none and int(joint) == -1:
            return
        if not 0 <= int(joint) < self.joint_count:
            raise ValueError(f"{what}: joint index {joint} does not exist (joint_count={self.joint_count}"
                             f"{', use -1 for none' if allow_none else ''})")
        if scalar and sum(self.joint_dof_dim[joint]) != 1:
            raise ValueError(f"{what}: joint {self.joint_label[joint]!r} has {sum(self.joint_dof_dim[joint])} DOFs; "
                             "joint equality constraints need a scalar (1-DOF) joint")

    def _merge_equality(self, src, body_offset: int, joint_offset: int, prefix: str | None,
                        xform: np.ndarray | None = None) -> None:
        """Append ``src``'s equality and mimic constraints with shifted indices (``add_builder``).

        World-frame data (a CONNECT anchor on the world, a WELD anchor on the world or relpose
        relative to the world) is moved by ``xform`` like the copied world-attached content.
        """
        x = _IDENTITY if xform is None else np.asarray(xform, np.float64)

        def lab(name: str, existing: list[str]) -> str:
            new = f"{prefix}/{name}" if prefix else name
            if new in existing:
                raise ValueError(f"add_builder: constraint label {new!r} already exists; pass a distinct label_prefix")
            return new

        def shift(i: int, off: int) -> int:
            return i + off if i >= 0 else i

        for k in range(src.equality_constraint_count):
            t = src.equality_constraint_type[k]
            b1, b2 = src.equality_constraint_body1[k], src.equality_constraint_body2[k]
            anchor, relpose = src.equality_constraint_anchor[k].copy(), src.equality_constraint_relpose[k].copy()
            if (t == EqType.CONNECT and b1 < 0) or (t == EqType.WELD and b2 < 0):
                anchor = np_transform_mul(x, np.concatenate([anchor, _IDENTITY[3:]]))[:3]
            if t == EqType.WELD and b1 < 0:
                relpose = np_transform_mul(x, relpose)
            row = (shift(b1, body_offset), shift(b2, body_offset), anchor, src.equality_constraint_torquescale[k],
                   relpose,
                   shift(src.equality_constraint_joint1[k], joint_offset),
                   shift(src.equality_constraint_joint2[k], joint_offset),
                   src.equality_constraint_polycoef[k].copy())
            self._append_equality(src.equality_constraint_type[k], row, src.equality_constraint_enabled[k],
                                  lab(src.equality_constraint_label[k], self.equality_constraint_label))
        for k in range(src.constraint_mimic_count):
            self.constraint_mimic_joint0.append(src.constraint_mimic_joint0[k] + joint_offset)
            self.constraint_mimic_joint1.append(src.constraint_mimic_joint1[k] + joint_offset)
            self.constraint_mimic_coef0.append(src.constraint_mimic_coef0[k])
            self.constraint_mimic_coef1.append(src.constraint_mimic_coef1[k])
            self.constraint_mimic_enabled.append(src.constraint_mimic_enabled[k])
            self.constraint_mimic_label.append(lab(src.constraint_mimic_label[k], self.constraint_mimic_label))


def _as_bool(value, what: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{what} must be a bool, got {value!r}")
    return bool(value)


def _polycoef(value, what: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be up to 5 numbers, got {value!r}") from None
    if arr.ndim != 1 or not 1 <= arr.size <= 5:
        raise ValueError(f"{what} must be a sequence of 1 to 5 coefficients, got shape {arr.shape}")
    return np.concatenate([as_array(arr, arr.shape, what), np.zeros(5 - arr.size)])


def _unused(what: str, **args) -> None:
    """Reject arguments that the constraint type does not use (value, expected default)."""
    for name, (value, default) in args.items():
        same = value is None if default is None else (not isinstance(value, bool) and value == default)
        if not same:
            raise ValueError(f"{what}: {name} is not used by this constraint type; leave it at {default!r}, "
                             f"got {value!r}")
