"""Joints and drive actuators of the MuJoCo bridge.

The joint and actuator tables of Newton's MuJoCo-integration mapping tables.

See :mod:`jaxart.solvers.mujoco.convert` for the overall mapping.
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.sim.enums import JointTargetMode, JointType
from jaxart.sim.validate import np_quat_to_matrix, np_transform_inverse
from jaxart.solvers.mujoco.layout import LayoutRecorder
from jaxart.solvers.mujoco.shapes import DEFAULT_SOLREF

UNLIMITED = 0.5e10


def mj_joint_names(h, j: int) -> list[str]:
    """MuJoCo joint names of jaxart joint ``j`` (Newton's ``_lin``/``_ang`` suffix rule for D6)."""
    nl, na = (int(x) for x in h.dof_dim[j])
    label = h.joint_label[j]
    if int(h.jtype[j]) != JointType.D6 or nl + na == 1:
        return [label] if nl + na > 0 else []
    lin = [label + "_lin" + (str(i) if nl > 1 else "") for i in range(nl)]
    ang = [label + "_ang" + (str(i) if na > 1 else "") for i in range(na)]
    return lin + ang


def add_joints(body, h, j: int, rec: LayoutRecorder, anchor: np.ndarray) -> None:
    """Add the MuJoCo joint(s) of jaxart joint ``j``; ``anchor`` is its child anchor in the body frame."""
    jt = JointType(int(h.jtype[j]))
    qs, ds = int(h.q_start[j]), int(h.qd_start[j])
    name = h.joint_label[j]
    if jt == JointType.FIXED:
        return
    if jt in (JointType.FREE, JointType.DISTANCE):  # DISTANCE: its distance limits are a tendon (tendons.py)
        com = child_com(h, j)
        if free_as_slides(h, j):
            _add_slides_and_ball(body, h, j, rec, com)
            return
        body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_FREE)
        rec.free.append((name, qs, ds, h.joint_X_p[j].copy(), com, h.body_label[h.child[j]]))
        return
    if jt == JointType.BALL:
        jnt = body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_BALL)
        _dof_params_uniform(jnt, h, j, range(ds, ds + 3))
        rec.ball.append((name, qs, ds))
        return
    nl = int(h.dof_dim[j, 0])
    for k, mj_name in enumerate(mj_joint_names(h, j)):
        d = ds + k
        kind = mujoco.mjtJoint.mjJNT_SLIDE if k < nl else mujoco.mjtJoint.mjJNT_HINGE
        axis = np_quat_to_matrix(anchor[3:]) @ (h.joint_axis[d] / np.linalg.norm(h.joint_axis[d]))
        jnt = body.add_joint(name=mj_name, type=kind, axis=axis, pos=anchor[:3])
        _scalar_params(jnt, h, d)
        rec.scalar.append((mj_name, qs + k, d))


def child_com(h, j: int) -> np.ndarray:
    """The child COM of joint ``j`` in its child-anchor frame (the MuJoCo body frame)."""
    com = np_transform_inverse(h.joint_X_c[j])
    return com[:3] + np_quat_to_matrix(com[3:]) @ h.body_com[h.child[j]]


def com_off_anchor(h, j: int) -> bool:
    """Whether joint ``j``'s child COM is off its child anchor (beyond the model dtype's rounding)."""
    eps = float(np.finfo(np.asarray(h.model.joint_q).dtype).eps)
    scale = 1.0 + float(np.linalg.norm(h.joint_X_c[j, :3])) + float(np.linalg.norm(h.body_com[h.child[j]]))
    return float(np.linalg.norm(child_com(h, j))) > 16.0 * eps * scale


def _free_terms(h, j: int) -> bool:
    """Whether FREE/DISTANCE joint ``j`` has any per-DOF term (passive, limit or drive)."""
    d = np.arange(int(h.qd_start[j]), int(h.qd_start[j]) + 6)
    lim = d[1:] if int(h.jtype[j]) == JointType.DISTANCE else d
    passive = any(np.any(getattr(h, f)[d] != 0.0) for f in ("joint_damping", "joint_armature", "joint_friction",
                                                              "joint_stiffness"))
    drives = np.any(~np.isin(h.mode[d], (JointTargetMode.NONE, JointTargetMode.EFFORT)))
    limits = np.any(h.joint_limit_lower[lim] > -UNLIMITED) or np.any(h.joint_limit_upper[lim] < UNLIMITED)
    return bool(passive or drives or limits)


