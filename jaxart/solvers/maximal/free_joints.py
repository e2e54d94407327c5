"""Drives and ``joint_act`` on FREE and DISTANCE joints in maximal coordinates (SolverXPBD, SolverSemiImplicit).

The DOFs are SolverFeatherstone's (:mod:`jaxart.dynamics.joint_forces`): in the parent-anchor frame (axes X, Y, Z
whatever ``joint_axis`` holds), the linear DOFs are the child-anchor position ``p = joint_q[0:3]`` paired with the
child-COM velocity ``v = joint_qd[0:3]`` (relative to the parent, seen from the moving parent anchor), the angular
DOFs the rotation vector ``log(q)`` of ``q = q_p⁻¹ q_c`` paired with the relative angular velocity
``ω = joint_qd[3:6]``. A generalised force ``(f, τ)`` is the force ``R_p f`` on the child at its COM (so it exerts
no torque on the child) and the pure torque ``R_p τ``, with the opposite force at the same world point and the
opposite torque on the parent (power ``f·v + τ·ω``).

* SolverSemiImplicit applies the explicit drive ``ke e + kd (q̇* − q̇) + joint_act`` per DOF (:func:`free_wrenches`)
  with Featherstone's errors ``e = p* − p`` and ``e = log(q* ⊗ q⁻¹)``.
* SolverXPBD solves the drive as an implicit row per DOF (:mod:`jaxart.solvers.xpbd.joints`, ``drive_coords``), in
  increments over the step so that each row is Featherstone's implicit law ``ke (e₀ − dt q̇) + kd (q̇* − q̇)``
  (``e₀`` the error at the step start, ``q̇`` the new velocity): the linear rows act at the child COM
  (:func:`com_levers`) on the COM coordinate ``c = p + R(q)·(COM − anchor)`` with target ``p* + (c₀ − p₀)`` (offset
  frozen at the step start), the angular rows on ``φ = log(q ⊗ q₀⁻¹)``, the rotation since the step start
  (covectors ``J⁻¹(φ)``), with target ``log(q* ⊗ q₀⁻¹)``. ``joint_act`` is an explicit wrench in the prediction
  (:func:`free_wrenches` without the drive).

``ACCELERATION`` drives scale both gains by the DOF's effective inertia of
:mod:`jaxart.solvers.maximal.drive_inertia` (a world-parented FREE body: its mass, and ``1 / (e_k·I⁻¹e_k)``).
Per-DOF limits and passive ``joint_stiffness``/``joint_damping`` on these DOFs are not modelled here: both solvers
reject them at construction (:func:`reject_free_joint_terms`).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_conjugate, quat_mul, quat_normalize, quat_rotate, quat_rotate_inv
from jaxart.sim.enums import JointType
from jaxart.solvers.maximal.joints import (
    JointFrames,
    extend_world,
    gather_dof,
    joint_frames,
    joint_static,
    rotation_vector,
    scatter_body_wrench,
)


def free_joints(st) -> np.ndarray:
    """Static ``(J,)`` bool: enabled FREE and DISTANCE joints."""
    return st.enabled & np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE])


def free_drive_joints(st) -> np.ndarray:
    """Static ``(J,)`` bool: enabled FREE/DISTANCE joints with a drive mode (position or velocity) on a DOF."""
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)
    return free_joints(st) & np.any(st.use_ke[dof] | st.use_kd[dof], 1)


@functools.lru_cache(maxsize=64)
def free_target_coords(topo) -> tuple[np.ndarray, np.ndarray]:
    """Static ``((J, 3), (J, 4))`` indices into ``concat(joint_target_q, [0, 1])`` of the FREE/DISTANCE target
    position and quaternion (the sentinels ``0`` and the identity for other joints)."""
    nj, nq = topo.joint_count, topo.joint_coord_count
    lin = np.full((nj, 3), nq, np.int64)
    quat = np.tile(np.array([nq, nq, nq, nq + 1]), (nj, 1))
    qs, jt = topo.joint_q_start.array, topo.joint_type.array
    for j in np.nonzero(np.isin(jt, [JointType.FREE, JointType.DISTANCE]))[0]:
        lin[j] = qs[j] + np.arange(3)
        quat[j] = qs[j] + 3 + np.arange(4)
    return lin, quat


def free_targets(model, control, dtype):
    """``(p* (J, 3), q* (J, 4))``: FREE/DISTANCE target positions and unit quaternions (0 / identity elsewhere)."""
    lin, quat = free_target_coords(model.topology)
    t_ext = jnp.concatenate([jnp.asarray(control.joint_target_q, dtype), jnp.array([0.0, 1.0], dtype)])
    return t_ext[lin], quat_normalize(t_ext[quat])


def com_levers(fr: JointFrames, on: np.ndarray) -> JointFrames:
    """``fr`` with the child anchor of the joints ``on`` (static ``(J,)`` bool) moved to the child COM.

    ``x_err`` becomes the child COM minus the parent anchor, ``r_c`` zero and ``r_p`` the child COM minus the parent
    COM (the parent's point coinciding with the child COM); the anchor orientations are kept.
    """
    m = jnp.asarray(on)[:, None]
    com_off = fr.x_err - fr.r_c
    return fr._replace(x_err=jnp.where(m, com_off, fr.x_err), r_p=jnp.where(m, fr.r_p + com_off, fr.r_p),
                       r_c=jnp.where(m, 0.0, fr.r_c))


def free_wrenches(model, state, control, *, drives: bool = True) -> jnp.ndarray:
    """``(body_count, 6)`` world wrenches (about the COMs) of ``joint_act`` and (``drives``) the explicit drives of
    the FREE/DISTANCE joints (module docstring); zero when the model has none.

    Args:
        model: The model (gains already scaled for ``ACCELERATION`` drives:
            :func:`~jaxart.solvers.maximal.drive_inertia.acceleration_gains`).
        state: State (``body_q``, ``body_qd``).
        control: Control (targets, ``joint_act``).
        drives: Include the PD drives (``False``: ``joint_act`` only, e.g. SolverXPBD whose drives are rows).
    """
    st = joint_static(model.topology)
    f = state.body_q.dtype
    nb = model.body_count
    idx = np.nonzero(free_joints(st))[0]
    if idx.size == 0:  # static
        return jnp.zeros((nb, 6), f)
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)[idx]
    gen = gather_dof(jnp.asarray(control.joint_act, f), dof)
    raw = joint_frames(model, state.body_q, state.body_qd, idx)
    fr = com_levers(raw, np.ones(idx.size, bool))
    qp = raw.x_p[:, 3:]
    if drives and free_drive_joints(st)[idx].any():  # static
        _, bqd = extend_world(state.body_q, state.body_qd)
        # child-COM velocity minus the parent's velocity at that point (from the anchors' relative velocity)
        v_com = (raw.v_err - jnp.cross(bqd[st.child[idx], 3:], raw.r_c)
                 - jnp.cross(bqd[st.parent[idx], 3:], raw.x_err - raw.r_c))
        p, v, w = (quat_rotate_inv(qp, x) for x in (raw.x_err, v_com, raw.w_err))
        p_t, q_t = (x[idx] for x in free_targets(model, control, f))
        err = jnp.concatenate([p_t - p, rotation_vector(quat_mul(q_t, quat_conjugate(raw.q_rel)))], -1)
        vel = jnp.concatenate([v, w], -1)
        ke = jnp.asarray(st.use_ke[dof]) * gather_dof(jnp.asarray(model.joint_target_ke, f), dof)
        kd = jnp.asarray(st.use_kd[dof]) * gather_dof(jnp.asarray(model.joint_target_kd, f), dof)
        gen = gen + ke * err + kd * (gather_dof(jnp.asarray(control.joint_target_qd, f), dof) - vel)
    force, torque = quat_rotate(qp, gen[:, :3]), quat_rotate(qp, gen[:, 3:])
    return scatter_body_wrench(nb, st.parent[idx], st.child[idx], fr.r_p, fr.r_c, force, torque)


def reject_free_joint_terms(model, solver: str) -> None:
    """Raise ``NotImplementedError`` naming the FREE/DISTANCE joints with per-DOF limits or a passive
    ``joint_stiffness``/``joint_damping`` (not modelled in maximal coordinates; a DISTANCE joint's distance limits
    on its first DOF are). Traced models are not checked (the terms are then ignored)."""
    import jax

    try:
        vals = {k: np.asarray(getattr(model, f"joint_{k}")) for k in
                ("stiffness", "damping", "limit_lower", "limit_upper")}
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return
    topo = model.topology
    jt, ds = np.asarray(topo.joint_type.array), np.asarray(topo.joint_qd_start.array)
    bad = []
    on = np.isin(jt, [int(JointType.FREE), int(JointType.DISTANCE)]) & np.asarray(topo.joint_enabled.array, bool)
    for j in np.flatnonzero(on):
        d = np.arange(ds[j], ds[j + 1])
        lim = d[1:] if jt[j] == int(JointType.DISTANCE) else d
        terms = [k for k in ("stiffness", "damping") if np.any(vals[k][d] != 0.0)]
        if np.any(vals["limit_lower"][lim] > -1e9) or np.any(vals["limit_upper"][lim] < 1e9):
            terms.append("per-DOF limits")
        if terms:
            bad.append(f"{topo.joint_label[j]!r} ({', '.join(terms)})")
    if bad:
        raise NotImplementedError(f"{solver}: per-DOF limits and passive joint_stiffness/joint_damping on FREE/"
                                  f"DISTANCE joints are not modelled in maximal coordinates: {'; '.join(bad)}; use "
                                  "SolverFeatherstone or SolverMuJoCo")
