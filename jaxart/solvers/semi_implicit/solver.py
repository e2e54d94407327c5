"""Maximal-coordinate semi-implicit Euler solver (Newton's ``SolverSemiImplicit``, functional).

Bodies are integrated in maximal coordinates (``body_q``/``body_qd``) with Newton's integrator
(COM position, body-frame gyroscopic term, angular damping); joints are penalty springs between
their anchor frames; contacts use Newton's penalty law; ``joint_q``/``joint_qd`` are refreshed by
:func:`jaxart.eval_ik` at the end of each step.

Feature table (``✓`` honoured):

==========================================  =====================================================
joint types PRISMATIC/REVOLUTE/FIXED/D6     ✓ free directions: per-DOF force law; constrained
                                              directions: ``joint_attach_ke/kd`` springs (Newton)
BALL                                        ✓ ``joint_f``, damping (Newton) + drives and stiffness
FREE                                        ✓ ``joint_f`` = world wrench at the child COM; drives and
                                              ``joint_act`` on SolverFeatherstone's DOFs (jaxart extension:
                                              explicit, Featherstone's errors; force at the child COM, torque
                                              along the parent-anchor axes: :mod:`jaxart.solvers.maximal.free_joints`)
DISTANCE                                    ✓ ``joint_f`` + distance kept in ``[min, max]`` by the
                                              attachment spring (Newton ignores the limits); drives and
                                              ``joint_act`` as FREE
loop-closing / orphan joints                ✓ identical to tree joints (penalty springs)
disabled joints (``joint_enabled``)         ✓ skipped
drives ``target_ke/kd`` per                 ✓ NONE/EFFORT: no PD; POSITION: ke (q*−q) + kd (q̇*−q̇);
``joint_target_mode``                         VELOCITY: kd (q̇*−q̇); POSITION_VELOCITY: both
``joint_act``                               ✓ added to the drive (no effort clamp, as Newton)
``joint_drive_type`` ACCELERATION           ✓ explicit ``m·(ke (q*−q) + kd (q̇*−q̇))``, ``m`` the DOF's
                                              effective inertia at the step's poses (the joint's two
                                              bodies, locked directions held:
                                              :mod:`jaxart.solvers.maximal.drive_inertia`)
limits ``limit_ke/kd``                      ✓ penalty; the drive is off beyond a limit (Newton)
``stiffness``/``rest_q``/``damping``          ✓ angular springs wrap to (−π, π] (Newton)
``body_f``, gravity                         ✓ world wrench about the COM; gravity on bodies with mass
contacts                                    ✓ penalty ``ke, kd, kf, mu, ka`` (mean of the two
                                              shapes); optional smooth variant
kinematic bodies                            ✓ passed through unchanged
stateful actuators, mocap, fluid            ✓ by ``SolverBase.step`` (:func:`~jaxart.solvers.base.step_with_inputs`)
fixed/spatial tendons, tendon actuators     ✓ explicit: spring, damping, penalty limit (with ``tendon_margin``),
                                              smooth friction ``tendon_frictionloss`` and actuator
                                              (``tendon_f``, ``target_ke/kd``) of :mod:`jaxart.dynamics.tendon_forces`
                                              as body wrenches (:mod:`jaxart.solvers.maximal.tendons`)
``tendon_armature``                         ✓ the armature force ``−a L̈`` of the step's accelerations: a
                                              small system over the tendons with armature couples the
                                              bodies along them (:mod:`.tendon_armature`)
equality CONNECT/WELD/JOINT/TENDON, mimic   ✓ penalty springs ``joint_attach_ke/kd`` along the rows
                                              (:mod:`jaxart.solvers.semi_implicit.equality`); the
                                              traced ``enabled`` flags switch them without recompiling
armature, friction, effort/velocity limits  not modelled in maximal coordinates (as Newton)
FREE/DISTANCE passive stiffness/damping,    ✓ explicit, SolverFeatherstone's law and DOFs (rotation vectors;
FREE per-DOF limits                           drive off beyond a limit): :mod:`jaxart.solvers.maximal.free_joints`
DISTANCE per-DOF limits past the first DOF  ✗ (``NotImplementedError`` naming the joints, concrete models;
                                              :func:`~jaxart.solvers.maximal.free_joints.reject_free_joint_terms`)
==========================================  =====================================================

Accuracy: joint constraints are soft; with the default ``joint_attach_ke = 1e4`` a joint carrying
a load ``F`` separates by about ``F / joint_attach_ke``. Explicit integration is stable only for
``dt ≲ 2·sqrt(m_min / k_max)``; stiff springs or light bodies need small steps (Newton's advice).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from jaxart.contact.penalty import contact_body_wrenches
from jaxart.kinematics.ik import eval_ik
from jaxart.math.checkpoint import checkpointed_jit
from jaxart.sim import checks
from jaxart.sim.model import Control, Model, State
from jaxart.solvers.base import SolverBase
from jaxart.solvers.maximal.drive_inertia import acceleration_gains
from jaxart.solvers.maximal.free_joints import reject_free_joint_terms
from jaxart.solvers.maximal.integrate import integrate_bodies
from jaxart.solvers.maximal.penalty_joints import joint_wrenches
from jaxart.solvers.maximal.tendons import tendon_body_wrenches
from jaxart.solvers.semi_implicit.equality import equality_wrenches
from jaxart.solvers.semi_implicit.tendon_armature import armature_tendons, tendon_armature_wrenches
from jaxart.solvers.stability import attachment_stable_step, contact_stable_step, warn_if_unstable


@jax.tree_util.register_pytree_node_class
class SolverSemiImplicit(SolverBase):
    """Semi-implicit Euler in maximal coordinates with penalty joints and penalty contact.

    The solver is a pytree (the model is its only leaf): ``jax.jit(lambda s, x, c: s.step(x, None,
    c, dt))`` and ``vmap`` over states or randomised models work.

    The tendons with a non-zero ``tendon_armature`` are read from the model at construction (static: a model
    without armature steps without its solve); a solver built from a traced model (under ``jit``/``vmap``)
    includes every tendon. A concrete model stepped outside ``jit`` is read again at every step.

    Args:
        model: The model.
        angular_damping: Angular velocity damping rate [1/s] of every body.
        joint_attach_ke: Stiffness of the joint attachment springs [N/m, N·m/rad].
        joint_attach_kd: Damping of the joint attachment springs [N·s/m]; angular ×0.01 (Newton).
        friction_smoothing: Newton's parameter for particle friction; accepted for compatibility,
            validated (> 0), and without effect on rigid bodies (as in Newton).
        contact_smoothing: ``None`` (Newton's exact penalty law) or a length [m] selecting the
            smooth contact variant of :mod:`jaxart.contact.penalty` (useful gradients).

    Raises:
        ValueError: A non-finite or negative option.
        NotImplementedError: Per-DOF limits or passive stiffness/damping on FREE/DISTANCE joints.
    """

    _OPTIONS = ('angular_damping', 'joint_attach_ke', 'joint_attach_kd', 'friction_smoothing', 'contact_smoothing',
                'armature_tendons')
    checkpointed_step = True

    def __init__(self, model: Model, *, angular_damping: float = 0.05, joint_attach_ke: float = 1.0e4,
                 joint_attach_kd: float = 1.0e2, friction_smoothing: float = 1.0,
                 contact_smoothing: float | None = None) -> None:
        for name, val in (("angular_damping", angular_damping), ("joint_attach_ke", joint_attach_ke),
                          ("joint_attach_kd", joint_attach_kd)):
            if not (float(val) >= 0.0 and float(val) < float("inf")):
                raise ValueError(f"SolverSemiImplicit: {name} must be finite and >= 0, got {val}")
        if not float(friction_smoothing) > 0.0:
            raise ValueError(f"SolverSemiImplicit: friction_smoothing must be > 0, got {friction_smoothing}")
        if contact_smoothing is not None and not float(contact_smoothing) > 0.0:
            raise ValueError(f"SolverSemiImplicit: contact_smoothing must be None or > 0, got {contact_smoothing}")
        reject_free_joint_terms(model, "SolverSemiImplicit", free_limits=True, passive=True)
        self.model = model
        self.armature_tendons = armature_tendons(model)
        self.angular_damping = float(angular_damping)
        self.joint_attach_ke = float(joint_attach_ke)
        self.joint_attach_kd = float(joint_attach_kd)
        self.friction_smoothing = float(friction_smoothing)
        self.contact_smoothing = None if contact_smoothing is None else float(contact_smoothing)
        self._limits = {"penalty contact": contact_stable_step(model),
                        "joint attachment springs": attachment_stable_step(model, self.joint_attach_ke,
                                                                           self.joint_attach_kd)}


    def _advance(self, state_in: State, control: Control | None, contacts, dt) -> State:
        """Advance one step and return the new state (``body_f`` is kept, not cleared).

        Args:
            state_in: Current state.
            control: Control, or ``None`` for the model's defaults.
            contacts: ``None`` (no contact) or a :class:`~jaxart.collision.Contacts`.
            dt: Time step [s].

        Returns:
            The new :class:`State`.
        """
        checks.check_step(self, state_in, control, contacts, dt)
        for what, estimate in getattr(self, "_limits", {}).items():
            if what != "penalty contact" or contacts is not None:
                warn_if_unstable(self, dt, estimate, what)
        tendons = armature_tendons(self.model)  # concrete: this model's own (e.g. its armature was replaced)
        return semi_implicit_step(self.model, state_in, control, contacts, dt, angular_damping=self.angular_damping,
                                  attach_ke=self.joint_attach_ke, attach_kd=self.joint_attach_kd,
                                  contact_smoothing=self.contact_smoothing,
                                  armature_tendons=self.armature_tendons if tendons is None else tendons)


@functools.partial(checkpointed_jit, static_argnames=("angular_damping", "attach_ke", "attach_kd", "contact_smoothing",
                                                      "armature_tendons"))
def semi_implicit_step(model: Model, state: State, control: Control | None, contacts, dt, *,
                       angular_damping: float = 0.05, attach_ke: float = 1.0e4, attach_kd: float = 1.0e2,
                       contact_smoothing: float | None = None,
                       armature_tendons: tuple[int, ...] | None = None) -> State:
    """One pure semi-implicit step (see :class:`SolverSemiImplicit`).

    ``armature_tendons``: static indices of the tendons whose ``tendon_armature`` takes part
    (:func:`~jaxart.solvers.semi_implicit.tendon_armature.armature_tendons`); ``None``, all tendons (correct for
    any model), ``()`` none.
    """
    with jax.named_scope("jaxart.semi_implicit_step"):
        control = model.control() if control is None else control
        dtype = state.body_q.dtype
        dt = jnp.asarray(dt, dtype)
        f = state.body_f.astype(dtype)
        f = f + joint_wrenches(acceleration_gains(model, state.body_q), state, control, attach_ke=attach_ke,
                               attach_kd=attach_kd)
        f = f + tendon_body_wrenches(model, state, control)
        f = f + equality_wrenches(model, state, attach_ke=attach_ke, attach_kd=attach_kd)
        if contacts is not None:
            f = f + contact_body_wrenches(model, state, contacts, smooth=contact_smoothing)
        if armature_tendons is None or armature_tendons:
            f = f + tendon_armature_wrenches(model, state, f, armature_tendons)
        body_q, body_qd = integrate_bodies(model, state.body_q, state.body_qd, f, dt, angular_damping=angular_damping)
        new = state.replace(body_q=body_q, body_qd=body_qd)
        joint_q, joint_qd = eval_ik(model, new)
        return new.replace(joint_q=joint_q, joint_qd=joint_qd)
