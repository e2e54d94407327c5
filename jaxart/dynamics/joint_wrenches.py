"""Link sensors and solver forces (PhysX link incoming joint forces, ``eJOINT_SOLVER_FORCES``), functional.

* :func:`eval_joint_wrenches`: the spatial force each tree joint transmits from its parent to its
  child (PhysX ``getLinkIncomingJointForce``, MuJoCo ``cfrc_int``). It follows from RNEA's backward
  pass: for the subtree ``T`` hanging below the joint, ``f_joint = Σ_{k∈T} (I_k a_k + v_k ×* I_k v_k −
  f_ext,k)``, with gravity and ``body_f`` as external wrenches. Armature (a rotor inertia of the joint
  space) is not a link inertia and is not part of the wrench.
* :func:`eval_joint_solver_forces`: the per-DOF drive, limit, spring, damping and friction forces
  that :class:`~jaxart.solvers.SolverFeatherstone` applied during one step, recomputed from the step's
  input state, control and output velocities (consistent with its implicit scheme).
* :func:`eval_body_contact_wrenches`: the implicit contact law's force of one step summed per body.

All are pure, ``jit``/``vmap``/``grad`` compatible. Wrenches are ``(f, τ)`` as everywhere in jaxart.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.engine.constraint_rows import constraint_plan
from jaxart.dynamics.engine.dense_solve import Constraints
from jaxart.dynamics.engine.drive_inertia import drive_inertia, loop_drive_inertia
from jaxart.dynamics.engine.loop_axes import loop_axis_plan, loop_axis_rates, loop_coordinates
from jaxart.dynamics.joint_forces import acceleration_dofs, dof_static, joint_forces
from jaxart.dynamics.layout import dynamics_layout
from jaxart.dynamics.motion import block_terms
from jaxart.dynamics.rnea import body_wrenches, gather_dofs, gravity_wrenches, link_net_wrenches
from jaxart.kinematics.fk import base_bodies
from jaxart.math import quat_rotate_inv, transform_mul, transform_point
from jaxart.sim import checks
from jaxart.sim.model import Control, State

__all__ = ["eval_body_contact_wrenches", "eval_joint_solver_forces", "eval_joint_wrenches"]

_FRAMES = ("world", "joint")


def _joint_link_slots(topo, lay) -> np.ndarray:
    """Static ``(joint_count,)`` flat link slot ``a·L + k`` of every tree joint's child (``A·L`` else)."""
    a_count, links = lay.link_body.shape
    slots = np.full(topo.joint_count, a_count * links, np.int64)
    art, starts = topo.joint_articulation.array, topo.articulation_start.array
    tree = np.nonzero(art >= 0)[0]
    slots[tree] = art[tree] * links + (tree - starts[art[tree]])
    return slots


