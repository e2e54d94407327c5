"""Mocap bodies under ``SolverMuJoCo``: MuJoCo mocap bodies fed from ``Control.mocap_pos/quat``, vs MuJoCo C."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.solvers.mujoco import SolverMuJoCo
from jaxart.solvers.mujoco.equality import keep_unmapped
from jaxart.solvers.mujoco.state import qpos_to_joint_q, qvel_to_joint_qd

# a mocap hand welded to a free box (no contacts; MuJoCo's default weld solref, the one the bridge exports), and a
# mocap paddle pushing a ball on a floor (contacts)
_WELD = """<mujoco><option timestep="0.002" integrator="Euler"/>
<worldbody>
  <body name="hand" mocap="true" pos="0 0 1" quat="0.9238795 0 0.3826834 0">
    <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/></body>
  <body name="box" pos="0.2 0 1"><freejoint/>
    <geom type="box" size="0.05 0.1 0.03" mass="1" contype="0" conaffinity="0"/></body>
</worldbody>
<equality><weld body1="box" body2="hand"/></equality>
</mujoco>"""

_PUSH = """<mujoco><option timestep="0.002" integrator="Euler"/>
<worldbody>
  <geom name="floor" type="plane" size="0 0 1"/>
  <body name="paddle" mocap="true" pos="-0.3 0 0.1"><geom type="sphere" size="0.08"/></body>
  <body name="box" pos="0 0 0.1"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
</worldbody>
</mujoco>"""


def _wxyz(q):
    return np.asarray(q)[..., [3, 0, 1, 2]]


def _xyzw(q):
    return np.asarray(q)[..., [1, 2, 3, 0]]


def _setup(xml):
    b = jaxart.ModelBuilder()
    info = b.add_mjcf(xml)
    model = b.finalize(dtype=jnp.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver = SolverMuJoCo(model, integrator="euler")
    m = info["mj_model"]
    step = jax.jit(lambda state, control: solver.step(state, control, None, m.opt.timestep))
    return model, info, solver, step, m


def _from_c(solver, qpos, qvel, state):
    """``state`` with MuJoCo C's coordinates and velocities of the converted model (mocap coordinates kept; body
    poses are not refreshed: the bridge's step reads joint coordinates only)."""
    lay = solver.layout
    q = qpos_to_joint_q(lay, qpos, state.joint_q.shape[0])
    qd = qvel_to_joint_qd(lay, qpos, qvel, state.joint_qd.shape[0])
    q, qd = keep_unmapped(lay, q, qd, state)
    return state.replace(joint_q=q, joint_qd=qd)


def _control(model, d):
    return model.control().replace(mocap_pos=jnp.asarray(d.mocap_pos), mocap_quat=jnp.asarray(_xyzw(d.mocap_quat)))


def _run(model, step, m, path, steps):
    """Step MuJoCo C (``m``: one mocap body) and the bridge with the same mocap path: (jaxart state, C data)."""
    d = mujoco.MjData(m)
    state = model.state()
    for k in range(steps):
        d.mocap_pos[0], d.mocap_quat[0] = path(k * m.opt.timestep)
        state = step(state, _control(model, d))
        mujoco.mj_step(m, d)
    return state, d


def _one_steps(model, solver, step, path, checks):
    """Difference of one bridge step from MuJoCo C's step of the converted model, from C's states along the mocap
    path (the bridge resynchronised to C before each checked step): ``{step: max(|Δq|, dt |Δq̇|)}``."""
    mj = solver.mj_model
    d = mujoco.MjData(mj)
    sync = jax.jit(lambda qpos, qvel, state, control: _from_c(solver, qpos, qvel,
                                                               jaxart.sim.mocap.set_mocap(model, state, control)))
    err = {}
    for k in range(max(checks) + 1):
        d.mocap_pos[0], d.mocap_quat[0] = path(k * mj.opt.timestep)
        if k in checks:
            nxt = step(sync(d.qpos, d.qvel, model.state(), _control(model, d)), _control(model, d))
        mujoco.mj_step(mj, d)
        if k in checks:
            ref = sync(d.qpos, d.qvel, nxt, _control(model, d))
            err[k] = max(float(jnp.abs(nxt.joint_q - ref.joint_q).max()),
                         float(jnp.abs(nxt.joint_qd - ref.joint_qd).max()) * mj.opt.timestep)
    return err


def _hand_path(t):
    return [0.3 * np.sin(2.0 * t), 0.1 * t, 1.0 + 0.2 * t], [np.cos(0.5 * t), 0.0, 0.0, np.sin(0.5 * t)]


def test_mocap_body_becomes_a_mujoco_mocap_body_and_drives_a_weld():
    model, info, solver, step, m = _setup(_WELD)
    hand, box = info["bodies"]["hand"], info["bodies"]["box"]
    mj = solver.mj_model
    assert mj.body_mocapid[mj.body("hand").id] >= 0 and mj.body_jntnum[mj.body("hand").id] == 0 and mj.nq == 7
    state, d = _run(model, step, m, _hand_path, 250)
    # the mocap body is exactly at its input pose, as MuJoCo's
    np.testing.assert_allclose(state.body_q[hand, :3], d.xpos[1], atol=1e-12)
    assert abs(abs(float(np.dot(_wxyz(state.body_q[hand, 3:]), d.xquat[1]))) - 1.0) < 1e-12
    np.testing.assert_allclose(state.body_qd[hand], 0.0, atol=0)
    # the welded box follows the hand as in MuJoCo C on the original MJCF (2.5 m of travel; MJX leaves out the
    # weld's J̇q̇ reference term, which MuJoCo 4's C solver adds)
    mujoco.mj_forward(m, d)
    assert np.linalg.norm(d.xpos[2] - d.xpos[1]) > 0.1
    np.testing.assert_allclose(state.body_q[box, :3], d.xpos[2], atol=5e-3)
    assert abs(abs(float(np.dot(_wxyz(state.body_q[box, 3:]), d.xquat[2]))) - 1.0) < 1e-4
    # one step from MuJoCo C's states of the converted model: the same step at rest, then up to that velocity
    # dependent J̇q̇ term (≤ 6e-5 along this path)
    err = _one_steps(model, solver, step, _hand_path, (0, 30, 240))
    assert err[0] < 1e-14 and max(err.values()) < 1e-4
    # the MuJoCo data of a state holds the mocap pose that set_mocap put into it
    control = model.control().replace(mocap_pos=jnp.asarray([[0.5, 0.2, 0.3]]))
    dx = solver.to_mjx_data(jaxart.sim.mocap.set_mocap(model, state, control), control)
    np.testing.assert_allclose(dx.mocap_pos[0], [0.5, 0.2, 0.3], atol=1e-15)


@pytest.mark.slow
def test_mocap_paddle_pushes_a_ball_like_mujoco():
    """Contacts with a moving mocap body: one bridge step from MuJoCo C's states of the converted model is C's step
    (whole trajectories drift apart: MJX without a warm start and MuJoCo C reach different solver iterates)."""
    model, info, solver, step, _ = _setup(_PUSH)
    assert list(solver.layout.mocap_id) == [0] and solver.mj_model.nmocap == 1

    def path(t):
        return [-0.3 + 0.5 * t, 0.0, 0.1], [1.0, 0.0, 0.0, 0.0]

    err = _one_steps(model, solver, step, path, (121, 130, 150, 180, 220))  # contact from step 121
    assert max(err.values()) < 1e-9
