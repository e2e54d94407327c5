"""Effort limits of tendon actuators (``add_tendon_*(effort_limit=…)``, MJCF ``forcerange``, MuJoCo ``forcerange``).

Oracles: MuJoCo C on the same MJCF (``actuator_force`` and ``mj_step`` Euler with saturated servos), the model
converted by ``SolverMuJoCo`` (one force-limited actuator per limited tendon), and the closed form of a slider
pulled by a saturated tendon drive (constant force ``F``: ``x_n = x_0 + (F/m) dt² n(n+1)/2`` under
semi-implicit Euler, implicit drive or not). float64 (conftest).
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.dynamics import eval_tendon_actuator_forces

_XML = """
<mujoco>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="a">
      <joint name="h0" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="h1" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="tf"><joint joint="h0" coef="1"/><joint joint="h1" coef="-0.5"/></fixed>
  </tendon>
  <actuator>
    <position name="p" tendon="tf" kp="80" kv="2" gear="2" forcelimited="true" forcerange="{lo} 1.5"/>
  </actuator>
</mujoco>
"""


def _imported(lo=-1.5):
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(_XML.format(lo=lo))
    return b.finalize(dtype=jnp.float64), res


@pytest.mark.slow
def test_mjcf_forcerange_is_imported_and_saturated_steps_match_mujoco_c():
    """Import, saturated actuator force and 40 explicit steps vs ``mj_step`` Euler (slow: the rollout compiles for
    about a minute on a loaded machine; the forces alone are checked by the next test)."""
    model, res = _imported()
    assert not res["unsupported"]
    np.testing.assert_allclose(model.tendon_effort_limit, [3.0])  # |gear| · 1.5
    m = res["mj_model"]
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    d = mujoco.MjData(m)
    d.qpos[res["coord_map"]] = [0.4, -0.3]
    d.ctrl[:] = [-0.2]  # target length u/gear far from L = 0.55: saturated
    mujoco.mj_forward(m, d)
    state = jaxart.eval_fk(model, jnp.asarray(d.qpos[res["coord_map"]]), jnp.zeros(2), model.state())
    control = model.control().replace(tendon_target_length=jnp.asarray([-0.1]))
    tendon_force = d.actuator_force[0] * m.actuator_gear[0, 0]
    assert abs(tendon_force) == pytest.approx(3.0)
    np.testing.assert_allclose(eval_tendon_actuator_forces(model, state, control), [tendon_force], atol=1e-12)
    dt, steps = 2e-3, 40
    m.opt.timestep = dt
    for _ in range(steps):
        mujoco.mj_step(m, d)
    solver = jaxart.solvers.SolverFeatherstone(model, drive="explicit")
    controls = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps, *x.shape)), control)
    out, _ = jaxart.rollout(solver, state, controls, dt=dt, length=steps, remat=None)
    np.testing.assert_allclose(out.joint_q, d.qpos[res["coord_map"]], atol=1e-9)
    np.testing.assert_allclose(out.joint_qd, d.qvel[res["dof_map"]], atol=1e-9)
    unlimited = model.replace(tendon_effort_limit=jnp.asarray([jnp.inf]))
    assert np.abs(eval_tendon_actuator_forces(unlimited, out, control)).min() > 10.0  # still saturated


def test_mjcf_forcerange_forces_match_mujoco_c_and_asymmetric_ranges_are_reported():
    model, res = _imported()
    np.testing.assert_allclose(model.tendon_effort_limit, [3.0])
    m = res["mj_model"]
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    forces = []
    for off in (-0.5, -0.01, 0.005, 0.3):  # ctrl − gear·L: saturated both ways, and unsaturated (|kp·off| < 1.5)
        qpos, qvel = rng.uniform(-0.5, 0.5, 2), np.zeros(2)
        ctrl = 2.0 * (qpos[0] - 0.5 * qpos[1]) + off
        d.qpos[res["coord_map"]], d.qvel[res["dof_map"]] = qpos, qvel
        d.ctrl[:] = [ctrl]
        mujoco.mj_forward(m, d)
        state = jaxart.eval_fk(model, jnp.asarray(qpos), jnp.asarray(qvel), model.state())
        control = model.control().replace(tendon_target_length=jnp.asarray([ctrl / 2.0]))
        forces.append(d.actuator_force[0] * m.actuator_gear[0, 0])
        np.testing.assert_allclose(eval_tendon_actuator_forces(model, state, control), [forces[-1]], atol=1e-12)
    assert min(np.abs(forces)) < 1.0 and max(np.abs(forces)) == pytest.approx(3.0)
    _, res = _imported(lo=-0.5)
    assert any("asymmetric forcerange" in issue for issue in res["unsupported"])


def _slider(effort_limit, ke=1e4, kd=50.0):
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=2.0, inertia=np.eye(3) * 0.01)
    j = b.add_joint_prismatic(-1, link, axis=(1, 0, 0))
    b.add_articulation([j])
    b.add_tendon_fixed([(j, 1.0)], target_ke=ke, target_kd=kd, target_length=0.0, effort_limit=effort_limit)
    return b.finalize(dtype=jnp.float64)


def test_saturated_implicit_tendon_drive_is_a_constant_force():
    """Target 1 m away, ke = 1e4: the implicit drive saturates at F = 4 N and the slider accelerates at F/m exactly
    (the saturated drive leaves the implicit rows, so nothing else acts)."""
    model = _slider(4.0)
    state = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    dt, steps = 1e-2, 20
    control = model.control().replace(tendon_target_length=jnp.asarray([1.0]))
    controls = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps, *x.shape)), control)
    last, out = jaxart.rollout(jaxart.solvers.SolverFeatherstone(model), state, controls, dt=dt, length=steps,
                               remat=None)
    n = np.arange(1, steps + 1)
    np.testing.assert_allclose(out.joint_q[:, 0], 2.0 * dt * dt * n * (n + 1) / 2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out.joint_qd[:, 0], 2.0 * dt * n, rtol=1e-12)
    assert float(last.joint_q[0]) < 0.5  # still short of the target: saturated all along
    unlimited = model.replace(tendon_effort_limit=jnp.asarray([jnp.inf]))
    assert float(eval_tendon_actuator_forces(unlimited, last, control)[0]) > 10 * 4.0


def test_solver_mujoco_clamps_the_total_tendon_actuator_force():
    model = _slider(4.0)
    solver = jaxart.solvers.SolverMuJoCo(model)
    mj = solver.mj_model
    assert [mj.actuator(i).name for i in range(mj.nu)] == ["tendon_0__act"]
    np.testing.assert_allclose(mj.actuator_forcerange[0], [-4.0, 4.0])
    assert mj.actuator_forcelimited[0]
    state = jaxart.eval_fk(model, jnp.asarray([0.3]), jnp.asarray([-0.2]), model.state())
    for f, target in ((1.0, 0.3), (0.5, 0.3001), (-2.0, 1.0), (3.0, -1.0)):  # unsaturated, then saturated
        control = model.control().replace(tendon_f=jnp.asarray([f]), tendon_target_length=jnp.asarray([target]))
        d = solver.to_mj_data(state, control)
        np.testing.assert_allclose(d.actuator_force, eval_tendon_actuator_forces(model, state, control), atol=1e-12)
    assert abs(d.actuator_force[0]) == pytest.approx(4.0)


def test_effort_limit_builder_validation():
    b = jaxart.ModelBuilder()
    j = b.add_joint_revolute(-1, b.add_link(mass=1.0), axis=(0, 1, 0))
    b.add_articulation([j])
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="effort_limit"):
            b.add_tendon_fixed([(j, 1.0)], effort_limit=bad)
    with pytest.raises(TypeError, match="effort_limit"):
        b.add_tendon_fixed([(j, 1.0)], effort_limit="strong")
    b.add_tendon_fixed([(j, 1.0)], label="free")
    b.add_tendon_fixed([(j, 1.0)], effort_limit=float("inf"), label="inf")
    b.add_tendon_fixed([(j, 1.0)], effort_limit=2.5, label="lim")
    np.testing.assert_array_equal(b.finalize(dtype=jnp.float64).tendon_effort_limit, [np.inf, np.inf, 2.5])
