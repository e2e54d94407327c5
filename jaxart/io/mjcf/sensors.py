"""MuJoCo sensors → the model's sensor table (``ModelBuilder.add_sensor``), by name and in MJCF order.

Imported kinds (MuJoCo name → :class:`~jaxart.sim.sensor_types.SensorType` of the same name): jointpos, jointvel,
ballquat, ballangvel, tendonpos, tendonvel, jointactuatorfrc, tendonactuatorfrc, actuatorpos / actuatorvel (gear 1 on a
hinge/slide joint or tendon: JOINTPOS/VEL, TENDONPOS/VEL), actuatorfrc (gear 1, the only actuator on its joint or
tendon: JOINTACTFRC / TENDONACTFRC), framepos, framequat, framexaxis/yaxis/zaxis, framelinvel,
frameangvel, framelinacc, frameangacc, subtreecom, subtreelinvel, subtreeangmom, accelerometer, velocimeter, gyro,
magnetometer (``opt.magnetic`` → ``sensor_magnetic_field``), force, torque, touch, rangefinder (site rays with the
distance output only) and clock, with ``cutoff``. Objects and reference frames: sites and geoms (their shapes),
``xbody`` (the body frame), ``body`` (the inertial frame: the body frame with the ``obj_xform`` ``(ipos, iquat)``)
and cameras (their body with the camera pose as offset).

Everything else (other kinds, noise, delays/intervals, camera rangefinders, objects that were not imported as
scalar DOFs) is reported in the importer's one warning and dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from jaxart.io.mjcf.convert import IDENTITY, pose
from jaxart.io.mjcf.refs import element_key
from jaxart.sim.sensor_types import BALL_TYPES, REFERENCE_TYPES, SCALAR_DOF_TYPES, SensorObjType, SensorType

_S = mujoco.mjtSensor
_O = mujoco.mjtObj
_KINDS = {
    _S.mjSENS_JOINTPOS: SensorType.JOINTPOS, _S.mjSENS_JOINTVEL: SensorType.JOINTVEL,
    _S.mjSENS_TENDONPOS: SensorType.TENDONPOS, _S.mjSENS_TENDONVEL: SensorType.TENDONVEL,
    _S.mjSENS_JOINTACTFRC: SensorType.JOINTACTFRC, _S.mjSENS_TENDONACTFRC: SensorType.TENDONACTFRC,
    _S.mjSENS_BALLQUAT: SensorType.BALLQUAT, _S.mjSENS_BALLANGVEL: SensorType.BALLANGVEL,
    _S.mjSENS_ACTUATORFRC: None, _S.mjSENS_ACTUATORPOS: None, _S.mjSENS_ACTUATORVEL: None,  # per actuator
    _S.mjSENS_FRAMEPOS: SensorType.FRAMEPOS, _S.mjSENS_FRAMEQUAT: SensorType.FRAMEQUAT,
    _S.mjSENS_FRAMEXAXIS: SensorType.FRAMEXAXIS, _S.mjSENS_FRAMEYAXIS: SensorType.FRAMEYAXIS,
    _S.mjSENS_FRAMEZAXIS: SensorType.FRAMEZAXIS, _S.mjSENS_FRAMELINVEL: SensorType.FRAMELINVEL,
    _S.mjSENS_FRAMEANGVEL: SensorType.FRAMEANGVEL, _S.mjSENS_FRAMELINACC: SensorType.FRAMELINACC,
    _S.mjSENS_FRAMEANGACC: SensorType.FRAMEANGACC, _S.mjSENS_SUBTREECOM: SensorType.SUBTREECOM,
    _S.mjSENS_SUBTREELINVEL: SensorType.SUBTREELINVEL, _S.mjSENS_SUBTREEANGMOM: SensorType.SUBTREEANGMOM,
    _S.mjSENS_ACCELEROMETER: SensorType.ACCELEROMETER, _S.mjSENS_VELOCIMETER: SensorType.VELOCIMETER,
    _S.mjSENS_GYRO: SensorType.GYRO, _S.mjSENS_MAGNETOMETER: SensorType.MAGNETOMETER,
    _S.mjSENS_FORCE: SensorType.FORCE, _S.mjSENS_TORQUE: SensorType.TORQUE, _S.mjSENS_TOUCH: SensorType.TOUCH,
    _S.mjSENS_RANGEFINDER: SensorType.RANGEFINDER, _S.mjSENS_CLOCK: SensorType.CLOCK,
}
_KINDS = {int(k): v for k, v in _KINDS.items()}
_FRAME_OBJECTS = (int(_O.mjOBJ_SITE), int(_O.mjOBJ_GEOM), int(_O.mjOBJ_BODY), int(_O.mjOBJ_XBODY),
                  int(_O.mjOBJ_CAMERA))
_SCALAR_JOINTS = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


@dataclass(frozen=True)
class SensorRefs:
    """Where one ``add_mjcf`` put the objects sensors refer to.

    Attributes:
        body_of: ``body_of(mj_body, x) -> (jaxart body, x in its frame)`` (the importer's).
        dof_start: First imported DOF index in the builder.
        dof_map: MuJoCo ``qvel`` index of each imported jaxart DOF.
        geom_shape: MuJoCo geom id → shape index.
        site_shape: MuJoCo site id → shape index.
        tendons: Importer's tendon keys (name or ``"#<id>"``) → tendon index.
        label: ``label(name) -> label`` applying the import's prefix.
    """

    body_of: object
    dof_start: int
    dof_map: list
    geom_shape: dict
    site_shape: dict
    tendons: dict
    label: object


def _name(m, i: int) -> str:
    return m.sensor(i).name or f"sensor_{i}"


_ACTUATOR_KINDS = {  # MuJoCo actuator sensor → (joint kind, tendon kind, needs the actuator alone on its target)
    int(_S.mjSENS_ACTUATORFRC): (SensorType.JOINTACTFRC, SensorType.TENDONACTFRC, True),
    int(_S.mjSENS_ACTUATORPOS): (SensorType.JOINTPOS, SensorType.TENDONPOS, False),
    int(_S.mjSENS_ACTUATORVEL): (SensorType.JOINTVEL, SensorType.TENDONVEL, False),
}


def _actuator_target(m, stype: int, a: int) -> tuple[SensorType, int] | None:
    """(kind, MuJoCo joint or tendon id) of an actuator sensor when jaxart can read it (``None``: it cannot)."""
    trn, target = int(m.actuator_trntype[a]), int(m.actuator_trnid[a, 0])
    joint_kind, tendon_kind, alone = _ACTUATOR_KINDS[stype]
    if abs(float(m.actuator_gear[a, 0]) - 1.0) > 1e-12 or np.any(m.actuator_gear[a, 1:] != 0.0):
        return None
    same = [b for b in range(m.nactuator)
            if int(m.actuator_trntype[b]) == trn and int(m.actuator_trnid[b, 0]) == target]
    if alone and len(same) != 1:
        return None
    if trn in (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT)):
        return (joint_kind, target) if int(m.jnt_type[target]) in _SCALAR_JOINTS else None
    if trn == int(mujoco.mjtTrn.mjTRN_TENDON):
        return tendon_kind, target
    return None


def _issue(m, i: int) -> str | None:
    """Why sensor ``i`` cannot be imported (``None``: it can)."""
    stype, otype, oid = int(m.sensor_type[i]), int(m.sensor_objtype[i]), int(m.sensor_objid[i])
    what = f"sensor {_name(m, i)!r} ({mujoco.mjtSensor(stype).name[7:].lower()})"
    if stype not in _KINDS:
        return f"{what}: sensor type not supported (dropped)"
    kind = _KINDS[stype]
    if stype in _ACTUATOR_KINDS:
        target = _actuator_target(m, stype, oid)
        if target is None:
            alone = " alone" if _ACTUATOR_KINDS[stype][2] else ""
            return f"{what}: only actuators with gear 1{alone} on a hinge/slide joint or a tendon are read (dropped)"
        kind, oid = target
    if kind in SCALAR_DOF_TYPES and int(m.jnt_type[oid]) not in _SCALAR_JOINTS:
        return f"{what}: not a hinge or slide joint (dropped)"
    if kind == SensorType.RANGEFINDER and otype == int(_O.mjOBJ_CAMERA):
        return f"{what}: camera rangefinders (depth images) are not supported (dropped)"
    frame_kind = kind is not None and kind.name.startswith("FRAME")
    if frame_kind and otype not in _FRAME_OBJECTS:
        return f"{what}: object type {mujoco.mjtObj(otype).name} not supported (dropped)"
    if kind == SensorType.RANGEFINDER and int(m.sensor_dim[i]) != 1:
        return f"{what}: rangefinder outputs other than the distance are not supported (dropped)"
    if int(m.sensor_reftype[i]) not in (int(_O.mjOBJ_UNKNOWN),) + _FRAME_OBJECTS and int(m.sensor_refid[i]) >= 0:
        return f"{what}: reference object type not supported (dropped)"
    if kind in (SensorType.FORCE, SensorType.TORQUE) and int(m.site_bodyid[oid]) == 0:
        return f"{what}: site on the world body (dropped)"
    return None


def sensor_issues(m) -> list[str]:
    """Sensors that are dropped or approximated (for the importer's one warning)."""
    out = [msg for i in range(m.nsensor) if (msg := _issue(m, i))]
    for i in range(m.nsensor):
        if _issue(m, i) is None and float(m.sensor_noise[i]) != 0.0:
            out.append(f"sensor {_name(m, i)!r}: noise {float(m.sensor_noise[i])} not modelled (values are "
                       "noise-free)")
        delay = float(m.sensor_delay[i]) if hasattr(m, "sensor_delay") else 0.0
        interval = float(np.max(m.sensor_interval[i])) if hasattr(m, "sensor_interval") else 0.0
        if _issue(m, i) is None and (delay or interval):
            out.append(f"sensor {_name(m, i)!r}: delay/interval not modelled (values are of the current state)")
    if any(int(m.sensor_type[i]) == int(_S.mjSENS_RANGEFINDER) for i in range(m.nsensor)):
        out += _ray_issues(m)
    return out


def _ray_issues(m) -> list[str]:
    """Geoms a jaxart rangefinder sees differently from MuJoCo's ``mj_ray``."""
    out = []
    hidden = [g for g in range(m.ngeom) if m.geom_matid[g] < 0 and m.geom_rgba[g, 3] == 0.0]
    if hidden:
        out.append(f"rangefinder: {len(hidden)} transparent geom(s) are hit by jaxart's rays (MuJoCo skips them)")
    return out


def _frame(m, refs: SensorRefs, otype: int, oid: int) -> tuple[SensorObjType, int, np.ndarray]:
    """(object type, index, offset) of a MuJoCo frame object."""
    if otype == int(_O.mjOBJ_SITE):
        return SensorObjType.SHAPE, refs.site_shape[oid], IDENTITY
    if otype == int(_O.mjOBJ_GEOM):
        return SensorObjType.SHAPE, refs.geom_shape[oid], IDENTITY
    if otype == int(_O.mjOBJ_CAMERA):
        body, x = refs.body_of(int(m.cam_bodyid[oid]), pose(m.cam_pos[oid], m.cam_quat[oid]))
    elif otype == int(_O.mjOBJ_BODY):
        body, x = refs.body_of(oid, pose(m.body_ipos[oid], m.body_iquat[oid]))
    else:  # XBODY
        body, x = refs.body_of(oid, IDENTITY)
    return SensorObjType.BODY, int(body), x


def _object(m, refs: SensorRefs, i: int, kind: SensorType) -> tuple[SensorType, SensorObjType, int, np.ndarray]:
    """(kind, object type, index, offset) of sensor ``i``."""
    otype, oid = int(m.sensor_objtype[i]), int(m.sensor_objid[i])
    if int(m.sensor_type[i]) in _ACTUATOR_KINDS:
        kind, oid = _actuator_target(m, int(m.sensor_type[i]), oid)
    if kind in SCALAR_DOF_TYPES or kind in BALL_TYPES:
        dof = refs.dof_start + list(refs.dof_map).index(int(m.jnt_dofadr[oid]))
        return kind, SensorObjType.DOF, dof, IDENTITY
    if kind in (SensorType.TENDONPOS, SensorType.TENDONVEL, SensorType.TENDONACTFRC):
        return kind, SensorObjType.TENDON, refs.tendons[element_key(m.tendon(oid), oid)], IDENTITY
    if kind == SensorType.CLOCK:
        return kind, SensorObjType.NONE, -1, IDENTITY
    if kind in (SensorType.SUBTREECOM, SensorType.SUBTREELINVEL, SensorType.SUBTREEANGMOM):
        body, _ = refs.body_of(oid, IDENTITY)
        return kind, SensorObjType.BODY, int(body), IDENTITY
    return (kind, *_frame(m, refs, otype, oid))


def add_sensors(builder, m, refs: SensorRefs) -> dict[str, int]:
    """Add the importable sensors of ``m`` in MJCF order; returns ``{name or "#<id>": sensor index}``."""
    out = {}
    if any(int(t) == int(_S.mjSENS_MAGNETOMETER) for t in m.sensor_type):
        builder.set_sensor_magnetic_field(np.asarray(m.opt.magnetic, dtype=np.float64))
    for i in range(m.nsensor):
        if _issue(m, i) is not None:
            continue
        kind, otype, oid, x = _object(m, refs, i, _KINDS[int(m.sensor_type[i])])
        ref = dict(ref=-1, ref_type=SensorObjType.NONE, ref_xform=None)
        if kind in REFERENCE_TYPES and int(m.sensor_refid[i]) >= 0:
            rtype, rid, rx = _frame(m, refs, int(m.sensor_reftype[i]), int(m.sensor_refid[i]))
            ref = dict(ref=rid, ref_type=rtype, ref_xform=rx)
        name = m.sensor(i).name
        k = builder.add_sensor(kind, oid, obj_type=otype, obj_xform=x, cutoff=float(m.sensor_cutoff[i]),
                               label=refs.label(name) if name else None, **ref)
        out[element_key(m.sensor(i), i)] = k
    return out
