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
equality CONNECT/WELD/JOINT/TENDON, mimic   ✓ hard positional rows after the joint rows each round
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
(:mod:`jaxart.solvers.xpbd.step`, where the step's stages live) selects the per-world reference implementation of
the same maths (for comparisons).

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

import jax
import numpy as np

from jaxart.sim import checks
from jaxart.sim.model import Control, Model, State
from jaxart.solvers.base import SolverBase
from jaxart.solvers.maximal.free_joints import free_passive_rows, free_position_limits, reject_free_joint_terms
from jaxart.solvers.xpbd.step import XPBDOptions, xpbd_step

_OPTIONS = XPBDOptions._fields


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
        options = XPBDOptions(*(getattr(self, k) for k in _OPTIONS))
        return xpbd_step(self.model, state_in, control, contacts, dt, options=options)
