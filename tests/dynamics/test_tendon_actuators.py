"""Tendon actuators: ``Control.tendon_f`` and the tendon drive ``target_ke/kd``.

Oracles: MuJoCo C on the same MJCF (``<motor/position/velocity tendon=…>``: ``actuator_force``, ``ten_J``,
``mj_step`` with the Euler and implicit-fast integrators), the model converted by ``SolverMuJoCo``, and builder
validation. All in float64 (conftest).
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.dynamics import eval_tendon_actuator_forces
from jaxart.dynamics.tendon_jacobian import tendon_jacobian

_XML = """
<mujoco>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <site name="anchor" pos="0.2 0.1 0"/>
    <body name="a">
      <joint name="h0" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
      <site name="sa" pos="0.1 0 -0.3"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="h1" type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
        <body name="c" pos="0 0 -0.5">
          <joint name="s2" type="slide" axis="0 0 1"/>
          <geom type="box" size="0.05 0.05 0.05"/>
          <site name="sc" pos="0 0.1 -0.2"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="tf" stiffness="{k}" damping="1.5" springlength="0.1">
      <joint joint="h0" coef="1"/><joint joint="h1" coef="-0.7"/><joint joint="s2" coef="2"/>
    </fixed>
    <spatial name="ts" stiffness="{k}" damping="2">
      <site site="anchor"/><site site="sa"/><site site="sc"/>
    </spatial>
  </tendon>
  <actuator>
    <motor name="m" tendon="tf" gear="2"/>
    <velocity name="v" tendon="tf" kv="4" gear="2"/>
    {third}
  </actuator>
</mujoco>
"""
CTRL = np.array([1.5, -0.4, 0.9])  # motor, velocity servo, position (or velocity) servo
_POSITION = '<position name="p" tendon="ts" kp="50" kv="3"/>'
_VELOCITY = '<velocity name="p" tendon="ts" kv="3"/>'


def _imported(k=20.0, third=_POSITION):
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(_XML.format(k=k, third=third))
    return b.finalize(dtype=jnp.float64), res


def _control(model, position=True):
    """MuJoCo's ``CTRL`` in jaxart terms: tendon force ``gear·u``, targets ``u / gear``."""
    third = CTRL[2] if position else 0.0
    return model.control().replace(tendon_f=jnp.asarray([2.0 * CTRL[0], 0.0]),
                                   tendon_target_length=jnp.asarray([0.0, third]),
                                   tendon_target_velocity=jnp.asarray([CTRL[1] / 2.0, CTRL[2] - third]))


def _state(model, seed):
    rng = np.random.default_rng(seed)
    return jaxart.eval_fk(model, jnp.asarray(rng.uniform(-0.5, 0.5, 3)), jnp.asarray(rng.uniform(-1.5, 1.5, 3)),
                          model.state())


def _mj_data(m, res, state, integrator):
    m.opt.integrator = integrator
    d = mujoco.MjData(m)
    d.qpos[res["coord_map"]] = np.asarray(state.joint_q)
    d.qvel[res["dof_map"]] = np.asarray(state.joint_qd)
    d.ctrl[:] = CTRL
    mujoco.mj_forward(m, d)
    return d


