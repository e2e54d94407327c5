"""Loop-closing joints' entries of :func:`jaxart.dynamics.eval_joint_solver_forces`.

Oracle: the step's joint-space balance. A pendulum spinning about its hinge is also held by a loop-closing DISTANCE
joint (no distance limits: it locks nothing, so there are no constraint forces) from a world anchor to its COM,
driven on its linear DOFs. The loop axes' coordinates are the COM offset from the anchor, nonlinear in the hinge
angle, so their acceleration ``J q̈ + J̇ q̇`` has the centripetal term ``J̇ q̇``. The generalized force the step applied
on the hinge is ``M q̈ + C q̇ + g = J_Lᵀ f_L`` with ``f_L`` the loop axes' solver forces, to round-off.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.dynamics import eval_inverse_dynamics_force, eval_joint_solver_forces
from jaxart.dynamics.engine.loop_axes import loop_axis_plan, loop_axis_rates, loop_coordinates
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
DT = 5e-3
LOOP = slice(1, 4)  # the loop DISTANCE joint's linear DOFs (the hinge is DOF 0)
KD = np.array([1.0, 40.0, 2.0])  # unequal: the centripetal J̇q̇ (normal to the motion) then does work on the hinge


@functools.lru_cache(maxsize=2)
def _spinning_pendulum(drive_type: str):
    b = jaxart.ModelBuilder()
    link = b.add_link(xform=((0, 0, 1.0), (0, 0, 0, 1)), mass=1.2, com=(0.0, 0.05, -0.5),
                      inertia=[0.02, 0.03, 0.01], label="arm")
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(1, 0, 0), parent_xform=((0, 0, 1.0), (0, 0, 0, 1)))])
    b.add_joint_distance(-1, link, parent_xform=((0.1, 0.3, 0.4), (0, 0, 0, 1)),
                         child_xform=((0.0, 0.05, -0.5), (0, 0, 0, 1)), max_distance=-1.0, label="loop")
    for d in range(LOOP.start, LOOP.stop):
        b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION_VELOCITY)
        b.joint_drive_type[d] = int(getattr(jaxart.JointDriveType, drive_type))
        b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = 20.0, KD[d - LOOP.start]
    b.joint_qd[0] = 6.0  # rad/s
    model = b.finalize(dtype=F64)
    return model.replace(joint_target_q=model.joint_target_q.at[1:4].set(jnp.array([-0.1, -0.2, -0.7])))


@pytest.mark.parametrize("drive_type", [pytest.param("FORCE", marks=pytest.mark.slow), "ACCELERATION"])
def test_loop_axis_solver_forces_balance_the_step(drive_type):
    model = _spinning_pendulum(drive_type)
    st = jaxart.eval_fk(model, model.joint_q.at[0].set(0.4), model.joint_qd, model.state())
    nxt = SolverFeatherstone(model).step(st, None, None, DT)
    tau = np.asarray(eval_joint_solver_forces(model, st, None, nxt.joint_qd, DT))
    qdd = (nxt.joint_qd - st.joint_qd) / DT
    inv = float(eval_inverse_dynamics_force(model, st, qdd)[0])
    axes = loop_axis_plan(model)
    hinge = np.asarray(loop_axis_rates(model, st.joint_q, jnp.zeros(model.joint_dof_count).at[0].set(1.0),
                                       st.body_q, axes))[:3]  # the loop axes' rates per unit hinge rate
    assert inv == pytest.approx(hinge @ tau[LOOP] + tau[0], abs=1e-9)  # tau[0]: the hinge has no terms
    assert tau[0] == 0.0
    # the centripetal term J̇q̇ matters here: its implicit force on the hinge is far above the tolerance
    bias = np.asarray(loop_coordinates(model, st.joint_q, st.joint_qd, st.body_q, axes)[2])[:3]
    assert abs(hinge @ (KD * DT * bias)) > 0.1
