"""SolverXPBD BALL joints: per-component rotation-vector limits and drives; FREE drives rejected."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

import jaxart  # noqa: E402
from jaxart.sim.enums import JointTargetMode  # noqa: E402
from jaxart.solvers.xpbd.joints import log_jacobian_inv  # noqa: E402
from jaxart.solvers.xpbd.solver import SolverXPBD  # noqa: E402

F64 = jnp.float64


def _rotvec(q):
    q = np.where(q[..., 3:] < 0.0, -q, q)
    s = np.linalg.norm(q[..., :3], axis=-1, keepdims=True)
    return q[..., :3] * 2.0 * np.arctan2(s, q[..., 3:]) / np.maximum(s, 1e-15)


def _pendulum(*, gravity=-9.81, mode=None, com=(0.5, 0.0, 0.0)):
    b = jaxart.ModelBuilder(gravity=gravity)
    link = b.add_link(mass=1.0, com=com, inertia=np.diag([0.02, 0.03, 0.04]))
    b.add_articulation([b.add_joint_ball(-1, link, actuator_mode=mode)])
    return b.finalize(dtype=F64)


def _rollout(solver, state, control, steps, dt):
    def body(s, _):
        s = solver.step(s, control, None, dt)
        return s, s.joint_q

    return jax.jit(lambda s: jax.lax.scan(body, s, None, length=steps))(state)


def test_log_jacobian_inverse_matches_finite_differences():
    theta = np.array([0.4, -1.1, 0.7])

    def exp(v):
        a = np.linalg.norm(v)
        return np.concatenate([v / a * np.sin(a / 2), [np.cos(a / 2)]])

    def mul(p, q):
        pv, pw, qv, qw = p[:3], p[3], q[:3], q[3]
        return np.concatenate([pw * qv + qw * pv + np.cross(pv, qv), [pw * qw - pv @ qv]])

    jinv = np.asarray(log_jacobian_inv(jnp.asarray(theta)[None]))[0]
    eps = 1e-6
    for i in range(3):
        d = np.zeros(3)
        d[i] = eps
        num = (_rotvec(mul(exp(d), exp(theta))) - _rotvec(mul(exp(-d), exp(theta)))) / (2 * eps)
        np.testing.assert_allclose(jinv[:, i], num, atol=1e-7)
    np.testing.assert_allclose(np.asarray(log_jacobian_inv(jnp.zeros((1, 3))))[0], np.eye(3), atol=1e-12)


@pytest.mark.slow
def test_ball_limit_holds_against_gravity():
    model = _pendulum()
    lo, hi = -0.3, 0.25
    model = model.replace(joint_limit_lower=jnp.array([-0.2, lo, -0.2]), joint_limit_upper=jnp.array([0.2, hi, 0.2]))
    # a horizontal pendulum falls about -y... (COM on +x, gravity -z: rotation about +y); spin it about x and z too
    state = model.state().replace(body_qd=model.state().body_qd.at[0, 3:].set(jnp.array([2.0, 0.0, -2.0])))
    _, qs = _rollout(SolverXPBD(model, iterations=4), state, None, 1500, 1e-3)
    rv = _rotvec(np.asarray(qs))
    lower, upper = np.array([-0.2, lo, -0.2]), np.array([0.2, hi, 0.2])
    assert np.all(rv > lower - 1e-2) and np.all(rv < upper + 1e-2)
    assert rv[:, 1].max() == pytest.approx(hi, abs=1e-2)  # it rests against the upper y limit
    assert rv[-1, 1] == pytest.approx(hi, abs=5e-3)
    # unlimited: the same pendulum swings far past the limit
    free = _pendulum()
    _, qs = _rollout(SolverXPBD(free, iterations=4), free.state(), None, 400, 1e-3)
    assert _rotvec(np.asarray(qs))[:, 1].max() > 1.0


@pytest.mark.slow
def test_ball_drive_converges_to_target_orientation():
    model = _pendulum(gravity=0.0, mode=JointTargetMode.POSITION_VELOCITY)
    model = model.replace(joint_target_ke=jnp.full((3,), 20.0), joint_target_kd=jnp.full((3,), 4.0))
    axis = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    target = np.concatenate([axis * np.sin(0.6), [np.cos(0.6)]])
    ctrl = model.control().replace(joint_target_q=jnp.asarray(target))
    final, qs = _rollout(SolverXPBD(model, iterations=4), model.state(), ctrl, 1000, 1e-2)
    assert abs(abs(float(np.dot(np.asarray(final.joint_q), target))) - 1.0) < 1e-6
    assert np.abs(np.asarray(final.body_qd[0, 3:])).max() < 1e-3
    # velocity mode: constant spin about z at the target rate (kd only)
    vel = _pendulum(gravity=0.0, mode=JointTargetMode.VELOCITY, com=(0.0, 0.0, 0.0))
    vel = vel.replace(joint_target_kd=jnp.full((3,), 50.0))
    ctrl = vel.control().replace(joint_target_qd=jnp.array([0.0, 0.0, 0.5]))
    final, _ = _rollout(SolverXPBD(vel, iterations=4), vel.state(), ctrl, 200, 1e-2)
    np.testing.assert_allclose(np.asarray(final.body_qd[0, 3:]), [0.0, 0.0, 0.5], atol=2e-3)
