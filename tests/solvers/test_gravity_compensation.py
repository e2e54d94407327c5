"""Gravity compensation (MuJoCo's ``body_gravcomp``): import, native solvers, dynamics functions, SolverMuJoCo.

Oracle: MuJoCo C on the same MJCF (``mj_forward`` joint accelerations, ``mj_step``).
"""

import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.solvers import SolverFeatherstone, SolverMuJoCo, SolverSemiImplicit, SolverXPBD

jax.config.update("jax_enable_x64", True)

ARM = """
<mujoco>
  <compiler angle="radian" {compiler}/>
  <option timestep="0.002"/>
  <worldbody>
    <body name="upper" pos="0 0 1" gravcomp="{g1}">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
      <body name="fore" pos="0.4 0 0" gravcomp="{g2}">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0.1" size="0.03"/>
        <body name="hand" pos="0.3 0 0.1" gravcomp="{g3}">
          <joint name="wrist" type="hinge" axis="1 0 0"/>
          <geom type="box" size="0.05 0.02 0.03" pos="0.05 0.03 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
Q0 = np.array([0.3, -0.7, 0.4])


def _import(g=(1.0, 1.0, 1.0), compiler="", free=()):
    """The arm (joint_q = Q0), plus one free body per entry of ``free`` (its gravcomp), as a float64 model."""
    xml = ARM.format(g1=g[0], g2=g[1], g3=g[2], compiler=compiler)
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = b.add_mjcf(xml)
    b.joint_q[:3] = Q0
    for k, gc in enumerate(free):
        b.add_body(xform=((1.0 + k, 2.0, 1.0), (0.0, 0.0, 0.0, 1.0)), mass=0.7 + k, inertia=(0.01, 0.02, 0.03),
                   gravcomp=gc)
    return b.finalize(dtype=jnp.float64), r, [str(w.message) for w in rec], xml


def _mj_qacc(xml, q, qd):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = q, qd
    mujoco.mj_forward(m, d)
    return d.qacc.copy()


def test_import_keeps_gravcomp_without_report():
    model, r, msgs, _ = _import((0.5, 2.0, 0.0))
    assert msgs == [] and r["unsupported"] == []
    gc = np.asarray(model.body_gravcomp)
    assert gc.shape == (model.body_count,)
    np.testing.assert_array_equal(gc[[r["bodies"][n] for n in ("upper", "fore", "hand")]], [0.5, 2.0, 0.0])


def test_actuatorgravcomp_is_reported():
    xml = ARM.format(g1=1, g2=1, g3=1, compiler="").replace('name="elbow"', 'name="elbow" actuatorgravcomp="true"')
    with pytest.warns(UserWarning, match="actuatorgravcomp on 1 joint.*'elbow'"):
        jaxart.ModelBuilder().add_mjcf(xml)


def test_builder_gravcomp_default_and_validation():
    b = jaxart.ModelBuilder()
    b.add_link(mass=1.0, gravcomp=0.25)
    b.add_body(mass=1.0)
    np.testing.assert_array_equal(np.asarray(b.finalize().body_gravcomp), [0.25, 0.0])
    with pytest.raises(TypeError, match="gravcomp"):
        b.add_link(mass=1.0, gravcomp="x")


# SolverSemiImplicit's explicit joint attachment springs need a small step on this light hand; XPBD compiles
# ~30 % longer with the free bodies, and the held arm already checks its integrator's compensation
@pytest.mark.parametrize(("solver_cls", "dt", "free"), [(SolverFeatherstone, 2e-3, (0.5, 2.0)), (SolverXPBD, 2e-3, ()),
                                                        (SolverSemiImplicit, 1e-4, (0.5, 2.0))])
def test_compensated_arm_held_still_and_free_bodies_fall_at_reduced_gravity(solver_cls, dt, free):
    """An arm with gravcomp 1 on every body stays put for 100 steps; free bodies with gravcomp ``free``
    reach the velocity ``(1 − gravcomp) g · 100 dt`` (closed form)."""
    model, r, *_ = _import(free=free)
    state = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    solver = solver_cls(model)
    out = jax.jit(lambda s: jax.lax.fori_loop(0, 100, lambda _, x: solver.step(x, None, None, dt), s))(state)
    arm = [r["bodies"][n] for n in ("upper", "fore", "hand")]
    np.testing.assert_allclose(np.asarray(out.joint_q)[:3], Q0, atol=1e-9)
    np.testing.assert_allclose(np.asarray(out.body_q)[arm], np.asarray(state.body_q)[arm], atol=1e-9)
    v = np.asarray(out.body_qd)[3:, :3]
    expect = np.outer(1.0 - np.asarray(free), np.asarray(model.gravity)).reshape(-1, 3) * 100 * dt
    np.testing.assert_allclose(v, expect, rtol=1e-9, atol=1e-12)


def test_partial_compensation_matches_mujoco_accelerations():
    model, _, _, xml = _import((0.5, 2.0, 0.0))
    qd = np.array([0.4, -0.3, 0.8])
    qacc = _mj_qacc(xml, Q0, qd)
    state = jaxart.eval_fk(model, jnp.asarray(Q0), jnp.asarray(qd), model.state())

    @jax.jit
    def evaluate(s, a):  # dense CRBA (single world), ABA (batch-minor under vmap), RNEA
        aba = jax.vmap(jaxart.eval_forward_dynamics, in_axes=(None, 0))(model, jax.tree.map(lambda x: x[None], s))
        return jaxart.eval_forward_dynamics(model, s), aba[0], jaxart.eval_inverse_dynamics_force(model, s, a)

    dense, aba, tau = evaluate(state, jnp.asarray(qacc))
    np.testing.assert_allclose(np.asarray(dense), qacc, atol=1e-8)
    np.testing.assert_allclose(np.asarray(aba), qacc, atol=1e-8)
    np.testing.assert_allclose(np.asarray(tau), 0.0, atol=1e-8)
    # the compensation changes the answer (the test can fail)
    assert np.max(np.abs(qacc - _mj_qacc(ARM.format(g1=0, g2=0, g3=0, compiler=""), Q0, qd))) > 1.0


def test_solver_mujoco_maps_gravcomp():
    model, _, _, xml = _import((0.5, 2.0, 0.0))
    solver = SolverMuJoCo(model, integrator="euler")
    mj = solver.mj_model
    names = [mj.body(i).name for i in range(mj.nbody)]
    np.testing.assert_array_equal([mj.body_gravcomp[names.index(n)] for n in ("upper", "fore", "hand")],
                                  [0.5, 2.0, 0.0])
    ref = mujoco.MjModel.from_xml_string(xml)
    d_ref, d = mujoco.MjData(ref), mujoco.MjData(mj)
    for m_, d_ in ((ref, d_ref), (mj, d)):
        d_.qpos[:] = Q0
        mujoco.mj_forward(m_, d_)
    np.testing.assert_allclose(d.qacc, d_ref.qacc, atol=1e-8)


def test_settotalmass_is_in_the_compiled_masses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its deprecation warning to MUJOCO_LOG.TXT in the working directory
    plain, r, msgs, _ = _import((0.0, 0.0, 0.0))
    scaled, r2, msgs2, xml = _import((0.0, 0.0, 0.0), compiler='settotalmass="7.5"')
    # MuJoCo's compiler applies settotalmass (and warns that the attribute is deprecated): nothing is dropped
    assert r2["unsupported"] == [] and all("settotalmass" in msg and "deprecated" in msg for msg in msgs2)
    mass = np.asarray(scaled.body_mass)
    assert mass.sum() == pytest.approx(7.5, rel=1e-12)
    np.testing.assert_allclose(mass / mass.sum(), np.asarray(plain.body_mass) / np.asarray(plain.body_mass).sum())
    qacc = _mj_qacc(xml, Q0, np.zeros(3))
    state = jaxart.eval_fk(scaled, scaled.joint_q, scaled.joint_qd, scaled.state())
    np.testing.assert_allclose(np.asarray(jaxart.eval_forward_dynamics(scaled, state)), qacc, atol=1e-8)


@pytest.mark.slow
def test_solver_mujoco_steps_like_mujoco_c():
    """20 MJX steps of the mapped partly compensated arm against ``mj_step`` on the original MJCF."""
    model, _, _, xml = _import((0.5, 2.0, 0.0))
    solver = SolverMuJoCo(model, integrator="euler")
    state = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    out = jax.jit(lambda s: jax.lax.fori_loop(0, 20, lambda _, x: solver.step(x, None, None, 0.002), s))(state)
    ref = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(ref)
    d.qpos[:] = Q0
    for _ in range(20):
        mujoco.mj_step(ref, d)
    np.testing.assert_allclose(np.asarray(out.joint_q), d.qpos, atol=1e-8)
    np.testing.assert_allclose(np.asarray(out.joint_qd), d.qvel, atol=1e-8)
