"""SolverXPBD: positional joints (oblique limits, DISTANCE, loops), contacts, restitution, gradients."""

import math

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.sim.configs import ShapeConfig  # noqa: E402
from jaxart.solvers.maximal.joints import joint_frames  # noqa: E402

G = 9.81
NO_COLLIDE = ShapeConfig(collision_group=0)


def _rollout_fn(solver, n, dt, *, contacts=True, control=None):
    model = solver.model

    def body(s, _):
        c = model.collide(s) if contacts else None
        s = solver.step(s, control, c, dt)
        return s, (s.body_q, s.joint_q)

    return lambda s: jax.lax.scan(body, s, None, length=n)


def _rollout(solver, state, n, dt, *, contacts=True, control=None):
    return jax.jit(_rollout_fn(solver, n, dt, contacts=contacts, control=control))(state)


def _tf(p, q=(0.0, 0.0, 0.0, 1.0)):
    return (*p, *q)


@pytest.mark.slow
def test_oblique_limit_drive_and_universal_joint():
    """Three links on the world (one rollout): oblique revolute driven into its limit, z revolute driven
    to a target inside its range, universal joint spun about its locked axis."""
    b = jaxart.ModelBuilder(gravity=0.0)
    links = [b.add_link(xform=_tf((0.0, 2.0 * i, 0.0))) for i in range(3)]
    for lk in links:
        b.add_shape_box(lk, xform=_tf((0.3, 0.0, 0.0)), hx=0.3, hy=0.05, hz=0.05, cfg=NO_COLLIDE)
    axis = tuple(np.ones(3) / math.sqrt(3.0))
    j0 = b.add_joint_revolute(-1, links[0], axis=axis, limit_lower=-0.3, limit_upper=0.3, target_ke=50.0,
                              target_kd=5.0)
    j1 = b.add_joint_revolute(-1, links[1], axis=(0.0, 0.0, 1.0), target_ke=100.0, target_kd=10.0,
                              parent_xform=_tf((0.0, 2.0, 0.0)))
    j2 = b.add_joint_universal(-1, links[2], axis_0=(1.0, 0.0, 0.0), axis_1=(0.0, 1.0, 0.0),
                               parent_xform=_tf((0.0, 4.0, 0.0)))
    b.add_articulation([j0, j1, j2])
    model = b.finalize(dtype=jnp.float64)
    state = model.state()
    state = state.replace(body_qd=state.body_qd.at[2, 3:].set(jnp.array([1.0, 0.5, 2.0])))  # includes locked z
    solver = jaxart.solvers.SolverXPBD(model)
    control = model.control().replace(joint_target_q=jnp.array([1.5, 0.7, 0.0, 0.0]))
    final, (bq, jq) = _rollout(solver, state, 1500, 2e-3, contacts=False, control=control)
    q = np.asarray(final.body_q[0, 3:])
    angle = 2.0 * math.atan2(np.linalg.norm(q[:3]), q[3])
    np.testing.assert_allclose(angle, 0.3, atol=3e-3)  # Newton stops near 0.214 here
    np.testing.assert_allclose(q[:3] / np.linalg.norm(q[:3]), axis, atol=1e-3)  # pure rotation about the axis
    assert float(jnp.max(jq[:, 0])) < 0.3 + 0.05  # transient overshoot at impact only (angular relaxation 0.4)
    np.testing.assert_allclose(float(final.joint_q[0]), 0.3, atol=3e-3)
    np.testing.assert_allclose(float(final.joint_q[1]), 0.7, atol=2e-3)
    # universal R = Rx(q0) Ry(q1): no rotation about the locked direction, i.e. R[0, 1] = 0
    rots = np.asarray(jax.vmap(jaxart.math.quat_to_matrix)(bq[:, 2, 3:]))
    assert np.abs(rots[:, 0, 1]).max() < 5e-3, np.abs(rots[:, 0, 1]).max()
    assert np.abs(np.asarray(jq[:, 2:])).max() > 0.5  # the free axes did move


@pytest.mark.slow
def test_distance_joint_limits():
    lo, hi = 0.5, 1.0
    b = jaxart.ModelBuilder()
    link = b.add_link(xform=_tf((0.9, 0.0, 0.0)))
    b.add_shape_sphere(link, radius=0.05, cfg=NO_COLLIDE)
    j = b.add_joint_distance(-1, link, min_distance=lo, max_distance=hi)
    b.add_articulation([j])
    model = b.finalize(dtype=jnp.float64)
    s0 = model.state()
    out = s0.replace(body_qd=s0.body_qd.at[0, 0].set(2.0))  # flies outward into max_distance
    inward = s0.replace(body_q=s0.body_q.at[0, 0].set(0.7), body_qd=s0.body_qd.at[0, 0].set(-2.0))
    batch = jax.tree_util.tree_map(lambda x, y: jnp.stack([x, y]), out, inward)
    solver = jaxart.solvers.SolverXPBD(model, iterations=4)
    _, (bq, _) = jax.vmap(lambda s: _rollout_fn(solver, 1000, 1e-3, contacts=False)(s))(batch)
    dist = np.linalg.norm(np.asarray(bq[:, :, 0, :3]), axis=-1)
    assert dist.max() < hi + 2e-3 and dist.min() > lo - 2e-3, (dist.min(), dist.max())
    assert dist[0].max() > hi - 5e-3 and dist[1].min() < lo + 5e-3  # both bounds were reached


