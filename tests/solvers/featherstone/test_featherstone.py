"""SolverFeatherstone: MuJoCo trajectories, closed forms, drives (implicit/explicit), joint features."""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from dyn_models import chain_spec, mixed_tree_spec, mj_to_jaxart, to_builder, to_mjcf

import jaxart
from jaxart.dynamics.integrate import integrate_coords
from jaxart.math import quat_to_matrix
from jaxart.rollout import rollout
from jaxart.solvers import SolverFeatherstone

F64 = jnp.float64


def _run(solver, state, steps, dt, control=None):
    return rollout(solver, state, None, dt=dt, length=steps, output_fn=lambda s: None)[0] if control is None \
        else rollout(solver, state, jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps,) + x.shape),
                                                                   control), dt=dt, output_fn=lambda s: None)[0]


@pytest.mark.parametrize("kind", ["hinge_chain", pytest.param("mixed_fixed", marks=pytest.mark.slow), "mixed_floating"])
def test_one_second_trajectory_vs_mujoco_euler(kind):
    rng = np.random.default_rng(11)
    spec = {"hinge_chain": lambda: chain_spec(3),
            "mixed_fixed": lambda: mixed_tree_spec(rng, floating=False),
            "mixed_floating": lambda: mixed_tree_spec(rng, floating=True)}[kind]()
    dt, steps = 1e-3, 1000
    m = mujoco.MjModel.from_xml_string(to_mjcf(spec, timestep=dt, armature=0.01))
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0
    if kind == "hinge_chain":
        d.qpos[:] = [0.5, -0.3, 0.2]
    d.qvel[:] = rng.normal(size=m.nv) * 0.5
    mujoco.mj_forward(m, d)
    model = to_builder(spec, armature=0.01).finalize(dtype=F64)
    q, qd, _, _ = mj_to_jaxart(spec, d.qpos, d.qvel)
    state = jaxart.eval_fk(model, q, qd, model.state())
    final = jax.jit(lambda s: _run(SolverFeatherstone(model, angular_damping=0.0), s, steps, dt))(state)
    for _ in range(steps):
        mujoco.mj_step(m, d)
    mujoco.mj_kinematics(m, d)  # mj_step leaves xpos at the start of the last step
    err = np.abs(np.asarray(final.body_q[:, :3]) - d.xpos[1:]).max()
    # scalar joints integrate identically (round-off); quaternion joints differ by the integrator
    # (Newton's normalize(q + ½ω⊗q dt) vs MuJoCo's exponential map) and FREE bodies by COM vs origin
    # integration (measured: 2e-16, 4e-8, 4e-5 m)
    tol = {"hinge_chain": 1e-12, "mixed_fixed": 1e-6, "mixed_floating": 1e-3}[kind]
    assert err < tol, err


def _pendulum(m=1.0, L=0.5, izz=0.01, **kw):
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=m, com=(L, 0.0, 0.0), inertia=np.diag([izz, izz, izz]))
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, -1.0, 0.0), limit_lower=-1e10, limit_upper=1e10,
                                             **kw)])
    return b.finalize(dtype=F64)


def test_pendulum_period():
    m, L, izz, dt = 1.0, 0.5, 0.01, 1e-3
    model = _pendulum(m, L, izz)
    state = model.state().replace(joint_q=jnp.array([-np.pi / 2 + 0.05]))  # hanging down, small amplitude
    solver = SolverFeatherstone(model)
    _, traj = jax.jit(lambda s: rollout(solver, s, None, dt=dt, length=4000,
                                               output_fn=lambda x: x.joint_q[0]))(state)
    x = np.asarray(traj) + np.pi / 2
    ups = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    period = (ups[1] - ups[0]) * dt
    expected = 2 * np.pi * np.sqrt((izz + m * L * L) / (m * 9.81 * L))
    assert abs(period - expected) < 3 * dt


