"""Mutable ``ModelBuilder`` (Newton's API): bodies, joints and articulations.

Shapes live in :mod:`jaxart.sim.builder_shapes`, ``finalize`` in :mod:`jaxart.sim.finalize`.
All validation happens here, on the host, with messages naming the element and argument.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from jaxart.sim.builder_actuators import ActuatorBuilderMixin
from jaxart.sim.builder_equality import EqualityBuilderMixin
from jaxart.sim.builder_sensors import SensorBuilderMixin
from jaxart.sim.builder_shapes import ShapeBuilderMixin
from jaxart.sim.builder_tendons import TendonBuilderMixin
from jaxart.sim.configs import JointDofConfig, ShapeConfig
from jaxart.sim.contact_pairs import ContactPairConfig
from jaxart.sim.enums import JOINT_COORD_DOF_COUNT, Axis, BodyFlags, JointTargetMode, JointType
from jaxart.sim.validate import (
    as_axis,
    as_float,
    as_inertia,
    as_transform,
    as_vec3,
    np_transform_inverse,
    np_transform_mul,
)

_DEFAULTED = (
    "limit_lower", "limit_upper", "limit_ke", "limit_kd", "target_ke", "target_kd", "damping", "stiffness",
    "armature", "effort_limit", "velocity_limit", "friction",
)
_DOF_KEYS = (
    "limit_lower", "limit_upper", "limit_ke", "limit_kd", "target_ke", "target_kd", "target_qd",
    "damping", "stiffness", "rest_q", "armature", "effort_limit", "velocity_limit", "friction",
)


class ModelBuilder(ShapeBuilderMixin, EqualityBuilderMixin, TendonBuilderMixin, SensorBuilderMixin,
                   ActuatorBuilderMixin):
    """Builds a :class:`~jaxart.Model` with Newton 1.8's names and keyword arguments.

    Args:
        up_axis: World up axis (:class:`Axis`, name or index); default Z.
        gravity: Gravity magnitude along ``-up_axis`` [m/s²] (default −9.81 means 9.81 m/s² down).

    Attributes:
        joint_q: Editable list of default joint coordinates (coordinate layout).
        joint_qd: Editable list of default joint velocities (DOF layout).
        default_shape_cfg: :class:`ShapeConfig` used when a shape gets no ``cfg``.
        default_joint_cfg: :class:`JointDofConfig` supplying defaults for joint helpers.
        rigid_gap: Default contact gap [m] for shapes whose ``cfg.gap`` is ``None``.
        fluid_density: Density of the surrounding medium [kg/m³] (``Model.fluid_density``; 0 = no fluid).
        fluid_viscosity: Dynamic viscosity of the medium [Pa·s] (``Model.fluid_viscosity``).
        fluid_wind: Velocity of the medium in world axes [m/s], length 3 (``Model.fluid_wind``).
        shape_fluid: ``{shape index: 15 values}`` of shapes under the ellipsoid fluid model (``Model.shape_fluid``,
            columns ``jaxart.laws.fluid.SHAPE_FLUID_COLUMNS``).
        shape_ray_extent: ``{shape index: (half width, half length)}`` [m] of PLANE shapes as rays see them when it
            differs from their collision extent (``Model.shape_ray_extent``; 0 = unbounded along that axis).
        mocap_joint: Kinematic FREE joints set from ``Control.mocap_pos``/``mocap_quat`` each step
            (``Model.mocap_joint``; the MJCF importer appends one per mocap body).
    """

    JointDofConfig = JointDofConfig
    ShapeConfig = ShapeConfig
    ContactPairConfig = ContactPairConfig

    def __init__(self, up_axis=Axis.Z, gravity: float = -9.81) -> None:
        self.up_axis = Axis(int(as_axis(up_axis, "ModelBuilder: up_axis").argmax()))
        self.gravity = as_float(gravity, "ModelBuilder: gravity")
        self.default_shape_cfg = ShapeConfig()
        self.default_joint_cfg = JointDofConfig()
        self.rigid_gap = 0.1
        self.fluid_density = 0.0
        self.fluid_viscosity = 0.0
        self.fluid_wind = np.zeros(3)
        self.shape_fluid: dict[int, np.ndarray] = {}
        self.shape_ray_extent: dict[int, np.ndarray] = {}
        self.mocap_joint: list[int] = []
        # bodies
        self.body_q: list[np.ndarray] = []
        self.body_qd: list[np.ndarray] = []
        self.body_com: list[np.ndarray] = []
        self.body_mass: list[float] = []
        self.body_inertia: list[np.ndarray] = []
        self.body_gravcomp: list[float] = []
        self.body_flags: list[int] = []
        self.body_label: list[str] = []
        self.body_lock_inertia: list[bool] = []
        self.body_shapes: dict[int, list[int]] = {-1: []}
        # joints
        self.joint_type: list[int] = []
        self.joint_parent: list[int] = []
        self.joint_child: list[int] = []
        self.joint_X_p: list[np.ndarray] = []
        self.joint_X_c: list[np.ndarray] = []
        self.joint_dof_dim: list[tuple[int, int]] = []
        self.joint_q_start: list[int] = []
        self.joint_qd_start: list[int] = []
        self.joint_label: list[str] = []
        self.joint_enabled: list[bool] = []
        self.joint_collision_filter_parent: list[bool] = []
        self.joint_articulation: list[int] = []
        self.joint_q: list[float] = []
        self.joint_qd: list[float] = []
        self.joint_target_q: list[float] = []
        self.joint_axis: list[np.ndarray] = []
        self.joint_target_mode: list[int] = []
        self.joint_drive_type: list[int] = []
        self.joint_dof: dict[str, list[float]] = {k: [] for k in _DOF_KEYS}
        # articulations
        self.articulation_start: list[int] = []
        self.articulation_end: list[int] = []
        self.articulation_label: list[str] = []
        self._init_shapes()
        self._init_equality()
        self._init_tendons()
        self._init_sensors()
        self._init_actuators()

    # ------------------------------------------------------------------ counts
    @property
    def body_count(self) -> int:
        """Number of bodies added so far."""
        return len(self.body_q)

    @property
    def joint_count(self) -> int:
        """Number of joints added so far."""
        return len(self.joint_type)

    @property
    def joint_coord_count(self) -> int:
        """Length of ``joint_q``."""
        return len(self.joint_q)

    @property
    def joint_dof_count(self) -> int:
        """Length of ``joint_qd``."""
        return len(self.joint_qd)

    @property
    def articulation_count(self) -> int:
        """Number of articulations added so far."""
        return len(self.articulation_start)

    @property
    def up_vector(self) -> tuple[float, float, float]:
        """Unit vector of the up axis."""
        return self.up_axis.to_vector()

    # ------------------------------------------------------------------ bodies
    def add_link(
        self,
        *,
        xform=None,
        com=None,
        inertia=None,
        mass: float = 0.0,
        label: str | None = None,
        lock_inertia: bool = False,
        is_kinematic: bool = False,
        custom_attributes: dict | None = None,
        gravcomp: float = 0.0,
    ) -> int:
        """Add a rigid body (link) without a joint.

        Args:
            xform: Initial world pose of the body origin (7 floats or ``(p, q)``).
            com: Centre of mass in the body frame [m].
            inertia: Inertia about the COM in body axes [kg·m²] (3×3 or diagonal 3-vector).
            mass: Mass [kg]; shapes added later accumulate on top unless ``lock_inertia``.
            label: Unique name (defaults to ``body_<index>``).
            lock_inertia: Ignore shape densities for this body's mass properties.
            is_kinematic: Body follows prescribed motion (``BodyFlags.KINEMATIC``).
            custom_attributes: Accepted for Newton compatibility; must be empty.
            gravcomp: Gravity compensation [-] (MuJoCo's ``body_gravcomp``, see ``Model.body_gravcomp``):
                gravity acts on the body with ``(1 − gravcomp) · mass``; 1 = weightless, may exceed 1.

        Returns:
            The body index.
        """
        idx = self.body_count
        name = self._check_label(label, f"body_{idx}", self.body_label, "body")
        what = f"add_link(label={name!r})"
        self._no_custom(custom_attributes, what)
        mass = as_float(mass, f"{what}: mass", nonneg=True)
        gravcomp = as_float(gravcomp, f"{what}: gravcomp")
        self.body_q.append(as_transform(xform, f"{what}: xform"))
        self.body_qd.append(np.zeros(6))
        self.body_com.append(np.zeros(3) if com is None else as_vec3(com, f"{what}: com"))
        self.body_inertia.append(np.zeros((3, 3)) if inertia is None else as_inertia(inertia, f"{what}: inertia"))
        self.body_mass.append(mass)
        self.body_gravcomp.append(gravcomp)
        self.body_flags.append(int(BodyFlags.KINEMATIC if is_kinematic else BodyFlags.DYNAMIC))
        self.body_label.append(name)
        self.body_lock_inertia.append(bool(lock_inertia))
        self.body_shapes[idx] = []
        return idx

    def add_body(self, *, xform=None, com=None, inertia=None, mass: float = 0.0, label: str | None = None,
                 lock_inertia: bool = False, is_kinematic: bool = False,
                 custom_attributes: dict | None = None, gravcomp: float = 0.0) -> int:
        """Add a free-floating body: ``add_link`` + ``add_joint_free`` + ``add_articulation``.

        The free joint's ``joint_q`` is initialised from ``xform`` so FK reproduces the pose.
        Arguments are those of :meth:`add_link`.

        Returns:
            The body index.
        """
        b = self.add_link(xform=xform, com=com, inertia=inertia, mass=mass, label=label,
                          lock_inertia=lock_inertia, is_kinematic=is_kinematic,
                          custom_attributes=custom_attributes, gravcomp=gravcomp)
        j = self.add_joint_free(b, label=f"{self.body_label[b]}_free_joint" if label else None)
        self.add_articulation([j], label=label)
        return b

    # ------------------------------------------------------------------ joints
    def add_joint(
        self,
        joint_type: JointType,
        parent: int,
        child: int,
        *,
        linear_axes: Sequence[JointDofConfig] | None = None,
        angular_axes: Sequence[JointDofConfig] | None = None,
        label: str | None = None,
        parent_xform=None,
        child_xform=None,
        collision_filter_parent: bool | None = None,
        enabled: bool = True,
        custom_attributes: dict | None = None,
    ) -> int:
        """Add a joint of any type between ``parent`` (−1 = world) and ``child``.

        Args:
            joint_type: :class:`JointType`.
            parent: Parent body index or −1 for the world.
            child: Child body index.
            linear_axes: Linear DOF configs (PRISMATIC/D6; FREE/DISTANCE get X, Y, Z).
            angular_axes: Angular DOF configs (REVOLUTE/D6; BALL/FREE/DISTANCE get X, Y, Z).
            label: Unique joint name (defaults to ``joint_<index>``).
            parent_xform: ``joint_X_p``: parent body frame → parent anchor.
            child_xform: ``joint_X_c``: child body frame → child anchor.
            collision_filter_parent: Filter contacts between child and parent shapes (default:
                joints with a parent body and FIXED joints to the world, as Newton).
            enabled: Whether solvers enforce the joint.
            custom_attributes: Accepted for Newton compatibility; must be empty.

        Returns:
            The joint index.
        """
        idx = self.joint_count
        name = self._check_label(label, f"joint_{idx}", self.joint_label, "joint")
        what = f"add_joint(label={name!r}, type={_type_name(joint_type)})"
        self._no_custom(custom_attributes, what)
        jt = self._check_joint_type(joint_type, what)
        self._check_body(parent, f"{what}: parent", allow_world=True)
        self._check_body(child, f"{what}: child", allow_world=False)
        if parent == child:
            raise ValueError(f"{what}: parent and child are the same body {child}")
        lin, ang = self._joint_axes(jt, linear_axes, angular_axes, what)
        x_p = as_transform(parent_xform, f"{what}: parent_xform")
        x_c = as_transform(child_xform, f"{what}: child_xform")
        self.joint_type.append(int(jt))
        self.joint_parent.append(int(parent))
        self.joint_child.append(int(child))
        self.joint_X_p.append(x_p)
        self.joint_X_c.append(x_c)
        self.joint_dof_dim.append((len(lin), len(ang)))
        self.joint_q_start.append(self.joint_coord_count)
        self.joint_qd_start.append(self.joint_dof_count)
        self.joint_label.append(name)
        self.joint_enabled.append(bool(enabled))
        cfp = collision_filter_parent
        if cfp is None:  # Newton's default: filter joints with a parent body and FIXED joints to the world
            cfp = parent >= 0 or jt == JointType.FIXED
        cfp = bool(cfp)
        self.joint_collision_filter_parent.append(cfp)
        self.joint_articulation.append(-1)
        for cfg in (*lin, *ang):
            self.joint_axis.append(np.asarray(cfg.axis, float))
            self.joint_target_mode.append(int(cfg.actuator_mode))
            self.joint_drive_type.append(int(cfg.drive_type))
            self.joint_qd.append(0.0)
            for k in _DOF_KEYS:
                self.joint_dof[k].append(float(getattr(cfg, k)))
        self._append_coords(jt, lin, ang, parent, child, x_p, x_c)
        return idx

    def _append_coords(self, jt, lin, ang, parent, child, x_p, x_c) -> None:
        if jt in (JointType.FREE, JointType.DISTANCE):
            x_wp = np.array([0, 0, 0, 0, 0, 0, 1.0]) if parent < 0 else self.body_q[parent]
            x_j = np_transform_mul(np_transform_inverse(np_transform_mul(x_wp, x_p)),
                                   np_transform_mul(self.body_q[child], x_c))
            self.joint_q.extend(x_j.tolist())
            self.joint_target_q.extend(x_j.tolist())
        elif jt == JointType.BALL:
            self.joint_q.extend([0.0, 0.0, 0.0, 1.0])
            self.joint_target_q.extend([0.0, 0.0, 0.0, 1.0])
        else:
            for cfg in (*lin, *ang):
                q0 = 0.0 if cfg.limit_lower <= 0.0 <= cfg.limit_upper else cfg.target_q
                self.joint_q.append(q0)
                self.joint_target_q.append(cfg.target_q)

    def _joint_axes(self, jt, linear_axes, angular_axes, what):
        lin = list(linear_axes or [])
        ang = list(angular_axes or [])
        for k, cfg in enumerate((*lin, *ang)):
            if not isinstance(cfg, JointDofConfig):
                raise TypeError(f"{what}: axis {k} must be a ModelBuilder.JointDofConfig, got {type(cfg).__name__}")
        if jt in (JointType.FREE, JointType.DISTANCE, JointType.BALL):
            if jt != JointType.BALL and not lin:
                lin = [JointDofConfig.create_unlimited(a) for a in (Axis.X, Axis.Y, Axis.Z)]
            if not ang:
                ang = [JointDofConfig.create_unlimited(a) for a in (Axis.X, Axis.Y, Axis.Z)]
        expected = {JointType.PRISMATIC: (1, 0), JointType.REVOLUTE: (0, 1), JointType.FIXED: (0, 0),
                    JointType.BALL: (0, 3), JointType.FREE: (3, 3), JointType.DISTANCE: (3, 3)}
        if jt in expected and (len(lin), len(ang)) != expected[jt]:
            raise ValueError(f"{what}: needs {expected[jt]} (linear, angular) axes, got {(len(lin), len(ang))}")
        if jt == JointType.D6 and (len(lin) > 3 or len(ang) > 3):
            raise ValueError(f"{what}: a D6 joint has at most 3 linear and 3 angular axes, got {(len(lin), len(ang))}")
        if jt == JointType.D6 and len(ang) >= 2:
            a = np.stack([c.axis for c in ang])
            if np.abs(a @ a.T - np.eye(len(ang))).max() > 1e-6:
                raise ValueError(f"{what}: D6 angular axes must be mutually orthogonal, got {a.tolist()}")
        return lin, ang

    def _dof_cfg(self, axis, what, **kw) -> JointDofConfig:
        if isinstance(axis, JointDofConfig):
            return axis
        d = self.default_joint_cfg
        args = {}
        for k, v in kw.items():
            args[k] = getattr(d, k) if (v is None and k in _DEFAULTED) else v
        try:
            return JointDofConfig(axis=Axis.X if axis is None else axis, **args)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{what}: {e}") from None

    def add_joint_revolute(self, parent: int, child: int, *, parent_xform=None, child_xform=None, axis=None,
                           target_q=None, target_qd=None, target_ke=None, target_kd=None, damping=None,
                           stiffness=None, rest_q=None, limit_lower=None, limit_upper=None, limit_ke=None,
                           limit_kd=None, armature=None, effort_limit=None, velocity_limit=None, friction=None,
                           actuator_mode=None, target_pos=None, target_vel=None, drive_type=None,
                           label: str | None = None,
                           collision_filter_parent: bool | None = None, enabled: bool = True,
                           custom_attributes: dict | None = None) -> int:
        """Add a revolute (hinge) joint; ``axis`` defaults to X. DOF keywords as :class:`JointDofConfig`."""
        cfg = self._dof_cfg(axis, f"add_joint_revolute(label={label!r})", **_pick(locals()))
        return self.add_joint(JointType.REVOLUTE, parent, child, angular_axes=[cfg], label=label,
                              parent_xform=parent_xform, child_xform=child_xform,
                              collision_filter_parent=collision_filter_parent, enabled=enabled,
                              custom_attributes=custom_attributes)

    def add_joint_prismatic(self, parent: int, child: int, *, parent_xform=None, child_xform=None, axis=Axis.X,
                            target_q=None, target_qd=None, target_ke=None, target_kd=None, damping=None,
                            stiffness=None, rest_q=None, limit_lower=None, limit_upper=None, limit_ke=None,
                            limit_kd=None, armature=None, effort_limit=None, velocity_limit=None, friction=None,
                            actuator_mode=None, target_pos=None, target_vel=None, drive_type=None,
                            label: str | None = None,
                            collision_filter_parent: bool | None = None, enabled: bool = True,
                            custom_attributes: dict | None = None) -> int:
        """Add a prismatic (slider) joint; DOF keywords as :class:`JointDofConfig`."""
        cfg = self._dof_cfg(axis, f"add_joint_prismatic(label={label!r})", **_pick(locals()))
        return self.add_joint(JointType.PRISMATIC, parent, child, linear_axes=[cfg], label=label,
                              parent_xform=parent_xform, child_xform=child_xform,
                              collision_filter_parent=collision_filter_parent, enabled=enabled,
                              custom_attributes=custom_attributes)

    def add_joint_ball(self, parent: int, child: int, *, parent_xform=None, child_xform=None, armature=None,
                       friction=None, damping=None, stiffness=None, actuator_mode=None, label: str | None = None,
                       collision_filter_parent: bool | None = None, enabled: bool = True,
                       custom_attributes: dict | None = None) -> int:
        """Add a ball (spherical) joint with quaternion coordinates and 3 angular DOFs."""
        what = f"add_joint_ball(label={label!r})"
        ang = [self._dof_cfg(a, what, armature=armature, friction=friction, damping=damping, stiffness=stiffness,
                             actuator_mode=actuator_mode, limit_ke=0.0, limit_kd=0.0)
               for a in (Axis.X, Axis.Y, Axis.Z)]
        return self.add_joint(JointType.BALL, parent, child, angular_axes=ang, label=label,
                              parent_xform=parent_xform, child_xform=child_xform,
                              collision_filter_parent=collision_filter_parent, enabled=enabled,
                              custom_attributes=custom_attributes)

    def add_joint_fixed(self, parent: int, child: int, *, parent_xform=None, child_xform=None,
                        label: str | None = None, collision_filter_parent: bool | None = None,
                        enabled: bool = True, custom_attributes: dict | None = None) -> int:
        """Add a fixed joint (no DOFs)."""
        return self.add_joint(JointType.FIXED, parent, child, label=label, parent_xform=parent_xform,
                              child_xform=child_xform, collision_filter_parent=collision_filter_parent,
                              enabled=enabled, custom_attributes=custom_attributes)

    def add_joint_free(self, child: int, *, parent_xform=None, child_xform=None, parent: int = -1,
                       label: str | None = None, collision_filter_parent: bool | None = None,
                       enabled: bool = True, custom_attributes: dict | None = None) -> int:
        """Add a free joint; its ``joint_q`` is initialised from the child's current pose."""
        return self.add_joint(JointType.FREE, parent, child, label=label, parent_xform=parent_xform,
                              child_xform=child_xform, collision_filter_parent=collision_filter_parent,
                              enabled=enabled, custom_attributes=custom_attributes)

    def add_joint_distance(self, parent: int, child: int, *, parent_xform=None, child_xform=None,
                           min_distance: float = -1.0, max_distance: float = 1.0,
                           collision_filter_parent: bool | None = None, enabled: bool = True,
                           custom_attributes: dict | None = None, label: str | None = None) -> int:
        """Add a distance joint (7 coordinates / 6 DOFs); the distance limits sit on the first DOF.

        A negative ``min_distance``/``max_distance`` means that side is unlimited (Newton).
        """
        what = f"add_joint_distance(label={label!r})"
        lo = as_float(min_distance, f"{what}: min_distance")
        hi = as_float(max_distance, f"{what}: max_distance")
        if lo >= 0.0 and hi >= 0.0 and lo > hi:
            raise ValueError(f"{what}: min_distance ({lo}) exceeds max_distance ({hi})")
        cfg = JointDofConfig(axis=Axis.X, limit_ke=0.0, limit_kd=0.0)
        cfg.limit_lower, cfg.limit_upper = lo, hi  # −1 = unlimited side, so lo > hi is legal here
        lin = [cfg]
        lin += [JointDofConfig.create_unlimited(a) for a in (Axis.Y, Axis.Z)]
        return self.add_joint(JointType.DISTANCE, parent, child, linear_axes=lin, label=label,
                              parent_xform=parent_xform, child_xform=child_xform,
                              collision_filter_parent=collision_filter_parent, enabled=enabled,
                              custom_attributes=custom_attributes)

    def add_joint_d6(self, parent: int, child: int, *, linear_axes=None, angular_axes=None,
                     label: str | None = None, parent_xform=None, child_xform=None,
                     collision_filter_parent: bool | None = None, enabled: bool = True,
                     custom_attributes: dict | None = None) -> int:
        """Add a D6 joint with up to 3 linear and 3 (orthogonal) angular axes.

        Angular coordinates are intrinsic rotations about the authored axes,
        ``R = R(a0, q0) R(a1, q1) R(a2, q2)``; translation is applied before rotation. Axes may be
        given as :class:`JointDofConfig`, :class:`Axis` or vectors.
        """
        what = f"add_joint_d6(label={label!r})"
        lin = [a if isinstance(a, JointDofConfig) else self._dof_cfg(a, what) for a in (linear_axes or [])]
        ang = [a if isinstance(a, JointDofConfig) else self._dof_cfg(a, what) for a in (angular_axes or [])]
        return self.add_joint(JointType.D6, parent, child, linear_axes=lin, angular_axes=ang, label=label,
                              parent_xform=parent_xform, child_xform=child_xform,
                              collision_filter_parent=collision_filter_parent, enabled=enabled,
                              custom_attributes=custom_attributes)

    def add_joint_universal(self, parent: int, child: int, axis_0=Axis.X, axis_1=Axis.Y, **kwargs) -> int:
        """Universal joint: a D6 with two orthogonal angular axes."""
        return self.add_joint_d6(parent, child, angular_axes=[axis_0, axis_1], **kwargs)

    def add_joint_compound(self, parent: int, child: int, axis_0=Axis.X, axis_1=Axis.Y, axis_2=Axis.Z,
                           **kwargs) -> int:
        """Compound joint: a D6 with three orthogonal angular axes."""
        return self.add_joint_d6(parent, child, angular_axes=[axis_0, axis_1, axis_2], **kwargs)

    # ------------------------------------------------------------ articulations
    def add_articulation(self, joints: Sequence[int], label: str | None = None,
                         custom_attributes: dict | None = None) -> int:
        """Group contiguous, ascending joint indices into an articulation.

        Args:
            joints: Joint indices (must be consecutive and not yet in an articulation).
            label: Unique articulation name (defaults to ``articulation_<index>``).
            custom_attributes: Accepted for Newton compatibility; must be empty.

        Returns:
            The articulation index.
        """
        idx = self.articulation_count
        name = self._check_label(label, f"articulation_{idx}", self.articulation_label, "articulation")
        what = f"add_articulation(label={name!r})"
        self._no_custom(custom_attributes, what)
        if joints is None or isinstance(joints, str | bytes) or not isinstance(joints, Sequence | np.ndarray):
            raise TypeError(f"{what}: joints must be a list of joint indices, got {joints!r}")
        js = [int(j) for j in joints]
        if not js:
            raise ValueError(f"{what}: joints is empty; pass the joint indices of the articulation")
        for j in js:
            if not 0 <= j < self.joint_count:
                raise ValueError(f"{what}: joint index {j} does not exist (joint_count={self.joint_count})")
            if self.joint_articulation[j] >= 0:
                raise ValueError(f"{what}: joint {self.joint_label[j]!r} already belongs to articulation "
                                 f"{self.articulation_label[self.joint_articulation[j]]!r}")
        if js != list(range(js[0], js[0] + len(js))):
            raise ValueError(f"{what}: joints must be contiguous ascending indices, got {js}; "
                             "add an articulation's joints one after another")
        children = [self.joint_child[j] for j in js]
        for j in range(self.joint_count):
            if self.joint_articulation[j] >= 0 and self.joint_child[j] in children:
                raise ValueError(f"{what}: body {self.body_label[self.joint_child[j]]!r} already has a tree "
                                 f"joint {self.joint_label[j]!r}; leave loop-closing joints out of articulations")
        _reject_shared_children(self, js, what)
        for j in js:
            self.joint_articulation[j] = idx
        self.articulation_start.append(js[0])
        self.articulation_end.append(js[-1] + 1)
        self.articulation_label.append(name)
        return idx

    # ------------------------------------------------------------ composition
    def add_builder(self, builder: ModelBuilder, xform=None, label_prefix: str | None = None) -> None:
        """Copy another builder's bodies, joints, shapes, articulations and constraints into this one.

        Args:
            builder: The source builder (unchanged).
            xform: Transform applied to the copied world-attached content (root joints' parent
                anchors, free-joint coordinates, body poses and static shapes).
            label_prefix: Prefix ``"<prefix>/"`` added to every copied label.
        """
        if not isinstance(builder, ModelBuilder):
            raise TypeError(f"add_builder: builder must be a ModelBuilder, got {type(builder).__name__}")
        from jaxart.sim.builder_merge import merge_builder

        b0, j0, x = self.body_count, self.joint_count, as_transform(xform, "add_builder: xform")
        offsets = (b0, self.shape_count, self.joint_dof_count, self.tendon_count)
        merge_builder(self, builder, x, label_prefix)
        self._merge_actuators(builder, offsets[2], offsets[3], label_prefix)
        self.mocap_joint += [j + j0 for j in builder.mocap_joint]
        self.shape_fluid.update({k + offsets[1]: v.copy() for k, v in builder.shape_fluid.items()})
        self.shape_ray_extent.update({k + offsets[1]: v.copy() for k, v in builder.shape_ray_extent.items()})
        self._merge_equality(builder, b0, j0, label_prefix, x, tendon_offset=self.tendon_count)
        self._merge_tendons(builder, b0, j0, label_prefix, x)
        self._merge_sensors(builder, offsets, label_prefix, x)

    def add_mjcf(self, source, *, xform=None, floating: bool | None = None, parent_body: int = -1, **kwargs):
        """Import an MJCF model (path or XML string) using MuJoCo's own compiler.

        See :func:`jaxart.io.mjcf.add_mjcf` for the arguments and the mapping.
        """
        from jaxart.io.mjcf import add_mjcf

        return add_mjcf(self, source, xform=xform, floating=floating, parent_body=parent_body, **kwargs)

    def add_urdf(self, source, *, xform=None, floating: bool | None = None, base_joint: dict | None = None,
                 parent_body: int = -1, scale: float = 1.0, **kwargs) -> dict:
        """Import a URDF robot (path or XML string) with Newton's keywords.

        See :func:`jaxart.io.urdf.add_urdf` for the arguments and the mapping.
        """
        from jaxart.io.urdf import add_urdf

        return add_urdf(self, source, xform=xform, floating=floating, base_joint=base_joint,
                        parent_body=parent_body, scale=scale, **kwargs)

    def add_usd(self, source, *, xform=None, floating: bool | None = None, base_joint: dict | None = None,
                parent_body: int = -1, **kwargs) -> dict:
        """Import the rigid-body physics of a USD stage (path, USDA text or ``Usd.Stage``) via UsdPhysics.

        See :func:`jaxart.io.usd.add_usd` for the arguments and the mapping.
        """
        from jaxart.io.usd import add_usd

        return add_usd(self, source, xform=xform, floating=floating, base_joint=base_joint, parent_body=parent_body,
                       **kwargs)

    def copy(self) -> ModelBuilder:
        """A deep copy of this builder."""
        return copy.deepcopy(self)

    # ------------------------------------------------------------ validation helpers
    def _check_body(self, body, what: str, *, allow_world: bool) -> None:
        if isinstance(body, bool) or not isinstance(body, int | np.integer):
            raise TypeError(f"{what} must be a body index (int), got {body!r}")
        lo = -1 if allow_world else 0
        if not lo <= int(body) < self.body_count:
            raise ValueError(f"{what}: body index {body} does not exist (body_count={self.body_count}"
                             f"{', use -1 for the world' if allow_world else ''})")

    @staticmethod
    def _check_joint_type(joint_type, what: str) -> JointType:
        try:
            return JointType(int(joint_type))
        except (TypeError, ValueError):
            raise ValueError(f"{what}: unknown joint type {joint_type!r}; use jaxart.JointType") from None

    @staticmethod
    def _check_label(label, default: str, existing: list[str], kind: str) -> str:
        if label is None:
            return default
        if not isinstance(label, str):
            raise TypeError(f"{kind} label must be a str, got {type(label).__name__}")
        if label in existing:
            raise ValueError(f"{kind} label {label!r} is already used; labels must be unique")
        return label

    @staticmethod
    def _no_custom(custom_attributes, what: str) -> None:
        if custom_attributes:
            raise NotImplementedError(f"{what}: custom_attributes are not supported by jaxart yet")

    def finalize(self, device=None, *, requires_grad: bool = False, skip_all_validations: bool = False,
                 skip_validation_joints: bool = False, dtype=None, **newton_flags):
        """Build the immutable :class:`~jaxart.Model`.

        Args:
            device: Ignored (JAX places arrays); accepted for Newton compatibility.
            requires_grad: Ignored (every traced leaf is differentiable).
            skip_all_validations: Skip every validation.
            skip_validation_joints: Allow orphan joints (only maximal-coordinate solvers use them).
            dtype: Floating dtype of the model's arrays (default ``float32``; use ``float64``
                with ``jax_enable_x64``).
            **newton_flags: Newton's other ``skip_validation_*`` flags (accepted, no effect).

        Returns:
            The model.

        Raises:
            ValueError: Orphan joints (naming them) unless skipped.
        """
        from jaxart.sim.finalize import finalize

        for k in newton_flags:
            if not k.startswith("skip_validation_"):
                raise TypeError(f"finalize() got an unexpected keyword argument {k!r}")
        return finalize(self, skip_validation_joints=skip_validation_joints or skip_all_validations, dtype=dtype)


def _type_name(jt) -> str:
    try:
        return JointType(int(jt)).name
    except (TypeError, ValueError):
        return repr(jt)


def _pick(loc: dict) -> dict:
    keys = ("target_q", "target_qd", "target_ke", "target_kd", "damping", "stiffness", "rest_q", "limit_lower",
            "limit_upper", "limit_ke", "limit_kd", "armature", "effort_limit", "velocity_limit", "friction",
            "actuator_mode", "target_pos", "target_vel", "drive_type")
    return {k: loc[k] for k in keys}


__all__ = ["ModelBuilder", "JointTargetMode", "JOINT_COORD_DOF_COUNT"]


def _reject_shared_children(builder, js: list[int], what: str) -> None:
    """Raise naming both joints when two of the articulation's joints ``js`` claim the same child body.

    This cannot be rejected earlier, in ``add_joint``: a second joint onto a body is legal there as a
    loop-closing joint, as long as it is left out of every articulation.
    """
    first: dict[int, int] = {}
    for j in js:
        c = builder.joint_child[j]
        if c in first:
            raise ValueError(f"{what}: body {builder.body_label[c]!r} is the child of two joints, "
                             f"{builder.joint_label[first[c]]!r} and {builder.joint_label[j]!r}; a tree gives each "
                             "body one parent joint (leave loop-closing joints out of articulations)")
        first[c] = j
