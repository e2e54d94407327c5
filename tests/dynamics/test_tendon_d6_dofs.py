"""Fixed tendons on DOFs of D6 joints (a MuJoCo body with several hinges/slides imports as one D6 joint).

A humanoid-style leg written here: a planar pelvis (slides x, z and hinge y → one D6 with two linear and one
angular DOF), a thigh whose three hinges share the hip anchor (one D6 with three angular DOFs), a knee hinge and a
two-hinge ankle. MuJoCo-humanoid-like fixed tendons couple the hip pitch and the knee (with a motor, a spring and
a length limit) and the pelvis slide, the hip roll and an ankle DOF.

Oracles: MuJoCo C on the original MJCF (``ten_length``, ``ten_velocity``, ``ten_J``, ``qfrc_passive``,
``qfrc_actuator``, ``mj_step``), the model converted by ``SolverMuJoCo``, and the limit's closed form. float64.
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.dynamics.tendon_jacobian import tendon_jacobian
from jaxart.dynamics.tendons import eval_tendon_joint_forces, eval_tendon_lengths, eval_tendon_velocities
from jaxart.sim.enums import JointType
from jaxart.solvers.maximal.tendons import tendon_entries, tendon_speeds

_XML = """
<mujoco>
  <option gravity="0 0 -9.81" integrator="Euler"/>
  <worldbody>
    <body name="pelvis" pos="0 0 1">
      <joint name="root_x" type="slide" axis="1 0 0"/>
      <joint name="root_z" type="slide" axis="0 0 1"/>
      <joint name="root_y" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 -0.1 0 0 0.1 0" size="0.08"/>
      <body name="thigh" pos="0 -0.1 -0.05">
        <joint name="hip_x" type="hinge" axis="1 0 0"/>
        <joint name="hip_z" type="hinge" axis="0 0 1"/>
        <joint name="hip_y" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.02 0.01 -0.34" size="0.06"/>
        <body name="shin" pos="0.02 0.01 -0.4">
          <joint name="knee" type="hinge" axis="0 -1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.049"/>
          <body name="foot" pos="0 0 -0.35">
            <joint name="ankle_y" type="hinge" axis="0 1 0"/>
            <joint name="ankle_x" type="hinge" axis="1 0 0"/>
            <geom type="box" size="0.09 0.04 0.02" pos="0.03 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="hipknee" stiffness="{k}" damping="{c}" springlength="0.2" limited="true" range="-1.1 1.1">
      <joint joint="hip_y" coef="-1"/><joint joint="knee" coef="1"/>
    </fixed>
    <fixed name="mixed" stiffness="{k}" springlength="0.05">
      <joint joint="root_x" coef="0.8"/><joint joint="hip_x" coef="-0.5"/><joint joint="ankle_x" coef="0.3"/>
    </fixed>
  </tendon>
  <actuator><motor name="m" tendon="hipknee" gear="3"/></actuator>
