"""XPBD joint constraints for every joint type (tree, loop-closing and orphan joints alike).

Per joint, three groups of rows (all joints solved together, Jacobi, impulses summed with
a per-body sum over static body ids):

* **drives** (one scalar row per PRISMATIC/REVOLUTE/D6/BALL/FREE/DISTANCE DOF with a drive): the implicit PD force
  ``ke (q* − q) + kd (q̇* − q̇)`` is the compliant constraint ``q − q̃ = 0`` with stiffness
  ``k = ke + kd/dt`` (compliance ``1/k``) and target ``q̃ = (ke q* + (kd/dt)(q₀ + q̇* dt)) / k``
  (``q₀`` = coordinate at the start of the step), clipped into the limits; BALL coordinates are the
  rotation-vector components ``θ_k`` (targets ``log(q_target)_k``). Passive ``joint_stiffness`` /
  ``joint_damping`` join the same row as further implicit gains (:func:`drive_targets`), and angular
  errors of joints with angle coordinates are wrapped into ``[−π, π)``. FREE/DISTANCE joints drive the child
  COM along the parent-anchor axes and the rotation since the step start (SolverFeatherstone's
  implicit drive law: :func:`drive_coords`, :mod:`jaxart.solvers.maximal.free_joints`), their passive
  stiffness/damping in the same rows (rows for the joints with a drive or, concrete models only, a nonzero passive
  term), FREE position targets clipped into the per-DOF limits;
* **linear** (one row): the anchor offset in the locked directions plus any linear limit
  violation (prismatic/D6 limits, FREE per-DOF position limits, DISTANCE ``[min, max]``), solved along its own
  direction;
* **angular** (four rows): the locked rotation (FIXED/PRISMATIC: full rotation vector; REVOLUTE
  and 1-axis D6: swing of the axis, ``angle(a_p, a_c)``) and one limit row per angular DOF. The
  angle of a 1-axis joint is the **twist angle of the swing–twist decomposition**
  ``2·atan2(a · q.xyz, q.w)`` of ``q_p⁻¹ q_c``, which is the true rotation about an arbitrary
  (oblique) axis; its gradient with respect to the relative rotation is the world axis. 2/3-axis
  joints use the Euler-chain coordinates and their covectors (the locked middle angle of a 2-axis
  joint is a limit row with bounds ``[0, 0]``).

BALL joints constrain the anchor position and, when limited, each component ``θ_k`` of the rotation
vector ``θ = log(q_p⁻¹ q_c)`` (parent-anchor frame, the BALL DOF convention of the reduced solvers)
to ``[limit_lower_k, limit_upper_k]`` with the exact covectors (rows of the inverse SO(3) Jacobian,
see :func:`log_jacobian_inv`); BALL drives act on the same components. FREE joints add no
constraint beyond their per-DOF position limits.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.laws.angles import whole_turns, wrap_angle
from jaxart.laws.compliance import drive_compliance, xpbd_delta
from jaxart.math import quat_conjugate, quat_mul, quat_normalize
from jaxart.math.small import dot_last, matmul, matvec, sum_axis
from jaxart.sim.enums import JointType
from jaxart.solvers.maximal.free_joints import com_levers, free_drive_joints, free_targets
from jaxart.solvers.maximal.joints import (
    angular_coordinates,
    gather_dof,
    gather_joint_axes,
    joint_frames,
    rotate_rows,
    rotation_vector,
)
from jaxart.solvers.xpbd.common import (
    Bodies,
    body_sums,
    quad,
    safe_unit,
)

_ROTVEC = (JointType.BALL, JointType.FREE, JointType.DISTANCE)  # angular coordinates = rotation-vector components


class JointCoords(NamedTuple):
    """Measured joint coordinates at an iterate (world directions)."""

    fr: object
    lin_axes: jnp.ndarray  # (J, 3, 3) world linear axes
    q_lin: jnp.ndarray  # (J, 3)
    angles: jnp.ndarray  # (J, 3)
    cov: jnp.ndarray  # (J, 3, 3) world covectors
    ang_axes: jnp.ndarray  # (J, 3, 3) authored angular axes (parent-anchor frame)


def joint_coords(model, st, body_q, *, angular: bool = True) -> JointCoords:
    """Anchor frames, linear coordinates and (unless ``angular=False``) angular coordinates/covectors."""
    dt = body_q.dtype
    fr = joint_frames(model, body_q, jnp.zeros((body_q.shape[0], 6), dt))
    lin_ax, ang_ax = gather_joint_axes(model, st)
    qp = fr.x_p[:, 3:]
    axes_w = rotate_rows(qp, lin_ax.astype(dt))
    q_lin = matvec(axes_w, fr.x_err)
    if not angular:
        return JointCoords(fr, axes_w, q_lin, None, None, ang_ax.astype(dt))
    angles, cov = angular_coordinates(st.n_ang, ang_ax.astype(dt), fr.q_rel)
    if np.any(st.jtype == JointType.BALL):  # static: BALL coordinates = rotation-vector components
        theta = rotation_vector(fr.q_rel)
        is_ball = jnp.asarray(st.jtype == JointType.BALL)
        angles = jnp.where(is_ball[:, None], theta, angles)
        cov = jnp.where(is_ball[:, None, None], log_jacobian_inv(theta), cov)
    return JointCoords(fr, axes_w, q_lin, angles, rotate_rows(qp, cov), ang_ax.astype(dt))


def drive_coords(model, st, body_q, q0_rel=None):
    """:func:`joint_coords` of the drive rows and ``(J, 3)`` offsets ``c − p``.

    Driven FREE/DISTANCE joints (:mod:`jaxart.solvers.maximal.free_joints`): the linear rows act at the child COM
    (:func:`~jaxart.solvers.maximal.free_joints.com_levers`) on the coordinate ``c``, the child COM in the
    parent-anchor frame (``c − p`` is its offset from the child anchor's ``p = joint_q[0:3]``; zero for other
    joints); the angular rows on ``φ = log(q ⊗ q₀⁻¹)``, the relative rotation since the step start (``q₀ = q0_rel``,
    ``(J, 4)``; ``None``: the current one, ``φ = 0``) in the parent-anchor frame, with covectors ``J⁻¹(φ)``, so
    ``φ/dt`` is the step's mean relative angular velocity ``ω``.
    """
    jc = joint_coords(model, st, body_q)
    free = free_drive_joints(st)
    if not free.any():  # static
        return jc, jnp.zeros_like(jc.q_lin)
    on = jnp.asarray(free)[:, None]
    fr = com_levers(jc.fr, free)
    q_lin = jnp.where(on, matvec(jc.lin_axes, fr.x_err), jc.q_lin)
    q0 = fr.q_rel if q0_rel is None else q0_rel
    phi = jnp.where(on, rotation_vector(quat_mul(fr.q_rel, quat_conjugate(q0))), 0.0)
    cov = rotate_rows(fr.x_p[:, 3:], log_jacobian_inv(phi))
    return jc._replace(fr=fr, q_lin=q_lin, angles=jnp.where(on, phi, jc.angles),
                       cov=jnp.where(on[:, :, None], cov, jc.cov)), q_lin - jc.q_lin


class DriveTargets(NamedTuple):
    """Per-step drive rows: targets and stiffness ``(J, 6)`` (linear 3 then angular 3)."""

    target: jnp.ndarray
    stiffness: jnp.ndarray
    q0_rel: jnp.ndarray | None = None  # (J, 4) step-start relative rotations (driven FREE/DISTANCE joints)


def drive_targets(model, control, st, body_q0, dt) -> DriveTargets:
    """Implicit-PD targets of every scalar DOF from the step-start coordinates (module docstring).

    Passive ``joint_stiffness`` (toward ``joint_rest_q``, angles wrapped as the explicit spring) and
    ``joint_damping`` are folded into the same row: with drive gains ``ke, kd`` and passive gains
    ``k, d`` the row has stiffness ``ke + k + (kd + d)/dt`` and target
    ``(ke q* + k q_rest + (kd/dt)(q₀ + q̇* dt) + (d/dt) q₀) / (ke + k + (kd + d)/dt)``. FREE/DISTANCE joints in
    ``st.free_rows`` fold their passive terms in likewise (SolverFeatherstone's spring ``k (rest − x)`` on
    ``x = (p, log q)``, linearised over the step as the drive).
    """
    jc, offset = drive_coords(model, st, body_q0)
    f = body_q0.dtype
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)
    coord = np.concatenate([st.lin_coord, st.ang_coord], 1)
    scalar = jnp.asarray(coord < model.joint_coord_count) & jnp.asarray(st.enabled)[:, None]
    q0 = jnp.concatenate([jc.q_lin, jc.angles], 1)
    ke = jnp.asarray(st.use_ke[dof]) * gather_dof(model.joint_target_ke.astype(f), dof)
    kd = jnp.asarray(st.use_kd[dof]) * gather_dof(model.joint_target_kd.astype(f), dof)
    tq_ext = jnp.concatenate([control.joint_target_q.astype(f), jnp.array([0.0, 1.0], f)])
    tq = tq_ext[coord]
    ball = np.concatenate([np.zeros((len(st.jtype), 3), bool), np.repeat((st.jtype == JointType.BALL)[:, None], 3, 1)],
                          1) & st.enabled[:, None]
    if ball.any():  # static: BALL targets as rotation-vector components (the BALL coordinates of joint_coords)
        tq_ball = rotation_vector(quat_normalize(tq_ext[st.ball_coord]))
        tq = jnp.where(jnp.asarray(ball), jnp.concatenate([jnp.zeros_like(tq_ball), tq_ball], 1), tq)
        scalar = scalar | jnp.asarray(ball)
    lo = gather_dof(model.joint_limit_lower.astype(f), dof)
    hi = gather_dof(model.joint_limit_upper.astype(f), dof)
    free = free_drive_joints(st)
    if free.any():  # static: FREE/DISTANCE targets (COM coordinate, rotation since the step start; no limits)
        p_t, q_t = free_targets(model, control, f)
        on = jnp.asarray(free)[:, None]
        err = rotation_vector(quat_mul(q_t, quat_conjugate(jc.fr.q_rel)))  # log(q* ⊗ q₀⁻¹) (φ₀ = 0)
        tq = jnp.where(on, jnp.concatenate([p_t + offset, err], 1), tq)
        scalar = scalar | on
        # FREE position targets clipped into the per-DOF limits (in COM coordinates: shifted by c − p), as scalar
        # DOFs; no angular limits, DISTANCE: its distance limit only
        lim = jnp.asarray(free & (st.jtype == JointType.FREE))[:, None] & jnp.asarray(np.arange(6) < 3)[None, :]
        shift = jnp.concatenate([offset, jnp.zeros_like(offset)], 1)
        lo = jnp.where(lim, lo + shift, jnp.where(on, -jnp.inf, lo))
        hi = jnp.where(lim, hi + shift, jnp.where(on, jnp.inf, hi))
    tqd = gather_dof(control.joint_target_qd.astype(f), dof)
    k_p, d_p, rest = passive_gains(model, st, q0)
    if st.free_rows is not None and st.free_rows.any():  # static: passive FREE/DISTANCE rows (Featherstone's spring)
        on = jnp.asarray(st.free_rows & free)[:, None]
        rest_f = gather_dof(jnp.asarray(model.joint_rest_q, f), dof)
        # coordinates c (COM) and φ (φ₀ = 0): the rest p_rest + (c₀ − p₀) and rest − log(q₀), so that the row is
        # Featherstone's implicit spring k (rest − x₀ − dt q̇) − d q̇ on x = (p, log q)
        rest_f = jnp.concatenate([rest_f[:, :3] + offset, rest_f[:, 3:] - rotation_vector(jc.fr.q_rel)], 1)
        k_p = jnp.where(on, gather_dof(model.joint_stiffness.astype(f), dof), k_p)
        d_p = jnp.where(on, gather_dof(model.joint_damping.astype(f), dof), d_p)
        rest = jnp.where(on, rest_f, rest)
    k = jnp.where(scalar, ke + k_p + (kd + d_p) / dt, 0.0)
    ok = k > 0.0
    num = ke * tq + k_p * rest + kd / dt * (q0 + tqd * dt) + d_p / dt * q0
    target = jnp.where(ok, num / jnp.where(ok, k, 1.0), 0.0)
    return DriveTargets(jnp.clip(target, lo, hi), k, jc.fr.q_rel if free.any() else None)


def passive_gains(model, st, q0: jnp.ndarray):
    """``(stiffness, damping, rest)`` ``(J, 6)`` of the passive joint springs (0 on FREE/DISTANCE joints).

    Angular rest positions are shifted by the whole turns of ``q0`` (the explicit spring's wrap of the
    angle into ``[−π, π)``), so the spring pulls toward the nearest copy of ``joint_rest_q``.
    """
    f = q0.dtype
    dof = np.concatenate([st.lin_dof, st.ang_dof], 1)
    on = jnp.asarray(~np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE]) & st.enabled)[:, None]
    k_p = jnp.where(on, gather_dof(model.joint_stiffness.astype(f), dof), 0.0)
    d_p = jnp.where(on, gather_dof(model.joint_damping.astype(f), dof), 0.0)
    rest = gather_dof(jnp.asarray(model.joint_rest_q, f), dof)
    angular = jnp.asarray((np.arange(6) >= 3)[None, :] & (st.jtype != JointType.BALL)[:, None])
    turns = whole_turns(q0)
    return k_p, d_p, jnp.where(angular, rest + turns, rest)


def _combine(coef, rows):
    """``Σ_k coef[:, k] rows[:, k]`` for ``(J, k)`` coefficients and ``(J, k, 3)`` rows."""
    return sum_axis(coef[:, :, None] * rows, 1)


def _impulses_linear(nb, st, fr, n, dlam):
    """Per-body positional impulses ``(None, p (nb, 3), L (nb, 3))`` of linear rows ``(J, k)`` along ``n (J, k, 3)``.

    The rows of a joint share its anchor levers, so they are summed per joint first.
    """
    p = sum_axis(n * dlam[..., None], 1)
    return (None, *body_sums(nb, st.child, st.parent, p, jnp.cross(fr.r_c, p), -p, -jnp.cross(fr.r_p, p)))


def _impulses_angular(nb, st, g, dlam):
    """Per-body angular impulses ``(None, None, L (nb, 3))`` of rows with gradients ``g (J, k, 3)``."""
    a = sum_axis(g * dlam[..., None], 1)
    return (None, *body_sums(nb, st.child, st.parent, None, a, None, -a))


def _lin_w(b: Bodies, st, fr, n):
    """``(J, k)`` generalised inverse masses of linear rows ``n (J, k, 3)`` (one gather per joint body)."""
    w_p = _row_w(b, st.parent, jnp.cross(fr.r_p[:, None, :], n))
    w_c = _row_w(b, st.child, jnp.cross(fr.r_c[:, None, :], n))
    return (b.inv_m[st.parent] + b.inv_m[st.child])[:, None] + w_p + w_c


def _ang_w(b: Bodies, st, g):
    """``(J, k)`` generalised inverse masses of angular rows ``g (J, k, 3)``."""
    return _row_w(b, st.parent, g) + _row_w(b, st.child, g)


def _row_w(b: Bodies, body, v):
    """``vᵀ I_w⁻¹ v`` of rows ``v (J, k, 3)`` on the bodies ``body (J,)``."""
    return quad(b.inv_iw[body][:, None], v)


def wrap_angular_error(st, c: jnp.ndarray) -> jnp.ndarray:
    """Wrap the angular errors (columns 3–5) of joints with angle coordinates (not BALL/FREE/DISTANCE) into
    ``[−π, π)``.

    The measured angles jump by a whole number of turns (the twist angle at ±2π), so an unwrapped error
    between the current angle and a target or step-start angle would turn a continuous rotation into a
    kick of several radians.
    """
    angular = jnp.asarray((np.arange(6) >= 3)[None, :] & ~np.isin(st.jtype, _ROTVEC)[:, None])
    return jnp.where(angular, wrap_angle(c), c)


def solve_drives(model, st, b: Bodies, drives: DriveTargets, lam, dt):
    """One Jacobi pass over all drive rows. Returns ``(impulses, new λ (J, 6))``."""
    jc, _ = drive_coords(model, st, b.q[:-1], drives.q0_rel)
    c = wrap_angular_error(st, jnp.concatenate([jc.q_lin, jc.angles], 1) - drives.target)
    alpha_t, on = drive_compliance(drives.stiffness, dt)
    w = jnp.concatenate([_lin_w(b, st, jc.fr, jc.lin_axes), _ang_w(b, st, jc.cov)], 1)
    dlam = jnp.where(on, xpbd_delta(c, lam, w, alpha_t), 0.0)
    nb = b.inv_m.shape[0] - 1
    _, lin, a1 = _impulses_linear(nb, st, jc.fr, jc.lin_axes, dlam[:, :3])
    _, _, a2 = _impulses_angular(nb, st, jc.cov, dlam[:, 3:])
    return (None, lin, a1 + a2), lam + dlam


def _linear_error(model, st, jc: JointCoords):
    """World error vector of the linear row (locked offset + limit violations / distance bounds)."""
    f = jc.q_lin.dtype
    fr = jc.fr
    lo = gather_dof(model.joint_limit_lower.astype(f), st.lin_dof)
    hi = gather_dof(model.joint_limit_upper.astype(f), st.lin_dof)
    free_ax = jnp.asarray(np.arange(3)[None, :] < st.n_lin[:, None])
    proj = _combine(jnp.where(free_ax, jc.q_lin, 0.0), jc.lin_axes)
    viol = jnp.where(free_ax, jc.q_lin - jnp.clip(jc.q_lin, lo, hi), 0.0)
    err = fr.x_err - proj + _combine(viol, jc.lin_axes)
    dist, u = safe_unit(fr.x_err)
    dlo = jnp.where(lo[:, 0] >= 0.0, lo[:, 0], 0.0)
    dhi = jnp.where(hi[:, 0] >= 0.0, hi[:, 0], jnp.inf)
    dist_err = (dist - jnp.clip(dist, dlo, dhi))[:, None] * u
    jt = st.jtype[:, None]
    err = jnp.where(jnp.asarray(jt == JointType.DISTANCE), dist_err, err)
    if np.any(st.jtype == JointType.FREE):  # static: FREE per-DOF position limits (anchor p = joint_q[0:3])
        err = jnp.where(jnp.asarray(jt == JointType.FREE), _combine(jc.q_lin - jnp.clip(jc.q_lin, lo, hi),
                                                                     jc.lin_axes), err)
    return jnp.where(jnp.asarray(~st.enabled[:, None]), 0.0, err)


def solve_linear(model, st, b: Bodies, lam, dt, *, compliance: float, relaxation: float):
    """One Jacobi pass over the linear rows. Returns ``(impulses, new λ (J,))``."""
    jc = joint_coords(model, st, b.q[:-1], angular=False)
    c, n = safe_unit(_linear_error(model, st, jc))
    w = _lin_w(b, st, jc.fr, n[:, None, :])[:, 0]
    dlam = relaxation * xpbd_delta(c, lam, w, compliance / (dt * dt))
    dlam = jnp.where(c > 0.0, dlam, 0.0)
    return _impulses_linear(b.inv_m.shape[0] - 1, st, jc.fr, n[:, None, :], dlam[:, None]), lam + dlam


def _angular_rows(model, st, jc: JointCoords):
    """``(errors (J, 4), gradients (J, 4, 3))``: locked rotation row + three limit rows."""
    f = jc.angles.dtype
    fr = jc.fr
    qp = fr.x_p[:, 3:]
    axis_p = rotate_rows(qp, jc.ang_axes)[:, 0]
    axis_c = rotate_rows(fr.x_c[:, 3:], jc.ang_axes)[:, 0]
    s, g_swing = safe_unit(jnp.cross(axis_p, axis_c))
    swing = jnp.arctan2(s, dot_last(axis_p, axis_c))
    rot = rotate_rows(qp, rotation_vector(fr.q_rel)[:, None, :])[:, 0]
    fix, g_fix = safe_unit(rot)
    n_ang, jt = st.n_ang, st.jtype
    locked_rot = (n_ang == 0) & ~np.isin(jt, [JointType.BALL, JointType.FREE, JointType.DISTANCE])
    c0 = jnp.where(jnp.asarray(locked_rot), fix, jnp.where(jnp.asarray(n_ang == 1), swing, 0.0))
    g0 = jnp.where(jnp.asarray(locked_rot)[:, None], g_fix, g_swing)
    angles, cov = jc.angles, jc.cov
    lo = gather_dof(model.joint_limit_lower.astype(f), st.ang_dof)
    hi = gather_dof(model.joint_limit_upper.astype(f), st.ang_dof)
    locked_mid = jnp.asarray((n_ang == 2)[:, None] & (np.arange(3) == 2)[None, :])
    lo, hi = jnp.where(locked_mid, 0.0, lo), jnp.where(locked_mid, 0.0, hi)
    rows = jnp.asarray((np.arange(3)[None, :] < n_ang[:, None]) | (n_ang[:, None] == 2)) & jnp.asarray(
        ~np.isin(jt, [JointType.FREE, JointType.DISTANCE]))[:, None]
    viol = jnp.where(rows, angles - jnp.clip(angles, lo, hi), 0.0)
    c = jnp.concatenate([c0[:, None], viol], 1)
    c = jnp.where(jnp.asarray(st.enabled)[:, None], c, 0.0)
    return c, jnp.concatenate([g0[:, None, :], cov], 1)


def log_jacobian_inv(theta: jnp.ndarray) -> jnp.ndarray:
    """``(J, 3, 3)`` inverse left Jacobian of SO(3): ``δθ = J⁻¹ δφ`` for ``exp(δφ) exp(θ)`` (rows = covectors).

    ``J⁻¹ = I − ½[θ]× + (1/θ² − (1 + cos θ)/(2 θ sin θ)) [θ]×²`` (coefficient → 1/12 as θ → 0).
    """
    t2 = dot_last(theta, theta)
    small = t2 < 1e-8
    t = jnp.sqrt(jnp.where(small, 1.0, t2))
    coef = jnp.where(small, 1.0 / 12.0, 1.0 / jnp.where(small, 1.0, t2)
                     - (1.0 + jnp.cos(t)) / (2.0 * t * jnp.sin(jnp.where(small, 1.0, t))))
    x, y, z = theta[..., 0], theta[..., 1], theta[..., 2]
    zero = jnp.zeros_like(x)
    sk = jnp.stack([jnp.stack([zero, -z, y], -1), jnp.stack([z, zero, -x], -1), jnp.stack([-y, x, zero], -1)], -2)
    eye = jnp.eye(3, dtype=theta.dtype)
    return eye - 0.5 * sk + coef[:, None, None] * matmul(sk, sk)


def solve_angular(model, st, b: Bodies, lam, dt, *, compliance: float, relaxation: float):
    """One Jacobi pass over the angular rows. Returns ``(impulses, new λ (J, 4))``."""
    jc = joint_coords(model, st, b.q[:-1])
    c, g = _angular_rows(model, st, jc)
    w = _ang_w(b, st, g)
    dlam = relaxation * xpbd_delta(c, lam, w, compliance / (dt * dt))
    dlam = jnp.where(c != 0.0, dlam, 0.0)
    return _impulses_angular(b.inv_m.shape[0] - 1, st, g, dlam), lam + dlam
