"""SolverXPBD at impact: Coulomb friction bounded by each step's normal impulse, no pulling, restitution.

Scenes and rigid-Coulomb closed forms come from ``tests/contact/impact_cases.py``. Each scene is one compiled
rollout over traced ``dt`` and step count (and, for the box, the three imported MJCF materials, which XPBD's
rigid contact does not distinguish).
"""

import functools
import pathlib
import sys

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "contact"))
import impact_cases as ic  # noqa: E402

import jaxart  # noqa: E402

DTS = (0.002, 0.005, 0.016)


@functools.cache
def _rollout(restitution: bool = False):
    """``run(model, state, dt, n) -> (final state, body_qd after each step (n_max, nb, 6))`` under one ``jit``.

    The step count ``n`` is traced (a ``while`` loop) and the velocities are kept in a buffer of
    ``n_max = 1000`` rows (rows past ``n`` stay zero). Cached: the tests of one scene share the compilation.
    """
    kw = {"enable_restitution": restitution}

    @jax.jit
    def run(model, state, dt, n):
        solver = jaxart.solvers.SolverXPBD(model, **kw)
        buf = jnp.zeros((1000, *state.body_qd.shape), state.body_qd.dtype)

        def body(i, carry):
            s, b = carry
            s = solver.step(s, None, model.collide(s), dt)
            return s, b.at[i].set(s.body_qd)

        return jax.lax.fori_loop(0, n, body, (state, buf))

    return run


def _impulses(qd, v0, mass, dt):
    """Per-step contact impulses on a single body from its velocity history: ``(tangential (n, 2), normal (n,))``.

    ``m Δv`` minus gravity's ``m g dt``; ``qd`` ``(n, 6)`` after each step, ``v0`` ``(6,)`` before the first.
    """
    v = np.concatenate([np.asarray(v0)[None, :3], np.asarray(qd)[:, :3]], 0)
    dp = mass * np.diff(v, axis=0)
    dp[:, 2] += mass * ic.G * dt
    return dp[:, :2], dp[:, 2]


def _box_models():
    out = {}
    for name in ic.MATERIALS:
        b = jaxart.ModelBuilder()
        b.add_mjcf(ic.sliding_box_mjcf(name, 0.005))  # XPBD uses only μ: one model per material for all steps
        model = b.finalize(dtype=jnp.float64)
        out[name] = (model, ic.mjcf_box_state(model))
    return out


def test_sliding_box_landing_stops_at_rigid_coulomb_distance():
    """The box landing while sliding: stopping distance within 5 % of rigid Coulomb for every material and step,
    each step's friction impulse inside μ times its normal impulse, the normal impulse never pulling, and MuJoCo C's
    distance on the same MJCF within 2 % at 2 and 5 ms."""
    run = _rollout()
    rigid = ic.rigid_box_stop_distance()
    t_end = ic.rigid_box_stop_time() + 0.3
    mass = ic.box_mass()
    for name, (model, state) in _box_models().items():
        for dt in DTS:
            n = int(round(t_end / dt))
            final, qd = run(model, state, dt, n)
            dist = float(final.body_q[0, 0] - state.body_q[0, 0])
            assert dist == pytest.approx(rigid, rel=0.05), (name, dt)
            tang, norm = _impulses(qd[:n, 0], state.body_qd[0], mass, dt)
            assert np.all(norm > -1e-9), (name, dt)  # never pulls
            assert np.all(np.linalg.norm(tang, axis=1) <= ic.MU * norm + 1e-9), (name, dt)  # cone per step
            if name == "mjcf_default" and dt < 0.01:
                assert dist == pytest.approx(ic.mujoco_box_stop_distance(name, dt), rel=0.02)


def test_backspin_ball_follows_rigid_coulomb():
    """A ball dropped with backspin: position after 1 s within 3 % of the rigid-Coulomb closed form at 2, 5 and
    16 ms, the final rolling speed (5 vx + 2 R wy)/7 within 0.5 %, the friction cone held at every step."""
    vx0, wy0, r = 2.0, -30.0, 0.1
    model, state = ic.backspin_ball_model(vx0, wy0, radius=r)
    run = _rollout()
    mass = float(model.body_mass[0])
    for dt in DTS:
        n = int(round(1.0 / dt))
        final, qd = run(model, state, dt, n)
        x = float(final.body_q[0, 0] - state.body_q[0, 0])
        assert x == pytest.approx(ic.rigid_ball_x(n * dt, vx0, wy0, radius=r), rel=0.03), dt
        assert float(final.body_qd[0, 0]) == pytest.approx((5.0 * vx0 + 2.0 * r * wy0) / 7.0, rel=5e-3), dt
        tang, norm = _impulses(qd[:n, 0], state.body_qd[0], mass, dt)
        assert np.all(norm > -1e-9), dt
        assert np.all(np.linalg.norm(tang, axis=1) <= ic.MU * norm + 1e-9), dt
        # the landing step(s): friction at the cone, as the rigid impact's μ·m·√(2gh)
        hit = int(np.argmax(norm > 0.3 * mass * np.sqrt(2 * ic.G * ic.DROP)))
        assert -tang[hit, 0] == pytest.approx(ic.MU * norm[hit], rel=1e-6), dt