def free_as_slides(h, j: int) -> bool:
    """FREE/DISTANCE joint ``j`` maps to three slides and a ball (below a body, or with per-DOF terms)."""
    return int(h.parent[j]) >= 0 or _free_terms(h, j)


def free_slide_names(label: str) -> tuple[list[str], str]:
    """MuJoCo names of the three slides and the ball of a FREE/DISTANCE joint mapped as slides + ball."""
    return [f"{label}_lin{k}" for k in range(3)], f"{label}_ang"


def _add_slides_and_ball(body, h, j: int, rec: LayoutRecorder, com: np.ndarray) -> None:
    """FREE/DISTANCE joint ``j`` as slides along the parent-anchor axes, then a ball about the child COM.

    With the ball centred on the COM, the slide coordinates are the COM displacement ``p + R c − c`` (``c`` the
    COM in the child-anchor frame) and their velocities the COM velocity, jaxart's linear FREE DOFs; the ball is
    the joint quaternion with MuJoCo's ball conventions. Terms on the linear coordinates (stiffness, limits,
    position drives) act on ``p`` in jaxart and are therefore exact only with the COM at the child anchor.
    """
    qs, ds = int(h.q_start[j]), int(h.qd_start[j])
    label = h.joint_label[j]
    slides, ball = free_slide_names(label)
    dist = int(h.jtype[j]) == JointType.DISTANCE
    offset = com_off_anchor(h, j)
    for k, mj_name in enumerate(slides):
        d = ds + k
        lim = not (dist and k == 0)
        pos_terms = h.joint_stiffness[d] != 0.0 or (lim and (h.joint_limit_lower[d] > -UNLIMITED
                                                            or h.joint_limit_upper[d] < UNLIMITED))
        if offset and pos_terms:
            raise NotImplementedError(
                f"SolverMuJoCo: joint {label!r}: stiffness or limits on the linear DOFs of a FREE/DISTANCE joint act "
                f"on the child-anchor position; MuJoCo's slides follow the child COM, which is offset by "
                f"{com.tolist()} from the anchor (exact only with the COM at the child anchor)")
        jnt = body.add_joint(name=mj_name, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=np.eye(3)[k], pos=np.zeros(3))
        _scalar_params(jnt, h, d, limits=lim)
        rec.scalar.append((mj_name, qs + k, d))
    jnt = body.add_joint(name=ball, type=mujoco.mjtJoint.mjJNT_BALL, pos=com)
    _dof_params_uniform(jnt, h, j, range(ds + 3, ds + 6))
    rec.ball.append((ball, qs + 3, ds + 3))
    parent = int(h.parent[j])
    rec.free_sb.append((slides, ball, qs, ds, com, h.joint_X_p[j].copy(), parent))


def _scalar_params(jnt, h, d: int, *, limits: bool = True) -> None:
    lo, hi = float(h.joint_limit_lower[d]), float(h.joint_limit_upper[d])
    limited = limits and (lo > -UNLIMITED or hi < UNLIMITED)
    jnt.limited = mujoco.mjtLimited.mjLIMITED_TRUE if limited else mujoco.mjtLimited.mjLIMITED_FALSE
    if limited:
        jnt.range = [lo, hi]
        ke, kd = float(h.joint_limit_ke[d]), float(h.joint_limit_kd[d])
        jnt.solref_limit = [-ke, -kd] if ke > 0.0 else list(DEFAULT_SOLREF)
    jnt.damping = [float(h.joint_damping[d]), 0.0, 0.0]  # MuJoCo 4: (linear, nonlinear terms)
    jnt.stiffness = [float(h.joint_stiffness[d]), 0.0, 0.0]
    jnt.springref = float(h.joint_rest_q[d])
    jnt.armature = float(h.joint_armature[d])
    jnt.frictionloss = float(h.joint_friction[d])
    effort = float(h.joint_effort_limit[d])
    jnt.actfrclimited = mujoco.mjtLimited.mjLIMITED_TRUE
    jnt.actfrcrange = [-effort, effort]


