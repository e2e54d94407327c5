"""Loop-closing joints' ``joint_q``/``joint_qd`` written by SolverFeatherstone (:func:`loop_joint_state`).

Oracle: the same bodies hung from tree joints of the same types and frames; :func:`jaxart.eval_ik` of that tree model
at the loop model's body poses and twists gives each joint's coordinates and velocities in the tree's convention
(REVOLUTE angle, PRISMATIC slide, BALL quaternion, D6 per axis, FREE/DISTANCE anchor pose and COM twist).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from equality_models import fourbar_builder

import jaxart
from jaxart.solvers import SolverFeatherstone
from jaxart.solvers.featherstone.loop_state import loop_joint_state, loop_state_plan

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
INERTIA = [0.01, 0.012, 0.008]
BODIES = ("arm", "slider", "ball", "rope", "d6", "free")


def _rot(axis, angle):
    axis = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    return tuple(np.r_[axis * np.sin(angle / 2), np.cos(angle / 2)])


def _add_joints(b, ids):
    """One joint of each type with non-identity anchor frames; a PRISMATIC and a DISTANCE joint on moving parents."""
    arm, slider, ball, rope, d6, free = (ids[k] for k in BODIES)
    yield b.add_joint_revolute(-1, arm, axis=(0, 1, 0), parent_xform=((0, 0, 2.0), _rot((1, 0, 0), 0.3)),
                               child_xform=((0, 0, 0.3), (0, 0, 0, 1)), label="j_arm")
    yield b.add_joint_prismatic(arm, slider, axis=(1, 0, 1), parent_xform=((0.2, 0, 0), _rot((0, 0, 1), 0.4)),
                                child_xform=((0, 0.05, 0), (0, 0, 0, 1)), label="j_slider")
    yield b.add_joint_ball(-1, ball, parent_xform=((1.0, 0, 2.0), _rot((0, 1, 0), 0.2)),
                           child_xform=((0, 0, 0.25), (0, 0, 0, 1)), label="j_ball")
    yield b.add_joint_distance(ball, rope, parent_xform=((0, 0, -0.2), (0, 0, 0, 1)),
                               child_xform=((0.05, 0, 0.1), _rot((1, 1, 0), 0.5)), max_distance=-1.0, label="j_rope")
    yield b.add_joint_d6(-1, d6, linear_axes=[(0, 0, 1)], angular_axes=[(1, 0, 0), (0, 1, 0)],
                         parent_xform=((-1.0, 0, 2.0), _rot((0, 0, 1), 0.7)), child_xform=((0, 0, 0.2), (0, 0, 0, 1)),
                         label="j_d6")
    yield b.add_joint_free(free, parent_xform=((0, 1.0, 1.0), _rot((1, 0, 0), -0.4)),
                           child_xform=((0.1, 0, 0), _rot((0, 0, 1), 0.3)), label="j_free")


def _links(b):
    return {k: b.add_link(mass=1.0 + 0.1 * i, com=(0.02, -0.01, 0.03), inertia=INERTIA, label=k)
            for i, k in enumerate(BODIES)}


@functools.lru_cache(maxsize=1)
def _tree():
    b = jaxart.ModelBuilder()
    j = list(_add_joints(b, _links(b)))
    for group in ((j[0], j[1]), (j[2], j[3]), (j[4],), (j[5],)):
        b.add_articulation(list(group))
    m = b.finalize(dtype=F64)
    q = np.asarray(m.joint_q).copy()
    qs = np.asarray(m.topology.joint_q_start.array)
    q[qs[0]], q[qs[1]] = 0.4, 0.15
    q[qs[2]:qs[2] + 4] = _rot((1, 2, 3), 0.5)
    q[qs[3]:qs[3] + 7] = np.r_[0.1, -0.05, -0.3, _rot((0, 1, 1), 0.6)]
    q[qs[4]:qs[4] + 3] = (0.05, 0.3, -0.2)
    q[qs[5]:qs[5] + 7] = np.r_[0.2, 0.1, -0.1, _rot((1, 0, 1), 0.8)]
    qd = np.linspace(-1.0, 1.5, m.joint_dof_count)
    return m.replace(joint_q=jnp.asarray(q), joint_qd=jnp.asarray(qd))


@functools.lru_cache(maxsize=1)
def _loops():
    """Every body on its own FREE tree joint, each tree joint of :func:`_tree` as a loop-closing joint."""
    tree = _tree()
    st = jaxart.eval_fk(tree, tree.joint_q, tree.joint_qd, tree.state())
    b = jaxart.ModelBuilder()
    ids = {k: b.add_link(xform=(np.asarray(st.body_q[i, :3]), np.asarray(st.body_q[i, 3:])), mass=1.0 + 0.1 * i,
                         com=(0.02, -0.01, 0.03), inertia=INERTIA, label=k) for i, k in enumerate(BODIES)}
    for k in BODIES:
        b.add_articulation([b.add_joint_free(ids[k], label=f"root_{k}")])
    loops = list(_add_joints(b, ids))
    m = b.finalize(dtype=F64)
    qd = jaxart.eval_ik(m, st.replace(joint_q=m.joint_q, joint_qd=m.joint_qd))[1]
    return m.replace(joint_qd=qd), loops, st


def _entries(model, j):
    topo = model.topology
    qs, ds = topo.joint_q_start.array, topo.joint_qd_start.array
    return slice(int(qs[j]), int(qs[j + 1])), slice(int(ds[j]), int(ds[j + 1]))


def test_measured_loop_coordinates_equal_the_tree_joints_coordinates():
    """Each loop joint's measured ``joint_q``/``joint_qd`` at the poses and twists that the tree model's forward
    kinematics gives are the tree joint's own coordinates and velocities (every joint type, moving parents)."""
    tree = _tree()
    model, loops, st = _loops()
    plan = loop_state_plan(model)
    assert [e[0] for e in plan.joints] == loops
    q, qd = jax.jit(loop_joint_state, static_argnums=4)(model, model.joint_q, model.joint_qd, st.body_q, plan)
    for j_tree, j_loop in enumerate(loops):
        (cq, cd), (tq, td) = _entries(model, j_loop), _entries(tree, j_tree)
        np.testing.assert_allclose(q[cq], tree.joint_q[tq], atol=1e-10, err_msg=tree.topology.joint_label[j_tree])
        np.testing.assert_allclose(qd[cd], tree.joint_qd[td], atol=1e-10, err_msg=tree.topology.joint_label[j_tree])


@functools.partial(jax.jit, static_argnames=("steps",))
def _run(model, steps: int):
    solver = SolverFeatherstone(model, angular_damping=0.0)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    return jax.lax.fori_loop(0, steps, lambda _, s: solver.step(s, None, None, 5e-3), st)


@pytest.mark.slow  # the step's writing is also covered by test_loop_free_distance_drives (a compile less)
def test_solver_writes_the_loop_joints_state():
    """A parallelogram closed by a REVOLUTE loop joint swinging from 2 rad/s: after 100 steps the loop joint's
    ``joint_q``/``joint_qd`` equal the rocker's angle and rate (the coupler translates)."""
    b, lj = fourbar_builder("revolute")
    model = b.finalize(dtype=F64)
    model = model.replace(joint_qd=jnp.array([2.0, -2.0, 2.0, 0.0], F64))
    st = _run(model, 100)
    loop, rocker = _entries(model, lj)[0], 2  # the rocker's coordinate
    assert abs(float(st.joint_q[rocker])) > 0.1
    np.testing.assert_allclose(st.joint_q[loop], st.joint_q[rocker], atol=1e-6)
    np.testing.assert_allclose(st.joint_qd[loop], st.joint_qd[rocker], atol=1e-6)
