"""Joint geometry in maximal coordinates, shared by ``SolverSemiImplicit`` and ``SolverXPBD``.

Every joint of the model is handled — tree joints, loop-closing joints and orphan joints alike —
as a relation between two world anchor frames ``x_wp · X_p`` and ``x_wc · X_c`` (the world for a
parent of −1). All joints are padded to one fixed-width block (≤ 3 linear + ≤ 3 angular DOFs)
with static masks, so the program size does not depend on the mix of joint types.

Angular coordinates follow :func:`jaxart.eval_ik`: a single angular axis uses the signed twist
angle ``2·atan2(a · q.xyz, q.w)`` of the relative rotation ``q_rel = q_p⁻¹ q_c`` (parent-anchor
frame); 2 and 3 axes invert the intrinsic Euler chain ``R(a0,q0) R(a1,q1) R(a2,q2)`` (2 axes use
the basis ``(a0, a0 × a1, a1)`` whose middle angle is the locked one). The *covectors* ``b_k``
satisfy ``q̇_k = b_k · ω_rel``, so a generalised torque ``τ_k`` is the world torque ``τ_k b_k``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.joints import euler_chain
from jaxart.laws.angles import wrap_angle
from jaxart.laws.joint import drive, penalty_limit, spring_damper
from jaxart.math import (
    inv3,
    matrix_to_euler_xyz,
    quat_inverse,
    quat_mul,
    quat_rotate,
    quat_to_matrix,
    quat_twist_angle,
    safe_atan2,
    transform_mul,
    transform_point,
)
from jaxart.math.small import dot_last, matmul
from jaxart.sim.enums import JointTargetMode, JointType
from jaxart.solvers.maximal.sums import segment_sum

_IDENT = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])  # identity pose row (the world)


def constrained_joints(st) -> np.ndarray:
    """Static ``(J,)`` bool: enabled joints that constrain or actuate something (not FREE)."""
    return st.enabled & (st.jtype != JointType.FREE)


def has_drives(st) -> bool:
    """Static: whether any scalar DOF of an enabled joint has a drive mode with gains possible."""
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)
    coord = np.concatenate([st.lin_coord, st.ang_coord], 1)
    scalar = (coord < st.coord_count) & st.enabled[:, None]
    return bool(np.any(scalar & (st.use_ke[dof] | st.use_kd[dof])))


class JointStatic(NamedTuple):
    """Static (numpy) per-joint index data of all joints, padded to 3 linear + 3 angular DOFs."""

    parent: np.ndarray  # (J,) body index, body_count for the world
    child: np.ndarray  # (J,)
    jtype: np.ndarray  # (J,)
    enabled: np.ndarray  # (J,) bool
    n_lin: np.ndarray  # (J,)
    n_ang: np.ndarray  # (J,)
    lin_dof: np.ndarray  # (J, 3) DOF index, dof_count for padding
    ang_dof: np.ndarray  # (J, 3)
    lin_coord: np.ndarray  # (J, 3) coordinate index of scalar DOFs, coord_count for padding
    ang_coord: np.ndarray  # (J, 3)
    ball_coord: np.ndarray  # (J, 4) quaternion coordinates of BALL joints (identity sentinel)
    use_ke: np.ndarray  # (dof_count + 1,) position drive active (POSITION / POSITION_VELOCITY)
    use_kd: np.ndarray  # (dof_count + 1,) velocity drive active
    coord_count: int
    free_rows: np.ndarray | None = None  # (J,) bool FREE/DISTANCE joints given drive rows (SolverXPBD passive terms)


@functools.lru_cache(maxsize=64)
def joint_static(topo) -> JointStatic:
    """Derive the :class:`JointStatic` of a topology (numpy, cached per topology)."""
    nj, nb = topo.joint_count, topo.body_count
    nq, nd = topo.joint_coord_count, topo.joint_dof_count
    parent = np.where(topo.joint_parent.array < 0, nb, topo.joint_parent.array).astype(np.int32)
    child = topo.joint_child.array.astype(np.int32)
    jtype = topo.joint_type.array.astype(np.int32)
    dims = topo.joint_dof_dim.array.reshape(nj, 2)
    qs, ds = topo.joint_q_start.array, topo.joint_qd_start.array
    lin_dof = np.full((nj, 3), nd, np.int32)
    ang_dof = np.full((nj, 3), nd, np.int32)
    lin_coord = np.full((nj, 3), nq, np.int32)
    ang_coord = np.full((nj, 3), nq, np.int32)
    ball = np.tile(np.array([nq, nq, nq, nq + 1], np.int32), (nj, 1))
    for j in range(nj):
        nl, na = int(dims[j, 0]), int(dims[j, 1])
        lin_dof[j, :nl] = ds[j] + np.arange(nl)
        ang_dof[j, :na] = ds[j] + nl + np.arange(na)
        if jtype[j] == JointType.BALL:
            ball[j] = qs[j] + np.arange(4)
        elif jtype[j] not in (JointType.FREE, JointType.DISTANCE):
            lin_coord[j, :nl] = qs[j] + np.arange(nl)
            ang_coord[j, :na] = qs[j] + nl + np.arange(na)
    mode = np.append(topo.joint_target_mode.array, JointTargetMode.NONE)
    pos = np.isin(mode, [JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY])
    vel = pos | (mode == JointTargetMode.VELOCITY)
    return JointStatic(parent, child, jtype, topo.joint_enabled.array.astype(bool), dims[:, 0].copy(),
                       dims[:, 1].copy(), lin_dof, ang_dof, lin_coord, ang_coord, ball, pos, vel, nq)


class JointFrames(NamedTuple):
    """World anchor frames and relative motion of every joint (``J`` rows).

    Attributes:
        x_p, x_c: ``(J, 7)`` world parent / child anchor frames.
        r_p, r_c: ``(J, 3)`` anchor origin minus the parent / child COM (world) [m].
        x_err: ``(J, 3)`` child minus parent anchor origin (world) [m].
        v_err: ``(J, 3)`` velocity of the child anchor point minus the parent's (world) [m/s].
        w_err: ``(J, 3)`` child minus parent angular velocity (world) [rad/s].
        q_rel: ``(J, 4)`` ``q_p⁻¹ q_c`` (parent-anchor frame).
    """

    x_p: jnp.ndarray
    x_c: jnp.ndarray
    r_p: jnp.ndarray
    r_c: jnp.ndarray
    x_err: jnp.ndarray
    v_err: jnp.ndarray
    w_err: jnp.ndarray
    q_rel: jnp.ndarray


def extend_world(body_q: jnp.ndarray, body_qd: jnp.ndarray):
    """Append the world (identity pose, zero twist) as body ``body_count``."""
    dt = body_q.dtype
    ident = jnp.asarray(_IDENT, dt)
    return jnp.concatenate([body_q, ident], 0), jnp.concatenate([body_qd, jnp.zeros((1, 6), dt)], 0)


def joint_frames(model, body_q: jnp.ndarray, body_qd: jnp.ndarray, joints: np.ndarray | None = None) -> JointFrames:
    """Evaluate :class:`JointFrames` for all joints (or the static subset ``joints``) from body poses and COM
    twists."""
    st = joint_static(model.topology)
    sel = slice(None) if joints is None else np.asarray(joints)
    parent, child = st.parent[sel], st.child[sel]
    dt = body_q.dtype
    bq, bqd = extend_world(body_q, body_qd)
    com = jnp.concatenate([model.body_com.astype(dt), jnp.zeros((1, 3), dt)], 0)
    x_p = transform_mul(bq[parent], model.joint_X_p[sel].astype(dt))
    x_c = transform_mul(bq[child], model.joint_X_c[sel].astype(dt))
    r_p = x_p[:, :3] - transform_point(bq[parent], com[parent])
    r_c = x_c[:, :3] - transform_point(bq[child], com[child])
    tp, tc = bqd[parent], bqd[child]
    v_p = tp[:, :3] + jnp.cross(tp[:, 3:], r_p)
    v_c = tc[:, :3] + jnp.cross(tc[:, 3:], r_c)
    q_rel = quat_mul(quat_inverse(x_p[:, 3:]), x_c[:, 3:])
    return JointFrames(x_p, x_c, r_p, r_c, x_c[:, :3] - x_p[:, :3], v_c - v_p, tc[:, 3:] - tp[:, 3:], q_rel)


def gather_joint_axes(model, st: JointStatic):
    """Authored ``(J, 3, 3)`` linear and angular axes (rows; zero rows for absent DOFs).

    FREE and DISTANCE joints take the parent-anchor frame's axes X, Y, Z whatever ``joint_axis`` holds (their
    DOFs are the components of the anchor offset and of the rotation vector in that frame, as in
    SolverFeatherstone).
    """
    ax = jnp.concatenate([model.joint_axis, jnp.zeros((1, 3), model.joint_axis.dtype)], 0)
    lin, ang = ax[st.lin_dof], ax[st.ang_dof]
    free = np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE])
    if not free.any():  # static
        return lin, ang
    eye = jnp.eye(3, dtype=ax.dtype)
    on = jnp.asarray(free)[:, None, None]
    return jnp.where(on, eye, lin), jnp.where(on, eye, ang)


def rotation_vector(q: jnp.ndarray) -> jnp.ndarray:
    """Shortest-arc rotation vector (axis·angle) of unit quaternions ``(..., 4)``, NaN-free."""
    q = jnp.where(q[..., 3:] < 0.0, -q, q)
    v, w = q[..., :3], q[..., 3]
    n2 = dot_last(v, v)
    small = n2 < 1e-12
    n = jnp.sqrt(jnp.where(small, 1.0, n2))
    k = jnp.where(small, 2.0 / jnp.maximum(w, 1e-6), 2.0 * safe_atan2(n, w) / n)
    return v * k[..., None]


def angular_coordinates(n_ang: np.ndarray, axes: jnp.ndarray, q_rel: jnp.ndarray):
    """Angles and covectors of 1-, 2- and 3-axis angular joints (parent-anchor frame).

    Args:
        n_ang: ``(J,)`` static number of angular DOFs.
        axes: ``(J, 3, 3)`` authored angular axes (rows).
        q_rel: ``(J, 4)`` relative rotation ``q_p⁻¹ q_c``.

    Returns:
        ``(angles (J, 3), covectors (J, 3, 3))``. Entries ``k < n_ang`` are the DOF coordinates;
        for 2 axes entry 2 is the locked middle angle of the ``(a0, a0 × a1, a1)`` chain (0 when
        satisfied). Rows ``k ≥ n_ang`` (``n_ang ≠ 2``) are zero. ``q̇_k = covector_k · ω_rel``.
    """
    dt = axes.dtype
    a0, a1 = axes[:, 0], axes[:, 1]
    if not np.any(n_ang >= 2):  # static: no Euler-chain branch in the program
        z = jnp.zeros_like(a0)
        one = jnp.asarray(n_ang == 1)
        q1 = jnp.where(one, quat_twist_angle(a0, q_rel), 0.0)
        angles = jnp.stack([q1, jnp.zeros_like(q1), jnp.zeros_like(q1)], -1)
        return angles, jnp.where(one[:, None, None], jnp.stack([a0, z, z], 1), 0.0)
    eye = jnp.broadcast_to(jnp.eye(3, dtype=dt), axes.shape)
    two = jnp.asarray(n_ang == 2)[:, None, None]
    three = jnp.asarray(n_ang == 3)[:, None, None]
    basis = jnp.where(two, jnp.stack([a0, jnp.cross(a0, a1), a1], 1), jnp.where(three, axes, eye))
    s = jnp.sign(dot_last(jnp.cross(basis[:, 0], basis[:, 1]), basis[:, 2]))
    s = jnp.where(s == 0.0, 1.0, s)
    b_rh = jnp.stack([basis[:, 0], basis[:, 1], jnp.cross(basis[:, 0], basis[:, 1])], axis=-1)
    m = matmul(matmul(jnp.swapaxes(b_rh, -1, -2), quat_to_matrix(q_rel)), b_rh)
    e = matrix_to_euler_xyz(m)
    angles = jnp.stack([e[:, 0], e[:, 1], s * e[:, 2]], -1)
    _, transported = euler_chain(basis, angles)
    cov = inv3(jnp.swapaxes(transported, -1, -2))  # rows: covectors
    pick = np.where((n_ang == 2)[:, None], [0, 2, 1], [0, 1, 2])
    angles = jnp.take_along_axis(angles, jnp.asarray(pick), -1)
    cov = jnp.take_along_axis(cov, jnp.asarray(pick)[:, :, None], 1)
    one = jnp.asarray(n_ang == 1)
    q1 = quat_twist_angle(a0, q_rel)
    z = jnp.zeros_like(angles[:, 1:])
    angles = jnp.where(one[:, None], jnp.concatenate([q1[:, None], z], -1), angles)
    cov = jnp.where(one[:, None, None], jnp.stack([a0, jnp.zeros_like(a0), jnp.zeros_like(a0)], 1), cov)
    keep = jnp.asarray((np.arange(3)[None, :] < n_ang[:, None]) | (n_ang[:, None] == 2))
    return jnp.where(keep, angles, 0.0), jnp.where(keep[:, :, None], cov, 0.0)


def rotate_rows(q: jnp.ndarray, rows: jnp.ndarray) -> jnp.ndarray:
    """Rotate ``(J, 3, 3)`` row vectors by ``(J, 4)`` quaternions."""
    return quat_rotate(q[:, None, :], rows)


def scalar_dof_force(model, control, st: JointStatic, dof: np.ndarray, coord: np.ndarray, q, qd, *, angular: bool):
    """Newton's per-DOF ``joint_force`` (drive per target mode, limits, passive spring/damping).

    Args:
        model: The model.
        control: Control (targets, ``joint_act``).
        st: Joint statics.
        dof: ``(J, 3)`` DOF indices (padding = dof_count).
        coord: ``(J, 3)`` coordinate indices of the targets (padding = coord_count).
        q, qd: ``(J, 3)`` measured positions and velocities.
        angular: Wrap the passive-spring position to (−π, π] (Newton).

    Returns:
        ``(J, 3)`` generalised force of each DOF (0 on padding), including ``control.joint_act``.
    """
    dt = q.dtype

    def g(arr, idx, fill=0.0):
        return jnp.concatenate([jnp.asarray(arr, dt), jnp.full((1,), fill, dt)])[idx]

    tq = g(control.joint_target_q, coord)
    tqd = g(control.joint_target_qd, dof)
    use_ke, use_kd = jnp.asarray(st.use_ke[dof]), jnp.asarray(st.use_kd[dof])
    lo, hi = g(model.joint_limit_lower, dof, -1e10), g(model.joint_limit_upper, dof, 1e10)
    target, _ = drive(tq - q, qd, tqd, use_ke * g(model.joint_target_ke, dof), use_kd * g(model.joint_target_kd, dof))
    limit, limited = penalty_limit(q, qd, lo, hi, g(model.joint_limit_ke, dof), g(model.joint_limit_kd, dof))
    spring_q = wrap_angle(q) if angular else q
    passive = spring_damper(spring_q, qd, g(model.joint_rest_q, dof), g(model.joint_stiffness, dof),
                            g(model.joint_damping, dof))
    return jnp.where(limited, 0.0, target.force) + limit.force + passive.force + g(control.joint_act, dof)


def gather_dof(values: jnp.ndarray, dof: np.ndarray) -> jnp.ndarray:
    """Gather a per-DOF array at ``(J, 3)`` padded indices (0 on padding)."""
    return jnp.concatenate([values, jnp.zeros((1,), values.dtype)])[dof]


def scatter_body_wrench(nb: int, parent: np.ndarray, child: np.ndarray, r_p, r_c, force_c, torque_c):
    """Apply ``(force_c, torque_c)`` to each child at its anchor and the reaction to each parent.

    Returns ``(nb, 6)`` world wrenches about the COMs (the world row is dropped).
    """
    force = segment_sum(force_c, child, nb) - segment_sum(force_c, parent, nb)
    torque = (segment_sum(torque_c + jnp.cross(r_c, force_c), child, nb)
              - segment_sum(torque_c + jnp.cross(r_p, force_c), parent, nb))
    return jnp.concatenate([force, torque], -1)
