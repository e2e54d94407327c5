"""Equality-constraint and mimic-constraint methods of ``ModelBuilder`` (mixin).

Semantics (Newton 1.8 / MuJoCo ``mjEQ_*``; all frames are jaxart body frames, −1 = world):

* ``EqType.CONNECT``: the point ``anchor`` of ``body1`` stays at the point of ``body2`` where it
  lies in the model's initial configuration (ball-and-socket).
* ``EqType.WELD``: ``x1 + R1 · relpose.p == x2 + R2 · anchor`` (``anchor`` on ``body2``) and
  ``R2 == R1 · R(relpose.q)``; ``torquescale`` [m] weighs the angular residual.
* ``EqType.JOINT``: ``q(joint1) == Σ_k polycoef[k] · q(joint2)^k`` for scalar joints or single DOFs of D6
  joints (``(joint, dof)``; ``joint2 = −1``: ``q(joint1) == polycoef[0]``).
* ``EqType.TENDON``: ``L(tendon1) == Σ_k polycoef[k] · L(tendon2)^k`` for the lengths [m] of fixed or spatial
  tendons (``tendon2 = −1``: ``L(tendon1) == polycoef[0]``). MuJoCo's ``mjEQ_TENDON`` writes the same
  polynomial on the offsets from the lengths at ``qpos0``; the MJCF importer and the MuJoCo bridge convert.
* Mimic (Newton's deprecated ``add_constraint_mimic``): ``q(joint0) == coef0 + coef1 · q(joint1)``
  for REVOLUTE/PRISMATIC joints (mapped to ``mjEQ_JOINT`` by ``SolverMuJoCo``).

``SolverFeatherstone``, ``SolverXPBD``, ``SolverMuJoCo`` and ``SolverSemiImplicit`` (penalty springs) enforce
them. ``enabled`` becomes a traced ``Model`` leaf
(:func:`jaxart.sim.equality.set_constraints_enabled` switches it without recompiling).
"""

from __future__ import annotations

import dataclasses

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


