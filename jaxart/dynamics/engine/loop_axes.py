"""Free axes of loop-closing joints: their coordinates, Jacobian rows and implicit joint forces.

A loop-closing joint (outside every articulation) has no coordinates in the reduced system: its locked
directions are the hard rows of :mod:`jaxart.dynamics.engine.constraint_rows`. Its free axes still carry the
per-DOF joint terms of a tree joint — drive, limits, spring, damping, friction, armature — measured from
the parent and child anchor frames ``P = X_wp·X_p`` and ``C = X_wc·X_c``, each coordinate ``q_L`` with a
Jacobian row ``J_L`` over the flat DOF slots (``q̇_L = J_L q̇``):

* linear axes (PRISMATIC, D6): ``q_lin = G⁻¹ L d`` with ``d = R_Pᵀ (p_C − p_P)`` the anchor offset in the
  parent-anchor frame, ``L`` the authored axes as rows and ``G = L Lᵀ`` (the inverse of ``d = Lᵀ q``);
  rows ``G⁻¹ L R_Pᵀ (J_C(p_C) − J_P(p_C))`` (both bodies' velocities at the child anchor);
* angular axes (REVOLUTE, D6): the twist angle ``2·atan2(a · q.xyz, q.w)`` of ``q_rel = q_P⁻¹ q_C`` for
  one axis, the Euler-chain angles of :func:`~jaxart.kinematics.angles.angular_coordinates` for two or
  three (the tree's coordinates of the same joint), rows ``cov_k · R_Pᵀ (ω_C − ω_P)``;
* BALL: ``q_rel`` as the joint quaternion, ``ω_rel`` in the parent-anchor frame as its velocities
  (the tree's BALL convention, so drives and limits act on ``log(q_rel)``);
* FREE, DISTANCE: the coordinates of the tree joint (anchor offset ``d``, ``q_rel``; the child-COM velocity
  relative to the parent and ``ω_rel`` in the parent-anchor frame), which carry their drives, per-DOF terms
  (FREE: limits too) and the DISTANCE joints' anchor-distance limits.

These coordinates are written into the loop joint's ``joint_q``/``joint_qd`` entries before
:func:`~jaxart.dynamics.joint_forces.joint_forces` runs, so every law (drive with its effort limit,
penalty limits that switch the drive off, springs, friction) is the tree's. The loop DOFs' forces
``f_L = f0 + joint_f − e·J̇_L q̇`` and diagonal ``e = armature + k dt² + c dt`` then enter the joint-space
solve as ``Jᵀ diag(e) J`` in the matrix and ``Jᵀ f_L`` on the right-hand side (DISTANCE limits: their
rank-one ``(Jᵀw)(Jᵀw)ᵀ``): the implicit law at the loop coordinate's end-of-step velocity
``J (q̇ + dt q̈)`` with its acceleration ``J q̈ + J̇ q̇`` — the same force as on a tree joint, in the same
solve as the contacts and the constraint rows. ``J̇ q̇`` is one forward-mode derivative of the rates
along the coordinate velocity. :func:`loop_rates_and_coordinates` measures the same coordinates and rates for any
set of loop joints (SolverFeatherstone writes them into the state after each step,
:mod:`jaxart.solvers.featherstone.loop_state`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.engine.constraint_rows import BodyFrames
from jaxart.dynamics.integrate import integrate_coords
from jaxart.dynamics.layout import DynamicsLayout, dynamics_layout
from jaxart.dynamics.motion import dof_columns
from jaxart.kinematics.angles import angular_coordinates
from jaxart.math import quat_conjugate, quat_mul, quat_to_matrix, quat_twist_angle, soa, transform_mul
from jaxart.math.static_index import take_rows
from jaxart.sim.enums import JointTargetMode, JointType

__all__ = ["LoopAxes", "loop_angles", "loop_axis_plan", "loop_axis_rates", "loop_axis_rows", "loop_axis_terms",
           "loop_coordinates", "loop_rates_and_coordinates"]

_UNLIMITED = 1e9


class LoopAxes(NamedTuple):
    """Static structure of the loop joints whose free axes carry joint terms (hashable).

    Attributes:
        joints: ``(joint, parent, child, joint_type, n_linear, n_angular, first_dof, first_coord, n_coords)``.
    """

    joints: tuple

    @property
    def dofs(self) -> np.ndarray:
        """``(n_L,)`` global DOFs of the loop axes, joint by joint."""
        return np.concatenate([np.arange(e[6], e[6] + _dof_count(e)) for e in self.joints]).astype(np.int64)

    @property
    def coords(self) -> np.ndarray:
        """``(n_c,)`` global coordinates of the loop joints, joint by joint."""
        return np.concatenate([np.arange(e[7], e[7] + e[8]) for e in self.joints]).astype(np.int64)

    @property
    def distance_groups(self) -> tuple:
        """Row ranges ``(start, stop)`` in :attr:`dofs` of the DISTANCE joints (their rank-one limit terms)."""
        out, k = [], 0
        for e in self.joints:
            if e[3] == int(JointType.DISTANCE):
                out.append((k, k + 6))
            k += _dof_count(e)
        return tuple(out)


def _dof_count(entry) -> int:
    jt = JointType(entry[3])
    return {JointType.BALL: 3, JointType.DISTANCE: 6}.get(jt, entry[4] + entry[5])


def loop_axis_plan(model, *, ignore_loop_joints: bool = False) -> LoopAxes:
    """The enabled loop joints whose free axes have a drive, finite limits, armature, a spring, damping or friction.

    Under a traced model (``vmap`` over models) every enabled loop joint with free axes is taken.

    Args:
        model: The model.
        ignore_loop_joints: No loop joint is enforced (empty plan).

    Returns:
        The :class:`LoopAxes`.
    """
    topo = model.topology
    if ignore_loop_joints or not np.any(topo.joint_articulation.array < 0):
        return LoopAxes(())
    return _plan(topo, _active_dofs(model))


def _active_dofs(model) -> tuple | None:
    """Static per-DOF flags ``(driven, limited, passive)`` read from the concrete model (``None`` when traced)."""
    try:
        vals = {k: np.asarray(getattr(model, f"joint_{k}")) for k in
                ("limit_lower", "limit_upper", "armature", "stiffness", "damping", "friction")}
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None
    mode = np.asarray(model.topology.joint_target_mode.array)
    driven = mode != int(JointTargetMode.NONE)
    limited = (vals["limit_lower"] > -_UNLIMITED) | (vals["limit_upper"] < _UNLIMITED)
    passive = (vals["armature"] != 0) | (vals["stiffness"] != 0) | (vals["damping"] != 0) | (vals["friction"] != 0)
    return tuple(driven.tolist()), tuple(limited.tolist()), tuple(passive.tolist()), tuple(
        (vals["limit_lower"] >= 0.0).tolist()), tuple((vals["limit_upper"] >= 0.0).tolist())


@functools.lru_cache(maxsize=64)
def _plan(topo, active: tuple | None) -> LoopAxes:
    art, qs, qst = topo.joint_articulation.array, topo.joint_qd_start.array, topo.joint_q_start.array
    out = []
    for j in np.flatnonzero(art < 0):
        jt = JointType(int(topo.joint_type.array[j]))
        d0, d1 = int(qs[j]), int(qs[j + 1])
        if not topo.joint_enabled.array[j] or d1 == d0:
            continue
        if active is None:  # traced model: every term may be set
            driven = limited = passive = True
        else:
            driven, limited, passive = (any(a[d0:d1]) for a in active[:3])
            if jt == JointType.DISTANCE:  # its per-DOF limits are replaced by the anchor-distance limits
                limited = active[3][d0] or active[4][d0]
        if not (driven or limited or passive) or jt == JointType.FIXED:
            continue
        nl, na = (int(x) for x in topo.joint_dof_dim.array[j])
        out.append((int(j), int(topo.joint_parent.array[j]), int(topo.joint_child.array[j]), int(jt), nl, na, d0,
                    int(qst[j]), int(qst[j + 1] - qst[j])))
    return LoopAxes(tuple(out))


def loop_angles(axes: jnp.ndarray, q_rel: jnp.ndarray):
    """Angles ``(na,)`` and covectors ``(na, 3)`` (``q̇ = cov · ω_rel``) of ``na`` angular axes (rows of ``axes``)."""
    na = axes.shape[0]
    if na == 1:
        return quat_twist_angle(axes[0], q_rel)[None], axes
    pad = jnp.concatenate([axes, jnp.zeros((3 - na, 3), axes.dtype)])
    vec = [tuple(pad[k, i].reshape(1, 1) for i in range(3)) for k in range(3)]
    angles, cov = angular_coordinates(np.array([na]), vec, tuple(q_rel[i].reshape(1, 1) for i in range(4)))
    return jnp.stack([a[0, 0] for a in angles[:na]]), jnp.stack([soa.stack(*c)[0, 0] for c in cov[:na]])


def _joint_rows(model, fr: BodyFrames, com, entry):
    """``(coords, rows)`` of one loop joint: its coordinates and the ``(dofs, N)`` rows of its velocities."""
    j, parent, child, jt, nl, na, d0 = entry[:7]
    dtype = fr.dtype
    xp = transform_mul(fr.pose(parent), model.joint_X_p[j].astype(dtype))
    xc = transform_mul(fr.pose(child), model.joint_X_c[j].astype(dtype))
    rot_t = quat_to_matrix(xp[3:]).T  # world → parent-anchor frame
    q_rel = quat_mul(quat_conjugate(xp[3:]), xc[3:])
    d_local = rot_t @ (xc[:3] - xp[:3])
    w_rows = rot_t @ (fr.ang_jac(child) - fr.ang_jac(parent)).T  # ω_rel in the parent-anchor frame
    if jt in (int(JointType.DISTANCE), int(JointType.FREE)):
        c = com[child]
        v_rows = rot_t @ (fr.point_jac(child, c) - fr.point_jac(parent, c)).T
        return jnp.concatenate([d_local, q_rel]), jnp.concatenate([v_rows, w_rows])
    if jt == int(JointType.BALL):
        return q_rel, w_rows
    coords, rows = [], []
    if nl:
        lin = model.joint_axis[d0:d0 + nl].astype(dtype)
        dirs = jnp.linalg.solve(lin @ lin.T, lin)  # G⁻¹ L
        v_rows = rot_t @ (fr.point_jac(child, xc[:3]) - fr.point_jac(parent, xc[:3])).T
        coords.append(dirs @ d_local)
        rows.append(dirs @ v_rows)
    if na:
        angles, cov = loop_angles(model.joint_axis[d0 + nl:d0 + nl + na].astype(dtype), q_rel)
        coords.append(angles)
        rows.append(cov @ w_rows)
    return jnp.concatenate(coords), jnp.concatenate(rows)


class _Poses(NamedTuple):
    """The part of :class:`~jaxart.dynamics.motion.BlockTerms` that the rows read."""

    body_q: jnp.ndarray
    com: jnp.ndarray
    S: jnp.ndarray


def loop_axis_rows(model, lay: DynamicsLayout, terms, axes: LoopAxes):
    """``(coords (n_c,), rows (n_L, N))``: the loop joints' coordinates and velocity rows over the flat slots.

    Args:
        model: The model.
        lay: Its dynamics layout.
        terms: :class:`~jaxart.dynamics.motion.BlockTerms` of the configuration.
        axes: :func:`loop_axis_plan` of the model.
    """
    fr = BodyFrames(lay, terms, terms.S.dtype)
    out = [_joint_rows(model, fr, terms.com, e) for e in axes.joints]
    return jnp.concatenate([o[0] for o in out]), jnp.concatenate([o[1] for o in out])


def _rate_fn(model, lay: DynamicsLayout, joint_qd, body_q, axes: LoopAxes):
    """``q ↦ (rates (n_L,), coords (n_c,))`` of the loop joints at the flat velocities ``joint_qd``."""
    qd_flat = take_rows(jnp.concatenate([joint_qd, jnp.zeros((1,), joint_qd.dtype)]), lay.dof_index.reshape(-1))

    def rates(q):  # poses and columns only (not the block inertias of block_terms)
        cols, (bq, com) = dof_columns(model, q, body_q)
        coords, rows = loop_axis_rows(model, lay, _Poses(bq, com, take_rows(cols, lay.dof_index)), axes)
        return rows @ qd_flat, coords

    return rates


def loop_coordinates(model, joint_q, joint_qd, body_q, axes: LoopAxes):
    """``(joint_q, joint_qd, bias)`` with the loop joints' entries replaced by their measured coordinates and
    rates, and ``bias = J̇_L q̇`` ``(n_L,)`` (the rates' change along the motion at fixed ``q̇``).

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities.
        body_q: ``(body_count, 7)`` poses (only bodies without a tree joint are read).
        axes: :func:`loop_axis_plan` of the model.
    """
    rates = _rate_fn(model, dynamics_layout(model), joint_qd, body_q, axes)
    zero = jnp.zeros((), joint_q.dtype)
    q_dot = jax.jvp(lambda h: integrate_coords(model, joint_q, joint_qd, h), (zero,), (jnp.ones_like(zero),))[1]
    (rate, coords), (bias, _) = jax.jvp(rates, (joint_q,), (q_dot,))
    return joint_q.at[axes.coords].set(coords), joint_qd.at[axes.dofs].set(rate), bias


def loop_axis_rates(model, joint_q, joint_qd, body_q, axes: LoopAxes):
    """``(n_L,)`` rates ``J_L q̇`` of the loop axes at the configuration ``joint_q`` for the velocities ``joint_qd``
    (tree entries read; linear in them, so ``joint_qd`` may be accelerations: ``J_L q̈``).

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities or accelerations.
        body_q: ``(body_count, 7)`` poses (only bodies without a tree joint are read).
        axes: :func:`loop_axis_plan` of the model.
    """
    return loop_rates_and_coordinates(model, joint_q, joint_qd, body_q, axes)[0]


def loop_rates_and_coordinates(model, joint_q, joint_qd, body_q, axes: LoopAxes):
    """``(rates (n_L,), coords (n_c,))``: the loop axes' rates ``J_L q̇`` and the loop joints' coordinates measured
    from the anchor frames at ``joint_q``.

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates (tree entries define the configuration).
        joint_qd: ``(joint_dof_count,)`` velocities (tree entries).
        body_q: ``(body_count, 7)`` poses (only bodies without a tree joint are read).
        axes: :class:`LoopAxes` of the joints to measure.
    """
    return _rate_fn(model, dynamics_layout(model), joint_qd, body_q, axes)(joint_q)


def loop_axis_terms(model, lay: DynamicsLayout, terms, axes: LoopAxes, free, joint_f, tau_extra, d_extra, dyad):
    """``(M (N, N), b (N,))``: ``Jᵀ diag(e) J`` (+ DISTANCE ``(Jᵀw)(Jᵀw)ᵀ``) and ``Jᵀ (tau_extra + joint_f)`` on the
    loop DOFs, with the rows of fixed slots (``~free``, flat ``(1, N)``) zeroed.

    Args:
        model: The model.
        lay: Its dynamics layout.
        terms: Block terms of the configuration.
        axes: The loop axes.
        free: ``(1, N)`` mask of unknown slots.
        joint_f: ``(nd,)`` applied joint forces (loop entries: generalized forces along the loop DOFs).
        tau_extra: ``(nd,)`` joint forces (:func:`~jaxart.solvers.featherstone.loop_state.fold_loop_bias` applied).
        d_extra: ``(nd,)`` implicit diagonal with armature.
        dyad: ``(nd,)`` DISTANCE-limit rows or ``None``.
    """
    _, rows = loop_axis_rows(model, lay, terms, axes)
    rows = rows * free.reshape(1, -1).astype(rows.dtype)
    dofs = axes.dofs
    m = rows.T @ (d_extra[dofs][:, None] * rows)
    if dyad is not None:
        w = dyad[dofs]
        for a, b in axes.distance_groups:
            v = rows[a:b].T @ w[a:b]
            m = m + v[:, None] * v[None, :]
    return m, rows.T @ (tau_extra[dofs] + joint_f[dofs])