@functools.partial(jax.jit, static_argnames=("frame",))
def eval_joint_wrenches(model, state: State, joint_qdd, *, body_f=None, frame: str = "world") -> jax.Array:
    """Spatial force every tree joint transmits from its parent body to its child body.

    The wrench makes the child's subtree move with ``joint_qdd`` under gravity and ``body_f``: it
    contains the joint's constraint reaction and its actuation along the DOFs (drives, limits,
    ``joint_f``). With the accelerations of a solver step, ``(joint_qd_next − joint_qd) / dt``, it is
    the force of that step; pass contact wrenches (:func:`eval_body_contact_wrenches`) in ``body_f``
    when contacts acted. MuJoCo's ``cfrc_int[child]`` is the same wrench, written ``(τ, f)`` about the
    subtree COM of the root body.

    Args:
        model: The model.
        state: The state (``joint_q``, ``joint_qd``; ``body_q`` of static roots).
        joint_qdd: ``(joint_dof_count,)`` joint accelerations (time derivatives of ``joint_qd``).
        body_f: ``(body_count, 6)`` external world wrenches ``(f, τ about the COM)``; ``state.body_f``
            when ``None``.
        frame: ``"world"``: ``(f, τ)`` in world axes, ``τ`` about the child body's COM (the
            ``body_f`` convention). ``"joint"``: ``(f, τ)`` in the axes of the child anchor frame
            ``body_q[child] · joint_X_c``, ``τ`` about its origin (PhysX's incoming joint force).

    Returns:
        ``(joint_count, 6)`` wrenches [N, N·m]; zero rows for joints outside the articulated trees.

    Raises:
        ValueError: Bad ``frame`` or array shapes.
    """
    if frame not in _FRAMES:
        raise ValueError(f"eval_joint_wrenches: frame must be one of {_FRAMES}, got {frame!r}")
    checks.check_dynamics("eval_joint_wrenches", model, state, joint_qdd=joint_qdd, body_f=body_f)
    with jax.named_scope("jaxart.eval_joint_wrenches"):
        lay = dynamics_layout(model)
        terms = block_terms(model, state.joint_q, state.joint_qd, state.body_q)
        dtype = terms.S.dtype
        ext = body_wrenches(terms, lay, state.body_f if body_f is None else jnp.asarray(body_f, dtype))
        f_ext = gravity_wrenches(model, terms) + ext
        f = link_net_wrenches(terms, lay, gather_dofs(lay, jnp.asarray(joint_qdd, dtype)), f_ext)
        sub = jnp.einsum("aik,akx->aix", jnp.asarray(lay.subtree, dtype), f).reshape(-1, 6)
        sub = jnp.concatenate([sub, jnp.zeros((1, 6), dtype)])[_joint_link_slots(model.topology, lay)]
        child = np.maximum(model.topology.joint_child.array, 0)
        if frame == "world":
            point = jnp.concatenate([terms.com, jnp.zeros((1, 3), dtype)])[child]
        else:
            anchor = transform_mul(terms.body_q[child], model.joint_X_c.astype(dtype))
            point = anchor[:, :3]
        force = sub[:, :3]
        torque = sub[:, 3:] - jnp.cross(point, force)  # world origin → reference point
        if frame == "joint":
            force, torque = quat_rotate_inv(anchor[:, 3:], force), quat_rotate_inv(anchor[:, 3:], torque)
        return jnp.concatenate([force, torque], axis=-1)


@functools.partial(jax.jit, static_argnames=("implicit", "friction_eps", "drive_limits_are_forces",
                                             "constraint_regularization", "ignore_loop_joints"))
