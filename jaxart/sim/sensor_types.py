"""Sensor kinds, the objects they read and their output sizes (MuJoCo's ``mjtSensor`` subset for articulations).

Every value is noise-free, as MuJoCo's ``sensordata`` (MuJoCo adds noise only in user code). Frames, units and
conventions of each kind are listed in :class:`SensorType`.
"""

from __future__ import annotations

import enum


class SensorType(enum.IntEnum):
    """Sensor kinds (MuJoCo's names). ``dim`` is the output size; "object frame" is the frame of the sensed object
    (:class:`SensorObjType`); vectors are in world axes unless stated.

    * ``JOINTPOS`` / ``JOINTVEL`` (1): coordinate [m or rad] / velocity of a scalar DOF.
    * ``TENDONPOS`` / ``TENDONVEL`` (1): tendon length [m] / length rate [m/s].
    * ``JOINTACTFRC`` (1): drive (actuator) force of a scalar DOF at the state, ``ke (q* − q) + kd (q̇* − q̇) +
      joint_act`` clipped to ``joint_effort_limit`` [N or N·m] (MuJoCo's ``jointactuatorfrc``).
    * ``TENDONACTFRC`` (1): tendon actuator force [N] (MuJoCo's ``tendonactuatorfrc``).
    * ``FRAMEPOS`` (3): object frame origin [m]; with a reference frame, in its axes relative to its origin.
    * ``FRAMEQUAT`` (4): object frame orientation, MuJoCo's order ``(w, x, y, z)``; with a reference frame, relative
      to it (the sign of a quaternion is not meaningful).
    * ``FRAMEXAXIS`` / ``FRAMEYAXIS`` / ``FRAMEZAXIS`` (3): object frame axes (in the reference frame's axes).
    * ``FRAMELINVEL`` / ``FRAMEANGVEL`` (3): velocity [m/s] of the object frame origin / angular velocity [rad/s];
      with a reference frame: relative to it (``v − v_ref − ω_ref × (p − p_ref)``, ``ω − ω_ref``) in its axes.
    * ``FRAMELINACC`` / ``FRAMEANGACC`` (3): linear acceleration of the object frame origin minus gravity
      [m/s²] (a body at rest reads ``−g``, MuJoCo's convention) / angular acceleration [rad/s²].
    * ``SUBTREECOM`` / ``SUBTREELINVEL`` (3): centre of mass [m] / its velocity [m/s] of a body and its descendants
      (the world body: all bodies).
    * ``SUBTREEANGMOM`` (3): angular momentum [kg·m²/s] of the subtree about its centre of mass.
    * ``ACCELEROMETER`` (3): ``FRAMELINACC`` of a site in the site's axes [m/s²].
    * ``VELOCIMETER`` / ``GYRO`` (3): ``FRAMELINVEL`` / ``FRAMEANGVEL`` of a site in the site's axes.
    * ``MAGNETOMETER`` (3): ``Model.sensor_magnetic_field`` in the site's axes.
    * ``FORCE`` / ``TORQUE`` (3): wrench the site's body receives from its parent through its joint (the subtree's
      inertial and external loads; MuJoCo's ``cfrc_int``), force [N] / torque about the site [N·m] in the site's
      axes.
    * ``TOUCH`` (1): sum of the normal contact forces [N] on the site's body whose contact point, cast along the
      normal, meets the site's volume (MuJoCo's rule).
    * ``RANGEFINDER`` (1): distance [m] along the site's +Z axis to the nearest shape not on the site's body
      (planes from their front side), −1 when nothing is hit.
    * ``CLOCK`` (1): simulation time [s].
    * ``BALLQUAT`` (4): rotation of a BALL joint (child anchor in parent anchor), MuJoCo's order ``(w, x, y, z)``.
    * ``BALLANGVEL`` (3): angular velocity of a BALL joint in the child anchor's axes [rad/s] (MuJoCo's ``qvel``).
    """

    JOINTPOS = 0
    JOINTVEL = 1
    TENDONPOS = 2
    TENDONVEL = 3
    JOINTACTFRC = 4
    TENDONACTFRC = 5
    FRAMEPOS = 6
    FRAMEQUAT = 7
    FRAMEXAXIS = 8
    FRAMEYAXIS = 9
    FRAMEZAXIS = 10
    FRAMELINVEL = 11
    FRAMEANGVEL = 12
    FRAMELINACC = 13
    FRAMEANGACC = 14
    SUBTREECOM = 15
    SUBTREELINVEL = 16
    SUBTREEANGMOM = 17
    ACCELEROMETER = 18
    VELOCIMETER = 19
    GYRO = 20
    MAGNETOMETER = 21
    FORCE = 22
    TORQUE = 23
    TOUCH = 24
    RANGEFINDER = 25
    CLOCK = 26
    BALLQUAT = 27
    BALLANGVEL = 28


