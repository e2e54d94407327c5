"""Per-DOF and per-shape configuration records (Newton's ``JointDofConfig`` / ``ShapeConfig``)."""

from __future__ import annotations

import dataclasses

from jaxart.sim.enums import MAXVAL, Axis, JointDriveType, JointTargetMode
from jaxart.sim.validate import as_axis, as_float


class JointDofConfig:
    """Properties of one joint axis (Newton's ``ModelBuilder.JointDofConfig``).

    Args:
        axis: Axis in the joint parent-anchor frame (:class:`Axis`, name or 3-vector).
        limit_lower: Lower limit [m or rad]; ``-1e10`` means unlimited.
        limit_upper: Upper limit [m or rad]; ``1e10`` means unlimited.
        limit_ke: Limit stiffness.
        limit_kd: Limit damping.
        target_q: Position target (defaults to 0, or the limit midpoint when 0 is outside).
        target_qd: Velocity target.
        target_ke: Drive stiffness.
        target_kd: Drive damping.
        damping: Passive viscous damping.
        stiffness: Passive spring stiffness toward ``rest_q``.
        rest_q: Passive spring rest position (defaults to ``target_q``).
        armature: Added mass-matrix diagonal (rotor inertia).
        effort_limit: Actuator force/torque limit.
        velocity_limit: Velocity limit.
        friction: Coulomb joint friction.
        actuator_mode: :class:`JointTargetMode`; inferred from the gains when ``None``.
        target_pos: Alias of ``target_q``.
        target_vel: Alias of ``target_qd``.
        drive_type: :class:`JointDriveType` of the drive gains (``FORCE`` when ``None``; ``ACCELERATION``:
            ``target_ke`` [1/s²] and ``target_kd`` [1/s] scaled by the DOF's effective inertia; see each
            solver's feature table).
    """

    def __init__(
        self,
        *,
        axis=Axis.X,
        limit_lower: float = -MAXVAL,
        limit_upper: float = MAXVAL,
        limit_ke: float = 1e4,
        limit_kd: float = 1e1,
        target_q: float | None = None,
        target_qd: float | None = None,
        target_ke: float = 0.0,
        target_kd: float = 0.0,
        damping: float = 0.0,
        stiffness: float = 0.0,
        rest_q: float | None = None,
        armature: float = 0.0,
        effort_limit: float = 1e6,
        velocity_limit: float = 1e6,
        friction: float = 0.0,
        actuator_mode: JointTargetMode | None = None,
        target_pos: float | None = None,
        target_vel: float | None = None,
        drive_type: JointDriveType | None = None,
    ) -> None:
        w = "JointDofConfig"
        if target_pos is not None:
            if target_q is not None:
                raise ValueError(f"{w}: give target_q or its alias target_pos, not both")
            target_q = target_pos
        if target_vel is not None:
            if target_qd is not None:
                raise ValueError(f"{w}: give target_qd or its alias target_vel, not both")
            target_qd = target_vel
        self.axis = as_axis(axis, f"{w}: axis")
        self.limit_lower = as_float(limit_lower, f"{w}: limit_lower")
        self.limit_upper = as_float(limit_upper, f"{w}: limit_upper")
        if self.limit_lower > self.limit_upper:
            raise ValueError(
                f"{w}: limit_lower ({self.limit_lower}) must not exceed limit_upper ({self.limit_upper})"
            )
        self.limit_ke = as_float(limit_ke, f"{w}: limit_ke", nonneg=True)
        self.limit_kd = as_float(limit_kd, f"{w}: limit_kd", nonneg=True)
        tq = 0.0 if target_q is None else as_float(target_q, f"{w}: target_q")
        if target_q is None and not (self.limit_lower <= 0.0 <= self.limit_upper):
            tq = 0.5 * (self.limit_lower + self.limit_upper)
        self.target_q = tq
        self.target_qd = 0.0 if target_qd is None else as_float(target_qd, f"{w}: target_qd")
        self.target_ke = as_float(target_ke, f"{w}: target_ke", nonneg=True)
        self.target_kd = as_float(target_kd, f"{w}: target_kd", nonneg=True)
        self.damping = as_float(damping, f"{w}: damping", nonneg=True)
        self.stiffness = as_float(stiffness, f"{w}: stiffness", nonneg=True)
        self.rest_q = self.target_q if rest_q is None else as_float(rest_q, f"{w}: rest_q")
        self.armature = as_float(armature, f"{w}: armature", nonneg=True)
        self.effort_limit = as_float(effort_limit, f"{w}: effort_limit", nonneg=True)
        self.velocity_limit = as_float(velocity_limit, f"{w}: velocity_limit", nonneg=True)
        self.friction = as_float(friction, f"{w}: friction", nonneg=True)
        if actuator_mode is None:
            if self.target_ke > 0.0 and self.target_kd > 0.0:
                actuator_mode = JointTargetMode.POSITION_VELOCITY
            elif self.target_ke > 0.0:
                actuator_mode = JointTargetMode.POSITION
            elif self.target_kd > 0.0:
                actuator_mode = JointTargetMode.VELOCITY
            else:
                actuator_mode = JointTargetMode.NONE
        try:
            self.actuator_mode = JointTargetMode(int(actuator_mode))
        except ValueError:
            raise ValueError(f"{w}: actuator_mode must be a JointTargetMode, got {actuator_mode!r}") from None
        try:
            self.drive_type = JointDriveType(JointDriveType.FORCE if drive_type is None else int(drive_type))
        except (TypeError, ValueError):
            raise ValueError(f"{w}: drive_type must be a JointDriveType, got {drive_type!r}") from None

    @classmethod
    def create_unlimited(cls, axis) -> JointDofConfig:
        """An axis with no limits, no drive and zero limit gains."""
        return cls(axis=axis, limit_ke=0.0, limit_kd=0.0)

    def __repr__(self) -> str:
        return f"JointDofConfig(axis={self.axis.tolist()}, limits=({self.limit_lower}, {self.limit_upper}))"


