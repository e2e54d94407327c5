"""SolverFeatherstone's implicit contact (the default): Coulomb limits and stability at the model's step.

Closed forms: a box sliding at v₀ on μ stops after v₀²/(2μg); on an incline it sticks for tan θ < μ
and otherwise slides at g (sin θ − μ cos θ); a dropped body never rebounds above its drop height and
its mechanical energy never grows. Two-body contacts (a hinged arm resting on a free box) are checked
against statics, batched lane kernels against single worlds, gradients against finite differences and
resting contact forces against MuJoCo C (``mj_contactForce``).
"""

import functools

import jax
import jax.test_util

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import mjcf_model  # noqa: E402

import jaxart  # noqa: E402
from jaxart.contact import implicit_contact_forces  # noqa: E402
from jaxart.sim.configs import ShapeConfig  # noqa: E402

G = 9.81
H = 0.1  # box half extent [m]; 8 kg at density 1000


def _box(theta: float = 0.0, mu: float = 0.5, *, ke: float = 1e4, kd: float = 280.0, z0: float | None = None):
    """A free box on a static plane tilted by ``theta`` about +Y (resting on it, or dropped from ``z0``)."""
    cfg = ShapeConfig(ke=ke, kd=kd, kf=1e3, mu=mu, density=1000.0)
    b = jaxart.ModelBuilder()
    q = (0.0, np.sin(theta / 2), 0.0, np.cos(theta / 2))
    b.add_shape_plane(xform=((0.0, 0.0, 0.0), q), width=0.0, length=0.0, cfg=cfg, label="plane")
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    pos = normal * H if z0 is None else np.array([0.0, 0.0, z0])
    body = b.add_body(xform=(tuple(pos), q), label="box")
    b.add_shape_box(body, hx=H, hy=H, hz=H, cfg=cfg, label="block")
    return b.finalize(dtype=jnp.float64), normal, np.array([np.cos(theta), 0.0, -np.sin(theta)])


def _energy(model, s):
    """Kinetic + gravitational energy [J] of all bodies."""
    com = jaxart.math.transform_point(s.body_q, model.body_com)
    rot = jaxart.math.quat_to_matrix(s.body_q[:, 3:])
    inertia = rot @ model.body_inertia @ jnp.swapaxes(rot, -1, -2)
    v, w = s.body_qd[:, :3], s.body_qd[:, 3:]
    kin = 0.5 * jnp.sum(model.body_mass * jnp.sum(v * v, -1)) + 0.5 * jnp.einsum("bi,bij,bj->", w, inertia, w)
    return kin - jnp.sum(model.body_mass * (com @ model.gravity))


@functools.partial(jax.jit, static_argnames=("steps", "dt"))
def _run(model, state, steps: int, dt: float):
    """``steps`` implicit-contact steps; per step the box position, velocity and the energy."""
    solver = jaxart.solvers.SolverFeatherstone(model)

    def step(s, _):
        s = solver.step(s, None, model.collide(s), dt)
        return s, (s.body_q[0, :3], s.body_qd[0, :3], _energy(model, s))

    return jax.lax.scan(step, state, None, length=steps)


def _with_velocity(state, v):
    qd = state.joint_qd.at[:3].set(v)
    return state.replace(joint_qd=qd, body_qd=state.body_qd.at[0, :3].set(v))


def test_sliding_box_stops_at_the_coulomb_distance():
    dt, mu, v0 = 5e-3, 0.5, 2.0
    model, _, _ = _box(mu=mu)
    settled, _ = _run(model, model.state(), 60, dt)
    x0 = float(settled.body_q[0, 0])
    final, (pos, vel, _) = _run(model, _with_velocity(settled, jnp.array([v0, 0.0, 0.0])), 300, dt)
    distance = float(pos[-1, 0]) - x0
    np.testing.assert_allclose(distance, v0 ** 2 / (2 * mu * G), rtol=0.05)
    # stopped and stays (the box only rocks back on its corner springs after the deceleration)
    np.testing.assert_allclose(np.asarray(final.body_qd[0]), 0.0, atol=2e-4)
    assert abs(float(pos[-1, 0] - pos[-60, 0])) < 1e-3


