"""Dynamics quantities: Jacobian, CRBA mass matrix, RNEA bias, inverse/forward dynamics.

Oracles: MuJoCo C on twin models (builder + MJCF) and on the bundled/MJX assets via add_mjcf,
closed forms (pendulum, double pendulum), energy/velocity identities, finite differences.
"""

import os
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from dyn_models import chain_spec, mixed_tree_spec, mj_to_jaxart, to_builder, to_mjcf
from helpers import all_joints_builder, random_coords
from jax.test_util import check_grads

import jaxart
from jaxart.dynamics import (
    eval_forward_dynamics,
    eval_generalized_external_force,
    eval_inverse_dynamics_force,
    eval_inverse_dynamics_passive,
    eval_jacobian,
    eval_mass_matrix,
)
from jaxart.math import quat_to_matrix

F64 = jnp.float64


@jax.jit
def _quantities(model, st, qdd):
    """Everything the oracle tests compare, in one compiled function per model."""
    H, g, c = eval_inverse_dynamics_passive(model, st)
    H0 = eval_mass_matrix(model, st, include_armature=False)
    return H, g, c, H0, eval_forward_dynamics(model, st), eval_inverse_dynamics_force(model, st, qdd)


def _mj_state(spec, m, d, rng):
    for jid in range(m.njnt):
        a, t = m.jnt_qposadr[jid], m.jnt_type[jid]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            d.qpos[a:a + 3] = rng.normal(size=3)
            q = rng.normal(size=4)
            d.qpos[a + 3:a + 7] = q / np.linalg.norm(q)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            q = rng.normal(size=4)
            d.qpos[a:a + 4] = q / np.linalg.norm(q)
        else:
            d.qpos[a] = rng.uniform(-1.0, 1.0)
    d.qvel[:] = rng.normal(size=m.nv)
    mujoco.mj_forward(m, d)


@pytest.mark.parametrize("floating", [False, True])
def test_mass_matrix_bias_inverse_vs_mujoco(floating):
    rng = np.random.default_rng(3 + floating)
    spec = mixed_tree_spec(rng, floating=floating)
    m = mujoco.MjModel.from_xml_string(to_mjcf(spec, armature=0.03))
    d = mujoco.MjData(m)
    model = to_builder(spec, armature=0.03).finalize(dtype=F64)
    for _ in range(2):
        _mj_state(spec, m, d, rng)
        q, qd, T, tdv = mj_to_jaxart(spec, d.qpos, d.qvel)
        st = jaxart.eval_fk(model, q, qd, model.state())
        np.testing.assert_allclose(st.body_q[:, :3], d.xpos[1:], atol=1e-12)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        qacc_fwd = d.qacc.copy()
        qacc = rng.normal(size=m.nv)
        H, g, c, H0, qdd, tau = _quantities(model, st, jnp.asarray(T @ qacc + tdv))
        np.testing.assert_allclose(T.T @ np.asarray(H[0]) @ T, full, atol=1e-12)
        bias = T.T @ (np.asarray(g + c) + np.asarray(H0[0]) @ tdv)
        np.testing.assert_allclose(bias, d.qfrc_bias, atol=1e-11)
        np.testing.assert_allclose(qdd, T @ qacc_fwd + tdv, atol=1e-10)
        d.qacc[:] = qacc
        mujoco.mj_inverse(m, d)
        np.testing.assert_allclose(T.T @ np.asarray(tau), d.qfrc_inverse, atol=1e-10)


def _asset_paths():
    mjx_humanoid = os.path.join(os.path.dirname(mujoco.__file__), "mjx", "test_data", "humanoid", "humanoid.xml")
    return [jaxart.assets.asset_path("arm7"), jaxart.assets.asset_path("quadruped"), mjx_humanoid]


