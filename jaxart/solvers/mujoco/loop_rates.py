"""Rate actuators of the MuJoCo bridge: velocity terms on loop-closing joints whose rates no fixed site pair measures.

SolverFeatherstone's rate of a loop joint's axis (:mod:`jaxart.dynamics.engine.loop_axes`) is
``q̇_k = g_k · R_Pᵀ (v, ω)``:
``(v, ω)`` the child's twist relative to the parent body's motion at a point ``x`` (the child anchor for D6 linear
axes, the child COM for FREE/DISTANCE joints), in the parent-anchor frame ``R_P``, and ``g_k`` the axis's covector
(D6 linear: row ``k`` of ``(L Lᵀ)⁻¹ L``; D6 angular: the Euler-chain covector ``cov_k(q_rel)``; FREE/DISTANCE: the
unit vectors). MuJoCo's site transmission with a reference site measures ``gear · R_refᵀ (J_site − J_ref) q̇``
(point Jacobians at each site), which is that rate when the reference site, fixed to the parent body with the
parent-anchor orientation, lies at ``x`` and ``gear = g_k``. ``x`` moves on the parent body (and ``cov_k`` with the
joint's angles), so :func:`update_rate_model` sets the reference sites' ``site_pos`` and the angular ``actuator_gear``
in the ``mjx.Model`` of every step from the step's body poses.

Each such axis gets a child site ``<joint>__rate_child`` at ``x`` on the child, a reference site ``<joint>__rate``
on the parent (both placed at the model's initial configuration) and per DOF with a velocity term:

* joint damping ``b`` → ``<joint>_<k>_damp`` (gain 0, bias ``(0, 0, −b)``);
* a drive's velocity part (VELOCITY / POSITION_VELOCITY: ``<joint>_<k>_vel``, gain ``kd``, bias ``(0, 0, −kd)``,
  ``ctrl = joint_target_qd``; POSITION: its damping part ``kd (q̇* − q̇)``, the same actuator), force range from
  ``joint_effort_limit``; both listed as velocity actuators, so ACCELERATION drives scale them.

The force is ``−b q̇_k`` applied through ``∂q̇_k/∂q̇`` on the real bodies' DOFs, so MuJoCo's Euler / implicit
integrators fold it into ``M + h·D`` as SolverFeatherstone's implicit joint damping (through the auxiliary joint
they would cancel the weld, :mod:`jaxart.solvers.mujoco.loops`). A D6 drive's position part stays on the auxiliary
joint (``<joint>_<axis>_pos``, bias ``(0, −kp, 0)``) whose ``actfrcrange`` clamps it: with a saturated drive that
clamps its two parts separately (as the site drives of one-DOF loop joints). MuJoCo C (``SolverMuJoCo.to_mj_data``)
sees the sites and gears of the converted model, not the per-step ones.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import mujoco
import numpy as np

from jaxart.math import quat_conjugate, quat_mul, transform_inverse, transform_mul, transform_point
from jaxart.sim.enums import JointTargetMode, JointType
from jaxart.sim.validate import np_transform_inverse, np_transform_mul
from jaxart.solvers.mujoco.shapes import wxyz

_IDENT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


class RatePlan(NamedTuple):
    """Static per-step updates of the rate actuators (:func:`rate_plan`).

    Attributes:
        sites: ``(site id, joint, parent, child, parent MuJoCo-frame offset (7,), point in the child frame (3,))``.
        gears: ``(actuator ids (n,), joint, angular axis indices (n,))`` per D6 joint with angular rate actuators.
    """

    sites: tuple
    gears: tuple


def rate_joint(h, j: int) -> bool:
    """Whether loop joint ``j``'s velocity terms need rate actuators: a D6 with several axes (it has an auxiliary
    body), or a FREE / DISTANCE joint with damping."""
    nl, na = (int(x) for x in h.dof_dim[j])
    jt = int(h.jtype[j])
    if jt == JointType.D6:
        return nl + na > 1
    ds, de = int(h.qd_start[j]), int(h.qd_start[j + 1])
    return jt in (JointType.FREE, JointType.DISTANCE) and bool(np.any(h.joint_damping[ds:de] != 0.0))


def add_rate_actuators(spec: mujoco.MjSpec, h, fr, j: int, rec) -> None:
    """Sites and rate actuators of loop joint ``j`` (module docstring); D6: also the position actuators of its
    auxiliary joints.

    Args:
        spec: The spec (bodies and auxiliary bodies added).
        h: The converter's host copy of the model.
        fr: The equality module's ``_Frames``.
        j: A loop joint with :func:`rate_joint`.
        rec: The layout recorder (``pos_act``, ``vel_act`` and ``loop_rates`` receive entries).
    """
    label, p, c = h.joint_label[j], int(h.parent[j]), int(h.child[j])
    jt, (nl, na) = int(h.jtype[j]), (int(x) for x in h.dof_dim[j])
    ds = int(h.qd_start[j])
    d6 = jt == JointType.D6
    if d6:
        _aux_position_actuators(spec, h, j, rec)
        gears = [_d6_gear(h, j, k, nl) for k in range(nl + na)]
    else:
        gears = [np.eye(6)[k] for k in range(6)]
    what = f"SolverMuJoCo: loop-closing joint {label!r}"
    point = h.joint_X_c[j][:3] if d6 else h.body_com[c]
    bq = initial_body_q(h)
    x = np_transform_mul(_pose(bq, c), np.concatenate([point, _IDENT[3:]]))[:3]
    p_frame = np_transform_mul(_pose(bq, p), fr.offset(p))
    anchor = np_transform_mul(np_transform_inverse(fr.offset(p)), h.joint_X_p[j])
    ref_pos = np_transform_mul(np_transform_inverse(p_frame), np.concatenate([x, _IDENT[3:]]))[:3]
    child = spec.body(fr.name(c, what))
    child.add_site(name=f"{label}__rate_child",
                   pos=np_transform_mul(np_transform_inverse(fr.offset(c)), np.concatenate([point, _IDENT[3:]]))[:3],
                   size=[0.005, 0.0, 0.0])
    parent = spec.worldbody if p < 0 else spec.body(fr.name(p, what))
    parent.add_site(name=f"{label}__rate", pos=ref_pos, quat=wxyz(anchor[3:]), size=[0.005, 0.0, 0.0])
    rec.loop_rates.append(("site", f"{label}__rate", int(j), p, c, fr.offset(p), np.asarray(point, np.float64)))
    for k, gear in enumerate(gears):
        d = ds + k
        tag = f"{label}_{k}"
        mode, kd, b = int(h.mode[d]), float(h.joint_target_kd[d]), float(h.joint_damping[d])
        effort = float(h.joint_effort_limit[d])
        if b != 0.0:
            _rate_actuator(spec, f"{tag}_damp", label, 0.0, b, gear, np.inf)
            _record_gear(rec, f"{tag}_damp", j, k, nl, d6)
        if mode in (JointTargetMode.VELOCITY, JointTargetMode.POSITION_VELOCITY) or (
                mode == JointTargetMode.POSITION and kd != 0.0):
            _rate_actuator(spec, f"{tag}_vel", label, kd, kd, gear, effort)
            rec.vel_act.append((f"{tag}_vel", d))  # kd (q̇* − q̇) in every mode (POSITION: its damping part)
            _record_gear(rec, f"{tag}_vel", j, k, nl, d6)


def _aux_position_actuators(spec: mujoco.MjSpec, h, j: int, rec) -> None:
    """Position actuators (bias ``(0, −kp, 0)``) on the auxiliary joints of D6 loop joint ``j``."""
    from jaxart.solvers.mujoco.joints import mj_joint_names

    ds, qs = int(h.qd_start[j]), int(h.q_start[j])
    for k, name in enumerate(mj_joint_names(h, j)):
        d = ds + k
        if int(h.mode[d]) not in (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY):
            continue
        kp = float(h.joint_target_ke[d])
        act = spec.add_actuator(name=f"{name}_pos", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gaintype, act.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm = np.concatenate([[kp], np.zeros(9)])
        act.biasprm = np.concatenate([[0.0, -kp, 0.0], np.zeros(7)])
        rec.pos_act.append((f"{name}_pos", qs + k))


def _d6_gear(h, j: int, k: int, nl: int) -> np.ndarray:
    """Converted gear of D6 axis ``k``: linear ``(L Lᵀ)⁻¹ L`` row; angular the authored axis (updated per step)."""
    ds = int(h.qd_start[j])
    if k < nl:
        lin = np.asarray(h.joint_axis[ds:ds + nl], np.float64)
        return np.concatenate([np.linalg.solve(lin @ lin.T, lin)[k], np.zeros(3)])
    axis = np.asarray(h.joint_axis[ds + k], np.float64)
    return np.concatenate([np.zeros(3), axis / np.linalg.norm(axis)])


def _record_gear(rec, name: str, j: int, k: int, nl: int, d6: bool) -> None:
    if d6 and k >= nl:
        rec.loop_rates.append(("gear", name, int(j), k - nl))


def _rate_actuator(spec: mujoco.MjSpec, name: str, label: str, gain: float, b: float, gear: np.ndarray,
                   effort: float) -> None:
    act = spec.add_actuator(name=name, target=f"{label}__rate_child", trntype=mujoco.mjtTrn.mjTRN_SITE)
    act.refsite = f"{label}__rate"
    act.gaintype, act.biastype = mujoco.mjtGain.mjGAIN_FIXED, mujoco.mjtBias.mjBIAS_AFFINE
    act.gainprm = np.concatenate([[gain], np.zeros(9)])
    act.biasprm = np.concatenate([[0.0, 0.0, -b], np.zeros(7)])
    act.gear = gear
    if np.isfinite(effort):
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-effort, effort]


def initial_body_q(h) -> np.ndarray:
    """Body poses at the model's initial configuration (cached on ``h``)."""
    if getattr(h, "initial_body_q", None) is None:
        from jaxart.solvers.mujoco.joints import model_initial_body_q

        h.initial_body_q = model_initial_body_q(h.model)
    return h.initial_body_q


