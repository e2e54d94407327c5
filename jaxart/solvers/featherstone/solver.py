"""Reduced-coordinate articulation solver (Newton's ``SolverFeatherstone``, functional and implicit).

Feature table (``✓`` honoured, ``✗`` raises):

==========================================  =====================================================
joint types PRISMATIC/REVOLUTE/BALL/FIXED/  ✓ (FREE integrated at the child COM as Newton does)
FREE/D6
DISTANCE                                    ✓ as FREE; finite distance limits as a penalty with the
                                              first DOF's ``limit_ke/kd``, or (both 0) a hard row
loop-closing joints                         ✓ hard bilateral rows in the joint-space solve (every type but
                                              FREE/DISTANCE); ``ignore_loop_joints=True`` skips them
loop joints' drives, limits, armature,      ✓ along their free axes, implicit in the same solve (below);
springs, damping, friction                    FREE/DISTANCE as the tree joints; DISTANCE: distance limits;
                                              ACCELERATION drives scaled by ``1/(J W Jᵀ)`` (below)
equality CONNECT/WELD/JOINT/TENDON, mimic   ✓ hard bilateral rows (see :mod:`jaxart.dynamics.engine.constraint_rows`);
                                              the traced ``enabled`` flags gate them at run time
                                              (no recompile; a model with any such constraint takes
                                              the dense world solve)
``joint_f``, ``body_f``, gravity            ✓ (``joint_f`` of FREE joints is a world wrench at the COM)
drives ``target_ke/kd`` per                 ✓ every DOF (FREE/DISTANCE: anchor position and the
``joint_target_mode``                         rotation vector, see below); implicit (default) or explicit
``joint_drive_type`` ACCELERATION           ✓ gains [1/s², 1/s] scaled by the DOF's effective inertia
                                              ``1/(H⁻¹)_ii`` (PhysX ``eACCELERATION``; dense world solve)
``joint_act``                               ✓ feed-forward, clamped with the drive by ``effort_limit``
                                              (a force, or an impulse per step with
                                              ``drive_limits_are_forces=False``)
limits ``limit_ke/kd``                      ✓ penalty (implicit in implicit mode), drive off at a limit;
                                              FREE DOFs per DOF, DISTANCE on the anchor distance
``stiffness``/``rest_q``/``damping``          ✓ (angular springs wrap like Newton)
``armature``                                ✓ on the mass-matrix diagonal
``friction``                                ✓ smooth Coulomb ``−μ tanh(q̇/ε)``, linearly implicit
``effort_limit``/``velocity_limit``          ✓ actuator force clamp / joint velocity clamp
tendons (fixed, spatial through points)     ✓ spring/damper/penalty limit (with ``tendon_margin``) and
                                              actuator (``Control.tendon_f``, drive ``tendon_target_ke/kd``,
                                              clamped by ``tendon_effort_limit``) as joint forces and body
                                              wrenches, stiffness and damping implicit (rank-one rows in the
                                              dense world solve, :mod:`jaxart.dynamics.engine.tendon_terms`) unless
                                              ``drive="explicit"``; friction ``tendon_frictionloss`` as smooth
                                              Coulomb ``−μ tanh(L̇/ε)``, linearly implicit; armature
                                              ``tendon_armature`` as ``a JᵀJ`` in the matrix and ``−a J̇q̇``
``angular_damping``                         ✓ on FREE/DISTANCE angular velocities ``ω ← ω (1 − c dt)``
kinematic bodies                            ✓ their joints keep ``joint_qd`` (q̈ = 0) and integrate q
stateful actuators, mocap, fluid            ✓ by ``SolverBase.step`` (:func:`~jaxart.solvers.base.step_with_inputs`)
disabled tree joints                        ✗
contacts                                    ✓ implicit compliant law (default, ``jaxart.contact.implicit``) in
                                              the joint-space solve, or Newton's explicit penalty law
                                              (``contact="explicit"``) through ``Jᵀ f``
==========================================  =====================================================

Contact (``contact="implicit"``, the default): every active row is a spring–damper with Newton's
material gains, integrated implicitly at the end-of-step velocity and folded into the joint-space
system ``(H + diag(e) + dt·Σ JᵀWJ) q̈ = …`` together with the implicit drives, so one step at the
model's own time step (2–16 ms) stays stable for any contact stiffness. The normal force is a smooth
positive part (it never pulls and fades in over ``contact_activation_length`` of predicted approach) and
friction is Coulomb's law bounded by the normal force of the same step (stiction below
``stiction_velocity``); the system is re-linearised and solved ``contact_iterations`` times. Contacts
between two bodies (self-collision, two articulations, a robot and a free box) are solved together:
the articulation blocks form one world system. See :mod:`jaxart.contact.implicit` for the law and
the meaning of its gradients. ``contact="explicit"`` reproduces Newton's penalty law (stable only for
``dt`` well below ``sqrt(m/ke)``; the solver warns once when the step exceeds its estimate).

Acceleration drives (``joint_drive_type = JointDriveType.ACCELERATION``, per DOF, see
:mod:`jaxart.dynamics.engine.drive_inertia`): ``target_ke``/``target_kd`` are in acceleration units and the drive
force is ``m_i (ke e + kd ė)`` with ``m_i = 1 / (H⁻¹)_ii`` (mass matrix with armature, at the step's start),
implicit like force drives, so a DOF driven alone follows the same trajectory whatever its link inertias.
The effort limit clamps that force. Such models take the dense world solve (as DISTANCE limits do).
On the free axes of loop joints the effective inertia is ``1/(J W Jᵀ)``, ``W`` the response of the system
with the constraint rows enforced (see :mod:`jaxart.dynamics.engine.drive_inertia`).
Constraints (loop-closing joints, equality and mimic constraints): every row ``g(q) = 0`` is imposed on
the end-of-step velocity, ``G (q̇ + dt q̈) = −β g / dt`` (Baumgarte factor ``β = constraint_stabilization``),
in the same solve as the drives and contacts: the saddle-point system ``[[A, Gᵀ], [G, −R]]`` is solved by
its Schur complement with the Cholesky factor of ``A`` (``R`` a small regularisation, relative
``constraint_regularization``, so redundant rows such as a planar loop's out-of-plane directions are
harmless). Hard DISTANCE limits (``limit_ke = limit_kd = 0``) are such rows, switched on for a step when
``d + dt·ḋ`` crosses the limit (:mod:`jaxart.dynamics.engine.constraint_rows`). Models with rows take the dense
world solve. Loop joints have no coordinates in the reduced
system: after each step their ``joint_q``/``joint_qd`` are measured from the anchor frames of the new poses
(the equivalent tree joint's coordinates and velocities,
:func:`~jaxart.solvers.featherstone.loop_state.loop_joint_state`).

Loop joints' free axes (:mod:`jaxart.dynamics.engine.loop_axes`): each free axis of a loop-closing REVOLUTE,
PRISMATIC, BALL, D6, FREE or DISTANCE joint gets its coordinate measured from the anchor frames (the tree joint's
coordinate of the same relative pose) and a Jacobian row ``J`` (its rate ``J q̇``); the tree's per-DOF
law then gives its force (drive with effort limit, penalty limits that switch the drive off, spring,
damping, friction), entering the solve as ``Jᵀ f`` with the implicit part ``Jᵀ (armature + k dt² + c dt) J``
in the matrix and the coordinate's acceleration ``J q̈ + J̇ q̇`` — the same implicit law as on a tree joint.
Loop DISTANCE joints carry their anchor-distance limits this way. Only loop joints with such a term (a
target mode other than ``NONE``, finite limits, or nonzero armature/stiffness/damping/friction; every loop
joint when the model is traced) get the axis terms; their ``joint_f``/``joint_act`` entries are then
generalized forces along these axes (use ``JointTargetMode.EFFORT`` for pure forces).

Drive modes: ``NONE``/``EFFORT`` apply no PD force; ``POSITION`` uses ``ke (q* − q) + kd (q̇* − q̇)``;
``VELOCITY`` uses ``kd (q̇* − q̇)``; ``POSITION_VELOCITY`` both.

FREE/DISTANCE DOF positions (a jaxart extension: Newton's Featherstone ignores drives, springs and
limits on these DOFs): the linear DOFs use the child-anchor position ``joint_q[0:3]`` with the
child-COM velocity, the angular DOFs the rotation vector ``log(q)`` in the parent-anchor frame (the
frame of ω), with the drive error ``log(q* ⊗ q⁻¹)`` — the rotation vector of ``q*⁻¹ q`` expressed in
the parent-anchor frame, negated. The forces are generalized forces (COM force / torque in the
parent-anchor axes). See :mod:`jaxart.dynamics.joint_forces`.
"""

