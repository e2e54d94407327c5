"""Pure, jittable state mapping between jaxart and MuJoCo arrays (both directions).

Conventions (verified against MuJoCo C with ``mj_forward``/``mj_integratePos``, see the tests):

* MuJoCo quaternions are ``(w, x, y, z)``; jaxart's are ``(x, y, z, w)``.
* MuJoCo ball ``qvel`` is the angular velocity in the *child* (local) frame; jaxart's BALL
  ``joint_qd`` is ω in the parent-anchor frame, so ``ω_mj = R(q)ᵀ ω``.
* MuJoCo free ``qvel = (v, ω)``: ``v`` the world velocity of the body frame's origin, ``ω`` in
  the body (local) frame. jaxart FREE ``joint_qd = (v_com, ω)`` in the parent-anchor frame. The
  MuJoCo body frame is the child anchor; its world pose is ``joint_X_p · joint_q``.
* ``xfrc_applied`` is a world-frame force and torque applied at the body COM (``xipos``), the
  same as jaxart's ``body_f``; Control.joint_f of FREE joints (a world wrench at the child COM)
  is added there too. BALL generalized forces are rotated into the child frame like ω.
* FREE/DISTANCE joints mapped as three slides and a ball about the child COM (below a body, or with
  per-DOF terms; :func:`jaxart.solvers.mujoco.joints.free_as_slides`): slide ``qpos = p + R(q) c − c``
  (``c`` the COM in the child-anchor frame), slide ``qvel`` = the COM velocity ``joint_qd[0:3]``, the ball
  as a BALL joint. Their ``Control.joint_f`` world wrench is rotated into the parent-anchor frame (the
  parent's pose from ``State.body_q``) and applied as generalized forces: slides ``f``, ball ``R(q)ᵀ τ``.

All index arrays come from a static :class:`~jaxart.solvers.mujoco.layout.MjLayout`; every
function is vectorised (no loops over joints) and works under ``jit``/``vmap``/``grad``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.math import (
    quat_conjugate,
    quat_mul,
    quat_normalize,
    quat_rotate,
    quat_rotate_inv,
    transform_inverse,
    transform_mul,
)
from jaxart.solvers.mujoco.layout import MjLayout

_TO_WXYZ = (3, 0, 1, 2)
_TO_XYZW = (1, 2, 3, 0)


def joint_q_to_qpos(layout: MjLayout, joint_q: jnp.ndarray) -> jnp.ndarray:
    """jaxart ``joint_q`` ``(joint_coord_count,)`` → MuJoCo ``qpos`` ``(nq,)``."""
    qpos = jnp.zeros((layout.nq,), joint_q.dtype)
    qpos = qpos.at[layout.q_dst].set(joint_q[layout.q_src])
    if layout.ball_q_src.size:
        q = joint_q[layout.ball_q_src]
        qpos = qpos.at[layout.ball_q_dst].set(q[:, _TO_WXYZ])
    if layout.free_q_src.size:
        pose = transform_mul(jnp.asarray(layout.free_X_p, joint_q.dtype), joint_q[layout.free_q_src])
        qpos = qpos.at[layout.free_q_dst].set(jnp.concatenate([pose[:, :3], pose[:, 3:][:, _TO_WXYZ]], -1))
    if layout.sb_lin_q_src.size:
        qpos = qpos.at[layout.sb_lin_q_dst].add(_com_shift(layout, joint_q[layout.sb_quat_src]))
    return qpos


def _com_shift(layout: MjLayout, quat_xyzw: jnp.ndarray) -> jnp.ndarray:
    """``R(q) c − c``: slide coordinates minus child-anchor positions of the slide-mapped FREE joints."""
    com = jnp.asarray(layout.sb_com, quat_xyzw.dtype)
    return quat_rotate(quat_normalize(quat_xyzw), com) - com


def qpos_to_joint_q(layout: MjLayout, qpos: jnp.ndarray, coord_count: int) -> jnp.ndarray:
    """MuJoCo ``qpos`` → jaxart ``joint_q`` (quaternions normalised, xyzw)."""
    joint_q = jnp.zeros((coord_count,), qpos.dtype)
    joint_q = joint_q.at[layout.q_src].set(qpos[layout.q_dst])
    if layout.ball_q_src.size:
        q = qpos[layout.ball_q_dst][:, _TO_XYZW]
        joint_q = joint_q.at[layout.ball_q_src].set(q)
    if layout.free_q_src.size:
        raw = qpos[layout.free_q_dst]
        pose = jnp.concatenate([raw[:, :3], raw[:, 3:][:, _TO_XYZW]], -1)
        local = transform_mul(transform_inverse(jnp.asarray(layout.free_X_p, qpos.dtype)), pose)
        joint_q = joint_q.at[layout.free_q_src].set(local)
    if layout.sb_lin_q_src.size:
        shift = _com_shift(layout, qpos[layout.sb_quat_dst][:, _TO_XYZW])
        joint_q = joint_q.at[layout.sb_lin_q_src].add(-shift)
    return joint_q


def joint_qd_to_qvel(layout: MjLayout, joint_q: jnp.ndarray, joint_qd: jnp.ndarray) -> jnp.ndarray:
    """jaxart ``joint_qd`` → MuJoCo ``qvel`` ``(nv,)`` (needs ``joint_q`` for BALL/FREE frames)."""
    qvel = jnp.zeros((layout.nv,), joint_qd.dtype)
    qvel = qvel.at[layout.v_dst].set(joint_qd[layout.v_src])
    if layout.ball_q_src.size:
        q = quat_normalize(joint_q[layout.ball_q_src])
        qvel = qvel.at[layout.ball_v_dst].set(quat_rotate_inv(q, joint_qd[layout.ball_v_src]))
    if layout.free_q_src.size:
        x_p = jnp.asarray(layout.free_X_p, joint_q.dtype)
        rot = quat_normalize(quat_mul(x_p[:, 3:], joint_q[layout.free_q_src][:, 3:]))
        qd = joint_qd[layout.free_v_src]
        w_world = quat_rotate(x_p[:, 3:], qd[:, 3:])
        v_com = quat_rotate(x_p[:, 3:], qd[:, :3])
        arm = quat_rotate(rot, jnp.asarray(layout.free_com, joint_q.dtype))
        v_origin = v_com - jnp.cross(w_world, arm)
        qvel = qvel.at[layout.free_v_dst].set(jnp.concatenate([v_origin, quat_rotate_inv(rot, w_world)], -1))
    return qvel


def qvel_to_joint_qd(layout: MjLayout, qpos: jnp.ndarray, qvel: jnp.ndarray, dof_count: int) -> jnp.ndarray:
    """MuJoCo ``qvel`` → jaxart ``joint_qd`` (needs ``qpos`` for BALL/FREE frames)."""
    joint_qd = jnp.zeros((dof_count,), qvel.dtype)
    joint_qd = joint_qd.at[layout.v_src].set(qvel[layout.v_dst])
    if layout.ball_q_src.size:
        q = quat_normalize(qpos[layout.ball_q_dst][:, _TO_XYZW])
        joint_qd = joint_qd.at[layout.ball_v_src].set(quat_rotate(q, qvel[layout.ball_v_dst]))
    if layout.free_q_src.size:
        x_p = jnp.asarray(layout.free_X_p, qpos.dtype)
        rot = quat_normalize(qpos[layout.free_q_dst][:, 3:][:, _TO_XYZW])
        v = qvel[layout.free_v_dst]
        w_world = quat_rotate(rot, v[:, 3:])
        arm = quat_rotate(rot, jnp.asarray(layout.free_com, qpos.dtype))
        v_com = v[:, :3] + jnp.cross(w_world, arm)
        local = jnp.concatenate([quat_rotate_inv(x_p[:, 3:], v_com), quat_rotate_inv(x_p[:, 3:], w_world)], -1)
        joint_qd = joint_qd.at[layout.free_v_src].set(local)
    return joint_qd


def control_to_ctrl(layout: MjLayout, joint_target_q: jnp.ndarray, joint_target_qd: jnp.ndarray,
                    joint_q: jnp.ndarray | None = None) -> jnp.ndarray:
    """Drive targets → MuJoCo ``ctrl`` ``(nu,)``.

    Position actuators read ``joint_target_q``, velocity actuators ``joint_target_qd``; POSITION-mode actuators
    (damping ``kd`` in their bias) add ``(kd / kp) joint_target_qd`` (jaxart's ``kd (q̇* − q̇)``). BALL position actuators
    (``mjTRN_JOINTINPARENT``: length ``log(q)_k``, force along parent-anchor axis ``k``) get component ``k`` of
    ``log(q_t q⁻¹) + log(q)`` with ``q`` the current ``joint_q``, so their force ``kp (ctrl_k − log(q)_k)`` is
    jaxart's ``kp log(q_t q⁻¹)_k`` at the step's state (and its derivative in ``q``); without ``joint_q`` the
    target's own rotation vector (exact for ``q`` = identity or coaxial ``q``, ``q_t``).
    """
    ctrl = jnp.zeros((layout.nu,), joint_target_qd.dtype)
    ctrl = ctrl.at[layout.pos_act].set(joint_target_q[layout.pos_src])
    if layout.ball_act.size:
        target = quat_normalize(joint_target_q[layout.ball_src])
        if joint_q is None:
            rotvec = quat_rotation_vector(target)
        else:
            q = quat_normalize(joint_q[layout.ball_src].astype(target.dtype))
            rotvec = quat_rotation_vector(quat_mul(target, quat_conjugate(q))) + quat_rotation_vector(q)
        ctrl = ctrl.at[layout.ball_act].set(jnp.take_along_axis(rotvec, layout.ball_comp[:, None], axis=1)[:, 0])
    if layout.pos_vel_act.size:  # POSITION drives' kd q̇* (the layout's pos_vel_* fields)
        ratio = jnp.asarray(layout.pos_vel_ratio, ctrl.dtype)
        ctrl = ctrl.at[layout.pos_vel_act].add(ratio * joint_target_qd[layout.pos_vel_src])
    return ctrl.at[layout.vel_act].set(joint_target_qd[layout.vel_src])


def quat_rotation_vector(q: jnp.ndarray) -> jnp.ndarray:
    """Rotation vector (axis · angle, angle wrapped to [−π, π]) of xyzw quaternions, as MuJoCo's
    ``mju_quat2Vel``; smooth at the identity (double-``where``)."""
    v, w = q[..., :3], q[..., 3:]
    s2 = jnp.sum(v * v, axis=-1, keepdims=True)
    small = s2 < 1e-12
    s = jnp.sqrt(jnp.where(small, 1.0, s2))
    angle = 2.0 * jnp.arctan2(s, w)
    angle = jnp.where(angle > jnp.pi, angle - 2.0 * jnp.pi, angle)
    scale = jnp.where(small, 2.0 / jnp.where(jnp.abs(w) > 0, w, 1.0), angle / s)
    return v * scale


def joint_f_to_qfrc(layout: MjLayout, joint_q: jnp.ndarray, joint_f: jnp.ndarray,
                    body_q: jnp.ndarray | None = None, joint_act: jnp.ndarray | None = None) -> jnp.ndarray:
    """Generalized forces of hinge/slide/D6/BALL DOFs → MuJoCo ``qfrc_applied`` ``(nv,)``.

    FREE joint forces are world wrenches: those of MuJoCo free joints go through :func:`body_f_to_xfrc`, those of
    slide-mapped FREE/DISTANCE joints are rotated into their parent-anchor frame here (``body_q``, the
    ``(body_count, 7)`` body poses, gives the parent's orientation; needed when such a joint has a body parent).

    Args:
        layout: The layout.
        joint_q: Coordinates (BALL frames).
        joint_f: ``Control.joint_f``.
        body_q: Body poses (see above).
        joint_act: Optional ``Control.joint_act``: generalized forces on every DOF (FREE: parent-anchor frame, as
            SolverFeatherstone adds them to the drives), added after ``joint_f``'s conversion. MuJoCo free joints
            ignore it here (the caller adds it to their ``body_f_to_xfrc`` wrench).
    """
    if layout.sb_v_src.size:
        joint_f = joint_f.at[layout.sb_v_src].set(_sb_wrench_in_parent(layout, joint_f, body_q))
    if joint_act is not None:
        joint_f = joint_f + joint_act
    qfrc = jnp.zeros((layout.nv,), joint_f.dtype)
    qfrc = qfrc.at[layout.v_dst].set(joint_f[layout.v_src])
    if layout.ball_q_src.size:
        q = quat_normalize(joint_q[layout.ball_q_src])
        qfrc = qfrc.at[layout.ball_v_dst].set(quat_rotate_inv(q, joint_f[layout.ball_v_src]))
    return qfrc


def _sb_wrench_in_parent(layout: MjLayout, joint_f: jnp.ndarray, body_q: jnp.ndarray | None) -> jnp.ndarray:
    """World wrenches ``joint_f[sb_v_src]`` of slide-mapped FREE joints expressed in their parent-anchor frames."""
    rot = jnp.asarray(layout.sb_X_p[:, 3:], joint_f.dtype)
    if np.any(layout.sb_parent >= 0):
        if body_q is None:
            raise ValueError("joint_f_to_qfrc: body_q is needed for FREE/DISTANCE joints with a body parent")
        ident = jnp.asarray([[0.0, 0.0, 0.0, 1.0]], joint_f.dtype)
        parent_rot = jnp.concatenate([body_q[:, 3:].astype(joint_f.dtype), ident])[layout.sb_parent]
        rot = quat_mul(parent_rot, rot)
    w = joint_f[layout.sb_v_src]
    rot = quat_normalize(rot)
    return jnp.concatenate([quat_rotate_inv(rot, w[:, :3]), quat_rotate_inv(rot, w[:, 3:])], -1)


def body_f_to_xfrc(layout: MjLayout, body_f: jnp.ndarray, joint_f: jnp.ndarray | None = None) -> jnp.ndarray:
    """World wrenches at body COMs → MuJoCo ``xfrc_applied`` ``(nbody, 6)`` (force, torque at COM).

    Args:
        layout: The layout.
        body_f: ``(body_count, 6)`` jaxart ``State.body_f``.
        joint_f: Optional ``Control.joint_f``; FREE joints' world wrenches are added to their child.
    """
    xfrc = jnp.zeros((layout.nbody, 6), body_f.dtype).at[layout.body_mj].add(body_f)
    if joint_f is not None and layout.free_v_src.size:
        xfrc = xfrc.at[layout.free_body].add(joint_f[layout.free_v_src])
    return xfrc


def mocap_to_data(layout: MjLayout, joint_q: jnp.ndarray, mocap_pos: jnp.ndarray,
                  mocap_quat: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """MuJoCo ``(mocap_pos, mocap_quat)`` with the mocap bodies of ``Model.mocap_joint`` at their joint's pose.

    Args:
        layout: The layout.
        joint_q: Coordinates (the mocap joints' ``(p, q_xyzw)`` in their parent-anchor frame, as
            :func:`jaxart.sim.mocap.set_mocap` leaves them).
        mocap_pos: ``(nmocap, 3)`` MuJoCo's mocap positions (other mocap bodies keep theirs) [m].
        mocap_quat: ``(nmocap, 4)`` MuJoCo's mocap orientations (``wxyz``).

    Returns:
        The updated ``(mocap_pos, mocap_quat)`` (world frame; the MuJoCo body frame is the joint's child anchor).
    """
    if not layout.mocap_id.size:
        return mocap_pos, mocap_quat
    local = joint_q[layout.mocap_q_src]
    local = jnp.concatenate([local[:, :3], quat_normalize(local[:, 3:])], -1)
    world = transform_mul(jnp.asarray(layout.mocap_X_p, joint_q.dtype), local)
    return (mocap_pos.at[layout.mocap_id].set(world[:, :3].astype(mocap_pos.dtype)),
            mocap_quat.at[layout.mocap_id].set(world[:, 3:][:, _TO_WXYZ].astype(mocap_quat.dtype)))
