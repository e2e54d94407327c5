"""Enumerations with Newton 1.8's names and integer values."""

from __future__ import annotations

import enum


class JointType(enum.IntEnum):
    """Joint types; coordinate/DOF counts are in :data:`JOINT_COORD_DOF_COUNT`."""

    PRISMATIC = 0
    REVOLUTE = 1
    BALL = 2
    FIXED = 3
    FREE = 4
    DISTANCE = 5
    D6 = 6


class JointTargetMode(enum.IntEnum):
    """Which drive a DOF's actuator applies (Newton's ``actuator_mode``)."""

    NONE = 0
    POSITION = 1
    VELOCITY = 2
    POSITION_VELOCITY = 3
    EFFORT = 4


class JointDriveType(enum.IntEnum):
    """What a DOF's drive gains produce (PhysX ``PxArticulationDriveType``; a jaxart extension).

    ``FORCE``: ``target_ke``/``target_kd`` give a force/torque [N/m, N·m/rad; N·s/m, N·m·s/rad].
    ``ACCELERATION``: they give a joint acceleration [1/s², 1/s]; the solver multiplies them by the
    DOF's effective inertia ``1 / (H⁻¹)_ii`` (mass matrix with armature; SolverXPBD and SolverSemiImplicit:
    the joint's two-body inertia, :mod:`jaxart.solvers.maximal.drive_inertia`), so the response does not
    depend on the link inertias.
    """

    FORCE = 0
    ACCELERATION = 1


class BodyFlags(enum.IntFlag):
    """Body flags used by FK/IK ``body_flag_filter``."""

    DYNAMIC = 1
    KINEMATIC = 2
    ALL = 3


class GeoType(enum.IntEnum):
    """Shape geometry types (Newton's values)."""

    NONE = 0
    PLANE = 1
    HFIELD = 2
    SPHERE = 3
    CAPSULE = 4
    ELLIPSOID = 5
    CYLINDER = 6
    BOX = 7
    MESH = 8
    CONE = 9
    CONVEX_MESH = 10


class EqType(enum.IntEnum):
    """Equality-constraint types (Newton's ``EqType`` values; MuJoCo ``mjEQ_*`` counterparts)."""

    CONNECT = 0
    WELD = 1
    JOINT = 2
    TENDON = 3


class Axis(enum.IntEnum):
    """Coordinate axes, usable wherever an axis vector is accepted."""

    X = 0
    Y = 1
    Z = 2

    def to_vector(self) -> tuple[float, float, float]:
        """Unit vector of this axis."""
        v = [0.0, 0.0, 0.0]
        v[int(self)] = 1.0
        return (v[0], v[1], v[2])


#: Limit magnitude meaning "unlimited" (Newton's ``MAXVAL``).
MAXVAL = 1e10

#: Per joint type: (number of joint_q coordinates, number of joint_qd DOFs); D6 is variable.
JOINT_COORD_DOF_COUNT = {
    JointType.PRISMATIC: (1, 1),
    JointType.REVOLUTE: (1, 1),
    JointType.BALL: (4, 3),
    JointType.FIXED: (0, 0),
    JointType.FREE: (7, 6),
    JointType.DISTANCE: (7, 6),
}

#: Joint types whose rotation is stored as a quaternion in joint_q.
QUATERNION_JOINTS = (JointType.BALL, JointType.FREE, JointType.DISTANCE)
