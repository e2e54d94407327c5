"""Mocap bodies driven by ``Control.mocap_pos``/``mocap_quat``, with a weld to a free body, vs MuJoCo C."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

import jaxart
from jaxart.solvers.featherstone import SolverFeatherstone

_XML = """<mujoco><option timestep="0.002" integrator="Euler"/>
<worldbody>
  <body name="hand" mocap="true" pos="0 0 1" quat="0.9238795 0 0.3826834 0">
    <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/></body>
  <body name="box" pos="0.2 0 1"><freejoint/>
    <geom type="box" size="0.05 0.1 0.03" mass="1" contype="0" conaffinity="0"/></body>
</worldbody>
<equality><weld body1="box" body2="hand" solref="0.004 1"/></equality>
</mujoco>"""


def _wxyz(q):
    return np.asarray(q)[..., [1, 2, 3, 0]]


def test_weld_to_moving_mocap_body_follows_mujoco():
    b = jaxart.ModelBuilder()
    info = b.add_mjcf(_XML)
    assert info["unsupported"] == [] and info["mocap"] == {"hand": 0}
    model = b.finalize(dtype=jnp.float64)
    m = info["mj_model"]
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    hand, box = info["bodies"]["hand"], info["bodies"]["box"]
    np.testing.assert_allclose(model.state().body_q[hand, :3], d.xpos[1], atol=1e-12)
    np.testing.assert_allclose(model.control().mocap_quat[0], _wxyz(d.mocap_quat[0]), atol=1e-12)
    solver = SolverFeatherstone(model)

    @jax.jit
    def step(state, pos, quat):
        return solver.step(state, model.control().replace(mocap_pos=pos, mocap_quat=quat), None, m.opt.timestep)

    state = model.state()
    for k in range(250):
        t = k * m.opt.timestep
        d.mocap_pos[0] = [0.3 * np.sin(2.0 * t), 0.1 * t, 1.0 + 0.2 * t]
        d.mocap_quat[0] = [np.cos(0.5 * t), 0.0, 0.0, np.sin(0.5 * t)]
        state = step(state, jnp.asarray(d.mocap_pos), jnp.asarray(_wxyz(d.mocap_quat)))
        mujoco.mj_step(m, d)
    np.testing.assert_allclose(state.body_q[hand, :3], d.xpos[1], atol=1e-12)
    np.testing.assert_allclose(np.abs(np.dot(state.body_q[hand, 3:], _wxyz(d.xquat[1]))), 1.0, atol=1e-12)
    np.testing.assert_allclose(state.body_q[hand, :3], d.mocap_pos[0], atol=1e-12)
    # the welded box follows the hand as in MuJoCo (soft weld there, hard rows here: a few mm apart)
    assert np.linalg.norm(d.xpos[2] - d.xpos[1] - 0.0) > 0.1
    np.testing.assert_allclose(state.body_q[box, :3], d.xpos[2], atol=5e-3)
    assert abs(abs(np.dot(state.body_q[box, 3:], _wxyz(d.xquat[2]))) - 1.0) < 1e-4
