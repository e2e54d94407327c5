"""Drives and ``joint_act`` on FREE and DISTANCE joints in maximal coordinates (SolverXPBD, SolverSemiImplicit).

The DOFs are SolverFeatherstone's (:mod:`jaxart.dynamics.joint_forces`): in the parent-anchor frame (axes X, Y, Z
whatever ``joint_axis`` holds), the linear DOFs are the child-anchor position ``p = joint_q[0:3]`` paired with the
child-COM velocity ``v = joint_qd[0:3]`` (relative to the parent, seen from the moving parent anchor), the angular
DOFs the rotation vector ``log(q)`` of ``q = q_p⁻¹ q_c`` paired with the relative angular velocity
``ω = joint_qd[3:6]``. A generalised force ``(f, τ)`` is the force ``R_p f`` on the child at its COM (so it exerts
no torque on the child) and the pure torque ``R_p τ``, with the opposite force at the same world point and the
opposite torque on the parent (power ``f·v + τ·ω``).

* SolverSemiImplicit applies SolverFeatherstone's explicit law per DOF (:func:`free_wrenches`): the drive
  ``ke e + kd (q̇* − q̇)`` with the errors ``e = p* − p`` and ``e = log(q* ⊗ q⁻¹)``, the passive spring
  ``joint_stiffness (joint_rest_q − x) − joint_damping q̇`` with ``x = p`` and ``x = log(q)`` (the rotation vector,
  not wrapped), the penalty ``limit_ke (x_lim − x) − limit_kd q̇`` of a FREE DOF beyond its per-DOF limits (its drive
  then off), and ``joint_act``.
* SolverXPBD solves the drive as an implicit row per DOF (:mod:`jaxart.solvers.xpbd.joints`, ``drive_coords``), in
  increments over the step so that each row is Featherstone's implicit law ``ke (e₀ − dt q̇) + kd (q̇* − q̇)``
  (``e₀`` the error at the step start, ``q̇`` the new velocity): the linear rows act at the child COM
  (:func:`com_levers`) on the COM coordinate ``c = p + R(q)·(COM − anchor)`` with target ``p* + (c₀ − p₀)`` (offset
  frozen at the step start), the angular rows on ``φ = log(q ⊗ q₀⁻¹)``, the rotation since the step start
  (covectors ``J⁻¹(φ)``), with target ``log(q* ⊗ q₀⁻¹)``. ``joint_act`` is an explicit wrench in the prediction
  (:func:`free_wrenches` without the drive).

``ACCELERATION`` drives scale both gains by the DOF's effective inertia of
:mod:`jaxart.solvers.maximal.drive_inertia` (a world-parented FREE body: its mass, and ``1 / (e_k·I⁻¹e_k)``).
SolverXPBD folds passive ``joint_stiffness``/``joint_damping`` into the same implicit rows (Featherstone's implicit
spring ``k (rest − x₀ − dt q̇) − d q̇``, rest ``joint_rest_q`` on ``x = (p, log q)``); the rows are made for the
joints :func:`free_passive_rows` finds on the concrete model at construction (a traced model's passive terms on
these joints are ignored). It holds a FREE joint's per-DOF position limits on ``p`` as hard rows (the linear joint
row, the drive target clipped into them as for scalar DOFs; solved without other joints when
:func:`free_position_limits` finds them on the concrete model), not its angular limits. Unmodelled terms raise at
construction (:func:`reject_free_joint_terms`): SolverXPBD's angular FREE limits, and both solvers' per-DOF limits
of a DISTANCE joint's DOFs past the first (its distance limits; SolverFeatherstone has none there).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxart.laws.joint import drive, penalty_limit, spring_damper
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
    """Static ``(J,)`` bool: enabled FREE/DISTANCE joints with a drive mode (position or velocity) on a DOF or
    marked in ``st.free_rows`` (SolverXPBD: passive terms, :func:`free_passive_rows`)."""
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)
    rows = np.any(st.use_ke[dof] | st.use_kd[dof], 1)
    if st.free_rows is not None:
        rows = rows | st.free_rows
    return free_joints(st) & rows


def free_passive_rows(model) -> tuple[int, ...]:
    """Static: the enabled FREE/DISTANCE joints with a nonzero passive ``joint_stiffness``/``joint_damping`` of a
    concrete model (``()`` for a traced one, whose passive terms on these joints SolverXPBD then ignores)."""
    import jax

    try:
        k, d = np.asarray(model.joint_stiffness), np.asarray(model.joint_damping)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return ()
    st = joint_static(model.topology)
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)
    nd = model.topology.joint_dof_count
    passive = np.any((k.reshape(-1, nd) != 0.0) | (d.reshape(-1, nd) != 0.0), 0)  # any world of a batched model
    return tuple(int(j) for j in np.flatnonzero(free_joints(st) & np.any(np.append(passive, False)[dof], 1)))


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
    """``(body_count, 6)`` world wrenches (about the COMs) of ``joint_act`` and (``drives``) the explicit drives,
    passive springs and per-DOF penalty limits of the FREE/DISTANCE joints (module docstring); zero when the model
    has none.

    Args:
        model: The model (gains already scaled for ``ACCELERATION`` drives:
            :func:`~jaxart.solvers.maximal.drive_inertia.acceleration_gains`).
        state: State (``body_q``, ``body_qd``).
        control: Control (targets, ``joint_act``).
        drives: Include the drives, springs and limits (``False``: ``joint_act`` only, e.g. SolverXPBD whose drives
            are rows).
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
    if drives:
        gen = gen + _explicit_terms(model, state, control, st, idx, raw)
    force, torque = quat_rotate(qp, gen[:, :3]), quat_rotate(qp, gen[:, 3:])
    return scatter_body_wrench(nb, st.parent[idx], st.child[idx], fr.r_p, fr.r_c, force, torque)