def _free_body(inertia=((0.3, 0.0, 0.0), (0.0, 0.2, 0.0), (0.0, 0.0, 0.1)), com=(0.1, -0.2, 0.05), gravity=-9.81):
    b = jaxart.ModelBuilder(gravity=gravity)
    rot = np.array([0.1, 0.3, -0.2, 0.9]) / np.linalg.norm([0.1, 0.3, -0.2, 0.9])
    b.add_body(xform=((0.0, 0.0, 1.0), rot), mass=2.0, com=com, inertia=np.asarray(inertia))
    return b.finalize(dtype=F64)


def test_free_fall_matches_discrete_closed_form():
    model = _free_body()
    v0, w0 = np.array([0.3, -0.2, 1.0]), np.array([0.0, 0.0, 0.0])
    state = model.state().replace(joint_qd=jnp.asarray(np.r_[v0, w0]))
    state = jaxart.eval_fk(model, state.joint_q, state.joint_qd, state)
    dt, n = 1e-3, 300
    final = jax.jit(lambda s: _run(SolverFeatherstone(model), s, n, dt))(state)
    c0 = np.asarray(state.body_q[0, :3]) + np.asarray(quat_to_matrix(state.body_q[0, 3:])) @ model.body_com[0]
    g = np.array([0, 0, -9.81])
    c_ref = c0 + v0 * n * dt + g * dt * dt * n * (n + 1) / 2  # semi-implicit Euler of the COM
    c = np.asarray(final.body_q[0, :3]) + np.asarray(quat_to_matrix(final.body_q[0, 3:])) @ model.body_com[0]
    np.testing.assert_allclose(c, c_ref, atol=1e-10)
    np.testing.assert_allclose(final.body_qd[0, :3], v0 + g * n * dt, atol=1e-10)


def test_torque_free_precession_conserves_angular_momentum():
    model = _free_body(gravity=0.0)
    w0 = np.array([3.0, 0.2, -1.0])
    state = model.state().replace(joint_qd=jnp.asarray(np.r_[0.0, 0.0, 0.0, w0]))
    state = jaxart.eval_fk(model, state.joint_q, state.joint_qd, state)

    def momentum(s):
        R = quat_to_matrix(s.body_q[0, 3:])
        return R @ model.body_inertia[0] @ R.T @ s.body_qd[0, 3:]

    dt = 1e-4
    solver = SolverFeatherstone(model, angular_damping=0.0)
    _, L = jax.jit(lambda s: rollout(solver, s, None, dt=dt, length=5000, output_fn=momentum))(state)
    L0 = np.asarray(momentum(state))
    assert np.abs(np.asarray(L) - L0).max() < 2e-3 * np.linalg.norm(L0)
    # the body really precesses: ω changes direction while L stays
    assert np.linalg.norm(np.asarray(L[-1]) - L0) < 2e-3 * np.linalg.norm(L0)


@pytest.mark.slow
def test_energy_drift_of_conservative_double_pendulum():
    spec = chain_spec(2, length=0.5, mass=1.0)
    model = to_builder(spec).finalize(dtype=F64)
    state = model.state().replace(joint_q=jnp.array([1.2, -0.5]))
    from jaxart.dynamics import eval_mass_matrix

    def energy(s):
        H = eval_mass_matrix(model, s)[0]
        com = s.body_q[:, :3] + jnp.einsum("bij,bj->bi", quat_to_matrix(s.body_q[:, 3:]), model.body_com)
        return 0.5 * s.joint_qd @ H @ s.joint_qd - jnp.sum(model.body_mass * (com @ model.gravity))

    state = jaxart.eval_fk(model, state.joint_q, state.joint_qd, state)
    solver = SolverFeatherstone(model)
    dt, n = 2.5e-4, 40000  # 10 s
    _, e = jax.jit(lambda s: rollout(solver, s, None, dt=dt, length=n, output_fn=energy))(state)
    e0 = float(energy(state))
    scale = float(model.body_mass.sum() * 9.81 * 1.0)
    # joint-space semi-implicit Euler (as MuJoCo's Euler, which drifts identically) drifts O(dt)
    assert np.abs(np.asarray(e) - e0).max() < 5e-3 * scale