def _four_bar(angle=0.4):
    b = jaxart.ModelBuilder()
    arm = 0.5
    a, bb = np.zeros(3), np.array([1.0, 0.0, 0.0])
    c = a + arm * np.array([math.sin(angle), 0.0, -math.cos(angle)])
    d = c + (bb - a)
    mids = [(a + c) / 2, (c + d) / 2, (d + bb) / 2]
    links = [b.add_link(xform=_tf(p)) for p in mids]
    for lk in links:
        b.add_shape_sphere(lk, radius=0.05, cfg=NO_COLLIDE)
    y = (0.0, 1.0, 0.0)
    j0 = b.add_joint_revolute(-1, links[0], axis=y, parent_xform=_tf(a), child_xform=_tf(a - mids[0]))
    j1 = b.add_joint_revolute(links[0], links[1], axis=y, parent_xform=_tf(c - mids[0]),
                              child_xform=_tf(c - mids[1]))
    j2 = b.add_joint_revolute(links[1], links[2], axis=y, parent_xform=_tf(d - mids[1]),
                              child_xform=_tf(d - mids[2]))
    b.add_articulation([j0, j1, j2])
    j3 = b.add_joint_revolute(-1, links[2], axis=y, parent_xform=_tf(bb), child_xform=_tf(bb - mids[2]))
    return b.finalize(dtype=jnp.float64), j3


@pytest.mark.slow
def test_four_bar_loop_closure_error_below_1mm():
    model, j3 = _four_bar()
    solver = jaxart.solvers.SolverXPBD(model, iterations=4)
    dt = 1e-3
    _, (bq, jq) = _rollout(solver, model.state(), int(2.0 / dt), dt, contacts=False)
    errs = jax.vmap(lambda q: jnp.linalg.norm(joint_frames(model, q, jnp.zeros((3, 6))).x_err, axis=-1))(bq)
    assert float(jnp.max(errs)) < 1e-3, np.asarray(jnp.max(errs, 0))
    crank = np.asarray(jq[:, 0])
    assert crank.max() - crank.min() > 0.5  # it swings


def _box_on_plane(*, mu=0.5, z=0.1, restitution=0.0):
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=_tf((0.0, 0.0, z)))
    cfg = ShapeConfig(mu=mu, restitution=restitution, mu_torsional=0.0, mu_rolling=0.0)
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    return b.finalize(dtype=jnp.float64)


def test_block_on_incline_sticks_or_slides():
    theta = 0.5  # tan = 0.546; mu = 0.8 sticks, mu = 0.3 slides (one vmapped rollout over the material)
    model = _box_on_plane(mu=0.8, z=0.1)
    model = model.replace(gravity=jnp.array([G * math.sin(theta), 0.0, -G * math.cos(theta)]))
    mus = jnp.array([0.8, 0.3])
    # Jacobi contact projection converges geometrically per round (a cube's four corners: 25 % of
    # the residual slip per round), so sticking needs enough rounds: 16 here
    dt, n = 1e-3, 600

    def run(mu):
        m = model.replace(shape_material_mu=jnp.full_like(model.shape_material_mu, mu))
        solver = jaxart.solvers.SolverXPBD(m, iterations=16)
        return _rollout_fn(solver, n, dt)(m.state())[1][0][:, 0, 0]

    xs = np.asarray(jax.jit(jax.vmap(run))(mus))
    t = dt * (np.arange(n) + 1)
    stick, slide = xs
    assert abs(stick[-1]) < 1e-3 and abs(np.polyfit(t, stick, 2)[0] * 2) < 1e-2, stick[-1]
    a_fit = np.polyfit(t, slide, 2)[0] * 2
    np.testing.assert_allclose(a_fit, G * (math.sin(theta) - 0.3 * math.cos(theta)), rtol=0.01)


