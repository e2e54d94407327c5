"""SolverMuJoCo (MJX bridge): stepping vs MuJoCo C, analytic pendulums, forces, gradients, jit/vmap.

MJX compiles are slow on this machine, so each model is converted once (module fixtures) and
rollouts share one jitted scan per model.
"""

import os

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.solvers.mujoco.state import qpos_to_joint_q

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
J = jaxart.JointDofConfig
DT = 0.002


def pendulum_builder(*, length=0.5, mass=1.0, q0=0.4, **joint_kw):
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=mass, com=(0.0, 0.0, -length), inertia=np.diag([0.01, 0.01, 0.01]), label="bob")
    j = b.add_joint_revolute(-1, link, axis=(1.0, 0.0, 0.0), parent_xform=((0, 0, 2.0), (0, 0, 0, 1)), **joint_kw)
    b.add_articulation([j])
    b.joint_q[0] = q0
    return b


def d6_builder():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=2.0, com=(0.1, 0.05, -0.2), inertia=np.diag([0.05, 0.06, 0.07]), label="d6body")
    j = b.add_joint_d6(-1, link, linear_axes=[J(axis=(1, 0, 0), limit_ke=0, limit_kd=0), J(axis=(0, 0, 1))],
                       angular_axes=[J(axis=(0, 1, 0), damping=0.05), J(axis=(1, 0, 0))],
                       parent_xform=((0, 0, 1.0), (0, 0, 0, 1)), label="d6")
    b.add_articulation([j])
    b.joint_q[:] = [0.1, -0.05, 0.3, -0.2]
    b.joint_qd[:] = [0.5, 0.0, -1.0, 0.7]
    return b


def free_on_plane_builder():
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=((0.0, 0.0, 0.3), (0, 0, 0, 1)), com=(0.03, 0.0, 0.0), mass=1.0,
                      inertia=np.diag([0.004, 0.004, 0.004]), lock_inertia=True, label="ball")
    b.add_shape_sphere(body, radius=0.1)
    b.add_ground_plane()
    b.joint_qd[:] = [0.3, 0.0, 0.0, 0.0, 0.0, 2.0]
    return b


def rollout_fn(solver, n, dt):
    """Jitted n-step scan of solver.step returning the final state and the joint_q history."""
    def run(state, control):
        def body(s, _):
            s = solver.step(s, control, None, dt)
            return s, s.joint_q
        return jax.lax.scan(body, state, None, length=n)
    return jax.jit(run)


def c_rollout(solver, state, control, n, dt):
    """MuJoCo C oracle on solver.mj_model (same options; warm start cleared like the bridge)."""
    mj = solver.mj_model
    mj.opt.timestep = dt
    d = solver.to_mj_data(state, control)
    out = []
    for _ in range(n):
        d.qacc_warmstart[:] = 0.0
        mujoco.mj_step(mj, d)
        out.append(np.asarray(qpos_to_joint_q(solver.layout, jnp.asarray(d.qpos), solver.model.joint_coord_count)))
    return np.stack(out), d


def initial_state(model):
    return jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())


@pytest.fixture(scope="module")
def pendulum():
    model = pendulum_builder().finalize(dtype=F64)
    return model, jaxart.solvers.SolverMuJoCo(model)


@pytest.fixture(scope="module")
def pendulum_euler():
    model = pendulum_builder(q0=0.05).finalize(dtype=F64)
    return model, jaxart.solvers.SolverMuJoCo(model, integrator="euler")


# ------------------------------------------------------------------ vs MuJoCo C
def test_pendulum_one_and_200_steps_match_mujoco_c(pendulum):
    model, solver = pendulum
    st, ctrl = initial_state(model), model.control()
    final, hist = rollout_fn(solver, 200, DT)(st, ctrl)
    ref, d = c_rollout(solver, st, ctrl, 200, DT)
    np.testing.assert_allclose(hist[0], ref[0], atol=1e-12)  # one step
    np.testing.assert_allclose(hist, ref, atol=1e-10)
    np.testing.assert_allclose(final.joint_qd, d.qvel, atol=1e-9)
    # body poses come back through eval_fk
    fk = jaxart.eval_fk(model, final.joint_q, final.joint_qd, final)
    np.testing.assert_allclose(final.body_q, fk.body_q, atol=1e-12)
    np.testing.assert_allclose(final.body_q[0, :3], d.xpos[1], atol=1e-9)