def test_joint_torque_spins_revolute_body():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.diag([0.1, 0.1, 0.25]))
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, 0.0, 1.0))])
    model = b.finalize(dtype=F64)
    tau, n, dt = 0.7, 200, 1e-3
    ctrl = model.control().replace(joint_f=jnp.array([tau]))
    final = jax.jit(lambda s: _run(SolverFeatherstone(model), s, n, dt, ctrl))(model.state())
    np.testing.assert_allclose(final.joint_qd, [tau * n * dt / 0.25], rtol=1e-12)
    np.testing.assert_allclose(final.body_qd[0, 3:], [0.0, 0.0, tau * n * dt / 0.25], rtol=1e-12, atol=1e-14)


@pytest.mark.slow
def test_free_body_joint_f_and_body_f_are_world_wrenches_at_com():
    model = _free_body(gravity=0.0)
    state = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    wrench = jnp.array([1.0, -2.0, 0.5, 0.3, 0.1, -0.2])
    solver = SolverFeatherstone(model, angular_damping=0.0)
    s1 = solver.step(state, model.control().replace(joint_f=wrench), None, 1e-3)
    s2 = solver.step(state.replace(body_f=wrench[None]), None, None, 1e-3)
    np.testing.assert_allclose(s1.body_qd, s2.body_qd, atol=1e-13)
    np.testing.assert_allclose(s1.body_qd[0, :3], wrench[:3] / 2.0 * 1e-3, atol=1e-13)
    # a pure torque does not move the COM
    s3 = solver.step(state.replace(body_f=jnp.array([[0.0, 0.0, 0.0, 0.3, 0.1, -0.2]])), None, None, 1e-3)
    np.testing.assert_allclose(s3.body_qd[0, :3], 0.0, atol=1e-14)


def _arm(n=7, ke=1e5, kd=1e2, **kw):
    b = jaxart.ModelBuilder()
    parent = -1
    joints = []
    for i in range(n):
        link = b.add_link(mass=1.0, com=(0.0, 0.0, 0.15), inertia=np.diag([0.01, 0.01, 0.002]))
        axis = (0.0, 1.0, 0.0) if i % 2 else (0.0, 0.0, 1.0)
        joints.append(b.add_joint_revolute(parent, link, axis=axis, parent_xform=((0.0, 0.0, 0.3 if i else 0.0),
                                                                                   (0, 0, 0, 1)),
                                           target_ke=ke, target_kd=kd, limit_lower=-1e10, limit_upper=1e10, **kw))
        parent = link
    b.add_articulation(joints)
    return b.finalize(dtype=F64)


@pytest.mark.slow
def test_implicit_drive_stiff_arm_large_step_converges():
    model = _arm()
    target = jnp.linspace(-0.8, 0.9, 7)
    ctrl = model.control().replace(joint_target_q=target)
    dt = 1.0 / 60.0
    final = jax.jit(lambda s: _run(SolverFeatherstone(model), s, 120, dt, ctrl))(model.state())
    assert np.all(np.isfinite(np.asarray(final.joint_q)))
    # gravity sag of a stiff drive is tiny: steady error ≈ g(q)/ke
    np.testing.assert_allclose(final.joint_q, target, atol=2e-3)
    np.testing.assert_allclose(final.joint_qd, 0.0, atol=1e-2)
    blown = jax.jit(lambda s: _run(SolverFeatherstone(model, drive="explicit"), s, 120, dt, ctrl))(model.state())
    assert not np.all(np.abs(np.asarray(blown.joint_q) - np.asarray(target)) < 1e-1)  # explicit is unstable here


