"""SolverMuJoCo(use_mujoco_contacts=False): jaxart's Contacts driving MJX's constraint solver.

Sphere–plane contacts have the same point / normal / distance conventions in jaxart and MuJoCo,
so trajectories must agree with MJX's own collision pipeline to round-off.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.solvers import SolverMuJoCo

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
DT = 0.002
G = 9.81
# MJX options that avoid batched LAPACK calls (vmap on CPU), shared so jitted rollouts are reused.
OPTS = {"integrator": "euler", "solver": "cg", "jacobian": "sparse"}


def sphere_builder(*, z=0.15, qd=(0.3, 0.0, 0.0, 0.0, 0.0, 2.0), mu=0.8):
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=((0.0, 0.0, z), (0, 0, 0, 1)), com=(0.02, 0.0, 0.0), mass=1.0,
                      inertia=np.diag([0.004, 0.004, 0.004]), lock_inertia=True, label="ball")
    b.add_shape_sphere(body, radius=0.1, cfg=jaxart.ShapeConfig(mu=mu))
    b.add_ground_plane()
    b.joint_qd[:] = qd
    return b


def box_builder():
    b = jaxart.ModelBuilder()
    q = (0.05, 0.03, 0.0, 0.99837)  # slightly tilted: lands on an edge, then settles flat
    body = b.add_body(xform=((0.0, 0.0, 0.12), q), mass=2.0, inertia=np.diag([0.01, 0.008, 0.015]), label="box")
    b.add_shape_box(body, hx=0.1, hy=0.15, hz=0.05)
    b.add_ground_plane()
    return b


def initial_state(model, **replace):
    st = model.state()
    st = st.replace(**{k: jnp.asarray(v, F64) for k, v in replace.items()})
    return jaxart.eval_fk(model, st.joint_q, st.joint_qd, st)


def rollout(model, solver, n):
    """Jitted n-step scan (contacts from model.collide at every step); returns final state and joint_q history."""
    def run(state):
        def body(s, _):
            s = solver.step(s, None, model.collide(s), DT)
            return s, s.joint_q
        return jax.lax.scan(body, state, None, length=n)
    return jax.jit(run)


@pytest.fixture(scope="module")
def sphere():
    model = sphere_builder().finalize(dtype=F64)
    return model, SolverMuJoCo(model, **OPTS), SolverMuJoCo(model, use_mujoco_contacts=False, **OPTS)


@pytest.fixture(scope="module")
def sphere_rollout(sphere):
    model, _, jx = sphere
    return rollout(model, jx, 100)


@pytest.mark.slow
def test_sphere_drop_matches_mujoco_collision(sphere, sphere_rollout):
    model, mj, _ = sphere
    st = initial_state(model)
    final, hist = sphere_rollout(st)
    _, ref = rollout(model, mj, 100)(st)
    np.testing.assert_allclose(hist, ref, atol=1e-9)
    z = np.asarray(hist[:, 2])
    assert z.min() < 0.101  # it landed (radius 0.1) ...
    assert abs(z[-1] - 0.1) < 5e-3  # ... and rests on the plane instead of falling through
    assert float(final.joint_qd[0]) != pytest.approx(0.3, abs=1e-3)  # friction acted on the sliding ball


@pytest.mark.slow
def test_separated_and_inactive_contacts_give_free_fall(sphere, sphere_rollout):
    model, _, jx = sphere
    z0, n = 1.0, 100
    st = initial_state(model, joint_q=[0.0, 0.0, z0, 0.0, 0.0, 0.0, 1.0], joint_qd=np.zeros(6))
    _, hist = sphere_rollout(st)
    k = np.arange(1, n + 1)
    np.testing.assert_allclose(hist[:, 2], z0 - G * DT * DT * k * (k + 1) / 2, atol=1e-12)  # semi-implicit Euler
    # a penetrating contact flagged inactive produces no force either
    low = initial_state(model, joint_q=[0.0, 0.0, 0.05, 0.0, 0.0, 0.0, 1.0], joint_qd=np.zeros(6))
    c = model.collide(low)
    assert bool(c.active[0]) and float(c.separation[0]) < -0.04
    off = jx.step(low, None, c.replace(active=jnp.zeros_like(c.active)), DT)
    np.testing.assert_allclose(off.joint_qd[:3], [0.0, 0.0, -G * DT], atol=1e-12)
    on = jx.step(low, None, c, DT)
    assert float(on.joint_qd[2]) > 0.0  # the active one pushes the sphere out


@pytest.mark.slow
def test_box_settles_on_plane():
    model = box_builder().finalize(dtype=F64)
    solver = SolverMuJoCo(model, integrator="euler", use_mujoco_contacts=False)
    st = initial_state(model)
    final, hist = rollout(model, solver, 400)(st)
    z = np.asarray(hist[:, 2])
    assert abs(z[-1] - 0.05) < 2e-3  # half height 0.05, soft-contact penetration ~1 mm
    # MJX's own box–plane collision keeps other corners during the edge impact (transients differ
    # by ~2e-2), but the resting height is the same soft-contact equilibrium
    _, ref = rollout(model, SolverMuJoCo(model, integrator="euler"), 400)(st)
    np.testing.assert_allclose(z[-1], ref[-1, 2], atol=1e-7)
    q = np.asarray(final.joint_q[3:7])
    assert np.abs(q[:2]).max() < 1e-2  # settled flat on a face
    assert float(jnp.abs(final.joint_qd).max()) < 2e-2


@pytest.mark.slow
def test_jit_vmap_four_worlds(sphere, sphere_rollout):
    model, _, _ = sphere
    zs = jnp.array([0.3, 0.15, 0.11, 0.5], F64)
    states = jax.vmap(lambda z: initial_state(model, joint_q=model.joint_q.at[2].set(z)))(zs)
    final, hist = jax.jit(jax.vmap(sphere_rollout))(states)
    assert hist.shape == (4, 100, 7)
    _, one_hist = sphere_rollout(jax.tree_util.tree_map(lambda x: x[2], states))
    np.testing.assert_allclose(hist[2], one_hist, atol=1e-10)
    assert float(jnp.abs(hist[0, :, 2] - hist[3, :, 2]).max()) > 0.05  # worlds differ
    assert float(jnp.abs(final.joint_q[:, 2] - 0.1).max()) < 0.25


@pytest.mark.slow  # reverse-mode compile of 10 MJX steps: ~15 s idle, ~45 s on a loaded machine
def test_gradient_of_height_wrt_initial_velocity_through_contact():
    model = sphere_builder(z=0.099, qd=np.zeros(6)).finalize(dtype=F64)
    solver = SolverMuJoCo(model, iterations=1, ls_iterations=4, use_mujoco_contacts=False, **OPTS)

    def final_height(vz):
        st = initial_state(model, joint_qd=jnp.zeros(6, F64).at[2].set(vz))
        def body(s, _):
            return solver.step(s, None, model.collide(s), DT), None
        s, _ = jax.lax.scan(body, st, None, length=10)
        return s.joint_q[2]

    vz, eps = -0.3, 1e-6
    value_and_grad = jax.jit(jax.value_and_grad(final_height))  # one compile serves the FD values too
    _, g = value_and_grad(vz)
    fd = (value_and_grad(vz + eps)[0] - value_and_grad(vz - eps)[0]) / (2 * eps)
    assert np.isfinite(float(g))
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-8)
    assert 0.0 < float(g) < 10 * DT  # contact damping reduces the free-flight sensitivity (10·dt)


def test_bad_contacts_argument_and_options(sphere):
    model, _, jx = sphere
    st = initial_state(model)
    with pytest.raises(ValueError, match="contacts is None"):
        jx.step(st, None, None, DT)
    with pytest.raises(TypeError, match="jaxart.Contacts"):
        jx.step(st, None, {"separation": 0.0}, DT)
    with pytest.raises(NotImplementedError, match="RK4"):
        SolverMuJoCo(model, integrator="rk4", use_mujoco_contacts=False)


@pytest.mark.slow  # two more MJX compiles
def test_articulation_with_limits_friction_and_contacts_matches_mujoco_collision():
    # constraint rows of every kind (joint friction, limits, contacts): checks the efc layout
    b = jaxart.ModelBuilder()
    arm = b.add_link(mass=1.0, com=(0.0, 0.0, -0.5), inertia=np.diag([0.01, 0.01, 0.01]), label="arm")
    b.add_shape_sphere(arm, xform=((0, 0, -0.5), (0, 0, 0, 1)), radius=0.1)
    fore = b.add_link(mass=0.5, com=(0.0, 0.0, -0.2), inertia=np.diag([0.01, 0.01, 0.01]), label="fore")
    b.add_shape_sphere(fore, xform=((0, 0, -0.3), (0, 0, 0, 1)), radius=0.05)
    j0 = b.add_joint_revolute(-1, arm, axis=(1, 0, 0), parent_xform=((0, 0, 0.55), (0, 0, 0, 1)),
                              limit_lower=-0.5, limit_upper=1.2, armature=0.01)
    j1 = b.add_joint_revolute(arm, fore, axis=(1, 0, 0), parent_xform=((0, 0, -0.5), (0, 0, 0, 1)),
                              limit_lower=-0.3, limit_upper=0.3, friction=0.05)
    b.add_articulation([j0, j1])
    b.add_ground_plane()
    b.joint_q[:] = [1.0, 0.2]
    model = b.finalize(dtype=F64)
    mj, jx = SolverMuJoCo(model, **OPTS), SolverMuJoCo(model, use_mujoco_contacts=False, **OPTS)
    st = initial_state(model)
    _, hist = rollout(model, jx, 300)(st)
    _, ref = rollout(model, mj, 300)(st)
    np.testing.assert_allclose(hist, ref, atol=1e-9)
    np.testing.assert_allclose(hist[-1, 1], 0.3, atol=2e-3)  # the elbow rests on its limit
    assert 0.6 < float(hist[-1, 0]) < 0.95  # held up by the ground (hanging would be 0)
