"""PhysX drive options in SolverFeatherstone: acceleration drives and drive limits as forces
or impulses.

Oracles: the closed form of the implicit PD recursion and of the continuous critically damped oscillator,
the mass matrix (``1 / (H⁻¹)_ii``), the clamped first step of a saturated drive, and finite differences.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import jaxart
from jaxart import JointDriveType
from jaxart.dynamics import eval_joint_solver_forces, eval_mass_matrix
from jaxart.dynamics.engine.drive_inertia import drive_inertia

F64 = jnp.float64
DT = 2e-3
OMEGA = 12.0  # critically damped: ke = ω², kd = 2ω
TARGET = 0.5


def _slider_chain(m1, m2, *, drive_type=JointDriveType.ACCELERATION, armature=0.0, effort_limit=1e6):
    """Two sliders along X (the second rides on the first, undriven), no gravity: ``H = [[m1+m2, m2], [m2, m2]]``."""
    b = jaxart.ModelBuilder(gravity=0.0)
    inertia = np.eye(3) * 0.01
    a = b.add_link(mass=m1, inertia=inertia, lock_inertia=True)
    c = b.add_link(mass=m2, inertia=inertia, lock_inertia=True)
    j0 = b.add_joint_prismatic(-1, a, axis=(1, 0, 0), target_q=TARGET, target_ke=OMEGA ** 2, target_kd=2 * OMEGA,
                               drive_type=drive_type, armature=armature, effort_limit=effort_limit)
    j1 = b.add_joint_prismatic(a, c, axis=(1, 0, 0))
    b.add_articulation([j0, j1])
    return b.finalize(dtype=F64)


def _pendulum(inertia_yy, armature):
    """One link on a hinge about Y, no gravity, acceleration drive."""
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(com=(0.3, 0.0, 0.0), mass=2.0, inertia=np.diag([0.01, inertia_yy, 0.01]), lock_inertia=True)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 1, 0), target_q=TARGET, target_ke=OMEGA ** 2,
                                             target_kd=2 * OMEGA, armature=armature,
                                             drive_type=JointDriveType.ACCELERATION)])
    return b.finalize(dtype=F64)


def _trajectory(model, steps=400):
    solver = jaxart.solvers.SolverFeatherstone(model)

    def body(s, _):
        s = solver.step(s, None, None, DT)
        return s, s.joint_q[0]

    _, q = jax.lax.scan(body, model.state(), None, length=steps)
    return np.asarray(q)


def _implicit_pd(steps=400):
    """The implicit PD recursion in acceleration units: q̈ = (ke (e − dt v) − kd v) / (1 + kd dt + ke dt²)."""
    ke, kd = OMEGA ** 2, 2 * OMEGA
    q = v = 0.0
    out = []
    for _ in range(steps):
        a = (ke * (TARGET - q - DT * v) - kd * v) / (1.0 + kd * DT + ke * DT * DT)
        v += DT * a
        q += DT * v
        out.append(q)
    return np.asarray(out)


@pytest.mark.slow
def test_acceleration_drive_same_trajectory_for_any_link_mass():
    ref = _implicit_pd()
    t = DT * np.arange(1, len(ref) + 1)
    continuous = TARGET * (1.0 - (1.0 + OMEGA * t) * np.exp(-OMEGA * t))
    np.testing.assert_allclose(ref, continuous, atol=0.03 * TARGET)  # the scheme is first order in dt
    for m1, m2, arm in ((1.0, 1.0, 0.0), (5.0, 0.2, 0.0), (0.3, 4.0, 0.7)):
        np.testing.assert_allclose(_trajectory(_slider_chain(m1, m2, armature=arm)), ref, atol=1e-10)
    for iyy, arm in ((0.02, 0.0), (0.5, 0.1)):
        np.testing.assert_allclose(_trajectory(_pendulum(iyy, arm)), ref, atol=1e-10)
    # a force drive with the same gains depends on the masses (so the comparison above can fail)
    light, heavy = (_trajectory(_slider_chain(m, 1.0, drive_type=JointDriveType.FORCE)) for m in (0.5, 5.0))
    assert np.abs(light - heavy).max() > 0.05


def test_drive_inertia_is_inverse_of_the_inverse_mass_matrix_diagonal():
    rng = np.random.default_rng(2)
    b = jaxart.ModelBuilder()
    links = [b.add_link(com=tuple(rng.normal(size=3) * 0.1), mass=1.0 + i, inertia=np.eye(3) * 0.05,
                        lock_inertia=True) for i in range(3)]
    js = [b.add_joint_revolute(-1, links[0], axis=(0, 0, 1), drive_type=JointDriveType.ACCELERATION, armature=0.2),
          b.add_joint_revolute(links[0], links[1], axis=(0, 1, 0), parent_xform=((0.3, 0, 0), (0, 0, 0, 1))),
          b.add_joint_prismatic(links[1], links[2], axis=(1, 0, 0), parent_xform=((0, 0, -0.3), (0, 0, 0, 1)))]
    b.add_articulation(js)
    model = b.finalize(dtype=F64)
    np.testing.assert_array_equal(model.joint_drive_type, [1, 0, 0])
    st = jaxart.eval_fk(model, jnp.array([0.3, -0.8, 0.1]), jnp.zeros(3), model.state())
    h = np.asarray(eval_mass_matrix(model, st)[0])
    np.testing.assert_allclose(np.asarray(drive_inertia(model, st.joint_q, st.body_q)),
                               1.0 / np.diag(np.linalg.inv(h)), rtol=1e-12)
    assert not np.allclose(1.0 / np.diag(np.linalg.inv(h)), np.diag(h))  # not the plain diagonal


@pytest.mark.parametrize("drive_type", [JointDriveType.FORCE, JointDriveType.ACCELERATION])
def test_effort_limit_as_force_or_impulse(drive_type):
    """A saturated drive from rest: the first step's force is the limit (force) or limit / dt (impulse)."""
    limit, m1, m2 = 0.1, 2.0, 0.5  # the PD force from rest is 72 N (force drive) or 144 N (acceleration drive)
    model = _slider_chain(m1, m2, drive_type=drive_type, effort_limit=limit)
    st = model.state()
    for forces, expected in ((True, limit), (False, limit / DT)):
        solver = jaxart.solvers.SolverFeatherstone(model, drive_limits_are_forces=forces)
        nxt = solver.step(st, None, None, DT)
        tau = eval_joint_solver_forces(model, st, None, nxt.joint_qd, DT, drive_limits_are_forces=forces)
        np.testing.assert_allclose(float(tau[0]), expected, rtol=1e-12)
        # generalized force on DOF 0 alone: q̈ = H⁻¹ (f, 0) = (f / m1, −f / m1)
        np.testing.assert_allclose(np.asarray(nxt.joint_qd), DT * expected / m1 * np.array([1.0, -1.0]), rtol=1e-10)
    # an unsaturated drive is not clamped: 0.1 N·s per 2 ms step allows 50 N
    solver = jaxart.solvers.SolverFeatherstone(model, drive_limits_are_forces=False)
    st_near = st.replace(joint_q=jnp.array([TARGET - 1e-3, 0.0]))
    nxt = solver.step(st_near, None, None, DT)
    tau = float(eval_joint_solver_forces(model, st_near, None, nxt.joint_qd, DT, drive_limits_are_forces=False)[0])
    assert 0.0 < tau < limit / DT


