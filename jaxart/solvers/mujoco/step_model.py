"""Per-step changes of the MuJoCo bridge's ``mjx.Model``: acceleration-drive gains and loop rate actuators.

* ``ACCELERATION`` drives (PhysX ``eACCELERATION``): the gains and biases of their actuators are multiplied by the
  DOF's effective inertia at the step's state — ``1/(M⁻¹)_ii`` for tree DOFs
  (:func:`~jaxart.dynamics.engine.drive_inertia.drive_inertia`, jaxart's mass matrix with armature), and for the axes of
  loop-closing joints SolverFeatherstone's ``1/(J W Jᵀ)`` of the constrained system
  (:func:`~jaxart.dynamics.engine.drive_inertia.loop_drive_inertia` with SolverFeatherstone's default regularisation),
  so
  a loop joint's acceleration drive gets the inertia SolverFeatherstone gives it, whether its actuators are site
  transmissions, auxiliary-joint actuators or rate actuators. Only models with such drives pay for it.
* Rate actuators of loop joints (:mod:`jaxart.solvers.mujoco.loop_rates`): reference-site positions and angular
  gears from the step's body poses.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.engine.drive_inertia import drive_inertia
from jaxart.dynamics.joint_forces import acceleration_dofs
from jaxart.sim.enums import JointType
from jaxart.solvers.mujoco.loop_rates import RatePlan, rate_plan, update_rate_model


class StepModel(NamedTuple):
    """Static plan of the per-step model changes (:func:`step_model_plan`).

    Attributes:
        accel: ``(actuator ids, jaxart DOFs)`` of the acceleration-drive actuators, or ``None``.
        loop_accel: Whether an acceleration-drive DOF is a loop-closing joint's axis.
        rates: The rate actuators' :class:`~jaxart.solvers.mujoco.loop_rates.RatePlan`, or ``None``.
    """

    accel: tuple | None
    loop_accel: bool
    rates: RatePlan | None


def step_model_plan(model, layout, mj_model, rec) -> StepModel | None:
    """The :class:`StepModel` of a converted model, or ``None`` when nothing changes per step.

    Args:
        model: The jaxart model.
        layout: The resolved :class:`~jaxart.solvers.mujoco.layout.MjLayout`.
        mj_model: The compiled ``MjModel``.
        rec: The layout recorder of the conversion.
    """
    accel = _acceleration_actuators(model, layout)
    rates = rate_plan(mj_model, rec)
    if accel is None and rates is None:
        return None
    loop_accel = False
    if accel is not None:
        art = np.asarray(model.topology.joint_articulation.array)
        ds = np.asarray(model.topology.joint_qd_start.array)
        loop_dofs = np.concatenate([np.arange(ds[j], ds[j + 1]) for j in np.flatnonzero(art < 0)] + [[]])
        loop_accel = bool(np.isin(accel[1], loop_dofs).any())
    return StepModel(accel, loop_accel, rates)


def update_step_model(m, plan: StepModel, model, state):
    """``m`` (an ``mjx.Model``) with the changes of ``plan`` at ``state`` (jittable; module docstring)."""
    if plan.accel is not None:
        m = _scale_actuators(m, plan, model, state)
    if plan.rates is not None:
        m = update_rate_model(m, plan.rates, model, state.body_q)
    return m


def effective_inertia(model, state, *, loops: bool) -> jnp.ndarray:
    """``(joint_dof_count,)`` effective inertias of the acceleration drives at ``state`` (module docstring);
    ``loops``: also those of the loop-closing joints' axes."""
    m_eff = drive_inertia(model, state.joint_q, state.body_q)
    if not loops:
        return m_eff
    from jaxart.dynamics.engine.constraint_rows import constraint_plan
    from jaxart.dynamics.engine.dense_solve import Constraints
    from jaxart.dynamics.engine.drive_inertia import loop_drive_inertia
    from jaxart.dynamics.engine.loop_axes import loop_axis_plan
    from jaxart.kinematics.fk import base_bodies

    axes = loop_axis_plan(model)
    if not axes.joints:
        return m_eff
    reg = 1e-10 if np.finfo(state.joint_q.dtype).bits >= 64 else 1e-6  # SolverFeatherstone's default
    cons = Constraints(constraint_plan(model), 1.0, reg, axes)
    return loop_drive_inertia(model, state.joint_q, state.body_q[base_bodies(model.schedule)], cons, m_eff)


def _acceleration_actuators(model, layout):
    """Static ``(actuator ids, jaxart DOFs)`` of the drive actuators of ``ACCELERATION`` DOFs, or ``None``."""
    topo = model.topology
    accel = acceleration_dofs(topo)
    if not accel.any():
        return None
    qs, ds = np.asarray(topo.joint_q_start.array), np.asarray(topo.joint_qd_start.array)
    jtype = np.asarray(topo.joint_type.array)
    coord_dof = np.full(model.joint_coord_count, -1)
    for j in range(topo.joint_count):
        n = int(ds[j + 1] - ds[j])
        if jtype[j] not in (JointType.BALL, JointType.FREE, JointType.DISTANCE) and qs[j + 1] - qs[j] == n:
            coord_dof[qs[j]:qs[j] + n] = ds[j] + np.arange(n)
        elif jtype[j] == JointType.BALL:
            coord_dof[qs[j]] = ds[j]  # first DOF of the BALL joint whose quaternion starts here
        elif jtype[j] in (JointType.FREE, JointType.DISTANCE):  # slide-mapped: slides, then the ball quaternion
            coord_dof[qs[j]:qs[j] + 4] = ds[j] + np.arange(4)
    pairs = [(int(a), int(coord_dof[c])) for a, c in zip(layout.pos_act, layout.pos_src, strict=True)]
    pairs += [(int(a), int(d)) for a, d in zip(layout.vel_act, layout.vel_src, strict=True)]
    pairs += [(int(a), int(coord_dof[src[0]] + k))
              for a, src, k in zip(layout.ball_act, layout.ball_src, layout.ball_comp, strict=True)]
    pairs = [(a, d) for a, d in pairs if d >= 0 and accel[d]]
    if not pairs:
        return None
    return np.asarray([a for a, _ in pairs], np.int32), np.asarray([d for _, d in pairs], np.int32)


def _scale_actuators(m, plan: StepModel, model, state):
    """``m`` with the gains and biases of the acceleration-drive actuators times the DOFs' effective inertias."""
    act, dof = plan.accel
    ft = m.actuator_gainprm.dtype
    m_eff = effective_inertia(model, state, loops=plan.loop_accel)[dof].astype(ft)
    gain = m.actuator_gainprm.at[act, 0].multiply(m_eff)
    bias = m.actuator_biasprm.at[act, 1:3].multiply(m_eff[:, None])
    return m.replace(actuator_gainprm=gain, actuator_biasprm=bias)