@pytest.mark.slow
def test_mjcf_tendon_actuators_forces_jacobian_and_explicit_steps_match_mujoco_c():
    model, res = _imported()
    assert not res["unsupported"]
    np.testing.assert_allclose(model.tendon_target_ke, [0.0, 50.0])
    np.testing.assert_allclose(model.tendon_target_kd, [16.0, 3.0])  # gear² kv
    m, state, control = res["mj_model"], _state(model, 0), _control(model)
    d = _mj_data(m, res, state, mujoco.mjtIntegrator.mjINT_EULER)
    per_tendon = np.zeros(2)
    np.add.at(per_tendon, m.actuator_trnid[:, 0], d.actuator_force * m.actuator_gear[:, 0])
    np.testing.assert_allclose(eval_tendon_actuator_forces(model, state, control), per_tendon, atol=1e-12)
    assert np.abs(per_tendon).min() > 0.1
    jac = np.asarray(tendon_jacobian(model, state.joint_q, state.body_q))
    np.testing.assert_allclose(jac, np.asarray(d.ten_J).reshape(2, -1)[:, res["dof_map"]], atol=1e-12)
    # 30 explicit steps (MuJoCo's Euler makes only joint damping implicit; there is none)
    dt, steps = 2e-3, 30
    m.opt.timestep = dt
    for _ in range(steps):
        mujoco.mj_step(m, d)
    solver = jaxart.solvers.SolverFeatherstone(model, drive="explicit")
    controls = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps, *x.shape)), control)
    out, _ = jaxart.rollout(solver, state, controls, dt=dt, length=steps, remat=None)
    np.testing.assert_allclose(out.joint_q, d.qpos[res["coord_map"]], atol=1e-9)
    np.testing.assert_allclose(out.joint_qd, d.qvel[res["dof_map"]], atol=1e-9)
    d0 = _mj_data(m, res, state, mujoco.mjtIntegrator.mjINT_EULER)
    d0.ctrl[:] = 0.0
    for _ in range(steps):
        mujoco.mj_step(m, d0)
    assert np.abs(d0.qpos - d.qpos).max() > 1e-3  # the actuators matter


def test_implicit_tendon_damping_and_drive_match_mujoco_implicitfast():
    """Without stiffness (MuJoCo's implicit-fast integrator is implicit in velocity only) the implicit tendon
    damping and drive damping are exactly MuJoCo's ``h·JᵀDJ``: 30 steps at 5 ms agree to round-off."""
    model, res = _imported(k=0.0, third=_VELOCITY)
    assert not res["unsupported"] and float(jnp.sum(model.tendon_target_ke)) == 0.0
    m, state, control = res["mj_model"], _state(model, 1), _control(model, position=False)
    d = _mj_data(m, res, state, mujoco.mjtIntegrator.mjINT_IMPLICITFAST)
    dt, steps = 5e-3, 30
    m.opt.timestep = dt
    for _ in range(steps):
        mujoco.mj_step(m, d)
    controls = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps, *x.shape)), control)
    out, _ = jaxart.rollout(jaxart.solvers.SolverFeatherstone(model), state, controls, dt=dt, length=steps,
                            remat=None)
    np.testing.assert_allclose(out.joint_q, d.qpos[res["coord_map"]], atol=1e-9)
    np.testing.assert_allclose(out.joint_qd, d.qvel[res["dof_map"]], atol=1e-9)
    d_euler = _mj_data(m, res, state, mujoco.mjtIntegrator.mjINT_EULER)  # explicit tendon damping
    for _ in range(steps):
        mujoco.mj_step(m, d_euler)
    assert np.abs(d_euler.qvel - d.qvel).max() > 1e-3  # the implicit terms matter


def test_solver_mujoco_maps_tendon_actuators():
    """``SolverMuJoCo`` adds a motor per tendon and servos for non-zero gains; C forces match jaxart's."""
    model, _ = _imported()
    solver = jaxart.solvers.SolverMuJoCo(model)
    names = [solver.mj_model.actuator(i).name for i in range(solver.mj_model.nu)]
    assert sorted(names) == ["tf__f", "tf__vel", "ts__f", "ts__pos", "ts__vel"]
    state = _state(model, 2)
    for control in (_control(model), model.control(), model.control().replace(tendon_f=None)):
        d = solver.to_mj_data(state, control)
        per_tendon = np.zeros(2)
        np.add.at(per_tendon, solver.mj_model.actuator_trnid[:, 0], d.actuator_force)
        np.testing.assert_allclose(per_tendon, eval_tendon_actuator_forces(model, state, control), atol=1e-12)
    assert np.abs(per_tendon).max() > 0.1  # the default targets still drive the velocity servo


