"""SolverSemiImplicit: maximal coordinates, penalty joints and penalty contact."""

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


def _rollout(solver, state, n, dt, *, contacts=True, control=None):
    model = solver.model

    def body(s, _):
        c = model.collide(s) if contacts else None
        s = solver.step(s, control, c, dt)
        return s, (s.body_q, s.joint_q)

    return jax.jit(lambda s: jax.lax.scan(body, s, None, length=n))(state)


def _box_on_plane(*, mu=0.5, kf=1000.0, ke=2.5e4, z=0.1, half=0.1):
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0))
    cfg = ShapeConfig(ke=ke, kd=500.0, kf=kf, mu=mu)
    b.add_shape_box(body, hx=half, hy=half, hz=half, cfg=cfg)
    b.add_ground_plane(cfg=cfg)
    return b.finalize(dtype=jnp.float64)


def test_free_fall_matches_discrete_semi_implicit_euler():
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_sphere(body, radius=0.1)
    model = b.finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverSemiImplicit(model)
    n, dt = 100, 1e-3
    final, (bq, jq) = _rollout(solver, model.state(), n, dt, contacts=False)
    np.testing.assert_allclose(float(final.body_q[0, 2]), 2.0 - G * dt * dt * n * (n + 1) / 2, rtol=1e-12)
    np.testing.assert_allclose(float(final.body_qd[0, 2]), -G * dt * n, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(final.joint_q), np.asarray(final.body_q[0]), atol=1e-12)  # eval_ik


@pytest.mark.parametrize("mu", [0.8, 0.3])
def test_block_on_incline_sticks_or_slides(mu):
    theta = 0.5  # tan(theta) = 0.546
    model = _box_on_plane(mu=mu, z=0.1 - 8.0 * G / (4 * 2.5e4))
    model = model.replace(gravity=jnp.array([G * math.sin(theta), 0.0, -G * math.cos(theta)]))
    solver = jaxart.solvers.SolverSemiImplicit(model, angular_damping=0.0)
    dt, n = 1e-3, 600
    final, (bq, _) = _rollout(solver, model.state(), n, dt)
    x = np.asarray(bq[:, 0, 0])
    if mu > math.tan(theta):
        # viscous creep below the cone: v = m g sinθ / (4 kf) ≈ 9 mm/s; well under sliding
        assert x[-1] < 0.01, x[-1]
    else:
        t = dt * (np.arange(n) + 1)
        late = t > 0.2
        a_fit = np.polyfit(t[late], x[late], 2)[0] * 2
        expected = G * (math.sin(theta) - mu * math.cos(theta))
        np.testing.assert_allclose(a_fit, expected, rtol=0.03)


def _pendulum(length=1.0, radius=0.2, q0=0.1):
    b = jaxart.ModelBuilder()
    link = b.add_link(xform=(0.0, 0.0, -length, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_sphere(link, radius=radius)
    j = b.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0), child_xform=(0.0, 0.0, length, 0.0, 0.0, 0.0, 1.0))
    b.add_articulation([j])
    b.joint_q[-1] = q0
    model = b.finalize(dtype=jnp.float64)
    state = model.state()
    return model, jaxart.eval_fk(model, state.joint_q, state.joint_qd, state)


def test_pendulum_period_matches_small_angle_closed_form():
    length = 1.0
    model, state = _pendulum(length)
    m = float(model.body_mass[0])
    i_c = float(model.body_inertia[0, 1, 1])
    period = 2 * math.pi * math.sqrt((i_c + m * length**2) / (m * G * length))
    solver = jaxart.solvers.SolverSemiImplicit(model, angular_damping=0.0)
    dt = 1e-3
    _, (_, jq) = _rollout(solver, state, int(2.2 * period / dt), dt, contacts=False)
    q = np.asarray(jq[:, 0])
    down = np.where((q[:-1] > 0) & (q[1:] <= 0))[0]  # downward zero crossings, one per period
    t = (down + q[down] / (q[down] - q[down + 1])) * dt
    assert len(t) >= 2
    # the attachment spring stretches by m g / ke under the weight: the effective length grows
    l_eff = length + m * G / 1e4
    period_eff = 2 * math.pi * math.sqrt((i_c + m * l_eff**2) / (m * G * l_eff))
    np.testing.assert_allclose(t[1] - t[0], period_eff, rtol=5e-3)
    np.testing.assert_allclose(t[1] - t[0], period, rtol=0.025)
    assert np.max(np.abs(q)) < 0.105  # no energy gain


