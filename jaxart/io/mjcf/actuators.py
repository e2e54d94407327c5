"""MuJoCo actuators → per-DOF drive settings (``target_ke/kd``, ``actuator_mode``, ``effort_limit``).

Only actuators that act on a single hinge or slide joint (``trntype`` joint / jointinparent) with a
fixed gain and either no bias (``<motor>``) or MuJoCo's position / velocity servo bias are
representable. With gear ``g`` a position servo produces the joint force
``g·(kp·(u − g q) − kv·g q̇)``; jaxart's drive ``ke (q_t − q) − kd q̇`` reproduces it with
``ke = kp g²``, ``kd = kv g²``, ``q_t = u/g``. Everything else is returned as a list of
human-readable issues for the importer's single warning.

Actuators on a tendon (``trntype`` tendon) are collected per tendon by :func:`map_tendon_actuators` with the
same classification: a servo becomes the tendon's drive (``target_ke = kp g²``, ``target_kd = kv g²``,
``target_length = u/g``; :mod:`jaxart.io.mjcf.tendons`), a motor needs nothing in the model (its force
``gain·gear·ctrl`` is ``Control.tendon_f``). ``forcerange`` (and a motor's ``ctrlrange``) becomes the tendon's
``effort_limit`` (``|gear|·max|range|``, as for joints): exact for one actuator with a symmetric range; an
asymmetric range, or limits on a tendon with several actuators (jaxart bounds their sum, MuJoCo each one),
are reported.

Activation dynamics (``dyntype`` integrator, filter, filterexact; ``actlimited``/``actrange``, ``actearly``): the
actuator is classified as above (its drive gains and effort limit go to the DOF or tendon) and
:func:`map_activations` lists it as a stateful actuator (:mod:`jaxart.sim.actuators`) whose activation sets the
motor's force (``gain·gear·act``, ``Control.joint_act`` / ``tendon_f``) or the servo's target (``act/gear``, the
position or velocity target). A muscle (``dyntype``, ``gaintype`` and ``biastype`` muscle, the same gain and bias
parameters) becomes a MUSCLE stateful actuator (gain = gear, :mod:`jaxart.laws.muscle`, its peak force resolved
from ``scale/acc0`` when negative, MuJoCo's compiled ``lengthrange``); other muscle combinations and user
dynamics are reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from jaxart.io.mjcf.flags import actuation_disabled
from jaxart.sim.actuators import ActuatorDynType, ActuatorOutput
from jaxart.sim.enums import JointTargetMode

_HINGE_SLIDE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
_JOINT_TRN = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
_TENDON_TRN = int(mujoco.mjtTrn.mjTRN_TENDON)
_STATEFUL = (int(mujoco.mjtDyn.mjDYN_INTEGRATOR), int(mujoco.mjtDyn.mjDYN_FILTER),
             int(mujoco.mjtDyn.mjDYN_FILTEREXACT), int(mujoco.mjtDyn.mjDYN_MUSCLE))


@dataclass
class DofDrive:
    """Drive settings collected for one MuJoCo DOF.

    Attributes:
        mode: :class:`JointTargetMode`.
        ke: Position gain at the joint [N/m or N·m/rad].
        kd: Velocity gain at the joint.
        effort_limit: Joint force/torque bound (``inf`` when unbounded).
        target_q: Default position target (MuJoCo's ``ctrl = 0`` clamped to ``ctrlrange``, over gear).
        scale: Joint force per unit control for motors (``gain·gear``).
        names: Names of the actuators that contributed.
    """

    mode: JointTargetMode
    ke: float = 0.0
    kd: float = 0.0
    effort_limit: float = np.inf
    target_q: float = 0.0
    scale: float = 1.0
    names: tuple[str, ...] = ()


def _name(m, a: int) -> str:
    return m.actuator(a).name or f"actuator_{a}"


def _effort(m, a: int, gear: float, gain: float, *, motor: bool) -> float:
    lim = np.inf
    if m.actuator_forcelimited[a]:
        lim = min(lim, abs(gear) * float(np.abs(m.actuator_forcerange[a]).max()))
    if motor and m.actuator_ctrllimited[a]:
        lim = min(lim, abs(gear * gain) * float(np.abs(m.actuator_ctrlrange[a]).max()))
    return lim


def _classify(m, a: int) -> tuple[DofDrive | None, str | None]:
    """One actuator → a :class:`DofDrive` or an issue string."""
    name = _name(m, a)
    gear = float(m.actuator_gear[a, 0])
    kinds = (int(m.actuator_dyntype[a]) == mujoco.mjtDyn.mjDYN_MUSCLE,
             int(m.actuator_gaintype[a]) == mujoco.mjtGain.mjGAIN_MUSCLE,
             int(m.actuator_biastype[a]) == mujoco.mjtBias.mjBIAS_MUSCLE)
    if any(kinds):
        if not all(kinds) or not np.array_equal(m.actuator_gainprm[a, :9], m.actuator_biasprm[a, :9]):
            return None, (f"actuator {name!r}: muscle dynamics/gain/bias mixed with other types or with different "
                          "gain and bias parameters not supported")
        issue = None
        if m.actuator_forcelimited[a]:
            issue = f"actuator {name!r}: a muscle's forcerange is applied as a symmetric effort limit"
        return DofDrive(JointTargetMode.EFFORT, effort_limit=_effort(m, a, gear, 1.0, motor=False), scale=gear,
                        names=(name,)), issue
    if m.actuator_gaintype[a] != mujoco.mjtGain.mjGAIN_FIXED or gear == 0.0:
        return None, f"actuator {name!r}: gain type {int(m.actuator_gaintype[a])} / zero gear not representable"
    g = float(m.actuator_gainprm[a, 0])
    b0, b1, b2 = (float(x) for x in m.actuator_biasprm[a, :3])
    dyn = int(m.actuator_dyntype[a])
    bias = int(m.actuator_biastype[a])
    if dyn and dyn not in _STATEFUL:
        return None, f"actuator {name!r}: activation dynamics type {dyn} (user) not supported"
    if bias == mujoco.mjtBias.mjBIAS_NONE:  # a motor; with dynamics ctrlrange bounds the input, not the force
        return DofDrive(JointTargetMode.EFFORT, effort_limit=_effort(m, a, gear, g, motor=not dyn),
                        scale=g * gear, names=(name,)), None
    if bias != mujoco.mjtBias.mjBIAS_AFFINE or b0 != 0.0 or g <= 0.0:
        return None, f"actuator {name!r}: dyn/gain/bias combination (dyn {dyn}, bias {bias}) not representable"
    lim = _effort(m, a, gear, g, motor=False)
    if np.isclose(b1, -g) and b2 <= 0.0:
        u0 = float(np.clip(0.0, *m.actuator_ctrlrange[a])) if m.actuator_ctrllimited[a] else 0.0
        mode = JointTargetMode.POSITION_VELOCITY if b2 < 0.0 else JointTargetMode.POSITION
        drive = DofDrive(mode, ke=g * gear**2, kd=-b2 * gear**2, effort_limit=lim, target_q=u0 / gear, names=(name,))
    elif b1 == 0.0 and np.isclose(b2, -g):
        drive = DofDrive(JointTargetMode.VELOCITY, kd=g * gear**2, effort_limit=lim, names=(name,))
    else:
        return None, f"actuator {name!r}: affine bias {[b0, b1, b2]} is neither a position nor a velocity servo"
    return drive, None


def _merge(old: DofDrive, new: DofDrive, *, motors_add: bool = False) -> DofDrive | None:
    """Combine a position-only and a velocity-only servo on one DOF (with ``motors_add``, also a motor and any
    drive: the motor only adds a feed-forward force); ``None`` when they conflict."""
    pair = {old.mode, new.mode}
    if motors_add and JointTargetMode.EFFORT in pair:
        keep = old if new.mode == JointTargetMode.EFFORT else new
        return DofDrive(keep.mode, ke=keep.ke, kd=keep.kd, effort_limit=min(old.effort_limit, new.effort_limit),
                        target_q=keep.target_q, names=old.names + new.names)
    if pair != {JointTargetMode.POSITION, JointTargetMode.VELOCITY}:
        return None
    pos = old if old.mode == JointTargetMode.POSITION else new
    vel = new if pos is old else old
    return DofDrive(JointTargetMode.POSITION_VELOCITY, ke=pos.ke, kd=vel.kd,
                    effort_limit=min(pos.effort_limit, vel.effort_limit), target_q=pos.target_q,
                    names=old.names + new.names)


def map_actuators(m) -> tuple[dict[int, DofDrive], list[str]]:
    """Collect drive settings per MuJoCo DOF index.

    Args:
        m: Compiled ``mujoco.MjModel``.

    Returns:
        ``(drives, issues)``: drives keyed by MuJoCo DOF index, and one message per actuator that
        could not be represented (or was approximated). None with ``actuation`` disabled.
    """
    drives: dict[int, DofDrive] = {}
    issues: list[str] = []
    if actuation_disabled(m):
        return drives, issues
    for a in range(m.nu):
        name = _name(m, a)
        trn = int(m.actuator_trntype[a])
        jnt = int(m.actuator_trnid[a, 0])
        if trn == _TENDON_TRN:  # map_tendon_actuators
            continue
        if trn not in _JOINT_TRN or int(m.jnt_type[jnt]) not in _HINGE_SLIDE:
            what = "a ball/free joint" if trn in _JOINT_TRN else f"transmission type {trn} (site/body/crank)"
            issues.append(f"actuator {name!r} on {what}")
            continue
        drive, issue = _classify(m, a)
        if issue:
            issues.append(issue)
        if drive is None:
            continue
        _add_drive(drives, int(m.jnt_dofadr[jnt]), drive, issues, what=f"joint {m.joint(jnt).name!r}")
    return drives, issues


def _add_drive(drives: dict, key: int, drive: DofDrive, issues: list[str], *, what: str,
               motors_add: bool = False) -> None:
    """Put ``drive`` at ``drives[key]``, merged with the drive already there (:func:`_merge`); a conflicting one
    is reported and ignored."""
    old = drives.get(key)
    if old is not None:
        merged = _merge(old, drive, motors_add=motors_add)
        if merged is None:
            issues.append(f"actuator {drive.names[0]!r}: {what} already driven by {old.names}; ignored")
            return
        drive = merged
    drives[key] = drive


def map_tendon_actuators(m) -> tuple[dict[int, DofDrive], list[str]]:
    """Collect drive settings per MuJoCo tendon from the actuators with a tendon transmission.

    Args:
        m: Compiled ``mujoco.MjModel``.

    Returns:
        ``(drives, issues)``: drives keyed by MuJoCo tendon id (``ke``/``kd``/``target_q``/``effort_limit`` are the
        tendon's ``target_ke``/``target_kd``/``target_length``/``effort_limit``; ``EFFORT`` for motors), and the
        actuators that could not be represented or were approximated. None with ``actuation`` disabled.
    """
    drives: dict[int, DofDrive] = {}
    issues: list[str] = []
    if actuation_disabled(m):
        return drives, issues
    for a in range(m.nu):
        if int(m.actuator_trntype[a]) != _TENDON_TRN:
            continue
        name = _name(m, a)
        ten = int(m.actuator_trnid[a, 0])
        drive, issue = _classify(m, a)
        if issue:
            issues.append(issue)
        if drive is None:
            continue
        rng = m.actuator_forcerange[a]
        if m.actuator_forcelimited[a] and rng[0] != -rng[1]:
            issues.append(f"actuator {name!r}: asymmetric forcerange {rng.tolist()} on a tendon applied as "
                          f"±{float(np.abs(rng).max())}·|gear| (effort_limit {drive.effort_limit})")
        _add_drive(drives, ten, drive, issues, what=f"tendon {m.tendon(ten).name or ten!r}", motors_add=True)
    for drive in drives.values():
        if len(drive.names) > 1 and np.isfinite(drive.effort_limit):
            issues.append(f"actuators {drive.names}: force limits of several actuators on one tendon applied to "
                          f"their sum (effort_limit {drive.effort_limit})")
    return drives, issues


@dataclass
class Activation:
    """A MuJoCo actuator with activation dynamics, as a stateful actuator (:mod:`jaxart.sim.actuators`).

    Attributes:
        actuator: MuJoCo actuator id.
        output: :class:`~jaxart.sim.actuators.ActuatorOutput`.
        target: MuJoCo DOF index (joint outputs) or tendon id (tendon outputs).
        kwargs: The remaining ``ModelBuilder.add_actuator`` arguments (dyntype, gain, timeconst, ranges, actearly).
    """

    actuator: int
    output: ActuatorOutput
    target: int
    kwargs: dict


_OUTPUTS = {JointTargetMode.EFFORT: (ActuatorOutput.JOINT_FORCE, ActuatorOutput.TENDON_FORCE),
            JointTargetMode.POSITION: (ActuatorOutput.JOINT_POSITION_TARGET, ActuatorOutput.TENDON_LENGTH_TARGET),
            JointTargetMode.POSITION_VELOCITY: (ActuatorOutput.JOINT_POSITION_TARGET,
                                                ActuatorOutput.TENDON_LENGTH_TARGET),
            JointTargetMode.VELOCITY: (ActuatorOutput.JOINT_VELOCITY_TARGET, ActuatorOutput.TENDON_VELOCITY_TARGET)}


def map_activations(m) -> list[Activation]:
    """The representable actuators with activation dynamics (none with ``actuation`` disabled).

    Args:
        m: Compiled ``mujoco.MjModel`` (option flags applied).

    Returns:
        One :class:`Activation` per hinge/slide-joint or tendon actuator whose ``dyntype`` is integrator, filter or
        filterexact and whose gain/bias :func:`map_actuators` represents.
    """
    out: list[Activation] = []
    if actuation_disabled(m):
        return out
    for a in range(m.nu):
        trn, dyn = int(m.actuator_trntype[a]), int(m.actuator_dyntype[a])
        jnt = int(m.actuator_trnid[a, 0])
        if dyn not in _STATEFUL:
            continue
        on_tendon = trn == _TENDON_TRN
        if not on_tendon and (trn not in _JOINT_TRN or int(m.jnt_type[jnt]) not in _HINGE_SLIDE):
            continue
        drive, _ = _classify(m, a)
        if drive is None:
            continue
        gear = float(m.actuator_gear[a, 0])
        output = _OUTPUTS[drive.mode][int(on_tendon)]
        gain = drive.scale if drive.mode == JointTargetMode.EFFORT else 1.0 / gear
        muscle = _muscle_row(m, a) if dyn == mujoco.mjtDyn.mjDYN_MUSCLE else None
        kwargs = dict(dyntype=ActuatorDynType(dyn), gain=gain, muscle=muscle,
                      timeconst=0.0 if muscle is not None else float(m.actuator_dynprm[a, 0]),
                      ctrlrange=tuple(m.actuator_ctrlrange[a]) if m.actuator_ctrllimited[a] else None,
                      actrange=tuple(m.actuator_actrange[a]) if m.actuator_actlimited[a] else None,
                      actearly=bool(m.actuator_actearly[a]), label=_name(m, a))
        out.append(Activation(a, output, jnt if on_tendon else int(m.jnt_dofadr[jnt]), kwargs))
    return out


def _muscle_row(m, a: int) -> np.ndarray:
    """``Model.actuator_muscle`` row of MuJoCo muscle ``a`` (:data:`jaxart.laws.muscle.MUSCLE_COLUMNS` order)."""
    prm = np.asarray(m.actuator_gainprm[a, :9], dtype=np.float64)
    force = prm[2] if prm[2] >= 0.0 else prm[3] / max(1e-15, float(m.actuator_acc0[a]))
    return np.concatenate([m.actuator_dynprm[a, :3], prm[:2], [force], prm[4:9], m.actuator_lengthrange[a]])
