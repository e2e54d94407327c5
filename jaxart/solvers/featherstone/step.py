"""One pure step of :class:`~jaxart.solvers.SolverFeatherstone`, batch-minor under ``vmap``.

The step is forces → accelerations (articulated-body algorithm) → velocities → coordinates → FK.
Under ``vmap`` all of it runs as one lane kernel (:mod:`jaxart.math.lanes`), so only the state
enters and leaves in the batch-major layout: chaining the separately wrapped stages moved every
intermediate per-DOF array (forces, accelerations, velocities, coordinates) between the layouts,
about a sixth of a humanoid step at batch 1024. Single worlds, batches of one and all derivatives
take the per-world stages (:func:`~jaxart.dynamics.aba.aba_accelerations` with its dense solve,
:func:`~jaxart.dynamics.integrate.integrate_coords`, :func:`~jaxart.kinematics.fk.fk_bodies`).
Models with implicit DISTANCE limits (a rank-one coupling, dense solve only) always take the
per-world stages.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.contact.implicit import contact_law
from jaxart.dynamics.aba import aba_from_base, aba_kernel, body_q_from_base, dense_from_base
from jaxart.dynamics.engine.dense_solve import Constraints
from jaxart.dynamics.engine.drive_inertia import drive_inertia, loop_drive_inertia
from jaxart.dynamics.engine.loop_axes import LoopAxes
from jaxart.dynamics.engine.tendon_terms import tendon_step_loads
from jaxart.dynamics.integrate import integrate_coords, integrate_kernel
from jaxart.dynamics.joint_forces import acceleration_dofs, dof_static, joint_forces, static_columns
from jaxart.dynamics.layout import dynamics_layout
from jaxart.kinematics.fk import base_bodies, fk_bodies_kernel, fk_from_base
from jaxart.math.checkpoint import checkpointed_jit
from jaxart.math.lanes import lanes
from jaxart.sim.model import Control, Model, State
from jaxart.solvers.featherstone.aba_contact import static_side_only
from jaxart.solvers.featherstone.contact_solve import dense_contact_accelerations, lane_contact_accelerations
from jaxart.solvers.featherstone.loop_state import (
    fold_loop_bias,
    loop_coordinates_from_base,
    loop_joint_state,
    loop_state_plan,
)


@functools.partial(checkpointed_jit, static_argnames=("angular_damping", "implicit", "friction_eps",
                                                    "stiction_velocity", "drive_limits_are_forces", "constraints",
                                                    "loop_joints", "contact_iterations",
                                                    "contact_activation_length"))
def featherstone_step(model: Model, state: State, control: Control | None, dt, *, angular_damping: float = 0.05,
                      implicit: bool = True, friction_eps: float = 1e-2, extra_body_f=None, contacts=None,
                      stiction_velocity: float = 1e-4, drive_limits_are_forces: bool = True,
                      constraints: Constraints | None = None, loop_joints: LoopAxes | None = None,
                      contact_iterations: int = 2, contact_activation_length: float = 1e-5) -> State:
    """One pure solver step (see :class:`~jaxart.solvers.SolverFeatherstone`).

    Args:
        model: The model.
        state: Current state.
        control: Control or ``None``.
        dt: Time step [s].
        angular_damping: FREE angular damping rate.
        implicit: Implicit drives/springs/damping/limits and tendon stiffness/damping (rank-one rows; tendon
            friction and armature enter those rows in both modes).
        friction_eps: Friction smoothing velocity.
        extra_body_f: Optional ``(body_count, 6)`` additional world wrenches at the COMs (the explicit
            contact seam: penalty contact forces enter here, i.e. as ``Jᵀ f``).
        contacts: Optional :class:`~jaxart.collision.Contacts` solved with the implicit contact law of
            :mod:`jaxart.contact.implicit` in the joint-space solve: rows against static geometry (known
            at trace time) as body impedances in the articulated-body algorithm under ``vmap``, otherwise
            (and for single worlds and derivatives) in the dense world solve.
        stiction_velocity: ``ε`` [m/s] of the implicit friction law.
        drive_limits_are_forces: ``joint_effort_limit`` is a force (default) or, when ``False``, an
            impulse per step (the drive force is clamped to ``effort_limit / dt``).
        constraints: Static :class:`~jaxart.dynamics.engine.dense_solve.Constraints` (loop-closing joints, equality
            and mimic constraints as hard rows on the end-of-step velocity; dense world solve), or ``None``.
        loop_joints: Static :func:`~jaxart.solvers.featherstone.loop_state.loop_state_plan` whose joints'
            ``joint_q``/``joint_qd`` are measured from the new body poses (``None``: every enabled loop joint of the
            model).
        contact_iterations: Linear solves of the implicit contact law per step (≥ 1; see
            :mod:`jaxart.contact.implicit`).
        contact_activation_length: ``δ`` [m] of the implicit contact law's smooth normal force.

    Returns:
        The new state.
    """
    with jax.named_scope("jaxart.featherstone_step"):
        control = model.control() if control is None else control
        dt = jnp.asarray(dt, state.joint_q.dtype)
        body_f = state.body_f if extra_body_f is None else state.body_f + extra_body_f
        tendon_rows = None
        if model.tendon.tendon_count:  # tendons: loads + implicit rank-one rows (jaxart.dynamics.engine.tendon_terms)
            t_joint_f, t_body_f, tendon_rows = tendon_step_loads(model, control, state.joint_q, state.joint_qd,
                                                                 state.body_q, state.body_qd, dt, implicit=implicit,
                                                                 friction_eps=friction_eps)
            control, body_f = control.replace(joint_f=control.joint_f + t_joint_f), body_f + t_body_f
        rows = bodies = None
        if contacts is not None and contacts.capacity:
            rows, _ = contact_law(model, state, contacts, dt, stiction_velocity=stiction_velocity,
                                  activation_length=contact_activation_length)
            if contacts.slot_bodies is not None and static_side_only(contacts.slot_bodies):
                bodies = tuple(tuple(int(b) for b in side) for side in contacts.slot_bodies)
        options = StepOptions(angular_damping=angular_damping, implicit=implicit, friction_eps=friction_eps,
                              limit_impulse=not drive_limits_are_forces, contact_iterations=int(contact_iterations))
        lane_rows = ()
        if constraints is not None and constraints.empty:
            constraints = None
        if (dof_static(model.topology).dist_joint.size or acceleration_dofs(model.topology).any()
                or (rows is not None and bodies is None) or constraints or tendon_rows is not None):
            # static choice: DISTANCE limits, contacts between two bodies, constraint rows or tendons (rank-one
            # rows) need the dense world solve; acceleration drives need the per-world effective inertias
            step = functools.partial(_step_plain, options=options, contact=rows, constraints=constraints,
                                     lowrank=tendon_rows)
        elif rows is not None:  # contacts against static geometry: ABA lane kernel with body impedances
            step = _step_lanes(dataclasses.replace(options, bodies=bodies))
            lane_rows = (rows._replace(body_a=None, body_b=None),)
        else:
            step = _step_lanes(options)
        base = base_bodies(model.schedule)
        inputs = StepInputs(joint_q=state.joint_q, joint_qd=state.joint_qd, base_q=state.body_q[base],
                            base_qd=state.body_qd[base], body_f=body_f, control=control, dt=dt)
        q, qd, body_q, body_qd = step(model, inputs, *lane_rows)
        loop_joints = loop_state_plan(model) if loop_joints is None else loop_joints
        q, qd = loop_joint_state(model, q, qd, body_q, loop_joints)  # loop joints' own coordinates, measured
        return state.replace(joint_q=q, joint_qd=qd, body_q=body_q, body_qd=body_qd)


def _new_velocities(model: Model, joint_qd, qdd, dt, angular_damping: float):
    """Semi-implicit velocity update: clamp to ``joint_velocity_limit``, FREE angular damping; DOFs of
    non-tree joints and of kinematic bodies keep their velocity (prescribed motion: no damping, no
    clamp). Layout-generic (``(nd,)`` or lanes ``(nd, L)``)."""
    lay = dynamics_layout(model)
    col = static_columns(joint_qd)
    qd = joint_qd + dt * qdd
    qd = jnp.clip(qd, -model.joint_velocity_limit, model.joint_velocity_limit)
    qd = jnp.where(col(lay.is_free_dof & ~lay.is_lin_dof), qd * (1.0 - angular_damping * dt), qd)
    return jnp.where(col(lay.in_tree_dof & ~lay.is_kinematic_dof), qd, joint_qd)


class StepInputs(NamedTuple):
    """What one step reads besides the model (per world; lanes in the lane kernel).

    Attributes:
        joint_q: ``(joint_coord_count,)`` joint coordinates.
        joint_qd: ``(joint_dof_count,)`` joint velocities.
        base_q: ``(k, 7)`` world poses of the articulations' base bodies (FK starts there).
        base_qd: ``(k, 6)`` world twists of the base bodies.
        body_f: ``(body_count, 6)`` external world wrenches at the COMs [N, N·m].
        control: The step's :class:`~jaxart.sim.model.Control` (tendon loads already folded in).
        dt: Scalar time step [s].
    """

    joint_q: jax.Array
    joint_qd: jax.Array
    base_q: jax.Array
    base_qd: jax.Array
    body_f: jax.Array
    control: Control
    dt: jax.Array


@dataclasses.dataclass(frozen=True)
class StepOptions:
    """Static options of the step (see :func:`featherstone_step`).

    Attributes:
        angular_damping: FREE angular damping rate [1/s].
        implicit: Implicit joint terms (drives, springs, damping, limits).
        friction_eps: Joint friction smoothing velocity [rad/s or m/s].
        limit_impulse: ``joint_effort_limit`` is an impulse per step.
        contact_iterations: Linear solves of the implicit contact law.
        bodies: Static ``(body_a, body_b)`` tuples of contact rows against static geometry (lane kernel), or ``None``.
    """

    angular_damping: float
    implicit: bool
    friction_eps: float
    limit_impulse: bool = False
    contact_iterations: int = 2
    bodies: tuple | None = None


class JointTerms(NamedTuple):
    """Joint-space terms of the step (per world).

    Attributes:
        f0: ``(joint_dof_count,)`` explicit joint forces (drives, springs, limits, friction) [N, N·m].
        diag: ``(joint_dof_count,)`` diagonal ``e`` added to the mass matrix (armature and implicit terms).
        dyad: Rank-one implicit terms (DISTANCE limits) or ``None``.
    """

    f0: jax.Array
    diag: jax.Array
    dyad: object


def _joint_terms(model: Model, inputs: StepInputs, options: StepOptions, constraints) -> JointTerms:
    """Stage 1 (per world): joint forces and implicit terms, with acceleration drives' effective inertias and loop
    joints' measured coordinates."""
    joint_q, base_q = inputs.joint_q, inputs.base_q
    m_eff = None
    accel = acceleration_dofs(model.topology)
    if accel.any():  # static: effective inertias of the tree DOFs, and of the loop axes in the constrained system
        m_eff = drive_inertia(model, joint_q, body_q_from_base(model, base_q))
        if constraints is not None and constraints.has_axes and accel[constraints.axes.dofs].any():
            m_eff = loop_drive_inertia(model, joint_q, base_q, constraints, m_eff)
    q_f, qd_f, bias = joint_q, inputs.joint_qd, None
    if constraints is not None and constraints.has_axes:  # loop joints' measured coordinates for their joint terms
        q_f, qd_f, bias = loop_coordinates_from_base(model, joint_q, inputs.joint_qd, base_q, constraints.axes)
    f0, diag, dyad = joint_forces(model, inputs.control, q_f, qd_f, inputs.dt, implicit=options.implicit,
                                  friction_eps=options.friction_eps, drive_inertia=m_eff,
                                  limit_impulse=options.limit_impulse)
    if bias is not None:
        f0 = fold_loop_bias(constraints.axes, f0, model.joint_armature + diag, dyad, bias)
    return JointTerms(f0=f0, diag=model.joint_armature + diag, dyad=dyad)


