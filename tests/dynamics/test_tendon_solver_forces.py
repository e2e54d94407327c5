"""Tendon forces in :func:`jaxart.dynamics.eval_joint_solver_forces` (the generalized forces a step's tendons applied).

Oracles: a pendulum held at rest by a fixed tendon's spring and actuator against gravity (the statics by hand:
``c (k (L₀ − L) + ke (L* − L)) = m g l sin θ``), and, away from equilibrium with a spatial tendon stretched, the
inverse dynamics of the step's own acceleration (``M q̈ + C q̇ + g`` equals the forces the step applied).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import brentq

import jaxart
from jaxart.dynamics import eval_joint_solver_forces
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
DT, MASS, ARM, C, K, KE, L0, LT = 1e-2, 1.0, 0.25, 0.5, 20.0, 10.0, 0.3, 0.2
G = 9.81


def _theta_eq() -> float:
    return brentq(lambda t: C * (K * (L0 - C * t) + KE * (LT - C * t)) - MASS * G * ARM * np.sin(t), 0.0, 1.5)


@functools.lru_cache(maxsize=1)
def _model():
    """A pendulum about x at rest at its equilibrium; a fixed tendon (spring, damping, actuator) on its hinge and a
    spatial tendon (spring, damping) from the world to the link, at its rest length there."""
    b = jaxart.ModelBuilder()
    link = b.add_link(xform=((0, 0, 1.0), (0, 0, 0, 1)), mass=MASS, com=(0, 0, -ARM), inertia=[0.01, 0.012, 0.008],
                      label="link")
    hinge = b.add_joint_revolute(-1, link, axis=(1, 0, 0), parent_xform=((0, 0, 1.0), (0, 0, 0, 1)), label="hinge")
    b.add_articulation([hinge])
    b.joint_q[0] = _theta_eq()
    b.add_tendon_fixed([(hinge, C)], stiffness=K, damping=2.0, springlength=L0, target_ke=KE, target_length=LT)
    b.add_tendon_spatial([(-1, (0.0, 0.4, 1.2)), (link, (0.0, 0.05, -0.2))], stiffness=40.0, damping=1.0)
    return b.finalize(dtype=F64)


@jax.jit
def _step_and_forces(model, joint_q, joint_qd):
    st = jaxart.eval_fk(model, joint_q, joint_qd, model.state())
    nxt = SolverFeatherstone(model).step(st, None, None, DT)
    return st, nxt.joint_qd, eval_joint_solver_forces(model, st, None, nxt.joint_qd, DT)


def test_static_fixed_tendon_load_matches_the_spring_and_actuator_law():
    model = _model()
    theta = _theta_eq()
    _, qd1, f = _step_and_forces(model, model.joint_q, model.joint_qd)
    assert abs(float(qd1[0])) < 1e-12  # at rest
    spring_law = C * (K * (L0 - C * theta) + KE * (LT - C * theta))
    np.testing.assert_allclose(f, [spring_law], atol=1e-10)
    np.testing.assert_allclose(f, [MASS * G * ARM * np.sin(theta)], atol=1e-10)


def test_tendon_solver_forces_equal_the_inverse_dynamics_of_the_step():
    """Swinging away from equilibrium (both tendons stretched, implicit stiffness and damping in the step): the forces
    the step applied balance ``M q̈ + C q̇ + g`` of its acceleration; without the implicit ``w J q̈`` term they would
    miss it by 0.4 N·m."""
    model = _model()
    st, qd1, f = _step_and_forces(model, model.joint_q + 0.4, jnp.array([1.5], F64))
    qdd = (qd1 - st.joint_qd) / DT
    tau = jaxart.eval_inverse_dynamics_force(model, st, qdd)
    np.testing.assert_allclose(f, tau, atol=1e-9)
    assert abs(float(qdd[0])) > 1.0
