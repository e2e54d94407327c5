"""Sensors of the MuJoCo bridge: the model's sensor table → MuJoCo sensors, in the model's order.

Every :class:`~jaxart.sim.sensor_types.SensorType` is MuJoCo's sensor of the same name (``JOINTACTFRC`` →
``jointactuatorfrc``, ``TENDONACTFRC`` → ``tendonactuatorfrc``) with the sensor's ``cutoff``, so MuJoCo's
``sensordata`` has the model's layout (``sensor_adr``/``sensor_dim``). Objects:

* frame, site and reference objects (a body or shape composed with ``sensor_obj_xform``/``sensor_ref_xform``) → a
  new site ``<sensor label>__obj`` / ``__ref`` on the object's MuJoCo body at that frame; site sensors' sites take
  the shape's type and size (TOUCH reads its volume); the world body (−1) → a site on MuJoCo's world body;
* scalar / BALL DOFs → the MuJoCo joint of that DOF; tendons → the tendon of the same label; subtree sensors →
  the body's MuJoCo body (the world for −1; its subtree also holds loop joints' auxiliary bodies of
  :data:`~jaxart.solvers.mujoco.loops.AUX_MASS` each); ``sensor_magnetic_field`` → ``opt.magnetic``.

``JOINTACTFRC`` reads MuJoCo's actuator force at the joint, so each sensed DOF gets a motor
``<sensor label>__act`` whose ``ctrl`` is ``Control.joint_act`` (instead of ``qfrc_applied``): the joint's
``actfrcrange`` then clamps drive plus ``joint_act`` together, jaxart's ``clip(drive + joint_act)``. MuJoCo's
``jointactuatorfrc`` also counts the actuators of tendons through the joint, jaxart's JOINTACTFRC does not:
:func:`joint_actuator_forces` re-reads those rows as the joint's own actuators' forces (:class:`JointForceRows`).

Not mapped (left out of the converted model with a warning naming them; ``SolverMuJoCo.sensor_data`` then raises
``NotImplementedError``, stepping is unaffected): objects on massless links folded into another MuJoCo body,
DOFs without a MuJoCo joint (loop-closing joints), TOUCH on a plane, mesh or height-field shape. MJX's rays do not
hit cylinders (a warning when rangefinders and cylinders meet; MuJoCo C's ``mj_forward`` on ``mj_model`` does).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import TYPE_CHECKING

import jax.numpy as jnp
import mujoco
import numpy as np

from jaxart.sim.enums import GeoType as G
from jaxart.sim.sensor_types import BALL_TYPES, SCALAR_DOF_TYPES, SITE_TYPES, SensorObjType, SensorType
from jaxart.sim.validate import np_transform_inverse, np_transform_mul
from jaxart.solvers.mujoco.shapes import wxyz

if TYPE_CHECKING:
    import jax

_SITE_GEOMS = {G.SPHERE: mujoco.mjtGeom.mjGEOM_SPHERE, G.CAPSULE: mujoco.mjtGeom.mjGEOM_CAPSULE,
               G.CYLINDER: mujoco.mjtGeom.mjGEOM_CYLINDER, G.BOX: mujoco.mjtGeom.mjGEOM_BOX,
               G.ELLIPSOID: mujoco.mjtGeom.mjGEOM_ELLIPSOID}
_TENDON_TYPES = (SensorType.TENDONPOS, SensorType.TENDONVEL, SensorType.TENDONACTFRC)
_SUBTREE_TYPES = (SensorType.SUBTREECOM, SensorType.SUBTREELINVEL, SensorType.SUBTREEANGMOM)
_IDENT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


class _Frames:
    """MuJoCo bodies and body-frame offsets of jaxart bodies (host side)."""

    def __init__(self, spec, h, body_joint: dict, rec) -> None:
        self.spec, self.h, self.body_joint, self.rec = spec, h, body_joint, rec

    def body(self, b: int, what: str):
        """``(MuJoCo body spec, pose of the jaxart body frame in it)``."""
        if b < 0:
            return self.spec.worldbody, _IDENT
        name = self.rec.body.get(b)
        if name != self.h.body_label[b]:
            raise NotImplementedError(f"{what}: body {self.h.body_label[b]!r} is a massless link folded into MuJoCo "
                                      f"body {name!r}; its frame moves inside that body")
        j = self.body_joint.get(b)
        offset = _IDENT if j is None else self.h.joint_X_c[j]
        return self.spec.body(name), np_transform_inverse(offset)

    def add_site(self, name: str, otype: int, oid: int, xform: np.ndarray, what: str, *, volume: bool) -> str:
        """A site named ``name`` at the frame of object ``(otype, oid)`` composed with ``xform``."""
        h = self.h
        shape = otype == int(SensorObjType.SHAPE)
        body, to_mj = self.body(int(h.shape_body[oid]) if shape else oid, what)
        x = np_transform_mul(h.shape_transform[oid], xform) if shape else xform
        x = np_transform_mul(to_mj, x)
        kind, size = mujoco.mjtGeom.mjGEOM_SPHERE, np.array([0.005, 0.0, 0.0])
        if shape and volume:
            geo = G(int(h.shape_type[oid]))
            if geo not in _SITE_GEOMS:
                raise NotImplementedError(f"{what}: its shape {h.shape_label[oid]!r} is a {geo.name}; a MuJoCo "
                                          "site (the sensor's volume) must be a primitive")
            kind, size = _SITE_GEOMS[geo], np.asarray(h.shape_scale[oid], np.float64)
        body.add_site(name=name, type=kind, size=size, pos=x[:3], quat=wxyz(x[3:]))
        return name


def _mj_joint(rec, dof: int, kind: SensorType, what: str) -> str:
    entries = rec.ball if kind in BALL_TYPES else rec.scalar
    for name, _, d in entries:
        if d == dof:
            return name
    raise NotImplementedError(f"{what}: DOF {dof} has no MuJoCo joint (a loop-closing joint)")


def add_sensors(spec: mujoco.MjSpec, h, body_joint: dict, rec) -> None:
    """Add the model's sensors to ``spec`` in the model's order (see the module docstring).

    Args:
        spec: The spec being built (bodies, joints, shapes, tendons and actuators already added).
        h: The converter's host copy of the model.
        body_joint: ``{body: tree joint}``.
        rec: The layout recorder (``rec.body``, ``rec.scalar``, ``rec.ball`` filled); JOINTACTFRC motors are
            recorded in ``rec.act_motor``, sensors left out (module docstring) in ``rec.sensors_skipped``.
    """
    model = h.model
    st = model.sensor
    if not st.sensor_count:
        return
    spec.option.magnetic = np.asarray(model.sensor_magnetic_field, np.float64)
    cutoff = np.asarray(model.sensor_cutoff, np.float64)
    frames = _Frames(spec, h, body_joint, rec)
    motors: dict[int, str] = {}
    for k in range(st.sensor_count):
        label, kind = st.sensor_label[k], SensorType(int(st.sensor_type.array[k]))
        what = f"SolverMuJoCo: sensor {label!r} ({kind.name})"
        sensor = spec.add_sensor(name=label, type=getattr(mujoco.mjtSensor, f"mjSENS_{kind.name}"),
                                 cutoff=float(cutoff[k]))
        try:
            _map_sensor(sensor, k, kind, what, frames, motors)
        except NotImplementedError as e:
            spec.delete(sensor)
            rec.sensors_skipped.append(str(e))
    if rec.sensors_skipped:
        warnings.warn("SolverMuJoCo: sensors without a MuJoCo counterpart are left out of the converted model "
                      "(sensor_data raises; stepping is unaffected): " + "; ".join(rec.sensors_skipped), stacklevel=4)
    rec.act_motor = [(name, dof) for dof, name in motors.items()]
    if SensorType.RANGEFINDER in {int(t) for t in st.sensor_type.array}:
        if not len(spec.materials):
            spec.add_material(name="jaxart_ray_material")  # MJX's ray indexes mat_rgba, which needs one row
        if np.any(h.shape_type == G.CYLINDER):
            warnings.warn("SolverMuJoCo: MJX's rays do not hit cylinders: SolverMuJoCo.sensor_data's rangefinders "
                          "miss cylinder shapes (MuJoCo C's mj_forward on the converted model sees them)", stacklevel=4)


def _map_sensor(sensor, k: int, kind: SensorType, what: str, frames: _Frames, motors: dict) -> None:
    """Set the MuJoCo object (and reference) of sensor ``k`` (``NotImplementedError`` when it has none)."""
    spec, rec, model = frames.spec, frames.rec, frames.h.model
    st = model.sensor
    otype, oid = int(st.sensor_objtype.array[k]), int(st.sensor_objid.array[k])
    label = st.sensor_label[k]
    obj_x, ref_x = (np.asarray(x, np.float64)[k] for x in (model.sensor_obj_xform, model.sensor_ref_xform))
    if kind in SCALAR_DOF_TYPES or kind in BALL_TYPES:
        sensor.objtype, sensor.objname = mujoco.mjtObj.mjOBJ_JOINT, _mj_joint(rec, oid, kind, what)
        if kind == SensorType.JOINTACTFRC and oid not in motors:
            motors[oid] = _joint_act_motor(spec, f"{label}__act", sensor.objname)
    elif kind in _TENDON_TYPES:
        sensor.objtype, sensor.objname = mujoco.mjtObj.mjOBJ_TENDON, model.tendon.tendon_label[oid]
    elif kind in _SUBTREE_TYPES:
        sensor.objtype = mujoco.mjtObj.mjOBJ_BODY
        sensor.objname = "world" if oid < 0 else rec.body[oid]  # a folded massless link: its child's subtree
    elif kind != SensorType.CLOCK:
        sensor.objtype = mujoco.mjtObj.mjOBJ_SITE
        sensor.objname = frames.add_site(f"{label}__obj", otype, oid, obj_x, what, volume=kind in SITE_TYPES)
        if kind == SensorType.RANGEFINDER:
            sensor.intprm = [1, 0, 0]  # MuJoCo's data spec: the distance only
        rtype = int(st.sensor_reftype.array[k])
        if rtype != int(SensorObjType.NONE):
            sensor.reftype = mujoco.mjtObj.mjOBJ_SITE
            sensor.refname = frames.add_site(f"{label}__ref", rtype, int(st.sensor_refid.array[k]), ref_x, what,
                                             volume=False)


def _joint_act_motor(spec: mujoco.MjSpec, name: str, joint: str) -> str:
    """A unit motor on ``joint`` (``ctrl`` = ``Control.joint_act`` of its DOF)."""
    act = spec.add_actuator(name=name, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
    act.biastype = mujoco.mjtBias.mjBIAS_NONE
    gp = np.zeros(10)
    gp[0] = 1.0
    act.gainprm = gp
    return name



@dataclasses.dataclass(frozen=True, eq=False)
class JointForceRows:
    """JOINTACTFRC rows of ``sensordata`` and the actuators of their joints (host arrays).

    Attributes:
        adr: ``(k,)`` sensordata index of each JOINTACTFRC sensor.
        act: ``(k, n)`` actuator ids with a joint transmission on the sensed joint (padded with 0).
        mask: ``(k, n)`` 1 where ``act`` is a real entry.
        limit: ``(k,)`` the joint's ``actfrcrange`` bound [N or N·m] (``inf`` when not limited).
        cutoff: ``(k,)`` the sensor's cutoff (0 = none).
    """

    adr: np.ndarray
    act: np.ndarray
    mask: np.ndarray
    limit: np.ndarray
    cutoff: np.ndarray


def joint_force_rows(mj_model) -> JointForceRows | None:
    """The JOINTACTFRC rows of a compiled converted model (``None`` without such sensors)."""
    m = mj_model
    rows = [i for i in range(m.nsensor) if int(m.sensor_type[i]) == int(mujoco.mjtSensor.mjSENS_JOINTACTFRC)]
    if not rows:
        return None
    joint_trn = int(mujoco.mjtTrn.mjTRN_JOINT)
    acts = [[a for a in range(m.nu) if int(m.actuator_trntype[a]) == joint_trn
             and int(m.actuator_trnid[a, 0]) == int(m.sensor_objid[i])] for i in rows]
    n = max(1, max(len(a) for a in acts))
    limit = [float(np.max(np.abs(m.jnt_actfrcrange[m.sensor_objid[i]]))) if m.jnt_actfrclimited[m.sensor_objid[i]]
             else np.inf for i in rows]
    return JointForceRows(adr=np.asarray([m.sensor_adr[i] for i in rows], np.int32),
                          act=np.asarray([a + [0] * (n - len(a)) for a in acts], np.int32),
                          mask=np.asarray([[1.0] * len(a) + [0.0] * (n - len(a)) for a in acts]),
                          limit=np.asarray(limit), cutoff=np.asarray([m.sensor_cutoff[i] for i in rows]))


def joint_actuator_forces(rows: JointForceRows | None, sensordata: jax.Array, actuator_force: jax.Array) -> jax.Array:
    """``sensordata`` with its JOINTACTFRC rows = the joint's own actuators' force, clamped, then cut off.

    Args:
        rows: The plan (:func:`joint_force_rows`; ``None``: ``sensordata`` is returned unchanged).
        sensordata: ``(nsensordata,)`` MuJoCo's sensor values.
        actuator_force: ``(nu,)`` MuJoCo's ``actuator_force`` at the same state [N or N·m].
    """
    if rows is None:
        return sensordata
    dtype = sensordata.dtype
    force = jnp.sum(actuator_force[rows.act] * jnp.asarray(rows.mask, dtype), axis=1)
    force = jnp.clip(force, -rows.limit, rows.limit)
    cut = jnp.asarray(rows.cutoff, dtype)
    force = jnp.where(cut > 0.0, jnp.clip(force, -cut, cut), force)
    return sensordata.at[rows.adr].set(force)