def test_explicit_drive_matches_newton_closed_form():
    ke, kd, arm, izz, tau, dt = 50.0, 3.0, 0.02, 0.2, 0.4, 1e-2
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=1.0, inertia=np.diag([0.1, 0.1, izz]))
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, 0.0, 1.0), target_ke=ke, target_kd=kd,
                                             armature=arm, limit_lower=-1e10, limit_upper=1e10)])
    model = b.finalize(dtype=F64)
    q0, qd0, qt, qdt = 0.3, -0.5, 1.1, 0.2
    state = model.state().replace(joint_q=jnp.array([q0]), joint_qd=jnp.array([qd0]))
    ctrl = model.control().replace(joint_f=jnp.array([tau]), joint_target_q=jnp.array([qt]),
                                   joint_target_qd=jnp.array([qdt]))
    out = SolverFeatherstone(model, drive="explicit").step(state, ctrl, None, dt)
    qd1 = qd0 + dt * (ke * (qt - q0) + kd * (qdt - qd0) + tau) / (izz + arm)
    np.testing.assert_allclose(out.joint_qd, [qd1], rtol=1e-13)
    np.testing.assert_allclose(out.joint_q, [q0 + dt * qd1], rtol=1e-13)
    # implicit: the same forces evaluated at the end of the step
    imp = SolverFeatherstone(model).step(state, ctrl, None, dt)
    a = (ke * (qt - q0 - dt * qd0) + kd * (qdt - qd0) + tau) / (izz + arm + kd * dt + ke * dt * dt)
    np.testing.assert_allclose(imp.joint_qd, [qd0 + dt * a], rtol=1e-13)


@pytest.mark.parametrize("w", [0.0, 1e-8, 1e-4])
def test_quaternion_integration_jacobian_wrt_omega(w):
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
    b.add_articulation([b.add_joint_ball(-1, link)])
    model = b.finalize(dtype=F64)
    dt = 1e-2
    omega = jnp.array([w, 0.0, 0.0])
    J = jax.jit(jax.jacfwd(lambda om: integrate_coords(model, model.joint_q, om, dt)))(omega)
    Jr = jax.jit(jax.jacrev(lambda om: integrate_coords(model, model.joint_q, om, dt)))(omega)
    assert np.all(np.isfinite(np.asarray(J)))
    np.testing.assert_allclose(J, Jr, atol=1e-14)
    expected = np.zeros((4, 3))
    expected[:3] = 0.5 * dt * np.eye(3)
    np.testing.assert_allclose(J, expected, atol=1e-5)


def test_friction_effort_velocity_limits_and_angular_damping():
    dt = 1e-3
    # Coulomb friction above the gravity torque holds the pendulum (smooth: slow creep only)
    fr = _pendulum(friction=10.0)
    s = jax.jit(lambda s: _run(SolverFeatherstone(fr), s, 500, dt))(fr.state())
    assert abs(float(s.joint_q[0])) < 0.01
    # effort limit clamps the drive: first-step acceleration = limit / inertia
    eff = _pendulum(target_ke=1e6, effort_limit=2.0).replace(gravity=jnp.zeros(3))
    ctrl = eff.control().replace(joint_target_q=jnp.array([1.0]))
    s = SolverFeatherstone(eff).step(eff.state(), ctrl, None, dt)
    np.testing.assert_allclose(s.joint_qd, [2.0 / (0.01 + 0.25) * dt], rtol=1e-12)
    # velocity limit
    vl = _pendulum(velocity_limit=0.5)
    s = SolverFeatherstone(vl).step(vl.state().replace(joint_qd=jnp.array([3.0])), None, None, dt)
    np.testing.assert_allclose(s.joint_qd, [0.5])
    # angular damping on a free body (spherical inertia: no gyroscopic term)
    fb = _free_body(inertia=np.eye(3) * 0.1, com=(0, 0, 0), gravity=0.0)
    st = fb.state().replace(joint_qd=jnp.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0]))
    s = jax.jit(lambda s: _run(SolverFeatherstone(fb, angular_damping=0.5), s, 100, dt))(st)
    np.testing.assert_allclose(s.joint_qd[3:], np.array([1.0, 2.0, 3.0]) * (1 - 0.5 * dt) ** 100, rtol=1e-12)


