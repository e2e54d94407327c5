"""Tendon friction, armature and limit margin (MuJoCo's ``frictionloss``, ``armature``, ``margin``).

Oracles: MuJoCo C on the same model (converted by ``SolverMuJoCo``): ``qacc`` of ``mj_forward`` with tendon
armature (``a JᵀJ`` in the inertia plus the bias ``a Jᵀ J̇q̇``) and with slipping tendon friction (MuJoCo's
friction rows at their bound ``±frictionloss``), the limit rows MuJoCo instantiates within the margin, and
``mj_step`` holding a friction-loaded arm; closed forms for the smooth friction's creep rate ``ε atanh(f/μ)``
and a slider's acceleration; the inverse dynamics of the step's acceleration for the solver forces. A two-joint
arm (shoulder about Y, elbow about X) with a fixed tendon and a spatial tendon; every scenario changes traced
leaves only, so one compiled step serves all of them. Float64 (conftest).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.dynamics import eval_joint_solver_forces
from jaxart.dynamics.tendon_jacobian import tendon_jacobian_rate
from jaxart.dynamics.tendons import eval_tendon_forces, eval_tendon_lengths, eval_tendon_velocities
from jaxart.sim.builder_tendons import TendonWrapSite
from jaxart.solvers import SolverFeatherstone

DT = 1e-3
_INERTIA = np.diag([0.02, 0.03, 0.01])


@functools.lru_cache(maxsize=1)
def _arm() -> jaxart.Model:
    """Shoulder (Y) and elbow (X) hinges; a fixed tendon ``q0 − 0.6 q1`` and a spatial tendon from the world over
    the upper arm to the forearm. No spring, damping, limit, friction or armature (set per test)."""
    b = jaxart.ModelBuilder()
    upper = b.add_link(mass=1.0, inertia=_INERTIA, com=(0.05, 0.0, -0.25), label="upper")
    shoulder = b.add_joint_revolute(-1, upper, axis=(0, 1, 0), label="shoulder")
    x_e = (0.0, 0.0, -0.5, 0.0, 0.0, 0.0, 1.0)
    fore = b.add_link(xform=x_e, mass=0.7, inertia=_INERTIA, com=(0.0, 0.03, -0.2), label="fore")
    elbow = b.add_joint_revolute(upper, fore, axis=(1, 0, 0), parent_xform=x_e, label="elbow")
    b.add_articulation([shoulder, elbow])
    tip = b.add_site(fore, xform=(0.0, 0.1, -0.3, 0.0, 0.0, 0.0, 1.0), label="tip")
    b.add_tendon_fixed([(shoulder, 1.0), (elbow, -0.6)], label="fixed")
    b.add_tendon_spatial([(-1, (0.2, 0.1, 0.1)), (upper, (0.1, 0.0, -0.3)), TendonWrapSite(tip)], label="spatial")
    b.joint_q[:] = [0.3, -0.4]
    return b.finalize(dtype=jnp.float64)


def _with(model, **fields):
    return model.replace(**{f"tendon_{k}": jnp.asarray(v, jnp.float64) for k, v in fields.items()})


@jax.jit
def _step(model, q, qd):
    """One implicit Featherstone step: ``(state, next joint_q, next joint_qd, solver forces)``."""
    st = jaxart.eval_fk(model, q, qd, model.state())
    nxt = SolverFeatherstone(model).step(st, None, None, DT)
    return st, nxt.joint_q, nxt.joint_qd, eval_joint_solver_forces(model, st, None, nxt.joint_qd, DT)


@jax.jit
def _probe(model, q, qd):
    """Tendon quantities at ``(q, q̇)``: lengths, rates, passive forces, ``J``, ``J̇q̇`` and the inverse dynamics
    ``C q̇ + g`` of ``q̈ = 0`` (one compiled program)."""
    st = jaxart.eval_fk(model, q, qd, model.state())
    jac, bias = tendon_jacobian_rate(model, st.joint_q, st.joint_qd, st.body_q)
    return (eval_tendon_lengths(model, st), eval_tendon_velocities(model, st), eval_tendon_forces(model, st), jac,
            bias, jaxart.eval_inverse_dynamics_force(model, st, jnp.zeros_like(qd)))


def _mj_data(solver, q, qd):
    """MuJoCo C data at ``(q, q̇)`` (``mj_forward``) of a ``SolverMuJoCo``'s converted model."""
    d = mujoco.MjData(solver.mj_model)
    d.qpos[solver.layout.q_dst[np.argsort(solver.layout.q_src)]] = q
    d.qvel[solver.layout.v_dst[np.argsort(solver.layout.v_src)]] = qd
    mujoco.mj_forward(solver.mj_model, d)
    return d