@pytest.mark.parametrize("mu", [0.5, 0.2])
def test_box_on_a_20_degree_incline_sticks_or_slides_at_coulomb_acceleration(mu):
    dt, theta = 5e-3, np.deg2rad(20.0)
    model, normal, downhill = _box(theta, mu)
    _, (_, vel, _) = _run(model, model.state(), 300, dt)
    v_t = np.asarray(vel) @ downhill
    if mu > np.tan(theta):
        assert np.all(np.abs(v_t[100:]) < 1e-3)  # sticks: creep below 1 mm/s (≈ ε tan θ / μ)
    else:
        a = (v_t[-1] - v_t[150]) / ((len(v_t) - 1 - 150) * dt)
        np.testing.assert_allclose(a, G * (np.sin(theta) - mu * np.cos(theta)), rtol=0.05)
    np.testing.assert_allclose(np.asarray(vel)[100:] @ normal, 0.0, atol=1e-3)  # no hopping


@pytest.mark.parametrize("dt", [1e-3, 5e-3, 16e-3])
def test_dropped_box_never_rebounds_above_its_drop_height(dt):
    """Undamped stiff contact (kd = 0, ke = 1e5 N/m): no energy gain at any step, rest at m g / ke."""
    z0 = 0.5
    model, _, _ = _box(ke=1e5, kd=0.0, z0=z0)
    final, (pos, _, energy) = _run(model, model.state(), int(round(1.5 / dt)), dt)
    z, energy = np.asarray(pos[:, 2]), np.asarray(energy)
    assert np.all(np.isfinite(z))
    e0 = float(_energy(model, model.state()))
    assert np.all(energy <= e0 + 1e-9)  # kinetic + gravitational energy never exceeds the initial
    touched = int(np.argmax(z < H))
    assert z[touched:].max() < z0
    assert z.min() > H - 0.02  # bounded penetration (the step's motion is folded into the spring)


def _arm_on_box():
    """A 2 kg arm hinged at the world, its tip sphere resting on a free 8 kg box on the ground."""
    cfg = ShapeConfig(ke=2e4, kd=500.0, kf=1e3, mu=0.8, density=0.0)
    length, radius = 0.5, 0.05
    b = jaxart.ModelBuilder()
    b.add_ground_plane(cfg=cfg)
    box = b.add_body(xform=((length, 0.0, H), (0.0, 0.0, 0.0, 1.0)), label="box")
    b.add_shape_box(box, hx=H, hy=H, hz=H, cfg=ShapeConfig(ke=2e4, kd=500.0, mu=0.8, density=1000.0))
    hinge_z = 2 * H + radius
    arm = b.add_link(xform=((0.0, 0.0, hinge_z), (0.0, 0.0, 0.0, 1.0)), com=(length / 2, 0.0, 0.0), mass=2.0,
                     inertia=np.diag([0.001, 0.05, 0.05]), label="arm")
    b.add_shape_sphere(arm, xform=((length, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0)), radius=radius, cfg=cfg)
    j = b.add_joint_revolute(-1, arm, axis=(0.0, 1.0, 0.0), parent_xform=((0.0, 0.0, hinge_z), (0, 0, 0, 1)))
    b.add_articulation([j])
    b.add_shape_collision_filter_pair(0, 2)  # the arm's tip touches the box only
    return b.finalize(dtype=jnp.float64)


@pytest.mark.slow
def test_arm_resting_on_a_free_box_is_solved_together():
    """Body–body rows couple the two articulations (dense world solve): statics hold at a 5 ms step."""
    model, dt = _arm_on_box(), 5e-3
    solver = jaxart.solvers.SolverFeatherstone(model)
    step = jax.jit(lambda s: solver.step(s, None, model.collide(s), dt))
    s = model.state()
    for _ in range(300):
        s = step(s)
    c = model.collide(s)
    nxt = step(s)
    f = np.asarray(implicit_contact_forces(model, s, c, nxt.joint_qd, dt))
    bodies = np.asarray(c.body_a), np.asarray(c.body_b)
    dyn_dyn = (bodies[0] >= 0) & (bodies[1] >= 0)
    assert dyn_dyn.any()
    m_box = float(model.body_mass[0])
    # torque balance about the hinge: the tip carries half the arm's weight (up to the moment of the static
    # friction force at the tip, r below the hinge), and the ground carries the box plus the tip force
    tip = -f[dyn_dyn, 2].sum() if np.all(np.asarray(c.body_b)[dyn_dyn] == 0) else f[dyn_dyn, 2].sum()
    np.testing.assert_allclose(tip, 2.0 * G / 2, rtol=0.02)
    np.testing.assert_allclose(f[~dyn_dyn, 2].sum(), m_box * G + tip, rtol=1e-3)
    np.testing.assert_allclose(np.asarray(nxt.joint_qd), 0.0, atol=1e-4)
    # batched (vmap) worlds take the same dense world solve
    batch = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), s)
    out = jax.jit(jax.vmap(lambda x: solver.step(x, None, model.collide(x), dt)))(batch)
    np.testing.assert_allclose(np.asarray(out.joint_q[1]), np.asarray(nxt.joint_q), atol=1e-12)