def _skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def mj_generic_map(m, d):
    """jaxart joint_q, T (joint_qd = T qvel) and Ṫ qvel for a MuJoCo model imported by add_mjcf."""
    T, tdv, q = np.eye(m.nv), np.zeros(m.nv), []
    for j in range(m.njnt):
        a, b, t, body = m.jnt_qposadr[j], m.jnt_dofadr[j], m.jnt_type[j], m.jnt_bodyid[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            R = d.xmat[body].reshape(3, 3)
            c = d.xipos[body] - d.xpos[body]
            T[b:b + 3, b + 3:b + 6] = -_skew(c) @ R
            T[b + 3:b + 6, b + 3:b + 6] = R
            w = R @ d.qvel[b + 3:b + 6]
            tdv[b:b + 3] = np.cross(w, np.cross(w, c))
            q += [*d.qpos[a:a + 3], *d.qpos[a + 4:a + 7], d.qpos[a + 3]]
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            mat = np.zeros(9)
            mujoco.mju_quat2Mat(mat, d.qpos[a:a + 4])
            T[b:b + 3, b:b + 3] = mat.reshape(3, 3)
            q += [*d.qpos[a + 1:a + 4], d.qpos[a]]
        else:
            q.append(d.qpos[a])
    return jnp.asarray(q), T, tdv


def _load_asset(path):
    try:
        b = jaxart.ModelBuilder()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b.add_mjcf(path)
        return b.finalize(dtype=F64)
    except NotImplementedError as e:  # pragma: no cover - importer not ready
        pytest.skip(f"add_mjcf cannot import {os.path.basename(path)} yet: {e}")


@pytest.mark.parametrize("path", _asset_paths(), ids=["arm7", "quadruped", "mjx_humanoid"])
def test_assets_vs_mujoco(path):
    model = _load_asset(path)
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_ACTUATION
                              | mujoco.mjtDisableBit.mjDSBL_SPRING | mujoco.mjtDisableBit.mjDSBL_DAMPER)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    d.qpos[:] = m.qpos0
    free = m.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    d.qpos[7 if free else 0:] += rng.normal(size=m.nq - (7 if free else 0)) * 0.2
    d.qvel[:] = rng.normal(size=m.nv)
    mujoco.mj_forward(m, d)
    q, T, tdv = mj_generic_map(m, d)
    st = jaxart.eval_fk(model, q, jnp.asarray(T @ d.qvel), model.state())
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    qacc = rng.normal(size=m.nv)
    H, g, c, H0, _, tau = _quantities(model, st, jnp.asarray(T @ qacc + tdv))
    np.testing.assert_allclose(T.T @ np.asarray(H[0]) @ T, full, atol=1e-10)
    np.testing.assert_allclose(T.T @ (np.asarray(g + c) + np.asarray(H0[0]) @ tdv), d.qfrc_bias, atol=1e-9)
    d.qacc[:] = qacc
    mujoco.mj_inverse(m, d)
    np.testing.assert_allclose(T.T @ np.asarray(tau), d.qfrc_inverse, atol=1e-9)


def _pendulum(m=2.0, L=0.7, izz=0.3):
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=m, com=(L, 0.0, 0.0), inertia=np.diag([0.1, izz, 0.2]))
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, -1.0, 0.0))])
    return b.finalize(dtype=F64)


@pytest.mark.parametrize("q", [-1.0, 0.0, 0.4, 2.5])
def test_pendulum_closed_forms(q):
    m, L, izz, g0 = 2.0, 0.7, 0.3, 9.81
    model = _pendulum(m, L, izz)
    st = model.state().replace(joint_q=jnp.array([q]), joint_qd=jnp.array([1.7]))
    H, g, c = eval_inverse_dynamics_passive(model, st)
    np.testing.assert_allclose(H, [[[izz + m * L * L]]], rtol=1e-12)
    # axis −Y: positive q lifts the COM, U = m g L sin q, g(q) = ∂U/∂q = m g L cos q
    np.testing.assert_allclose(g, [m * g0 * L * np.cos(q)], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c, [0.0], atol=1e-12)
    np.testing.assert_allclose(eval_forward_dynamics(model, st), [-m * g0 * L * np.cos(q) / (izz + m * L * L)])