def _plain_accelerations(model: Model, inputs: StepInputs, terms: JointTerms, options: StepOptions, *, contact,
                         constraints, lowrank) -> jax.Array:
    """Stage 2 (per world): joint accelerations by the cheapest exact solve of the step's system."""
    forces = (inputs.joint_q, inputs.joint_qd, inputs.base_q, inputs.control.joint_f, terms.f0, terms.diag,
              inputs.body_f)
    if contact is not None:  # the implicit contact law: fixed iterations of the dense world solve
        return dense_contact_accelerations(model, forces, contact, options.contact_iterations, dyad=terms.dyad,
                                           constraints=constraints, lowrank=lowrank)
    if terms.dyad is None and constraints is None and lowrank is None:  # diagonal terms only: ABA
        return aba_from_base(model, *forces)
    return dense_from_base(model, *forces, dyad=terms.dyad, constraints=constraints, dt=inputs.dt, lowrank=lowrank)


def _step_plain(model: Model, inputs: StepInputs, rows=None, *, options: StepOptions, contact=None, constraints=None,
                lowrank=None):
    """Per-world step (see the module docstring): joint terms → accelerations → velocities → coordinates → FK.
    The contact law's rows come as ``contact`` (complete) or as ``rows`` without body ids plus ``options.bodies``."""
    if rows is not None:
        contact = rows._replace(body_a=np.asarray(options.bodies[0], np.int32),
                                body_b=np.asarray(options.bodies[1], np.int32))
    terms = _joint_terms(model, inputs, options, constraints)
    qdd = _plain_accelerations(model, inputs, terms, options, contact=contact, constraints=constraints,
                               lowrank=lowrank)
    qd = _new_velocities(model, inputs.joint_qd, qdd, inputs.dt, options.angular_damping)
    q = integrate_coords(model, inputs.joint_q, qd, inputs.dt)
    return (q, qd, *fk_from_base(model, q, qd, inputs.base_q, inputs.base_qd))