@pytest.fixture(scope="module")
def quadruped():
    model = mjcf_model(jaxart.assets.asset_path("quadruped"))
    solver = jaxart.solvers.SolverFeatherstone(model)
    step = jax.jit(lambda s: solver.step(s, None, model.collide(s), 5e-3))
    s = model.state()
    for _ in range(200):
        s = step(s)
    return model, solver, step, s


def test_batched_lane_kernel_matches_single_worlds(quadruped):
    model, solver, step, s = quadruped
    rng = np.random.default_rng(0)
    batch = jax.tree_util.tree_map(lambda x: jnp.stack([x] * 3), s)
    batch = batch.replace(joint_qd=batch.joint_qd + 0.3 * rng.normal(size=batch.joint_qd.shape))
    out = jax.jit(jax.vmap(lambda x: solver.step(x, None, model.collide(x), 5e-3)))(batch)
    for i in range(3):
        one = step(jax.tree_util.tree_map(lambda x, i=i: x[i], batch))
        np.testing.assert_allclose(np.asarray(out.joint_qd[i]), np.asarray(one.joint_qd), atol=1e-9)
        np.testing.assert_allclose(np.asarray(out.body_q[i]), np.asarray(one.body_q), atol=1e-9)


def test_batched_lane_kernel_matches_single_worlds_for_a_free_root_in_contact():
    # the rows act on the FREE root's block (solved between the passes), not on a level of the tree
    model, normal, _ = _box(0.3, mu=0.5)
    solver = jaxart.solvers.SolverFeatherstone(model)
    rng = np.random.default_rng(1)
    batch = jax.tree_util.tree_map(lambda x: jnp.stack([x] * 3), model.state())
    qd = 0.5 * rng.normal(size=batch.joint_qd.shape)
    qd[:, :3] -= 0.5 * normal  # moving into the plane (and sliding, spinning)
    qd = jnp.asarray(qd)
    batch = batch.replace(joint_qd=qd, body_qd=qd[:, None])  # the root joint's velocity is the body's twist
    step = lambda x: solver.step(x, None, model.collide(x), 5e-3)  # noqa: E731
    out = jax.jit(jax.vmap(step))(batch)
    one = jax.jit(step)
    for i in range(3):
        ref = one(jax.tree_util.tree_map(lambda x, i=i: x[i], batch))
        free = solver.step(jax.tree_util.tree_map(lambda x, i=i: x[i], batch), None, None, 5e-3)
        assert float(jnp.max(jnp.abs(ref.joint_qd - free.joint_qd))) > 0.1  # the contact acted
        np.testing.assert_allclose(np.asarray(out.joint_qd[i]), np.asarray(ref.joint_qd), atol=1e-9)
        np.testing.assert_allclose(np.asarray(out.body_q[i]), np.asarray(ref.body_q), atol=1e-9)