def test_double_pendulum_coriolis_closed_form():
    ln, mass = 0.8, 1.3
    spec = chain_spec(2, length=ln, mass=mass)
    for s in spec:
        s["inertia"] = np.diag([mass * ln * ln / 12, mass * ln * ln / 12, 0.01])
    model = to_builder(spec).finalize(dtype=F64)
    q, qd = np.array([0.3, -0.9]), np.array([1.1, -0.7])
    H, g, c = eval_inverse_dynamics_passive(model, model.state().replace(joint_q=jnp.asarray(q),
                                                                         joint_qd=jnp.asarray(qd)))
    lc, inert = ln / 2, mass * ln * ln / 12
    h = mass * ln * lc * np.sin(q[1])
    H_ref = np.array([[2 * inert + mass * lc**2 + mass * (ln * ln + lc**2 + 2 * ln * lc * np.cos(q[1])),
                       inert + mass * (lc**2 + ln * lc * np.cos(q[1]))],
                      [inert + mass * (lc**2 + ln * lc * np.cos(q[1])), inert + mass * lc**2]])
    c_ref = np.array([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])
    np.testing.assert_allclose(H[0], H_ref, rtol=1e-12)
    np.testing.assert_allclose(c, c_ref, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def tree_model():
    return all_joints_builder().finalize(dtype=F64)


def test_jacobian_and_kinetic_energy_on_every_joint_type(tree_model):
    model = tree_model
    q, qd = random_coords(model, np.random.default_rng(5))
    st = jaxart.eval_fk(model, q, qd, model.state())
    J = eval_jacobian(model, st)
    nl = J.shape[1] // 6
    body = model.joint_child[model.articulation_start[0]:model.articulation_end[0]]
    twists = (J[0] @ qd).reshape(nl, 6)
    np.testing.assert_allclose(twists, st.body_qd[body], atol=1e-12)
    H = eval_mass_matrix(model, st, include_armature=False)[0]
    R = quat_to_matrix(st.body_q[:, 3:])
    inertia_w = R @ model.body_inertia @ jnp.swapaxes(R, -1, -2)
    v, w = st.body_qd[:, :3], st.body_qd[:, 3:]
    ke = 0.5 * jnp.sum(model.body_mass * jnp.sum(v * v, -1)) + 0.5 * jnp.einsum("bi,bij,bj->", w, inertia_w, w)
    np.testing.assert_allclose(0.5 * qd @ H @ qd, ke, rtol=1e-12)
    np.testing.assert_allclose(H, H.T, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(np.asarray(H)) > 0)


@pytest.mark.slow
def test_velocity_product_terms_match_jvp_of_motion_columns(tree_model):
    from jaxart.dynamics.layout import dynamics_layout
    from jaxart.dynamics.motion import block_terms, coord_rates, dof_columns

    model = tree_model
    q, qd = random_coords(model, np.random.default_rng(6))
    base = model.body_q
    lay = dynamics_layout(model)
    _, dcols = jax.jvp(lambda x: dof_columns(model, x, base)[0], (q,), (coord_rates(model, q, qd),))
    terms = block_terms(model, q, qd, base)
    np.testing.assert_allclose(terms.Sdot_qd, dcols[lay.dof_index] * terms.qd[..., None], atol=1e-12)


def test_physx_generalized_external_force_example():
    # PhysX manual: pendulum about +Z, upright along +Y, angle π/4; force +X and torque +Z at the COM
    d, angle = 0.6, np.pi / 4
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.5, com=(0.0, d, 0.0), inertia=np.eye(3) * 0.05)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, 0.0, 1.0))])
    model = b.finalize(dtype=F64)
    st = model.state().replace(joint_q=jnp.array([angle]))
    body_f = jnp.array([[1.0, 0.0, 0.0, 0.0, 0.0, 1.0]])
    tau = eval_generalized_external_force(model, st, body_f)
    np.testing.assert_allclose(tau, [np.cos(angle) * d * 1.0 - 1.0], rtol=1e-12)
    # applying the counter force together with body_f cancels its effect on the acceleration
    ctrl = model.control().replace(joint_f=tau)
    a0 = eval_forward_dynamics(model, st)
    a1 = eval_forward_dynamics(model, st.replace(body_f=body_f), ctrl)
    np.testing.assert_allclose(a1, a0, atol=1e-12)


def _free_body(rotated=True):
    b = jaxart.ModelBuilder()
    rot = np.array([0.2, -0.4, 0.3, 0.8]) / np.linalg.norm([0.2, -0.4, 0.3, 0.8])
    link = b.add_link(xform=((0.1, 0.2, 0.3), rot), mass=2.5, com=(0.2, -0.1, 0.05),
                      inertia=np.array([[0.3, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.4]]))
    xp = ((0.3, -0.2, 0.1), (0.0, 0.0, np.sin(0.4), np.cos(0.4))) if rotated else None
    xc = ((0.05, 0.0, -0.1), (np.sin(0.3), 0.0, 0.0, np.cos(0.3))) if rotated else None
    b.add_articulation([b.add_joint_free(link, parent_xform=xp, child_xform=xc)])
    return b.finalize(dtype=F64)


def test_free_body_world_wrench_conventions():
    model = _free_body()
    rng = np.random.default_rng(2)
    q, qd = random_coords(model, rng)
    st = jaxart.eval_fk(model, q, qd, model.state())
    wrench = jnp.asarray(rng.normal(size=6))
    a_joint = eval_forward_dynamics(model, st, model.control().replace(joint_f=wrench))
    a_body = eval_forward_dynamics(model, st.replace(body_f=wrench[None]))
    np.testing.assert_allclose(a_joint, a_body, atol=1e-12)
    # Newton–Euler at the COM in world axes: m a = f + m g, I ω̇ + ω × I ω = τ
    R_pa = np.asarray(quat_to_matrix(model.joint_X_p[0, 3:]))
    R = np.asarray(quat_to_matrix(st.body_q[0, 3:]))
    inertia_w = R @ np.asarray(model.body_inertia[0]) @ R.T
    w = np.asarray(st.body_qd[0, 3:])
    acc = R_pa @ np.asarray(a_joint[:3])
    alpha = R_pa @ np.asarray(a_joint[3:])
    np.testing.assert_allclose(acc, wrench[:3] / 2.5 + np.asarray(model.gravity), atol=1e-12)
    np.testing.assert_allclose(inertia_w @ alpha + np.cross(w, inertia_w @ w), wrench[3:], atol=1e-12)
    # inverse dynamics returns the same world wrench for that acceleration
    np.testing.assert_allclose(eval_inverse_dynamics_force(model, st, a_joint), wrench, atol=1e-11)


