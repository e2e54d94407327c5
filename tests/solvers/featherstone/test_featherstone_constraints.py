"""Loop-closing joints, equality and mimic constraints in SolverFeatherstone (hard rows in the joint-space solve).

Oracles: MuJoCo C on the bridge's ``MjModel`` of the same mechanism with (nearly) hard equality constraints
(``solimp`` 0.99999), closed-form closure of a crank-rocker four-bar, finite differences.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from equality_models import INERTIA, chain_builder, fourbar_builder, residual_norms
from helpers import TEST_ASSETS

import jaxart
from jaxart.dynamics.engine.constraint_rows import constraint_plan
from jaxart.math import transform_point
from jaxart.sim.validate import np_quat_mul, np_transform_inverse, np_transform_mul
from jaxart.solvers import SolverFeatherstone, SolverMuJoCo
from jaxart.solvers.mujoco.state import qvel_to_joint_qd

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64


# ------------------------------------------------------------------ mechanisms (consistent at joint_q)
def _fk(model, joint_q):
    return np.asarray(jaxart.eval_fk(model, jnp.asarray(joint_q), model.joint_qd, model.state()).body_q)


def _parallelogram(loop: str):
    b, _ = fourbar_builder(loop)
    b.joint_q[:3] = [0.4, -0.4, 0.4]  # a consistent, non-equilibrium pose of the parallelogram
    return b


def _connect():
    """Two-link chain plus a pinned free body: the free body hangs from l2 by a CONNECT (3 + 6 − 3 DOFs)."""
    b, ix = chain_builder()
    bob = b.add_body(xform=((0.3, 0.1, 0.4), (0, 0, 0, 1)), mass=0.7, com=(0.05, 0, -0.1), inertia=INERTIA,
                     label="bob")
    b.joint_q[:3] = [0.3, -0.2, 0.05]
    b.add_equality_constraint_connect(bob, ix["l2"], anchor=(0.0, 0.0, 0.15), label="pin")
    return b


def _weld(tree: bool = False):
    """A free body welded to the first pendulum link (it then swings rigidly with it); ``tree=True``: its twin with
    the box on a FIXED tree joint instead."""
    b, ix = chain_builder()
    x2 = np.array([0.2, 0.3, 1.2, 0.0, 0.0, 0.2, 0.98])
    x2[3:] /= np.linalg.norm(x2[3:])
    box = b.add_body(xform=x2, mass=0.5, com=(0.0, 0.05, 0.0), inertia=INERTIA, label="box")
    b.joint_q[:3] = [0.3, -0.2, 0.05]
    model = b.finalize(dtype=F64)
    x1 = _fk(model, model.joint_q)[ix["l1"]]
    rel = np_transform_mul(np_transform_inverse(x1), x2)
    if tree:
        b, _ = chain_builder(box_on_l1=rel)
        b.joint_q[:3] = [0.3, -0.2, 0.05]
        return b
    anchor = np.array([0.05, 0.0, 0.02])
    p = np_transform_mul(rel, np.concatenate([anchor, [0, 0, 0, 1.0]]))[:3]
    b.add_equality_constraint_weld(ix["l1"], box, anchor=anchor, relpose=np.concatenate([p, rel[3:]]),
                                   torquescale=1.0, label="weld")
    return b


def _joint_and_mimic():
    """j2 = 0.1 − j1 + 0.3·j1² (JOINT) and j3 = 0.2 + 0.5·j1 (mimic): one DOF left."""
    b, ix = chain_builder()
    q1 = 0.3
    b.joint_q[:3] = [q1, 0.1 - q1 + 0.3 * q1 ** 2, 0.2 + 0.5 * q1]
    b.add_equality_constraint_joint(ix["j2"], ix["j1"], polycoef=[0.1, -1.0, 0.3], label="joint")
    b.add_constraint_mimic(ix["j3"], ix["j1"], coef0=0.2, coef1=0.5, label="mimic")
    return b


MECHANISMS = {
    "loop_revolute": lambda: _parallelogram("revolute"),
    "loop_ball": lambda: _parallelogram("ball"),
    "connect": _connect,
    "weld": _weld,
    "joint_mimic": _joint_and_mimic,
}


def _hard(mj: mujoco.MjModel) -> None:
    mj.eq_solimp[:] = [0.99999, 0.99999, 0.001, 0.5, 2.0]
    mj.eq_solref[:] = [0.02, 1.0]  # the reference acceleration −k·r stays negligible for round-off residuals r


def _our_qdd(model, dt=1e-5):
    """Constrained accelerations from rest: one step's velocity change over dt (no drives, consistent rows)."""
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    out = SolverFeatherstone(model).step(st, None, None, dt)
    return np.asarray(out.joint_qd) / dt


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_constrained_accelerations_match_mujoco(name):
    """Accelerations from rest. The WELD's oracle is MuJoCo C on the twin with the box on a FIXED tree joint (MuJoCo's
    own WELD rows stay soft at the 1e-3 level here even with solimp 0.99999)."""
    model = MECHANISMS[name]().finalize(dtype=F64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    assert max(residual_norms(model, st.body_q, np.asarray(model.joint_q)) or [0.0]) < 1e-12
    ours = _our_qdd(model)
    tree = np.asarray(model.joint_qd_start)
    dofs = np.concatenate([np.arange(tree[j], tree[j + 1]) for j in range(model.joint_count)
                           if model.joint_articulation[j] >= 0])
    ref_model = _weld(tree=True).finalize(dtype=F64) if name == "weld" else model
    bridge = SolverMuJoCo(ref_model)
    mj = bridge.mj_model
    _hard(mj)
    d = bridge.to_mj_data(jaxart.eval_fk(ref_model, ref_model.joint_q, ref_model.joint_qd, ref_model.state()))
    mujoco.mj_forward(mj, d)
    ref = np.asarray(qvel_to_joint_qd(bridge.layout, jnp.asarray(d.qpos), jnp.asarray(d.qacc),
                                      ref_model.joint_dof_count))
    if name == "weld":  # the chain's DOFs (the box's FREE DOFs come last in the welded model)
        dofs = np.arange(ref_model.joint_dof_count)
        # the box turns with l1, about x only (up to round-off: position residuals ~1e-16 enter as e/dt² at dt=1e-5)
        np.testing.assert_allclose(ours[6], ours[0], rtol=1e-6)
        np.testing.assert_allclose(ours[7:9], 0.0, atol=1e-6)
    assert np.abs(ref[dofs]).max() > 0.5  # it accelerates
    np.testing.assert_allclose(ours[dofs], ref[dofs], rtol=2e-4, atol=2e-4 * np.abs(ref[dofs]).max())


def test_loop_constraint_forces_match_mujoco():
    """The generalized constraint force ``Gᵀλ = M q̈ + c − τ`` of the closed parallelogram equals MuJoCo's
    ``qfrc_constraint`` (all tree joints are hinges: the DOFs map one to one)."""
    model = _parallelogram("revolute").finalize(dtype=F64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    bridge = SolverMuJoCo(model)
    mj = bridge.mj_model
    _hard(mj)
    d = bridge.to_mj_data(st)
    mujoco.mj_forward(mj, d)
    ours = _our_qdd(model)[:3]
    adr = [mj.jnt_dofadr[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, n)] for n in ("j0", "j1", "j2")]
    qacc = np.zeros(mj.nv)
    qacc[adr] = ours
    m_qacc = np.zeros(mj.nv)
    mujoco.mj_mulM(mj, d, m_qacc, qacc)
    ours_f = (m_qacc + d.qfrc_bias - d.qfrc_passive)[adr]
    assert np.abs(d.qfrc_constraint[adr]).max() > 1.0
    np.testing.assert_allclose(ours_f, d.qfrc_constraint[adr], rtol=1e-3, atol=1e-3)


# ------------------------------------------------------------------ closure over long runs
A, B, C, D = 0.1, 0.4, 0.3, 0.4  # crank, coupler, rocker, ground of a Grashof crank-rocker


def _crank_rocker(crank_angle: float):
    """Crank-rocker four-bar in the x-z plane (hinges about +y), closed at the rocker tip by a REVOLUTE loop joint
    to the world, the crank driven at 0.5 rev/s by an implicit velocity drive."""
    p = A * np.array([np.cos(crank_angle), -np.sin(crank_angle)])  # (x, z); a +y rotation takes x to (c, −s)
    g = np.array([D, 0.0])
    dv = g - p
    dist = np.linalg.norm(dv)
    a = (B ** 2 - C ** 2 + dist ** 2) / (2 * dist)
    k = p + a * dv / dist + np.sqrt(B ** 2 - a ** 2) * np.array([-dv[1], dv[0]]) / dist  # coupler tip

    def angle(v):
        return np.arctan2(-v[1], v[0])

    th = [crank_angle, angle(k - p), angle(g - k)]
    b = jaxart.ModelBuilder()
    links = [b.add_link(mass=1.0, com=(L / 2, 0, 0), inertia=np.diag([1e-4, L ** 2 / 12, L ** 2 / 12]))
             for L in (A, B, C)]
    y = (0.0, 1.0, 0.0)
    j0 = b.add_joint_revolute(-1, links[0], axis=y, target_kd=50.0, target_vel=np.pi,
                              actuator_mode=jaxart.JointTargetMode.VELOCITY, label="crank")
    j1 = b.add_joint_revolute(links[0], links[1], parent_xform=((A, 0, 0), (0, 0, 0, 1)), axis=y, label="coupler")
    j2 = b.add_joint_revolute(links[1], links[2], parent_xform=((B, 0, 0), (0, 0, 0, 1)), axis=y, label="rocker")
    b.add_articulation([j0, j1, j2])
    b.add_joint_revolute(-1, links[2], parent_xform=((D, 0, 0), (0, 0, 0, 1)), child_xform=((C, 0, 0), (0, 0, 0, 1)),
                         axis=y, label="ground_pin")
    b.joint_q[:3] = [th[0], th[1] - th[0], th[2] - th[1]]
    return b.finalize(dtype=F64)


@pytest.mark.slow
def test_driven_four_bar_stays_closed_for_10_s_at_5_ms():
    model = _crank_rocker(0.3)
    solver = SolverFeatherstone(model)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

    def gap(s):
        return jnp.linalg.norm(transform_point(s.body_q[2], jnp.array([C, 0.0, 0.0])) - jnp.array([D, 0.0, 0.0]))

    def body(s, _):
        s = solver.step(s, None, None, 5e-3)
        return s, (gap(s), s.joint_q[0])

    final, (gaps, crank) = jax.jit(lambda s: jax.lax.scan(body, s, None, length=2000))(st)
    assert float(gap(st)) < 1e-12
    assert np.all(np.isfinite(np.asarray(final.joint_q)))
    assert float(crank[-1] - crank[0]) > 0.9 * 10 * np.pi  # about five crank revolutions
    assert float(gaps.max()) < 1e-4


@pytest.mark.parametrize("loop, q0, qd0", [("fixed", 0.0, (1.0, -1.0, 1.0)), ("prismatic", 0.0, (1.0, 0.0, 1.0)),
                                            ("d6", 0.4, (0.0, 0.0, 0.0))])
def test_other_loop_joint_types_hold(loop, q0, qd0):
    """FIXED locks the parallelogram (the kick, inconsistent with the weld, is removed by the first step); a PRISMATIC
    loop along the coupler's z axis (the rocker turns with the coupler) and a D6 loop (slide along z, rotations about
    x then y) leave DOFs: their residuals stay at the O(dt²) drift while the mechanism moves."""
    b, _ = fourbar_builder(loop)
    b.joint_q[:3] = [q0, -q0, q0]
    model = b.finalize(dtype=F64)
    solver = SolverFeatherstone(model)
    st = model.state().replace(joint_qd=model.joint_qd.at[:3].set(jnp.asarray(qd0)))
    st = jaxart.eval_fk(model, st.joint_q, st.joint_qd, st)
    lj = model.joint_count - 1
    x_p, x_c = np.asarray(model.joint_X_p[lj]), np.asarray(model.joint_X_c[lj])

    def residual(bq):
        fp = np_transform_mul(bq[1], x_p)
        fc = np_transform_mul(bq[2], x_c)
        d = fc[:3] - fp[:3]
        rel = np_quat_mul(np.array([-fp[3], -fp[4], -fp[5], fp[6]]), fc[3:])
        if loop == "prismatic":
            axis = np_transform_mul(fp, np.array([0, 0, 1.0, 0, 0, 0, 1]))[:3] - fp[:3]
            return np.linalg.norm(d - axis * (axis @ d)), np.linalg.norm(rel[:3])
        if loop == "fixed":
            return np.linalg.norm(d), np.linalg.norm(rel[:3])
        # D6: slide along z of P; R = R(x, q0) R(y, q1) keeps the child's y axis ⟂ the parent's x axis
        axis = np_transform_mul(fp, np.array([0, 0, 1.0, 0, 0, 0, 1]))[:3] - fp[:3]
        x_p_w = np_transform_mul(fp, np.array([1.0, 0, 0, 0, 0, 0, 1]))[:3] - fp[:3]
        y_c_w = np_transform_mul(fc, np.array([0, 1.0, 0, 0, 0, 0, 1]))[:3] - fc[:3]
        return np.linalg.norm(d - axis * (axis @ d)), abs(x_p_w @ y_c_w)

    def body(s, _):
        s = solver.step(s, None, None, 2e-3)
        return s, s.body_q

    final, hist = jax.jit(lambda s: jax.lax.scan(body, s, None, length=300))(st)
    res = np.array([residual(np.asarray(bq)) for bq in hist[::10]])
    assert res.max() < 1e-4
    moved = np.abs(np.asarray(final.joint_q[:3]) - np.asarray(model.joint_q[:3])).max()
    if loop == "fixed":
        assert moved < 1e-6
    else:
        assert moved > 0.05


@pytest.mark.slow
def test_gradients_of_a_closed_loop_rollout_match_finite_differences():
    model = _parallelogram("revolute").finalize(dtype=F64)
    solver = SolverFeatherstone(model)
    st0 = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    target = jnp.array([0.0, 0.3, 0.2])

    def loss(qd0, mass):
        m = model.replace(body_mass=model.body_mass.at[1].set(mass))
        s = st0.replace(joint_qd=st0.joint_qd.at[:3].set(qd0))
        sol = SolverFeatherstone(m)

        def body(s, _):
            return sol.step(s, None, None, 2e-3), None

        s, _ = jax.lax.scan(body, s, None, length=30)
        return jnp.sum((s.body_q[1, :3] - target) ** 2) + 0.1 * jnp.sum(s.joint_qd[:3] ** 2)

    del solver
    qd0 = jnp.array([1.0, -1.0, 1.0])
    mass = model.body_mass[1]
    g_qd, g_m = jax.jit(jax.grad(loss, argnums=(0, 1)))(qd0, mass)
    f = jax.jit(loss)
    eps = 1e-6
    fd_qd = np.array([(f(qd0.at[i].add(eps), mass) - f(qd0.at[i].add(-eps), mass)) / (2 * eps) for i in range(3)])
    fd_m = (f(qd0, mass + eps) - f(qd0, mass - eps)) / (2 * eps)
    np.testing.assert_allclose(g_qd, fd_qd, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(g_m, fd_m, rtol=1e-5, atol=1e-8)


@pytest.mark.slow
def test_joint_and_mimic_rows_hold_and_batched_matches_single():
    model = _joint_and_mimic().finalize(dtype=F64)
    solver = SolverFeatherstone(model)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

    def run(qd1):
        s = st.replace(joint_qd=st.joint_qd.at[0].set(qd1))
        s = jaxart.eval_fk(model, s.joint_q, s.joint_qd, s)

        def body(s, _):
            return solver.step(s, None, None, 2e-3), None

        return jax.lax.scan(body, s, None, length=200)[0]

    # initial velocities violate the rows: the first step removes the violation, then the rows hold up to the
    # O(dt²) drift of the nonlinear JOINT polynomial per step (removed again by the next step)
    single = [jax.jit(run)(v) for v in (0.0, 1.5)]
    batched = jax.jit(jax.vmap(run))(jnp.array([0.0, 1.5]))
    for k, s in enumerate(single):
        np.testing.assert_allclose(batched.joint_q[k], s.joint_q, atol=1e-12)
        assert max(residual_norms(model, s.body_q, np.asarray(s.joint_q))) < 1e-5
    assert abs(float(single[1].joint_q[0]) - float(model.joint_q[0])) > 0.05


def test_disabled_constraints_keep_gated_rows_and_options_are_checked():
    b, ix = chain_builder()
    b.add_equality_constraint_connect(ix["l2"], -1, label="off", enabled=False)
    b.add_constraint_mimic(ix["j3"], ix["j1"], enabled=False)
    model = b.finalize(dtype=F64)
    plan = constraint_plan(model)  # disabled constraints keep their rows, gated by the traced flags at run time
    assert (len(plan.connect), len(plan.mimic), plan.loops, plan.weld, plan.joint) == (1, 1, (), (), ())
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="constraint_stabilization"):
            SolverFeatherstone(model, constraint_stabilization=bad)
    with pytest.raises(ValueError, match="constraint_regularization"):
        SolverFeatherstone(model, constraint_regularization=0.0)


@pytest.mark.slow
def test_pinned_pendulum_connect_keeps_the_pin():
    model = _connect().finalize(dtype=F64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    solver = SolverFeatherstone(model)

    def body(s, _):
        return solver.step(s, None, None, 2e-3), s.body_q

    final, hist = jax.jit(lambda s: jax.lax.scan(body, s, None, length=250))(st)
    res = [max(residual_norms(model, bq, np.zeros(model.joint_coord_count))[:1]) for bq in np.asarray(hist)[::25]]
    assert max(res) < 1e-5
    assert np.abs(np.asarray(final.body_q[3, :3]) - np.asarray(st.body_q[3, :3])).max() > 0.05


def test_urdf_gripper_mimics_hold():
    """Our URDF gripper's mimic chain (right = left + 0.001, knuckle = 0.1 − 2·right, composed by the importer)."""
    import os
    import warnings

    path = os.path.join(TEST_ASSETS, "urdf", "jaxart_test_description", "urdf",
                        "gripper.urdf")
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the import report (the dropped mimic on the fixed pad joint)
        b.add_urdf(path)
    model = b.finalize(dtype=F64)
    assert model.constraint_mimic_count == 2
    qs = np.asarray(model.joint_q_start)
    ix = {name: qs[model.joint_label.index(name)] for name in ("left", "right", "knuckle_joint")}
    q = np.asarray(model.joint_q, np.float64).copy()
    q[ix["left"]], q[ix["right"]], q[ix["knuckle_joint"]] = 0.01, 0.011, 0.1 - 2 * 0.011
    qd = np.zeros(model.joint_dof_count)
    qd[ix["left"]] = 0.1  # the followers start at rest: the first step makes them follow
    st = jaxart.eval_fk(model, jnp.asarray(q), jnp.asarray(qd), model.state())
    solver = SolverFeatherstone(model)

    def body(s, _):
        return solver.step(s, None, None, 2e-3), None

    final = jax.jit(lambda s: jax.lax.scan(body, s, None, length=100)[0])(st)
    fq = np.asarray(final.joint_q)
    assert fq[ix["left"]] > 0.015
    np.testing.assert_allclose(fq[ix["right"]], fq[ix["left"]] + 0.001, atol=1e-7)
    np.testing.assert_allclose(fq[ix["knuckle_joint"]], 0.1 - 2 * fq[ix["right"]], atol=1e-7)


def test_enabled_flags_switch_at_run_time_without_retracing():
    """One jitted rollout; the CONNECT and the mimic switched on/off through the traced flags: on, both hold; off,
    the motion equals that of the same mechanism built without them (a second, separately compiled model)."""
    from jaxart.sim.equality import set_constraints_enabled

    b = _connect()
    b.add_constraint_mimic(2, 0, coef0=0.2, coef1=0.5, label="mimic")  # j3 follows j1 (pulled onto the row first)
    model = b.finalize(dtype=F64)
    free_model = chain_builder()[0]
    free_model.add_body(xform=((0.3, 0.1, 0.4), (0, 0, 0, 1)), mass=0.7, com=(0.05, 0, -0.1), inertia=INERTIA)
    free_model.joint_q[:3] = [0.3, -0.2, 0.05]
    free_model = free_model.finalize(dtype=F64)
    traces = []

    def rollout(m, st):
        traces.append(1)
        solver = SolverFeatherstone(m)
        return jax.lax.scan(lambda s, _: (solver.step(s, None, None, 2e-3), None), st, None, length=60)[0]

    run = jax.jit(rollout)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    on = run(model, st)
    off = run(set_constraints_enabled(model, equality=[False], mimic=[0.0]), st)
    half = run(set_constraints_enabled(model, equality=[False], mimic=[1.0]), st)
    assert len(traces) == 1
    res_on = residual_norms(model, np.asarray(on.body_q), np.asarray(on.joint_q))
    assert max(res_on) < 1e-5
    ref = jax.jit(rollout)(free_model, jaxart.eval_fk(free_model, free_model.joint_q, free_model.joint_qd,
                                                       free_model.state()))
    np.testing.assert_allclose(off.body_q, ref.body_q, atol=1e-10)
    np.testing.assert_allclose(off.joint_q, ref.joint_q, atol=1e-10)
    assert residual_norms(model, np.asarray(off.body_q), np.asarray(off.joint_q))[0] > 0.01  # the bob fell off
    res_half = residual_norms(model, np.asarray(half.body_q), np.asarray(half.joint_q))
    assert res_half[0] > 0.01 and res_half[1] < 1e-5


@pytest.mark.slow
def test_gradients_through_enabled_and_disabled_rows_are_finite():
    """One step's gradient with respect to the model (flags included) with the CONNECT on and off (compiles the
    implicit-differentiation rule of the constrained solve: ~2 min on a loaded 2-core machine)."""
    from jaxart.sim.equality import set_constraints_enabled

    model = _connect().finalize(dtype=F64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    loss = jax.jit(jax.grad(lambda m: jnp.sum(SolverFeatherstone(m).step(st, None, None, 2e-3).body_qd[3])))
    grads = [loss(set_constraints_enabled(model, equality=flags)) for flags in ([1.0], [0.0])]
    for g in grads:
        assert np.all(np.isfinite(np.asarray(g.equality_constraint_enabled)))
        assert np.all(np.isfinite(np.asarray(g.body_mass)))
    # off, the bob falls freely: its velocity does not depend on the chain's masses; on, it does
    assert np.abs(np.asarray(grads[0].body_mass[:2])).max() > 1e-3
    np.testing.assert_allclose(np.asarray(grads[1].body_mass[:2]), 0.0, atol=1e-12)
