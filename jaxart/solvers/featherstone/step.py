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

import functools

import jax
import jax.numpy as jnp

from jaxart.dynamics.aba import aba_from_base, aba_kernel, dense_from_base
from jaxart.dynamics.integrate import integrate_coords, integrate_kernel
from jaxart.dynamics.joint_forces import dof_static, joint_forces, static_columns
from jaxart.dynamics.layout import dynamics_layout
from jaxart.kinematics.fk import base_bodies, fk_bodies_kernel, fk_from_base
from jaxart.math.checkpoint import checkpointed_jit
from jaxart.math.lanes import lanes
from jaxart.sim.model import Control, Model, State


@functools.partial(checkpointed_jit, static_argnames=("angular_damping", "implicit", "friction_eps"))
def featherstone_step(model: Model, state: State, control: Control | None, dt, *, angular_damping: float = 0.05,
                      implicit: bool = True, friction_eps: float = 1e-2, extra_body_f=None) -> State:
    """One pure solver step (see :class:`~jaxart.solvers.SolverFeatherstone`).

    Args:
        model: The model.
        state: Current state.
        control: Control or ``None``.
        dt: Time step [s].
        angular_damping: FREE angular damping rate.
        implicit: Implicit drives/springs/damping/limits.
        friction_eps: Friction smoothing velocity.
        extra_body_f: Optional ``(body_count, 6)`` additional world wrenches at the COMs (the contact
            seam: contact forces enter here, i.e. as ``Jᵀ f``).

    Returns:
        The new state.
    """
    with jax.named_scope("jaxart.featherstone_step"):
        control = model.control() if control is None else control
        dt = jnp.asarray(dt, state.joint_q.dtype)
        body_f = state.body_f if extra_body_f is None else state.body_f + extra_body_f
        if dof_static(model.topology).dist_joint.size:  # static: DISTANCE limits may need the dense solve
            step = functools.partial(_step_plain, angular_damping=angular_damping, implicit=implicit,
                                     friction_eps=friction_eps)
        else:
            step = _step_lanes(angular_damping, implicit, friction_eps)
        rows = base_bodies(model.schedule)
        q, qd, body_q, body_qd = step(model, state.joint_q, state.joint_qd, state.body_q[rows], state.body_qd[rows],
                                      body_f, control, dt)
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


def _step_plain(model, joint_q, joint_qd, base_q, base_qd, body_f, control, dt, *, angular_damping, implicit,
                friction_eps):
    """Per-world step from the base bodies' poses/twists (see the module docstring)."""
    f0, diag, dyad = joint_forces(model, control, joint_q, joint_qd, dt, implicit=implicit, friction_eps=friction_eps)
    args = (model, joint_q, joint_qd, base_q, control.joint_f, f0, model.joint_armature + diag, body_f)
    if dyad is None:  # every implicit term is diagonal: O(n) articulated-body algorithm
        qdd = aba_from_base(*args)
    else:  # implicit DISTANCE-limit rows (rank one per joint): dense solve
        qdd = dense_from_base(*args, dyad=dyad)
    qd = _new_velocities(model, joint_qd, qdd, dt, angular_damping)
    q = integrate_coords(model, joint_q, qd, dt)
    return (q, qd, *fk_from_base(model, q, qd, base_q, base_qd))


def _step_kernel(model, joint_q, joint_qd, base_q, base_qd, body_f, control, dt, *, angular_damping, implicit,
                 friction_eps):
    """Lane kernel of the step (models without DISTANCE limits: every implicit term is diagonal)."""
    f0, diag, _ = joint_forces(model, control, joint_q, joint_qd, dt, implicit=implicit, friction_eps=friction_eps)
    qdd = aba_kernel(model, joint_q, joint_qd, base_q, control.joint_f, f0, model.joint_armature + diag, body_f)
    qd = _new_velocities(model, joint_qd, qdd, dt, angular_damping)
    q = integrate_kernel(model, joint_q, qd, dt)
    return (q, qd, *fk_bodies_kernel(model, q, qd, base_q, base_qd))


@functools.lru_cache(maxsize=32)
def _step_lanes(angular_damping: float, implicit: bool, friction_eps: float):
    options = dict(angular_damping=angular_damping, implicit=implicit, friction_eps=friction_eps)
    return lanes(functools.partial(_step_kernel, **options), plain=functools.partial(_step_plain, **options))