def test_d6_body_matches_mujoco_c():
    model = d6_builder().finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model)
    st, ctrl = initial_state(model), model.control()
    final, hist = rollout_fn(solver, 200, DT)(st, ctrl)
    ref, d = c_rollout(solver, st, ctrl, 200, DT)
    np.testing.assert_allclose(hist[0], ref[0], atol=1e-10)
    np.testing.assert_allclose(hist, ref, atol=1e-8)
    assert float(jnp.abs(final.joint_q[1] - model.joint_q[1])) > 0.1  # it actually fell


@pytest.mark.slow
def test_free_body_with_com_offset_on_plane_matches_mujoco_c():
    # Euler: MuJoCo 4's C implicitfast also linearises constraint (contact) damping, MJX's does not;
    # mjx.forward agrees with C to round-off on this model (checked while writing the bridge).
    model = free_on_plane_builder().finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    st, ctrl = initial_state(model), model.control()
    final, hist = rollout_fn(solver, 200, DT)(st, ctrl)
    ref, d = c_rollout(solver, st, ctrl, 200, DT)
    np.testing.assert_allclose(hist[0], ref[0], atol=1e-10)
    np.testing.assert_allclose(hist, ref, atol=1e-6)
    np.testing.assert_allclose(final.joint_qd, solver_joint_qd(solver, d), atol=1e-5)
    assert d.ncon >= 1
    # resting on the plane: the sphere centre (body origin) sits ~ one radius above the ground
    assert abs(float(final.body_q[0, 2]) - 0.1) < 5e-3


def solver_joint_qd(solver, d):
    from jaxart.solvers.mujoco.state import qvel_to_joint_qd

    return np.asarray(qvel_to_joint_qd(solver.layout, jnp.asarray(d.qpos), jnp.asarray(d.qvel),
                                       solver.model.joint_dof_count))


# ------------------------------------------------------------------ analytic checks (Euler integrator)
def test_euler_pendulum_single_step_and_small_angle_period(pendulum_euler):
    model, solver = pendulum_euler
    m, length, ixx, g = 1.0, 0.5, 0.01, 9.81
    h = ixx + m * length**2
    q0 = 0.05
    st = initial_state(model)
    n = 1000
    _, hist = rollout_fn(solver, n, 1e-3)(st, model.control())
    qdd = -m * g * length * np.sin(q0) / h
    np.testing.assert_allclose(hist[0], [q0 + 1e-3 * 1e-3 * qdd], rtol=1e-12)  # semi-implicit Euler step
    omega = np.sqrt(m * g * length / h)
    t = 1e-3 * np.arange(1, n + 1)
    np.testing.assert_allclose(hist[:, 0], q0 * np.cos(omega * t), atol=2e-2 * q0)


def test_euler_double_pendulum_agrees_with_featherstone():
    from jaxart.solvers import SolverFeatherstone

    b = jaxart.ModelBuilder()
    r = (0.2, 0.0, 0.0, 0.9797959)
    a = b.add_link(mass=1.0, com=(0.0, 0.0, -0.4), inertia=np.diag([0.02, 0.03, 0.01]))
    c = b.add_link(mass=0.7, com=(0.05, 0.0, -0.3), inertia=np.diag([0.01, 0.02, 0.015]))
    js = [b.add_joint_revolute(-1, a, axis=(1, 0, 0), parent_xform=((0, 0, 2.0), r)),
          b.add_joint_revolute(a, c, axis=(0, 1, 0), parent_xform=((0, 0, -0.8), (0, 0, 0, 1)))]
    b.add_articulation(js)
    b.joint_q[:] = [0.7, -0.4]
    model = b.finalize(dtype=F64)
    mjs = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    fs = SolverFeatherstone(model, angular_damping=0.0)
    st, ctrl = initial_state(model), model.control()
    _, hist = rollout_fn(mjs, 200, 1e-3)(st, ctrl)
    run = jax.jit(lambda s: jax.lax.scan(lambda x, _: (fs.step(x, ctrl, None, 1e-3), x.joint_q), s, None,
                                         length=201)[1][1:])
    np.testing.assert_allclose(hist, run(st), atol=1e-9)