def test_mask_and_two_articulations():
    b = jaxart.ModelBuilder()
    b.add_builder(to_builder(chain_spec(2)), label_prefix="a")
    b.add_builder(to_builder(chain_spec(3)), label_prefix="b")
    model = b.finalize(dtype=F64)
    st = model.state().replace(joint_q=jnp.linspace(-0.5, 0.5, 5))
    H = eval_mass_matrix(model, st)
    assert H.shape == (2, 3, 3)
    np.testing.assert_allclose(H[0, 2], 0.0)
    Hm = eval_mass_matrix(model, st, mask=jnp.array([False, True]))
    np.testing.assert_allclose(Hm[0], 0.0)
    np.testing.assert_allclose(Hm[1], H[1])
    _, g, _ = eval_inverse_dynamics_passive(model, st, mask=jnp.array([True, False]))
    assert np.all(np.asarray(g[2:]) == 0.0) and np.any(np.asarray(g[:2]) != 0.0)
    assert eval_jacobian(model, st).shape == (2, 18, 3)


def _fd_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        cols.append((np.asarray(f(jnp.asarray(x + e))) - np.asarray(f(jnp.asarray(x - e)))) / (2 * eps))
    return np.stack(cols, axis=-1)


@pytest.mark.slow
def test_grads_of_mass_matrix_and_rnea():
    spec = mixed_tree_spec(np.random.default_rng(4), floating=True)
    model = to_builder(spec).finalize(dtype=F64)
    q, qd = random_coords(model, np.random.default_rng(8))
    st = model.state()
    a = qd[::-1]

    @jax.jit
    def h_of(qq):
        return eval_mass_matrix(model, st.replace(joint_q=qq))[0]

    @jax.jit
    def tau_of(x):  # x = (qd, mass of body 3)
        mdl = model.replace(body_mass=model.body_mass.at[3].set(x[-1]))
        return eval_inverse_dynamics_force(mdl, st.replace(joint_q=q, joint_qd=x[:-1]), a)

    check_grads(h_of, (q,), order=1, modes=("rev",), atol=1e-5, rtol=1e-5)
    x = jnp.concatenate([qd, jnp.array([1.7])])
    np.testing.assert_allclose(jax.jit(jax.jacrev(tau_of))(x), _fd_jacobian(tau_of, x), atol=1e-6, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(tau_of))(x), _fd_jacobian(tau_of, x), atol=1e-6, rtol=1e-6)


@pytest.mark.slow
def test_vmap_over_states_and_masses_matches_loop(tree_model):
    model = tree_model
    rng = np.random.default_rng(9)
    qs, qds = zip(*[random_coords(model, rng) for _ in range(3)], strict=True)
    qs, qds = jnp.stack(qs), jnp.stack(qds)
    masses = jnp.stack([model.body_mass * s for s in (0.5, 1.0, 2.0)])
    st = model.state()

    def fd(mass, qq, vv):
        return eval_forward_dynamics(model.replace(body_mass=mass), st.replace(joint_q=qq, joint_qd=vv))

    batched = jax.jit(jax.vmap(fd))(masses, qs, qds)
    for i in range(3):
        np.testing.assert_allclose(batched[i], fd(masses[i], qs[i], qds[i]), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n", [1, 6, pytest.param(40, marks=pytest.mark.slow)])
def test_dense_cholesky_solve_and_implicit_gradient(n):
    from jaxart.math.cholesky import UNROLL_MAX, cholesky, spd_solve

    assert 40 > UNROLL_MAX >= 6  # n = 40 exercises the fori_loop path, the others the unrolled one
    rng = np.random.default_rng(n)
    a = rng.normal(size=(2, n, n))
    a = jnp.asarray(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))
    b = jnp.asarray(rng.normal(size=(2, n)))
    np.testing.assert_allclose(cholesky(a), np.linalg.cholesky(np.asarray(a)), atol=1e-12)
    np.testing.assert_allclose(spd_solve(a, b), np.linalg.solve(np.asarray(a), np.asarray(b)[..., None])[..., 0],
                               atol=1e-12)

    def f(x):
        sym = 0.5 * (x + jnp.swapaxes(x, -1, -2))
        return jnp.sum(spd_solve(sym, b) ** 2)

    check_grads(f, (a,), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
