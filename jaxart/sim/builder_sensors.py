"""Sensor methods of ``ModelBuilder`` (mixin): MuJoCo's sensors for articulated bodies.

:meth:`SensorBuilderMixin.add_sensor` adds any :class:`~jaxart.sim.sensor_types.SensorType`; the ``add_sensor_*``
helpers name the object the way MuJoCo's MJCF does (a joint, a tendon, a site, a body). Sensors are evaluated by
:func:`jaxart.sensors.eval_sensors` in the order they were added (MuJoCo's ``sensordata`` layout).
"""

from __future__ import annotations

import numpy as np

from jaxart.sim.enums import JointType
from jaxart.sim.sensor_types import BALL_TYPES, REFERENCE_TYPES, SensorObjType, SensorType, object_kind
from jaxart.sim.sensors import DEFAULT_MAGNETIC_FIELD
from jaxart.sim.validate import as_float, as_transform, as_vec3, np_transform_mul

_SCALAR = (JointType.REVOLUTE, JointType.PRISMATIC, JointType.D6)


class SensorBuilderMixin:
    """Sensor methods; expects the body/joint/shape/tendon lists of ``ModelBuilder``."""

    def _init_sensors(self) -> None:
        self.sensor_type: list[int] = []
        self.sensor_objtype: list[int] = []
        self.sensor_objid: list[int] = []
        self.sensor_reftype: list[int] = []
        self.sensor_refid: list[int] = []
        self.sensor_obj_xform: list[np.ndarray] = []
        self.sensor_ref_xform: list[np.ndarray] = []
        self.sensor_cutoff: list[float] = []
        self.sensor_label: list[str] = []
        self.sensor_magnetic_field = np.asarray(DEFAULT_MAGNETIC_FIELD, dtype=np.float64)

    @property
    def sensor_count(self) -> int:
        """Number of sensors added so far."""
        return len(self.sensor_type)

    def add_sensor(self, sensor_type: SensorType, obj: int = -1, *, obj_type: SensorObjType | None = None,
                   ref: int = -1, ref_type: SensorObjType = SensorObjType.NONE, obj_xform=None, ref_xform=None,
                   cutoff: float = 0.0, label: str | None = None) -> int:
        """Add a sensor (see :class:`~jaxart.sim.sensor_types.SensorType` for every kind's value and frame).

        Args:
            sensor_type: The kind.
            obj: Index of the sensed object: a body (−1 = world) or shape (site) for frame sensors, a DOF for
                joint sensors, a tendon for tendon sensors; ignored by ``CLOCK``.
            obj_type: :class:`~jaxart.sim.sensor_types.SensorObjType` of ``obj`` (default: the kind's first
                accepted type: DOF, TENDON, SHAPE for site sensors, BODY for frame and subtree sensors).
            ref: Reference frame index (body or shape) for FRAMEPOS/QUAT/axes/LINVEL/ANGVEL; −1 with
                ``ref_type`` NONE = world.
            ref_type: :class:`~jaxart.sim.sensor_types.SensorObjType` of ``ref`` (NONE, BODY or SHAPE).
            obj_xform: Pose ``(p, q_xyzw)`` of the sensed frame in the object's frame (default identity).
            ref_xform: Pose of the reference frame in the reference object's frame (default identity).
            cutoff: Output bound (MuJoCo's ``cutoff``, ≥ 0; 0 = none).
            label: Unique name (default ``sensor_<index>``).

        Returns:
            The sensor index.

        Raises:
            ValueError: Unknown kind, object of the wrong type or out of range, a reference on a kind without
                one, negative cutoff, a duplicate label.
            TypeError: Non-numeric values.
        """
        try:
            kind = SensorType(int(sensor_type))
        except (TypeError, ValueError):
            raise ValueError(f"add_sensor: unknown sensor_type {sensor_type!r}") from None
        name = self._check_label(label, f"sensor_{self.sensor_count}", self.sensor_label, "sensor")
        what = f"add_sensor(label={name!r}, {kind.name})"
        otype = object_kind(kind)[0] if obj_type is None else SensorObjType(int(obj_type))
        if otype not in object_kind(kind):
            raise ValueError(f"{what}: obj_type must be one of {[t.name for t in object_kind(kind)]}, got {otype.name}")
        obj = self._check_sensor_object(otype, obj, f"{what}: obj", kind)
        rtype = SensorObjType(int(ref_type))
        if rtype != SensorObjType.NONE or int(ref) != -1:
            if kind not in REFERENCE_TYPES:
                raise ValueError(f"{what}: a reference frame is only accepted by "
                                 f"{sorted(t.name for t in REFERENCE_TYPES)}")
            if rtype not in (SensorObjType.BODY, SensorObjType.SHAPE):
                raise ValueError(f"{what}: ref_type must be BODY or SHAPE with a reference, got {rtype.name}")
            ref = self._check_sensor_object(rtype, ref, f"{what}: ref", kind)
        cutoff = as_float(cutoff, f"{what}: cutoff", nonneg=True)
        self.sensor_type.append(int(kind))
        self.sensor_objtype.append(int(otype))
        self.sensor_objid.append(int(obj))
        self.sensor_reftype.append(int(rtype))
        self.sensor_refid.append(int(ref))
        self.sensor_obj_xform.append(as_transform(obj_xform, f"{what}: obj_xform"))
        self.sensor_ref_xform.append(as_transform(ref_xform, f"{what}: ref_xform"))
        self.sensor_cutoff.append(cutoff)
        self.sensor_label.append(name)
        return self.sensor_count - 1

    def add_sensor_joint(self, sensor_type: SensorType, joint: int, dof: int = 0, **kwargs) -> int:
        """Add a joint sensor: JOINTPOS, JOINTVEL or JOINTACTFRC on DOF ``dof`` of a REVOLUTE, PRISMATIC or D6 joint,
        BALLQUAT or BALLANGVEL on a BALL joint.

        Args:
            sensor_type: The kind.
            joint: Joint index.
            dof: DOF within the joint (linear DOFs first for D6 joints; 0 for BALL sensors).
            **kwargs: ``cutoff``, ``label`` (see :meth:`add_sensor`).

        Returns:
            The sensor index.
        """
        if not isinstance(joint, int | np.integer) or not 0 <= int(joint) < self.joint_count:
            raise ValueError(f"add_sensor_joint: joint must be an index in [0, {self.joint_count}), got {joint!r}")
        ndof = 1 if SensorType(int(sensor_type)) in BALL_TYPES else int(sum(self.joint_dof_dim[joint]))
        if not isinstance(dof, int | np.integer) or not 0 <= int(dof) < ndof:
            raise ValueError(f"add_sensor_joint: dof must be in [0, {ndof}) for joint {self.joint_label[joint]!r}, "
                             f"got {dof!r}")
        return self.add_sensor(sensor_type, int(self.joint_qd_start[joint]) + int(dof), obj_type=SensorObjType.DOF,
                               **kwargs)

    def add_sensor_tendon(self, sensor_type: SensorType, tendon: int, **kwargs) -> int:
        """Add a TENDONPOS, TENDONVEL or TENDONACTFRC sensor (``kwargs``: ``cutoff``, ``label``)."""
        return self.add_sensor(sensor_type, tendon, obj_type=SensorObjType.TENDON, **kwargs)

    def add_sensor_site(self, sensor_type: SensorType, site: int, **kwargs) -> int:
        """Add a sensor on a site (or any shape): the site sensors (accelerometer, gyro, touch, …) and frame sensors.

        Args:
            sensor_type: The kind.
            site: Shape index (a site from ``add_site``, or a collision shape).
            **kwargs: ``ref``, ``ref_type``, ``obj_xform``, ``ref_xform``, ``cutoff``, ``label`` (see
                :meth:`add_sensor`).

        Returns:
            The sensor index.
        """
        return self.add_sensor(sensor_type, site, obj_type=SensorObjType.SHAPE, **kwargs)

    def add_sensor_body(self, sensor_type: SensorType, body: int, **kwargs) -> int:
        """Add a frame sensor on a body frame (MuJoCo's ``xbody``; −1 = world) or a subtree sensor on a body.

        Args:
            sensor_type: The kind (``FRAME*``, ``SUBTREE*``).
            body: Body index (−1: the world; for subtree sensors, all bodies).
            **kwargs: ``ref``, ``ref_type``, ``obj_xform`` (e.g. the body's inertial frame, MuJoCo's ``body``
                object), ``ref_xform``, ``cutoff``, ``label`` (see :meth:`add_sensor`).

        Returns:
            The sensor index.
        """
        return self.add_sensor(sensor_type, body, obj_type=SensorObjType.BODY, **kwargs)

    def add_sensor_clock(self, **kwargs) -> int:
        """Add a CLOCK sensor (the simulation time; ``kwargs``: ``cutoff``, ``label``)."""
        return self.add_sensor(SensorType.CLOCK, -1, obj_type=SensorObjType.NONE, **kwargs)

    def set_sensor_magnetic_field(self, field) -> None:
        """Set the world magnetic field read by magnetometers (MuJoCo's ``opt.magnetic``; default ``(0, −0.5, 0)``)."""
        self.sensor_magnetic_field = as_vec3(field, "set_sensor_magnetic_field: field")

    def _check_sensor_object(self, otype: SensorObjType, index, what: str, kind: SensorType) -> int:
        if otype == SensorObjType.NONE:
            return -1
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise TypeError(f"{what} must be an int index, got {type(index).__name__}")
        index = int(index)
        limit, low = {SensorObjType.BODY: (self.body_count, -1), SensorObjType.SHAPE: (self.shape_count, 0),
                      SensorObjType.DOF: (self.joint_dof_count, 0),
                      SensorObjType.TENDON: (self.tendon_count, 0)}[otype]
        if not low <= index < limit:
            raise ValueError(f"{what} must be a {otype.name} index in [{low}, {limit}), got {index}")
        wrench = kind in (SensorType.FORCE, SensorType.TORQUE)
        if otype == SensorObjType.SHAPE and wrench and self.shape_body[index] < 0:
            raise ValueError(f"{what}: {kind.name} needs a site on a body, shape {index} is on the world")
        if otype == SensorObjType.DOF:
            j = int(np.searchsorted(np.asarray(self.joint_qd_start), index, side="right") - 1)
            jt = JointType(self.joint_type[j])
            if kind in BALL_TYPES and (jt != JointType.BALL or index != self.joint_qd_start[j]):
                raise ValueError(f"{what}: {kind.name} needs the first DOF of a BALL joint, DOF {index} belongs to "
                                 f"a {jt.name} joint")
            if kind not in BALL_TYPES and jt not in _SCALAR:
                raise ValueError(f"{what}: DOF {index} belongs to a {jt.name} joint; "
                                 "joint sensors need a scalar DOF (REVOLUTE, PRISMATIC, D6)")
        return index

    def _merge_sensors(self, src, offsets: tuple[int, int, int, int], prefix: str | None,
                       xform: np.ndarray) -> None:
        """Append ``src``'s sensors with shifted indices (``add_builder``); world frames move by ``xform``."""
        b0, s0, d0, t0 = offsets
        shift = {int(SensorObjType.BODY): b0, int(SensorObjType.SHAPE): s0, int(SensorObjType.DOF): d0,
                 int(SensorObjType.TENDON): t0}
        for k in range(src.sensor_count):
            new = f"{prefix}/{src.sensor_label[k]}" if prefix else src.sensor_label[k]
            if new in self.sensor_label:
                raise ValueError(f"add_builder: sensor label {new!r} already exists; pass a distinct label_prefix")
            for kind in ("obj", "ref"):
                otype, oid = getattr(src, f"sensor_{kind}type")[k], getattr(src, f"sensor_{kind}id")[k]
                x = getattr(src, f"sensor_{kind}_xform")[k]
                world = otype == int(SensorObjType.BODY) and oid < 0
                getattr(self, f"sensor_{kind}type").append(otype)
                getattr(self, f"sensor_{kind}id").append(oid + shift[otype] if oid >= 0 and otype in shift else oid)
                getattr(self, f"sensor_{kind}_xform").append(np_transform_mul(xform, x) if world else x.copy())
            self.sensor_type.append(src.sensor_type[k])
            self.sensor_cutoff.append(src.sensor_cutoff[k])
            self.sensor_label.append(new)