class SensorObjType(enum.IntEnum):
    """What a sensor's object (or reference) index refers to.

    NONE: no object (``CLOCK``; a reference of NONE is the world frame). BODY: a body (−1 = the world); its frame is
    the body frame composed with the sensor's ``obj_xform``. SHAPE: a shape (a site or a collision shape); its frame
    is the shape frame composed with ``obj_xform``. DOF: a scalar DOF index. TENDON: a tendon index.
    """

    NONE = 0
    BODY = 1
    SHAPE = 2
    DOF = 3
    TENDON = 4


class SensorDataType(enum.IntEnum):
    """How ``cutoff`` applies (MuJoCo's ``mjtDataType``): REAL clips to ``[−c, c]``, POSITIVE to ``≤ c``, AXIS and
    QUATERNION are never clipped."""

    REAL = 0
    POSITIVE = 1
    AXIS = 2
    QUATERNION = 3


_T = SensorType
_DIM3 = {_T.FRAMEPOS, _T.FRAMEXAXIS, _T.FRAMEYAXIS, _T.FRAMEZAXIS, _T.FRAMELINVEL, _T.FRAMEANGVEL, _T.FRAMELINACC,
         _T.FRAMEANGACC, _T.SUBTREECOM, _T.SUBTREELINVEL, _T.SUBTREEANGMOM, _T.ACCELEROMETER, _T.VELOCIMETER, _T.GYRO,
         _T.MAGNETOMETER, _T.FORCE, _T.TORQUE}

#: Kinds that accept a reference frame (MuJoCo's ``reftype``/``refname``).
REFERENCE_TYPES = frozenset({_T.FRAMEPOS, _T.FRAMEQUAT, _T.FRAMEXAXIS, _T.FRAMEYAXIS, _T.FRAMEZAXIS, _T.FRAMELINVEL,
                             _T.FRAMEANGVEL})
#: Kinds whose object must be a site (a SHAPE).
SITE_TYPES = frozenset({_T.ACCELEROMETER, _T.VELOCIMETER, _T.GYRO, _T.MAGNETOMETER, _T.FORCE, _T.TORQUE, _T.TOUCH,
                        _T.RANGEFINDER})
#: Kinds on a scalar DOF (REVOLUTE, PRISMATIC, D6).
SCALAR_DOF_TYPES = frozenset({_T.JOINTPOS, _T.JOINTVEL, _T.JOINTACTFRC})
#: Kinds on a BALL joint (object: its first DOF).
BALL_TYPES = frozenset({_T.BALLQUAT, _T.BALLANGVEL})
#: Kinds that read the step's joint accelerations.
ACCELERATION_TYPES = frozenset({_T.FRAMELINACC, _T.FRAMEANGACC, _T.ACCELEROMETER, _T.FORCE, _T.TORQUE})


def sensor_dim(kind: SensorType) -> int:
    """Output size of a sensor kind."""
    kind = SensorType(kind)
    if kind in (SensorType.FRAMEQUAT, SensorType.BALLQUAT):
        return 4
    return 3 if kind in _DIM3 or kind == SensorType.BALLANGVEL else 1


def sensor_datatype(kind: SensorType) -> SensorDataType:
    """How ``cutoff`` applies to a sensor kind (MuJoCo's data type of it)."""
    kind = SensorType(kind)
    if kind in (SensorType.FRAMEQUAT, SensorType.BALLQUAT):
        return SensorDataType.QUATERNION
    if kind in (SensorType.FRAMEXAXIS, SensorType.FRAMEYAXIS, SensorType.FRAMEZAXIS):
        return SensorDataType.AXIS
    if kind == SensorType.TOUCH:
        return SensorDataType.POSITIVE
    return SensorDataType.REAL


def object_kind(kind: SensorType) -> tuple[SensorObjType, ...]:
    """Object types a sensor kind accepts."""
    kind = SensorType(kind)
    if kind in SCALAR_DOF_TYPES or kind in BALL_TYPES:
        return (SensorObjType.DOF,)
    if kind in (SensorType.TENDONPOS, SensorType.TENDONVEL, SensorType.TENDONACTFRC):
        return (SensorObjType.TENDON,)
    if kind == SensorType.CLOCK:
        return (SensorObjType.NONE,)
    if kind in SITE_TYPES:
        return (SensorObjType.SHAPE,)
    if kind in (SensorType.SUBTREECOM, SensorType.SUBTREELINVEL, SensorType.SUBTREEANGMOM):
        return (SensorObjType.BODY,)
    return (SensorObjType.BODY, SensorObjType.SHAPE)