def _ball(e=0.5, h=1.0, r=0.1):
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=_tf((0.0, 0.0, h + r)))
    cfg = ShapeConfig(restitution=e, mu=0.0, mu_torsional=0.0, mu_rolling=0.0)
    b.add_shape_sphere(body, radius=r, cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    return b.finalize(dtype=jnp.float64)


def test_restitution_bounce_height():
    e, h, r = 0.5, 1.0, 0.1
    model = _ball(e, h, r)
    solver = jaxart.solvers.SolverXPBD(model, enable_restitution=True)
    dt = 1e-3
    _, (bq, _) = _rollout(solver, model.state(), 1300, dt)
    z = np.asarray(bq[:, 0, 2]) - r
    first = int(np.argmin(z[:700]))
    bounce = z[first:].max()
    np.testing.assert_allclose(bounce, e * e * h, rtol=0.05)


def test_momentum_conserved_in_free_body_collision():
    b = jaxart.ModelBuilder(gravity=0.0)
    s0 = b.add_body(xform=_tf((0.0, 0.0, 0.0)))
    s1 = b.add_body(xform=_tf((0.5, 0.05, 0.0)))
    b.add_shape_sphere(s0, radius=0.1, cfg=ShapeConfig(mu=0.5))
    b.add_shape_box(s1, hx=0.1, hy=0.1, hz=0.1, cfg=ShapeConfig(density=500.0, mu=0.5))
    model = b.finalize(dtype=jnp.float64)
    state = model.state()
    state = state.replace(body_qd=state.body_qd.at[0, 0].set(2.0).at[1, 0].set(-1.0).at[1, 5].set(1.0))
    solver = jaxart.solvers.SolverXPBD(model)
    m = np.asarray(model.body_mass)

    def momentum(s):
        v = np.asarray(s.body_qd)
        return (m[:, None] * v[:, :3]).sum(0)

    final, (bq, _) = _rollout(solver, state, 300, 1e-3)
    p0, p1 = momentum(state), momentum(final)
    np.testing.assert_allclose(p1, p0, atol=1e-9 * np.abs(p0).max())
    v = np.asarray(final.body_qd)
    assert v[0, 0] < 1.9  # they did collide


@pytest.mark.slow
def test_gradient_of_bounce_height_wrt_initial_velocity_matches_fd():
    model = _ball(0.5, 0.3, 0.1)
    solver = jaxart.solvers.SolverXPBD(model, enable_restitution=True, iterations=1)
    dt, n = 4e-3, 120  # falls, bounces once (e = 0.5) and is in flight at the end

    def final_height(vz):
        s = model.state()
        s = s.replace(body_qd=s.body_qd.at[0, 2].set(vz))

        def body(s, _):
            return solver.step(s, None, model.collide(s), dt), None

        s, _ = jax.lax.scan(body, s, None, length=n)
        return s.body_q[0, 2]

    vg = jax.jit(jax.value_and_grad(final_height))  # one compilation for values and gradients
    eps = 1e-5
    for v0 in (-0.5, 0.4):
        grad = float(vg(v0)[1])
        fd = (float(vg(v0 + eps)[0]) - float(vg(v0 - eps)[0])) / (2 * eps)
        assert np.isfinite(grad) and abs(grad) > 1e-3
        np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-7)


def test_jit_cache_vmap_and_bad_options():
    model = _box_on_plane(z=0.2)
    solver = jaxart.solvers.SolverXPBD(model)
    step = jax.jit(lambda s: solver.step(s, None, model.collide(s), 1e-3))
    s0 = model.state()
    step(step(s0))
    assert step._cache_size() == 1
    zs = jnp.array([0.2, 0.099])
    batch = jax.vmap(lambda z: s0.replace(body_q=s0.body_q.at[0, 2].set(z)))(zs)
    out = jax.vmap(step)(batch)
    for i, z in enumerate(zs):
        single = step(s0.replace(body_q=s0.body_q.at[0, 2].set(z)))
        np.testing.assert_allclose(np.asarray(out.body_q[i]), np.asarray(single.body_q), atol=1e-12)
    with pytest.raises(ValueError, match="iterations"):
        jaxart.solvers.SolverXPBD(model, iterations=0)
    b = jaxart.ModelBuilder()
    link = b.add_link()
    b.add_shape_sphere(link, radius=0.1)
    j = b.add_joint_ball(-1, link)
    b.add_articulation([j])
    m2 = b.finalize(dtype=jnp.float64)
    m2 = m2.replace(joint_limit_upper=m2.joint_limit_upper.at[0].set(0.5))
    jaxart.solvers.SolverXPBD(m2)  # BALL limits are supported (tests/solvers/xpbd/test_xpbd_ball.py)


@pytest.mark.parametrize("solver_cls", [jaxart.solvers.SolverXPBD, jaxart.solvers.SolverSemiImplicit,
                                        jaxart.solvers.SolverFeatherstone])
@pytest.mark.slow
def test_vmap_over_controls_with_a_shared_state(solver_cls):
    """A batch of controls from one unbatched state (sampling-based planning): the batch-minor kernels
    must take the lane count from every input, not only from the state (regression: XPBD's
    projection loop carried one lane in, sixteen out)."""
    b = jaxart.ModelBuilder()
    b.add_mjcf(jaxart.assets.asset_path("double_pendulum"))
    model = b.finalize(dtype=jnp.float64)
    solver = solver_cls(model)
    s0 = model.state()
    s0 = s0.replace(joint_q=s0.joint_q + 0.3)
    forces = jnp.linspace(-1.0, 1.0, 4)[:, None] * jnp.ones((1, model.joint_dof_count))

    def run(f):
        control = model.control().replace(joint_f=f)
        s = s0
        for _ in range(3):
            s = solver.step(s, control, None, 1e-3)
        return s.body_q

    batched = jax.jit(jax.vmap(run))(forces)
    for i in range(forces.shape[0]):
        np.testing.assert_allclose(np.asarray(batched[i]), np.asarray(jax.jit(run)(forces[i])), atol=1e-10)
    assert not np.allclose(batched[0], batched[-1])  # the controls matter