def test_position_drive_and_joint_f_analytic():
    b = pendulum_builder(q0=0.0, target_ke=50.0, target_kd=2.0, target_q=0.3)
    b.gravity = 0.0
    model = b.finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    h = 0.01 + 0.25
    st = initial_state(model).replace(joint_qd=jnp.array([0.4]))
    ctrl = model.control().replace(joint_f=jnp.array([1.5]))
    s1 = solver.step(st, ctrl, None, 1e-3)
    tau = 50.0 * (0.3 - 0.0) - 2.0 * 0.4 + 1.5
    np.testing.assert_allclose(s1.joint_qd, [0.4 + 1e-3 * tau / h], rtol=1e-10)
    assert solver.mj_model.nu == 2  # POSITION_VELOCITY: two actuators


def test_body_f_is_a_world_wrench_at_the_com():
    b = jaxart.ModelBuilder(gravity=0.0)
    b.add_body(xform=((0, 0, 1.0), (0.2, 0.1, 0.0, 0.97467943)), com=(0.2, -0.1, 0.05), mass=2.0,
               inertia=np.diag([0.1, 0.2, 0.3]))
    model = b.finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    st = initial_state(model).replace(body_f=jnp.array([[1.0, -2.0, 3.0, 0.0, 0.0, 0.0]]))
    s1 = solver.step(st, None, None, 1e-2)
    np.testing.assert_allclose(s1.body_qd[0, :3], 1e-2 * np.array([1.0, -2.0, 3.0]) / 2.0, atol=1e-12)
    np.testing.assert_allclose(s1.body_qd[0, 3:], 0.0, atol=1e-12)  # force at the COM: no rotation
    # FREE joint_f is the same world wrench
    ctrl = model.control().replace(joint_f=jnp.array([1.0, -2.0, 3.0, 0.0, 0.0, 0.0]))
    s2 = solver.step(initial_state(model), ctrl, None, 1e-2)
    np.testing.assert_allclose(s2.body_qd, s1.body_qd, atol=1e-12)
    # a pure torque spins about the COM: the COM does not move
    st = initial_state(model).replace(body_f=jnp.array([[0.0, 0.0, 0.0, 0.5, 0.2, -0.1]]))
    s3 = solver.step(st, None, None, 1e-2)
    np.testing.assert_allclose(s3.body_qd[0, :3], 0.0, atol=1e-5)  # O(dt²) from integrating the COM arm
    assert float(jnp.linalg.norm(s3.body_qd[0, 3:])) > 1e-3


# ------------------------------------------------------------------ jit / vmap / grad
def test_dt_is_traced_and_jit_cache_holds_one_entry(pendulum):
    model, solver = pendulum
    st = initial_state(model)
    a = solver.step(st, model.control(), None, 1e-3)
    b = solver.step(st, model.control(), None, 2e-3)
    assert solver._step._cache_size() == 1
    assert not np.allclose(a.joint_qd, b.joint_qd)


def test_update_body_state_false_skips_fk(pendulum):
    model, solver = pendulum
    fast = jaxart.solvers.SolverMuJoCo(model, update_body_state=False)
    st = initial_state(model)
    a, b = solver.step(st, None, None, DT), fast.step(st, None, None, DT)
    np.testing.assert_allclose(b.joint_q, a.joint_q, atol=1e-14)
    np.testing.assert_allclose(b.joint_qd, a.joint_qd, atol=1e-14)
    np.testing.assert_array_equal(b.body_q, st.body_q)
    assert not np.allclose(a.body_q, st.body_q)


