"""Tendons: builder, lengths/velocities/forces vs MuJoCo C, Featherstone rollout, MJCF import, gradients.

Oracles: MuJoCo C (``mj_forward``: ``ten_length``, ``ten_velocity``, ``qfrc_passive``; ``mj_step``) on the
model converted by ``SolverMuJoCo`` and on the original MJCF model, closed forms for the limit penalty and
spring dead band, and central finite differences for gradients. All in float64 (conftest).
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.dynamics.tendons import (
    eval_tendon_forces,
    eval_tendon_joint_forces,
    eval_tendon_lengths,
    eval_tendon_velocities,
)
from jaxart.sim.builder_tendons import TendonWrapGeom, TendonWrapSite

_INERTIA = np.diag([0.02, 0.03, 0.01])


def _chain(*, tendons: bool = True, limits: bool = False) -> tuple[jaxart.ModelBuilder, list[int], list[int]]:
    """Three links: revolute Y, revolute X, prismatic Z, hanging along −Z; fixed and spatial tendons."""
    b = jaxart.ModelBuilder()
    links, joints = [], []
    for i in range(3):
        link = b.add_link(xform=(0.0, 0.0, -0.5 * i, 0.0, 0.0, 0.0, 1.0), mass=1.0 + 0.3 * i, inertia=_INERTIA,
                          com=(0.05, 0.0, -0.25), label=f"l{i}")
        x_p = None if i == 0 else (0.0, 0.0, -0.5, 0.0, 0.0, 0.0, 1.0)
        parent = links[-1] if links else -1
        if i < 2:
            j = b.add_joint_revolute(parent, link, axis=((0, 1, 0), (1, 0, 0))[i], parent_xform=x_p, label=f"j{i}")
        else:
            j = b.add_joint_prismatic(parent, link, axis=(0, 0, 1), parent_xform=x_p, label=f"j{i}")
        links.append(link)
        joints.append(j)
    b.add_articulation(joints)
    if tendons:
        site = b.add_site(links[2], xform=(0.0, 0.1, -0.2, 0.0, 0.0, 0.0, 1.0), label="s2")
        lim = dict(limit_range=(0.0, 0.3), limit_ke=400.0, limit_kd=3.0) if limits else {}
        b.add_tendon_fixed([(joints[0], 1.0), (joints[1], -0.7), (joints[2], 2.0)], stiffness=20.0, damping=1.5,
                           springlength=0.1, label="fixed", **lim)
        b.add_tendon_fixed([(joints[0], 0.5), (joints[1], 1.0)], stiffness=15.0, springlength=(-0.2, 0.05),
                           label="band")
        b.add_tendon_spatial([(-1, (0.2, 0.1, 0.0)), (links[0], (0.1, 0.0, -0.3)), TendonWrapSite(site)],
                             stiffness=30.0, damping=2.0, label="spatial")
    b.joint_q[:] = [0.2, -0.1, 0.05]
    return b, links, joints


def _state(model, rng, scale=1.0):
    q = jnp.asarray(rng.uniform(-0.8, 0.8, 3) * scale)
    qd = jnp.asarray(rng.uniform(-2.0, 2.0, 3) * scale)
    return jaxart.eval_fk(model, q, qd, model.state())


def test_lengths_velocities_passive_forces_match_mujoco_c():
    model = _chain()[0].finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverMuJoCo(model)
    assert solver.mj_model.ntendon == 3 and np.all(solver.mj_model.dof_damping == 0.0)
    rng = np.random.default_rng(0)
    for _ in range(4):
        state = _state(model, rng)
        d = solver.to_mj_data(state)
        np.testing.assert_allclose(eval_tendon_lengths(model, state), d.ten_length, atol=1e-12)
        np.testing.assert_allclose(eval_tendon_velocities(model, state), d.ten_velocity, atol=1e-12)
        np.testing.assert_allclose(eval_tendon_joint_forces(model, state), d.qfrc_passive, atol=1e-10)
        assert np.abs(d.qfrc_passive).max() > 1.0  # the comparison is not trivially zero


def test_spring_dead_band_and_rest_length_closed_form():
    b = _chain()[0]
    model = b.finalize(dtype=jnp.float64)
    q0 = np.asarray(b.joint_q)
    # springlength -1 (spatial) resolves to the initial length; scalars become (L0, L0)
    state0 = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    np.testing.assert_allclose(model.tendon_springlength[2], eval_tendon_lengths(model, state0)[2], atol=1e-14)
    np.testing.assert_allclose(model.tendon_springlength[0], [0.1, 0.1])
    for q, expect in (((0.4, 0.1, 0.0), -15.0 * (0.3 - 0.05)), ((-0.6, 0.0, 0.0), -15.0 * (-0.3 + 0.2)),
                      ((0.1, -0.05, 0.0), 0.0)):
        state = jaxart.eval_fk(model, jnp.asarray(q), jnp.zeros(3), model.state())
        np.testing.assert_allclose(eval_tendon_forces(model, state)[1], expect, atol=1e-12)
    L = float(np.dot([1.0, -0.7, 2.0], q0))
    np.testing.assert_allclose(eval_tendon_lengths(model, state0)[0], L, atol=1e-14)


def test_limit_penalty_closed_form():
    model = _chain(limits=True)[0].finalize(dtype=jnp.float64)
    c = np.array([1.0, -0.7, 2.0])
    for q, qd in (((0.5, -0.2, 0.1), (0.3, 0.1, -0.2)), ((-0.3, 0.2, 0.0), (-0.4, 0.0, 0.1)),
                  ((0.1, 0.0, 0.05), (0.2, 0.0, 0.0))):
        state = jaxart.eval_fk(model, jnp.asarray(q), jnp.asarray(qd), model.state())
        L, Ld = float(c @ q), float(c @ qd)
        f = -20.0 * (L - 0.1) - 1.5 * Ld
        if L > 0.3:
            f += 400.0 * (0.3 - L) - 3.0 * Ld
        elif L < 0.0:
            f += 400.0 * (0.0 - L) - 3.0 * Ld
        np.testing.assert_allclose(eval_tendon_forces(model, state)[0], f, atol=1e-11)
        tau = eval_tendon_joint_forces(model.replace(tendon_stiffness=model.tendon_stiffness.at[1:].set(0.0),
                                                     tendon_damping=model.tendon_damping.at[1:].set(0.0)), state)
        np.testing.assert_allclose(tau, c * f, atol=1e-11)


@pytest.mark.slow
def test_featherstone_rollout_matches_mujoco_c_step():
    """Featherstone (``drive="explicit"``: explicit tendon forces, semi-implicit Euler) vs MuJoCo C ``mj_step`` (Euler)
    at dt = 2e-4.

    Both are the same semi-implicit Euler scheme with explicit tendon forces (MuJoCo's Euler makes only joint
    damping implicit, and the joints have none), so 1000 steps agree to round-off; the tendons change the
    trajectory by far more than that (checked against the same chain without tendons).
    """
    model = _chain()[0].finalize(dtype=jnp.float64)
    model = model.replace(tendon_stiffness=5.0 * model.tendon_stiffness)
    notendon = _chain(tendons=False)[0].finalize(dtype=jnp.float64)
    dt, steps = 2e-4, 1000
    solver = jaxart.solvers.SolverFeatherstone(model, drive="explicit")
    mj = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    mj.mj_model.opt.timestep = dt
    state = jaxart.eval_fk(model, jnp.asarray([0.3, -0.2, 0.05]), jnp.asarray([0.5, 1.0, -0.2]), model.state())
    d = mj.to_mj_data(state)
    for _ in range(steps):
        mujoco.mj_step(mj.mj_model, d)
    plain = jaxart.solvers.SolverFeatherstone(notendon)
    s_free, _ = jaxart.rollout(plain, state, None, dt=dt, length=steps, remat=None)
    state, _ = jaxart.rollout(solver, state, None, dt=dt, length=steps, remat=None)
    q_mj = np.asarray(d.qpos)[mj.layout.q_dst[np.argsort(mj.layout.q_src)]]
    qd_mj = np.asarray(d.qvel)[mj.layout.v_dst[np.argsort(mj.layout.v_src)]]
    np.testing.assert_allclose(state.joint_q, q_mj, atol=1e-10)
    np.testing.assert_allclose(state.joint_qd, qd_mj, atol=1e-8)
    assert np.abs(np.asarray(s_free.joint_q) - q_mj).max() > 0.03


@pytest.mark.slow
def test_rollout_gradient_matches_finite_differences():
    """20 steps driven by the fixed tendon's rest length (a length target) and stiffness."""
    base = _chain()[0].finalize(dtype=jnp.float64)
    dt = 1e-2

    def loss(rest, k):
        m = base.replace(tendon_springlength=base.tendon_springlength.at[0].set(rest),
                         tendon_stiffness=base.tendon_stiffness.at[2].set(k))
        solver = jaxart.solvers.SolverFeatherstone(m)
        state = jaxart.eval_fk(m, m.joint_q, m.joint_qd, m.state())
        final, _ = jaxart.rollout(solver, state, None, dt=dt, length=20)
        return jnp.sum(final.joint_q ** 2) + jnp.sum(final.joint_qd ** 2)

    args = (jnp.asarray(0.4), jnp.asarray(30.0))
    grads = jax.jit(jax.grad(loss, argnums=(0, 1)))(*args)
    f = jax.jit(loss)
    for i, h in ((0, 1e-5), (1, 1e-4)):
        plus = list(args)
        minus = list(args)
        plus[i] = plus[i] + h
        minus[i] = minus[i] - h
        fd = (f(*plus) - f(*minus)) / (2 * h)
        assert abs(float(fd)) > 1e-4
        np.testing.assert_allclose(grads[i], fd, rtol=1e-5)


