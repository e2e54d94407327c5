"""SolverFeatherstone on FREE/DISTANCE DOFs: drives, springs, per-DOF limits and DISTANCE limits."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

import jaxart  # noqa: E402
from jaxart.sim.configs import JointDofConfig  # noqa: E402
from jaxart.sim.enums import Axis, JointTargetMode, JointType  # noqa: E402
from jaxart.solvers.featherstone.solver import SolverFeatherstone  # noqa: E402

F64 = jnp.float64
MODE = JointTargetMode.POSITION_VELOCITY


def _free_body(*, ke=0.0, kd=0.0, ang_ke=0.0, ang_kd=0.0, mass=2.0, pos=(0.0, 0.0, 0.0), mode=MODE, lin_cfg=None):
    b = jaxart.ModelBuilder(gravity=0.0)
    body = b.add_link(mass=mass, inertia=np.diag([0.1, 0.2, 0.3]), xform=(pos, (0.0, 0.0, 0.0, 1.0)))
    lin = lin_cfg or [JointDofConfig(axis=a, target_ke=ke, target_kd=kd, actuator_mode=mode)
                      for a in (Axis.X, Axis.Y, Axis.Z)]
    ang = [JointDofConfig(axis=a, target_ke=ang_ke, target_kd=ang_kd, actuator_mode=mode)
           for a in (Axis.X, Axis.Y, Axis.Z)]
    b.add_articulation([b.add_joint(JointType.FREE, -1, body, linear_axes=lin, angular_axes=ang)])
    return b.finalize(dtype=F64)


def _rollout(solver, state, control, steps, dt):
    def body(s, _):
        s = solver.step(s, control, None, dt)
        return s, s.joint_q

    return jax.lax.scan(body, state, None, length=steps)


def test_free_linear_drive_is_a_spring_with_the_closed_form_period():
    m, ke = 2.0, 50.0
    model = _free_body(ke=ke, mass=m)
    state = model.state().replace(joint_q=model.joint_q.at[0].set(0.1))
    dt = 1e-3
    _, qs = jax.jit(lambda s: _rollout(SolverFeatherstone(model, drive="explicit"), s, None, 3000, dt))(state)
    x = np.asarray(qs[:, 0])
    up = np.nonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))[0]  # upward zero crossings, one per period
    period = np.diff(up).mean() * dt
    assert period == pytest.approx(2.0 * np.pi * np.sqrt(m / ke), rel=2e-3)
    assert np.abs(x).max() == pytest.approx(0.1, rel=1e-2)  # undamped amplitude kept
    np.testing.assert_allclose(qs[:, 1:3], 0.0, atol=1e-12)  # the other axes stay at their targets


def test_free_linear_drive_converges_to_target_and_implicit_is_stable():
    model = _free_body(ke=40.0, kd=8.0)
    target = jnp.asarray([0.3, -0.2, 0.5, 0.0, 0.0, 0.0, 1.0])
    ctrl = model.control().replace(joint_target_q=target)
    final, _ = jax.jit(lambda s: _rollout(SolverFeatherstone(model), s, ctrl, 1000, 1e-2))(model.state())
    np.testing.assert_allclose(final.joint_q[:3], target[:3], atol=1e-4)
    np.testing.assert_allclose(final.body_q[0, :3], target[:3], atol=1e-4)
    # stiff drive (explicit limit dt < 2 √(m/ke) = 4.5 ms, below the effort limit) at a coarse step:
    # the implicit fold keeps it bounded and converging
    stiff = model.replace(joint_target_ke=model.joint_target_ke * 1e4, joint_target_kd=model.joint_target_kd * 1e2)
    final, qs = jax.jit(lambda s: _rollout(SolverFeatherstone(stiff), s, ctrl, 200, 1e-2))(stiff.state())
    assert np.all(np.isfinite(np.asarray(qs)))
    assert np.abs(np.asarray(qs[:, :3])).max() < 0.6
    np.testing.assert_allclose(final.joint_q[:3], target[:3], atol=1e-4)


def test_free_angular_drive_converges_to_target_orientation():
    model = _free_body(ke=10.0, kd=5.0, ang_ke=5.0, ang_kd=1.5)
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    target_q = np.concatenate([axis * np.sin(0.9), [np.cos(0.9)]])  # 1.8 rad about a skew axis
    target = jnp.asarray(np.concatenate([[0.1, 0.0, -0.1], target_q]))
    ctrl = model.control().replace(joint_target_q=target)
    final, _ = jax.jit(lambda s: _rollout(SolverFeatherstone(model), s, ctrl, 800, 1e-2))(model.state())
    q = np.asarray(final.joint_q[3:])
    assert abs(abs(np.dot(q, target_q)) - 1.0) < 1e-7
    np.testing.assert_allclose(final.joint_qd, 0.0, atol=1e-4)
    # explicit mode converges to the same orientation
    final, _ = jax.jit(lambda s: _rollout(SolverFeatherstone(model, drive="explicit"), s, ctrl, 1500, 5e-3))(
        model.state())
    assert abs(abs(np.dot(np.asarray(final.joint_q[3:]), target_q)) - 1.0) < 1e-7


def test_free_passive_spring_and_per_dof_limit():
    cfg = [JointDofConfig(axis=Axis.X, limit_lower=-0.05, limit_upper=0.05, limit_ke=1e4, limit_kd=50.0),
           JointDofConfig(axis=Axis.Y, stiffness=8.0, damping=0.0, rest_q=0.2),
           JointDofConfig.create_unlimited(Axis.Z)]
    model = _free_body(lin_cfg=cfg, mass=2.0)
    rest = 0.2
    state = model.state().replace(joint_qd=model.joint_qd.at[0].set(1.0))  # pushes into the x limit
    _, qs = jax.jit(lambda s: _rollout(SolverFeatherstone(model, drive="explicit"), s, None, 2000, 1e-3))(state)
    x, y = np.asarray(qs[:, 0]), np.asarray(qs[:, 1])
    # limit: penetration of an undamped penalty wall ~ v sqrt(m/k) = 0.014; the limit reflects the body
    assert 0.05 < x.max() < 0.05 + 0.02
    assert -0.05 - 0.02 < x.min() < -0.05  # reflected back and forth between the two walls
    # spring along y: x(t) = rest (1 - cos(√(k/m) t)) from 0, reaching 2·rest at half a period
    t = np.arange(1, 2001) * 1e-3
    np.testing.assert_allclose(y, rest * (1.0 - np.cos(2.0 * t)), atol=2e-3 * max(abs(rest), 1.0))


def _distance_model(max_distance, *, ke, kd, com_offset=0.0, min_distance=-1.0, z=-0.3, gravity=-9.81):
    b = jaxart.ModelBuilder(gravity=gravity)
    body = b.add_link(mass=1.0, com=(com_offset, 0.0, 0.0), inertia=np.eye(3) * 0.01,
                      xform=((0.0, 0.0, z), (0.0, 0.0, 0.0, 1.0)))
    b.add_articulation([b.add_joint_distance(-1, body, min_distance=min_distance, max_distance=max_distance)])
    model = b.finalize(dtype=F64)
    return model.replace(joint_limit_ke=model.joint_limit_ke.at[0].set(ke),
                         joint_limit_kd=model.joint_limit_kd.at[0].set(kd))


def test_distance_joint_stops_at_its_limit():
    ke, kd = 1e4, 200.0
    model = _distance_model(0.5, ke=ke, kd=kd)
    final, qs = jax.jit(lambda s: _rollout(SolverFeatherstone(model, angular_damping=0.0), s, None, 1500, 1e-3))(
        model.state())
    d = np.linalg.norm(np.asarray(qs[:, :3]), axis=-1)
    assert d[50] < 0.5  # free fall first
    assert d.max() < 0.5 + 0.05
    # static equilibrium of the penalty: d = max + m g / ke
    assert d[-1] == pytest.approx(0.5 + 9.81 / ke, abs=1e-4)
    np.testing.assert_allclose(final.joint_qd[:3], 0.0, atol=1e-3)


def test_distance_joint_min_distance_pushes_back():
    model = _distance_model(5.0, ke=1e4, kd=0.0, min_distance=0.3, z=-0.5, gravity=0.0)
    state = model.state().replace(joint_qd=model.joint_qd.at[2].set(1.0))  # toward the anchor
    _, qs = jax.jit(lambda s: _rollout(SolverFeatherstone(model, drive="explicit"), s, None, 600, 1e-3))(state)
    d = np.linalg.norm(np.asarray(qs[:, :3]), axis=-1)
    # undamped penalty wall: penetration v √(m/k) = 1 cm during half a period π √(m/k), then it
    # leaves at the incoming speed
    assert d.min() == pytest.approx(0.3 - 0.01, abs=1e-3)
    assert d[-1] == pytest.approx(0.3 + 1.0 * (0.6 - 0.2 - np.pi * 0.01), abs=3e-3)


def test_distance_limit_at_the_anchor_with_a_com_offset_and_explicit_mode():
    # a swinging body hanging by an anchor away from its COM: the limit acts at the anchor
    model = _distance_model(0.4, ke=2e4, kd=100.0, com_offset=0.1)
    state = model.state().replace(joint_qd=model.joint_qd.at[1].set(1.5))
    for drive in ("implicit", "explicit"):
        solver = SolverFeatherstone(model, drive=drive, angular_damping=0.0)
        _, qs = jax.jit(lambda s, solver=solver: _rollout(solver, s, None, 1500, 5e-4))(state)
        d = np.linalg.norm(np.asarray(qs[:, :3]), axis=-1)
        assert np.all(np.isfinite(d))
        assert d.max() < 0.4 + 0.02, drive
        assert d[-500:].min() > 0.38, drive  # it hangs taut on the limit


@pytest.mark.slow
def test_hard_distance_limits_and_gradients():
    # hard limits (limit_ke = limit_kd = 0) are gated rows: tests/solvers/featherstone/test_distance_hard_limits.py
    model = _distance_model(0.35, ke=1e3, kd=10.0)

    def loss(ke):
        mdl = model.replace(joint_limit_ke=model.joint_limit_ke.at[0].set(ke))
        final, _ = _rollout(SolverFeatherstone(mdl), mdl.state(), None, 100, 2e-3)
        return final.joint_q[2]

    g = jax.jit(jax.grad(loss))(1e3)
    loss = jax.jit(loss)
    g, fd = float(g), float((loss(1e3 + 1.0) - loss(1e3 - 1.0)) / 2.0)
    assert np.isfinite(g) and g == pytest.approx(fd, rel=1e-4)
    assert g > 0.0  # a stiffer rope hangs higher
