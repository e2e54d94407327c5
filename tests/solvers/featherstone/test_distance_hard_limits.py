"""Hard DISTANCE limits in SolverFeatherstone (finite min/max distance with ``limit_ke = limit_kd = 0``).

Oracle: statics by hand. Bodies dropped from rest on slack ropes (a tree DISTANCE joint and a loop-closing one, max
0.5 m) are caught and hang at exactly the rope length; a body falling toward an anchor below it stops at the
minimum distance 0.4 m (a rigid strut): the hard row holds it at the limit, with no penalty stretch ``m g / k``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxart
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
INERTIA = [0.01, 0.012, 0.008]
ANCHOR_UP, ANCHOR_DOWN = ((0, 0, 1.0), (0, 0, 0, 1)), ((1.0, 0, 0.0), (0, 0, 0, 1))
TIP = ((0, 0, 0.1), (0, 0, 0, 1))  # the rope's end on the body, 0.1 m above its COM


def _model():
    b = jaxart.ModelBuilder()
    tree = b.add_link(xform=((0, 0, 0.6), (0, 0, 0, 1)), mass=1.0, inertia=INERTIA, label="tree")
    loop = b.add_link(xform=((0.5, 0, 0.6), (0, 0, 0, 1)), mass=2.0, inertia=INERTIA, label="loop")
    strut = b.add_link(xform=((1.0, 0, 0.5), (0, 0, 0, 1)), mass=1.5, inertia=INERTIA, label="strut")
    b.add_articulation([b.add_joint_distance(-1, tree, parent_xform=ANCHOR_UP, child_xform=TIP, max_distance=0.5)])
    b.add_articulation([b.add_joint_free(loop)])
    b.add_articulation([b.add_joint_distance(-1, strut, parent_xform=ANCHOR_DOWN, child_xform=TIP,
                                             min_distance=0.4, max_distance=-1.0)])
    b.add_joint_distance(-1, loop, parent_xform=((0.5, 0, 1.0), (0, 0, 0, 1)), child_xform=TIP, max_distance=0.5)
    return b.finalize(dtype=F64)


@jax.jit
def _heights(model):
    solver = SolverFeatherstone(model, angular_damping=0.0)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

    def body(s, _):
        s = solver.step(s, None, None, 5e-3)
        return s, s.body_q

    return jax.lax.scan(body, st, None, length=300)[1]


def test_hard_distance_limits_hold_the_rope_length_and_the_strut():
    bq = np.asarray(_heights(_model()))
    tip = bq[:, :, 2] + 0.1
    rope = np.stack([1.0 - tip[:, 0], 1.0 - tip[:, 1]], axis=1)  # anchors at z = 1
    strut = tip[:, 2]  # anchor at z = 0 below it
    assert rope.max() < 0.5 + 0.02 and strut.min() > 0.4 - 0.02  # caught within one step's travel
    np.testing.assert_allclose(rope[-1], [0.5, 0.5], atol=1e-6)  # no stretch: hard, not 9.81 m/s² · m / k
    assert abs(strut[-1] - 0.4) < 1e-6
    np.testing.assert_allclose(bq[-1, :, :2], [[0, 0], [0.5, 0], [1.0, 0]], atol=1e-9)  # straight down