def ball_passive_actuators(h, j: int, dofs) -> tuple[bool, bool]:
    """Whether the spring / the damping of ball-like DOFs ``dofs`` of tree joint ``j`` become actuators.

    A MuJoCo ball joint has one stiffness and one damping acting in the child frame; jaxart's ball spring
    ``k_i (rest_i − log(q)_i)`` and damping ``−c_i ω_i`` act per parent-anchor axis. Uniform damping and uniform
    springs with a zero rest are the same thing and stay on the joint; otherwise each axis gets a
    ``mjTRN_JOINTINPARENT`` actuator (length ``log(q)_i``, velocity ``ω_i``, force along parent-anchor axis ``i``)
    with gain 0 and bias ``(k_i rest_i, −k_i, 0)`` / ``(0, 0, −c_i)``: exactly jaxart's terms.
    """
    if h.topo.joint_articulation.array[j] < 0:
        return False, False  # loop-closing joints keep the joint-level rules (mujoco.loops)
    d = np.asarray(dofs)
    k, c = h.joint_stiffness[d], h.joint_damping[d]
    spring = bool(np.any(k != 0.0) and (not np.allclose(k, k[0]) or np.any(h.joint_rest_q[d] != 0.0)))
    return spring, bool(not np.allclose(c, c[0]))


def _dof_params_uniform(jnt, h, j: int, dofs: range) -> None:
    """BALL joints and the angular DOFs of FREE/DISTANCE joints (a MuJoCo ball joint): one damping, armature,
    frictionloss and stiffness per joint, so they must agree per DOF (per-axis or rest-offset springs and per-axis
    damping of tree joints become actuators instead, :func:`ball_passive_actuators`).

    jaxart's ball spring is ``k (rest − log q)`` (parent-anchor frame); MuJoCo's joint spring is ``−k log(q_s⁻¹ q)``
    in the child frame with ``q_s`` = ``qpos_spring`` (the identity here), i.e. ``−k log q`` in either frame:
    identical for a zero rest rotation vector (for a non-zero rest MuJoCo's would be ``k log(q_s q⁻¹)``).
    """
    what = f"SolverMuJoCo: joint {h.joint_label[j]!r}"
    d = np.asarray(dofs)
    spring_act, damp_act = ball_passive_actuators(h, j, d)
    for field, attr in (("joint_damping", "damping"), ("joint_armature", "armature"),
                        ("joint_friction", "frictionloss"), ("joint_stiffness", "stiffness")):
        vals = getattr(h, field)[d]
        if (attr == "damping" and damp_act) or (attr == "stiffness" and spring_act):
            vals = np.zeros(3)
        elif not np.allclose(vals, vals[0]):
            raise NotImplementedError(f"{what}: per-axis {field} {vals.tolist()} differ; a MuJoCo ball joint takes "
                                      "one value")
        setattr(jnt, attr, [float(vals[0]), 0.0, 0.0] if attr in ("damping", "stiffness") else float(vals[0]))
    if np.any(h.joint_stiffness[d] != 0.0) and h.topo.joint_articulation.array[j] < 0:
        raise NotImplementedError(f"{what}: ball springs on loop-closing joints are not mapped")
    if np.any(h.joint_limit_lower[d] > -UNLIMITED) or np.any(h.joint_limit_upper[d] < UNLIMITED):
        raise NotImplementedError(f"{what}: ball joint limits (per-axis limits of a ball or of a FREE/DISTANCE "
                                  "joint's rotation) are not mapped (MuJoCo's ball limit is a single cone angle)")


def add_actuators(spec: mujoco.MjSpec, h, rec: LayoutRecorder) -> None:
    """Drive actuators per DOF in jaxart DOF order (BALL: one per axis, the axis as ``gear``).

    FREE/DISTANCE joints mapped as slides + ball (:func:`free_as_slides`) drive their slides like PRISMATIC DOFs
    and their ball like a BALL joint. Loop-closing joints (outside every articulation) are skipped unless their
    drives act on the joints of an auxiliary body (``h.aux_actuated``; :mod:`jaxart.solvers.mujoco.loops`).
    """
    aux = set(getattr(h, "aux_actuated", ()))
    for j in range(h.topo.joint_count):
        loop = h.topo.joint_articulation.array[j] < 0 and j not in aux
        if loop:
            continue
        for mj_name, d, coord, k, ball in _actuated_axes(h, j):
            mode = int(h.mode[d])
            kp, kd = float(h.joint_target_ke[d]), float(h.joint_target_kd[d])
            tag = f"{mj_name}_{'xyz'[k]}" if ball else mj_name
            gear = np.eye(3)[k] if ball else None
            effort = float(h.joint_effort_limit[d]) if ball else None
            if mode == JointTargetMode.POSITION and kp == 0.0:  # kd (q̇* − q̇) only: a velocity actuator
                _general(spec, f"{tag}_pos", mj_name, kd, [0.0, 0.0, -kd], gear, effort)
                rec.vel_act.append((f"{tag}_pos", d))
            elif mode in (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY):
                damp = kd if mode == JointTargetMode.POSITION else 0.0
                _general(spec, f"{tag}_pos", mj_name, kp, [0.0, -kp, -damp], gear, effort)
                if ball:
                    rec.ball_act.append((f"{tag}_pos", coord, k))
                else:
                    rec.pos_act.append((f"{tag}_pos", coord))
                if damp > 0.0:  # ctrl += (kd/kp) q̇*: kp (ctrl − q) − kd q̇ = kp (q* − q) + kd (q̇* − q̇)
                    rec.pos_vel.append((f"{tag}_pos", d, damp / kp))
            if mode in (JointTargetMode.VELOCITY, JointTargetMode.POSITION_VELOCITY):
                _general(spec, f"{tag}_vel", mj_name, kd, [0.0, 0.0, -kd], gear, effort)
                rec.vel_act.append((f"{tag}_vel", d))
            if ball:
                _ball_passive(spec, h, j, d, k, mj_name, tag)


