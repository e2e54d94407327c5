"""ACCELERATION drives on loop-closing joints (:func:`jaxart.dynamics.engine.drive_inertia.loop_drive_inertia`).

Oracle: a body on a FREE root hung from the world by a loop-closing REVOLUTE joint about the vertical (gravity exerts
no torque about it), its hinge driven by an acceleration drive: the effective inertia of the hinge in the constrained
system is the body's inertia about the hinge, so the angle follows the closed-form recursion of the implicit law
``θ̈ = (ke (θ* − θ − dt θ̇) − kd θ̇) / (1 + ke dt² + kd dt)`` whatever the body's mass, COM and inertia — as the same
drive on a tree REVOLUTE joint does.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.dynamics.engine.constraint_rows import constraint_plan
from jaxart.dynamics.engine.dense_solve import Constraints
from jaxart.dynamics.engine.drive_inertia import loop_drive_inertia
from jaxart.dynamics.engine.loop_axes import loop_axis_plan
from jaxart.kinematics.fk import base_bodies
from jaxart.sim.validate import np_transform_inverse, np_transform_mul
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
DT, STEPS, KE, KD, TARGET = 5e-3, 200, 40.0, 4.0, 0.8
X_P = ((0.1, -0.2, 1.5), (0.0, 0.0, np.sin(0.35), np.cos(0.35)))  # about z: the hinge stays vertical
X_C = ((0.15, 0.05, 0.02), (0.0, 0.0, 0.0, 1.0))


@functools.lru_cache(maxsize=2)
def _model(loop: bool):
    b = jaxart.ModelBuilder()
    x_b = np_transform_mul(np.r_[X_P[0], X_P[1]], np_transform_inverse(np.r_[X_C[0], X_C[1]]))  # hinge angle 0
    body = b.add_link(xform=(x_b[:3], x_b[3:]), mass=1.0, com=(0.3, 0.1, 0.0),
                      inertia=[0.01, 0.012, 0.008], label="door")
    hinge = dict(axis=(0, 0, 1), parent_xform=X_P, child_xform=X_C, label="hinge")
    if loop:
        b.add_articulation([b.add_joint_free(body)])
        b.add_joint_revolute(-1, body, **hinge)
    else:
        b.add_articulation([b.add_joint_revolute(-1, body, **hinge)])
    d = len(b.joint_target_mode) - 1
    b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION)
    b.joint_drive_type[d] = int(jaxart.JointDriveType.ACCELERATION)
    b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = KE, KD
    m = b.finalize(dtype=F64)
    return m.replace(joint_target_q=m.joint_target_q.at[-1].set(TARGET))


@jax.jit
def _angles(model):
    solver = SolverFeatherstone(model, angular_damping=0.0)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

    def body(s, _):
        s = solver.step(s, None, None, DT)
        return s, s.joint_q[-1]  # the hinge's angle (the loop joint's measured coordinate)

    return jax.lax.scan(body, st, None, length=STEPS)[1]


def _closed_form() -> np.ndarray:
    th, v, out = 0.0, 0.0, []
    for _ in range(STEPS):
        v += DT * (KE * (TARGET - th - DT * v) - KD * v) / (1.0 + KE * DT * DT + KD * DT)
        th += DT * v
        out.append(th)
    return np.array(out)


def _with_inertia(model, mass, com, inertia):
    return model.replace(body_mass=model.body_mass.at[0].set(mass), body_com=model.body_com.at[0].set(
        jnp.asarray(com, F64)), body_inertia=model.body_inertia.at[0].set(jnp.diag(jnp.asarray(inertia, F64))))


def test_loop_axis_effective_inertia_is_the_inertia_about_the_hinge():
    """``1/(J W Jᵀ)`` of the loop hinge = ``I_zz + m r²`` about the hinge axis (0.008 + 0.15² + 0.05² kg·m²), not the
    free body's unconstrained ``I_zz`` (0.008)."""
    model = _model(True)
    cons = Constraints(constraint_plan(model), 1.0, 1e-10, loop_axis_plan(model))
    base_q = model.body_q[base_bodies(model.schedule)]
    m_eff = jax.jit(loop_drive_inertia, static_argnums=3)(model, model.joint_q, base_q, cons,
                                                          jnp.zeros(model.joint_dof_count, F64))
    np.testing.assert_allclose(m_eff[-1], 0.008 + 0.15**2 + 0.05**2, rtol=1e-7)
    np.testing.assert_array_equal(m_eff[:-1], 0.0)  # the tree DOFs' entries are passed through


@pytest.mark.slow  # two compiled rollouts; the effective inertia itself is checked above
def test_loop_acceleration_drive_is_independent_of_the_link_inertia_and_matches_the_tree_drive():
    """Loop hinge with two very different bodies (1 kg, COM 0.32 m off the hinge / 7 kg, COM 0.11 m off, other
    inertia) and the tree hinge follow the closed-form recursion of the acceleration law: the tree to rounding, the
    loop joints within the O(dt²) drift of the free body's anchor that the Baumgarte rows remove each step (5e-5 rad
    over 1 s; scaling by the unconstrained response ``1/(J A⁻¹ Jᵀ)`` instead would slow the light body 14-fold)."""
    ref = _closed_form()
    np.testing.assert_allclose(_angles(_model(False)), ref, atol=1e-10)
    loop = _model(True)
    heavy = _with_inertia(loop, 7.0, (0.0, 0.05, 0.1), (0.2, 0.05, 0.03))
    for m in (loop, heavy):
        np.testing.assert_allclose(_angles(m), ref, atol=1e-4)
    assert ref.max() > 0.7  # it moved most of the way to the target (0.8 rad)