_MJCF = """
<mujoco>
  <worldbody>
    <site name="anchor" pos="0.2 0.1 0"/>
    <body name="a" pos="0 0 0">
      <joint name="h0" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
      <site name="sa" pos="0.1 0 -0.3"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="h1" type="hinge" axis="1 0 0" ref="0.1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
        <body name="c" pos="0 0 -0.5">
          <joint name="s2" type="slide" axis="0 0 1"/>
          <geom type="box" size="0.05 0.05 0.05"/>
          <site name="sc" pos="0 0.1 -0.2"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="tf" stiffness="20" damping="1.5" springlength="0.1" limited="true" range="-2 2">
      <joint joint="h0" coef="1"/><joint joint="h1" coef="-0.7"/><joint joint="s2" coef="2"/>
    </fixed>
    <spatial name="ts" stiffness="30" damping="2">
      <site site="anchor"/><site site="sa"/><site site="sc"/>
    </spatial>
  </tendon>
</mujoco>
"""


def test_mjcf_import_round_trip():
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(_MJCF)
    assert set(res["tendons"]) == {"tf", "ts"} and not res["unsupported"]
    model = b.finalize(dtype=jnp.float64)
    m = res["mj_model"]
    conv = jaxart.solvers.SolverMuJoCo(model)
    rng = np.random.default_rng(3)
    cmap, dmap = res["coord_map"], res["dof_map"]
    for _ in range(3):
        d = mujoco.MjData(m)
        d.qpos[:] = rng.uniform(-0.7, 0.7, m.nq)
        d.qvel[:] = rng.uniform(-2.0, 2.0, m.nv)
        mujoco.mj_forward(m, d)
        state = jaxart.eval_fk(model, jnp.asarray(d.qpos[cmap]), jnp.asarray(d.qvel[dmap]), model.state())
        np.testing.assert_allclose(eval_tendon_lengths(model, state), d.ten_length, atol=1e-12)
        np.testing.assert_allclose(eval_tendon_velocities(model, state), d.ten_velocity, atol=1e-12)
        passive = d.qfrc_passive.copy()
        np.testing.assert_allclose(eval_tendon_joint_forces(model, state)[np.argsort(dmap)], passive, atol=1e-10)
        d2 = conv.to_mj_data(state)
        np.testing.assert_allclose(d2.ten_length, d.ten_length, atol=1e-12)
        np.testing.assert_allclose(d2.qfrc_passive[conv.layout.v_dst[np.argsort(conv.layout.v_src)]],
                                   np.asarray(eval_tendon_joint_forces(model, state)), atol=1e-10)
    np.testing.assert_allclose(model.tendon_limit_lower[0], -2.0)
    np.testing.assert_allclose(model.tendon_springlength[1], m.tendon_lengthspring[1])


