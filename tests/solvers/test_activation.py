"""Actuator activation dynamics (integrator / filter / filterexact, actrange, actearly) vs MuJoCo C ``mj_step``."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.laws.activation import next_activation
from jaxart.sim import checks
from jaxart.sim.actuators import ActuatorDynType, ActuatorOutput
from jaxart.solvers.featherstone import SolverFeatherstone
from jaxart.solvers.semi_implicit import SolverSemiImplicit
from jaxart.solvers.xpbd import SolverXPBD

_LINK = """<body name="b{i}" pos="{x} 0 1"><joint name="j{i}" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="0.5"/></body>"""
_XML = f"""<mujoco><option timestep="0.002" integrator="Euler"/>
<worldbody>{"".join(_LINK.format(i=i, x=0.5 * i) for i in range(6))}</worldbody>
<actuator>
  <general name="integ" joint="j0" dyntype="integrator" gainprm="2" ctrllimited="true" ctrlrange="-1 1"
           actlimited="true" actrange="-0.4 0.4"/>
  <general name="filt" joint="j1" dyntype="filter" dynprm="0.05" gainprm="3" gear="1.5"/>
  <position name="pos" joint="j2" kp="20" timeconst="0.04" gear="2"/>
  <intvelocity name="intvel" joint="j3" kp="10" actrange="-1 1"/>
  <general name="early" joint="j4" dyntype="filterexact" dynprm="0.03" gainprm="1.5" actearly="true"/>
  <general name="velfilt" joint="j5" dyntype="filter" dynprm="0.04" gainprm="0.5" biastype="affine"
           biasprm="0 0 -0.5"/>
</actuator></mujoco>"""
_CTRL = np.array([0.9, -0.7, 0.5, 0.8, 1.2, -2.0])


def _import():
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is reported as dropped or approximated
        info = b.add_mjcf(_XML)
    return b.finalize(dtype=jnp.float64), info


def test_import_maps_every_dyntype():
    model, info = _import()
    assert info["unsupported"] == []
    assert list(info["actuators"]) == ["integ", "filt", "pos", "intvel", "early", "velfilt"]
    assert model.actuator_dyntype.tolist() == [1, 2, 3, 1, 3, 2]
    assert model.actuator_output.tolist() == [ActuatorOutput.JOINT_FORCE, ActuatorOutput.JOINT_FORCE,
                                             ActuatorOutput.JOINT_POSITION_TARGET,
                                             ActuatorOutput.JOINT_POSITION_TARGET, ActuatorOutput.JOINT_FORCE,
                                             ActuatorOutput.JOINT_VELOCITY_TARGET]
    np.testing.assert_allclose(model.actuator_gain, [2.0, 4.5, 0.5, 1.0, 1.5, 1.0])


def test_featherstone_matches_mj_step():
    """Activations, actuator forces and joint trajectories follow MuJoCo's Euler ``mj_step``."""
    model, info = _import()
    m = info["mj_model"]
    d = mujoco.MjData(m)
    d.ctrl[:] = _CTRL
    solver = SolverFeatherstone(model, drive="explicit", angular_damping=0.0)
    control = model.control().replace(actuator_ctrl=jnp.asarray(_CTRL))
    step = jax.jit(lambda s: solver.step(s, control, None, m.opt.timestep))
    state = model.state()
    dof = np.asarray(info["dof_map"])
    for k in range(150):
        act = np.asarray(state.actuator_act)
        np.testing.assert_allclose(act, d.act, atol=1e-12, err_msg=f"step {k}")
        mujoco.mj_forward(m, d)
        motors = [0, 1, 4]
        used = act.copy()
        used[4] = np.asarray(next_activation(model, state.actuator_act, control.actuator_ctrl, m.opt.timestep))[4]
        np.testing.assert_allclose(np.asarray(model.actuator_gain)[motors] * used[motors],
                                   d.actuator_force[motors] * m.actuator_gear[motors, 0], atol=1e-10)
        mujoco.mj_step(m, d)
        state = step(state)
    np.testing.assert_allclose(np.asarray(state.actuator_act), d.act, atol=1e-12)
    np.testing.assert_allclose(np.asarray(state.joint_q), d.qpos[dof], atol=1e-8)
    np.testing.assert_allclose(np.asarray(state.joint_qd), d.qvel[dof], atol=1e-7)
    assert np.abs(d.qpos).max() > 0.05  # the actuators moved the joints


@pytest.mark.parametrize("solver_cls", [SolverSemiImplicit, pytest.param(SolverXPBD, marks=pytest.mark.slow)])
def test_maximal_solvers_advance_activation(solver_cls):
    """Every solver's ``step`` carries the activation (FILTEREXACT, closed form) and applies its force."""
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 0, 1))])
    b.add_actuator(0, dyntype=ActuatorDynType.FILTEREXACT, gain=2.0, timeconst=0.1)
    model = b.finalize(dtype=jnp.float64)
    control = model.control().replace(actuator_ctrl=jnp.ones(1))
    state = solver_cls(model).step(model.state(), control, None, 1e-4)
    np.testing.assert_allclose(np.asarray(state.actuator_act), -np.expm1(-1e-3), rtol=1e-12)
    state = solver_cls(model).step(state, control, None, 1e-4)  # force 2·act of the first step
    assert float(state.joint_qd[0]) > 0.0


def test_builder_validation():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
    b.add_articulation([b.add_joint_ball(-1, link)])
    with pytest.raises(ValueError, match="position target or joint muscle needs"):
        b.add_actuator(0, dyntype=ActuatorDynType.FILTER, output=ActuatorOutput.JOINT_POSITION_TARGET, timeconst=0.1)
    with pytest.raises(ValueError, match="timeconst must be > 0"):
        b.add_actuator(0, dyntype=ActuatorDynType.FILTER)
    with pytest.raises(ValueError, match="DOF index 3 does not exist"):
        b.add_actuator(3, dyntype=ActuatorDynType.INTEGRATOR)
    with pytest.raises(ValueError, match="actrange"):
        b.add_actuator(0, dyntype=ActuatorDynType.INTEGRATOR, actrange=(1.0, -1.0))


def test_add_builder_shifts_actuator_targets():
    src = jaxart.ModelBuilder()
    link = src.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
    src.add_articulation([src.add_joint_revolute(-1, link)])
    src.add_actuator(0, dyntype=ActuatorDynType.FILTER, output=ActuatorOutput.JOINT_POSITION_TARGET, timeconst=0.1,
                     label="servo")
    dst = jaxart.ModelBuilder()
    dst.add_builder(src, label_prefix="a")
    dst.add_builder(src, label_prefix="b")
    model = dst.finalize()
    assert model.actuator_label == ["a/servo", "b/servo"]
    assert model.actuator_target.tolist() == [0, 1] and model.actuator_coord.tolist() == [0, 1]
    with pytest.raises(ValueError, match="actuator_ctrl must have shape"):
        checks.check_control(model, model.control().replace(actuator_ctrl=jnp.zeros(3)), "control")