def _mj_qacc(model, q, qd):
    mj = jaxart.solvers.SolverMuJoCo(model)
    d = _mj_data(mj, q, qd)
    return np.asarray(d.qacc)[mj.layout.v_dst[np.argsort(mj.layout.v_src)]], mj, d


def _states():
    rng = np.random.default_rng(11)
    return [(rng.uniform(-0.8, 0.8, 2), rng.uniform(-3.0, 3.0, 2)) for _ in range(3)]


def test_armature_accelerations_match_mujoco_c():
    """``(M + Σ a JᵀJ) q̈ = τ − Σ a Jᵀ J̇q̇``: q̈ of the step equals MuJoCo's ``qacc`` (frictionless, unlimited)."""
    model = _with(_arm(), armature=[0.4, 0.8])
    plain = _arm()
    biases = []
    for q, qd in _states():
        ref, mj, _ = _mj_qacc(model, q, qd)
        np.testing.assert_allclose(mj.mj_model.tendon_armature, [0.4, 0.8])
        _, _, qd1, _ = _step(model, jnp.asarray(q), jnp.asarray(qd))
        np.testing.assert_allclose((qd1 - qd) / DT, ref, atol=1e-9)
        _, _, qd0, _ = _step(plain, jnp.asarray(q), jnp.asarray(qd))
        assert np.abs(np.asarray(qd0 - qd1)).max() / DT > 0.5  # the armature changes the accelerations
        bias = np.asarray(_probe(model, jnp.asarray(q), jnp.asarray(qd))[4])
        assert bias[0] == 0.0  # fixed tendon: constant J
        biases.append(abs(0.8 * bias[1]))
    assert max(biases) > 0.05  # the spatial tendon's a J̇q̇ [N] is far above the tolerance


def test_slipping_friction_matches_mujoco_c():
    """Tendons slipping (``|L̇| ≫ ε``): the smooth law is ``−μ sign(L̇)``, as MuJoCo's friction rows at their bound.

    MuJoCo's friction row opposes the residual ``J q̈ − a_ref`` with ``a_ref = −b L̇``, which at high joint speeds
    the velocity-product accelerations can dominate (then it pushes along the slip within that instant); a stiff
    friction reference (``solref_friction`` time constant 0.2 ms, ``b = 10⁴``) makes it oppose the slip in every
    state, the dry-friction law both solvers model."""
    model = _with(_arm(), frictionloss=[1.5, 2.5], armature=[0.2, 0.3])
    mj = jaxart.solvers.SolverMuJoCo(model)
    mj.mj_model.opt.timestep = 1e-4  # the reference time constant may not be below two steps
    mj.mj_model.tendon_solref_fri[:] = [2e-4, 1.0]
    for (q, _), rates in zip(_states(), ([0.5, -0.6], [-0.7, -0.4], [0.6, 0.5]), strict=True):
        jac = np.asarray(_probe(model, jnp.asarray(q), jnp.zeros(2))[3])
        qd = np.linalg.solve(jac, rates)  # both tendons slip: tanh(L̇/ε) = ±1 to 1e-17
        d = _mj_data(mj, q, qd)
        rows = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_FRICTION_TENDON
        assert rows.sum() == 2
        np.testing.assert_allclose(d.efc_force[: d.nefc][rows], -np.array([1.5, 2.5]) * np.sign(rates), rtol=1e-9)
        _, _, qd1, _ = _step(model, jnp.asarray(q), jnp.asarray(qd))
        np.testing.assert_allclose(_probe(model, jnp.asarray(q), jnp.asarray(qd))[1], rates, atol=1e-12)
        ref = np.asarray(d.qacc)[mj.layout.v_dst[np.argsort(mj.layout.v_src)]]
        np.testing.assert_allclose((qd1 - qd) / DT, ref, atol=1e-7)