@pytest.mark.parametrize("restitution", [False, True])
def test_separating_contact_never_pulls(restitution):
    """A ball touching (1 mm inside) the ground and leaving it upward at 1 m/s while sliding: one step is free
    flight (no normal or friction impulse), with and without the restitution pass."""
    model, state = ic.backspin_ball_model(1.0, 0.0)
    q = state.body_q.at[0, 2].set(0.1 - 1e-3)
    state = state.replace(body_q=q, body_qd=state.body_qd.at[0, 2].set(1.0))
    dt = 0.005
    assert bool(model.collide(state).active.any())
    s1, _ = _rollout(restitution)(model, state, dt, 1)
    np.testing.assert_allclose(s1.body_qd[0], [1.0, 0.0, 1.0 - ic.G * dt, 0.0, 0.0, 0.0], atol=1e-12)


def test_restitution_at_model_steps():
    """``enable_restitution``: the landing step leaves with ``−e v_n⁻`` (``v_n⁻`` the predicted approach speed, as
    documented), within 5 % of the rigid ``e √(2 g h)`` at 2, 5 and 16 ms, never pulling."""
    e = 0.5
    model, state = ic.backspin_ball_model(0.0, 0.0)
    model = model.replace(shape_material_restitution=jnp.full_like(model.shape_material_restitution, e))
    run = _rollout(True)
    for dt in DTS:
        n = int(round(0.3 / dt))
        _, qd = run(model, state, dt, n)
        vz = np.asarray(qd[:n, 0, 2])
        k = int(np.argmax(vz > 0.0))
        v_pre = vz[k - 1] - ic.G * dt
        assert vz[k] == pytest.approx(-e * v_pre, rel=1e-9), dt
        assert vz[k] == pytest.approx(e * np.sqrt(2.0 * ic.G * ic.DROP), rel=0.05), dt
        _, norm = _impulses(qd[:n, 0], state.body_qd[0], float(model.body_mass[0]), dt)
        assert np.all(norm > -1e-9), dt


def test_rounded_shapes_push_at_their_geometric_point():
    """Spheres and capsules get a core point (centre / segment point) and their radius; a box keeps its corner."""
    from jaxart.solvers.xpbd.contacts import contact_frame

    b = jaxart.ModelBuilder()
    ball = b.add_body(xform=(0.0, 0.0, 0.099, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_sphere(ball, radius=0.1)
    cap = b.add_body(xform=(1.0, 0.0, 0.049, 0.7071067811865476, 0.0, 0.0, 0.7071067811865476))  # axis along y
    b.add_shape_capsule(cap, radius=0.05, half_height=0.2)
    box = b.add_body(xform=(-1.0, 0.0, 0.099, 0.0, 0.0, 0.0, 1.0))
    b.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1)
    b.add_ground_plane()
    model = b.finalize(dtype=jnp.float64)
    state = model.state()
    cf = contact_frame(model, state.body_q, model.collide(state))
    on = np.asarray(cf.active)
    body = np.asarray(jnp.where(cf.ib < model.body_count, cf.ib, cf.ia))[on]
    rad = np.asarray(cf.radius_a + cf.radius_b)[on]
    core = np.asarray(jnp.where((cf.ib < model.body_count)[:, None], cf.core_b, cf.core_a))[on]
    local = np.asarray(jnp.where((cf.ib < model.body_count)[:, None], cf.local_b, cf.local_a))[on]
    assert set(body.tolist()) == {ball, cap, box}
    np.testing.assert_allclose(rad[body == ball], 0.1)
    np.testing.assert_allclose(core[body == ball], 0.0, atol=1e-12)  # the centre
    np.testing.assert_allclose(rad[body == cap], 0.05)
    np.testing.assert_allclose(core[body == cap][:, :2], 0.0, atol=1e-12)  # on the segment (local z axis)
    assert np.all(np.abs(core[body == cap][:, 2]) <= 0.2 + 1e-12)
    np.testing.assert_allclose(rad[body == box], 0.0)
    np.testing.assert_allclose(core[body == box], local[body == box])  # corners: the material points