def _four_bar(angle=0.4):
    """Parallelogram hanging from world pivots A=(0,0,0), B=(1,0,0); loop closed at B."""
    b = jaxart.ModelBuilder()
    arm = 0.5
    a, bb = np.zeros(3), np.array([1.0, 0.0, 0.0])
    c = a + arm * np.array([math.sin(angle), 0.0, -math.cos(angle)])
    d = c + (bb - a)
    mids = [(a + c) / 2, (c + d) / 2, (d + bb) / 2]
    links = [b.add_link(xform=(*p, 0.0, 0.0, 0.0, 1.0)) for p in mids]
    for lk in links:
        b.add_shape_sphere(lk, radius=0.15, cfg=ShapeConfig(collision_group=0))

    def tf(p):
        return (*p, 0.0, 0.0, 0.0, 1.0)

    y = (0.0, 1.0, 0.0)
    j0 = b.add_joint_revolute(-1, links[0], axis=y, parent_xform=tf(a), child_xform=tf(a - mids[0]))
    j1 = b.add_joint_revolute(links[0], links[1], axis=y, parent_xform=tf(c - mids[0]), child_xform=tf(c - mids[1]))
    j2 = b.add_joint_revolute(links[1], links[2], axis=y, parent_xform=tf(d - mids[1]), child_xform=tf(d - mids[2]))
    b.add_articulation([j0, j1, j2])
    j3 = b.add_joint_revolute(-1, links[2], axis=y, parent_xform=tf(bb), child_xform=tf(bb - mids[2]))
    return b.finalize(dtype=jnp.float64), j3


def test_four_bar_loop_closure_within_spring_tolerance():
    model, j3 = _four_bar()
    ke = 1e4
    solver = jaxart.solvers.SolverSemiImplicit(model, joint_attach_ke=ke, angular_damping=0.0)
    dt = 5e-4
    _, (bq, jq) = _rollout(solver, model.state(), int(2.0 / dt), dt, contacts=False)
    errs = jax.vmap(lambda q: jnp.linalg.norm(joint_frames(model, q, jnp.zeros((3, 6))).x_err, axis=-1))(bq)
    total_weight = float(jnp.sum(model.body_mass)) * G
    tol = 2.0 * total_weight / ke  # a joint carries at most the whole weight plus swing loads
    assert float(jnp.max(errs[:, j3])) < tol, (float(jnp.max(errs[:, j3])), tol)
    assert float(jnp.max(errs)) < tol
    crank = np.asarray(jq[:, 0])
    assert crank.max() - crank.min() > 0.5  # it actually swings


def test_prismatic_position_drive():
    b = jaxart.ModelBuilder()
    link = b.add_link()
    b.add_shape_box(link, hx=0.1, hy=0.1, hz=0.1, cfg=ShapeConfig(collision_group=0))
    j = b.add_joint_prismatic(-1, link, axis=(1.0, 0.0, 0.0), target_ke=200.0, target_kd=40.0, limit_upper=0.2,
                              limit_lower=-1.0)
    b.add_articulation([j])
    model = b.finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverSemiImplicit(model, joint_attach_ke=1e5, joint_attach_kd=1e3)
    control = model.control().replace(joint_target_q=jnp.array([0.1]))
    final, _ = _rollout(solver, model.state(), 3000, 1e-3, contacts=False, control=control)
    np.testing.assert_allclose(float(final.joint_q[0]), 0.1, atol=2e-3)
    assert abs(float(final.body_q[0, 2])) < 1e-3  # gravity held by the attachment spring


