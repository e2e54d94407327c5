"""Batch-minor lane kernel of a whole SolverXPBD step.

The per-world code (:mod:`jaxart.solvers.xpbd.joints`, :mod:`jaxart.solvers.xpbd.contacts`, :func:`jaxart.eval_ik`)
works on ``(items, 3)``-shaped arrays; under ``vmap`` every scalar of a world is a strided element and
XLA:CPU runs hundreds of small, poorly vectorised loops per step. This module evaluates the same
step — passive joint forces, prediction, the projection rounds (drives, joint linear rows, joint
angular rows, contacts; Jacobi, same formulas), velocities, kinematic mask and IK — as one
:func:`jaxart.math.lanes.lanes` kernel: every quantity is a component tuple of ``(items, L)`` arrays
with the batch ``L`` last (SoA, :mod:`maximal_xpbd_soa`), joint bodies are static row gathers, per-body
sums of joint rows are static gather-sums (:func:`maximal_sums.segment_sum`), contact bodies use
per-lane selects (:mod:`maximal_xpbd_lane_contacts`), branches that only some joints need (Euler
chains, twist angles, locked rotations) run on static joint subsets, and every stage whose outputs
fan out is materialised with :func:`maximal_xpbd_soa.stage`. Gradients go through the kernel's
one-lane evaluation (``lanes``' ``custom_jvp``).

The world is carried as an extra body row (identity pose, zero inverse mass and inertia), which the
impulse application leaves unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.ik_lanes import ik_lanes, unpack_inputs
from jaxart.laws.angles import wrap_angle
from jaxart.laws.compliance import drive_compliance, xpbd_delta
from jaxart.math.lanes import col as mask
from jaxart.math.lanes import lanes
from jaxart.math.soa import on_subset
from jaxart.sim.enums import JointType
from jaxart.sim.gravity import gravity_mass
from jaxart.solvers.maximal.free_joints import free_drive_joints
from jaxart.solvers.maximal.sums import segment_sum
from jaxart.solvers.xpbd import soa as s
from jaxart.solvers.xpbd.joint_soa import joint_angles, log_jacobian_inv
from jaxart.solvers.xpbd.lane_contacts import contact_data, solve_contacts
from jaxart.solvers.xpbd.soa import Bodies


class LaneOptions(NamedTuple):
    """Static configuration of the projection kernel (hashable)."""

    iterations: int
    lin_relax: float
    ang_relax: float
    lin_compliance: float
    ang_compliance: float
    contact_relax: float
    drives: bool
    joints: bool
    contacts: bool
    angular_damping: float
    passive: bool  # joint_act/joint_f evaluated in the kernel (stiffness/damping: drive rows)
    restitution: bool  # also return the predicted velocities
    ik: bool  # mask kinematic bodies and evaluate joint_q/joint_qd in the kernel


def _bodies(pose, com, inv_m, inv_i) -> Bodies:
    """World COMs and inverse inertias at an iterate (``make_bodies``)."""
    p, q = pose
    rot = s.rotmat(q)
    inv_iw = s.matmul(s.matmul(rot, inv_i), s.transpose(rot))
    return Bodies(p, q, s.add(p, s.qrot(q, com)), inv_m, inv_iw)


def _apply(b: Bodies, com, lin, ang):
    """Move the bodies by summed positional impulses (``apply_impulses``)."""
    dth = s.matvec(b.inv_iw, ang)
    q_new = s.qintegrate(b.q, dth, 1.0)
    x = b.com_w if lin is None else s.add(b.com_w, s.scale(lin, b.inv_m))
    return s.sub(x, s.qrot(q_new, com)), q_new


def _joint_sum(st, nb1, on_child, on_parent):
    """Per-body sums of joint rows (child rows, parent rows) with static ids."""
    return tuple(segment_sum(c, st.child, nb1) + segment_sum(p, st.parent, nb1)
                 for c, p in zip(on_child, on_parent, strict=True))


class _Frames(NamedTuple):
    x_p: tuple
    x_c: tuple
    r_p: tuple
    r_c: tuple
    x_err: tuple
    q_rel: tuple


def _frames(st, b: Bodies, jd) -> _Frames:
    """``joint_frames`` (poses only)."""
    x_p = s.tmul((s.take(b.p, st.parent), s.take(b.q, st.parent)), jd["X_p"])
    x_c = s.tmul((s.take(b.p, st.child), s.take(b.q, st.child)), jd["X_c"])
    r_p = s.sub(x_p[0], s.take(b.com_w, st.parent))
    r_c = s.sub(x_c[0], s.take(b.com_w, st.child))
    return _Frames(x_p, x_c, r_p, r_c, s.sub(x_c[0], x_p[0]), s.qmul(s.qconj(x_p[1]), x_c[1]))


def _lin_coords(jd, fr: _Frames):
    """World linear axes and linear coordinates."""
    axes = [s.qrot(fr.x_p[1], a) for a in jd["lin_ax"]]
    return axes, [s.dot(a, fr.x_err) for a in axes]


def _ang_coords(st, jd, fr: _Frames):
    """Angular coordinates and world covectors."""
    angles, cov = joint_angles(st.jtype, st.n_ang, jd["ang_ax"], fr.q_rel)
    return angles, [s.qrot(fr.x_p[1], c) for c in cov]


def _lin_w(st, b: Bodies, fr: _Frames, n):
    im = s.take(b.inv_m, st.parent) + s.take(b.inv_m, st.child)
    return (im + s.quad(s.take(b.inv_iw, st.parent), s.cross(fr.r_p, n))
            + s.quad(s.take(b.inv_iw, st.child), s.cross(fr.r_c, n)))


def _ang_w(st, b: Bodies, g):
    return s.quad(s.take(b.inv_iw, st.parent), g) + s.quad(s.take(b.inv_iw, st.child), g)


def _lin_impulse(st, nb1, fr: _Frames, p):
    """Per-body ``(linear, angular)`` sums of joint-anchor impulses ``p`` (on the child, −p on the parent)."""
    lin = _joint_sum(st, nb1, p, s.neg(p))
    ang = _joint_sum(st, nb1, s.cross(fr.r_c, p), s.neg(s.cross(fr.r_p, p)))
    return lin, ang


def _com_levers(st, fr: _Frames) -> _Frames:
    """``free_joints.com_levers``: the linear drive rows of driven FREE/DISTANCE joints act at the child COM."""
    free = free_drive_joints(st)
    if not free.any():  # static
        return fr
    on = mask(free)
    off = s.sub(fr.x_err, fr.r_c)
    return fr._replace(x_err=s.where(on, off, fr.x_err), r_p=s.where(on, s.add(fr.r_p, off), fr.r_p),
                       r_c=s.where(on, (0.0,) * 3, fr.r_c))


def _free_rotation(st, fr: _Frames, q0, angles, cov):
    """Angular drive coordinates of driven FREE/DISTANCE joints: the rotation ``φ = log(q ⊗ q₀⁻¹)`` since the step
    start and its world covectors (:func:`jaxart.solvers.xpbd.joints.drive_coords`)."""
    on = mask(free_drive_joints(st))
    phi = s.where(on, s.rotation_vector(s.qmul(fr.q_rel, s.qconj(q0))), (0.0,) * 3)
    rows = [s.qrot(fr.x_p[1], r) for r in log_jacobian_inv(phi)]
    return [jnp.where(on, phi[k], angles[k]) for k in range(3)], [s.where(on, rows[k], cov[k]) for k in range(3)]


def _solve_drives(st, b, jd, dr, lam, dt):
    fr = _frames(st, b, jd)
    angles, cov = _ang_coords(st, jd, fr)
    if "q0" in dr:  # static: driven FREE/DISTANCE joints
        angles, cov = _free_rotation(st, fr, dr["q0"], angles, cov)
    fr = _com_levers(st, fr)
    axes, q_lin = _lin_coords(jd, fr)
    nb1 = b.inv_m.shape[0]
    coord = list(q_lin) + list(angles)
    w = [_lin_w(st, b, fr, a) for a in axes] + [_ang_w(st, b, g) for g in cov]
    dlam = []
    not_ball = mask(~np.isin(st.jtype, [JointType.BALL, JointType.FREE, JointType.DISTANCE]))
    for k in range(6):
        alpha, on = drive_compliance(dr["stiffness"][k], dt)
        c = coord[k] - dr["target"][k]
        if k >= 3:  # angle errors (not rotation vectors) wrapped into [-pi, pi) (joints.wrap_angular_error)
            c = jnp.where(not_ball, wrap_angle(c), c)
        dlam.append(jnp.where(on, xpbd_delta(c, lam[k], w[k], alpha), 0.0))
    p = tuple(s.total(axes[k][i] * dlam[k] for k in range(3)) for i in range(3))
    a = tuple(s.total(cov[k][i] * dlam[3 + k] for k in range(3)) for i in range(3))
    lin, a1 = _lin_impulse(st, nb1, fr, p)
    a2 = _joint_sum(st, nb1, a, s.neg(a))
    return (lin, s.add(a1, a2)), tuple(lam[k] + dlam[k] for k in range(6))


def _linear_error(st, jd, fr: _Frames, axes, q_lin):
    """The linear error of :mod:`jaxart.solvers.xpbd.joints` (world error vector of the linear row)."""
    free = [mask(k < st.n_lin) for k in range(3)]
    lo, hi = jd["lin_lo"], jd["lin_hi"]
    proj = tuple(s.total(jnp.where(free[k], q_lin[k], 0.0) * axes[k][i] for k in range(3)) for i in range(3))
    viol = [jnp.where(free[k], q_lin[k] - jnp.clip(q_lin[k], lo[k], hi[k]), 0.0) for k in range(3)]
    err = s.add(s.sub(fr.x_err, proj), tuple(s.total(viol[k] * axes[k][i] for k in range(3)) for i in range(3)))
    jt = st.jtype
    if np.any(jt == JointType.DISTANCE):  # static
        dist, u = s.safe_unit(fr.x_err)
        dlo = jnp.where(lo[0] >= 0.0, lo[0], 0.0)
        dhi = jnp.where(hi[0] >= 0.0, hi[0], jnp.inf)
        err = s.where(mask(jt == JointType.DISTANCE), s.scale(u, dist - jnp.clip(dist, dlo, dhi)), err)
    if np.any(jt == JointType.FREE):  # static: FREE per-DOF position limits (anchor p = joint_q[0:3])
        viol = [q_lin[k] - jnp.clip(q_lin[k], lo[k], hi[k]) for k in range(3)]
        err = s.where(mask(jt == JointType.FREE), tuple(s.total(viol[k] * axes[k][i] for k in range(3))
                                                         for i in range(3)), err)
    off = mask(~st.enabled)
    return tuple(jnp.where(off, 0.0, e) for e in err)


def _linear_rows(st, b, jd, fr):
    axes, q_lin = _lin_coords(jd, fr)
    c, n = s.safe_unit(_linear_error(st, jd, fr, axes, q_lin))
    return c, n, _lin_w(st, b, fr, n)


def _solve_linear(st, b, jd, lam, dt, opt: LaneOptions):
    fr = s.stage(lambda *a: _frames(st, *a), b, jd)
    c, n, w = s.stage(lambda *a: _linear_rows(st, *a), b, jd, fr)

    def rows(c, n, w, lam, fr):
        dlam = opt.lin_relax * xpbd_delta(c, lam, w, opt.lin_compliance / (dt * dt))
        dlam = jnp.where(c > 0.0, dlam, 0.0)
        p = s.scale(n, dlam)
        return p, s.cross(fr.r_c, p), s.cross(fr.r_p, p), lam + dlam

    p, ang_c, ang_p, lam = s.stage(rows, c, n, w, lam, fr)
    nb1 = b.inv_m.shape[0]
    return (_joint_sum(st, nb1, p, s.neg(p)), _joint_sum(st, nb1, ang_c, s.neg(ang_p))), lam


def _angular_rows(st, jd, fr: _Frames):
    """The angular rows of :mod:`jaxart.solvers.xpbd.joints`: errors (4 arrays) and world gradients (4 vectors)."""
    angles, cov = _ang_coords(st, jd, fr)
    qp = fr.x_p[1]
    n_ang, jt = st.n_ang, st.jtype
    locked_rot = (n_ang == 0) & ~np.isin(jt, [JointType.BALL, JointType.FREE, JointType.DISTANCE])

    def swing_row(axis, qp, qc):  # 1-axis joints: swing of the axis (any other joint: c0 = 0, g0 unused)
        axis_p, axis_c = s.qrot(qp, axis), s.qrot(qc, axis)
        sn, g = s.safe_unit(s.cross(axis_p, axis_c))
        return jnp.arctan2(sn, s.dot(axis_p, axis_c)), g

    def fix_row(qp, q_rel):  # locked rotations: the full rotation vector
        return s.safe_unit(s.qrot(qp, s.rotation_vector(q_rel)))

    swing, g_swing = on_subset(swing_row, n_ang == 1, jd["ang_ax"][0], qp, fr.x_c[1])
    fix, g_fix = on_subset(fix_row, locked_rot, qp, fr.q_rel)
    c0 = jnp.where(mask(locked_rot), fix, jnp.where(mask(n_ang == 1), swing, 0.0))
    g0 = s.where(mask(locked_rot), g_fix, g_swing)
    on = ~np.isin(jt, [JointType.FREE, JointType.DISTANCE])
    cs = [c0]
    for k in range(3):
        locked_mid = (n_ang == 2) & (k == 2)
        lo = jnp.where(mask(locked_mid), 0.0, jd["ang_lo"][k])
        hi = jnp.where(mask(locked_mid), 0.0, jd["ang_hi"][k])
        rows = mask(((k < n_ang) | (n_ang == 2)) & on)
        cs.append(jnp.where(rows, angles[k] - jnp.clip(angles[k], lo, hi), 0.0))
    en = mask(st.enabled)
    return [jnp.where(en, c, 0.0) for c in cs], [g0, *cov]


def _solve_angular(st, b, jd, lam, dt, opt: LaneOptions):
    fr = s.stage(lambda *a: _frames(st, *a), b, jd)
    c, g = s.stage(lambda *a: _angular_rows(st, *a), jd, fr)
    w = s.stage(lambda b, g: [_ang_w(st, b, gk) for gk in g], b, g)

    def rows(c, g, w, lam):
        dlam = []
        for k in range(4):
            d = opt.ang_relax * xpbd_delta(c[k], lam[k], w[k], opt.ang_compliance / (dt * dt))
            dlam.append(jnp.where(c[k] != 0.0, d, 0.0))
        a = tuple(s.total(g[k][i] * dlam[k] for k in range(4)) for i in range(3))
        return a, tuple(lam[k] + dlam[k] for k in range(4))

    a, lam = s.stage(rows, c, g, w, lam)
    return (None, _joint_sum(st, b.inv_m.shape[0], a, s.neg(a))), lam


def _passive_wrenches(st, jd, pv, pose, com):
    """``_passive_forces`` of :mod:`jaxart.solvers.xpbd.solver` (non-BALL joints): ``(force, torque)`` per body.

    The explicit joint forces ``joint_act + joint_f`` per DOF, applied at the anchors of the constrained
    joints; FREE / DISTANCE joints apply ``joint_f`` as a world wrench at the child COM and ``joint_act`` along the
    parent-anchor axes (force at the child COM, pure torque:
    :func:`jaxart.solvers.maximal.free_joints.free_wrenches`). (Passive stiffness and damping are implicit rows of
    the drive phase: :func:`jaxart.solvers.xpbd.joints.drive_targets`.)
    """
    nb1 = pose[0][0].shape[0]
    com_w = s.add(pose[0], s.qrot(pose[1], com))
    b = Bodies(pose[0], pose[1], com_w, None, None)
    fr = _frames(st, b, jd)
    axes, _ = _lin_coords(jd, fr)
    f_lin = [pv["lin_act"][k] + pv["lin_f"][k] for k in range(3)]
    force = tuple(s.total(f_lin[k] * axes[k][i] for k in range(3)) for i in range(3))
    _, cov = _ang_coords(st, jd, fr)
    tau = [pv["ang_act"][k] + pv["ang_f"][k] for k in range(3)]
    torque = tuple(s.total(tau[k] * cov[k][i] for k in range(3)) for i in range(3))
    torque = s.where(mask(st.n_ang == 0), (0.0,) * 3, torque)
    on = mask(st.enabled & ~np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE]))
    force, torque = s.where(on, force, (0.0,) * 3), s.where(on, torque, (0.0,) * 3)
    f_b = _joint_sum(st, nb1, force, s.neg(force))
    t_b = _joint_sum(st, nb1, s.add(torque, s.cross(fr.r_c, force)), s.neg(s.add(torque, s.cross(fr.r_p, force))))
    free_on = st.enabled & np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE])
    if free_on.any():  # static
        w = s.where(mask(free_on), pv["free_f"], (0.0,) * 6)
        f_b = s.add(f_b, tuple(segment_sum(x, st.child, nb1) for x in w[:3]))
        t_b = s.add(t_b, tuple(segment_sum(x, st.child, nb1) for x in w[3:]))
        # joint_act: force at the child COM and pure torque along the parent-anchor axes (free_joints.free_wrenches)
        on = mask(free_on)
        force = s.where(on, tuple(s.total(pv["lin_act"][k] * axes[k][i] for k in range(3)) for i in range(3)),
                        (0.0,) * 3)
        ang = [s.qrot(fr.x_p[1], a) for a in jd["ang_ax"]]
        torque = s.where(on, tuple(s.total(pv["ang_act"][k] * ang[k][i] for k in range(3)) for i in range(3)),
                         (0.0,) * 3)
        r_p = s.add(fr.r_p, s.sub(fr.x_err, fr.r_c))  # parent COM -> child COM
        f_b = s.add(f_b, _joint_sum(st, nb1, force, s.neg(force)))
        t_b = s.add(t_b, _joint_sum(st, nb1, torque, s.neg(s.add(torque, s.cross(r_p, force)))))
    return f_b, t_b


def _integrate(pose, twist, force, torque, bd, dt, angular_damping):
    """``maximal_integrate.integrate_bodies(exact_rotation=True)`` (without the kinematic mask)."""
    (x0, r0), v0, w0 = pose, twist[:3], twist[3:]
    com, inv_m, inv_i, inertia = bd["com"], bd["inv_m"], bd["inv_i"], bd["inertia"]
    x_com = s.add(x0, s.qrot(r0, com))
    grav = gravity_mass(jnp.where(inv_m > 0.0, 1.0, 0.0), bd["gravcomp"])
    v1 = tuple(v0[i] + (force[i] * inv_m + bd["gravity"][i] * grav) * dt for i in range(3))
    x1 = s.add(x_com, s.scale(v1, dt))
    wb = s.qrot(s.qconj(r0), w0)
    tb = s.sub(s.qrot(s.qconj(r0), torque), s.cross(wb, s.matvec(inertia, wb)))
    w1 = s.qrot(r0, s.add(wb, s.scale(s.matvec(inv_i, tb), dt)))
    r1 = s.qmul(s.qexp(s.scale(w1, dt)), r0)
    w1 = s.scale(w1, 1.0 - angular_damping * dt)
    return (s.sub(x1, s.qrot(r1, com)), r1), (*v1, *w1)


def _velocities(pose_old, pose_new, com, dt):
    """Velocities from the pose change, ``ω = log(Δq)/dt`` (as :mod:`jaxart.solvers.xpbd.solver`)."""
    x_new = s.add(pose_new[0], s.qrot(pose_new[1], com))
    x_old = s.add(pose_old[0], s.qrot(pose_old[1], com))
    w = s.scale(s.rotation_vector(s.qmul(pose_new[1], s.qconj(pose_old[1]))), 1.0 / dt)
    return (*(x / dt for x in s.sub(x_new, x_old)), *w)


def _unpack_joints(joints):
    jd = {}
    for k, v in joints.items():
        if k in ("lin_ax", "ang_ax"):
            jd[k] = [s.comps(v[:, r]) for r in range(3)]
        elif k in ("X_p", "X_c"):
            c = s.comps(v)
            jd[k] = (c[:3], c[3:])
        else:
            jd[k] = s.comps(v) if v.ndim == 3 else v
    return jd


def _kernel(st, opt: LaneOptions, kin, ik_static_, state, bodies, joints, passive, drives, contacts, ik_in, dt):
    """Lane kernel of the whole XPBD step (prediction, projection rounds, velocities).

    Returns ``(body_q (nb, 7, L), body_qd (nb, 6, L), qd_pred (nb, 6, L) or None, λ_normal (C, L))``
    before the kinematic mask of the velocities (restitution comes first).
    """
    bd = {k: (s.comps(v) if v.ndim == 3 else v) for k, v in bodies.items() if k not in ("inv_i", "inertia")}
    for k in ("inv_i", "inertia"):
        bd[k] = tuple(s.comps(bodies[k][:, r]) for r in range(3))
    com, inv_m, inv_i = bd["com"], bd["inv_m"], bd["inv_i"]
    nb1 = inv_m.shape[0]
    jd = _unpack_joints(joints)
    pv = None if passive is None else {k: s.comps(v) for k, v in passive.items()}
    dr = None if drives is None else {k: s.comps(v) for k, v in drives.items()}
    cd = None if contacts is None else contact_data(contacts, nb1)
    # every input may carry the batch (e.g. joint_f in the passive terms while the state is shared)
    lanes_ = max(x.shape[-1] for x in jax.tree_util.tree_leaves((state, bodies, joints, passive, drives, contacts,
                                                                  ik_in, dt)))
    f = state["body_q"].dtype
    full = lambda x: jnp.broadcast_to(x, (nb1, lanes_))  # noqa: E731
    q0 = s.comps(state["body_q"])
    pose0 = (tuple(full(x) for x in q0[:3]), tuple(full(x) for x in q0[3:]))
    twist0 = tuple(full(x) for x in s.comps(state["body_qd"]))
    wrench = s.comps(state["body_f"])
    force, torque = wrench[:3], wrench[3:]
    if pv is not None:
        f_b, t_b = s.stage(lambda *a: _passive_wrenches(st, *a), jd, pv, pose0, com)
        force, torque = s.add(force, f_b), s.add(torque, t_b)
    pose_pred, qd_pred = _integrate(pose0, twist0, force, torque, bd, dt, opt.angular_damping)
    kin_m = jnp.asarray(kin)[:, None]
    pose_pred = s.where(kin_m, pose0, pose_pred)
    qd_pred = s.where(kin_m, twist0, qd_pred)
    pose_pred = s.stage(lambda x: x, pose_pred)
    zj = jnp.zeros((len(st.jtype), lanes_), f)
    zc = None if cd is None else jnp.zeros((contacts["ia"].shape[0], lanes_), f)

    def round_(_, carry):
        pose, lam_d, lam_l, lam_a, lam_c = carry
        if opt.drives:
            b = s.stage(_bodies, pose, com, inv_m, inv_i)
            imp, lam_d = _solve_drives(st, b, jd, dr, lam_d, dt)
            pose = s.stage(_apply, b, com, *imp)
        if opt.joints:
            b = s.stage(_bodies, pose, com, inv_m, inv_i)
            imp, lam_l = _solve_linear(st, b, jd, lam_l, dt, opt)
            pose = s.stage(_apply, b, com, *imp)
            b = s.stage(_bodies, pose, com, inv_m, inv_i)
            imp, lam_a = _solve_angular(st, b, jd, lam_a, dt, opt)
            pose = s.stage(_apply, b, com, *imp)
        if opt.contacts:
            b = s.stage(_bodies, pose, com, inv_m, inv_i)
            imp, lam_c = solve_contacts(b, cd, lam_c, opt.contact_relax)
            pose = s.stage(_apply, b, com, *imp)
        return pose, lam_d, lam_l, lam_a, lam_c

    carry = (pose_pred, (zj,) * 6, zj, (zj,) * 4, None if zc is None else (zc,) * 4)
    pose, *_, lam_c = jax.lax.fori_loop(0, opt.iterations, round_, carry)
    qd = _velocities(pose0, pose, com, dt)
    jq = jqd = None
    if opt.ik:
        pose, qd = s.stage(lambda *a: s.where(kin_m, *a), (pose0, twist0), (pose, qd))
        ik, par, chi = ik_static_
        c = unpack_inputs(ik_in)
        jq, jqd = ik_lanes(ik, par, chi, c, pose, qd, com, state["joint_q"], state["joint_qd"])
    body_q = jnp.stack([*pose[0], *pose[1]], axis=1)[:-1]
    body_qd = jnp.stack(qd, axis=1)[:-1]
    pred = jnp.stack(qd_pred, axis=1)[:-1] if opt.restitution else None
    lam_n = jnp.zeros((1, lanes_), f) if lam_c is None else lam_c[0]
    return body_q, body_qd, pred, lam_n, jq, jqd


def make_step(st, opt: LaneOptions, kin: np.ndarray, ik=None):
    """The XPBD step body as a per-world function (batch-minor under ``vmap``).

    ``fn(state, bodies, joints, passive, drives, contacts, dt)`` with ``state`` = ``{body_q, body_qd,
    body_f}`` (world row appended), ``bodies`` = ``com, inv_m, inv_i, inertia, gravcomp`` (world row last,
    zero) and ``gravity``, ``joints`` the joint constants, ``passive`` the per-DOF passive terms (or
    ``None``: included in ``body_f``), ``drives`` ``target``/``stiffness`` ``(J, 6)`` or ``None`` and
    ``contacts`` the step-start contact frame or ``None``. Returns ``(body_q, body_qd, qd_pred or None,
    λ_n (C,))``; kinematic bodies keep their poses (their velocities are not yet masked).
    """
    kin_ext = np.append(np.asarray(kin, bool), True)
    return lanes(lambda *args: _kernel(st, opt, kin_ext, ik, *args))
