"""Drives on loop-closing FREE and DISTANCE joints and limits on loop FREE joints (SolverFeatherstone).

Oracle: the same bodies on tree FREE/DISTANCE joints with the same frames and terms. A loop FREE or DISTANCE joint
(without distance limits) locks nothing, so the body's dynamics are the tree's: the trajectories agree to the solve's
rounding. One body is driven toward a target pose on all six DOFs with a limit on its vertical slide (it falls onto
it); the other hangs by a DISTANCE joint driven on its linear DOFs.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxart
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
INERTIA = [0.01, 0.012, 0.008]
FRAMES = {"p": ((0.1, 0.2, 1.0), (0.0, 0.0, np.sin(0.3), np.cos(0.3))), "c": ((0.05, 0.0, 0.1), (0, 0, 0, 1))}


def _joints(b, free, rope, x0: float):
    p = (np.asarray(FRAMES["p"][0]) + (x0, 0.0, 0.0), FRAMES["p"][1])
    kw = dict(parent_xform=p, child_xform=FRAMES["c"])
    return b.add_joint_free(free, **kw), b.add_joint_distance(-1, rope, max_distance=-1.0, **kw)


def _bodies(b, x0: float):
    free = b.add_link(xform=((x0 + 0.3, 0.1, 1.2), (0, 0, 0, 1)), mass=1.0, com=(0.02, 0, 0.01), inertia=INERTIA)
    rope = b.add_link(xform=((x0, 0.4, 0.8), (0, 0, 0, 1)), mass=0.7, com=(0, 0.02, 0), inertia=INERTIA)
    return free, rope


def _terms(b, d_free: int, d_rope: int):
    """Drives on a FREE joint's six DOFs (first DOF ``d_free``) with a limit on its vertical slide, and on a
    DISTANCE joint's linear DOFs (first DOF ``d_rope``)."""
    for d in range(d_free, d_free + 6):
        b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION)
        b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = (30.0, 6.0) if d < d_free + 3 else (2.0, 0.3)
    b.joint_dof["limit_lower"][d_free + 2], b.joint_dof["limit_ke"][d_free + 2] = -0.15, 1e4
    b.joint_dof["limit_kd"][d_free + 2] = 50.0
    for d in range(d_rope, d_rope + 3):
        b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION_VELOCITY)
        b.joint_dof["target_ke"][d], b.joint_dof["target_kd"][d] = 20.0, 4.0


@functools.lru_cache(maxsize=1)
def _model():
    """Tree FREE/DISTANCE joints (joints 0, 1) and, 2 m further along x, the same joints loop-closing (joints 4, 5)
    on bodies with their own FREE roots (joints 2, 3): every joint has 7 coordinates and 6 DOFs, so one compiled
    rollout runs both."""
    b = jaxart.ModelBuilder()
    tree = _joints(b, *_bodies(b, 0.0), 0.0)
    b.add_articulation([tree[0]])
    b.add_articulation([tree[1]])
    free, rope = _bodies(b, 2.0)
    b.add_articulation([b.add_joint_free(free)])
    b.add_articulation([b.add_joint_free(rope)])
    _joints(b, free, rope, 2.0)
    _terms(b, 0, 6)
    _terms(b, 24, 30)
    m = b.finalize(dtype=F64)
    target = np.asarray(m.joint_target_q).copy()
    for q0 in (0, 28):
        target[q0:q0 + 7] = np.r_[0.2, -0.1, -0.5, 0.0, 0.0, np.sin(0.4), np.cos(0.4)]  # below the slide limit
        target[q0 + 7:q0 + 10] = (0.1, 0.1, -0.4)
    return m.replace(joint_target_q=jnp.asarray(target))


@jax.jit
def _poses(model):
    solver = SolverFeatherstone(model, angular_damping=0.0)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    st = jax.lax.fori_loop(0, 300, lambda _, s: solver.step(s, None, None, 5e-3), st)
    return st.body_q, st.joint_q


def test_drives_and_limits_on_loop_free_and_distance_joints_match_the_tree_joints():
    bq, q = (np.asarray(x) for x in _poses(_model()))
    np.testing.assert_allclose(bq[2:, :3] - np.array([2.0, 0.0, 0.0]), bq[:2, :3], atol=1e-8)
    np.testing.assert_allclose(bq[2:, 3:], bq[:2, 3:], atol=1e-8)
    q_tree, q_loop = q[:14], q[28:42]
    np.testing.assert_allclose(q_loop, q_tree, atol=1e-8)  # the loop joints' written coordinates
    z = float(q_tree[2])
    assert -0.15 - 5e-3 < z < -0.14  # held at the slide limit, short of the drive target −0.5
    np.testing.assert_allclose(q_tree[:2], [0.2, -0.1], atol=2e-3)  # driven to the target
    sag = 0.7 * 9.81 / 20.0  # the rope's drive holds the bob's weight below its target
    assert np.abs(q_tree[7:10] - np.array([0.1, 0.1, -0.4 - sag])).max() < 0.02