def _explicit_terms(model, state, control, st, idx: np.ndarray, raw: JointFrames) -> jnp.ndarray:
    """``(len(idx), 6)`` generalised forces of the explicit drives, passive springs and per-DOF penalty limits of
    the FREE/DISTANCE joints ``idx`` (SolverFeatherstone's explicit law, module docstring)."""
    f = state.body_q.dtype
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)[idx]
    _, bqd = extend_world(state.body_q, state.body_qd)
    # child-COM velocity minus the parent's velocity at that point (from the anchors' relative velocity)
    v_com = (raw.v_err - jnp.cross(bqd[st.child[idx], 3:], raw.r_c)
             - jnp.cross(bqd[st.parent[idx], 3:], raw.x_err - raw.r_c))
    qp = raw.x_p[:, 3:]
    p, v, w = (quat_rotate_inv(qp, x) for x in (raw.x_err, v_com, raw.w_err))
    pos = jnp.concatenate([p, rotation_vector(raw.q_rel)], -1)
    vel = jnp.concatenate([v, w], -1)
    g = functools.partial(_gather, dof=dof, dtype=f)
    # per-DOF penalty limits on FREE joints (DISTANCE: only its distance limit, a row elsewhere); the drive is off
    # on a DOF beyond its limit
    lo, hi = g(model.joint_limit_lower), g(model.joint_limit_upper)
    is_dist = jnp.asarray(st.jtype[idx] == JointType.DISTANCE)[:, None]
    limit, limited = penalty_limit(pos, vel, lo, hi, g(model.joint_limit_ke), g(model.joint_limit_kd), enabled=~is_dist)
    out = spring_damper(pos, vel, g(model.joint_rest_q), g(model.joint_stiffness), g(model.joint_damping)).force
    out = out + limit.force
    if free_drive_joints(st)[idx].any():  # static
        p_t, q_t = (x[idx] for x in free_targets(model, control, f))
        err = jnp.concatenate([p_t - p, rotation_vector(quat_mul(q_t, quat_conjugate(raw.q_rel)))], -1)
        ke = jnp.where(limited, 0.0, jnp.asarray(st.use_ke[dof]) * g(model.joint_target_ke))
        kd = jnp.where(limited, 0.0, jnp.asarray(st.use_kd[dof]) * g(model.joint_target_kd))
        out = out + drive(err, vel, g(control.joint_target_qd), ke, kd)[0].force
    return out


def _gather(x, *, dof: np.ndarray, dtype) -> jnp.ndarray:
    """``(J, 6)`` per-DOF values ``x`` at the FREE/DISTANCE DOFs ``dof``."""
    return gather_dof(jnp.asarray(x, dtype), dof)


def free_position_limits(model) -> bool:
    """Static: an enabled FREE joint of a concrete model has a finite per-DOF position limit (``False`` for a
    traced model)."""
    import jax

    try:
        lo, hi = np.asarray(model.joint_limit_lower), np.asarray(model.joint_limit_upper)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return False
    st = joint_static(model.topology)
    nd = model.topology.joint_dof_count
    on = np.append(np.any((lo.reshape(-1, nd) > -1e9) | (hi.reshape(-1, nd) < 1e9), 0), False)[st.lin_dof]
    return bool(np.any(st.enabled & (st.jtype == JointType.FREE) & np.any(on, 1)))

def reject_free_joint_terms(model, solver: str, *, free_limits: bool = False, passive: bool = False,
                            angular_limits: bool = True) -> None:
    """Raise ``NotImplementedError`` naming the FREE/DISTANCE joints with terms ``solver`` does not model.

    Per-DOF limits on a DISTANCE joint's DOFs other than the first (its distance limits) are always rejected
    (SolverFeatherstone has none either); per-DOF limits on FREE joints unless ``free_limits`` (and, without
    ``angular_limits``, those on their angular DOFs); passive
    ``joint_stiffness``/``joint_damping`` unless ``passive``. Traced models are not checked (the terms are then
    ignored).
    """
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
        is_dist = jt[j] == int(JointType.DISTANCE)
        terms = [] if passive else [k for k in ("stiffness", "damping") if np.any(vals[k][d] != 0.0)]
        lim = d[1:] if is_dist else (d if not free_limits else d[3:] if not angular_limits else d[:0])
        if np.any(vals["limit_lower"][lim] > -1e9) or np.any(vals["limit_upper"][lim] < 1e9):
            terms.append("per-DOF limits" if is_dist or not free_limits else "angular per-DOF limits")
        if terms:
            bad.append(f"{topo.joint_label[j]!r} ({', '.join(terms)})")
    if bad:
        raise NotImplementedError(f"{solver}: terms on FREE/DISTANCE joints not modelled in maximal coordinates: "
                                  f"{'; '.join(bad)}; use SolverFeatherstone or SolverMuJoCo")