def test_friction_holds_the_arm_like_mujoco_and_creeps_at_the_closed_form_rate():
    """At rest under gravity with frictionloss well above the tendon loads, both hold the arm (MuJoCo C ``mj_step``
    and the smooth law, against a 0.3 rad swing without friction); the smooth law creeps at ``L̇ = ε atanh(−f/μ)``
    with ``Jᵀ f = g`` (the tendon forces that carry the gravity load, ``ε`` = ``friction_smoothing``), MuJoCo by
    its soft constraint."""
    mu = np.array([2.0, 15.0])
    model = _with(_arm(), frictionloss=mu)
    q, qd = jnp.asarray(model.joint_q), jnp.zeros(2)
    q0 = q
    for _ in range(100):  # 0.1 s: the creep settles (time constant ~30 ms) and follows the slowly changing load
        st, q, qd, _ = _step(model, q, qd)
    _, rate, _, jac, _, g = (np.asarray(x) for x in _probe(model, q, qd))
    f = np.linalg.solve(jac.T, g)
    assert 0.3 < np.abs(f / mu).min() and np.abs(f / mu).max() < 0.6  # loaded, but below the friction
    creep = 1e-2 * np.arctanh(-f / mu)
    np.testing.assert_allclose(rate, creep, rtol=1e-2)
    assert float(np.abs(q - q0).max()) < 0.1 * np.abs(np.linalg.solve(jac, creep)).max()  # held up to the creep
    moved = []
    for solver in (jaxart.solvers.SolverMuJoCo(model), jaxart.solvers.SolverMuJoCo(_arm())):
        d = _mj_data(solver, np.asarray(q0), np.zeros(2))
        for _ in range(round(0.5 / solver.mj_model.opt.timestep)):
            mujoco.mj_step(solver.mj_model, d)
        q_mj = np.asarray(d.qpos)[solver.layout.q_dst[np.argsort(solver.layout.q_src)]]
        moved.append(np.abs(q_mj - np.asarray(q0)).max())
    assert moved[1] > 0.3 and moved[0] < 1e-2, moved


def test_limit_margin_activation_matches_mujoco_c():
    """Fixed tendon range (−0.5, 0.5) with margin 0.1, spatial tendon upper limit with margin 0.05: MuJoCo
    instantiates a tendon limit row exactly when ``dist < margin``, and jaxart's penalty is on exactly then, pushing
    toward ``lower + margin`` / ``upper − margin`` (the direction of MuJoCo's constraint force where one row is
    active; two active rows share the load by complementarity, and one may carry none; no gravity)."""
    grid = [jnp.asarray([q0, q1]) for q0 in (0.47, 0.3, -0.44, -0.38, 0.0, 0.2, 0.37) for q1 in (-0.6, 0.0, 0.7)]
    zero = jnp.zeros(2)
    upper_sp = float(np.median([float(_probe(_arm(), q, zero)[0][1]) for q in grid]))
    model = _with(_arm(), limit_lower=[-0.5, -1e10], limit_upper=[0.5, upper_sp], margin=[0.1, 0.05],
                  limit_ke=[200.0, 300.0], limit_kd=[0.0, 0.0]).replace(gravity=jnp.zeros(3))
    mj = jaxart.solvers.SolverMuJoCo(model)
    np.testing.assert_allclose(mj.mj_model.tendon_margin, [0.1, 0.05])
    lo, hi = np.array([-0.4, -1e10]), np.array([0.4, upper_sp - 0.05])
    seen = set()
    for q in grid:
        length, _, force, jac, _, _ = (np.asarray(x) for x in _probe(model, q, zero))
        d = _mj_data(mj, np.asarray(q), np.zeros(2))
        n, nv = d.nefc, mj.mj_model.nv
        rows = np.flatnonzero(d.efc_type[:n] == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON)
        active = sorted(int(d.efc_id[r]) for r in rows)
        expect = [k for k in range(2) if length[k] < lo[k] or length[k] > hi[k]]
        assert active == expect, (q, length)
        np.testing.assert_allclose(force, [200.0, 300.0] * (np.clip(length, lo, hi) - length), atol=1e-12)
        efc_j = np.asarray(d.efc_J).reshape(-1)[: n * nv].reshape(n, nv)[:, mj.layout.v_dst[np.argsort(
            mj.layout.v_src)]]
        for r in rows:
            k = int(d.efc_id[r])
            np.testing.assert_allclose(d.efc_margin[r], [0.1, 0.05][k])
            assert d.efc_force[r] >= 0.0
            if len(rows) == 1:  # alone, MuJoCo's force along the tendon (efc_J = ±ten_J) has jaxart's sign
                assert np.sign(float(efc_j[r] @ jac[k]) * d.efc_force[r]) == np.sign(force[k]) != 0.0
                seen.add(k)
    assert seen == {0, 1}