def test_builder_validation():
    b, links, joints = _chain(tendons=False)
    ball_child = b.add_link(mass=1.0, inertia=_INERTIA)
    ball = b.add_joint_ball(links[2], ball_child)
    b.add_articulation([ball])
    with pytest.raises(ValueError, match="BALL; fixed tendons need REVOLUTE, PRISMATIC or D6"):
        b.add_tendon_fixed([(ball, 1.0)])
    with pytest.raises(ValueError, match="appears twice"):
        b.add_tendon_fixed([joints[0], joints[0]], [1.0, 2.0])
    with pytest.raises(ValueError, match="2 joints but 1 coefficients"):
        b.add_tendon_fixed(joints[:2], [1.0])
    with pytest.raises(ValueError, match="at least 2 attachment points"):
        b.add_tendon_spatial([(links[0], (0, 0, 0))])
    box = b.add_shape_box(links[0], hx=0.1, hy=0.1, hz=0.1)
    with pytest.raises(NotImplementedError, match="wrapping around shape .* BOX"):
        b.add_tendon_spatial([(links[0], (0, 0, 0)), TendonWrapGeom(box), (links[1], (0, 0, 0))])
    with pytest.raises(ValueError, match="is not a site"):
        s = b.add_shape_sphere(links[0], radius=0.1)
        b.add_tendon_spatial([(links[0], (0, 0, 0)), TendonWrapSite(s)])
    with pytest.raises(ValueError, match="frictionloss"):
        b.add_tendon_fixed([(joints[0], 1.0)], frictionloss=-0.1)
    with pytest.raises(ValueError, match="limit_range"):
        b.add_tendon_fixed([(joints[0], 1.0)], limited=True, limit_range=(0.5, 0.1))
    with pytest.raises(ValueError, match="springlength"):
        b.add_tendon_fixed([(joints[0], 1.0)], springlength=(0.5, 0.1))
    assert b.tendon_count == 0
    b.add_tendon_fixed([(joints[0], 1.0)], label="t")
    with pytest.raises(ValueError, match="already used"):
        b.add_tendon_fixed([(joints[1], 1.0)], label="t")