def _ball_passive(spec: mujoco.MjSpec, h, j: int, d: int, k: int, mj_name: str, tag: str) -> None:
    """Spring / damper actuators of ball axis ``k`` (DOF ``d``) when :func:`ball_passive_actuators` says so."""
    spring, damp = ball_passive_actuators(h, j, range(d - k, d - k + 3))
    gear = np.eye(3)[k]
    if spring:
        ks = float(h.joint_stiffness[d])
        _general(spec, f"{tag}_spring", mj_name, 0.0, [ks * float(h.joint_rest_q[d]), -ks, 0.0], gear)
    if damp:
        _general(spec, f"{tag}_damp", mj_name, 0.0, [0.0, 0.0, -float(h.joint_damping[d])], gear)


def _actuated_axes(h, j: int) -> list[tuple[str, int, int, int, bool]]:
    """``(MuJoCo joint, DOF, coordinate (ball: quaternion start), ball axis, is ball)`` of joint ``j``'s DOFs."""
    jt = int(h.jtype[j])
    qs, ds = int(h.q_start[j]), int(h.qd_start[j])
    if jt == JointType.FIXED:
        return []
    if jt == JointType.BALL:
        return [(h.joint_label[j], ds + k, qs, k, True) for k in range(3)]
    if jt in (JointType.FREE, JointType.DISTANCE):
        if h.topo.joint_articulation.array[j] < 0 or not free_as_slides(h, j):
            return []
        slides, ball = free_slide_names(h.joint_label[j])
        pos_modes = (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY)
        if np.any(np.isin(h.mode[ds:ds + 3], pos_modes)) and com_off_anchor(h, j):
            raise NotImplementedError(f"SolverMuJoCo: joint {h.joint_label[j]!r}: position drives on the linear DOFs "
                                      "of a FREE/DISTANCE joint act on the child-anchor position; MuJoCo's slides "
                                      "follow the child COM (exact only with the COM at the child anchor)")
        return ([(slides[k], ds + k, qs + k, k, False) for k in range(3)]
                + [(ball, ds + 3 + k, qs + 3, k, True) for k in range(3)])
    return [(name, ds + k, qs + k, k, False) for k, name in enumerate(mj_joint_names(h, j))]


def _general(spec: mujoco.MjSpec, name: str, joint: str, gain: float, bias: list[float], gear=None,
             effort: float | None = None) -> None:
    """A general actuator on ``joint``; ``gear`` (BALL axis) and ``effort`` → ``forcerange``."""
    trn = mujoco.mjtTrn.mjTRN_JOINT if gear is None else mujoco.mjtTrn.mjTRN_JOINTINPARENT
    act = spec.add_actuator(name=name, target=joint, trntype=trn)
    act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
    act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
    gp = np.zeros(10)
    gp[0] = gain
    bp = np.zeros(10)
    bp[:3] = bias
    act.gainprm = gp
    act.biasprm = bp
    if gear is not None:
        act.gear = np.concatenate([gear, np.zeros(3)])
    if effort is not None:
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-effort, effort]


def model_initial_body_q(model) -> np.ndarray:
    """World body poses at the model's initial configuration (FK of ``Model.joint_q``), float64 numpy."""
    from jaxart.kinematics import eval_fk

    state = eval_fk(model, model.joint_q, model.joint_qd, model.state())
    return np.asarray(state.body_q, dtype=np.float64)
