"""Public tendon evaluations: lengths, rates and forces of the model's tendons at a state.

The kinematics and the force laws are in :mod:`jaxart.dynamics.tendon_forces`; SolverFeatherstone's step loads in
:mod:`jaxart.dynamics.engine.tendon_terms`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.inverse_dynamics import eval_generalized_external_force
from jaxart.dynamics.tendon_forces import tendon_actuator_forces, tendon_forces, tendon_kinematics, tendon_scalar_forces
from jaxart.sim.model import Model, State
from jaxart.sim.tendons import TendonType

__all__ = [
    "eval_tendon_actuator_forces",
    "eval_tendon_forces",
    "eval_tendon_joint_forces",
    "eval_tendon_lengths",
    "eval_tendon_velocities",
    "resolve_springlength",
]


def _check(fn: str, model: Model, state: State) -> None:
    from jaxart.sim.checks import check_dynamics

    if not isinstance(model, Model):
        raise TypeError(f"{fn}: model must be a jaxart Model, got {type(model).__name__}")
    check_dynamics(fn, model, state)


def eval_tendon_lengths(model: Model, state: State) -> jax.Array:
    """``(tendon_count,)`` tendon lengths [m] (MuJoCo's ``ten_length``); spatial tendons use ``state.body_q``."""
    _check("eval_tendon_lengths", model, state)
    return tendon_kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)[0]


def eval_tendon_velocities(model: Model, state: State) -> jax.Array:
    """``(tendon_count,)`` tendon length rates [m/s] (MuJoCo's ``ten_velocity``) from ``joint_qd`` / ``body_qd``."""
    _check("eval_tendon_velocities", model, state)
    return tendon_kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)[1]


def eval_tendon_forces(model: Model, state: State) -> jax.Array:
    """``(tendon_count,)`` scalar tendon forces [N] (spring, damping and limit; positive lengthens)."""
    _check("eval_tendon_forces", model, state)
    length, speed, _ = tendon_kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    return tendon_scalar_forces(model, length, speed)


def eval_tendon_joint_forces(model: Model, state: State) -> jax.Array:
    """``(joint_dof_count,)`` generalized force ``Σ_t J_tᵀ f_t`` of all tendons (MuJoCo's tendon part of
    ``qfrc_passive`` when no limit is active), in the ``Control.joint_f`` convention."""
    _check("eval_tendon_joint_forces", model, state)
    joint_f, body_f = tendon_forces(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    if not (np.asarray(model.tendon.tendon_type) == TendonType.SPATIAL).any():
        return joint_f
    return joint_f - eval_generalized_external_force(model, state, body_f=body_f)


def eval_tendon_actuator_forces(model: Model, state: State, control=None) -> jax.Array:
    """``(tendon_count,)`` tendon actuator forces [N] ``tendon_f + ke (L* − L) + kd (L̇* − L̇)`` (positive
    lengthens; MuJoCo's ``actuator_force`` of a gear-1 tendon actuator), clamped to ``±tendon_effort_limit``;
    ``control=None``: the model defaults."""
    _check("eval_tendon_actuator_forces", model, state)
    length, speed, _ = tendon_kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    return tendon_actuator_forces(model, control, length, speed)[0]


def resolve_springlength(model: Model) -> Model:
    """Replace ``(-1, -1)`` spring lengths and NaN (``None``) drive target lengths by the tendon lengths in the
    model's initial configuration."""
    from jaxart.kinematics import eval_fk

    rest = np.asarray(model.tendon_springlength)
    target = np.asarray(model.tendon_target_length)
    unset, unset_target = (rest == -1.0).all(axis=-1), np.isnan(target)
    if not (unset.any() or unset_target.any()):
        return model
    def initial_lengths(m):
        state = eval_fk(m, m.joint_q, m.joint_qd, m.state())
        return tendon_kinematics(m, state.joint_q, state.joint_qd, state.body_q, state.body_qd)[0]

    # one compiled program: op-by-op (eager) FK compiles every small op separately and took seconds
    length = np.asarray(jax.jit(initial_lengths)(model))
    rest = np.where(unset[:, None], length[:, None], rest)
    target = np.where(unset_target, length, target)
    return model.replace(tendon_springlength=jnp.asarray(rest, model.tendon_springlength.dtype),
                         tendon_target_length=jnp.asarray(target, model.tendon_target_length.dtype))