@pytest.mark.slow
def test_add_builder_merges_tendons_and_moves_world_points():
    src = _chain()[0]
    dst = jaxart.ModelBuilder()
    dst.add_builder(src, label_prefix="r0")
    dst.add_builder(src, xform=(1.0, -2.0, 0.5, 0.0, 0.0, 0.0, 1.0), label_prefix="r1")
    m1 = src.finalize(dtype=jnp.float64)
    m2 = dst.finalize(dtype=jnp.float64)
    assert m2.tendon_label == [f"r{k}/{n}" for k in range(2) for n in ("fixed", "band", "spatial")]
    rng = np.random.default_rng(5)
    s1 = _state(m1, rng)
    s2 = jaxart.eval_fk(m2, jnp.tile(s1.joint_q, 2), jnp.tile(s1.joint_qd, 2), m2.state())
    L1 = eval_tendon_lengths(m1, s1)
    np.testing.assert_allclose(eval_tendon_lengths(m2, s2), jnp.tile(L1, 2), atol=1e-12)
    np.testing.assert_allclose(eval_tendon_joint_forces(m2, s2), jnp.tile(eval_tendon_joint_forces(m1, s1), 2),
                               atol=1e-10)


def test_tendon_params_vmap_and_jit():
    model = _chain()[0].finalize(dtype=jnp.float64)
    state = _state(model, np.random.default_rng(1))
    ks = jnp.asarray([0.0, 10.0, 20.0])

    def tau(k):
        return eval_tendon_joint_forces(model.replace(tendon_stiffness=model.tendon_stiffness.at[0].set(k)), state)

    out = jax.jit(jax.vmap(tau))(ks)
    for i, k in enumerate(ks):
        np.testing.assert_allclose(out[i], tau(k), atol=1e-12)


