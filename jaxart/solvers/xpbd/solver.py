"""Extended position-based dynamics in maximal coordinates (Newton's ``SolverXPBD``, functional).

One step: (1) explicit prediction with Newton's integrator under gravity, ``body_f`` and
``Control.joint_f``/``joint_act`` (the rotation by the exact exponential map); (2) ``iterations`` rounds
(``lax.fori_loop``, fixed count) of Jacobi constraint projection — drives (with the passive joint
springs/damping folded in as implicit rows), joint linear rows,
joint angular rows, contacts — each phase summing its positional impulses per body with
``segment_sum`` and applying them once; Lagrange multipliers ``λ`` are carried across the rounds
of a step with compliance ``α`` (XPBD: ``Δλ = (−C − α̃λ)/(w + α̃)``, ``α̃ = α/dt²``);
(3) velocities from the pose change (``ω = log(Δq)/dt``, so a freely spinning body keeps its spin at
any ``|ω| dt``; Newton's ``2 vec(Δq)/dt`` loses 3 % per step at ``|ω| dt = 0.5``); (4) optional
restitution as a velocity pass; (5) ``joint_q``/``joint_qd`` from :func:`jaxart.eval_ik`.

Feature table (``✓`` honoured, ``✗`` raises ``NotImplementedError`` at construction):

==========================================  =====================================================
PRISMATIC/REVOLUTE/FIXED/D6                 ✓ hard positional + angular constraints
BALL                                        ✓ anchor constraint; angular limits (hard) and drives per
                                              component of the rotation vector ``log(q_p⁻¹ q_c)``
                                              (jaxart extension: Newton's XPBD ignores both)
FREE                                        ✓ unconstrained; ``joint_f`` = world wrench at the COM; drives and
                                              ``joint_act`` on SolverFeatherstone's DOFs (below)
DISTANCE                                    ✓ anchor distance held in ``[min, max]`` (hard); drives and
                                              ``joint_act`` as FREE
loop-closing / orphan joints                ✓ identical to tree joints
joint limits                                ✓ hard; 1-axis angles by swing–twist decomposition, so
                                              limits hold for oblique axes
drives ``target_ke/kd`` per mode            ✓ PRISMATIC/REVOLUTE/D6/BALL: implicit PD as a compliant
                                              constraint (stable at any gain), target clipped into the
                                              limits; FREE/DISTANCE (jaxart extension: Newton ignores them):
                                              SolverFeatherstone's DOFs and implicit law (child-anchor
                                              position / child-COM velocity, ``log(q* ⊗ q⁻¹)`` / ω in the
                                              parent-anchor frame) as rows at the child COM and on the
                                              rotation since the step start
                                              (:mod:`jaxart.solvers.maximal.free_joints`)
``joint_drive_type`` ACCELERATION           ✓ gains [1/s², 1/s] times the drive row's effective inertia
                                              ``1/w`` at the step-start poses (compliance ``w/k``; the
                                              joint's two bodies with its locked rows held:
                                              :mod:`jaxart.solvers.maximal.drive_inertia`)
``joint_f``, ``joint_act``                  ✓ explicit forces in the prediction (FREE/DISTANCE ``joint_act``:
                                              force at the child COM and torque along the parent-anchor axes)
``stiffness``, ``damping`` (passive)        ✓ implicit: added to the drive row of each scalar DOF
                                              (stiffness ``k + d/dt``), stable at any ``d·dt/I``
contacts                                    ✓ normal, static/dynamic friction, torsional, rolling;
                                              restitution with ``enable_restitution=True``
kinematic bodies                            ✓ infinite mass, passed through unchanged
stateful actuators, mocap, fluid            ✓ by ``SolverBase.step`` (:func:`~jaxart.solvers.base.step_with_inputs`)
joint compliance                            ✓ ``joint_linear/angular_compliance`` [m/N, rad/(N·m)]
equality CONNECT/WELD/JOINT, mimic          ✓ hard positional rows after the joint rows each round
                                              (:mod:`jaxart.solvers.xpbd.equality`); the traced
                                              ``enabled`` flags switch them at run time (no recompile)
fixed/spatial tendons, tendon actuators     ✓ spring, damping, armature and actuator drive as one compliant
                                              row per tendon (implicit, stable at any stiffness), Coulomb
                                              friction as a clamped row, length limits (with their margin)
                                              as hard rows, ``tendon_f`` explicit, a saturated actuator
                                              (``tendon_effort_limit``, decided per step) a clamped explicit
                                              force without its gains
                                              (:mod:`jaxart.solvers.xpbd.tendons`); ``limit_ke/kd`` unused
armature, joint friction, effort and        not modelled in maximal coordinates (as Newton's XPBD;
velocity limits                               documented, not rejected, so MJCF models load)
FREE/DISTANCE passive stiffness/damping     ✓ in the implicit drive rows (Featherstone's implicit law; rows
                                              made for a concrete model's nonzero terms, a traced model's
                                              ignored): :mod:`jaxart.solvers.maximal.free_joints`
FREE per-DOF position limits                ✓ hard (the linear row; drive target clipped into them)
FREE angular per-DOF limits, DISTANCE       ✗ (``NotImplementedError`` naming the joints, concrete models;
per-DOF limits past the first DOF             :func:`~jaxart.solvers.maximal.free_joints.reject_free_joint_terms`)
==========================================  =====================================================

Evaluation: the whole step (prediction, rounds, velocities, ``eval_ik``) runs as one batch-minor
lane kernel (:mod:`maximal_xpbd_lanes`; under ``vmap`` every per-world scalar is a vector over the
batch, and stage outputs are materialised behind loop boundaries). BALL joints take their passive
wrenches and restitution its velocity pass and IK from the per-world code; models with equality or
mimic constraints (enabled or not) or tendons run the whole step in the per-world code. ``LANE_KERNEL = False``
selects the per-world reference implementation of the same maths (for comparisons).

Convergence: Jacobi projection under-corrects where several rows act on one body (e.g. a cube's
four corner contacts remove 25 % of the residual slip per round; a chain's joints share bodies), as
in Newton. Errors shrink geometrically with ``iterations`` and with smaller ``dt``: the four-bar
test holds its loop closed to < 1 mm over 2 s with 4 rounds at dt = 1 ms, and static friction on
an incline needs ~16 rounds at dt = 1 ms to stop creeping (< 1 mm over 0.6 s).

Differentiability: every operation is a ``jnp`` expression inside a fixed-count loop, so
``jax.grad`` flows through the whole step. Inequalities (contact activation, limits, friction
cone) are hard switches: gradients are exact within one contact/limit configuration and do not
see configuration changes (joint compliances soften the joint rows; contact rows are hard).
The bounce-height gradient test (restitution on) matches central finite differences to 1e-4.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.ik import eval_ik
from jaxart.kinematics.ik_lanes import ik_inputs, ik_static
from jaxart.math import quat_conjugate, quat_mul, quat_rotate
from jaxart.math.checkpoint import checkpointed_jit
from jaxart.sim import checks
from jaxart.sim.enums import JointType
from jaxart.sim.model import Control, Model, State
from jaxart.solvers.base import SolverBase
from jaxart.solvers.maximal.drive_inertia import acceleration_gains
from jaxart.solvers.maximal.free_joints import (
    free_drive_joints,
    free_passive_rows,
    free_position_limits,
    reject_free_joint_terms,
)
from jaxart.solvers.maximal.integrate import integrate_bodies, inverse_mass_properties, kinematic_mask
from jaxart.solvers.maximal.joints import (
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
    ContactLambda,
    contact_frame,
    restitution_impulses,
    solve_contacts,
    zero_lambda,
)
from jaxart.solvers.xpbd.equality import equality_data, equality_plan, solve_equality
from jaxart.solvers.xpbd.joints import drive_targets, solve_angular, solve_drives, solve_linear
from jaxart.solvers.xpbd.lanes import LaneOptions, make_step
from jaxart.solvers.xpbd.tendons import initial_lambda, solve_tendons, tendon_rows

_OPTIONS = ("iterations", "joint_linear_relaxation", "joint_angular_relaxation", "joint_linear_compliance",
            "joint_angular_compliance", "rigid_contact_relaxation", "angular_damping", "enable_restitution",
            "free_passive_rows", "free_position_limits")

_IDENT = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])  # identity pose row (the world)

#: Evaluate steps with the batch-minor lane kernel (:mod:`maximal_xpbd_lanes`). ``False`` selects the
#: per-world reference implementation of the same maths on stacked arrays (read at trace time).
LANE_KERNEL = True


@jax.tree_util.register_pytree_node_class
class SolverXPBD(SolverBase):
    """XPBD solver (see the module docstring for the algorithm and the feature table).

    The solver is a pytree (the model is its only leaf); ``jit``/``vmap``/``grad`` work through
    ``step``.

    Args:
        model: The model.
        iterations: Constraint-projection rounds per step (fixed; ≥ 1).
        joint_linear_relaxation: Scale of the joint linear corrections (Jacobi under-relaxation).
        joint_angular_relaxation: Scale of the joint angular corrections.
        joint_linear_compliance: Compliance of the joint linear rows [m/N].
        joint_angular_compliance: Compliance of the joint angular rows [rad/(N·m)].
        rigid_contact_relaxation: Scale of the contact normal corrections.
        angular_damping: Angular velocity damping rate [1/s] in the prediction.
        enable_restitution: Apply the restitution velocity pass (``shape_material_restitution``).

    Raises:
        ValueError: Bad options.
        NotImplementedError: Angular per-DOF limits on FREE joints, per-DOF limits on DISTANCE joints' DOFs past
            the first.
    """

    _OPTIONS = _OPTIONS
    checkpointed_step = True

    def __init__(self, model: Model, *, iterations: int = 2, joint_linear_relaxation: float = 0.7,
                 joint_angular_relaxation: float = 0.4, joint_linear_compliance: float = 0.0,
                 joint_angular_compliance: float = 0.0, rigid_contact_relaxation: float = 0.8,
                 angular_damping: float = 0.0, enable_restitution: bool = False) -> None:
        if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
            raise ValueError(f"SolverXPBD: iterations must be an int >= 1, got {iterations!r}")
        for name, val in (("joint_linear_relaxation", joint_linear_relaxation),
                          ("joint_angular_relaxation", joint_angular_relaxation),
                          ("rigid_contact_relaxation", rigid_contact_relaxation)):
            if not 0.0 < float(val) <= 2.0:
                raise ValueError(f"SolverXPBD: {name} must be in (0, 2], got {val}")
        for name, val in (("joint_linear_compliance", joint_linear_compliance),
                          ("joint_angular_compliance", joint_angular_compliance), ("angular_damping", angular_damping)):
            if not 0.0 <= float(val) < float("inf"):
                raise ValueError(f"SolverXPBD: {name} must be finite and >= 0, got {val}")
        reject_free_joint_terms(model, "SolverXPBD", passive=True, free_limits=True, angular_limits=False)
        self.model = model
        self.free_passive_rows = free_passive_rows(model)
        self.free_position_limits = free_position_limits(model)
        self.iterations = int(iterations)
        self.joint_linear_relaxation = float(joint_linear_relaxation)
        self.joint_angular_relaxation = float(joint_angular_relaxation)
        self.joint_linear_compliance = float(joint_linear_compliance)
        self.joint_angular_compliance = float(joint_angular_compliance)
        self.rigid_contact_relaxation = float(rigid_contact_relaxation)
        self.angular_damping = float(angular_damping)
        self.enable_restitution = bool(enable_restitution)


    def _advance(self, state_in: State, control: Control | None, contacts, dt) -> State:
        """Advance one step and return the new state (``body_f`` is kept, not cleared).

        Args:
            state_in: Current state (``contacts`` must have been computed at ``state_in.body_q``).
            control: Control, or ``None`` for the model's defaults.
            contacts: ``None`` (no contact) or a :class:`~jaxart.collision.Contacts`.
            dt: Time step [s].
        """
        checks.check_step(self, state_in, control, contacts, dt)
        opts = {k: getattr(self, k) for k in _OPTIONS}
        return xpbd_step(self.model, state_in, control, contacts, dt, **opts)


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


@functools.partial(checkpointed_jit, static_argnames=_OPTIONS)
def xpbd_step(model: Model, state: State, control: Control | None, contacts, dt, *, iterations: int = 2,
              joint_linear_relaxation: float = 0.7, joint_angular_relaxation: float = 0.4,
              joint_linear_compliance: float = 0.0, joint_angular_compliance: float = 0.0,
              rigid_contact_relaxation: float = 0.8, angular_damping: float = 0.0,
              enable_restitution: bool = False, free_passive_rows: tuple[int, ...] = (),
              free_position_limits: bool = False) -> State:
    """One pure XPBD step (see :class:`SolverXPBD`; ``free_passive_rows``: the FREE/DISTANCE joints whose passive
    stiffness/damping get drive rows, :func:`~jaxart.solvers.maximal.free_joints.free_passive_rows`;
    ``free_position_limits``: solve the joint rows, holding FREE position limits, even without other joints)."""
    with jax.named_scope("jaxart.xpbd_step"):
        control = model.control() if control is None else control
        f = state.body_q.dtype
        dt = jnp.asarray(dt, f)
        st = joint_static(model.topology)
        if free_passive_rows:  # static
            st = st._replace(free_rows=np.isin(np.arange(model.joint_count), free_passive_rows))
        inv_m, inv_i = inverse_mass_properties(model, f)
        has_joints = bool(np.any(constrained_joints(st))) or free_position_limits
        drive_on = (has_joints and (has_drives(st) or _has_ball_drives(st) or _has_passive_rows(st))) \
            or bool(free_drive_joints(st).any())
        has_contacts = contacts is not None and contacts.capacity > 0
        restitution = enable_restitution and has_contacts
        drives = drive_targets(acceleration_gains(model, state.body_q), control, st, state.body_q, dt) if drive_on \
            else None
        q0_ext = jnp.concatenate([state.body_q, jnp.asarray(_IDENT, f)], 0)
        cf = contact_frame(model, state.body_q, contacts) if has_contacts else None
        opt = LaneOptions(iterations, joint_linear_relaxation, joint_angular_relaxation, joint_linear_compliance,
                          joint_angular_compliance, rigid_contact_relaxation, drive_on, has_joints, has_contacts,
                          angular_damping, bool(model.joint_count) and not np.any(st.jtype == JointType.BALL),
                          restitution, not restitution)
        eq_plan = equality_plan(model)
        eq = None if eq_plan.empty else (eq_plan, equality_data(model, eq_plan, state.joint_q, f))
        ten = tendon_rows(model, state, control, dt) if model.tendon.tendon_count else None
        if LANE_KERNEL and eq is None and ten is None:
            out = _step_lanes(model, st, opt, state, control, inv_m, inv_i, drives, cf, q0_ext, dt)
            if opt.ik:
                return out
            q, qd, qd_pred, lam_c = out
        else:
            q, qd, qd_pred, lam_c = _step_per_world(model, st, opt, state, control, inv_m, inv_i, drives, cf, q0_ext,
                                                    dt, eq, ten)
        if restitution:
            b = make_bodies(model, q, inv_m, inv_i)
            imp = restitution_impulses(b, qd, qd_pred, cf, lam_c, model.gravity.astype(f), dt)
            qd = apply_velocity_impulses(b, qd, *imp)
        kin = jnp.asarray(kinematic_mask(model))[:, None]
        new = state.replace(body_q=jnp.where(kin, state.body_q, q), body_qd=jnp.where(kin, state.body_qd, qd))
        joint_q, joint_qd = eval_ik(model, new)
        return new.replace(joint_q=joint_q, joint_qd=joint_qd)


def _step_lanes(model, st, opt: LaneOptions, state, control, inv_m, inv_i, drives, cf, q0_ext, dt):
    """The step through the lane kernel: the new :class:`State` when ``opt.ik``, else ``(q, qd, qd_pred, λ)``
    before restitution and the kinematic mask."""
    force = state.body_f.astype(q0_ext.dtype)
    if model.joint_count and not opt.passive:  # BALL joints: passive wrenches from the per-world code
        force = force + _passive_forces(model, state, control)
    args = _lane_inputs(model, st, opt, state, control, force, inv_m, inv_i, drives, cf, q0_ext)
    ik = None
    if opt.ik:
        tj = model.schedule.tree_joint.array
        ik = (ik_static(model), st.parent[tj], st.child[tj])
    q, qd, qd_pred, lam_n, jq, jqd = make_step(st, opt, kinematic_mask(model), ik)(
        *args, ik_inputs(model, q0_ext.dtype) if opt.ik else None, dt)
    if opt.ik:
        return state.replace(body_q=q, body_qd=qd, joint_q=jq, joint_qd=jqd)
    return q, qd, qd_pred, ContactLambda(lam_n, None, None, None) if opt.contacts else None


def _step_per_world(model, st, opt: LaneOptions, state, control, inv_m, inv_i, drives, cf, q0_ext, dt, eq=None,
                    ten=None):
    """Reference implementation of :func:`_step_lanes` on stacked per-world arrays: ``(q, qd, qd_pred, λ)``;
    ``eq``: ``(plan, data)`` of the equality rows (:mod:`jaxart.solvers.xpbd.equality`) or ``None``; ``ten``: the
    :class:`~jaxart.solvers.xpbd.tendons.TendonRows` or ``None``."""
    force = state.body_f.astype(q0_ext.dtype)
    if model.joint_count:
        force = force + _passive_forces(model, state, control)
    if ten is not None:
        force = force + ten.force
    q_pred, qd_pred = integrate_bodies(model, state.body_q, state.body_qd, force, dt,
                                       angular_damping=opt.angular_damping, exact_rotation=True)
    q, lam_c = _rounds_per_world(model, st, opt, q_pred, inv_m, inv_i, drives, cf, q0_ext, dt, eq, ten)
    return q, _velocities(model, state.body_q, q, dt), qd_pred, lam_c


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


def _rounds_per_world(model, st, opt: LaneOptions, q_pred, inv_m, inv_i, drives, cf, q0_ext, dt, eq=None, ten=None):
    """Reference per-world projection rounds (stacked arrays): ``(q, λ_contacts)``."""
    f = q_pred.dtype
    nj = model.joint_count

    def round_(_, carry):
        q, lam_d, lam_l, lam_a, lam_c, lam_t = carry
        if opt.drives:
            b = make_bodies(model, q, inv_m, inv_i)
            imp, lam_d = solve_drives(model, st, b, drives, lam_d, dt)
            q = apply_impulses(model, b, *imp)
        if opt.joints:
            b = make_bodies(model, q, inv_m, inv_i)
            imp, lam_l = solve_linear(model, st, b, lam_l, dt, compliance=opt.lin_compliance,
                                      relaxation=opt.lin_relax)
            q = apply_impulses(model, b, *imp)
            b = make_bodies(model, q, inv_m, inv_i)
            imp, lam_a = solve_angular(model, st, b, lam_a, dt, compliance=opt.ang_compliance,
                                       relaxation=opt.ang_relax)
            q = apply_impulses(model, b, *imp)
        if eq is not None:
            q = solve_equality(model, *eq, q, inv_m, inv_i)
        if ten is not None:
            q, lam_t = solve_tendons(model, ten, q, lam_t, inv_m, inv_i, dt)
        if opt.contacts:
            b = make_bodies(model, q, inv_m, inv_i)
            imp, lam_c = solve_contacts(b, q0_ext, cf, lam_c, relaxation=opt.contact_relax)
            q = apply_impulses(model, b, *imp)
        return q, lam_d, lam_l, lam_a, lam_c, lam_t

    carry = (q_pred, jnp.zeros((nj, 6), f), jnp.zeros((nj,), f), jnp.zeros((nj, 4), f),
             zero_lambda(cf) if opt.contacts else None, None if ten is None else initial_lambda(ten))
    q, *_, lam_c, _ = jax.lax.fori_loop(0, opt.iterations, round_, carry)
    return q, lam_c


def _lane_inputs(model, st, opt, state, control, force, inv_m, inv_i, drives, cf, q0_ext):
    """Arguments of :func:`make_step` (world row appended to the body arrays)."""
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
