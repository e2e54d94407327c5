"""Tendon methods of ``ModelBuilder`` (mixin): fixed and spatial tendons.

Names follow Newton 1.8's MuJoCo authoring helpers (``newton.solvers.mujoco.add_tendon_fixed`` /
``add_tendon_spatial``: ``stiffness``, ``damping``, ``springlength``, ``limited``, ``limit_range``), as
builder methods. ``limit_ke``/``limit_kd`` are jaxart's penalty gains of the length limit (PhysX's
``limitStiffness`` and a damping), like ``joint_limit_ke/kd``. ``target_ke``/``target_kd``/``target_length``/
``target_velocity`` configure the tendon's actuator (a drive along the tendon, like a joint's ``target_ke/kd``;
MuJoCo's ``<position/velocity tendon=…>``, PhysX's tendon stiffness/damping toward a target length); its
feed-forward force is ``Control.tendon_f``, and ``effort_limit`` bounds the actuator's total force like a joint's
``effort_limit`` (MuJoCo's ``forcerange``). ``frictionloss``, ``armature`` and ``margin`` are MuJoCo's tendon
attributes (dry friction, inertia of the length, limit margin). See :mod:`jaxart.sim.tendons` for the
lengths and :mod:`jaxart.dynamics.tendon_forces` for the forces.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from jaxart.sim.enums import GeoType, JointType
from jaxart.sim.tendons import TendonPathKind, TendonType
from jaxart.sim.validate import as_float, as_vec3, np_quat_rotate, np_transform_mul

_IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
_UNLIMITED = 1e10


@dataclasses.dataclass(frozen=True)
class TendonWrapSite:
    """A site (a shape added with ``add_site``) on a spatial tendon's path (Newton's ``TendonWrapSite``)."""

    site: int


@dataclasses.dataclass(frozen=True)
class TendonWrapGeom:
    """Wrapping around a SPHERE or CYLINDER shape (Newton's ``TendonWrapGeom``, MuJoCo's ``<geom geom= sidesite=>``).

    Attributes:
        geom: Shape index (a sphere, or a cylinder: wrapped as an infinite cylinder along its local Z).
        sidesite: Optional site (on any body) whose side of the geometry the tendon passes on; a side site
            inside the geometry (``|site − centre| < radius``, checked at every evaluation as in MuJoCo) makes the
            tendon pass through it instead (MuJoCo's inside wrapping).
    """

    geom: int
    sidesite: int | None = None


@dataclasses.dataclass(frozen=True)
class TendonWrapPulley:
    """A pulley on a spatial tendon's path (Newton's ``TendonWrapPulley``, MuJoCo's ``<pulley divisor=>``): starts a
    branch whose segment lengths are divided by ``divisor`` (> 0)."""

    divisor: float


class TendonBuilderMixin:
    """Tendon methods; expects the body/joint/shape lists of ``ModelBuilder``."""

    def _init_tendons(self) -> None:
        self.tendon_type: list[int] = []
        self.tendon_joints: list[list[int]] = []
        self.tendon_joint_dofs: list[list[int]] = []  # DOF of each entry within its joint
        self.tendon_joint_coefs: list[list[float]] = []
        self.tendon_attachment_bodies: list[list[int]] = []
        self.tendon_attachment_points: list[list[np.ndarray]] = []
        self.tendon_attachment_kinds: list[list[int]] = []  # TendonPathKind per entry
        self.tendon_attachment_axes: list[list[np.ndarray]] = []
        self.tendon_attachment_params: list[list[float]] = []
        self.tendon_stiffness: list[float] = []
        self.tendon_damping: list[float] = []
        self.tendon_springlength: list[np.ndarray] = []
        self.tendon_limit_lower: list[float] = []
        self.tendon_limit_upper: list[float] = []
        self.tendon_limit_ke: list[float] = []
        self.tendon_limit_kd: list[float] = []
        self.tendon_target_ke: list[float] = []
        self.tendon_target_kd: list[float] = []
        self.tendon_target_length: list[float] = []  # NaN (None): the initial length, resolved by finalize
        self.tendon_target_velocity: list[float] = []
        self.tendon_effort_limit: list[float] = []
        self.tendon_frictionloss: list[float] = []
        self.tendon_armature: list[float] = []
        self.tendon_margin: list[float] = []
        self.tendon_label: list[str] = []

    @property
    def tendon_count(self) -> int:
        """Number of tendons added so far."""
        return len(self.tendon_type)

    def add_tendon_fixed(self, joints: Sequence, coefficients: Sequence[float] | None = None, *,
                         label: str | None = None, stiffness: float = 0.0, damping: float = 0.0,
                         springlength=(-1.0, -1.0), limited: bool | str = "auto", limit_range=(0.0, 0.0),
                         limit_ke: float | None = None, limit_kd: float | None = None, target_ke: float = 0.0,
                         target_kd: float = 0.0, target_length: float | None = None, target_velocity: float = 0.0,
                         effort_limit: float | None = None, frictionloss: float = 0.0, armature: float = 0.0,
                         margin: float = 0.0) -> int:
        """Add a fixed tendon ``L = Σ c_k q_k`` over DOF coordinates (MuJoCo ``<fixed>``, PhysX fixed tendon).

        Args:
            joints: ``(joint, coefficient)`` pairs (Newton's form), or joints with ``coefficients``. A joint is
                a REVOLUTE or PRISMATIC joint index, or a ``(joint, dof)`` pair naming one DOF of a D6 joint
                (``dof`` counts the linear DOFs first, then the angular ones; ``q_k`` is then
                ``joint_q[joint_q_start[joint] + dof]``), e.g. ``[((hip, 1), 1.0), (knee, -1.0)]``.
            coefficients: Coefficients [m/rad or 1] when ``joints`` holds bare indices.
            label: Unique name (default ``tendon_<index>``).
            stiffness: Spring stiffness [N/m of tendon length].
            damping: Damping [N·s/m].
            springlength: Rest length [m], or a dead band ``(low, high)`` (no spring force inside it);
                ``-1`` / ``(-1, -1)``: the length in the model's initial configuration (MuJoCo's rule).
            limited: ``True``, ``False`` or ``"auto"`` (limited when ``limit_range[0] < limit_range[1]``).
            limit_range: ``(lower, upper)`` length limits [m].
            limit_ke: Limit penalty stiffness [N/m] (default ``default_joint_cfg.limit_ke``).
            limit_kd: Limit penalty damping [N·s/m] (default ``default_joint_cfg.limit_kd``).
            target_ke: Actuator (drive) stiffness [N/m] toward ``Control.tendon_target_length``.
            target_kd: Actuator damping [N·s/m] toward ``Control.tendon_target_velocity``.
            target_length: Default target length [m] (``None``: the initial length).
            target_velocity: Default target length rate [m/s].
            effort_limit: Bound [N] (> 0) on ``|tendon_f + ke (L* − L) + kd (L̇* − L̇)|``, the actuator force
                (``None``: unlimited).
            frictionloss: Dry friction [N] (≥ 0) on the tendon length rate (MuJoCo's ``frictionloss``; a smooth
                Coulomb law in ``SolverFeatherstone``/``SolverSemiImplicit``, a clamped row in ``SolverXPBD``).
            armature: Inertia [kg] (≥ 0) of the tendon length (MuJoCo's ``armature``): adds ``a JᵀJ`` to the
                joint-space inertia (``SolverSemiImplicit`` raises ``NotImplementedError`` when non-zero).
            margin: Limit margin [m] (≥ 0; MuJoCo's ``margin``): a limit becomes active when the length is
                within ``margin`` of it and pushes toward ``lower + margin`` / ``upper − margin`` (the penalty
                acts on ``dist − margin``, as MuJoCo's limit constraint).

        Returns:
            The tendon index.

        Raises:
            ValueError: Unknown joints or DOFs, other joint types, a multi-DOF joint without a DOF, repeated
                DOFs, empty tendon, bad ranges.
            TypeError: Non-integer joints or non-numeric values.
        """
        name = self._check_label(label, f"tendon_{self.tendon_count}", self.tendon_label, "tendon")
        what = f"add_tendon_fixed(label={name!r})"
        pairs = _pairs(joints, coefficients, what)
        refs = [self._tendon_dof(j, f"{what}: joints[{i}]") for i, (j, _) in enumerate(pairs)]
        if len(set(refs)) != len(refs):
            raise ValueError(f"{what}: a (joint, DOF) appears twice in {refs}; merge its coefficients")
        js, dofs = [r[0] for r in refs], [r[1] for r in refs]
        coefs = [as_float(c, f"{what}: coefficient of joint {j}") for j, c in pairs]
        self._append_tendon(TendonType.FIXED, name, what, ((js, dofs), coefs, [], []), stiffness=stiffness,
                            damping=damping, springlength=springlength, limited=limited, limit_range=limit_range,
                            limit_ke=limit_ke, limit_kd=limit_kd,
                            drive=(target_ke, target_kd, target_length, target_velocity, effort_limit),
                            extras=dict(frictionloss=frictionloss, armature=armature, margin=margin))
        return self.tendon_count - 1

    def add_tendon_spatial(self, path: Sequence, *, label: str | None = None, stiffness: float = 0.0,
                           damping: float = 0.0, springlength=(-1.0, -1.0), limited: bool | str = "auto",
                           limit_range=(0.0, 0.0), limit_ke: float | None = None, limit_kd: float | None = None,
                           target_ke: float = 0.0, target_kd: float = 0.0, target_length: float | None = None,
                           target_velocity: float = 0.0, effort_limit: float | None = None,
                           frictionloss: float = 0.0, armature: float = 0.0, margin: float = 0.0) -> int:
        """Add a spatial tendon through points fixed on bodies (MuJoCo ``<spatial>``), wrapping around spheres and
        cylinders and split by pulleys.

        ``L = Σ_i |p_{i+1} − p_i|`` with the points in world coordinates; a :class:`TendonWrapGeom` between two
        points makes that segment the shortest path around the geometry when the straight one would cross it
        (MuJoCo's rule, :mod:`jaxart.dynamics.tendon_wrap`); a :class:`TendonWrapPulley` starts a branch (no segment
        across it) whose lengths are divided by its divisor. The tension ``f`` pulls each point along the path
        (forces on the bodies, so any joint type between them works).

        Args:
            path: Entries, each a :class:`TendonWrapSite` (a site shape's position on its body, copied when the
                tendon is added), a ``(body, local_point)`` pair (``body`` −1 = world, point [m] in the body
                frame), a :class:`TendonWrapGeom` (between two points; SPHERE or CYLINDER shapes) or a
                :class:`TendonWrapPulley` (not last, not after another pulley; every point needs a neighbour that is
                not a pulley). At least two points.
            label, stiffness, damping, springlength, limited, limit_range, limit_ke, limit_kd, target_ke,
            target_kd, target_length, target_velocity, effort_limit, frictionloss, armature, margin: As in
            :meth:`add_tendon_fixed`.

        Returns:
            The tendon index.

        Raises:
            ValueError: Bad entries or a path breaking the rules above.
            NotImplementedError: Wrapping around other shape types and the ``add_tendon_fixed`` cases.
        """
        name = self._check_label(label, f"tendon_{self.tendon_count}", self.tendon_label, "tendon")
        what = f"add_tendon_spatial(label={name!r})"
        if isinstance(path, str | bytes) or not isinstance(path, Sequence):
            raise TypeError(f"{what}: path must be a sequence of TendonWrapSite, TendonWrapGeom, TendonWrapPulley or "
                            "(body, point) entries")
        entries = [self._tendon_entries(entry, f"{what}: path[{k}]") for k, entry in enumerate(path)]
        _check_path([e[0][0] for e in entries], what)
        flat = [x for e in entries for x in e]
        kinds, bodies, points, axes, params = (list(c) for c in zip(*flat, strict=True))
        self._append_tendon(TendonType.SPATIAL, name, what, (([], []), [], bodies, points), stiffness=stiffness,
                            damping=damping, springlength=springlength, limited=limited, limit_range=limit_range,
                            limit_ke=limit_ke, limit_kd=limit_kd,
                            drive=(target_ke, target_kd, target_length, target_velocity, effort_limit),
                            extras=dict(frictionloss=frictionloss, armature=armature, margin=margin),
                            path=(kinds, axes, params))
        return self.tendon_count - 1

    # ------------------------------------------------------------------ helpers
    def _tendon_dof(self, ref, what: str) -> tuple[int, int]:
        """``(joint, DOF within the joint)`` of a fixed-tendon entry: a scalar joint index or a ``(joint, dof)``."""
        j, k = (ref if isinstance(ref, tuple | list) and len(ref) == 2 else (ref, None))
        for v, name in ((j, "joint"), (k, "DOF")):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer)):
                raise TypeError(f"{what}: expected a joint index or a (joint, dof) pair of ints, got {name} {v!r}")
        if not 0 <= int(j) < self.joint_count:
            raise ValueError(f"{what}: joint index {j} does not exist (joint_count={self.joint_count})")
        jt = JointType(int(self.joint_type[j]))
        if jt not in (JointType.REVOLUTE, JointType.PRISMATIC, JointType.D6):
            raise ValueError(f"{what}: joint {self.joint_label[j]!r} is {jt.name}; fixed tendons need REVOLUTE, "
                             "PRISMATIC or D6 joints")
        ndof = int(sum(self.joint_dof_dim[j]))
        if k is None and ndof != 1:
            raise ValueError(f"{what}: joint {self.joint_label[j]!r} has {ndof} DOFs; pass (joint, dof) to pick one")
        k = 0 if k is None else int(k)
        if not 0 <= k < ndof:
            raise ValueError(f"{what}: DOF {k} of joint {self.joint_label[j]!r} does not exist (it has {ndof})")
        return int(j), k

    def _tendon_entries(self, entry, what: str) -> list[tuple]:
        """``[(kind, body, point, axis, param)]`` of one path entry (a geometry with a side site gives two)."""
        zero = np.zeros(3)
        if isinstance(entry, TendonWrapPulley):
            return [(TendonPathKind.PULLEY, -1, zero, zero, as_float(entry.divisor, f"{what}: divisor",
                                                                      positive=True))]
        if isinstance(entry, TendonWrapGeom):
            return self._tendon_geom(entry, what)
        if isinstance(entry, TendonWrapSite):
            b, p = self._tendon_site(entry.site, what)
            return [(TendonPathKind.SITE, b, p, zero, 0.0)]
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            raise TypeError(f"{what}: expected a TendonWrapSite, TendonWrapGeom, TendonWrapPulley or a "
                            f"(body, local_point) pair, got {entry!r}")
        self._check_body(entry[0], f"{what}: body", allow_world=True)
        return [(TendonPathKind.SITE, int(entry[0]), as_vec3(entry[1], f"{what}: local_point"), zero, 0.0)]

    def _tendon_site(self, s, what: str) -> tuple[int, np.ndarray]:
        if isinstance(s, bool) or not isinstance(s, int | np.integer) or not 0 <= int(s) < self.shape_count:
            raise ValueError(f"{what}: site {s!r} is not a shape index (shape_count={self.shape_count})")
        if not self.shape_cfg[int(s)].is_site:
            raise ValueError(f"{what}: shape {self.shape_label[s]!r} is not a site (add it with add_site)")
        return int(self.shape_body[s]), np.asarray(self.shape_transform[s][:3], np.float64).copy()

    def _tendon_geom(self, entry: TendonWrapGeom, what: str) -> list[tuple]:
        g = entry.geom
        if isinstance(g, bool) or not isinstance(g, int | np.integer) or not 0 <= int(g) < self.shape_count:
            raise ValueError(f"{what}: geom {g!r} is not a shape index (shape_count={self.shape_count})")
        g = int(g)
        kinds = {GeoType.SPHERE: TendonPathKind.SPHERE, GeoType.CYLINDER: TendonPathKind.CYLINDER}
        if int(self.shape_type[g]) not in kinds:
            raise NotImplementedError(f"{what}: wrapping around shape {self.shape_label[g]!r} of type "
                                      f"{GeoType(self.shape_type[g]).name} is not supported (SPHERE or CYLINDER)")
        kind = kinds[GeoType(int(self.shape_type[g]))]
        body, xf = int(self.shape_body[g]), np.asarray(self.shape_transform[g], np.float64)
        radius = float(self.shape_scale[g][0])
        axis = np_quat_rotate(xf[3:], np.array([0.0, 0.0, 1.0])) if kind == TendonPathKind.CYLINDER else np.zeros(3)
        out = [(kind, body, xf[:3].copy(), axis, radius)]
        if entry.sidesite is None:
            return out
        sb, sp = self._tendon_site(entry.sidesite, f"{what}: sidesite")  # any body; inside: inside wrapping
        return [*out, (TendonPathKind.SIDE, sb, sp, np.zeros(3), 0.0)]

    def _append_tendon(self, kind: TendonType, name: str, what: str, entries: tuple, *, stiffness, damping,
                       springlength, limited, limit_range, limit_ke, limit_kd, drive: tuple, extras: dict,
                       path: tuple = ([], [], [])) -> None:
        k = as_float(stiffness, f"{what}: stiffness", nonneg=True)
        d = as_float(damping, f"{what}: damping", nonneg=True)
        rest = _springlength(springlength, what)
        lo, hi = _limits(limited, limit_range, what)
        fric, arm, margin = (as_float(extras[key], f"{what}: {key}", nonneg=True)
                             for key in ("frictionloss", "armature", "margin"))
        if lo > -_UNLIMITED and lo + margin >= hi - margin:
            raise ValueError(f"{what}: margin {margin} leaves no free range inside limit_range ({lo}, {hi}) "
                             "(need lower + margin < upper − margin)")
        cfg = self.default_joint_cfg
        lke = as_float(cfg.limit_ke if limit_ke is None else limit_ke, f"{what}: limit_ke", nonneg=True)
        lkd = as_float(cfg.limit_kd if limit_kd is None else limit_kd, f"{what}: limit_kd", nonneg=True)
        tke, tkd, tlen, tvel, effort = drive
        unlimited = effort is None or (isinstance(effort, float) and effort == np.inf)
        effort = np.inf if unlimited else as_float(effort, f"{what}: effort_limit (None: unlimited)", positive=True)
        tke = as_float(tke, f"{what}: target_ke", nonneg=True)
        tkd = as_float(tkd, f"{what}: target_kd", nonneg=True)
        tlen = np.nan if tlen is None else as_float(tlen, f"{what}: target_length")  # NaN: resolved by finalize
        tvel = as_float(tvel, f"{what}: target_velocity")
        (js, dofs), coefs, bodies, points = entries
        self.tendon_type.append(int(kind))
        self.tendon_joints.append(js)
        self.tendon_joint_dofs.append(dofs)
        self.tendon_joint_coefs.append(coefs)
        self.tendon_attachment_bodies.append(bodies)
        self.tendon_attachment_points.append(points)
        self.tendon_attachment_kinds.append([int(x) for x in path[0]])
        self.tendon_attachment_axes.append([np.asarray(a, np.float64) for a in path[1]])
        self.tendon_attachment_params.append([float(x) for x in path[2]])
        self.tendon_stiffness.append(k)
        self.tendon_damping.append(d)
        self.tendon_springlength.append(rest)
        self.tendon_limit_lower.append(lo)
        self.tendon_limit_upper.append(hi)
        self.tendon_limit_ke.append(lke)
        self.tendon_limit_kd.append(lkd)
        self.tendon_target_ke.append(tke)
        self.tendon_target_kd.append(tkd)
        self.tendon_target_length.append(tlen)
        self.tendon_target_velocity.append(tvel)
        self.tendon_effort_limit.append(effort)
        self.tendon_frictionloss.append(fric)
        self.tendon_armature.append(arm)
        self.tendon_margin.append(margin)
        self.tendon_label.append(name)

    def _merge_tendons(self, src, body_offset: int, joint_offset: int, prefix: str | None,
                       xform: np.ndarray | None = None) -> None:
        """Append ``src``'s tendons with shifted indices (``add_builder``); world points move by ``xform``."""
        x = _IDENTITY if xform is None else np.asarray(xform, np.float64)
        for k in range(src.tendon_count):
            new = f"{prefix}/{src.tendon_label[k]}" if prefix else src.tendon_label[k]
            if new in self.tendon_label:
                raise ValueError(f"add_builder: tendon label {new!r} already exists; pass a distinct label_prefix")
            bodies = [b + body_offset if b >= 0 else b for b in src.tendon_attachment_bodies[k]]
            points = [np_transform_mul(x, np.concatenate([p, _IDENTITY[3:]]))[:3] if b < 0 else p.copy()
                      for b, p in zip(src.tendon_attachment_bodies[k], src.tendon_attachment_points[k], strict=True)]
            axes = [np_quat_rotate(x[3:], a) if b < 0 else a.copy()
                    for b, a in zip(src.tendon_attachment_bodies[k], src.tendon_attachment_axes[k], strict=True)]
            self.tendon_type.append(src.tendon_type[k])
            self.tendon_joints.append([j + joint_offset for j in src.tendon_joints[k]])
            self.tendon_joint_dofs.append(list(src.tendon_joint_dofs[k]))
            self.tendon_joint_coefs.append(list(src.tendon_joint_coefs[k]))
            self.tendon_attachment_bodies.append(bodies)
            self.tendon_attachment_points.append(points)
            self.tendon_attachment_kinds.append(list(src.tendon_attachment_kinds[k]))
            self.tendon_attachment_axes.append(axes)
            self.tendon_attachment_params.append(list(src.tendon_attachment_params[k]))
            for name in ("stiffness", "damping", "limit_lower", "limit_upper", "limit_ke", "limit_kd", "target_ke",
                         "target_kd", "target_length", "target_velocity", "effort_limit", "frictionloss", "armature",
                         "margin"):
                getattr(self, f"tendon_{name}").append(getattr(src, f"tendon_{name}")[k])
            self.tendon_springlength.append(src.tendon_springlength[k].copy())
            self.tendon_label.append(new)


def _check_path(kinds: list[int], what: str) -> None:
    """MuJoCo's path rules on the entry kinds (SITE, SPHERE/CYLINDER, PULLEY; a side site is not an entry)."""
    site, pulley = TendonPathKind.SITE, TendonPathKind.PULLEY
    n = len(kinds)
    if sum(k == site for k in kinds) < 2:
        raise ValueError(f"{what}: a spatial tendon needs at least 2 attachment points, got "
                         f"{sum(k == site for k in kinds)}")
    for i, k in enumerate(kinds):
        prev = kinds[i - 1] if i > 0 else None
        nxt = kinds[i + 1] if i + 1 < n else None
        if k == pulley and (prev == pulley or nxt is None):
            raise ValueError(f"{what}: path[{i}]: a pulley may not follow another pulley or end the path")
        if k == site and prev in (None, pulley) and nxt in (None, pulley):
            raise ValueError(f"{what}: path[{i}]: a point needs a neighbour that is not a pulley")
        if k in (TendonPathKind.SPHERE, TendonPathKind.CYLINDER) and (prev != site or nxt != site):
            raise ValueError(f"{what}: path[{i}]: a wrapping geometry must be between two points")


def _pairs(joints, coefficients, what: str) -> list[tuple]:
    if isinstance(joints, str | bytes) or not isinstance(joints, Sequence):
        raise TypeError(f"{what}: joints must be a sequence of (joint, coefficient) pairs or joint indices")
    if coefficients is None:
        if not all(isinstance(e, tuple | list) and len(e) == 2 for e in joints):
            raise TypeError(f"{what}: joints must be (joint, coefficient) pairs when coefficients is None, "
                            f"got {list(joints)!r}")
        pairs = [tuple(e) for e in joints]
    else:
        coefficients = list(np.asarray(coefficients, dtype=np.float64).reshape(-1))
        if len(coefficients) != len(joints):
            raise ValueError(f"{what}: {len(joints)} joints but {len(coefficients)} coefficients")
        pairs = list(zip(joints, coefficients, strict=True))
    if not pairs:
        raise ValueError(f"{what}: a fixed tendon needs at least one joint")
    return pairs


def _springlength(value, what: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if arr.ndim != 1 or arr.size not in (1, 2) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: springlength must be one finite length or a (low, high) pair, got {value!r}")
    if arr.size == 1:
        arr = np.array([arr[0], arr[0]]) if arr[0] != -1.0 else np.array([-1.0, -1.0])
    if not (arr == -1.0).all() and arr[0] > arr[1]:
        raise ValueError(f"{what}: springlength {arr.tolist()} must be (low, high) with low <= high "
                         "(or -1 for the initial length)")
    return arr


def _limits(limited, limit_range, what: str) -> tuple[float, float]:
    rng = np.asarray(limit_range, dtype=np.float64)
    if rng.shape != (2,) or not np.all(np.isfinite(rng)):
        raise ValueError(f"{what}: limit_range must be a finite (lower, upper) pair, got {limit_range!r}")
    if limited == "auto":
        on = bool(rng[0] < rng[1])
    elif isinstance(limited, bool | np.bool_):
        on = bool(limited)
    else:
        raise TypeError(f"{what}: limited must be True, False or 'auto', got {limited!r}")
    if not on:
        return -_UNLIMITED, _UNLIMITED
    if not rng[0] < rng[1]:
        raise ValueError(f"{what}: limited tendon needs limit_range[0] < limit_range[1], got {rng.tolist()}")
    return float(rng[0]), float(rng[1])
