"""Effective inertia of acceleration drives in maximal coordinates (``SolverXPBD``, ``SolverSemiImplicit``).

An ``ACCELERATION`` drive (PhysX ``eACCELERATION``, :class:`~jaxart.JointDriveType`) has gains ``target_ke``
[1/s²] and ``target_kd`` [1/s] that the solver multiplies by the effective inertia ``m_i`` of the DOF. The
reduced-coordinate solver takes ``m_i = 1 / (H⁻¹)_ii`` of the whole articulation
(:mod:`jaxart.dynamics.engine.drive_inertia`); the maximal-coordinate solvers take it per joint, from the joint's two
bodies alone, as their drive rows see them:

* ``K = K_c + K_p`` (6×6) is the response of the relative motion at the child anchor (acceleration of that
  point and angular acceleration, child relative to parent) to a unit wrench ``(f, τ)`` applied there to the
  child and opposite to the parent; per body with inverse mass ``m⁻¹``, world inverse inertia ``I⁻¹`` and lever
  ``r`` (child anchor minus the body's COM, ``R = [r]×``): ``[[m⁻¹E − R I⁻¹ R, −R I⁻¹], [I⁻¹ R, I⁻¹]]``;
* the joint's locked directions (rows ``L``: anchor offset components and rotations the joint removes) are held,
  its other DOFs are free: ``K̃ = K − K Lᵀ (L K Lᵀ)⁻¹ L K``;
* with ``g_i`` the DOF's coordinate row (linear axis, or angular covector ``q̇_i = g_i · ω_rel``), the
  generalised inverse mass of its drive row is ``w_i = g_i K̃ g_iᵀ`` and ``m_i = 1 / w_i``.

For a joint whose parent is the world (or a kinematic body) this is exactly ``1 / (H⁻¹)_ii`` of that one-joint
articulation (e.g. a hinge's inertia about its axis, COM offset included); a FREE joint's rows reduce to the
plain row weight ``g K gᵀ`` (sum of both bodies' inverse masses/inertias along the row); a joint between a
floating base and a link matches ``1 / (H⁻¹)_ii`` of that two-body articulation too. Inside a chain the other
joints' bodies are not included (each joint sees its two bodies, as the XPBD drive row does), so the scaling
differs from SolverFeatherstone's articulation-wide ``1 / (H⁻¹)_ii`` there; uniform rescaling of all masses still
leaves the motion unchanged. Joint armature is not modelled in maximal coordinates and is not included.
BALL joints use their DOF axes (rotated to world) as rows; FREE and DISTANCE joints the parent-anchor axes, the
linear rows moving the child COM (:mod:`jaxart.solvers.maximal.free_joints`; a world-parented FREE body gets its mass
and ``1 / (e_k·I_w⁻¹ e_k)``). DOFs whose bodies cannot move (``w = 0``) get 1.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.joint_forces import acceleration_dofs
from jaxart.math import quat_to_matrix
from jaxart.math.cholesky import spd_solve
from jaxart.math.small import dot_last, matmul
from jaxart.math.spatial import skew
from jaxart.sim.enums import JointType
from jaxart.solvers.maximal.integrate import inverse_mass_properties
from jaxart.solvers.maximal.joints import (
    angular_coordinates,
    gather_joint_axes,
    joint_frames,
    joint_static,
    rotate_rows,
)

__all__ = ["acceleration_gains", "joint_drive_inertia"]


def acceleration_gains(model, body_q: jnp.ndarray):
    """``model`` with the ``ACCELERATION`` drives' gains multiplied by :func:`joint_drive_inertia` at ``body_q``.

    The result's ``joint_target_ke``/``joint_target_kd`` are force gains for every DOF, so a solver that applies
    force drives honours acceleration drives by reading this model's gains. ``model`` itself is returned (no
    work) when no DOF has an ``ACCELERATION`` drive.

    Args:
        model: The model.
        body_q: ``(body_count, 7)`` poses at which the effective inertias are evaluated.

    Returns:
        The model with scaled gains.
    """
    accel = acceleration_dofs(model.topology)
    if not accel.any():
        return model
    inv_m, inv_i = inverse_mass_properties(model, body_q.dtype)
    m_eff = joint_drive_inertia(model, body_q, inv_m, inv_i)
    scale = jnp.where(jnp.asarray(accel), m_eff, 1.0)
    ke, kd = model.joint_target_ke, model.joint_target_kd
    return model.replace(joint_target_ke=ke * scale.astype(ke.dtype), joint_target_kd=kd * scale.astype(kd.dtype))


def joint_drive_inertia(model, body_q: jnp.ndarray, inv_m: jnp.ndarray, inv_i: jnp.ndarray) -> jnp.ndarray:
    """``(joint_dof_count,)`` effective inertia ``1 / (g K̃ gᵀ)`` of every DOF's drive row (module docstring).

    Args:
        model: The model.
        body_q: ``(body_count, 7)`` poses.
        inv_m: ``(body_count,)`` inverse masses (0 for kinematic/massless bodies).
        inv_i: ``(body_count, 3, 3)`` body-frame inverse inertias.

    Returns:
        Effective inertias [kg or kg·m²]; 1 for DOFs that cannot move and for DOFs without a drive row.
    """
    st = joint_static(model.topology)
    f = body_q.dtype
    fr = joint_frames(model, body_q, jnp.zeros((body_q.shape[0], 6), f))
    k = _mobility(model, st, body_q, inv_m.astype(f), inv_i.astype(f), fr)
    rows, cov_w = _coordinate_rows(model, st, fr)
    locked, mask = _locked_rows(st, rows, cov_w)
    a = matmul(matmul(locked, k), jnp.swapaxes(locked, -1, -2))
    eps = 1e-12 * jnp.trace(a, axis1=-2, axis2=-1) / 6.0 + jnp.finfo(f).tiny ** 0.5
    a = a + jnp.eye(6, dtype=f) * (jnp.asarray(1.0 - mask, f)[:, None, :] + eps[:, None, None])
    kg = matmul(rows, k)  # (J, 6, 6): g_i K
    y = matmul(kg, jnp.swapaxes(locked, -1, -2))  # rows (L K g_iᵀ)ᵀ
    z = spd_solve(a[:, None], y)
    free = dot_last(kg, rows)
    w = free - dot_last(y, z)
    ok = (free > 0.0) & (w > 0.0)
    m_eff = jnp.where(ok, 1.0 / jnp.where(ok, w, 1.0), 1.0)
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)
    nd = model.joint_dof_count
    return jnp.ones((nd + 1,), f).at[dof.reshape(-1)].set(m_eff.reshape(-1))[:nd]


def _body_mobility(inv_m, inv_iw, r):
    """``(J, 6, 6)`` response ``[anchor acceleration; ω̇]`` of bodies to a unit anchor wrench ``[f; τ]``."""
    rx = skew(r)
    ir = matmul(inv_iw, rx)
    eye = jnp.eye(3, dtype=r.dtype)
    top = jnp.concatenate([inv_m[:, None, None] * eye - matmul(rx, ir), -matmul(rx, inv_iw)], -1)
    return jnp.concatenate([top, jnp.concatenate([ir, inv_iw], -1)], -2)


def _mobility(model, st, body_q, inv_m, inv_i, fr):
    """``(J, 6, 6)`` ``K = K_c + K_p`` (the world, index ``body_count``, has zero inverse mass)."""
    f = body_q.dtype
    rot = quat_to_matrix(body_q[:, 3:])
    inv_iw = matmul(matmul(rot, inv_i), jnp.swapaxes(rot, -1, -2))
    inv_iw = jnp.concatenate([inv_iw, jnp.zeros((1, 3, 3), f)], 0)
    inv_m = jnp.concatenate([inv_m, jnp.zeros((1,), f)])
    # both bodies' levers to the child anchor: the parent takes the opposite wrench at the same point, and the
    # locked rows (anchor offset across the free axes) hold the child anchor's velocity relative to the parent
    return (_body_mobility(inv_m[st.child], inv_iw[st.child], fr.r_c)
            + _body_mobility(inv_m[st.parent], inv_iw[st.parent], fr.r_p + fr.x_err))


def _coordinate_rows(model, st, fr):
    """``(J, 6, 6)`` world coordinate rows ``g`` of the 3 linear + 3 angular DOF slots (zero rows: padding), and
    the ``(J, 3, 3)`` world angular covectors (row 2 of a 2-axis joint: its locked middle angle)."""
    f = fr.x_err.dtype
    lin_ax, ang_ax = (a.astype(f) for a in gather_joint_axes(model, st))
    qp = fr.x_p[:, 3:]
    _, cov = angular_coordinates(st.n_ang, ang_ax, fr.q_rel)
    ball = jnp.asarray(np.isin(st.jtype, [JointType.BALL, JointType.FREE, JointType.DISTANCE]))[:, None, None]
    cov_w = rotate_rows(qp, jnp.where(ball, ang_ax, cov))
    lin_w = rotate_rows(qp, lin_ax)
    lin_on = jnp.asarray(np.arange(3)[None, :] < st.n_lin[:, None])[:, :, None]
    ang_on = jnp.asarray(np.arange(3)[None, :] < st.n_ang[:, None])[:, :, None]
    zero = jnp.zeros_like(lin_w)
    lin_ang = zero
    free = np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE])
    if free.any():  # static: FREE/DISTANCE linear DOFs move the child COM (ċ = a·v_anchor + (a × r_c)·ω)
        lin_ang = jnp.where(jnp.asarray(free)[:, None, None], jnp.cross(lin_w, fr.r_c[:, None, :]), 0.0)
    rows = jnp.concatenate([jnp.concatenate([jnp.where(lin_on, lin_w, 0.0), lin_ang], -1),
                            jnp.concatenate([zero, jnp.where(ang_on, cov_w, 0.0)], -1)], 1)
    return rows, cov_w


def _unit(v):
    n2 = dot_last(v, v, keepdims=True)
    ok = n2 > 0.0
    return jnp.where(ok, v / jnp.sqrt(jnp.where(ok, n2, 1.0)), 0.0)


def _perpendicular(a):
    """Two unit vectors ``(u, v)`` completing the unit rows ``a (J, 3)`` to an orthonormal basis."""
    helper = jnp.where(jnp.abs(a[:, :1]) < 0.9, jnp.array([1.0, 0.0, 0.0], a.dtype), jnp.array([0.0, 1.0, 0.0],
                                                                                                a.dtype))
    u = _unit(jnp.cross(a, helper))
    return u, jnp.cross(a, u)


def _locked_rows(st, rows, cov_w):
    """``(L (J, 6, 6), mask (J, 6))``: world rows of the directions each joint locks (static row mask)."""
    f = rows.dtype
    eye = jnp.broadcast_to(jnp.eye(3, dtype=f), (len(st.jtype), 3, 3))
    zero = jnp.zeros_like(eye[:, 0])
    unlocked = np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE]) | ~st.enabled
    blocks, masks = [], []
    for n, sel, ball_free in ((st.n_lin, slice(0, 3), np.zeros_like(unlocked)),
                              (st.n_ang, slice(3, 6), st.jtype == JointType.BALL)):
        g = rows[:, sel, sel]
        u, v = _perpendicular(_unit(g[:, 0]))
        pair = jnp.stack([u, v, zero], 1)
        normal = jnp.stack([_unit(jnp.cross(g[:, 0], g[:, 1])), zero, zero], 1)
        if sel.start == 3:  # angular, 2 axes: the locked middle angle's covector (angular_coordinates)
            normal = jnp.stack([cov_w[:, 2], zero, zero], 1)
        n_ = n[:, None, None]
        blocks.append(jnp.where(jnp.asarray(n_ == 0), eye, jnp.where(jnp.asarray(n_ == 1), pair,
                                                                     jnp.where(jnp.asarray(n_ == 2), normal, 0.0))))
        cnt = np.where(n == 0, 3, np.where(n == 1, 2, np.where(n == 2, 1, 0)))
        cnt = np.where(unlocked | ball_free, 0, cnt)
        masks.append(np.arange(3)[None, :] < cnt[:, None])
    mask = np.concatenate(masks, 1)
    z3 = jnp.zeros_like(eye)
    locked = jnp.concatenate([jnp.concatenate([blocks[0], z3], -1), jnp.concatenate([z3, blocks[1]], -1)], 1)
    return jnp.where(jnp.asarray(mask)[:, :, None], locked, 0.0), mask.astype(np.float64)
