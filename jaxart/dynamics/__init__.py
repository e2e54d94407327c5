"""Reduced-coordinate dynamics: Jacobians, mass matrix (CRBA), RNEA and forward/inverse dynamics.

All quantities are evaluated per articulation in padded dense blocks with static ancestor masks
(world-origin Plücker coordinates), pure and ``jit``/``vmap``/``grad`` compatible.
"""

from jaxart.dynamics.forward_dynamics import eval_forward_dynamics
from jaxart.dynamics.inverse_dynamics import (
    eval_generalized_external_force,
    eval_inverse_dynamics_force,
    eval_inverse_dynamics_passive,
)
from jaxart.dynamics.jacobian import eval_jacobian
from jaxart.dynamics.joint_wrenches import eval_body_contact_wrenches, eval_joint_solver_forces, eval_joint_wrenches
from jaxart.dynamics.mass_matrix import eval_mass_matrix
from jaxart.dynamics.tendons import (
    eval_tendon_actuator_forces,
    eval_tendon_forces,
    eval_tendon_joint_forces,
    eval_tendon_lengths,
    eval_tendon_velocities,
)

__all__ = [
    "eval_body_contact_wrenches",
    "eval_forward_dynamics",
    "eval_generalized_external_force",
    "eval_inverse_dynamics_force",
    "eval_inverse_dynamics_passive",
    "eval_jacobian",
    "eval_joint_solver_forces",
    "eval_joint_wrenches",
    "eval_mass_matrix",
    "eval_tendon_actuator_forces",
    "eval_tendon_forces",
    "eval_tendon_joint_forces",
    "eval_tendon_lengths",
    "eval_tendon_velocities",
]
