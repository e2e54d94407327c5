"""Joints and drive actuators of the MuJoCo bridge (seed 002 joint and actuator tables).

See :mod:`jaxart.solvers.mujoco.convert` for the overall mapping.
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.sim.enums import JointTargetMode, JointType
from jaxart.sim.validate import np_quat_to_matrix, np_transform_inverse
from jaxart.solvers.mujoco.layout import LayoutRecorder
from jaxart.solvers.mujoco.shapes import DEFAULT_SOLREF

_UNLIMITED = 0.5e10


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
        body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_FREE)
        com = np_transform_inverse(h.joint_X_c[j])
        com = com[:3] + np_quat_to_matrix(com[3:]) @ h.body_com[h.child[j]]
        rec.free.append((name, qs, ds, h.joint_X_p[j].copy(), com, h.body_label[h.child[j]]))
        _dof_params_uniform(body.joints[-1], h, j, range(ds, ds + 6), free=True)
        return
    if jt == JointType.BALL:
        jnt = body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_BALL)
        _dof_params_uniform(jnt, h, j, range(ds, ds + 3), free=False)
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


def _scalar_params(jnt, h, d: int) -> None:
    lo, hi = float(h.joint_limit_lower[d]), float(h.joint_limit_upper[d])
    limited = lo > -_UNLIMITED or hi < _UNLIMITED
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


def _dof_params_uniform(jnt, h, j: int, dofs: range, *, free: bool) -> None:
    """BALL/FREE: MuJoCo takes one damping/armature/frictionloss per joint; they must agree per DOF."""
    what = f"SolverMuJoCo: joint {h.joint_label[j]!r}"
    d = np.asarray(dofs)
    for field, attr in (("joint_damping", "damping"), ("joint_armature", "armature"),
                        ("joint_friction", "frictionloss")):
        vals = getattr(h, field)[d]
        if not np.allclose(vals, vals[0]):
            raise NotImplementedError(f"{what}: per-DOF {field} {vals.tolist()} differ; MuJoCo ball/free joints "
                                      "take one value")
        setattr(jnt, attr, [float(vals[0]), 0.0, 0.0] if attr == "damping" else float(vals[0]))
    if np.any(h.joint_stiffness[d] > 0.0):
        raise NotImplementedError(f"{what}: joint_stiffness on ball/free/distance joints is not mapped")
    if free and np.any(~np.isin(h.mode[d], (JointTargetMode.NONE, JointTargetMode.EFFORT))):
        raise NotImplementedError(f"{what}: drives on free / distance joints have no MuJoCo mapping")
    lim = d[1:] if int(h.jtype[j]) == JointType.DISTANCE else d  # a DISTANCE joint's first DOF: distance limits
    if np.any(h.joint_limit_lower[lim] > -_UNLIMITED) or np.any(h.joint_limit_upper[lim] < _UNLIMITED):
        raise NotImplementedError(f"{what}: per-DOF limits on free / distance joints are not mapped (MuJoCo free "
                                  "joints have none)" if free else
                                  f"{what}: ball joint limits are not mapped (MuJoCo uses a single cone angle)")


def add_actuators(spec: mujoco.MjSpec, h, rec: LayoutRecorder) -> None:
    """Drive actuators per DOF in jaxart DOF order (BALL: one per axis, the axis as ``gear``).

    Loop-closing joints (outside every articulation) are skipped unless their drives act on the joints of
    an auxiliary body (``h.aux_actuated``; :mod:`jaxart.solvers.mujoco.loops`).
    """
    aux = set(getattr(h, "aux_actuated", ()))
    for j in range(h.topo.joint_count):
        jt = int(h.jtype[j])
        loop = h.topo.joint_articulation.array[j] < 0 and j not in aux
        if jt in (JointType.FREE, JointType.DISTANCE, JointType.FIXED) or loop:
            continue
        qs, ds = int(h.q_start[j]), int(h.qd_start[j])
        ball = jt == JointType.BALL
        names = [h.joint_label[j]] * 3 if ball else mj_joint_names(h, j)
        for k, mj_name in enumerate(names):
            d = ds + k
            mode = int(h.mode[d])
            kp, kd = float(h.joint_target_ke[d]), float(h.joint_target_kd[d])
            tag = f"{mj_name}_{'xyz'[k]}" if ball else mj_name
            gear = np.eye(3)[k] if ball else None
            effort = float(h.joint_effort_limit[d]) if ball else None
            if mode in (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY):
                damp = kd if mode == JointTargetMode.POSITION else 0.0
                _general(spec, f"{tag}_pos", mj_name, kp, [0.0, -kp, -damp], gear, effort)
                if ball:
                    rec.ball_act.append((f"{tag}_pos", qs, k))
                else:
                    rec.pos_act.append((f"{tag}_pos", qs + k))
            if mode in (JointTargetMode.VELOCITY, JointTargetMode.POSITION_VELOCITY):
                _general(spec, f"{tag}_vel", mj_name, kd, [0.0, 0.0, -kd], gear, effort)
                rec.vel_act.append((f"{tag}_vel", d))


def _general(spec: mujoco.MjSpec, name: str, joint: str, gain: float, bias: list[float], gear=None,
             effort: float | None = None) -> None:
    """A general actuator on ``joint``; ``gear`` (BALL axis) and ``effort`` → ``forcerange``."""
    act = spec.add_actuator(name=name, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
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
