"""SolverFeatherstone with Newton's explicit penalty contact (``contact="explicit"``): resting penetration
and Coulomb friction on an incline.

Setup shared by the tests: an 8 kg box (half extent 0.1 m, density 1000) on a static plane, both
shapes with the same material (so the per-contact averages equal it): ``ke = 1e4 N/m``,
``kd = 280 N·s/m`` (≈ critical for the vertical mode of four corner springs: ``2 √(4 ke m) / 4``),
``kf = 1000 N·s/m``. The plane–box narrow phase keeps four corners, and the explicit penalty law
is stable at ``dt = 1 ms``: ``√(4 ke / m) dt = 0.07``, ``4 kd dt / m = 0.14``, ``4 kf dt / m = 0.5``.
"""

import functools

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.sim.configs import ShapeConfig  # noqa: E402

G = 9.81
H = 0.1  # box half extent [m]
KE, KD, KF = 1.0e4, 280.0, 1.0e3
DT = 1.0e-3


def _box_on_plane(theta: float, mu: float):
    """Plane tilted by ``theta`` about +Y through the origin; box resting on it, aligned with it."""
    cfg = ShapeConfig(ke=KE, kd=KD, kf=KF, mu=mu, density=1000.0)
    b = jaxart.ModelBuilder()
    q = (0.0, np.sin(theta / 2), 0.0, np.cos(theta / 2))
    b.add_shape_plane(xform=((0.0, 0.0, 0.0), q), width=0.0, length=0.0, cfg=cfg, label="incline")
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    body = b.add_body(xform=(tuple(normal * H), q), label="box")
    b.add_shape_box(body, hx=H, hy=H, hz=H, cfg=cfg, label="block")
    model = b.finalize(dtype=jnp.float64)
    downhill = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    return model, normal, downhill


@functools.partial(jax.jit, static_argnames="steps")
def _rollout(model, steps: int):
    """``steps`` contact steps from the model's initial state (one compile for every test: same topology)."""
    solver = jaxart.solvers.SolverFeatherstone(model, contact="explicit")

    def step(s, _):
        s = solver.step(s, None, model.collide(s), DT)
        return s, s.body_qd[0, :3]

    return jax.lax.scan(step, model.state(), None, length=steps)


def _simulate(model, seconds: float):
    final, vel = _rollout(model, int(round(seconds / DT)))
    return final, np.asarray(vel)


def test_box_rests_on_plane_with_weight_over_stiffness_penetration():
    model, normal, _ = _box_on_plane(0.0, mu=1.0)
    mass = float(model.body_mass[0])
    assert mass == pytest.approx(8.0)
    final, vel = _simulate(model, 0.5)
    c = model.collide(final)
    act = np.asarray(c.active)
    sep = np.asarray(c.separation)[act]
    assert act.sum() == 4
    # four corner springs carry the weight: each penetrates m g / (4 ke) = 1.96 mm
    expected = mass * G / (4 * KE)
    np.testing.assert_allclose(-sep, expected, rtol=1e-3)
    assert np.all(-sep <= 1.01 * expected)  # stated bound: within 1 % of m g / (4 ke)
    np.testing.assert_allclose(np.asarray(final.body_qd), 0.0, atol=1e-6)  # settled
    np.testing.assert_allclose(float(final.body_q[0, 2]), H - expected, atol=1e-6)
    # it sank from touching at rest (step response, about critically damped): downward velocity only early on
    assert vel[:, 2].min() < -0.01 and np.all(np.abs(vel[200:, 2]) < 1e-3)


def _incline(theta, mu, seconds=0.5):
    model, normal, downhill = _box_on_plane(theta, mu)
    final, vel = _simulate(model, seconds)
    v_t = vel @ downhill
    v_n = vel @ normal
    return model, final, v_t, v_n, normal


