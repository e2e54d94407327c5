"""Loop-closing joints of the MuJoCo bridge: drives (site transmission) and auxiliary bodies.

A loop-closing joint has no MuJoCo joint (its constraint is a set of equality rows,
:mod:`jaxart.solvers.mujoco.equality`), so its drive acts through a *site* transmission with a
reference site: a site ``<joint>__child`` on the child's MuJoCo body at the child anchor ``joint_X_c``
and a site ``<joint>__parent`` on the parent's at the parent anchor ``joint_X_p`` (both with the
anchor's orientation). MuJoCo's length of such a transmission is ``gear ·`` (the child site's offset and
rotation vector relative to the reference site, in the reference site's frame), so with ``gear`` the
joint axis (rotational components for an angular axis, translational for a linear one) it equals the
loop joint's coordinate (for one axis: the twist angle / the anchor offset along the axis, the
coordinates SolverFeatherstone measures), and its rate the coordinate's rate.

Gains and biases are the tree-joint drive mapping's (:func:`jaxart.solvers.mujoco.joints.add_actuators`):
POSITION ``gain kp, bias (0, −kp, −kd)``; VELOCITY ``kd, (0, 0, −kd)``; POSITION_VELOCITY both
actuators. ``ctrl`` comes from ``Control.joint_target_q``/``joint_target_qd`` of the loop joint's
coordinate/DOF (the layout's ``pos_act``/``vel_act``). ``joint_effort_limit`` → each actuator's
``forcerange`` (a tree joint clamps the sum with ``actfrcrange``; with POSITION_VELOCITY and a saturated
drive the two differ). Drives are mapped on loop joints with one free axis (REVOLUTE, or a D6 with one
angular axis); drives on BALL loop joints raise ``NotImplementedError``.

Loop-closing PRISMATIC joints and D6 joints with linear axes or two angular axes have no MuJoCo
equality. They get an *auxiliary body* ``<joint>__aux``: a child of the parent's MuJoCo body at the parent
anchor ``joint_X_p`` carrying the loop joint's DOFs as MuJoCo joints (the tree-joint mapping,
:func:`jaxart.solvers.mujoco.joints.add_joints`: slides then hinges, named like a tree joint's), welded
(``mjEQ_WELD``, ``<joint>__weld``) to the child at the child anchor ``joint_X_c``. The loop joint's
coordinates thus become MuJoCo coordinates: its drives, limits, springs, damping, friction and armature are
the tree-joint mapping's, ``step`` writes them back, and before each step they are re-measured from the tree
(:func:`jaxart.dynamics.loop_axes.loop_coordinates`, SolverFeatherstone's loop coordinates) so a stale state
cannot pull the weld apart. The auxiliary body has mass ``AUX_MASS`` and inertia ``AUX_INERTIA`` (MuJoCo
rejects massless moving bodies): a ~1e-6 relative perturbation of the mechanism's inertia (measured on the
tests' 1 kg-link parallelogram closed by a PRISMATIC loop, 0.4 s at 2 ms: raising it 100× moves the body
poses by 1.5e-5, while MuJoCo's soft weld leaves 0.8e-3 (undriven) to 1.3e-3 (slide driven) between its poses
and SolverFeatherstone's). Its
``body_invweight0`` (the weld's regularisation scale) is set to the child's after compiling — with its own
(≈ 1/AUX_MASS) the weld would be ~1e6 times too soft across the loop. A model saved with ``save_to_mjcf`` and
recompiled by MuJoCo loses that override.
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.sim.enums import JointTargetMode, JointType
from jaxart.sim.validate import np_transform_inverse, np_transform_mul
from jaxart.solvers.mujoco.shapes import wxyz

_IDENT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
_UNDRIVEN = (JointTargetMode.NONE, JointTargetMode.EFFORT)
AUX_MASS = 1e-6  # [kg] mass of a loop joint's auxiliary body
AUX_INERTIA = 1e-9  # [kg m²] its principal moments of inertia


def needs_aux(h, j: int) -> bool:
    """Whether loop joint ``j`` is realised with an auxiliary body (PRISMATIC, D6 with linear or two angular axes)."""
    nl, na = (int(x) for x in h.dof_dim[j])
    jt = int(h.jtype[j])
    return jt in (JointType.PRISMATIC, JointType.D6) and (nl > 0 or na == 2)


def add_aux_bodies(spec: mujoco.MjSpec, h, fr, loops: list[int], rec) -> list[int]:
    """The auxiliary bodies (with the loop joints' MuJoCo joints) of the loops that need one (module docstring).

    Args:
        spec: The spec (tree bodies added).
        h: The converter's host copy of the model.
        fr: The equality module's ``_Frames``.
        loops: Loop-closing joints.
        rec: The layout recorder (``scalar`` receives the joints, ``aux`` the ``(aux body, child body)`` names).

    Returns:
        The loop joints given an auxiliary body.
    """
    from jaxart.solvers.mujoco.joints import add_joints

    out = []
    for j in loops:
        if not needs_aux(h, j):
            continue
        label, p = h.joint_label[j], int(h.parent[j])
        what = f"SolverMuJoCo: loop-closing joint {label!r}"
        parent = spec.worldbody if p < 0 else spec.body(fr.name(p, what))
        local = np_transform_mul(np_transform_inverse(fr.offset(p)), h.joint_X_p[j])
        body = parent.add_body(name=f"{label}__aux", pos=local[:3], quat=wxyz(local[3:]))
        body.explicitinertial = True
        body.mass = AUX_MASS
        body.inertia = [AUX_INERTIA] * 3
        add_joints(body, h, j, rec, _IDENT)
        rec.aux.append((f"{label}__aux", fr.name(int(h.child[j]), what)))
        nl, na = (int(x) for x in h.dof_dim[j])
        rec.loop_axes.append((int(j), p, int(h.child[j]), int(h.jtype[j]), nl, na, int(h.qd_start[j]),
                              int(h.q_start[j]), int(h.q_start[j + 1] - h.q_start[j])))
        out.append(j)
    return out


def fix_aux_invweight(mj_model: mujoco.MjModel, rec) -> None:
    """Give each auxiliary body its child's ``body_invweight0`` (the weld's regularisation scale; docstring)."""
    for aux, child in rec.aux:
        a = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, aux)
        c = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, child)
        mj_model.body_invweight0[a] = mj_model.body_invweight0[c]


def driven(h, j: int) -> bool:
    """Whether loop joint ``j`` has a POSITION / VELOCITY / POSITION_VELOCITY drive on any DOF."""
    ds, de = int(h.qd_start[j]), int(h.qd_start[j + 1])
    return bool(np.any(~np.isin(h.mode[ds:de], _UNDRIVEN)))


def check_loop_drive(h, j: int) -> None:
    """Raise for drives on loop joints this module does not map (BALL-like: three angular axes).

    Raises:
        NotImplementedError: A drive on a loop joint that is neither REVOLUTE-like (0 linear + 1 angular
            DOF) nor realised with an auxiliary body.
    """
    nl, na = (int(x) for x in h.dof_dim[j])
    if driven(h, j) and (nl, na) != (0, 1) and not needs_aux(h, j):
        raise NotImplementedError(f"SolverMuJoCo: joint {h.joint_label[j]!r}: drives on loop-closing "
                                  f"{JointType(int(h.jtype[j])).name} joints with {nl} linear + {na} angular DOFs "
                                  "are not mapped (one-axis loop joints only)")


def add_loop_drives(spec: mujoco.MjSpec, h, fr, loops: list[int], rec) -> None:
    """Sites and site-transmission actuators for the drives of the loop joints ``loops`` (module docstring).

    Args:
        spec: The spec (bodies added).
        h: The converter's host copy of the model.
        fr: The equality module's ``_Frames`` (MuJoCo body names and frame offsets).
        loops: Loop-closing joints.
        rec: The layout recorder (``pos_act``/``vel_act`` receive the actuators).
    """
    for j in loops:
        if not driven(h, j) or needs_aux(h, j):
            continue
        check_loop_drive(h, j)
        what = f"SolverMuJoCo: loop-closing joint {h.joint_label[j]!r}"
        label = h.joint_label[j]
        site = _anchor_site(spec, fr, int(h.child[j]), h.joint_X_c[j], f"{label}__child", what)
        ref = _anchor_site(spec, fr, int(h.parent[j]), h.joint_X_p[j], f"{label}__parent", what)
        d, qs = int(h.qd_start[j]), int(h.q_start[j])
        axis = h.joint_axis[d] / np.linalg.norm(h.joint_axis[d])
        gear = np.concatenate([np.zeros(3), axis])
        mode, kp, kd = int(h.mode[d]), float(h.joint_target_ke[d]), float(h.joint_target_kd[d])
        effort = float(h.joint_effort_limit[d])
        if mode in (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY):
            damp = kd if mode == JointTargetMode.POSITION else 0.0
            _site_actuator(spec, f"{label}_pos", site, ref, kp, [0.0, -kp, -damp], gear, effort)
            rec.pos_act.append((f"{label}_pos", qs))
        if mode in (JointTargetMode.VELOCITY, JointTargetMode.POSITION_VELOCITY):
            _site_actuator(spec, f"{label}_vel", site, ref, kd, [0.0, 0.0, -kd], gear, effort)
            rec.vel_act.append((f"{label}_vel", d))


def measure_loop_coords(layout, model, joint_q, joint_qd, body_q):
    """``(joint_q, joint_qd)`` with the auxiliary-body loop joints' entries measured from the tree (jittable)."""
    if not layout.loop_axes:
        return joint_q, joint_qd
    from jaxart.dynamics.loop_axes import LoopAxes, loop_coordinates

    return loop_coordinates(model, joint_q, joint_qd, body_q, LoopAxes(layout.loop_axes))[:2]


def _anchor_site(spec: mujoco.MjSpec, fr, b: int, x_anchor: np.ndarray, name: str, what: str) -> str:
    """A site named ``name`` on body ``b``'s MuJoCo body at the anchor ``x_anchor`` (given in jaxart body ``b``)."""
    body = spec.worldbody if b < 0 else spec.body(fr.name(b, what))
    local = np_transform_mul(np_transform_inverse(fr.offset(b)), x_anchor)
    body.add_site(name=name, pos=local[:3], quat=wxyz(local[3:]), size=[0.005, 0.0, 0.0])
    return name


def _site_actuator(spec: mujoco.MjSpec, name: str, site: str, ref: str, gain: float, bias: list[float],
                   gear: np.ndarray, effort: float) -> None:
    act = spec.add_actuator(name=name, target=site, trntype=mujoco.mjtTrn.mjTRN_SITE)
    act.refsite = ref
    act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
    act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
    act.gainprm = np.concatenate([[gain], np.zeros(9)])
    act.biasprm = np.concatenate([bias, np.zeros(7)])
    act.gear = gear
    act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
    act.forcerange = [-effort, effort]