@pytest.mark.timeout(120)
def test_vmap_over_worlds_batch_two():
    model = pendulum_builder().finalize(dtype=F64)
    # no LAPACK under vmap (XLA's batched CPU Cholesky can deadlock on small machines)
    solver = jaxart.solvers.SolverMuJoCo(model, solver="cg", integrator="euler", jacobian="sparse")
    st = initial_state(model)
    q0 = jnp.array([[0.1], [0.7]])
    batch = jax.vmap(lambda q: jaxart.eval_fk(model, q, st.joint_qd, st))(q0)
    out = jax.vmap(lambda s: solver.step(s, None, None, DT))(batch)
    for k in range(2):
        single = solver.step(jax.tree.map(lambda x, k=k: x[k], batch), None, None, DT)
        np.testing.assert_allclose(out.joint_q[k], single.joint_q, atol=1e-12)
        np.testing.assert_allclose(out.body_q[k], single.body_q, atol=1e-12)


@pytest.mark.slow
def test_gradients_through_20_steps_match_finite_differences():
    # the pendulum starts inside its upper limit, so MJX's constraint solver is on the gradient path
    model = pendulum_builder(q0=0.52, limit_lower=-1.0, limit_upper=0.5, limit_ke=100.0,
                             limit_kd=20.0).finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model, iterations=1, ls_iterations=8)
    st = initial_state(model)

    def loss(qd0, torque):
        s = st.replace(joint_qd=qd0)
        ctrl = model.control().replace(joint_f=torque)
        final, _ = jax.lax.scan(lambda c, _: (solver.step(c, ctrl, None, DT), None), s, None, length=20)
        return jnp.sum(final.joint_q ** 2) + 0.1 * jnp.sum(final.body_q[:, :3] ** 2)

    x0, u0 = jnp.array([0.2]), jnp.array([5.0])  # the torque keeps the joint pressed into its limit
    val_grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    _, (gx, gu) = val_grad(x0, u0)
    _, data = c_rollout(solver, st.replace(joint_qd=x0), model.control().replace(joint_f=u0), 20, DT)
    assert data.nefc == 1  # the limit is still active at the end of the rollout
    assert np.all(np.isfinite(gx)) and np.all(np.isfinite(gu))
    f = jax.jit(loss)
    eps = 1e-6
    fd_x = (f(x0 + eps, u0) - f(x0 - eps, u0)) / (2 * eps)
    fd_u = (f(x0, u0 + eps) - f(x0, u0 - eps)) / (2 * eps)
    np.testing.assert_allclose(gx, [fd_x], rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(gu, [fd_u], rtol=1e-5, atol=1e-8)


# ------------------------------------------------------------------ API details
def test_errors_and_save_to_mjcf(pendulum, tmp_path):
    model, solver = pendulum
    with pytest.raises(NotImplementedError, match="RK4"):
        jaxart.solvers.SolverMuJoCo(model, integrator="rk4", use_mujoco_contacts=False)
    st = initial_state(model)
    ignored = solver.step(st, None, object(), DT)  # MuJoCo detects contacts itself, as in Newton
    np.testing.assert_array_equal(ignored.joint_q, solver.step(st, None, None, DT).joint_q)
    with pytest.raises(TypeError, match="jaxart.Model"):
        jaxart.solvers.SolverMuJoCo(solver.mj_model)
    path = os.path.join(tmp_path, "pendulum.xml")
    jaxart.solvers.SolverMuJoCo(model, save_to_mjcf=path)
    mj2 = mujoco.MjModel.from_xml_path(path)
    assert (mj2.nq, mj2.nv) == (1, 1) and mj2.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert solver.mjx_model.nq == 1


@pytest.mark.slow
def test_mjx_test_data_humanoid_via_add_mjcf():
    from jaxart.solvers.mujoco import mjx

    path = os.path.join(os.path.dirname(mjx.__file__), "test_data", "humanoid", "humanoid.xml")
    b = jaxart.ModelBuilder()
    try:
        b.add_mjcf(path)
    except (ImportError, NotImplementedError) as e:
        pytest.skip(f"add_mjcf cannot import the MJX humanoid yet: {e}")
    model = b.finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model)
    ref = mujoco.MjModel.from_xml_path(path)
    assert (solver.mj_model.nq, solver.mj_model.nv) == (ref.nq, ref.nv)
    st, ctrl = initial_state(model), model.control()
    final, hist = rollout_fn(solver, 20, DT)(st, ctrl)
    oracle, _ = c_rollout(solver, st, ctrl, 20, DT)
    np.testing.assert_allclose(hist, oracle, atol=1e-6)