@dataclasses.dataclass
class ShapeConfig:
    """Physical and collision properties of a shape (Newton's ``ModelBuilder.ShapeConfig``).

    Attributes:
        density: Density [kg/m³] used to accumulate body mass and inertia (0 = massless).
        ke: Contact normal stiffness [N/m].
        kd: Contact damping [N·s/m].
        kf: Contact friction stiffness [N·s/m] (penalty friction).
        ka: Adhesion distance [m].
        mu: Coulomb friction coefficient.
        restitution: Coefficient of restitution.
        mu_torsional: Torsional friction coefficient.
        mu_rolling: Rolling friction coefficient.
        margin: Contact margin [m] (shape surface offset).
        gap: Contact detection gap [m]; ``None`` uses the builder's ``rigid_gap``.
        is_solid: Solid (True) or hollow shell for inertia.
        collision_group: Positive groups collide with the same group and with negative groups; a
            negative group collides with every group except itself; 0 = no shape collisions.
        collision_filter_parent: Ignore contacts between this shape and its body's parent body.
        has_shape_collision: Whether the shape collides with other shapes.
        has_particle_collision: Kept for API compatibility (particles are out of scope).
        is_visible: Whether the shape is rendered.
        is_site: Sites are non-colliding, massless reference frames.
    """

    density: float = 1000.0
    ke: float = 2.5e3
    kd: float = 100.0
    kf: float = 1000.0
    ka: float = 0.0
    mu: float = 1.0
    restitution: float = 0.0
    mu_torsional: float = 0.005
    mu_rolling: float = 0.0001
    margin: float = 0.0
    gap: float | None = None
    is_solid: bool = True
    collision_group: int = 1
    collision_filter_parent: bool = True
    has_shape_collision: bool = True
    has_particle_collision: bool = True
    is_visible: bool = True
    is_site: bool = False

    def copy(self) -> ShapeConfig:
        """A shallow copy."""
        return dataclasses.replace(self)

    def validate(self, what: str) -> None:
        """Raise ``ValueError`` naming ``what`` for non-finite or negative material values."""
        for name in ("density", "ke", "kd", "kf", "ka", "mu", "restitution", "mu_torsional",
                     "mu_rolling", "margin"):
            as_float(getattr(self, name), f"{what}: cfg.{name}", nonneg=True)
        if self.gap is not None:
            as_float(self.gap, f"{what}: cfg.gap", nonneg=True)
        if not isinstance(self.collision_group, int) or isinstance(self.collision_group, bool):
            raise TypeError(f"{what}: cfg.collision_group must be an int, got {self.collision_group!r}")