def test_solver_forces_include_friction_and_armature_reaction():
    """``eval_joint_solver_forces`` (the tendons' ``Jᵀ f`` with friction and the armature's reaction
    ``−a Jᵀ L̈``) balances the inverse dynamics of the step's acceleration; the tendon terms are not small."""
    model = _with(_arm(), frictionloss=[1.5, 2.5], armature=[0.4, 0.8], damping=[0.5, 1.0])
    q, qd = _states()[0]
    st, _, qd1, f = _step(model, jnp.asarray(q), jnp.asarray(qd))
    tau = jaxart.eval_inverse_dynamics_force(model, st, (qd1 - st.joint_qd) / DT)
    np.testing.assert_allclose(f, tau, atol=1e-9)
    assert np.abs(np.asarray(f)).max() > 1.0


def test_builder_validation_merge_and_mjcf_import():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=_INERTIA)
    j = b.add_joint_revolute(-1, link, axis=(0, 1, 0))
    b.add_articulation([j])
    for key in ("frictionloss", "armature", "margin"):
        with pytest.raises(ValueError, match=key):
            b.add_tendon_fixed([(j, 1.0)], **{key: -0.1})
    with pytest.raises(ValueError, match="margin 0.3 leaves no free range"):
        b.add_tendon_fixed([(j, 1.0)], limit_range=(-0.3, 0.3), margin=0.3)
    b.add_tendon_fixed([(j, 1.0)], frictionloss=0.7, armature=0.2, margin=0.05, limit_range=(-1.0, 1.0), label="t")
    dst = jaxart.ModelBuilder()
    dst.add_builder(b, label_prefix="r")
    assert (dst.tendon_frictionloss, dst.tendon_armature, dst.tendon_margin) == ([0.7], [0.2], [0.05])
    xml = """<mujoco><worldbody><body><joint name="h" axis="0 1 0"/><geom size=".1" pos="0 0 -.3"/>
      <site name="s" pos="0 0 -.3"/></body><site name="w" pos=".2 0 0"/></worldbody>
      <tendon><fixed name="tf" frictionloss="0.7" armature="0.2" margin="0.05" range="-1 1" limited="true">
      <joint joint="h" coef="2"/></fixed>
      <spatial name="ts" frictionloss="1.1" armature="0.3"><site site="w"/><site site="s"/></spatial></tendon>
      </mujoco>"""
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(xml)
    assert set(res["tendons"]) == {"tf", "ts"} and not res["unsupported"]
    model = b.finalize(dtype=jnp.float64)
    np.testing.assert_allclose(model.tendon_frictionloss, [0.7, 1.1])
    np.testing.assert_allclose(model.tendon_armature, [0.2, 0.3])
    np.testing.assert_allclose(model.tendon_margin, [0.05, 0.0])
    m = jaxart.solvers.SolverMuJoCo(model).mj_model
    np.testing.assert_allclose(m.tendon_frictionloss, [0.7, 1.1])
    np.testing.assert_allclose(m.tendon_armature, [0.2, 0.3])
    np.testing.assert_allclose(m.tendon_margin, [0.05, 0.0])


def test_semi_implicit_friction_wrenches():
    """``SolverSemiImplicit``: the tendon friction's body wrenches are the generalized force ``Jᵀ (−μ tanh(L̇/ε))``
    (its armature: ``test_semi_implicit_tendon_armature.py``)."""
    from jaxart.solvers.maximal.tendons import TENDON_FRICTION_EPS, tendon_body_wrenches

    mu = np.array([1.5, 2.5])
    model = _with(_arm(), frictionloss=mu)
    q, qd = (jnp.asarray(x) for x in _states()[1])
    qd = 0.01 * qd
    st = _step(model, q, qd)[0]
    wrenches = jax.jit(tendon_body_wrenches)
    w = wrenches(model, st, None) - wrenches(_arm(), st, None)
    tau = -np.asarray(jaxart.eval_generalized_external_force(model, st, body_f=w))
    _, rate, _, jac, _, _ = (np.asarray(x) for x in _probe(model, q, qd))
    assert np.abs(np.tanh(rate / TENDON_FRICTION_EPS)).min() < 0.99  # inside the smooth zone
    np.testing.assert_allclose(tau, jac.T @ (-mu * np.tanh(rate / TENDON_FRICTION_EPS)), atol=1e-10)


