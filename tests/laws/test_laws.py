"""jaxart.laws: the joint laws' forces and derivatives, the angle wrap, XPBD compliance and equality quantities.

Oracles: closed forms and ``jax.grad`` of the laws' own forces (the returned stiffness and damping are the
negative derivatives the implicit solvers fold into their matrices).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxart.laws.angles import nearest_turn, whole_turns, wrap_angle
from jaxart.laws.compliance import drive_compliance, xpbd_delta
from jaxart.laws.equality import connect_anchor2, joint_polynomial, mimic_polynomial
from jaxart.laws.joint import drive, penalty_limit, smooth_friction, spring_damper
from jaxart.math import quat_from_axis_angle, transform_point


def test_wrap_angle_range_and_turns():
    x = jnp.asarray([-7.0, -np.pi, -0.5, 0.0, np.pi - 1e-9, np.pi, 3 * np.pi + 0.25, 20.0])
    w = wrap_angle(x)
    assert np.all(np.asarray(w) >= -np.pi) and np.all(np.asarray(w) < np.pi)
    np.testing.assert_allclose(np.cos(w), np.cos(x), atol=1e-12)
    np.testing.assert_allclose(w + whole_turns(x), x, atol=0.0)
    np.testing.assert_allclose(wrap_angle(jnp.asarray(3 * np.pi + 0.25)), -np.pi + 0.25, atol=1e-12)


def test_nearest_turn():
    out = nearest_turn(jnp.asarray([0.1, 0.1, -3.0]), jnp.asarray([6.3, -6.2, 3.2]))
    np.testing.assert_allclose(out, [0.1 + 2 * np.pi, 0.1 - 2 * np.pi, -3.0 + 2 * np.pi], atol=1e-12)


@pytest.mark.parametrize("effort", [None, 100.0])
def test_drive_force_and_derivatives(effort):
    ke, kd, target, v_target, act = 40.0, 3.0, 0.7, 0.2, 1.5

    def force(q, v):
        return drive(target - q, v, v_target, ke, kd, act=act, effort_limit=effort)[0].force

    q, v = 0.1, -0.4
    term, saturated = drive(target - q, v, v_target, ke, kd, act=act, effort_limit=effort)
    np.testing.assert_allclose(term.force, ke * (target - q) + kd * (v_target - v) + act)
    np.testing.assert_allclose(term.stiffness, -jax.grad(force, 0)(q, v))
    np.testing.assert_allclose(term.damping, -jax.grad(force, 1)(q, v))
    assert not bool(saturated)
    # the implicit look-ahead evaluates the position error at q + look·v
    look = 0.01
    ahead = drive(target - q, v, v_target, ke, kd, act=act, effort_limit=effort, look=look)[0].force
    np.testing.assert_allclose(ahead, force(q + look * v, v))


def test_drive_effort_limit_saturates():
    term, saturated = drive(jnp.asarray([10.0, -10.0, 0.1]), 0.0, 0.0, 50.0, 1.0, effort_limit=20.0)
    np.testing.assert_allclose(term.force, [20.0, -20.0, 5.0])
    np.testing.assert_array_equal(saturated, [True, True, False])
    np.testing.assert_allclose(term.stiffness, [0.0, 0.0, 50.0])
    np.testing.assert_allclose(term.damping, [0.0, 0.0, 1.0])


def test_penalty_limit():
    q = jnp.asarray([-1.2, 0.0, 1.5, 1.5])
    v = jnp.asarray([0.3, 1.0, -0.2, -0.2])
    enabled = jnp.asarray([True, True, True, False])
    term, active = penalty_limit(q, v, -1.0, 1.0, 100.0, 2.0, enabled=enabled)
    np.testing.assert_array_equal(active, [True, False, True, False])
    np.testing.assert_allclose(term.force, [100.0 * 0.2 - 2.0 * 0.3, 0.0, 100.0 * -0.5 + 2.0 * 0.2, 0.0])
    for i in (0, 2):
        g = jax.grad(lambda x, i=i: penalty_limit(x, v[i], -1.0, 1.0, 100.0, 2.0)[0].force)(q[i])
        np.testing.assert_allclose(term.stiffness[i], -g)
    np.testing.assert_allclose(term.damping, [2.0, 0.0, 2.0, 0.0])


def test_spring_damper_and_friction():
    term = spring_damper(0.3, -0.5, 0.1, 8.0, 0.5, look=0.02)
    np.testing.assert_allclose(term.force, 8.0 * (0.1 - 0.3 - 0.02 * -0.5) - 0.5 * -0.5)
    assert (float(term.stiffness), float(term.damping)) == (8.0, 0.5)
    fric = smooth_friction(jnp.asarray(0.03), 2.0, 0.01)
    np.testing.assert_allclose(fric.force, -2.0 * np.tanh(3.0))
    np.testing.assert_allclose(fric.damping, -jax.grad(lambda v: smooth_friction(v, 2.0, 0.01).force)(0.03))


def test_xpbd_delta_and_drive_compliance():
    alpha, on = drive_compliance(jnp.asarray([0.0, 4.0]), 0.5)
    np.testing.assert_allclose(alpha, [0.0, 1.0])
    np.testing.assert_array_equal(on, [False, True])
    np.testing.assert_allclose(xpbd_delta(0.2, 0.1, 3.0, 1.0), (-0.2 - 0.1) / 4.0)
    assert float(xpbd_delta(0.2, 0.1, 0.0, 0.0)) == 0.0


def test_joint_polynomial():
    coef = jnp.asarray([[0.1, -0.5, 0.25, 0.3, -0.05], [1.0, 2.0, 0.0, 0.0, 0.0]])
    x = jnp.asarray([0.7, -1.3])
    value, slope = joint_polynomial(coef, x)
    for k in range(2):
        c = np.asarray(coef[k])[::-1]
        np.testing.assert_allclose(value[k], np.polyval(c, float(x[k])), rtol=1e-12)
        np.testing.assert_allclose(slope[k], np.polyval(np.polyder(c), float(x[k])), rtol=1e-12)


def test_connect_anchor2_lands_on_the_anchor():
    x1 = jnp.concatenate([jnp.asarray([0.2, -0.1, 0.4]), quat_from_axis_angle(jnp.asarray([0.0, 0.0, 1.0]), 0.7)])
    x2 = jnp.concatenate([jnp.asarray([-0.3, 0.5, 0.1]), quat_from_axis_angle(jnp.asarray([1.0, 0.0, 0.0]), -1.1)])
    a1 = jnp.asarray([0.05, 0.3, -0.2])
    a2 = connect_anchor2(x1, x2, a1)
    np.testing.assert_allclose(transform_point(x2, a2), transform_point(x1, a1), atol=1e-12)


def test_mimic_polynomial_is_linear():
    value, slope = joint_polynomial(mimic_polynomial(jnp.asarray(0.3), jnp.asarray(-2.0)), jnp.asarray(0.7))
    np.testing.assert_allclose([value, slope], [0.3 - 1.4, -2.0], rtol=1e-14)


def test_penalty_limit_with_an_infinite_bound_is_finite():
    q = jnp.asarray([0.5, 3.0])
    term, active = penalty_limit(q, jnp.asarray([1.0, 1.0]), 1.0, jnp.inf, 10.0, 1.0)
    np.testing.assert_allclose(term.force, [10.0 * 0.5 - 1.0, 0.0])
    np.testing.assert_array_equal(active, [True, False])
    grad = jax.grad(lambda x: penalty_limit(x, 1.0, 1.0, jnp.inf, 10.0, 1.0)[0].force.sum())(q)
    np.testing.assert_allclose(grad, [-10.0, 0.0])