def _step_kernel(model: Model, inputs: StepInputs, rows=None, *, options: StepOptions):
    """Lane kernel of the step (models without DISTANCE limits: every implicit term is diagonal; the contact
    law's rows only against static geometry, with their static ``options.bodies``)."""
    f0, diag, _ = joint_forces(model, inputs.control, inputs.joint_q, inputs.joint_qd, inputs.dt,
                               implicit=options.implicit, friction_eps=options.friction_eps,
                               limit_impulse=options.limit_impulse)
    forces = (inputs.joint_q, inputs.joint_qd, inputs.base_q, inputs.control.joint_f, f0,
              model.joint_armature + diag, inputs.body_f)
    if rows is None:
        qdd = aba_kernel(model, *forces)
    else:
        qdd = lane_contact_accelerations(model, forces, rows, options.bodies, options.contact_iterations)
    qd = _new_velocities(model, inputs.joint_qd, qdd, inputs.dt, options.angular_damping)
    q = integrate_kernel(model, inputs.joint_q, qd, inputs.dt)
    return (q, qd, *fk_bodies_kernel(model, q, qd, inputs.base_q, inputs.base_qd))


@functools.lru_cache(maxsize=32)
def _step_lanes(options: StepOptions):
    """The step as a lane kernel under ``vmap`` and the per-world step otherwise (:func:`~jaxart.math.lanes.lanes`)."""
    kernel = functools.partial(_step_kernel, options=options)
    return lanes(kernel, plain=functools.partial(_step_plain, options=options))