@pytest.mark.slow
def test_featherstone_batched_step_matches_single_worlds():
    """Under ``vmap`` the step runs as one lane kernel; the tendon loads enter before it."""
    model = _chain()[0].finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverFeatherstone(model)
    rng = np.random.default_rng(7)
    states = [_state(model, rng) for _ in range(3)]
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    out = jax.jit(jax.vmap(lambda s: solver.step(s, None, None, 1e-3)))(batch)
    for i, s in enumerate(states):
        one = solver.step(s, None, None, 1e-3)
        np.testing.assert_allclose(out.joint_qd[i], one.joint_qd, atol=1e-11)
        np.testing.assert_allclose(out.joint_q[i], one.joint_q, atol=1e-12)
    plain = jaxart.solvers.SolverFeatherstone(_chain(tendons=False)[0].finalize(dtype=jnp.float64))
    assert np.abs(np.asarray(plain.step(states[0], None, None, 1e-3).joint_qd - out.joint_qd[0])).max() > 1e-3


def test_newton_authoring_helpers_port():
    """``jaxart.solvers.mujoco.add_tendon_*`` take Newton 1.8's arguments and build the same tendons."""
    from jaxart.solvers import mujoco as mj

    b, links, joints = _chain(tendons=False)
    s0 = b.add_site(links[0], xform=(0.1, 0.0, -0.3, 0.0, 0.0, 0.0, 1.0))
    s2 = b.add_site(links[2], xform=(0.0, 0.1, -0.2, 0.0, 0.0, 0.0, 1.0))
    t0 = mj.add_tendon_fixed(b, joints=[(joints[0], 1.0), (joints[2], 2.0)], stiffness=5.0, limit_range=(-1.0, 1.0))
    t1 = mj.add_tendon_spatial(b, [mj.TendonWrapSite(s0), mj.TendonWrapSite(s2)], damping=2.0, label="sp")
    model = b.finalize(dtype=jnp.float64)
    assert (t0, t1) == (0, 1) and model.tendon_label == ["tendon_0", "sp"]
    np.testing.assert_allclose(model.tendon_limit_lower, [-1.0, -1e10])
    np.testing.assert_allclose(model.tendon_attachment_point, [[0.1, 0.0, -0.3], [0.0, 0.1, -0.2]])
    assert list(model.tendon_attachment_body) == [links[0], links[2]]
    with pytest.raises(ValueError, match="pulley may not"):
        mj.add_tendon_spatial(b, [mj.TendonWrapSite(s0), mj.TendonWrapSite(s2), mj.TendonWrapPulley(2.0)])


@pytest.mark.slow
def test_explicit_tendon_stable_step_estimate_and_warning():
    """One revolute joint, ``L = 2 q``: the tendon spring moves ``H / c²`` (closed form ``H = I_yy + m r²``)."""
    from jaxart.solvers.stability import tendon_stable_step

    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=_INERTIA, com=(0.05, 0.0, -0.25))
    j = b.add_joint_revolute(-1, link, axis=(0, 1, 0))
    b.add_articulation([j])
    b.add_tendon_fixed([(j, 2.0)], stiffness=1e4, springlength=0.0, label="stiff")
    model = b.finalize(dtype=jnp.float64)
    h = 0.03 + 1.0 * (0.05 ** 2 + 0.25 ** 2)
    est = tendon_stable_step(model)
    np.testing.assert_allclose(est.dt, 2.0 / np.sqrt(1e4 * 4.0 / h), rtol=1e-10)
    assert "tendon 'stiff'" in est.reason
    solver = jaxart.solvers.SolverFeatherstone(model, drive="explicit")
    with pytest.warns(RuntimeWarning, match="tendons, set by the tendon 'stiff'"):
        solver.step(model.state(), None, None, 1.5 * est.dt)
    assert "tendons" not in jaxart.solvers.SolverFeatherstone(model)._limits  # implicit tendons: no step limit