def _pose(body_q: np.ndarray, b: int) -> np.ndarray:
    return _IDENT if b < 0 else body_q[b]


def rate_plan(mj_model: mujoco.MjModel, rec) -> RatePlan | None:
    """The static :class:`RatePlan` of the recorded rate actuators, or ``None`` when there are none."""
    if not rec.loop_rates:
        return None
    sites, gears = [], {}
    for entry in rec.loop_rates:
        if entry[0] == "site":
            sid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_SITE, entry[1])
            sites.append((int(sid), *entry[2:]))
        else:
            aid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_ACTUATOR, entry[1])
            gears.setdefault(entry[2], []).append((int(aid), entry[3]))
    gear_rows = tuple((np.asarray([a for a, _ in v], np.int32), j, np.asarray([k for _, k in v], np.int32))
                      for j, v in gears.items())
    return RatePlan(tuple(sites), gear_rows)


def update_rate_model(m, plan: RatePlan, model, body_q: jnp.ndarray):
    """``m`` (an ``mjx.Model``) with the rate actuators' reference-site positions and angular gears at ``body_q``
    (jittable; module docstring)."""
    from jaxart.dynamics.engine.loop_axes import loop_angles

    dtype = m.site_pos.dtype
    ident = jnp.asarray(_IDENT, dtype)

    def pose(b):
        return ident if b < 0 else body_q[b].astype(dtype)

    ids, pos = [], []
    for sid, _, p, c, off, point in plan.sites:
        x = transform_point(pose(c), jnp.asarray(point, dtype))
        frame = transform_mul(pose(p), jnp.asarray(off, dtype))
        ids.append(sid)
        pos.append(transform_point(transform_inverse(frame), x))
    site_pos = m.site_pos.at[np.asarray(ids, np.int32)].set(jnp.stack(pos))
    gear = m.actuator_gear
    for acts, j, ks in plan.gears:
        nl, na = (int(x) for x in model.topology.joint_dof_dim.array[j])
        d0 = int(model.topology.joint_qd_start.array[j]) + nl
        p, c = int(model.topology.joint_parent.array[j]), int(model.topology.joint_child.array[j])
        xp = transform_mul(pose(p), model.joint_X_p[j].astype(dtype))
        xc = transform_mul(pose(c), model.joint_X_c[j].astype(dtype))
        _, cov = loop_angles(model.joint_axis[d0:d0 + na].astype(dtype), quat_mul(quat_conjugate(xp[3:]), xc[3:]))
        gear = gear.at[acts, 3:].set(cov[ks])
    return m.replace(site_pos=site_pos, actuator_gear=gear)