def test_standing_quadruped_foot_forces_match_mujoco(quadruped):
    """Both simulators hold the quadruped with its position servos; per-foot normal forces agree once the
    landing has settled (6 s; the stance depends on how far the feet slid at touch-down)."""
    model, solver, step, s = quadruped
    s = jax.jit(lambda s: jax.lax.scan(lambda x, _: (step(x), None), s, None, length=1000)[0])(s)
    c = model.collide(s)
    nxt = step(s)
    f = np.asarray(implicit_contact_forces(model, s, c, nxt.joint_qd, 5e-3))
    act = np.asarray(c.active)
    ours = {int(b): fz for b, fz, a in zip(np.asarray(c.body_b), f[:, 2], act, strict=True) if a}
    mj = mujoco.MjModel.from_xml_path(jaxart.assets.asset_path("quadruped"))
    d = mujoco.MjData(mj)
    for _ in range(2000):
        mujoco.mj_step(mj, d)
    theirs, out = {}, np.zeros(6)
    for i in range(d.ncon):
        mujoco.mj_contactForce(mj, d, i, out)
        geoms = (d.contact[i].geom1, d.contact[i].geom2)
        body = max(int(mj.geom_bodyid[g]) for g in geoms)
        theirs[mj.body(body).name] = theirs.get(mj.body(body).name, 0.0) + out[0]
    labels = model.topology.body_label
    assert len(ours) == len(theirs) == 4
    total = float(np.sum(model.body_mass)) * G
    # the reported forces are the ones the step applied: vertical momentum balance of the whole robot
    momentum_rate = float(np.sum(model.body_mass * (nxt.body_qd[:, 2] - s.body_qd[:, 2]))) / 5e-3
    np.testing.assert_allclose(sum(ours.values()), total + momentum_rate, rtol=1e-6)
    np.testing.assert_allclose(sum(ours.values()), total, rtol=1e-3)
    for b, fz in ours.items():
        np.testing.assert_allclose(fz, theirs[labels[b]], rtol=0.03, atol=0.01 * total)


@pytest.mark.slow
def test_one_step_and_200_step_gradients_match_finite_differences():
    """Sliding box (the contact set and slip regime stay fixed): derivatives of the distance after 200
    steps with respect to the initial speed and the friction coefficient; one step by check_grads."""
    model, _, _ = _box(mu=0.5)
    settled, _ = _run(model, model.state(), 60, 2e-3)

    def distance(v0, mu):
        m = model.replace(shape_material_mu=jnp.full_like(model.shape_material_mu, mu))
        final, _ = _run(m, _with_velocity(settled, jnp.array([v0, 0.0, 0.0])), 200, 2e-3)
        return final.body_q[0, 0]

    grad = jax.grad(distance, argnums=(0, 1))(3.0, 0.5)
    eps = 1e-5
    fd = [(distance(3.0 + eps, 0.5) - distance(3.0 - eps, 0.5)) / (2 * eps),
          (distance(3.0, 0.5 + eps) - distance(3.0, 0.5 - eps)) / (2 * eps)]
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(np.asarray(grad), np.asarray(fd), rtol=1e-4)
    solver = jaxart.solvers.SolverFeatherstone(model)
    c = model.collide(settled)
    one = lambda qd: solver.step(settled.replace(joint_qd=qd), None, c, 5e-3).joint_qd  # noqa: E731
    jax.test_util.check_grads(one, (settled.joint_qd + jnp.array([1.0, 0.2, 0.0, 0.0, 0.0, 0.3]),), order=1,
                              modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


BOX_MJCF = """<mujoco model="box_on_plane"><option timestep="0.005"/>
  <worldbody><geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0.1 -0.05 0.1"><freejoint name="root"/>
      <geom name="block" type="box" size="0.1 0.1 0.1" density="1000" friction="0.8"/></body>
  </worldbody></mujoco>"""


def test_resting_box_contact_forces_match_mujoco():
    """Each of the four corner rows carries a quarter of the weight in both simulators (same MJCF)."""
    b = jaxart.ModelBuilder()
    b.add_mjcf(BOX_MJCF)
    model = b.finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverFeatherstone(model)
    step = jax.jit(lambda s: solver.step(s, None, model.collide(s), 5e-3))
    s = model.state()
    for _ in range(300):
        s = step(s)
    c = model.collide(s)
    nxt = step(s)
    f = np.asarray(implicit_contact_forces(model, s, c, nxt.joint_qd, 5e-3))[np.asarray(c.active)]
    mj = mujoco.MjModel.from_xml_string(BOX_MJCF)
    d = mujoco.MjData(mj)
    for _ in range(300):
        mujoco.mj_step(mj, d)
    out, theirs = np.zeros(6), []
    for i in range(d.ncon):
        mujoco.mj_contactForce(mj, d, i, out)
        theirs.append(out[0])
    weight = float(model.body_mass[0]) * G
    np.testing.assert_allclose(weight, mj.body_mass[1] * G, rtol=1e-9)
    np.testing.assert_allclose(f[:, 2].sum(), sum(theirs), rtol=1e-3)
    assert len(theirs) == len(f) == 4
    np.testing.assert_allclose(np.sort(f[:, 2]), np.sort(theirs), rtol=0.02)
    np.testing.assert_allclose(f[:, :2], 0.0, atol=1e-3 * weight)  # no friction load at rest