@pytest.mark.slow
def test_spatial_tendon_on_free_body_matches_mujoco_c_step():
    """A free box on an elastic string to the world: the tendon acts through body wrenches (any joint type).

    Featherstone integrates FREE joints at the COM (Newton's convention), MuJoCo at the body origin with its own
    quaternion update, so 2000 steps at dt = 1e-4 agree to ~3e-6, not round-off; the string moves the box by
    ~0.36 over the same time (checked against the run without it).
    """
    b = jaxart.ModelBuilder()
    box = b.add_body(xform=(0.3, 0.1, -0.4, 0.0, 0.0, 0.0, 1.0), mass=0.7, inertia=np.diag([0.01, 0.02, 0.015]),
                     com=(0.02, 0.0, 0.01))
    b.add_tendon_spatial([(-1, (0.0, 0.0, 0.2)), (box, (0.05, 0.04, 0.03))], stiffness=40.0, damping=0.5,
                         springlength=0.3)
    model = b.finalize(dtype=jnp.float64)
    state = model.state()
    state = jaxart.eval_fk(model, state.joint_q, jnp.asarray([0.2, -0.1, 0.3, 1.0, -0.5, 0.7]), state)
    dt, steps = 1e-4, 2000
    mj = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    mj.mj_model.opt.timestep = dt
    d = mj.to_mj_data(state)
    np.testing.assert_allclose(eval_tendon_lengths(model, state), d.ten_length, atol=1e-12)
    for _ in range(steps):
        mujoco.mj_step(mj.mj_model, d)
    ref = mj.from_mjx_data(mj.to_mjx_data(state).replace(qpos=jnp.asarray(d.qpos), qvel=jnp.asarray(d.qvel)), state)
    out, _ = jaxart.rollout(jaxart.solvers.SolverFeatherstone(model, angular_damping=0.0, drive="explicit"), state,
                            None, dt=dt,
                            length=steps, remat=None)
    np.testing.assert_allclose(out.joint_q, ref.joint_q, atol=2e-5)
    np.testing.assert_allclose(out.joint_qd, ref.joint_qd, atol=3e-4)
    slack = model.replace(tendon_stiffness=0.0 * model.tendon_stiffness, tendon_damping=0.0 * model.tendon_damping)
    free, _ = jaxart.rollout(jaxart.solvers.SolverFeatherstone(slack, angular_damping=0.0), state, None, dt=dt,
                             length=steps, remat=None)
    assert np.abs(np.asarray(free.joint_q - ref.joint_q)).max() > 0.1


def _slider(*, tendon: dict, mass: float = 2.0, q0: float = 0.1):
    """One prismatic slider along X (no gravity) with one fixed tendon ``L = 2 q``."""
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=mass, inertia=np.eye(3) * 0.01, lock_inertia=True)
    j = b.add_joint_prismatic(-1, link, axis=(1, 0, 0))
    b.add_articulation([j])
    b.add_tendon_fixed([(j, 2.0)], label="t", **tendon)
    b.joint_q[0] = q0
    return b.finalize(dtype=jnp.float64)


def _run(model, steps, dt, *, drive="implicit", control=None):
    solver = jaxart.solvers.SolverFeatherstone(model, drive=drive)
    controls = None if control is None else jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps, *x.shape)),
                                                                   control)
    _, traj = jaxart.rollout(solver, model.state(), controls, dt=dt, length=steps, remat=None,
                             output_fn=lambda s: (s.joint_q[0], s.joint_qd[0]))
    return np.asarray(traj[0]), np.asarray(traj[1])


