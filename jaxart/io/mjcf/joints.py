"""Plan how a MuJoCo body's joints become jaxart joints (single joint, D6, or a chain of links).

MuJoCo composes a body's joints in order, each about its anchor ``jnt_pos`` and axis ``jnt_axis``
given in the body frame: ``X_body = X_pb · J_0(q_0) · J_1(q_1) ⋯`` with
``J_hinge = T(p) R(a, q − ref) T(−p)``, ``J_slide = T(a (q − ref))``, ``J_ball = T(p) R(quat) T(−p)``.

* One hinge/slide/ball/free → REVOLUTE/PRISMATIC/BALL/FREE with ``joint_X_p = X_pb · T(p)`` and
  ``joint_X_c = T(p)`` (the anchor frames keep the body's orientation, so the axis is ``jnt_axis``).
* Slides followed by up to 3 mutually orthogonal hinges sharing one anchor → one D6 (linear axes =
  slides, angular = hinges, MJCF order). jaxart's D6 ``T(Σ a_i q_i) · R(a0,q0) R(a1,q1) R(a2,q2)`` is
  then exactly MuJoCo's composition.
* Anything else (different anchors, non-orthogonal axes, more than 3 hinges, balls mixed with other
  joints, slides after hinges, a non-zero ``ref`` on a hinge that is not the last one) → a chain of
  single-DOF joints through massless intermediate links ``<body>__<joint>``, each link carrying
  MuJoCo's partially-composed body frame, so FK matches MuJoCo for every body.

``ref`` (MuJoCo ``qpos0``): jaxart ``joint_q`` equals MuJoCo ``qpos`` numerically. A hinge ref is
absorbed into ``joint_X_c = T(p) R(a, ref)`` (so ``X_j(q) X_c⁻¹ = R(a, q − ref) T(−p)``), slide refs
into ``joint_X_p ·= T(−Σ a_i ref_i)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from jaxart.io.mjcf.convert import IDENTITY, axis_angle_transform, pose, solref_gains, translation
from jaxart.sim.configs import JointDofConfig
from jaxart.sim.enums import MAXVAL, Axis, JointTargetMode, JointType
from jaxart.sim.validate import np_transform_mul

HINGE = int(mujoco.mjtJoint.mjJNT_HINGE)
SLIDE = int(mujoco.mjtJoint.mjJNT_SLIDE)
BALL = int(mujoco.mjtJoint.mjJNT_BALL)
FREE = int(mujoco.mjtJoint.mjJNT_FREE)
_SINGLE = {HINGE: JointType.REVOLUTE, SLIDE: JointType.PRISMATIC, BALL: JointType.BALL, FREE: JointType.FREE}


@dataclass
class Segment:
    """One jaxart joint of a MuJoCo body.

    Attributes:
        jtype: jaxart joint type.
        joints: MuJoCo joint ids it represents (MJCF order; empty for FIXED / added FREE).
        x_p: Parent anchor in the previous link's frame (first segment: in the MuJoCo parent body frame).
        x_c: Child anchor in the child link's frame.
        label: Joint label (before any prefix).
    """

    jtype: JointType
    joints: tuple[int, ...]
    x_p: np.ndarray
    x_c: np.ndarray
    label: str


def joint_name(m, j: int, body_label: str, k: int) -> str:
    """MuJoCo joint name, or ``<body>_joint<k>`` for unnamed joints."""
    return m.joint(j).name or f"{body_label}_joint{k}"


def d6_ok(m, js: list[int]) -> bool:
    types = [int(m.jnt_type[j]) for j in js]
    hinges = [j for j, t in zip(js, types, strict=True) if t == HINGE]
    slides = [j for j, t in zip(js, types, strict=True) if t == SLIDE]
    if len(hinges) + len(slides) != len(js) or len(hinges) > 3 or len(slides) > 3:
        return False
    if types != sorted(types, key=lambda t: t != SLIDE):  # slides must precede hinges
        return False
    if hinges:
        anchors = m.jnt_pos[hinges]
        if not np.allclose(anchors, anchors[0], atol=1e-9):
            return False
        axes = m.jnt_axis[hinges]
        if np.abs(axes @ axes.T - np.eye(len(hinges))).max() > 1e-6:
            return False
        if any(m.qpos0[m.jnt_qposadr[j]] != 0.0 for j in hinges[:-1]):
            return False
    return True


def _segment(m, js: list[int], label: str, x_before: np.ndarray) -> Segment:
    """A segment for hinge/slide joints ``js`` (one joint, or a D6-compatible group)."""
    hinges = [j for j in js if m.jnt_type[j] == HINGE]
    slides = [j for j in js if m.jnt_type[j] == SLIDE]
    p = m.jnt_pos[hinges[0] if hinges else js[0]].astype(np.float64)
    shift = sum((m.jnt_axis[j] * m.qpos0[m.jnt_qposadr[j]] for j in slides), np.zeros(3))
    x_p = np_transform_mul(x_before, translation(p - shift))
    if hinges:
        last = hinges[-1]
        x_c = axis_angle_transform(p, m.jnt_axis[last], float(m.qpos0[m.jnt_qposadr[last]]))
    else:
        x_c = translation(p)
    jtype = _SINGLE[int(m.jnt_type[js[0]])] if len(js) == 1 else JointType.D6
    return Segment(jtype, tuple(js), x_p, x_c, label)


def plan_body(m, b: int, body_label: str, *, floating: bool | None) -> list[Segment]:
    """The jaxart joints (parent → ... → body) that reproduce MuJoCo body ``b``'s joints.

    Args:
        m: Compiled ``mujoco.MjModel``.
        b: MuJoCo body id (≥ 1).
        body_label: The body's jaxart label (unprefixed), used for generated names.
        floating: ``True`` turns a jointless world child into FREE, ``False`` a free root into FIXED.
            A mocap body always gets a FREE joint (its body is kinematic, its pose an input).

    Returns:
        Segments in chain order; all but the last end in a massless intermediate link.
    """
    js = list(range(int(m.body_jntadr[b]), int(m.body_jntadr[b] + m.body_jntnum[b])))
    x_pb = pose(m.body_pos[b], m.body_quat[b])
    if m.body_mocapid[b] >= 0:  # pose from Control.mocap_pos/quat (jaxart.sim.mocap)
        return [Segment(JointType.FREE, (), IDENTITY.copy(), IDENTITY.copy(), f"{body_label}_mocap")]
    root = int(m.body_parentid[b]) == 0
    if not js or (root and floating is False and [int(m.jnt_type[j]) for j in js] == [FREE]):
        if root and floating is True:
            return [Segment(JointType.FREE, (), IDENTITY.copy(), IDENTITY.copy(), f"{body_label}_free")]
        return [Segment(JointType.FIXED, (), x_pb, IDENTITY.copy(), f"{body_label}_fixed")]
    names = [joint_name(m, j, body_label, k) for k, j in enumerate(js)]
    if len(js) == 1 and m.jnt_type[js[0]] == FREE:
        return [Segment(JointType.FREE, (js[0],), IDENTITY.copy(), IDENTITY.copy(), names[0])]
    if len(js) == 1 and m.jnt_type[js[0]] == BALL:
        p = m.jnt_pos[js[0]].astype(np.float64)
        return [Segment(JointType.BALL, (js[0],), np_transform_mul(x_pb, translation(p)), translation(p), names[0])]
    if d6_ok(m, js):
        return [_segment(m, js, "+".join(names), x_pb)]
    segs = []
    for k, j in enumerate(js):
        before = x_pb if k == 0 else IDENTITY
        if m.jnt_type[j] == BALL:
            p = m.jnt_pos[j].astype(np.float64)
            segs.append(Segment(JointType.BALL, (j,), np_transform_mul(before, translation(p)), translation(p),
                                names[k]))
        else:
            segs.append(_segment(m, [j], names[k], before))
    return segs


def dof_configs(m, j: int, drives: dict, *, min_timeconst: float) -> list[JointDofConfig]:
    """``JointDofConfig`` per DOF of MuJoCo joint ``j`` (hinge/slide: 1, ball: 3, free: 6).

    Hinge/slide: range (when limited, else ±1e10), ``solreflimit`` → ``limit_ke/kd`` via
    :func:`~jaxart.io.mjcf.convert.solref_gains` with the DOF's effective inertia
    ``1/dof_invweight0``, damping, stiffness, springref → ``rest_q``, armature, frictionloss →
    ``friction``, ``actuatorfrcrange`` and actuator drives. Ball/free DOFs: damping, armature,
    friction and (ball) stiffness on X, Y, Z axes, no limits.
    """
    jt = int(m.jnt_type[j])
    d0 = int(m.jnt_dofadr[j])
    act_lim = float(np.abs(m.jnt_actfrcrange[j]).max()) if m.jnt_actfrclimited[j] else np.inf
    if jt in (BALL, FREE):
        stiff = float(m.jnt_stiffness[j]) if jt == BALL else 0.0
        axes = [Axis.X, Axis.Y, Axis.Z] * (2 if jt == FREE else 1)
        return [JointDofConfig(axis=a, limit_ke=0.0, limit_kd=0.0, damping=float(m.dof_damping[d0 + k]),
                               stiffness=stiff, rest_q=0.0, armature=float(m.dof_armature[d0 + k]),
                               friction=float(m.dof_frictionloss[d0 + k]),
                               effort_limit=min(act_lim, 1e6))
                for k, a in enumerate(axes)]
    inv_w = float(m.dof_invweight0[d0])
    ke, kd = solref_gains(m.jnt_solref[j], 1.0 / inv_w if inv_w > 0.0 else 1.0, min_timeconst=min_timeconst)
    lo, hi = (float(x) for x in m.jnt_range[j]) if m.jnt_limited[j] else (-MAXVAL, MAXVAL)
    drive = drives.get(d0)
    effort = min(act_lim, drive.effort_limit if drive else np.inf)
    return [JointDofConfig(
        axis=m.jnt_axis[j], limit_lower=lo, limit_upper=hi, limit_ke=ke, limit_kd=kd,
        target_q=drive.target_q if drive else None, target_ke=drive.ke if drive else 0.0,
        target_kd=drive.kd if drive else 0.0, damping=float(m.dof_damping[d0]),
        stiffness=float(m.jnt_stiffness[j]), rest_q=float(m.qpos_spring[m.jnt_qposadr[j]]),
        armature=float(m.dof_armature[d0]), effort_limit=effort if np.isfinite(effort) else 1e6,
        friction=float(m.dof_frictionloss[d0]), actuator_mode=drive.mode if drive else JointTargetMode.NONE)]


def joint_issues(m) -> list[str]:
    """Joint features jaxart cannot represent (ball cone limits, ball/free springs)."""
    out = []
    for j in range(m.njnt):
        jt, name = int(m.jnt_type[j]), m.joint(j).name or f"joint {j}"
        if jt == BALL and m.jnt_limited[j]:
            out.append(f"ball joint {name!r}: cone range limit {float(m.jnt_range[j, 1]):.4g} rad")
        if jt == BALL and m.jnt_stiffness[j] > 0.0 and not np.allclose(
                m.qpos_spring[m.jnt_qposadr[j]:m.jnt_qposadr[j] + 4], [1, 0, 0, 0]):
            out.append(f"ball joint {name!r}: spring reference orientation (springref) other than identity")
        if jt == FREE and m.jnt_stiffness[j] > 0.0:
            out.append(f"free joint {name!r}: stiffness {float(m.jnt_stiffness[j])}")
    return out
