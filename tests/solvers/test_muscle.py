"""MuJoCo muscles (joint and tendon transmissions) as MUSCLE stateful actuators, vs MuJoCo C ``mj_step``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.laws.activation import next_activation
from jaxart.laws.muscle import muscle_force
from jaxart.solvers.featherstone import SolverFeatherstone

_XML = """<mujoco><option timestep="0.002" integrator="Euler" gravity="0 0 -3"/><worldbody>
<body pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0" range="-60 60" limited="true"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/></body>
<site name="s0" pos="0.6 0 1.2"/>
<body pos="1 0 1"><joint name="k" type="slide" axis="1 0 0" range="-0.3 0.3" limited="true"/>
  <geom size="0.05" mass="0.3"/><site name="s1"/></body>
</worldbody><tendon><spatial name="t"><site site="s0"/><site site="s1"/></spatial></tendon>
<actuator><muscle name="m0" joint="j" gear="0.1" tausmooth="0.2"/><muscle name="m1" tendon="t" force="50"/>
</actuator></mujoco>"""


def _import():
    b = jaxart.ModelBuilder(gravity=-3.0)
    info = b.add_mjcf(_XML)
    assert info["unsupported"] == [] and info["actuators"] == {"m0": 0, "m1": 1}
    return b.finalize(dtype=jnp.float64), info


def test_muscle_law_matches_mujoco_along_its_trajectory():
    """Muscle forces and activation updates at MuJoCo's states equal MuJoCo's (no solver involved)."""
    model, info = _import()
    m = info["mj_model"]
    d = mujoco.MjData(m)
    d.ctrl[:] = [0.8, 0.6]
    force_fn = jax.jit(lambda ln, v, a: muscle_force(model.actuator_muscle, ln, v, a))
    act_fn = jax.jit(lambda a: next_activation(model, a, jnp.asarray(d.ctrl), m.opt.timestep))
    for _ in range(60):
        mujoco.mj_forward(m, d)
        force = force_fn(jnp.asarray(d.actuator_length), jnp.asarray(d.actuator_velocity), jnp.asarray(d.act))
        np.testing.assert_allclose(np.asarray(force), d.actuator_force, rtol=1e-12, atol=1e-12)
        act_next = np.asarray(act_fn(jnp.asarray(d.act)))
        mujoco.mj_step(m, d)
        np.testing.assert_allclose(act_next, d.act, atol=1e-13)
    assert np.abs(d.actuator_force).min() > 1.0


@pytest.mark.slow
def test_muscles_match_mj_step():
    """Activations, muscle forces and joint trajectories (before the slide reaches its limit) match MuJoCo."""
    model, info = _import()
    m = info["mj_model"]
    d = mujoco.MjData(m)
    d.ctrl[:] = [0.8, 0.6]
    solver = SolverFeatherstone(model, drive="explicit", angular_damping=0.0)
    control = model.control().replace(actuator_ctrl=jnp.asarray(d.ctrl))
    step = jax.jit(lambda s: solver.step(s, control, None, m.opt.timestep))
    state = model.state()
    for _ in range(80):
        mujoco.mj_forward(m, d)
        np.testing.assert_allclose(np.asarray(state.actuator_act), d.act, atol=1e-13)
        force = muscle_force(model.actuator_muscle, jnp.asarray(d.actuator_length), jnp.asarray(d.actuator_velocity),
                             jnp.asarray(d.act))
        np.testing.assert_allclose(np.asarray(force), d.actuator_force, rtol=1e-12, atol=1e-12)
        state = step(state)
        mujoco.mj_step(m, d)
    assert np.abs(d.actuator_force).min() > 1.0 and d.qpos[1] < -0.1  # both muscles pull
    np.testing.assert_allclose(np.asarray(state.joint_q), d.qpos[np.asarray(info["coord_map"])], atol=1e-10)