</mujoco>
"""
_CTRL = 0.7  # the motor's control: tendon force gear·ctrl


def _imported(k=30.0, c=2.0):
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(_XML.format(k=k, c=c))
    return b.finalize(dtype=jnp.float64), res


def _mj_data(m, res, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    d.qpos[:] = rng.uniform(-0.5, 0.5, m.nq) * scale
    d.qvel[:] = rng.uniform(-1.5, 1.5, m.nv) * scale
    d.ctrl[:] = _CTRL
    mujoco.mj_forward(m, d)
    return d


def _ten_j(m, d) -> np.ndarray:
    """Dense ``(ntendon, nv)`` tendon Jacobian (MuJoCo stores it sparse)."""
    if np.asarray(d.ten_J).size == m.ntendon * m.nv:
        return np.asarray(d.ten_J).reshape(m.ntendon, m.nv)
    out = np.zeros((m.ntendon, m.nv))
    mujoco.mju_sparse2dense(out, d.ten_J, m.ten_J_rownnz, m.ten_J_rowadr, m.ten_J_colind)
    return out


def _state(model, res, d):
    return jaxart.eval_fk(model, jnp.asarray(d.qpos[res["coord_map"]]), jnp.asarray(d.qvel[res["dof_map"]]),
                          model.state())


def test_import_keeps_tendons_on_d6_dofs():
    model, res = _imported()
    assert set(res["tendons"]) == {"hipknee", "mixed"} and not res["unsupported"]
    d6 = [j for j in range(model.joint_count) if int(model.joint_type[j]) == JointType.D6]
    assert len(d6) == 3  # pelvis (2 slides + hinge), hip (3 hinges), ankle (2 hinges)
    assert list(model.tendon_joint) == [d6[1], d6[1] + 1, d6[0], d6[1], d6[2]]
    assert list(model.tendon_joint_dof) == [2, 0, 0, 0, 1]  # hip_y, knee, root_x, hip_x, ankle_x


def test_lengths_velocities_jacobian_and_forces_match_mujoco_c():
    """Featherstone's joint-space terms, the maximal solvers' body-pose terms and the ``SolverMuJoCo`` mapping."""
    model, res = _imported()
    m = res["mj_model"]
    conv = jaxart.solvers.SolverMuJoCo(model)
    dmap = res["dof_map"]
    for seed in range(2):
        d = _mj_data(m, res, seed)
        state = _state(model, res, d)
        np.testing.assert_allclose(eval_tendon_lengths(model, state), d.ten_length, atol=1e-12)
        np.testing.assert_allclose(eval_tendon_velocities(model, state), d.ten_velocity, atol=1e-12)
        jac = np.asarray(tendon_jacobian(model, state.joint_q, state.body_q))
        np.testing.assert_allclose(jac, _ten_j(m, d)[:, dmap], atol=1e-12)
        # spring + damping (qfrc_passive; the limit is a MuJoCo constraint: inactive here) and the motor
        assert np.all(np.abs(d.ten_length) < 1.1)
        np.testing.assert_allclose(eval_tendon_joint_forces(model, state), d.qfrc_passive[dmap], atol=1e-10)
        assert np.abs(d.qfrc_passive).max() > 1.0
        np.testing.assert_allclose(jac[0] * 3.0 * _CTRL, d.qfrc_actuator[dmap], atol=1e-12)
        ent = tendon_entries(model, state.body_q, state.joint_q)  # SolverSemiImplicit / SolverXPBD
        np.testing.assert_allclose(ent.length, d.ten_length, atol=1e-10)
        np.testing.assert_allclose(tendon_speeds(ent, state.body_qd), d.ten_velocity, atol=1e-10)
        d2 = conv.to_mj_data(state)
        np.testing.assert_allclose(d2.ten_length, d.ten_length, atol=1e-12)
        np.testing.assert_allclose(d2.ten_velocity, d.ten_velocity, atol=1e-12)


def test_limit_force_is_the_penalty_along_mujoco_jacobian():
    model, res = _imported(k=0.0, c=0.0)
    m = res["mj_model"]
    d = _mj_data(m, res, 4, scale=3.0)
    state = _state(model, res, d)
    length, speed = float(d.ten_length[0]), float(d.ten_velocity[0])
    lo, hi = -1.1, 1.1
    assert length > hi or length < lo
    ke, kd = float(model.tendon_limit_ke[0]), float(model.tendon_limit_kd[0])
    f = ke * (hi - length) - kd * speed if length > hi else ke * (lo - length) - kd * speed
    tau = eval_tendon_joint_forces(model.replace(tendon_stiffness=model.tendon_stiffness * 0.0), state)
    np.testing.assert_allclose(tau, _ten_j(m, d)[0, res["dof_map"]] * f, rtol=1e-10,
                               atol=1e-10)


@pytest.mark.slow
def test_featherstone_rollout_matches_mujoco_c_step():
    """Explicit tendon forces (spring, motor) with semi-implicit Euler vs MuJoCo's Euler: 100 steps to round-off
    (no damping: MuJoCo's Euler would make joint damping implicit)."""
    model, res = _imported(k=30.0, c=0.0)
    m = res["mj_model"]
    d = _mj_data(m, res, 5, scale=0.5)
    state = _state(model, res, d)
    dt, steps = 1e-3, 100
    m.opt.timestep = dt
    for _ in range(steps):
        mujoco.mj_step(m, d)
    assert np.all(np.abs(d.ten_length) < 1.1)
    control = model.control().replace(tendon_f=jnp.asarray([3.0 * _CTRL, 0.0]))
    controls = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps, *x.shape)), control)
    solver = jaxart.solvers.SolverFeatherstone(model, drive="explicit")
    out, _ = jaxart.rollout(solver, state, controls, dt=dt, length=steps, remat=None)
    np.testing.assert_allclose(out.joint_q, d.qpos[res["coord_map"]], atol=1e-9)
    np.testing.assert_allclose(out.joint_qd, d.qvel[res["dof_map"]], atol=1e-8)
    free, _ = jaxart.rollout(solver, state, None, dt=dt, length=steps, remat=None)
    assert np.abs(np.asarray(free.joint_q) - d.qpos[res["coord_map"]]).max() > 1e-3  # the motor matters


def test_builder_dof_references():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.01)
    j = b.add_joint_d6(-1, link, linear_axes=[(1, 0, 0)], angular_axes=[(0, 1, 0), (0, 0, 1)])
    b.add_articulation([j])
    with pytest.raises(ValueError, match="has 3 DOFs; pass \\(joint, dof\\)"):
        b.add_tendon_fixed([(j, 1.0)])
    with pytest.raises(ValueError, match="DOF 3 of joint .* does not exist"):
        b.add_tendon_fixed([((j, 3), 1.0)])
    with pytest.raises(ValueError, match="appears twice"):
        b.add_tendon_fixed([(j, 0), (j, 0)], [1.0, 2.0])
    with pytest.raises(TypeError, match="pair of ints"):
        b.add_tendon_fixed([((j, 1.5), 1.0)])
    t = b.add_tendon_fixed([((j, 0), 2.0), ((j, 2), -1.0)])
    model = b.finalize(dtype=jnp.float64)
    q = jnp.asarray([0.3, 0.2, -0.4])
    state = jaxart.eval_fk(model, q, jnp.asarray([1.0, -2.0, 0.5]), model.state())
    np.testing.assert_allclose(eval_tendon_lengths(model, state)[t], 2.0 * 0.3 + 0.4, atol=1e-14)
    np.testing.assert_allclose(eval_tendon_velocities(model, state)[t], 2.0 - 0.5, atol=1e-14)
