"""Penalty contact law (Newton's semi-implicit contact) and its smooth variant."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.contact import contact_body_wrenches, contact_forces, smooth_contact_body_wrenches  # noqa: E402
from jaxart.sim.configs import ShapeConfig  # noqa: E402

R = 0.1
KE_SPHERE, KE_PLANE = 1.0e4, 3.0e4


def _sphere_model(*, z=0.2, ka=0.0, gap=None, mu=0.5, kf=1.0e3, kd=0.0):
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, z, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_sphere(body, radius=R, cfg=ShapeConfig(ke=KE_SPHERE, kd=kd, kf=kf, mu=mu, ka=ka, gap=gap))
    b.add_ground_plane(cfg=ShapeConfig(ke=KE_PLANE, kd=kd, kf=kf, mu=mu, ka=ka, gap=gap))
    return b.finalize(dtype=jnp.float64)


def _state(model, z, v=(0.0, 0.0, 0.0), w=(0.0, 0.0, 0.0)):
    s = model.state()
    q = s.body_q.at[0, 2].set(z)
    qd = s.body_qd.at[0, :3].set(jnp.asarray(v)).at[0, 3:].set(jnp.asarray(w))
    return s.replace(body_q=q, body_qd=qd)


def test_resting_sphere_balances_gravity_at_expected_penetration():
    model = _sphere_model()
    mass = float(model.body_mass[0])
    ke = 0.5 * (KE_SPHERE + KE_PLANE)  # Newton: mean of the two shapes' materials
    pen = mass * 9.81 / ke
    state = _state(model, R - pen)
    w = contact_body_wrenches(model, state, model.collide(state))
    np.testing.assert_allclose(np.asarray(w[0]), [0, 0, mass * 9.81, 0, 0, 0], atol=1e-9)
    # no contact when separated; None contacts give zeros
    far = _state(model, R + 0.05)
    assert np.all(np.asarray(contact_body_wrenches(model, far, model.collide(far))) == 0.0)
    assert np.all(np.asarray(contact_body_wrenches(model, state, None)) == 0.0)


def test_damping_only_while_approaching():
    model = _sphere_model(kd=50.0)
    d = -1e-3
    down = _state(model, R + d, v=(0.0, 0.0, -0.2))
    up = _state(model, R + d, v=(0.0, 0.0, 0.2))
    ke = 0.5 * (KE_SPHERE + KE_PLANE)
    fz_down = float(contact_body_wrenches(model, down, model.collide(down))[0, 2])
    fz_up = float(contact_body_wrenches(model, up, model.collide(up))[0, 2])
    np.testing.assert_allclose(fz_down, -ke * d + 50.0 * 0.2, rtol=1e-9)
    np.testing.assert_allclose(fz_up, -ke * d, rtol=1e-9)


@pytest.mark.parametrize("speed", [1e-4, 2.0])
def test_friction_cone_and_viscous_regime(speed):
    mu, kf = 0.5, 1.0e3
    model = _sphere_model(mu=mu, kf=kf)
    d = -2e-3
    state = _state(model, R + d, v=(speed, 0.0, 0.0))
    w = np.asarray(contact_body_wrenches(model, state, model.collide(state))[0])
    fn = 0.5 * (KE_SPHERE + KE_PLANE) * -d
    ft_expected = -min(kf * speed, mu * fn)
    np.testing.assert_allclose(w[2], fn, rtol=1e-9)
    np.testing.assert_allclose(w[0], ft_expected, rtol=1e-9)
    # the force acts at the inflated surface point on the sphere (B), below the COM
    cf = contact_forces(model, state, model.collide(state))
    lever = np.asarray(cf.point_b[0]) - np.array([0.0, 0.0, R + d])
    np.testing.assert_allclose(w[3:], np.cross(lever, w[:3]), atol=1e-12)
    assert abs(w[4]) > 0.0  # friction below the COM spins the sphere about +y/-y


def test_adhesion_pulls_within_ka():
    ka = 0.01
    model = _sphere_model(ka=ka, gap=ka)
    ke = 0.5 * (KE_SPHERE + KE_PLANE)
    d = 0.004
    state = _state(model, R + d)
    w = contact_body_wrenches(model, state, model.collide(state))
    np.testing.assert_allclose(float(w[0, 2]), -ke * d, rtol=1e-9)
    beyond = _state(model, R + 0.015)  # d > ka (still below the sum of gaps 0.02): no force
    assert float(contact_body_wrenches(model, beyond, model.collide(beyond))[0, 2]) == 0.0


@pytest.mark.slow
def test_smooth_variant_agrees_when_deep_and_has_fd_gradients():
    model = _sphere_model(kd=20.0)
    deep = _state(model, R - 0.01, v=(0.3, 0.0, -0.1))
    c = model.collide(deep)
    exact = contact_body_wrenches(model, deep, c)
    smooth = smooth_contact_body_wrenches(model, deep, c, length=1e-4, velocity=1e-3)
    np.testing.assert_allclose(np.asarray(smooth), np.asarray(exact), rtol=2e-2, atol=1e-6)

    model_g = _sphere_model(kd=20.0, gap=0.01)

    def fz(z, vx):
        s = _state(model_g, z, v=(vx, 0.0, -0.05))
        return smooth_contact_body_wrenches(model_g, s, model_g.collide(s), length=1e-3)[0, 0:3].sum()

    for z in (R - 2e-3, R, R + 1e-3):  # penetrating, touching, just separated
        g = jax.grad(fz, argnums=(0, 1))(z, 0.01)
        assert all(np.isfinite(float(x)) for x in g)
        eps = 1e-7
        fd_z = (fz(z + eps, 0.01) - fz(z - eps, 0.01)) / (2 * eps)
        fd_v = (fz(z, 0.01 + eps) - fz(z, 0.01 - eps)) / (2 * eps)
        np.testing.assert_allclose(float(g[0]), float(fd_z), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(float(g[1]), float(fd_v), rtol=1e-4, atol=1e-4)
        assert abs(float(g[0])) > 0.0


def test_two_dynamic_bodies_get_equal_and_opposite_forces():
    b = jaxart.ModelBuilder()
    b0 = b.add_body(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
    b1 = b.add_body(xform=(0.15, 0.05, 1.0, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_sphere(b0, radius=R)
    b.add_shape_sphere(b1, radius=R)
    model = b.finalize(dtype=jnp.float64)
    state = model.state()
    state = state.replace(body_qd=state.body_qd.at[0, 0].set(1.0).at[1, 4].set(3.0))
    w = np.asarray(contact_body_wrenches(model, state, model.collide(state)))
    np.testing.assert_allclose(w[0, :3], -w[1, :3], atol=1e-12)
    assert np.linalg.norm(w[0, :3]) > 0.0
    # Newton applies the pair at the two inflated surface points: the net moment about the origin
    # is (p_b - p_a) x F_b (normal part parallel to the offset → only friction contributes)
    com = np.asarray(state.body_q[:, :3])
    total = sum(w[i, 3:] + np.cross(com[i], w[i, :3]) for i in range(2))
    cf = contact_forces(model, state, model.collide(state))
    row = int(np.argmax(np.asarray(cf.normal_force)))
    lever = np.asarray(cf.point_b[row] - cf.point_a[row])
    np.testing.assert_allclose(total, np.cross(lever, np.asarray(cf.force[row])), atol=1e-9)
    np.testing.assert_allclose(np.cross(lever, np.asarray(model.collide(state).normal[row])), 0.0, atol=1e-12)


def test_smooth_rejects_bad_length():
    model = _sphere_model()
    s = model.state()
    with pytest.raises(ValueError, match="smooth"):
        contact_body_wrenches(model, s, model.collide(s), smooth=0.0)


def test_smooth_friction_ratio_has_finite_gradients_for_a_vanishing_cone():
    """A body sliding far above the floor has a tiny positive cone limit: the ratio saturates to L/|v_t|
    without evaluating kf·|v_t|/L (its derivative overflowed and gave NaN)."""
    from jaxart.contact.penalty import smooth_friction_ratio

    vt = jnp.array([[1.0, 0.0, 0.0]])
    for lim in (1e-30, 1e-20, 1e-3, 1e4):
        f = lambda limit: smooth_friction_ratio(jnp.array([limit]), jnp.array([1e3]), vt)[0]  # noqa: E731
        value, grad = jax.value_and_grad(f)(lim)
        assert np.isfinite(value) and np.isfinite(grad)
        np.testing.assert_allclose(value, lim * np.tanh(1e3 / lim), rtol=1e-6)