def test_acceleration_drive_batched_matches_single():
    model = _slider_chain(1.5, 0.7)
    solver = jaxart.solvers.SolverFeatherstone(model)
    st = model.state()
    batch = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), st)
    batch = batch.replace(joint_q=batch.joint_q.at[1, 0].set(0.2))
    out = jax.jit(jax.vmap(lambda s: solver.step(s, None, None, DT)))(batch)
    for k in range(2):
        one = solver.step(jax.tree_util.tree_map(lambda x, k=k: x[k], batch), None, None, DT)
        np.testing.assert_allclose(np.asarray(out.joint_qd[k]), np.asarray(one.joint_qd), atol=1e-12)


@pytest.mark.slow
def test_acceleration_drive_gradient_fd():
    """d(final pose)/d(gains, masses) of a short rollout of a coupled two-hinge arm against finite differences."""
    b = jaxart.ModelBuilder()
    l0 = b.add_link(com=(0.2, 0.0, 0.0), mass=1.0, inertia=np.eye(3) * 0.02, lock_inertia=True)
    l1 = b.add_link(com=(0.2, 0.0, 0.0), mass=0.7, inertia=np.eye(3) * 0.02, lock_inertia=True)
    js = [b.add_joint_revolute(-1, l0, axis=(0, 1, 0), target_q=0.4, target_ke=100.0, target_kd=20.0,
                               drive_type=JointDriveType.ACCELERATION),
          b.add_joint_revolute(l0, l1, axis=(0, 1, 0), parent_xform=((0.4, 0, 0), (0, 0, 0, 1)), target_q=-0.3,
                               target_ke=80.0, target_kd=15.0, drive_type=JointDriveType.ACCELERATION)]
    b.add_articulation(js)
    model = b.finalize(dtype=F64)

    def final(ke, mass):
        m = model.replace(joint_target_ke=ke, body_mass=mass)
        solver = jaxart.solvers.SolverFeatherstone(m)
        s = m.state()
        for _ in range(5):
            s = solver.step(s, None, None, 5e-3)
        return s.joint_q

    check_grads(final, (model.joint_target_ke, model.body_mass), order=1, modes=("fwd", "rev"), atol=1e-6,
                rtol=1e-5)