def eval_joint_solver_forces(model, state: State, control: Control | None, joint_qd_next, dt, *,
                             implicit: bool = True, friction_eps: float = 1e-2,
                             drive_limits_are_forces: bool = True, constraint_regularization: float | None = None,
                             ignore_loop_joints: bool = False) -> jax.Array:
    """Per-DOF joint forces :class:`~jaxart.solvers.SolverFeatherstone` applied during one step.

    The drive (PD + ``joint_act``, clamped by ``joint_effort_limit``), limit, spring, damping and
    friction forces of the step ``state → joint_qd_next`` (PhysX ``eJOINT_SOLVER_FORCES`` plus the
    passive terms). The solver evaluates them at the end of the step, ``f = f0 − (k dt² + c dt) q̈``
    with ``q̈ = (joint_qd_next − joint_qd) / dt`` (see :mod:`jaxart.dynamics.joint_forces`), so the
    value is exact for every DOF whose velocity the step did not alter after the solve: a
    ``joint_velocity_limit`` clamp or the FREE joints' ``angular_damping`` make it approximate there.
    ``joint_f`` is not included (it is an input). Tendons (stiffness, damping, limits, friction and actuators,
    fixed and spatial) add their generalized forces ``Σ_t J_tᵀ f_t'`` at the end of the step, ``f' = f − K dt L̇ −
    w J q̈`` as the step applies them (:func:`~jaxart.dynamics.engine.tendon_terms.tendon_step_loads`), less the tendons'
    armature: like ``joint_armature`` it is inertia, counted by :func:`~jaxart.dynamics.eval_inverse_dynamics_force`
    (MuJoCo's ``qM``), so the solver forces balance the inverse dynamics of the step's acceleration. Same units
    and layout as ``Control.joint_f`` for scalar DOFs; BALL/FREE/DISTANCE entries are generalized forces in the
    parent-anchor axes. Loop-closing joints' entries (:mod:`jaxart.dynamics.engine.loop_axes`) are the forces along
    their free axes as the step applied them: evaluated at the axes' coordinates measured from ``state`` with the
    axes' acceleration ``J q̈ + J̇ q̇`` (``q̈`` of the tree DOFs; the ``J̇ q̇`` term is the rates' change along the
    motion), and ACCELERATION drives on loop axes scaled by the constrained effective inertia
    (:func:`~jaxart.dynamics.engine.drive_inertia.loop_drive_inertia`).

    Args:
        model: The model.
        state: The state passed to the step.
        control: The control passed to the step (``None``: the model's defaults).
        joint_qd_next: ``(joint_dof_count,)`` joint velocities the step returned.
        dt: The step's time step [s].
        implicit: The solver's ``drive == "implicit"``.
        friction_eps: The solver's ``friction_smoothing``.
        drive_limits_are_forces: The solver's ``drive_limits_are_forces``.
        constraint_regularization: The solver's ``constraint_regularization`` (``None``: its default; read by
            ACCELERATION drives on loop axes only).
        ignore_loop_joints: The solver's ``ignore_loop_joints``.

    Returns:
        ``(joint_dof_count,)`` forces [N or N·m].
    """
    checks.check_dynamics("eval_joint_solver_forces", model, state, control=control)
    checks.check_array(joint_qd_next, (model.joint_dof_count,), "eval_joint_solver_forces: joint_qd_next")
    checks.check_dt(dt, "eval_joint_solver_forces: dt")
    with jax.named_scope("jaxart.eval_joint_solver_forces"):
        control = model.control() if control is None else control
        dtype = state.joint_q.dtype
        dt = jnp.asarray(dt, dtype)
        qdd = (jnp.asarray(joint_qd_next, dtype) - state.joint_qd) / dt
        q, qd = state.joint_q, state.joint_qd
        m_eff = drive_inertia(model, q, state.body_q) if acceleration_dofs(model.topology).any() else None
        axes = loop_axis_plan(model, ignore_loop_joints=ignore_loop_joints)
        if axes.joints:  # static: the loop axes' measured coordinates, acceleration and drive inertia
            q, qd, qdd, m_eff = _loop_axis_inputs(model, state, qdd, m_eff, axes, constraint_regularization,
                                                  ignore_loop_joints)
        f0, diag, dyad = joint_forces(model, control, q, qd, dt, implicit=implicit, friction_eps=friction_eps,
                                      drive_inertia=m_eff, limit_impulse=not drive_limits_are_forces)
        f = f0 - diag * qdd
        if dyad is not None:  # DISTANCE-limit rows: f −= w (wᵀ q̈) over each joint's six DOFs
            idx = dof_static(model.topology).dist_d0[:, None] + np.arange(6)
            f = f.at[idx].add(-dyad[idx] * jnp.sum(dyad[idx] * qdd[idx], axis=-1, keepdims=True))
        if model.tendon.tendon_count:  # static
            f = f + _tendon_solver_forces(model, state, control, qdd, dt, implicit=implicit, friction_eps=friction_eps)
        return f


def _loop_axis_inputs(model, state: State, qdd, m_eff, axes, regularization, ignore_loop_joints: bool):
    """``(joint_q, joint_qd, qdd, m_eff)`` with the loop axes' entries as the step used them: coordinates and rates
    measured from ``state``, accelerations ``J q̈ + J̇ q̇`` from the tree DOFs' ``q̈``, and (ACCELERATION drives on
    loop axes) the constrained effective inertias (:func:`~jaxart.dynamics.engine.drive_inertia.loop_drive_inertia`)."""
    q, qd, bias = loop_coordinates(model, state.joint_q, state.joint_qd, state.body_q, axes)
    acc = loop_axis_rates(model, state.joint_q, qdd, state.body_q, axes)  # J q̈ (J is linear in the velocities)
    qdd = qdd.at[axes.dofs].set(acc + bias)
    if m_eff is not None and acceleration_dofs(model.topology)[axes.dofs].any():
        if regularization is None:  # SolverFeatherstone's default
            regularization = 1e-10 if np.finfo(state.joint_q.dtype).bits >= 64 else 1e-6
        cons = Constraints(constraint_plan(model, ignore_loop_joints=ignore_loop_joints), 1.0, float(regularization),
                           axes)
        m_eff = loop_drive_inertia(model, state.joint_q, state.body_q[base_bodies(model.schedule)], cons, m_eff)
    return q, qd, qdd, m_eff