def test_block_sticks_when_mu_exceeds_tan_theta():
    theta, mu = np.deg2rad(20.0), 0.6  # tan 20° = 0.364 < 0.6
    model, final, v_t, v_n, normal = _incline(theta, mu)
    mass = float(model.body_mass[0])
    # Newton's friction is viscous kf·v_t below the Coulomb limit (regularised Coulomb), so a "stuck"
    # block creeps at the speed where the viscous force balances gravity: Σ kf v = m g sin θ. It is
    # below the slip speed μ f_n / kf exactly when tan θ < μ, and vanishes as kf → ∞.
    v_creep = mass * G * np.sin(theta) / (4 * KF)
    np.testing.assert_allclose(v_t[-100:], v_creep, rtol=0.02)
    assert v_creep < mu * mass * G * np.cos(theta) / (4 * KF)  # inside the viscous (sticking) regime
    np.testing.assert_allclose(v_n[-100:], 0.0, atol=1e-4)
    c = model.collide(final)
    sep = np.asarray(c.separation)[np.asarray(c.active)]
    np.testing.assert_allclose(-sep.mean(), mass * G * np.cos(theta) / (4 * KE), rtol=1e-2)


@pytest.mark.parametrize("theta_deg, mu", [(30.0, 0.3), (20.0, 0.1), (25.0, 0.0)])
def test_block_slides_with_coulomb_acceleration(theta_deg, mu):
    theta = np.deg2rad(theta_deg)
    assert mu < np.tan(theta)
    _, final, v_t, v_n, _ = _incline(theta, mu)
    # Tolerance: the regularised law is exact Coulomb μ f_n once |v_t| > μ f_n / kf (< 0.6 mm/s here,
    # reached within ~1 ms), and the normal force sums to m g cos θ once the 280 N·s/m contact damping
    # has settled the landing transient (~50 ms). The acceleration is measured between 0.1 s and 0.5 s,
    # where both hold, so only the small rocking of the penalty springs and O(dt) integration errors
    # remain: 0.2 % relative (observed: 0.03 %) (plus 1e-3 m/s² absolute for μ = 0).
    a_expected = G * (np.sin(theta) - mu * np.cos(theta))
    i0, i1 = int(0.1 / DT) - 1, int(0.5 / DT) - 1
    a_measured = (v_t[i1] - v_t[i0]) / (0.4)
    np.testing.assert_allclose(a_measured, a_expected, rtol=2e-3, atol=1e-3)
    np.testing.assert_allclose(v_n[i0:], 0.0, atol=1e-3)  # it slides along the plane, neither sinking nor hopping


def test_hinged_arm_rests_on_its_tip_torque_balance_through_jacobian_transpose():
    """A non-root link: contact at the tip of a hinged arm balances gravity's torque about the hinge.

    Arm of length L = 0.5 m hinged about Y at z = r, COM at L/2 (m = 2 kg), a massless sphere of radius
    r at the tip touching the plane when horizontal. Torque balance about the hinge gives the tip force
    m g / 2, i.e. a penetration m g / (2 ke); the contact force is applied at the contact point, away
    from the COM, so this checks the wrench transfer (τ about the COM) and ``Jᵀ f`` of a child link.
    """
    length, radius, mass = 0.5, 0.05, 2.0
    cfg = ShapeConfig(ke=KE, kd=100.0, kf=KF, mu=0.5, density=0.0)
    b = jaxart.ModelBuilder()
    b.add_ground_plane(cfg=cfg)
    arm = b.add_link(xform=((0.0, 0.0, radius), (0.0, 0.0, 0.0, 1.0)), com=(length / 2, 0.0, 0.0), mass=mass,
                     inertia=np.diag([0.001, 0.01, 0.01]), label="arm")
    b.add_shape_sphere(arm, xform=((length, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)), radius=radius, cfg=cfg)
    j = b.add_joint_revolute(-1, arm, axis=(0.0, 1.0, 0.0), parent_xform=((0.0, 0.0, radius), (0, 0, 0, 1)))
    b.add_articulation([j])
    model = b.finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverFeatherstone(model)

    def step(s, _):
        return solver.step(s, None, model.collide(s), DT), None

    final, _ = jax.jit(lambda s: jax.lax.scan(step, s, None, length=500))(model.state())
    c = model.collide(final)
    act = np.asarray(c.active)
    assert act.sum() == 1
    expected = mass * G / (2 * KE)
    np.testing.assert_allclose(-float(np.asarray(c.separation)[act][0]), expected, rtol=1e-3)
    np.testing.assert_allclose(float(final.joint_q[0]), np.arcsin(expected / length), rtol=1e-3)  # tip sank
    np.testing.assert_allclose(float(final.joint_qd[0]), 0.0, atol=1e-6)