def test_drive_type_validation_and_merge():
    with pytest.raises(ValueError, match="drive_type"):
        jaxart.JointDofConfig(drive_type=7)
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0)
    b.add_articulation([b.add_joint_revolute(-1, link, drive_type=JointDriveType.ACCELERATION)])
    world = jaxart.ModelBuilder()
    world.add_builder(b)
    link2 = world.add_link(mass=1.0)
    world.add_articulation([world.add_joint_prismatic(-1, link2)])
    np.testing.assert_array_equal(world.finalize().joint_drive_type, [1, 0])


@pytest.mark.slow
def test_solver_forces_with_acceleration_drives_satisfy_the_step_equation():
    """eval_joint_solver_forces scales acceleration drives like the step: τ_solver = M q̈ + C q̇ + g."""
    from jaxart.dynamics import eval_inverse_dynamics_force

    b = jaxart.ModelBuilder()
    l0 = b.add_link(com=(0.2, 0.0, 0.0), mass=1.0, inertia=np.eye(3) * 0.02, lock_inertia=True)
    l1 = b.add_link(com=(0.2, 0.0, 0.1), mass=0.7, inertia=np.eye(3) * 0.02, lock_inertia=True)
    js = [b.add_joint_revolute(-1, l0, axis=(0, 1, 0), target_q=0.4, target_ke=100.0, target_kd=20.0,
                               drive_type=JointDriveType.ACCELERATION, effort_limit=3.0),
          b.add_joint_revolute(l0, l1, axis=(0, 0, 1), parent_xform=((0.4, 0, 0), (0, 0, 0, 1)), target_q=-0.3,
                               target_ke=80.0, target_kd=15.0, drive_type=JointDriveType.ACCELERATION)]
    b.add_articulation(js)
    model = b.finalize(dtype=F64)
    st = jaxart.eval_fk(model, jnp.array([-0.2, 0.5]), jnp.array([0.3, -1.0]), model.state())
    for forces in (True, False):
        solver = jaxart.solvers.SolverFeatherstone(model, drive_limits_are_forces=forces)
        nxt = solver.step(st, None, None, DT)
        tau = np.asarray(eval_joint_solver_forces(model, st, None, nxt.joint_qd, DT, drive_limits_are_forces=forces))
        inv = np.asarray(eval_inverse_dynamics_force(model, st, (nxt.joint_qd - st.joint_qd) / DT))
        np.testing.assert_allclose(tau, inv, atol=1e-9)
        if forces:
            np.testing.assert_allclose(tau[0], 3.0, rtol=1e-12)  # 100·0.6 rad/s² times its inertia exceeds 3 N·m
