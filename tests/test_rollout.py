"""Rollouts: compile-once hygiene, gradients vs finite differences, remat/truncation, vmap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dyn_models import chain_spec, to_builder

import jaxart
from jaxart.rollout import rollout
from jaxart.solvers import SolverFeatherstone

F64 = jnp.float64
DT = 1e-2
T = 50


@pytest.fixture(scope="module")
def model():
    spec = chain_spec(2, length=0.4, mass=1.0)
    b = to_builder(spec)
    m = b.finalize(dtype=F64)
    return m.replace(joint_target_ke=jnp.full((2,), 5.0), joint_target_kd=jnp.full((2,), 0.5),
                     joint_damping=jnp.full((2,), 0.05))


def _controls(model, seed=0):
    rng = np.random.default_rng(seed)
    c = model.control()
    nd = model.joint_dof_count
    return c.replace(joint_f=jnp.asarray(rng.normal(size=(T, nd))),
                     joint_target_q=jnp.zeros((T, nd)), joint_target_qd=jnp.zeros((T, nd)),
                     joint_act=jnp.zeros((T, nd)))


def _loss_fn(model, remat="light", truncate=None):
    def loss(q0, joint_f, mass):
        mdl = model.replace(body_mass=model.body_mass.at[-1].set(mass))
        st = mdl.state().replace(joint_q=q0)
        ctrl = _controls(mdl).replace(joint_f=joint_f)
        final, tip = rollout(SolverFeatherstone(mdl), st, ctrl, dt=DT, remat=remat, truncate=truncate,
                             output_fn=lambda s: s.body_q[-1, :3])
        return jnp.sum(final.joint_q ** 2) + 0.1 * jnp.sum(final.joint_qd ** 2) + 0.01 * jnp.sum(tip[:, 2])

    return loss


def test_jitted_step_compiles_once_and_has_no_weak_types(model):
    solver = SolverFeatherstone(model)
    step = jax.jit(lambda s, c: solver.step(s, c, None, DT))
    ctrl = model.control()
    s1 = step(model.state(), ctrl)
    s2 = step(s1, ctrl)
    assert step._cache_size() == 1
    for leaf in jax.tree_util.tree_leaves(s2):
        assert leaf.dtype == jnp.float64 and not leaf.weak_type


@pytest.mark.slow  # reverse-mode compiles of a rollout: ~44 s on the loaded 2-core machine
def test_rollout_gradients_match_finite_differences(model):
    loss = _loss_fn(model)
    q0 = jnp.array([0.3, -0.4])
    jf = _controls(model).joint_f
    mass = jnp.asarray(1.3)
    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))(q0, jf, mass)
    f = jax.jit(loss)
    rng = np.random.default_rng(1)
    eps = 1e-6
    for k, x in enumerate((q0, jf, mass)):
        v = jnp.asarray(rng.normal(size=np.shape(x)))
        args = [q0, jf, mass]
        args_p, args_m = list(args), list(args)
        args_p[k] = x + eps * v
        args_m[k] = x - eps * v
        fd = (f(*args_p) - f(*args_m)) / (2 * eps)
        np.testing.assert_allclose(jnp.sum(grads[k] * v), fd, rtol=1e-5, atol=1e-8)


@pytest.mark.slow  # one rollout gradient compile per remat variant: ~94 s on the loaded 2-core machine
def test_remat_variants_and_truncation():
    model = to_builder(chain_spec(1, length=0.4, mass=1.0)).finalize(dtype=F64)
    q0 = jnp.array([0.3])
    jf = jnp.asarray(np.random.default_rng(0).normal(size=(T, 1)))
    mass = jnp.asarray(1.3)

    @jax.jit
    def all_grads(q, f, m):
        return [jax.grad(_loss_fn(model, remat=r), argnums=(0, 1))(q, f, m) for r in (None, "light", "step", "nested")]

    ref, *variants = all_grads(q0, jf, mass)
    for g in variants:
        np.testing.assert_allclose(g[0], ref[0], rtol=1e-10)
        np.testing.assert_allclose(g[1], ref[1], rtol=1e-10, atol=1e-14)

    def final_only(q, trunc):
        st = model.state().replace(joint_q=q)
        final, _ = rollout(SolverFeatherstone(model), st, _controls(model), dt=DT, truncate=trunc,
                           output_fn=lambda s: None)
        return jnp.sum(final.joint_q ** 2)

    grad_full, grad_trunc = jax.jit(lambda q: (jax.grad(final_only)(q, None), jax.grad(final_only)(q, 10)))(q0)
    assert np.abs(np.asarray(grad_full)).max() > 1e-3
    np.testing.assert_allclose(grad_trunc, 0.0)
    with pytest.raises(ValueError, match="remat"):
        rollout(SolverFeatherstone(model), model.state(), _controls(model), dt=DT, remat="bogus")
    with pytest.raises(ValueError, match="length"):
        rollout(lambda s, c: s, model.state(), None)


def test_vmap_rollout_matches_loop(model):
    rng = np.random.default_rng(3)
    q0s = jnp.asarray(rng.normal(size=(4, 2)) * 0.5)
    jfs = jnp.asarray(rng.normal(size=(4, T, 2)))

    def run(q0, jf):
        st = model.state().replace(joint_q=q0)
        final, _ = rollout(SolverFeatherstone(model), st, _controls(model).replace(joint_f=jf), dt=DT,
                           output_fn=lambda s: None)
        return final.joint_q

    batched = jax.jit(jax.vmap(run))(q0s, jfs)
    single = jax.jit(run)
    for i in range(4):
        np.testing.assert_allclose(batched[i], single(q0s[i], jfs[i]), rtol=1e-12, atol=1e-14)


def test_rollout_accepts_plain_step_functions(model):
    solver = SolverFeatherstone(model)
    a, _ = rollout(lambda s, c, dt: solver.step(s, c, None, dt), model.state(), _controls(model), dt=DT,
                   output_fn=lambda s: None)
    b, traj = rollout(solver, model.state(), _controls(model), dt=DT)
    np.testing.assert_allclose(a.joint_q, b.joint_q)
    assert traj.joint_q.shape == (T, 2)
    assert isinstance(traj, jaxart.State)


def _ball_run(model, solver, dt, steps, collide=None):
    """``z0 -> (final ball height, lowest height)`` of a rollout that starts the ball at height ``z0``."""

    def run(z0):
        st = model.state()
        q = st.joint_q.at[2].set(z0)
        st = jaxart.eval_fk(model, q, st.joint_qd, st.replace(joint_q=q))
        final, zs = rollout(solver, st, None, dt=dt, length=steps, collide=collide,
                            output_fn=lambda s: s.body_q[0, 2])
        return final.body_q[0, 2], jnp.min(zs)

    return run


def _ball_on_ground():
    """A 0.1 m, 4.2 kg ball on a free joint, 0.3 m above a ground plane (stiff contact: 1e5 N/m)."""
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=((0.0, 0.0, 0.3), (0.0, 0.0, 0.0, 1.0)))
    cfg = jaxart.ShapeConfig(ke=1e5, kd=1e3)
    b.add_shape_sphere(body, radius=0.1, cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    return b.finalize(dtype=F64)


@pytest.mark.parametrize("solver_name", ["SolverFeatherstone", "SolverXPBD", "SolverSemiImplicit"])
def test_rollout_collides_when_the_model_has_shapes(solver_name):
    model = _ball_on_ground()
    solver = getattr(jaxart.solvers, solver_name)(model)
    dt, steps = 2e-3, 300
    z_final, z_min = jax.jit(_ball_run(model, solver, dt, steps))(jnp.asarray(0.3))
    assert np.isfinite(z_final)
    assert 0.09 < float(z_min) and abs(float(z_final) - 0.1) < 0.01  # rests on the ground, bounded penetration
    z_free, _ = jax.jit(_ball_run(model, solver, dt, steps, collide=False))(jnp.asarray(0.3))
    np.testing.assert_allclose(z_free, 0.3 - 0.5 * 9.81 * (dt * steps) ** 2, atol=0.02)  # falls through


def test_rollout_contacts_equal_hand_written_steps_under_vmap():
    model = _ball_on_ground()
    solver = SolverFeatherstone(model)
    dt, steps = 2e-3, 150
    manual = model.state()
    step = jax.jit(lambda s: solver.step(s, None, model.collide(s), dt))
    for _ in range(steps):
        manual = step(manual)
    zs = jax.jit(jax.vmap(lambda z0: _ball_run(model, solver, dt, steps)(z0)[0]))(jnp.array([0.3, 0.25]))
    np.testing.assert_allclose(zs[0], manual.body_q[0, 2], rtol=1e-12, atol=1e-12)
    assert float(zs[1]) != float(zs[0])


@pytest.mark.slow  # reverse mode through 300 contact steps: one more compilation of the step's adjoint
def test_rollout_gradient_through_contacts_is_finite_and_matches_differences():
    model = _ball_on_ground()
    run = _ball_run(model, SolverFeatherstone(model), 2e-3, 100)
    z_of = jax.jit(lambda z0: run(z0)[0])
    g = jax.jit(jax.grad(lambda z0: run(z0)[0]))(jnp.asarray(0.2))
    fd = (z_of(jnp.asarray(0.2 + 1e-6)) - z_of(jnp.asarray(0.2 - 1e-6))) / 2e-6
    assert np.isfinite(g)
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-6)


def test_rollout_collide_option_is_checked():
    model = _ball_on_ground()
    with pytest.raises(ValueError, match="collide=True"):
        rollout(lambda s, c, dt: s, model.state(), None, dt=DT, length=2, collide=True)
    with pytest.raises(TypeError, match="collide"):
        rollout(SolverFeatherstone(model), model.state(), None, dt=DT, length=2, collide="yes")
