"""Quaternion, transform and spatial algebra: values and NaN-free gradients."""

import jax
import jax.numpy as jnp
import numpy as np
from helpers import quat_from_axis_angle_np, rand_quat

from jaxart.math import (
    quat_exp,
    quat_from_matrix,
    quat_integrate,
    quat_mul,
    quat_normalize,
    quat_rotate,
    quat_to_euler_xyz,
    quat_to_matrix,
    quat_twist_angle,
    safe_norm,
    safe_normalize,
    transform_inverse,
    transform_mul,
    transform_point,
)
from jaxart.math.spatial import cross_force, cross_motion, spatial_inertia_world


def test_hamilton_product_xyzw():
    i = jnp.array([1.0, 0, 0, 0])
    j = jnp.array([0, 1.0, 0, 0])
    k = jnp.array([0, 0, 1.0, 0])
    np.testing.assert_allclose(quat_mul(i, j), k)
    np.testing.assert_allclose(quat_mul(j, i), -k)
    qa = jnp.asarray(quat_from_axis_angle_np([0, 0, 1], 0.3))
    qb = jnp.asarray(quat_from_axis_angle_np([1, 0, 0], 0.5))
    v = jnp.array([0.2, -0.4, 1.1])
    # a * b applies b first
    np.testing.assert_allclose(quat_rotate(quat_mul(qa, qb), v), quat_rotate(qa, quat_rotate(qb, v)), atol=1e-12)


def test_matrix_round_trip_and_euler():
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = jnp.asarray(rand_quat(rng))
        q2 = quat_from_matrix(quat_to_matrix(q))
        assert np.allclose(q2, q, atol=1e-10) or np.allclose(q2, -q, atol=1e-10)
    a, b, c = 0.3, -0.7, 1.9
    rx = quat_from_axis_angle_np([1, 0, 0], a)
    ry = quat_from_axis_angle_np([0, 1, 0], b)
    rz = quat_from_axis_angle_np([0, 0, 1], c)
    q = quat_mul(quat_mul(jnp.asarray(rx), jnp.asarray(ry)), jnp.asarray(rz))
    np.testing.assert_allclose(quat_to_euler_xyz(q), [a, b, c], atol=1e-12)


def test_transforms_compose_and_invert():
    rng = np.random.default_rng(1)
    t1 = jnp.asarray(np.concatenate([rng.normal(size=3), rand_quat(rng)]))
    t2 = jnp.asarray(np.concatenate([rng.normal(size=3), rand_quat(rng)]))
    x = jnp.asarray(rng.normal(size=3))
    np.testing.assert_allclose(transform_point(transform_mul(t1, t2), x), transform_point(t1, transform_point(t2, x)),
                               atol=1e-12)
    np.testing.assert_allclose(transform_point(transform_inverse(t1), transform_point(t1, x)), x, atol=1e-12)


def test_twist_angle_range():
    axis = jnp.array([0.0, 0.6, 0.8])
    for ang in [0.0, 1.0, 3.5, -3.5, 6.2, -6.2]:
        q = jnp.asarray(quat_from_axis_angle_np(axis, ang))
        np.testing.assert_allclose(quat_twist_angle(axis, q), ang, atol=1e-12)


def test_safe_functions_have_finite_gradients_at_zero():
    z = jnp.zeros(3)
    assert np.all(np.isfinite(jax.grad(lambda v: safe_norm(v))(z)))
    assert np.all(np.isfinite(jax.jacobian(safe_normalize)(z)))
    assert np.all(np.isfinite(jax.jacobian(quat_normalize)(jnp.zeros(4))))
    ident = jnp.array([0.0, 0, 0, 1])
    g = jax.grad(lambda q: quat_twist_angle(jnp.array([1.0, 0, 0]), q))(ident)
    assert np.all(np.isfinite(g))


def test_quat_exp_and_integration_jacobian_at_zero():
    dt = 0.01
    q0 = jnp.asarray(quat_from_axis_angle_np([1, 1, 0], 0.4))
    for w0 in [0.0, 1e-8, 1e-4]:
        w = jnp.array([w0, 0.0, 0.0])
        jac = jax.jacobian(lambda om: quat_integrate(q0, om, dt))(w)
        assert np.all(np.isfinite(jac))
        # d/dω of ½[ω,0]⊗q·dt at ω=0: the orientation change is dt/2-sized, not zero
        expect = jax.jacobian(lambda om: q0 + 0.5 * dt * quat_mul(jnp.concatenate([om, jnp.zeros(1)]), q0))(w)
        np.testing.assert_allclose(jac, expect, atol=1e-6)
        assert np.abs(jac).max() > 0.4 * dt
        je = jax.jacobian(quat_exp)(w)
        assert np.all(np.isfinite(je))
        np.testing.assert_allclose(je[:3, :3], 0.5 * np.eye(3), atol=1e-6)
    np.testing.assert_allclose(quat_exp(jnp.array([0.0, 0.0, np.pi])), [0, 0, 1, 0], atol=1e-12)


def test_spatial_inertia_energy_and_cross_duality():
    rng = np.random.default_rng(2)
    m, com = 2.0, jnp.asarray(rng.normal(size=3))
    a = rng.normal(size=(3, 3))
    inertia = jnp.asarray(a @ a.T + np.eye(3))
    big = spatial_inertia_world(jnp.asarray(m), com, inertia)
    twist = jnp.asarray(rng.normal(size=6))  # (v at origin, w)
    v_com = twist[:3] + jnp.cross(twist[3:], com)
    ke = 0.5 * m * v_com @ v_com + 0.5 * twist[3:] @ inertia @ twist[3:]
    np.testing.assert_allclose(0.5 * twist @ big @ twist, ke, rtol=1e-12)
    u, f = jnp.asarray(rng.normal(size=6)), jnp.asarray(rng.normal(size=6))
    # <u x_m v, f> = -<v, u x* f>
    v = jnp.asarray(rng.normal(size=6))
    np.testing.assert_allclose(cross_motion(u, v) @ f, -(v @ cross_force(u, f)), atol=1e-12)