from __future__ import annotations

import jax
import numpy as np

from jaxart.contact.penalty import contact_body_wrenches
from jaxart.dynamics.engine.constraint_rows import constraint_plan
from jaxart.dynamics.engine.dense_solve import Constraints
from jaxart.dynamics.engine.loop_axes import loop_axis_plan
from jaxart.dynamics.layout import dynamics_layout
from jaxart.sim import checks
from jaxart.sim.model import Control, Model, State
from jaxart.solvers.base import SolverBase
from jaxart.solvers.featherstone.loop_state import loop_state_plan
from jaxart.solvers.featherstone.step import featherstone_step
from jaxart.solvers.stability import contact_stable_step, drive_stable_step, tendon_stable_step, warn_if_unstable

_DRIVES = ("implicit", "explicit")
_CONTACTS = ("implicit", "explicit")


@jax.tree_util.register_pytree_node_class
class SolverFeatherstone(SolverBase):
    """Joint-space semi-implicit Euler; accelerations by the articulated-body algorithm.

    The implicit terms and armature enter the scalar pivots of :mod:`jaxart.dynamics.aba`; models
    with implicit DISTANCE limits (a rank-one coupling of the joint's DOFs) use CRBA + RNEA and a
    dense per-articulation Cholesky solve instead.

    The solver is a pytree (the model is its only leaf), so ``jax.jit(lambda s, x: s.step(...))``
    and ``vmap`` over randomised models work. See the module docstring for the feature table.

    Args:
        model: The model.
        angular_damping: Damping rate [1/s] of FREE/DISTANCE angular velocities.
        drive: ``"implicit"`` (default: drives, springs, damping and limits folded into the linear
            solve, stable at large gains and time steps) or ``"explicit"`` (Newton's closed form).
        friction_smoothing: Velocity scale ε [m/s or rad/s] of the smooth Coulomb friction.
        ignore_loop_joints: Accept loop-closing joints (they are not enforced).
        update_mass_matrix_interval: Accepted for Newton compatibility; only 1 is supported.
        contact: ``"implicit"`` (default: implicit compliant contact in the joint-space solve) or
            ``"explicit"`` (Newton's penalty law as body wrenches).
        contact_smoothing: With ``contact="explicit"``: ``None`` for Newton's penalty contact law, or a
            length scale [m] selecting the smooth (softplus) contact law of :mod:`jaxart.contact`.
        stiction_velocity: ``ε`` [m/s] of the implicit friction law: tangential speed below which a
            contact sticks (creep velocity ``≤ ε``).
        drive_limits_are_forces: ``joint_effort_limit`` is a force/torque (default, PhysX
            ``eDRIVE_LIMITS_ARE_FORCES``) or, when ``False``, an impulse [N·s, N·m·s] per step: the drive
            force is clamped to ``effort_limit / dt``.
        constraint_stabilization: Baumgarte factor ``β`` ∈ (0, 1] of loop/equality/mimic rows: the fraction
            of the position error removed per step.
        constraint_regularization: Relative regularisation ``ρ`` > 0 of the constraint Schur complement (the
            rows' relative compliance); default 1e-6 for float32 models, 1e-10 for float64.
        contact_iterations: Linear solves per step of the implicit contact law (≥ 1): each re-linearises
            the on-gate, the normal force and the friction coefficient at the previous solve's end-of-step
            velocities (:mod:`jaxart.contact.implicit`). 1 is the single linearly implicit solve at the
            start-of-step velocities (cheapest; friction then lags the normal force at impacts).
        contact_activation_length: ``δ`` [m] of the implicit contact law: the normal force is the smooth
            positive part ``ke·δ·softplus(f/(ke·δ))`` of the spring–damper's ``f``, i.e. it fades in over the last
            ``δ`` of predicted approach, so the step is a smooth function of the state across touch/separate.

    Raises:
        ValueError: Disabled tree joints, or bad options.
    """

    _OPTIONS = ('angular_damping', 'drive', 'friction_smoothing', 'ignore_loop_joints', 'contact', 'contact_smoothing',
                'stiction_velocity', 'drive_limits_are_forces', 'constraint_stabilization',
                'constraint_regularization', 'contact_iterations', 'contact_activation_length')
    checkpointed_step = True

    def __init__(self, model: Model, *, angular_damping: float = 0.05, drive: str = "implicit",
                 friction_smoothing: float = 1e-2, ignore_loop_joints: bool = False,
                 update_mass_matrix_interval: int = 1, contact: str = "implicit",
                 contact_smoothing: float | None = None, stiction_velocity: float = 1e-4,
                 drive_limits_are_forces: bool = True, constraint_stabilization: float = 1.0,
                 constraint_regularization: float | None = None, contact_iterations: int = 2,
                 contact_activation_length: float = 1e-5) -> None:
        if drive not in _DRIVES:
            raise ValueError(f"SolverFeatherstone: drive must be one of {_DRIVES}, got {drive!r}")
        if contact not in _CONTACTS:
            raise ValueError(f"SolverFeatherstone: contact must be one of {_CONTACTS}, got {contact!r}")
        if contact_smoothing is not None and contact != "explicit":
            raise ValueError("SolverFeatherstone: contact_smoothing selects the smooth penalty law and needs "
                             f"contact='explicit', got contact={contact!r}")
        if not stiction_velocity > 0.0:
            raise ValueError(f"SolverFeatherstone: stiction_velocity must be > 0 [m/s], got {stiction_velocity}")
        if isinstance(contact_iterations, bool) or not isinstance(contact_iterations, (int, np.integer)):
            raise TypeError(f"SolverFeatherstone: contact_iterations must be an int, got {type(contact_iterations)}")
        if contact_iterations < 1:
            raise ValueError(f"SolverFeatherstone: contact_iterations must be >= 1, got {contact_iterations}")
        if not contact_activation_length > 0.0:
            raise ValueError("SolverFeatherstone: contact_activation_length must be > 0 [m], got "
                             f"{contact_activation_length}")
        if not friction_smoothing > 0.0:
            raise ValueError(f"SolverFeatherstone: friction_smoothing must be > 0, got {friction_smoothing}")
        if not 0.0 < constraint_stabilization <= 1.0:
            raise ValueError("SolverFeatherstone: constraint_stabilization must be in (0, 1], got "
                             f"{constraint_stabilization}")
        if constraint_regularization is None:  # relative softness of the rows: near the dtype's resolution
            constraint_regularization = 1e-10 if np.finfo(model.joint_q.dtype).bits >= 64 else 1e-6
        if not constraint_regularization > 0.0:
            raise ValueError("SolverFeatherstone: constraint_regularization must be > 0, got "
                             f"{constraint_regularization}")
        if int(update_mass_matrix_interval) != 1:
            raise ValueError("SolverFeatherstone: update_mass_matrix_interval must be 1 (the mass matrix is "
                             "recomputed every step)")
        _validate(model)
        constraint_plan(model, ignore_loop_joints=ignore_loop_joints)
        loop_axis_plan(model, ignore_loop_joints=ignore_loop_joints)
        self.model = model
        self.angular_damping = float(angular_damping)
        self.drive = drive
        self.friction_smoothing = float(friction_smoothing)
        self.ignore_loop_joints = bool(ignore_loop_joints)
        self.contact = contact
        self.contact_smoothing = None if contact_smoothing is None else float(contact_smoothing)
        self.stiction_velocity = float(stiction_velocity)
        self.contact_iterations = int(contact_iterations)
        self.contact_activation_length = float(contact_activation_length)
        self.drive_limits_are_forces = bool(drive_limits_are_forces)
        self.constraint_stabilization = float(constraint_stabilization)
        self.constraint_regularization = float(constraint_regularization)
        self._limits = {"penalty contact": contact_stable_step(model) if contact == "explicit" else None,
                        "drives, limits and springs": drive_stable_step(model) if drive == "explicit" else None}
        if model.tendon.tendon_count and drive == "explicit":  # implicit tendons have no step limit
            self._limits["tendons"] = tendon_stable_step(model)


    def _advance(self, state_in: State, control: Control | None, contacts, dt) -> State:
        """Advance one step and return the new state (``body_f`` is kept, not cleared).

        Args:
            state_in: Current state.
            control: Control, or ``None`` for the model's defaults.
            contacts: ``None`` or ``model.collide(state_in)``: active contacts enter the joint-space
                solve implicitly (default) or apply Newton's penalty law as wrenches (``contact="explicit"``).
            dt: Time step [s].

        Returns:
            The new :class:`State` (``joint_q``, ``joint_qd``, ``body_q``, ``body_qd`` updated).
        """
        checks.check_step(self, state_in, control, contacts, dt)
        for what, estimate in getattr(self, "_limits", {}).items():
            if what != "penalty contact" or contacts is not None:
                warn_if_unstable(self, dt, estimate, what)
        extra = implicit_contacts = None
        if contacts is not None:  # its type is checked by checks.check_step
            if self.contact == "implicit":
                implicit_contacts = contacts
            else:
                extra = contact_body_wrenches(self.model, state_in, contacts, smooth=self.contact_smoothing)
        return featherstone_step(self.model, state_in, control, dt, angular_damping=self.angular_damping,
                                 implicit=self.drive == "implicit", friction_eps=self.friction_smoothing,
                                 extra_body_f=extra, contacts=implicit_contacts,
                                 stiction_velocity=self.stiction_velocity,
                                 contact_iterations=self.contact_iterations,
                                 contact_activation_length=self.contact_activation_length,
                                 drive_limits_are_forces=self.drive_limits_are_forces,
                                 constraints=self._constraints(),
                                 loop_joints=loop_state_plan(self.model, ignore_loop_joints=self.ignore_loop_joints))

    def _constraints(self) -> Constraints | None:
        plan = constraint_plan(self.model, ignore_loop_joints=self.ignore_loop_joints)
        axes = loop_axis_plan(self.model, ignore_loop_joints=self.ignore_loop_joints)
        out = Constraints(plan, self.constraint_stabilization, self.constraint_regularization, axes)
        return None if out.empty else out


def _validate(model: Model) -> None:
    topo = model.topology
    labels = topo.joint_label
    art = topo.joint_articulation.array
    disabled = [labels[j] for j in range(topo.joint_count) if art[j] >= 0 and not topo.joint_enabled.array[j]]
    if disabled:
        raise ValueError(f"SolverFeatherstone: disabled tree joints {disabled} are not supported")
    dynamics_layout(model)  # raises for articulations hanging from another articulation