@pytest.mark.slow
def test_implicit_stiff_tendon_is_the_implicit_oscillator_and_never_gains_energy():
    """k = 1e5 on ``L = 2q`` (stable explicit step 2/√(k c²/m) = 4.5 ms) at dt = 5 ms: the implicit step is the
    closed-form recursion ``(m + dt² k c²) q̈ = −k c (c q − L0) − dt k c² q̇``, energy never grows; explicit diverges."""
    k, m, c, rest, dt, steps = 1e5, 2.0, 2.0, 0.0, 5e-3, 200
    model = _slider(tendon=dict(stiffness=k, springlength=rest), mass=m)
    q, qd = _run(model, steps, dt)
    ref_q, ref_qd, x, v = [], [], 0.1, 0.0
    for _ in range(steps):
        a = (-k * c * (c * x - rest) - dt * k * c * c * v) / (m + dt * dt * k * c * c)
        v += dt * a
        x += dt * v
        ref_q.append(x)
        ref_qd.append(v)
    np.testing.assert_allclose(q, ref_q, atol=1e-12)
    np.testing.assert_allclose(qd, ref_qd, atol=1e-10)
    energy = 0.5 * m * qd ** 2 + 0.5 * k * (c * q - rest) ** 2
    assert energy[0] > 1.0 and np.all(np.diff(energy) <= 1e-12 * energy[0])
    with pytest.warns(RuntimeWarning, match="explicit tendons"):
        q_exp, _ = _run(model, steps, dt, drive="explicit")
    assert not np.all(np.abs(q_exp) < 1e3)  # the explicit spring diverges at this step


@pytest.mark.slow
def test_implicit_tendon_limit_holds_a_pushed_slider():
    """A constant force pushes the slider into the tendon's lower limit (penalty ke = 1e6, explicit stable step
    1 ms): at dt = 5 ms the implicit limit holds it at the closed-form equilibrium ``L = lower + F / (c ke)``; the
    explicit penalty diverges. The limit switches on at the start of a step, so the step of first contact may
    overshoot by at most that step's travel (as joint limits do); the next steps push it back out."""
    ke, kd, push, lower, dt, steps = 1e6, 2e3, -50.0, 0.1, 5e-3, 150
    model = _slider(tendon=dict(limit_range=(lower, 1.0), limit_ke=ke, limit_kd=kd), q0=0.06)
    control = model.control().replace(joint_f=jnp.asarray([push]))
    q, _ = _run(model, steps, dt, control=control)
    length = 2.0 * q
    first = int(np.argmax(length < lower))
    assert first > 0 and lower - length.min() <= length[first - 1] - length[first]  # one step of travel at most
    assert np.all(length[first + 2:] > lower - 1e-3)
    np.testing.assert_allclose(length[-1], lower + push / (2.0 * ke), atol=1e-9)  # c·ke·(lower − L) = −F
    with pytest.warns(RuntimeWarning, match="explicit tendons"):
        q_exp, _ = _run(model, steps, dt, drive="explicit", control=control)
    assert not np.all(np.abs(q_exp) < 1e3)


@pytest.mark.slow
def test_tendon_jacobian_maps_joint_velocities_to_length_rates():
    """``J q̇ = L̇`` (the rows of the implicit terms) on the chain and on a free body (COM-velocity convention)."""
    from jaxart.dynamics.tendon_jacobian import tendon_jacobian

    chain = _chain()[0].finalize(dtype=jnp.float64)
    b = jaxart.ModelBuilder()
    box = b.add_body(xform=(0.3, 0.1, -0.4, 0.0, 0.0, 0.0, 1.0), mass=0.7, inertia=np.diag([0.01, 0.02, 0.015]),
                     com=(0.02, 0.0, 0.01))
    b.add_tendon_spatial([(-1, (0.0, 0.0, 0.2)), (box, (0.05, 0.04, 0.03))], stiffness=40.0)
    free = b.finalize(dtype=jnp.float64)
    rng = np.random.default_rng(3)
    for model in (chain, free):
        for _ in range(2):
            s = model.state()
            qd = jnp.asarray(rng.uniform(-1.0, 1.0, model.joint_dof_count))
            q = s.joint_q if model is free else jnp.asarray(rng.uniform(-0.8, 0.8, 3))
            s = jaxart.eval_fk(model, q, qd, s)
            rates = eval_tendon_velocities(model, s)
            assert np.abs(rates).max() > 1e-2
            np.testing.assert_allclose(tendon_jacobian(model, s.joint_q, s.body_q) @ qd, rates, atol=1e-12)