@dataclasses.dataclass
class _EqRow:
    """Per-constraint values of one equality constraint (the builder's ``equality_constraint_<field>`` lists)."""

    body1: int = -1
    body2: int = -1
    anchor: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    torquescale: float = 0.0
    relpose: np.ndarray = dataclasses.field(default_factory=lambda: _IDENTITY.copy())
    joint1: int = -1
    joint2: int = -1
    dof1: int = 0
    dof2: int = 0
    tendon1: int = -1
    tendon2: int = -1
    polycoef: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(5))


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
        self.equality_constraint_dof1: list[int] = []
        self.equality_constraint_dof2: list[int] = []
        self.equality_constraint_tendon1: list[int] = []
        self.equality_constraint_tendon2: list[int] = []
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
                                torquescale: float | None = None, relpose=None, joint1=-1, joint2=-1,
                                polycoef=None, label: str | None = None, enabled: bool = True, *,
                                tendon1: int = -1, tendon2: int = -1) -> int:
        """Add an equality constraint of any :class:`EqType` (see the module docstring).

        Args:
            constraint_type: ``EqType.CONNECT``, ``EqType.WELD``, ``EqType.JOINT`` or ``EqType.TENDON``.
            body1: First body (CONNECT/WELD), −1 for the world.
            body2: Second body (CONNECT/WELD), −1 for the world.
            anchor: ``(3,)`` point [m]: on ``body1`` (CONNECT) or on ``body2`` (WELD); default origin.
            torquescale: WELD angular residual scale [m] (default 1; 0 for other types).
            relpose: WELD pose ``(p, q_xyzw)`` of body2 in body1 (``p``: where ``anchor`` is held in
                body1's frame); default identity.
            joint1: Constrained coordinate (JOINT): a REVOLUTE/PRISMATIC joint index, or a ``(joint, dof)`` pair
                naming one DOF of a D6 joint (linear DOFs first, as in :meth:`add_tendon_fixed`).
            joint2: Reference coordinate (JOINT) in the same form, −1 for none.
            polycoef: Up to 5 polynomial coefficients (JOINT/TENDON), padded with zeros; default zeros.
            label: Unique name (default ``equality_constraint_<index>``).
            enabled: Whether solvers enforce the constraint.
            tendon1: Constrained tendon (TENDON).
            tendon2: Reference tendon (TENDON), −1 for none.

        Returns:
            The constraint index.

        Raises:
            ValueError: Unknown type, bodies, joints, DOFs or tendons, arguments that do not belong to the type,
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
        if eq in (EqType.JOINT, EqType.TENDON):
            _unused(what, body1=(body1, -1), body2=(body2, -1), anchor=(anchor, None), relpose=(relpose, None),
                    torquescale=(torquescale, None))
            coef = np.zeros(5) if polycoef is None else _polycoef(polycoef, f"{what}: polycoef")
            row = _EqRow(polycoef=coef)
            if eq == EqType.JOINT:
                _unused(what, tendon1=(tendon1, -1), tendon2=(tendon2, -1))
                row.joint1, row.dof1 = self._eq_joint_dof(joint1, f"{what}: joint1", allow_none=False)
                row.joint2, row.dof2 = self._eq_joint_dof(joint2, f"{what}: joint2", allow_none=True)
                if (row.joint1, row.dof1) == (row.joint2, row.dof2):
                    raise ValueError(f"{what}: joint1 and joint2 are the same joint coordinate {joint1}")
            else:
                _unused(what, joint1=(joint1, -1), joint2=(joint2, -1))
                row.tendon1 = self._eq_tendon(tendon1, f"{what}: tendon1", allow_none=False)
                row.tendon2 = self._eq_tendon(tendon2, f"{what}: tendon2", allow_none=True)
                if row.tendon1 == row.tendon2:
                    raise ValueError(f"{what}: tendon1 and tendon2 are the same tendon {tendon1}")
        else:
            _unused(what, joint1=(joint1, -1), joint2=(joint2, -1), polycoef=(polycoef, None),
                    tendon1=(tendon1, -1), tendon2=(tendon2, -1))
            row = self._body_row(eq, what, body1, body2, anchor, torquescale, relpose)
        self._append_equality(int(eq), row, enabled, name)
        return idx

    def _body_row(self, eq: EqType, what: str, body1, body2, anchor, torquescale, relpose) -> _EqRow:
        """The row of a CONNECT or WELD constraint (validated)."""
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
        return _EqRow(body1=int(body1), body2=int(body2), anchor=a, torquescale=ts,
                      relpose=as_transform(relpose, f"{what}: relpose"))

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

    def add_equality_constraint_joint(self, joint1=-1, joint2=-1, polycoef=None,
                                      label: str | None = None, enabled: bool = True) -> int:
        """Add a JOINT coupling ``q1 = Σ polycoef[k] q2^k``; ``polycoef`` defaults to ``(0, 1)`` (q1 = q2).

        ``joint1``/``joint2`` are REVOLUTE/PRISMATIC joint indices or ``(joint, dof)`` pairs naming a D6 DOF.
        """
        return self.add_equality_constraint(EqType.JOINT, joint1=joint1, joint2=joint2,
                                            polycoef=(0.0, 1.0) if polycoef is None else polycoef,
                                            label=label, enabled=enabled)

    def add_equality_constraint_tendon(self, tendon1: int, tendon2: int = -1, polycoef=None,
                                       label: str | None = None, enabled: bool = True) -> int:
        """Add a TENDON coupling ``L1 = Σ polycoef[k] L2^k`` of two tendon lengths [m] (``tendon2 = −1``:
        ``L1 = polycoef[0]``).

        Args:
            tendon1: Constrained tendon (fixed or spatial).
            tendon2: Reference tendon, −1 for none.
            polycoef: Up to 5 coefficients (units m^(1−k)); default ``(0, 1)`` (``L1 = L2``) with a reference
                tendon; required without one (``(L1,)``, the held length [m]).
            label: Unique name (default ``equality_constraint_<index>``).
            enabled: Whether solvers enforce the constraint.

        Returns:
            The constraint index.

        Raises:
            ValueError: Unknown tendons, ``polycoef`` missing without a reference tendon, bad coefficients.
            TypeError: Non-integer tendon indices.
        """
        if polycoef is None:
            if isinstance(tendon2, int | np.integer) and int(tendon2) == -1:
                raise ValueError(f"add_equality_constraint_tendon(label={label!r}): polycoef is required without "
                                 "a reference tendon (the held length L1 = polycoef[0] [m])")
            polycoef = (0.0, 1.0)
        return self.add_equality_constraint(EqType.TENDON, tendon1=tendon1, tendon2=tendon2, polycoef=polycoef,
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
    def _append_equality(self, eq_type: int, row: _EqRow, enabled: bool, label: str) -> None:
        self.equality_constraint_type.append(eq_type)
        for f in dataclasses.fields(_EqRow):
            v = getattr(row, f.name)
            getattr(self, f"equality_constraint_{f.name}").append(
                np.asarray(v, np.float64).copy() if isinstance(v, np.ndarray) else v)
        self.equality_constraint_enabled.append(enabled)
        self.equality_constraint_label.append(label)

    def _eq_joint_dof(self, ref, what: str, *, allow_none: bool) -> tuple[int, int]:
        """``(joint, DOF)`` of a JOINT-equality coordinate: a scalar joint index or ``(joint, dof)`` of a D6 DOF
        (``(-1, 0)`` for none)."""
        if isinstance(ref, tuple | list):
            if len(ref) != 2:
                raise ValueError(f"{what} must be a joint index or a (joint, dof) pair, got {ref!r}")
            self._eq_joint(ref[0], what, allow_none=False, scalar=False)
            j, k = int(ref[0]), ref[1]
            if isinstance(k, bool) or not isinstance(k, int | np.integer):
                raise TypeError(f"{what}: DOF must be an int, got {k!r}")
            ndof = int(sum(self.joint_dof_dim[j]))
            jt = JointType(int(self.joint_type[j]))
            if jt not in (JointType.REVOLUTE, JointType.PRISMATIC, JointType.D6):
                raise ValueError(f"{what}: joint {self.joint_label[j]!r} is {jt.name}; joint equality constraints "
                                 "need REVOLUTE, PRISMATIC or D6 joints")
            if not 0 <= int(k) < ndof:
                raise ValueError(f"{what}: DOF {k} of joint {self.joint_label[j]!r} does not exist (it has {ndof})")
            return j, int(k)
        self._eq_joint(ref, what, allow_none=allow_none)
        return int(ref), 0

    def _eq_tendon(self, tendon, what: str, *, allow_none: bool) -> int:
        if isinstance(tendon, bool) or not isinstance(tendon, int | np.integer):
            raise TypeError(f"{what} must be a tendon index (int), got {tendon!r}")
        if allow_none and int(tendon) == -1:
            return -1
        if not 0 <= int(tendon) < self.tendon_count:
            raise ValueError(f"{what}: tendon index {tendon} does not exist (tendon_count={self.tendon_count}"
                             f"{', use -1 for none' if allow_none else ''})")
        return int(tendon)

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
                        xform: np.ndarray | None = None, tendon_offset: int = 0) -> None:
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
            row = _EqRow(body1=shift(b1, body_offset), body2=shift(b2, body_offset), anchor=anchor,
                         torquescale=src.equality_constraint_torquescale[k], relpose=relpose,
                         joint1=shift(src.equality_constraint_joint1[k], joint_offset),
                         joint2=shift(src.equality_constraint_joint2[k], joint_offset),
                         dof1=src.equality_constraint_dof1[k], dof2=src.equality_constraint_dof2[k],
                         tendon1=shift(src.equality_constraint_tendon1[k], tendon_offset),
                         tendon2=shift(src.equality_constraint_tendon2[k], tendon_offset),
                         polycoef=src.equality_constraint_polycoef[k].copy())
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