def _slider(**tendon) -> jaxart.Model:
    """A 2 kg slider along X (no gravity) with one fixed tendon ``L = 2 q``."""
    b = jaxart.ModelBuilder(gravity=0.0)
    link = b.add_link(mass=2.0, inertia=np.eye(3) * 0.01, lock_inertia=True)
    j = b.add_joint_prismatic(-1, link, axis=(1, 0, 0))
    b.add_articulation([j])
    b.add_tendon_fixed([(j, 2.0)], label="t", **tendon)
    return b.finalize(dtype=jnp.float64)


@pytest.mark.slow
def test_xpbd_friction_row_and_armature_closed_form():
    """One XPBD step from rest under a push ``F``: the armature row gives ``q̇ = dt F / (m + a c²)``; the friction
    row holds the slider while ``F/c ≤ μ`` and lets it slip with ``q̇ = dt (F − c μ)/m`` otherwise."""
    model = _slider(frictionloss=1.0, armature=0.5)
    dt, m, c = 1e-2, 2.0, 2.0

    @jax.jit
    def step(model, push):
        ctrl = model.control().replace(joint_f=jnp.asarray([push]))
        return jaxart.solvers.SolverXPBD(model, iterations=4).step(model.state(), ctrl, None, dt).joint_qd[0]

    np.testing.assert_allclose(step(_with(model, frictionloss=[0.0]), 6.0), dt * 6.0 / (m + 0.5 * c * c), rtol=1e-6)
    no_arm = _with(model, armature=[0.0], frictionloss=[5.0])
    assert abs(float(step(no_arm, 8.0))) < 1e-9  # F/c = 4 < μ = 5: held
    np.testing.assert_allclose(step(no_arm, 16.0), dt * (16.0 - c * 5.0) / m, rtol=1e-6)


@jax.jit
def _dynamics(model, q, qd, qdd):
    """Mass matrix, inverse dynamics of ``qdd``, forward dynamics and the passive terms at ``(q, q̇)``."""
    st = jaxart.eval_fk(model, q, qd, model.state())
    return (jaxart.eval_mass_matrix(model, st)[0], jaxart.eval_inverse_dynamics_force(model, st, qdd),
            jaxart.eval_forward_dynamics(model, st), jaxart.eval_inverse_dynamics_passive(model, st))


def test_mass_matrix_and_inverse_dynamics_hold_tendon_armature_as_mujoco_c():
    """``eval_mass_matrix`` is MuJoCo's ``qM`` (``mj_fullM``) with ``Σ a JᵀJ``; ``eval_inverse_dynamics_force`` is
    ``mj_inverse``'s ``qfrc_inverse`` (with ``a Jᵀ (J q̈ + J̇q̇)``); ``eval_forward_dynamics`` is ``qacc`` and inverts
    it; the passive split ``M q̈ + C q̇ + g`` reproduces the inverse dynamics."""
    model = _with(_arm(), armature=[0.4, 0.8])
    mj = jaxart.solvers.SolverMuJoCo(model)
    perm = mj.layout.v_dst[np.argsort(mj.layout.v_src)]
    rng = np.random.default_rng(5)
    for q, qd in _states():
        qdd = rng.uniform(-2.0, 2.0, 2)
        h, tau, acc, (h2, g, c) = _dynamics(model, jnp.asarray(q), jnp.asarray(qd), jnp.asarray(qdd))
        d = _mj_data(mj, q, qd)
        full = np.zeros((mj.mj_model.nv, mj.mj_model.nv))
        mujoco.mj_fullM(mj.mj_model, d, full)
        np.testing.assert_allclose(h, full[np.ix_(perm, perm)], atol=1e-10)
        np.testing.assert_allclose(acc, np.asarray(d.qacc)[perm], atol=1e-9)
        d.qacc[perm] = qdd
        mujoco.mj_inverse(mj.mj_model, d)
        np.testing.assert_allclose(tau, np.asarray(d.qfrc_inverse)[perm], atol=1e-9)
        np.testing.assert_allclose(h2[0] @ qdd + c + g, tau, atol=1e-9)
    plain = _dynamics(_arm(), jnp.asarray(q), jnp.asarray(qd), jnp.asarray(qdd))
    assert np.abs(np.asarray(plain[0] - h)).max() > 0.1  # the armature is not small