def test_universal_and_ball_joints():
    """Universal joint spun about its locked axis stays locked (within the spring tolerance); a BALL
    joint's position drive rotates the child to the target quaternion."""
    b = jaxart.ModelBuilder(gravity=0.0)
    links = [b.add_link(xform=(0.0, 2.0 * i, 0.0, 0.0, 0.0, 0.0, 1.0)) for i in range(2)]
    for lk in links:
        b.add_shape_box(lk, xform=(0.3, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), hx=0.3, hy=0.05, hz=0.05,
                        cfg=ShapeConfig(collision_group=0))
    j0 = b.add_joint_universal(-1, links[0], axis_0=(1.0, 0.0, 0.0), axis_1=(0.0, 1.0, 0.0))
    j1 = b.add_joint_ball(-1, links[1], parent_xform=(0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0),
                          actuator_mode=jaxart.JointTargetMode.POSITION_VELOCITY)
    b.add_articulation([j0, j1])
    model = b.finalize(dtype=jnp.float64)
    ball_dofs = slice(2, 5)
    model = model.replace(joint_target_ke=model.joint_target_ke.at[ball_dofs].set(20.0),
                          joint_target_kd=model.joint_target_kd.at[ball_dofs].set(5.0))
    target = jnp.array([0.0, 0.0, math.sin(0.25), math.cos(0.25)])  # 0.5 rad about z
    control = model.control().replace(joint_target_q=model.control().joint_target_q.at[2:6].set(target))
    state = model.state()
    state = state.replace(body_qd=state.body_qd.at[0, 3:].set(jnp.array([1.0, 0.5, 2.0])))
    solver = jaxart.solvers.SolverSemiImplicit(model, angular_damping=0.0)
    final, (bq, jq) = _rollout(solver, state, 3000, 5e-4, contacts=False, control=control)
    rots = np.asarray(jax.vmap(jaxart.math.quat_to_matrix)(bq[:, 0, 3:]))
    assert np.abs(rots[:, 0, 1]).max() < 2e-2, np.abs(rots[:, 0, 1]).max()  # R = Rx Ry has R[0, 1] = 0
    assert np.abs(np.asarray(jq[:, :2])).max() > 0.3
    np.testing.assert_allclose(np.asarray(final.body_q[1, 3:]), np.asarray(target), atol=5e-3)


def test_jit_vmap_and_single_cache_entry():
    model = _box_on_plane(z=0.3)
    solver = jaxart.solvers.SolverSemiImplicit(model)
    step = jax.jit(lambda s: solver.step(s, None, model.collide(s), 1e-3))
    s0 = model.state()
    s1 = step(s0)
    step(s1)
    assert step._cache_size() == 1
    zs = jnp.array([0.3, 0.5, 0.098])
    batch = jax.vmap(lambda z: s0.replace(body_q=s0.body_q.at[0, 2].set(z)))(zs)
    out = jax.vmap(step)(batch)
    for i, z in enumerate(zs):
        single = step(s0.replace(body_q=s0.body_q.at[0, 2].set(z)))
        np.testing.assert_allclose(np.asarray(out.body_q[i]), np.asarray(single.body_q), atol=1e-12)
    assert out.body_q.dtype == jnp.float64


def test_rejects_bad_options():
    model = _box_on_plane()
    with pytest.raises(ValueError, match="joint_attach_ke"):
        jaxart.solvers.SolverSemiImplicit(model, joint_attach_ke=-1.0)
    with pytest.raises(ValueError, match="friction_smoothing"):
        jaxart.solvers.SolverSemiImplicit(model, friction_smoothing=0.0)