def _tendon_solver_forces(model, state: State, control: Control, qdd, dt, *, implicit: bool,
                          friction_eps: float) -> jax.Array:
    """``(joint_dof_count,)`` generalized tendon forces of the step ``Jᵀ (f − K dt L̇) − Jᵀ w' J q̈`` (explicit:
    without ``K dt L̇``; ``f`` with friction; ``w'`` without the armature, whose ``a Jᵀ (J q̈ + J̇q̇)`` is inertia),
    from the step's own loads (:func:`~jaxart.dynamics.engine.tendon_terms.tendon_step_loads`)."""
    from jaxart.dynamics.engine.tendon_terms import tendon_step_loads
    from jaxart.dynamics.inverse_dynamics import eval_generalized_external_force, tendon_armature_force

    joint_f, body_f, rows = tendon_step_loads(model, control, state.joint_q, state.joint_qd, state.body_q,
                                              state.body_qd, dt, implicit=implicit, friction_eps=friction_eps)
    jac, w = rows  # the rank-one rows at the step's accelerations
    # the armature's reaction −a Jᵀ (J q̈ + J̇q̇) is inertia, counted by eval_inverse_dynamics_force (as joint armature)
    f = joint_f - eval_generalized_external_force(model, state, body_f=body_f) - jac.T @ (w * (jac @ qdd))
    return f + tendon_armature_force(model, state, qdd)


def eval_body_contact_wrenches(model, state: State, contacts, joint_qd_next, dt, *,
                               stiction_velocity: float = 1e-4, activation_length: float = 1e-5) -> jax.Array:
    """Per-body world wrench of the implicit contact forces of one step (``contact="implicit"``).

    Sums :func:`~jaxart.contact.implicit.implicit_contact_forces` per body: body B of a row receives
    ``f`` at the contact point, body A ``−f``. Pass the result as ``body_f`` (plus ``state.body_f``) to
    :func:`eval_joint_wrenches` to include contacts in the joint wrenches.

    Args:
        model: The model.
        state: State at the start of the step.
        contacts: ``model.collide(state)``, as passed to the step.
        joint_qd_next: ``(joint_dof_count,)`` joint velocities the step returned.
        dt: The step's time step [s].
        stiction_velocity: The solver's ``stiction_velocity`` [m/s].
        activation_length: The solver's ``contact_activation_length`` [m].

    Returns:
        ``(body_count, 6)`` world wrenches ``(f, τ about the body's COM)`` [N, N·m].
    """
    from jaxart.contact.implicit import implicit_contact_forces

    checks.check_state(model, state, "eval_body_contact_wrenches: state")
    checks.check_array(joint_qd_next, (model.joint_dof_count,), "eval_body_contact_wrenches: joint_qd_next")
    checks.check_contacts(contacts, "eval_body_contact_wrenches: contacts")
    checks.check_dt(dt, "eval_body_contact_wrenches: dt")
    n = model.body_count
    force = implicit_contact_forces(model, state, contacts, joint_qd_next, dt, stiction_velocity=stiction_velocity,
                                    activation_length=activation_length)
    body_a, body_b = (contacts.body_a, contacts.body_b) if contacts.slot_bodies is None else (
        np.asarray(b, np.int32) for b in contacts.slot_bodies)
    com = transform_point(state.body_q, model.body_com.astype(force.dtype))
    out = jnp.zeros((n + 1, 6), force.dtype)
    for body, sign in ((body_b, 1.0), (body_a, -1.0)):
        slot = jnp.where(jnp.asarray(body) < 0, n, jnp.asarray(body))
        c = jnp.concatenate([com, jnp.zeros((1, 3), force.dtype)])[slot]
        f = sign * force
        out = out.at[slot].add(jnp.concatenate([f, jnp.cross(contacts.point - c, f)], axis=-1))
    return out[:n]
