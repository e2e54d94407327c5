"""UsdPhysics joint descriptors → jaxart joint types and DOF configs (units converted).

=========================  =====================================================================
UsdPhysics                 jaxart
=========================  =====================================================================
PhysicsFixedJoint          FIXED
PhysicsRevoluteJoint       REVOLUTE about the joint frame's X/Y/Z; limits/targets deg → rad
PhysicsPrismaticJoint      PRISMATIC along X/Y/Z; lengths × ``metersPerUnit``
PhysicsSphericalJoint      BALL (cone limits are reported, not imported)
PhysicsDistanceJoint       DISTANCE with ``min/maxDistance`` (−1 = that side unlimited)
PhysicsJoint (generic)     D6 following the UsdPhysics spec: every axis is free unless a
                           ``PhysicsLimitAPI:<axis>`` locks it (low > high); enabled limits with
                           low ≤ high limit the axis. Free axes in the order transX, transY, transZ,
                           rotX, rotY, rotZ; angular coordinates compose as ``Rx·Ry·Rz`` (jaxart's D6).
                           All axes locked → FIXED. (Newton keeps only the axes that carry a
                           LimitAPI; an unlimited generic joint is free here, as the spec says.)
                           When ``body1`` must be the parent, axes are negated and angular axes
                           reversed (the inverse motion); linear + angular together then raise.
DriveAPI                   ``target_ke/kd`` (per degree → per radian), ``target_q/qd``,
                           ``maxForce`` → ``effort_limit``; acceleration drives are reported
``state:<axis>:physics:``  initial ``joint_q``/``joint_qd`` (PhysxJointStateAPI attribute names, as
``position/velocity``      Newton reads them)
=========================  =====================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from jaxart.sim.configs import JointDofConfig
from jaxart.sim.enums import JointType

DEG = math.pi / 180.0
_UNIT = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_D6_LIN = ("transX", "transY", "transZ")
_D6_ANG = ("rotX", "rotY", "rotZ")
JOINT_KINDS = {"FixedJoint": JointType.FIXED, "RevoluteJoint": JointType.REVOLUTE,
               "PrismaticJoint": JointType.PRISMATIC, "SphericalJoint": JointType.BALL,
               "DistanceJoint": JointType.DISTANCE, "D6Joint": JointType.D6}


@dataclass
class JointSpec:
    """A joint ready for ``ModelBuilder.add_joint`` (frames are set by the importer)."""

    jtype: JointType
    linear: list = field(default_factory=list)
    angular: list = field(default_factory=list)
    q0: list = field(default_factory=list)
    qd0: list = field(default_factory=list)
    distance: tuple[float, float] | None = None


@dataclass
class Units:
    """Stage units: ``length`` = metersPerUnit, ``mass`` = kilogramsPerUnit."""

    length: float = 1.0
    mass: float = 1.0


def joint_spec(kind: str, desc, prim, units: Units, *, swapped: bool, default: JointDofConfig,
               issues: list[str]) -> JointSpec:
    """Translate one joint descriptor.

    Args:
        kind: ``UsdPhysics.ObjectType`` name of the descriptor.
        desc: The joint descriptor.
        prim: The joint prim (for the initial-state attributes).
        units: Stage units.
        swapped: The importer made ``body1`` the parent; 1-DOF axes are negated so ``q`` keeps its sign.
        default: Builder's default DOF config (limit gains, armature, …).
        issues: Report list (appended to).

    Raises:
        NotImplementedError: A D6 with linear and angular axes whose ``body1`` had to become the parent.
    """
    path = str(desc.primPath)
    jt = JOINT_KINDS[kind]
    if np.isfinite(desc.breakForce) or np.isfinite(desc.breakTorque):
        issues.append(f"joint {path!r}: breakForce/breakTorque (breakable joints) not imported")
    if kind == "FixedJoint":
        return JointSpec(JointType.FIXED)
    if kind == "SphericalJoint":
        if desc.limit.enabled:
            issues.append(f"joint {path!r}: spherical cone limit ({desc.limit.lower}°, {desc.limit.upper}°) "
                          "not imported (BALL joints have no cone limits)")
        return JointSpec(JointType.BALL)
    if kind == "DistanceJoint":
        lo = desc.limit.lower * units.length if desc.minEnabled else -1.0
        hi = desc.limit.upper * units.length if desc.maxEnabled else -1.0
        return JointSpec(JointType.DISTANCE, distance=(lo, hi))
    if kind in ("RevoluteJoint", "PrismaticJoint"):
        ang = kind == "RevoluteJoint"
        limit = desc.limit if desc.limit.enabled else None
        cfg = _dof(_UNIT[str(desc.axis.name)], ang, limit, desc.drive, units, default, path, issues)
        name = "angular" if ang else "linear"
        q0, qd0 = _state(prim, name, ang, units)
        if swapped:
            cfg.axis = -cfg.axis
        return JointSpec(jt, linear=[] if ang else [cfg], angular=[cfg] if ang else [], q0=[q0], qd0=[qd0])
    return _d6(desc, prim, units, default, path, issues, swapped=swapped)


def _d6(desc, prim, units: Units, default: JointDofConfig, path: str, issues: list[str], *,
        swapped: bool) -> JointSpec:
    limits = {str(p.first.name)[0].lower() + str(p.first.name)[1:]: p.second for p in desc.jointLimits}
    drives = {str(p.first.name)[0].lower() + str(p.first.name)[1:]: p.second for p in desc.jointDrives}
    if "distance" in limits and limits["distance"].enabled:
        issues.append(f"joint {path!r}: generic-joint distance limit not imported")
    spec = JointSpec(JointType.D6)
    for names, ang in ((_D6_LIN, False), (_D6_ANG, True)):
        for k, name in enumerate(names):
            lim = limits.get(name)
            if lim is not None and lim.enabled and lim.lower > lim.upper:
                continue  # locked axis
            lim = lim if (lim is not None and lim.enabled) else None
            axis = np.eye(3)[k]
            cfg = _dof(axis, ang, lim, drives.get(name), units, default, f"{path} ({name})", issues)
            (spec.angular if ang else spec.linear).append(cfg)
            q0, qd0 = _state(prim, name, ang, units)
            spec.q0.append(q0)
            spec.qd0.append(qd0)
    for name, drv in drives.items():
        if name not in (*_D6_LIN, *_D6_ANG) or (drv.enabled and _locked(limits.get(name))):
            issues.append(f"joint {path!r}: drive on locked or unknown axis {name!r} not imported")
    if not spec.linear and not spec.angular:
        return JointSpec(JointType.FIXED)
    return _reversed(spec, path) if swapped else spec


def _reversed(spec: JointSpec, path: str) -> JointSpec:
    """The D6 seen from body1 (the importer made it the parent): the inverse motion, same coordinate values.

    ``(T(Σ a_k q_k))⁻¹ = T(Σ (−a_k) q_k)`` and ``(R(a_1, q_1)···R(a_n, q_n))⁻¹ = R(−a_n, q_n)···R(−a_1, q_1)``:
    axes negated, angular axes (and their coordinates) in reverse order. A joint with both linear and
    angular axes has no such form (``(T·R)⁻¹ = R⁻¹·T⁻¹``; jaxart's D6 translates first).

    Raises:
        NotImplementedError: Linear and angular axes together.
    """
    if spec.linear and spec.angular:
        raise NotImplementedError(
            f"add_usd: joint {path!r} is a generic (D6) joint with both linear and angular axes whose body1 must "
            "become the parent (the reversed motion rotates before it translates, which jaxart's D6 cannot "
            "represent); author body0 as the parent side of the tree")
    for c in (*spec.linear, *spec.angular):
        c.axis = -c.axis
    if spec.angular:
        spec.angular.reverse()
        spec.q0.reverse()
        spec.qd0.reverse()
    return spec


def _locked(lim) -> bool:
    return lim is not None and lim.enabled and lim.lower > lim.upper


def _dof(axis, angular: bool, limit, drive, units: Units, default: JointDofConfig, what: str,
         issues: list[str]) -> JointDofConfig:
    """One DOF config with USD → SI conversion (degrees for angular DOFs)."""
    pos = DEG if angular else units.length                      # coordinate unit → rad or m
    force = units.mass * units.length * (units.length if angular else 1.0)   # N or N·m per stage unit
    gain = force / pos                                          # ke, kd: per coordinate unit → per rad / m
    kw = dict(axis=axis, limit_ke=default.limit_ke, limit_kd=default.limit_kd, armature=default.armature,
              friction=default.friction, velocity_limit=default.velocity_limit, effort_limit=default.effort_limit)
    if limit is not None:
        lo, hi = float(limit.lower), float(limit.upper)
        kw["limit_lower"] = max(lo * pos, -1e10) if np.isfinite(lo) else -1e10
        kw["limit_upper"] = min(hi * pos, 1e10) if np.isfinite(hi) else 1e10
        if kw["limit_lower"] > kw["limit_upper"]:
            raise ValueError(f"add_usd: joint {what}: lower limit {lo} exceeds upper limit {hi}")
    if drive is not None and drive.enabled:
        if drive.acceleration:
            issues.append(f"joint {what}: acceleration drive imported as a force drive (gains not mass-scaled)")
        kw.update(target_ke=float(drive.stiffness) * gain, target_kd=float(drive.damping) * gain,
                  target_q=float(drive.targetPosition) * pos, target_qd=float(drive.targetVelocity) * pos)
        if np.isfinite(drive.forceLimit) and drive.forceLimit < 1e30:
            kw["effort_limit"] = float(drive.forceLimit) * force
    try:
        return JointDofConfig(**kw)
    except ValueError as e:
        raise ValueError(f"add_usd: joint {what}: {e}") from None


def _state(prim, name: str, angular: bool, units: Units) -> tuple[float, float]:
    """Initial position / velocity from ``state:<name>:physics:position|velocity`` (0 when unauthored)."""
    scale = DEG if angular else units.length
    out = []
    for what in ("position", "velocity"):
        attr = prim.GetAttribute(f"state:{name}:physics:{what}") if prim else None
        v = attr.Get() if attr and attr.HasAuthoredValue() else None
        out.append(0.0 if v is None else float(v) * scale)
    return out[0], out[1]
