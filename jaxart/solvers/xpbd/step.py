"""One SolverXPBD step as named stages over a per-step workspace.

:func:`xpbd_step` builds a :class:`StepWorkspace` (static analysis, inverse masses, drive targets, contact frames,
equality and tendon rows), then runs the stages: predict and project (the lane kernel
:func:`~jaxart.solvers.xpbd.lanes.make_step`, or the per-world reference :func:`_step_per_world`, whose rounds are
:func:`_round_per_world`: drives, joint linear and angular rows, equality rows, tendon rows, contacts), velocities
from the pose change, the restitution pass and the joint coordinates. The algorithm and its feature table are
documented in :mod:`jaxart.solvers.xpbd.solver`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.ik import eval_ik
from jaxart.kinematics.ik_lanes import ik_inputs, ik_static
from jaxart.math import quat_conjugate, quat_mul, quat_rotate
from jaxart.math.checkpoint import checkpointed_jit
from jaxart.sim.enums import JointType
from jaxart.sim.model import Control, Model, State
from jaxart.solvers.maximal.drive_inertia import acceleration_gains
from jaxart.solvers.maximal.free_joints import free_drive_joints
from jaxart.solvers.maximal.integrate import integrate_bodies, inverse_mass_properties, kinematic_mask
from jaxart.solvers.maximal.joints import (
    JointStatic,
    constrained_joints,
    gather_dof,
    gather_joint_axes,
    has_drives,
    joint_static,
    rotation_vector,
)
from jaxart.solvers.maximal.penalty_joints import joint_wrenches
from jaxart.solvers.xpbd.common import apply_impulses, apply_velocity_impulses, make_bodies
from jaxart.solvers.xpbd.contacts import (
    ContactFrame,
    ContactLambda,
    contact_frame,
    restitution_impulses,
    solve_contacts,
    zero_lambda,
)
from jaxart.solvers.xpbd.equality import equality_data, equality_plan, solve_equality
from jaxart.solvers.xpbd.joints import DriveTargets, drive_targets, solve_angular, solve_drives, solve_linear
from jaxart.solvers.xpbd.lanes import LaneOptions, make_step
from jaxart.solvers.xpbd.tendons import TendonRows, initial_lambda, solve_tendons, tendon_rows


class XPBDOptions(NamedTuple):
    """Static options of one XPBD step (hashable: a change recompiles); :class:`~jaxart.solvers.xpbd.solver.SolverXPBD`
    documents each.

    Attributes:
        iterations: Constraint-projection rounds per step.
        joint_linear_relaxation: Scale of the joint linear corrections.
        joint_angular_relaxation: Scale of the joint angular corrections.
        joint_linear_compliance: Compliance of the joint linear rows [m/N].
        joint_angular_compliance: Compliance of the joint angular rows [rad/(N·m)].
        rigid_contact_relaxation: Scale of the contact normal corrections.
        angular_damping: Angular velocity damping rate in the prediction [1/s].
        enable_restitution: Apply the restitution velocity pass.
        free_passive_rows: FREE/DISTANCE joints whose passive stiffness/damping get drive rows
            (:func:`~jaxart.solvers.maximal.free_joints.free_passive_rows`).
        free_position_limits: Solve the joint rows, holding FREE position limits, even without other joints.
    """

    iterations: int = 2
    joint_linear_relaxation: float = 0.7
    joint_angular_relaxation: float = 0.4
    joint_linear_compliance: float = 0.0
    joint_angular_compliance: float = 0.0
    rigid_contact_relaxation: float = 0.8
    angular_damping: float = 0.0
    enable_restitution: bool = False
    free_passive_rows: tuple[int, ...] = ()
    free_position_limits: bool = False


_DEFAULT_OPTIONS = XPBDOptions()

_IDENT = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])  # identity pose row (the world)

#: Evaluate steps with the batch-minor lane kernel (:mod:`maximal_xpbd_lanes`). ``False`` selects the
#: per-world reference implementation of the same maths on stacked arrays (read at trace time).
LANE_KERNEL = True


def _has_ball_drives(st) -> bool:
    """Static: an enabled BALL joint has a DOF with a drive mode."""
    ball = (st.jtype == JointType.BALL) & st.enabled
    return bool(np.any(ball[:, None] & (st.use_ke[st.ang_dof] | st.use_kd[st.ang_dof])))


def _has_passive_rows(st) -> bool:
    """Static: an enabled non-FREE/DISTANCE joint has a scalar DOF, whose passive stiffness/damping (values
    only known at run time) are implicit drive rows."""
    on = st.enabled & ~np.isin(st.jtype, [JointType.FREE, JointType.DISTANCE])
    coord = np.concatenate([st.lin_coord, st.ang_coord], 1)
    return bool(np.any(on[:, None] & (coord < st.coord_count)) or np.any(on & (st.jtype == JointType.BALL)))


def _passive_forces(model, state, control):
    """``joint_f`` and ``joint_act`` as explicit body wrenches (passive stiffness and damping are implicit
    drive rows: :func:`~jaxart.solvers.xpbd.joints.drive_targets`)."""
    zero = jnp.zeros_like(model.joint_target_ke)
    passive = model.replace(joint_target_ke=zero, joint_target_kd=zero, joint_limit_ke=zero, joint_limit_kd=zero,
                            joint_stiffness=zero, joint_damping=zero)
    return joint_wrenches(passive, state, control, attach_ke=0.0, attach_kd=0.0, free_drives=False)


class StepWorkspace(NamedTuple):
    """Per-step quantities shared by the stages of :func:`xpbd_step` (built once per step, read-only).

    Attributes:
        st: Static joint data (:class:`~jaxart.solvers.maximal.joints.JointStatic`, numpy).
        opt: Static configuration of the projection (:class:`~jaxart.solvers.xpbd.lanes.LaneOptions`).
        inv_m: Inverse body masses [1/kg], shape ``(body_count,)`` (kinematic bodies 0).
        inv_i: Inverse body inertias [1/(kg·m²)] in the body frame, shape ``(body_count, 3, 3)``.
        drives: Drive rows' targets and stiffnesses, or ``None`` without drive rows.
        cf: Step-start contact frames (:class:`~jaxart.solvers.xpbd.contacts.ContactFrame`), or ``None``.
        q0_ext: Step-start body poses with the world's identity row appended, shape ``(body_count + 1, 7)``
            (position [m], quaternion xyzw).
        dt: Time step [s], scalar.
        eq: ``(plan, data)`` of the equality and mimic rows (:mod:`jaxart.solvers.xpbd.equality`), or ``None``.
        ten: Tendon rows (:class:`~jaxart.solvers.xpbd.tendons.TendonRows`), or ``None``.
    """

    st: JointStatic
    opt: LaneOptions
    inv_m: jnp.ndarray
    inv_i: jnp.ndarray
    drives: DriveTargets | None
    cf: ContactFrame | None
    q0_ext: jnp.ndarray
    dt: jnp.ndarray
    eq: tuple | None
    ten: TendonRows | None


class Projected(NamedTuple):
    """The bodies after the projection rounds, before restitution and the kinematic mask.

    Attributes:
        q: Body poses, shape ``(body_count, 7)`` (position [m], quaternion xyzw).
        qd: Body velocities from the pose change, shape ``(body_count, 6)`` (COM linear [m/s], angular
            [rad/s], world frame).
        qd_pred: Predicted (unconstrained) velocities, shape ``(body_count, 6)``, same frames.
        lam_c: The contacts' accumulated multipliers (:class:`~jaxart.solvers.xpbd.contacts.ContactLambda`),
            or ``None`` without contacts.
    """

    q: jnp.ndarray
    qd: jnp.ndarray
    qd_pred: jnp.ndarray
    lam_c: ContactLambda | None


@functools.partial(checkpointed_jit, static_argnames=("options",))
def xpbd_step(model: Model, state: State, control: Control | None, contacts, dt, *,
              options: XPBDOptions = _DEFAULT_OPTIONS) -> State:
    """One pure XPBD step: predict and project, then restitution and joint coordinates.

    See :class:`~jaxart.solvers.xpbd.solver.SolverXPBD` for the algorithm.

    Args:
        model: The model.
        state: Step-start state (``contacts`` computed at its ``body_q``).
        control: Control, or ``None`` for the model's defaults.
        contacts: ``None`` or a :class:`~jaxart.collision.Contacts`.
        dt: Time step [s].
        options: Static step options (keyword only).

    Returns:
        The new state.
    """
    with jax.named_scope("jaxart.xpbd_step"):
        control = model.control() if control is None else control
        ws = _workspace(model, state, control, contacts, dt, options)
        if LANE_KERNEL and ws.eq is None and ws.ten is None:
            out = _step_lanes(model, ws, state, control)
            if ws.opt.ik:
                return out
        else:
            out = _step_per_world(model, ws, state, control)
        return _joint_coordinates(model, state, _restitution(model, ws, out))


def _workspace(model, state, control, contacts, dt, options: XPBDOptions) -> StepWorkspace:
    """The stages' per-step inputs: static analysis, inverse masses, drive targets, contact frames, equality
    and tendon rows."""
    f = state.body_q.dtype
    dt = jnp.asarray(dt, f)
    st = joint_static(model.topology)
    if options.free_passive_rows:  # static
        st = st._replace(free_rows=np.isin(np.arange(model.joint_count), options.free_passive_rows))
    inv_m, inv_i = inverse_mass_properties(model, f)
    opt = _lane_options(model, st, options, contacts)
    drives = drive_targets(acceleration_gains(model, state.body_q), control, st, state.body_q, dt) if opt.drives \
        else None
    q0_ext = jnp.concatenate([state.body_q, jnp.asarray(_IDENT, f)], 0)
    cf = contact_frame(model, state.body_q, contacts) if opt.contacts else None
    eq_plan = equality_plan(model)
    eq = None if eq_plan.empty else (eq_plan, equality_data(model, eq_plan, state.joint_q, f))
    ten = tendon_rows(model, state, control, dt) if model.tendon.tendon_count else None
    return StepWorkspace(st, opt, inv_m, inv_i, drives, cf, q0_ext, dt, eq, ten)


def _lane_options(model, st, options: XPBDOptions, contacts) -> LaneOptions:
    """Static configuration of the projection: which phases run and the relaxations."""
    has_joints = bool(np.any(constrained_joints(st))) or options.free_position_limits
    drive_on = (has_joints and (has_drives(st) or _has_ball_drives(st) or _has_passive_rows(st))) \
        or bool(free_drive_joints(st).any())
    has_contacts = contacts is not None and contacts.capacity > 0
    restitution = options.enable_restitution and has_contacts
    return LaneOptions(options.iterations, options.joint_linear_relaxation, options.joint_angular_relaxation,
                       options.joint_linear_compliance, options.joint_angular_compliance,
                       options.rigid_contact_relaxation, drive_on, has_joints, has_contacts, options.angular_damping,
                       bool(model.joint_count) and not np.any(st.jtype == JointType.BALL), restitution,
                       not restitution)


def _restitution(model, ws: StepWorkspace, out: Projected) -> Projected:
    """The restitution velocity pass (when enabled and there are contacts)."""
    if not ws.opt.restitution:
        return out
    b = make_bodies(model, out.q, ws.inv_m, ws.inv_i)
    imp = restitution_impulses(b, out.qd, out.qd_pred, ws.cf, out.lam_c, model.gravity.astype(ws.q0_ext.dtype), ws.dt)
    return out._replace(qd=apply_velocity_impulses(b, out.qd, *imp))


def _joint_coordinates(model, state, out: Projected) -> State:
    """The new state: kinematic bodies kept, ``joint_q``/``joint_qd`` from :func:`jaxart.eval_ik`."""
    kin = jnp.asarray(kinematic_mask(model))[:, None]
    new = state.replace(body_q=jnp.where(kin, state.body_q, out.q), body_qd=jnp.where(kin, state.body_qd, out.qd))
    joint_q, joint_qd = eval_ik(model, new)
    return new.replace(joint_q=joint_q, joint_qd=joint_qd)


def _step_lanes(model, ws: StepWorkspace, state, control):
    """The step through the lane kernel: the new :class:`State` when ``ws.opt.ik``, else :class:`Projected`."""
    opt = ws.opt
    force = state.body_f.astype(ws.q0_ext.dtype)
    if model.joint_count and not opt.passive:  # BALL joints: passive wrenches from the per-world code
        force = force + _passive_forces(model, state, control)
    args = _lane_inputs(model, ws, state, control, force)
    ik = None
    if opt.ik:
        tj = model.schedule.tree_joint.array
        ik = (ik_static(model), ws.st.parent[tj], ws.st.child[tj])
    q, qd, qd_pred, lam_n, jq, jqd = make_step(ws.st, opt, kinematic_mask(model), ik)(
        *args, ik_inputs(model, ws.q0_ext.dtype) if opt.ik else None, ws.dt)
    if opt.ik:
        return state.replace(body_q=q, body_qd=qd, joint_q=jq, joint_qd=jqd)
    return Projected(q, qd, qd_pred, ContactLambda(lam_n, None, None, None) if opt.contacts else None)


def _step_per_world(model, ws: StepWorkspace, state, control) -> Projected:
    """Reference implementation of :func:`_step_lanes` on stacked per-world arrays (equality and tendon rows
    too): predict, project, velocities from the pose change."""
    force = state.body_f.astype(ws.q0_ext.dtype)
    if model.joint_count:
        force = force + _passive_forces(model, state, control)
    if ws.ten is not None:
        force = force + ws.ten.force
    q_pred, qd_pred = integrate_bodies(model, state.body_q, state.body_qd, force, ws.dt,
                                       angular_damping=ws.opt.angular_damping, exact_rotation=True)
    q, lam_c = _rounds_per_world(model, ws, q_pred)
    return Projected(q, _velocities(model, state.body_q, q, ws.dt), qd_pred, lam_c)


def _velocities(model, q_old, q_new, dt):
    """COM velocity and angular velocity from the pose change over ``dt``: ``ω = log(q_new q_old⁻¹)/dt``.

    The exact logarithm (shortest arc) inverts the prediction's exponential map, so a freely spinning body
    keeps ``|ω|`` (Newton's ``2 vec(Δq)/dt`` loses ``1 − sinc``-like fractions per step at large ``|ω| dt``).
    """
    com = model.body_com.astype(q_new.dtype)
    x_new = q_new[:, :3] + quat_rotate(q_new[:, 3:], com)
    x_old = q_old[:, :3] + quat_rotate(q_old[:, 3:], com)
    w = rotation_vector(quat_mul(q_new[:, 3:], quat_conjugate(q_old[:, 3:]))) / dt
    return jnp.concatenate([(x_new - x_old) / dt, w], -1)


class _Multipliers(NamedTuple):
    """The multipliers carried across the rounds of one step (drive, joint linear/angular, contact, tendon)."""

    drive: jnp.ndarray
    linear: jnp.ndarray
    angular: jnp.ndarray
    contact: ContactLambda | None
    tendon: jnp.ndarray | None


def _rounds_per_world(model, ws: StepWorkspace, q_pred):
    """Reference per-world projection rounds (stacked arrays): ``(q, λ_contacts)``."""
    f = q_pred.dtype
    nj = model.joint_count
    lam = _Multipliers(jnp.zeros((nj, 6), f), jnp.zeros((nj,), f), jnp.zeros((nj, 4), f),
                       zero_lambda(ws.cf) if ws.opt.contacts else None,
                       None if ws.ten is None else initial_lambda(ws.ten))
    q, lam = jax.lax.fori_loop(0, ws.opt.iterations, lambda _, c: _round_per_world(model, ws, *c), (q_pred, lam))
    return q, lam.contact


def _round_per_world(model, ws: StepWorkspace, q, lam: _Multipliers):
    """One round: drive rows, joint linear then angular rows, equality rows, tendon rows, contacts."""
    opt, inv_m, inv_i, dt = ws.opt, ws.inv_m, ws.inv_i, ws.dt
    if opt.drives:
        b = make_bodies(model, q, inv_m, inv_i)
        imp, lam_d = solve_drives(model, ws.st, b, ws.drives, lam.drive, dt)
        q, lam = apply_impulses(model, b, *imp), lam._replace(drive=lam_d)
    if opt.joints:
        b = make_bodies(model, q, inv_m, inv_i)
        imp, lam_l = solve_linear(model, ws.st, b, lam.linear, dt, compliance=opt.lin_compliance,
                                  relaxation=opt.lin_relax)
        q = apply_impulses(model, b, *imp)
        b = make_bodies(model, q, inv_m, inv_i)
        imp, lam_a = solve_angular(model, ws.st, b, lam.angular, dt, compliance=opt.ang_compliance,
                                   relaxation=opt.ang_relax)
        q, lam = apply_impulses(model, b, *imp), lam._replace(linear=lam_l, angular=lam_a)
    if ws.eq is not None:
        q = solve_equality(model, *ws.eq, q, inv_m, inv_i)
    if ws.ten is not None:
        q, lam_t = solve_tendons(model, ws.ten, q, lam.tendon, inv_m, inv_i, dt)
        lam = lam._replace(tendon=lam_t)
    if opt.contacts:
        b = make_bodies(model, q, inv_m, inv_i)
        imp, lam_c = solve_contacts(b, ws.q0_ext, ws.cf, lam.contact, relaxation=opt.contact_relax)
        q, lam = apply_impulses(model, b, *imp), lam._replace(contact=lam_c)
    return q, lam


def _lane_inputs(model, ws: StepWorkspace, state, control, force):
    """Arguments of :func:`make_step` (world row appended to the body arrays)."""
    st, opt, inv_m, inv_i, drives, cf, q0_ext = ws.st, ws.opt, ws.inv_m, ws.inv_i, ws.drives, ws.cf, ws.q0_ext
    f = state.body_q.dtype
    z = lambda k: jnp.zeros((1, k), f)  # noqa: E731
    st_in = {"body_q": q0_ext, "body_qd": jnp.concatenate([state.body_qd.astype(f), z(6)], 0),
             "body_f": jnp.concatenate([force, z(6)], 0), "joint_q": state.joint_q, "joint_qd": state.joint_qd}
    bodies = {"com": jnp.concatenate([model.body_com.astype(f), z(3)], 0),
              "inv_m": jnp.concatenate([inv_m, jnp.zeros((1,), f)]),
              "inv_i": jnp.concatenate([inv_i, jnp.zeros((1, 3, 3), f)], 0),
              "inertia": jnp.concatenate([model.body_inertia.astype(f), jnp.zeros((1, 3, 3), f)], 0),
              "gravity": model.gravity.astype(f),
              "gravcomp": jnp.concatenate([model.body_gravcomp.astype(f), jnp.zeros((1,), f)])}
    lin_ax, ang_ax = gather_joint_axes(model, st)
    lo, hi = model.joint_limit_lower.astype(f), model.joint_limit_upper.astype(f)
    joints = {"X_p": model.joint_X_p.astype(f), "X_c": model.joint_X_c.astype(f), "lin_ax": lin_ax.astype(f),
              "ang_ax": ang_ax.astype(f), "lin_lo": gather_dof(lo, st.lin_dof), "lin_hi": gather_dof(hi, st.lin_dof),
              "ang_lo": gather_dof(lo, st.ang_dof), "ang_hi": gather_dof(hi, st.ang_dof)}
    passive = None
    if opt.passive:
        passive = {}
        for side, dof in (("lin", st.lin_dof), ("ang", st.ang_dof)):
            for key, arr in (("act", control.joint_act), ("f", control.joint_f)):
                passive[f"{side}_{key}"] = gather_dof(jnp.asarray(arr, f), dof)
        passive["free_f"] = jnp.concatenate([passive["lin_f"], passive["ang_f"]], 1)
    drv = None if drives is None else {"target": drives.target, "stiffness": drives.stiffness}
    if drives is not None and drives.q0_rel is not None:
        drv["q0"] = drives.q0_rel
    con = None
    if cf is not None:
        con = {"ia": cf.ia, "ib": cf.ib, "local_a": cf.local_a, "local_b": cf.local_b, "normal": cf.normal,
               "active": cf.active, "mu": cf.mu, "mu_torsional": cf.mu_torsional, "mu_rolling": cf.mu_rolling,
               "q0_a": q0_ext[cf.ia, 3:], "q0_b": q0_ext[cf.ib, 3:], "core_a": cf.core_a, "core_b": cf.core_b,
               "radius_a": cf.radius_a, "radius_b": cf.radius_b}
    return st_in, bodies, joints, passive, drv, con
