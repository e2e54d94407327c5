"""Loop-closing joints of the MuJoCo bridge: drives (site transmission) and auxiliary bodies.

``ACCELERATION`` drives on loop joints scale their actuators by SolverFeatherstone's constrained effective inertia
of the loop axis (:mod:`jaxart.solvers.mujoco.step_model`); ``Control.joint_f`` on loop joints without an auxiliary
body becomes body wrenches (:mod:`jaxart.solvers.mujoco.loop_forces`), on those with one it acts on the auxiliary
joints.

A loop-closing joint has no MuJoCo joint (its constraint is a set of equality rows,
:mod:`jaxart.solvers.mujoco.equality`), so its drive acts through a *site* transmission with a
reference site: a site ``<joint>__child`` on the child's MuJoCo body at the child anchor ``joint_X_c``
and a site ``<joint>__parent`` on the parent's at the parent anchor ``joint_X_p`` (both with the
anchor's orientation). MuJoCo's length of such a transmission is ``gear ·`` (the child site's offset and
rotation vector relative to the reference site, in the reference site's frame), so with ``gear`` the
joint axis (rotational components for an angular axis, translational for a linear one) it equals the
loop joint's coordinate (for one axis: the twist angle / the anchor offset along the axis, the
coordinates SolverFeatherstone measures), and its rate the coordinate's rate.

Gains and biases are the tree-joint drive mapping's (:func:`jaxart.solvers.mujoco.joints.add_actuators`): POSITION
``gain kp, bias (0, −kp, −kd)``, ``ctrl = q* + (kd/kp) q̇*`` (``kp = 0``: gain ``kd``, ``ctrl = q̇*``); VELOCITY ``kd,
(0, 0, −kd)``; POSITION_VELOCITY both actuators. ``ctrl`` comes from ``Control.joint_target_q``/``joint_target_qd`` of
the loop joint's coordinate/DOF (the layout's ``pos_act``/``vel_act``). ``joint_effort_limit`` → each actuator's
``forcerange`` (a tree joint clamps the sum with ``actfrcrange``; with POSITION_VELOCITY and a saturated drive the two
differ). The site transmission serves the drives of every loop joint with one DOF (REVOLUTE, PRISMATIC, a D6 with one
axis: ``gear`` = the axis, translational for a linear one) and of loop BALL joints (three actuators
``<joint>_{x,y,z}_pos/_vel`` with ``gear`` = that rotation axis, whose length is that component of the relative
rotation vector — the tree BALL mapping's — and ``ctrl`` as the tree BALL actuators'), :func:`site_driven`; when such
a joint has an auxiliary body (below) its damping ``b`` is a site actuator too (``<joint>[_{x,y,z}]_damp``, gain 0,
bias ``(0, 0, −b)``). Velocity-dependent forces must not act on an auxiliary joint: MuJoCo's Euler / implicit
integrators fold them into ``M + h·D`` after the constraint solve, and on the auxiliary joint's tiny inertia that
cancels the weld's force (measured: a damped loop hinge pulled its weld 0.19 rad apart in 0.5 s), while through the
sites ``D`` lands on the real bodies' DOFs. Multi-axis D6 loop joints (Euler-angle and non-orthogonal linear
coordinates, which no fixed site pair measures) get *rate actuators* for their joint damping and their drives'
velocity parts, with the reference site and gear updated every step, and position actuators (stiffness only) on their
auxiliary joints; loop FREE / DISTANCE joints get rate actuators for their damping
(:mod:`jaxart.solvers.mujoco.loop_rates`). No auxiliary joint carries damping.

Loop-closing PRISMATIC joints and D6 joints with linear axes or two angular axes have no MuJoCo
equality; enabled REVOLUTE-like (0 linear + 1 angular DOF) and BALL-like (0 + 3) loop joints with finite
limits or nonzero armature, stiffness, damping or friction (:func:`has_terms`), and driven BALL-like ones,
would lose those terms as CONNECT rows. All of them get an *auxiliary body* ``<joint>__aux``: a child of the
parent's MuJoCo body at the parent anchor ``joint_X_p`` carrying the loop joint's DOFs as MuJoCo joints (the
tree-joint mapping, :func:`jaxart.solvers.mujoco.joints.add_joints`: slides then hinges, or one ball, named like
a tree joint's), welded (``mjEQ_WELD``, ``<joint>__weld``) to the child at the child anchor ``joint_X_c``. The
loop joint's coordinates thus become MuJoCo coordinates: its limits, springs, friction and armature are the
tree-joint mapping's (a BALL loop joint's limits and springs raise as on a tree BALL joint), drives and damping as
above, ``step`` writes them back, and before each step
they are re-measured from the tree (:func:`jaxart.dynamics.engine.loop_axes.loop_coordinates`, SolverFeatherstone's loop
coordinates) so a stale state cannot pull the weld apart. Equality, mimic and fixed-tendon entries naming such a
loop joint act on its auxiliary joints (the first one, as for a tree joint). The auxiliary body has mass
``AUX_MASS`` and inertia ``AUX_INERTIA`` (MuJoCo rejects massless moving bodies): a ~1e-6 relative perturbation
of the mechanism's inertia (measured on the tests' 1 kg-link parallelogram closed by a PRISMATIC loop, 0.4 s at
2 ms: raising it 100× moves the body poses by 1.5e-5, while MuJoCo's soft weld leaves 0.8e-3 (undriven) to
1.3e-3 (slide driven) between its poses and SolverFeatherstone's). Its ``body_invweight0`` (the weld's
regularisation scale) is set to the child's after compiling — with its own (≈ 1/AUX_MASS) the weld would be
~1e6 times too soft across the loop — and its DOFs' ``dof_invweight0`` (the regularisation scale of their limit
and friction rows) to the child's translational (slide) or rotational (hinge, ball) ``body_invweight0``: with
their own (≈ 1/AUX_INERTIA) a limit would barely act. MJCF has no attribute for these overrides, so a model
saved with ``save_to_mjcf`` and recompiled by MuJoCo loses them (``save_to_mjcf`` warns).
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.sim.enums import JointTargetMode, JointType
from jaxart.sim.validate import np_transform_inverse, np_transform_mul
from jaxart.solvers.mujoco.joints import UNLIMITED, add_joints
from jaxart.solvers.mujoco.loop_rates import add_rate_actuators, rate_joint
from jaxart.solvers.mujoco.shapes import wxyz

_IDENT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
_UNDRIVEN = (JointTargetMode.NONE, JointTargetMode.EFFORT)
AUX_MASS = 1e-6  # [kg] mass of a loop joint's auxiliary body
AUX_INERTIA = 1e-9  # [kg m²] its principal moments of inertia


def has_terms(h, j: int) -> bool:
    """Whether joint ``j`` has finite limits or nonzero armature, stiffness, damping or friction on any DOF.

    A DISTANCE joint's first-DOF limits are its anchor-distance limits (a tendon, :mod:`~jaxart.solvers.mujoco.tendons`)
    and do not count here.
    """
    ds, de = int(h.qd_start[j]), int(h.qd_start[j + 1])
    lim = slice(ds + 1 if int(h.jtype[j]) == JointType.DISTANCE else ds, de)
    limited = np.any(h.joint_limit_lower[lim] > -UNLIMITED) or np.any(h.joint_limit_upper[lim] < UNLIMITED)
    passive = any(np.any(getattr(h, f)[ds:de] != 0.0) for f in
                  ("joint_armature", "joint_stiffness", "joint_damping", "joint_friction"))
    return bool(limited or passive)


def needs_aux(h, j: int) -> bool:
    """Whether loop joint ``j`` is realised with an auxiliary body (module docstring).

    PRISMATIC and D6 joints with linear or two angular axes always; enabled REVOLUTE-like (0 linear + 1 angular DOF)
    and BALL-like (0 + 3) joints when they carry limits or passive terms (:func:`has_terms`), BALL-like ones also
    when driven.
    """
    nl, na = (int(x) for x in h.dof_dim[j])
    jt = int(h.jtype[j])
    if jt in (JointType.PRISMATIC, JointType.D6) and (nl > 0 or na == 2):
        return True
    if jt not in (JointType.REVOLUTE, JointType.BALL, JointType.D6) or (nl, na) not in ((0, 1), (0, 3)):
        return False
    if not h.topo.joint_enabled.array[j]:
        return False  # its equality rows are inactive; its terms act on nothing (as in SolverFeatherstone)
    return has_terms(h, j) or (na == 3 and driven(h, j))


def add_aux_bodies(spec: mujoco.MjSpec, h, fr, loops: list[int], rec, integrator: str = "") -> list[int]:
    """The auxiliary bodies (with the loop joints' MuJoCo joints) of the loops that need one (module docstring).

    Args:
        spec: The spec (tree bodies added).
        h: The converter's host copy of the model.
        fr: The equality module's ``_Frames``.
        loops: Loop-closing joints.
        rec: The layout recorder (``scalar`` receives the joints, ``aux`` the ``(aux body, child body)`` names).
        integrator: The resolved integrator option (unused: every mapping serves all integrators).

    Returns:
        The loop joints given an auxiliary body.
    """
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
        for jnt in body.joints:  # damping acts through sites (add_loop_drives)
            jnt.damping = [0.0, 0.0, 0.0]
        rec.aux.append((f"{label}__aux", fr.name(int(h.child[j]), what)))
        nl, na = (int(x) for x in h.dof_dim[j])
        rec.loop_axes.append((int(j), p, int(h.child[j]), int(h.jtype[j]), nl, na, int(h.qd_start[j]),
                              int(h.q_start[j]), int(h.q_start[j + 1] - h.q_start[j])))
        out.append(j)
    return out


def fix_aux_invweight(mj_model: mujoco.MjModel, rec) -> None:
    """Give each auxiliary body its child's ``body_invweight0`` (the weld's regularisation scale) and its joints'
    DOFs the child's translational (slide) or rotational (hinge, ball) one as ``dof_invweight0`` (the scale of their
    limit and friction rows; module docstring)."""
    for aux, child in rec.aux:
        a = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, aux)
        c = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, child)
        mj_model.body_invweight0[a] = mj_model.body_invweight0[c]
        for jnt in range(mj_model.body_jntadr[a], mj_model.body_jntadr[a] + mj_model.body_jntnum[a]):
            slide = mj_model.jnt_type[jnt] == mujoco.mjtJoint.mjJNT_SLIDE
            n = 3 if mj_model.jnt_type[jnt] == mujoco.mjtJoint.mjJNT_BALL else 1
            adr = mj_model.jnt_dofadr[jnt]
            mj_model.dof_invweight0[adr:adr + n] = mj_model.body_invweight0[c, 0 if slide else 1]


def driven(h, j: int) -> bool:
    """Whether loop joint ``j`` has a POSITION / VELOCITY / POSITION_VELOCITY drive on any DOF."""
    ds, de = int(h.qd_start[j]), int(h.qd_start[j + 1])
    return bool(np.any(~np.isin(h.mode[ds:de], _UNDRIVEN)))


def check_loop_drive(h, j: int) -> None:
    """Raise for terms on loop joints that map to no MuJoCo coordinate (FREE, DISTANCE).

    A loop FREE joint constrains nothing and a loop DISTANCE joint only its anchor distance (a tendon), so neither
    has MuJoCo coordinates to carry drives, per-DOF limits, armature, springs or friction; their damping acts through
    rate actuators (:mod:`~jaxart.solvers.mujoco.loop_rates`).

    Raises:
        NotImplementedError: Such a term on a loop FREE/DISTANCE joint, or a drive on a loop joint that is neither
            REVOLUTE-like (0 linear + 1 angular DOF) nor realised with an auxiliary body.
    """
    nl, na = (int(x) for x in h.dof_dim[j])
    jt = JointType(int(h.jtype[j]))
    what = f"SolverMuJoCo: joint {h.joint_label[j]!r}"
    if jt in (JointType.FREE, JointType.DISTANCE):
        ds, de = int(h.qd_start[j]), int(h.qd_start[j + 1])
        lim = slice(ds + 1 if jt == JointType.DISTANCE else ds, de)
        bad = [name for name, hit in (
            ("drives", driven(h, j)),
            ("per-DOF limits", np.any(h.joint_limit_lower[lim] > -UNLIMITED)
             or np.any(h.joint_limit_upper[lim] < UNLIMITED)),
            *((f, np.any(getattr(h, f)[ds:de] != 0.0)) for f in ("joint_armature", "joint_stiffness",
                                                                 "joint_friction"))) if hit]
        if bad:
            raise NotImplementedError(f"{what}: {', '.join(bad)} on loop-closing {jt.name} joints are not mapped "
                                      "(MuJoCo has no coordinates for them; DISTANCE limits map to a tendon and "
                                      "joint_damping to rate actuators)")
        return
    if driven(h, j) and (nl, na) != (0, 1) and not needs_aux(h, j):
        raise NotImplementedError(f"{what}: drives on loop-closing {jt.name} joints with {nl} linear + {na} angular "
                                  "DOFs are not mapped")


def site_driven(h, j: int) -> bool:
    """Whether loop joint ``j``'s drives and damping act through site transmissions: one-DOF joints (REVOLUTE,
    PRISMATIC, D6 with one axis) and BALL joints, whose coordinates a site transmission measures exactly."""
    nl, na = (int(x) for x in h.dof_dim[j])
    return nl + na == 1 or int(h.jtype[j]) == JointType.BALL


def add_loop_drives(spec: mujoco.MjSpec, h, fr, loops: list[int], rec) -> None:
    """Sites and site-transmission actuators for the drives and damping of the loop joints ``loops``: those that
    :func:`site_driven` selects, and the rate actuators of multi-axis D6 and damped FREE / DISTANCE loop joints
    (:func:`~jaxart.solvers.mujoco.loop_rates.add_rate_actuators`; module docstring).

    Args:
        spec: The spec (bodies added).
        h: The converter's host copy of the model.
        fr: The equality module's ``_Frames`` (MuJoCo body names and frame offsets).
        loops: Loop-closing joints.
        rec: The layout recorder (``pos_act``/``vel_act``/``ball_act``/``loop_rates`` receive the actuators).
    """
    for j in loops:
        aux = needs_aux(h, j)
        damped = np.any(h.joint_damping[int(h.qd_start[j]):int(h.qd_start[j + 1])] != 0.0)
        check_loop_drive(h, j)
        if rate_joint(h, j):  # multi-axis D6 (auxiliary body) or damped FREE / DISTANCE: per-step rate actuators
            if h.topo.joint_enabled.array[j] and (aux or int(h.jtype[j]) != JointType.D6):
                add_rate_actuators(spec, h, fr, j, rec)
            continue
        if not (driven(h, j) or (aux and damped)) or not site_driven(h, j):
            continue
        what = f"SolverMuJoCo: loop-closing joint {h.joint_label[j]!r}"
        label = h.joint_label[j]
        site = anchor_site(spec, fr, int(h.child[j]), h.joint_X_c[j], f"{label}__child", what)
        ref = anchor_site(spec, fr, int(h.parent[j]), h.joint_X_p[j], f"{label}__parent", what)
        ball = int(h.jtype[j]) == JointType.BALL
        nl = int(h.dof_dim[j, 0])
        ds, qs = int(h.qd_start[j]), int(h.q_start[j])
        for k in range(3 if ball else 1):
            d = ds + k
            axis = np.eye(3)[k] if ball else h.joint_axis[d] / np.linalg.norm(h.joint_axis[d])
            gear = np.concatenate([axis, np.zeros(3)] if nl else [np.zeros(3), axis])
            tag = f"{label}_{'xyz'[k]}" if ball else label
            _site_drive(spec, h, rec, d, tag, (site, ref, gear), (qs, k) if ball else qs)
            if aux and h.joint_damping[d] != 0.0:  # the auxiliary joint carries no damping (module docstring)
                b = float(h.joint_damping[d])
                _site_actuator(spec, f"{tag}_damp", site, ref, 0.0, [0.0, 0.0, -b], gear, np.inf)


def _site_drive(spec, h, rec, d: int, tag: str, trn: tuple, coord) -> None:
    """Position / velocity site actuators of DOF ``d``; ``coord`` is its coordinate, or ``(q_start, axis)`` (BALL)."""
    mode, kp, kd = int(h.mode[d]), float(h.joint_target_ke[d]), float(h.joint_target_kd[d])
    effort = float(h.joint_effort_limit[d])
    if mode == JointTargetMode.POSITION and kp == 0.0:  # kd (q̇* − q̇) only: a velocity actuator
        _site_actuator(spec, f"{tag}_pos", *trn[:2], kd, [0.0, 0.0, -kd], trn[2], effort)
        rec.vel_act.append((f"{tag}_pos", d))
    elif mode in (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY):
        damp = kd if mode == JointTargetMode.POSITION else 0.0
        _site_actuator(spec, f"{tag}_pos", *trn[:2], kp, [0.0, -kp, -damp], trn[2], effort)
        if isinstance(coord, tuple):
            rec.ball_act.append((f"{tag}_pos", *coord))
        else:
            rec.pos_act.append((f"{tag}_pos", coord))
        if damp > 0.0:  # ctrl += (kd/kp) q̇* (jaxart's POSITION drive: kp (q* − q) + kd (q̇* − q̇))
            rec.pos_vel.append((f"{tag}_pos", d, damp / kp))
    if mode in (JointTargetMode.VELOCITY, JointTargetMode.POSITION_VELOCITY):
        _site_actuator(spec, f"{tag}_vel", *trn[:2], kd, [0.0, 0.0, -kd], trn[2], effort)
        rec.vel_act.append((f"{tag}_vel", d))


def measure_loop_coords(layout, model, joint_q, joint_qd, body_q):
    """``(joint_q, joint_qd)`` with the auxiliary-body loop joints' entries measured from the tree (jittable)."""
    if not layout.loop_axes:
        return joint_q, joint_qd
    from jaxart.dynamics.engine.loop_axes import LoopAxes, loop_coordinates

    return loop_coordinates(model, joint_q, joint_qd, body_q, LoopAxes(layout.loop_axes))[:2]


def anchor_site(spec: mujoco.MjSpec, fr, b: int, x_anchor: np.ndarray, name: str, what: str) -> str:
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
    if np.isfinite(effort):
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-effort, effort]