def test_tendon_actuator_builder_and_control_validation():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0)
    j = b.add_joint_revolute(-1, link, axis=(0, 1, 0))
    b.add_articulation([j])
    with pytest.raises(ValueError, match="target_ke must be >= 0"):
        b.add_tendon_fixed([(j, 1.0)], target_ke=-1.0)
    with pytest.raises(TypeError, match="target_length must be a real number"):
        b.add_tendon_fixed([(j, 1.0)], target_length="long")
    b.joint_q[0] = 0.3
    b.add_tendon_fixed([(j, 2.0)], target_ke=5.0, label="a")
    b.add_tendon_fixed([(j, 1.0)], target_kd=1.0, target_length=-0.5, target_velocity=0.2, label="b")
    model = b.finalize(dtype=jnp.float64)
    np.testing.assert_allclose(model.tendon_target_length, [0.6, -0.5])  # None: the initial length
    np.testing.assert_allclose(model.control().tendon_target_velocity, [0.0, 0.2])
    solver = jaxart.solvers.SolverFeatherstone(model)
    with pytest.raises(ValueError, match="control.tendon_f"):
        solver.step(model.state(), model.control().replace(tendon_f=jnp.zeros(3)), None, 1e-3)
    plain = jaxart.ModelBuilder()
    plain.add_articulation([plain.add_joint_revolute(-1, plain.add_link(mass=1.0))])
    assert plain.finalize().control().tendon_f is None  # tendon-free models carry no tendon controls


@pytest.mark.slow
def test_implicit_tendon_actuator_step_gradient_matches_finite_differences():
    """Ten implicit steps of a two-link arm pulled by a spatial tendon's drive: d(loss)/d(tendon_f, target length,
    drive stiffness) by reverse mode through the dense solve's implicit derivative vs central differences."""
    b = jaxart.ModelBuilder(gravity=0.0)
    inertia = np.diag([0.01, 0.02, 0.02])
    l0 = b.add_link(mass=1.0, inertia=inertia, com=(0.25, 0.0, 0.0), lock_inertia=True)
    l1 = b.add_link(mass=0.7, inertia=inertia, com=(0.2, 0.0, 0.0), lock_inertia=True)
    j0 = b.add_joint_revolute(-1, l0, axis=(0, 0, 1))
    j1 = b.add_joint_revolute(l0, l1, axis=(0, 0, 1), parent_xform=((0.5, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)))
    b.add_articulation([j0, j1])
    b.add_tendon_spatial([(-1, (0.0, 0.3, 0.0)), (l0, (0.3, 0.05, 0.0)), (l1, (0.4, 0.0, 0.0))], damping=2.0,
                         target_ke=400.0, target_kd=5.0)
    b.joint_q[:] = [0.3, 0.6]
    model = b.finalize(dtype=jnp.float64)

    def loss(params):
        force, target, ke = params
        m = model.replace(tendon_target_ke=jnp.reshape(ke, (1,)))
        s = jaxart.solvers.SolverFeatherstone(m)
        ctrl = m.control().replace(tendon_f=jnp.reshape(force, (1,)), tendon_target_length=jnp.reshape(target, (1,)))
        state = jaxart.eval_fk(m, m.joint_q, m.joint_qd, m.state())
        state, _ = jax.lax.scan(lambda st, _: (s.step(st, ctrl, None, 1e-2), None), state, None, length=10)
        return jnp.sum(jnp.sin(state.joint_q)) + 0.1 * jnp.sum(state.joint_qd ** 2)

    x = jnp.asarray([0.5, 0.7, 400.0])
    grad = np.asarray(jax.jit(jax.grad(loss))(x))
    f = jax.jit(loss)
    for i, h in enumerate((1e-5, 1e-6, 1e-3)):
        e = jnp.zeros(3).at[i].set(h)
        fd = float(f(x + e) - f(x - e)) / (2 * h)
        assert abs(fd) > 1e-4
        np.testing.assert_allclose(grad[i], fd, rtol=1e-5)