def test_kinematic_body_keeps_velocity():
    b = jaxart.ModelBuilder()
    k = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1, is_kinematic=True)
    c = b.add_link(mass=1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.1)
    j0 = b.add_joint_revolute(-1, k, axis=(0.0, 0.0, 1.0))
    j1 = b.add_joint_revolute(k, c, axis=(0.0, 1.0, 0.0), parent_xform=((0.2, 0, 0), (0, 0, 0, 1)))
    b.add_articulation([j0, j1])
    model = b.finalize(dtype=F64)
    st = model.state().replace(joint_qd=jnp.array([2.0, 0.0]))
    s = jax.jit(lambda s: _run(SolverFeatherstone(model), s, 100, 1e-3))(st)
    np.testing.assert_allclose(s.joint_qd[0], 2.0)
    np.testing.assert_allclose(s.joint_q[0], 0.2, rtol=1e-12)
    assert abs(float(s.joint_qd[1])) > 0.1  # the dynamic child still falls


def test_construction_errors_and_contacts_seam():
    b = jaxart.ModelBuilder()
    a = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
    c = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
    j0 = b.add_joint_revolute(-1, a)
    j1 = b.add_joint_revolute(a, c)
    b.add_articulation([j0, j1])
    b.add_joint_ball(-1, c, label="closing")
    model = b.finalize(dtype=F64)
    from jaxart.dynamics.engine.constraint_rows import constraint_plan

    assert [lp[0] for lp in constraint_plan(model).loops] == [2]  # enforced by default (test_featherstone_constraints)
    assert constraint_plan(model, ignore_loop_joints=True).empty
    solver = SolverFeatherstone(model, ignore_loop_joints=True)
    out = solver.step(model.state(), None, None, 1e-3)
    np.testing.assert_allclose(out.joint_q[2:6], model.joint_q[2:6])  # the loop joint is not simulated
    with pytest.raises(ValueError, match="drive"):
        SolverFeatherstone(model, drive="magic", ignore_loop_joints=True)

    with pytest.raises(TypeError, match="Contacts"):
        solver.step(model.state(), None, object(), 1e-3)
    # the seam: an extra COM wrench equals the same body_f
    from jaxart.solvers.featherstone.solver import featherstone_step

    w = jnp.zeros((2, 6)).at[1].set(jnp.array([0.0, 0.0, 5.0, 0.0, 1.0, 0.0]))
    s1 = featherstone_step(model, model.state(), None, 1e-3, extra_body_f=w)
    s2 = featherstone_step(model, model.state().replace(body_f=w), None, 1e-3)
    np.testing.assert_allclose(s1.joint_qd, s2.joint_qd, atol=1e-14)


def test_step_vmap_over_states_and_masses_matches_loop():
    model = _arm(n=3, ke=10.0, kd=1.0)
    rng = np.random.default_rng(0)
    qs = jnp.asarray(rng.normal(size=(3, 3)))
    masses = jnp.stack([model.body_mass * s for s in (0.5, 1.0, 3.0)])

    def one(mass, q):
        mdl = model.replace(body_mass=mass)
        st = mdl.state().replace(joint_q=q)
        return SolverFeatherstone(mdl).step(st, None, None, 1e-2).joint_qd

    batched = jax.jit(jax.vmap(one))(masses, qs)
    for i in range(3):
        np.testing.assert_allclose(batched[i], one(masses[i], qs[i]), rtol=1e-10, atol=1e-12)


def test_ball_drive_reaches_target_orientation():
    from helpers import quat_close, quat_from_axis_angle_np

    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=1.0, com=(0.0, 0.0, -0.3), inertia=np.eye(3) * 0.05)
    b.add_articulation([b.add_joint_ball(-1, link, actuator_mode=jaxart.JointTargetMode.POSITION_VELOCITY)])
    model = b.finalize(dtype=F64)
    target = quat_from_axis_angle_np([1.0, 2.0, -0.5], 1.2)
    model = model.replace(joint_target_ke=jnp.full((3,), 20.0), joint_target_kd=jnp.full((3,), 4.0))
    ctrl = model.control().replace(joint_target_q=jnp.asarray(target))
    final = jax.jit(lambda s: _run(SolverFeatherstone(model), s, 600, 1e-2, ctrl))(model.state())
    assert quat_close(final.joint_q, target, atol=1e-3)
