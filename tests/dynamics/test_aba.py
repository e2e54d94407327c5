"""Articulated-body algorithm (``jaxart.dynamics.aba``) against the dense CRBA + Cholesky solve.

The oracle is ``(H + diag(e)) q̈ = τ − C q̇ − g + Jᵀ f_ext`` assembled from ``eval_mass_matrix`` and
``eval_forward_dynamics`` (themselves checked against MuJoCo C in ``test_dynamics.py``), in float64.
"""


import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dyn_models import mixed_tree_spec, to_builder
from helpers import MJX_HUMANOID, all_joints_builder, mjcf_model, random_coords

import jaxart
from jaxart.dynamics import eval_forward_dynamics, eval_mass_matrix
from jaxart.dynamics.aba import aba_accelerations
from jaxart.dynamics.engine import aba_schedule as aba_schedule_module
from jaxart.dynamics.engine.aba_schedule import aba_schedule

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64


def _random_state(model, seed):
    rng = np.random.default_rng(seed)
    q, qd = random_coords(model, rng, scale=0.5)
    st = model.state().replace(joint_q=q, joint_qd=qd,
                               body_f=jnp.asarray(rng.normal(size=(model.body_count, 6))))
    st = jaxart.eval_fk(model, st.joint_q, st.joint_qd, st)
    joint_f = jnp.asarray(rng.normal(size=model.joint_dof_count))
    return st, joint_f, rng


def _aba(model, st, joint_f, tau_extra=None, d_extra=None):
    """The lane kernel: a batch of two copies under ``vmap`` (unbatched calls and batches of one use the
    dense solve)."""
    nd = model.joint_dof_count
    tau_extra = jnp.zeros(nd, F64) if tau_extra is None else tau_extra
    d_extra = model.joint_armature if d_extra is None else d_extra
    q2 = jnp.stack([st.joint_q] * 2)
    return _ABA_ONE(model, q2, st.joint_qd, st.body_q, joint_f, tau_extra, d_extra, st.body_f)[0]


_ABA_ONE = jax.jit(jax.vmap(aba_accelerations, in_axes=(None, 0, None, None, None, None, None, None)))


MODELS = {
    "all_joints": lambda: all_joints_builder().finalize(dtype=F64),
    "mixed_tree": lambda: to_builder(mixed_tree_spec(np.random.default_rng(3)), armature=0.02).finalize(dtype=F64),
    "humanoid_mjx": lambda: mjcf_model(MJX_HUMANOID),
    "quadruped": lambda: mjcf_model(jaxart.assets.asset_path("quadruped")),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_dense_forward_dynamics(name, monkeypatch):
    if name == "humanoid_mjx":  # also split the levels into runs of their own width
        monkeypatch.setattr(aba_schedule_module, "MAX_RUNS", 3)
        aba_schedule_module._schedule.cache_clear()
    model = MODELS[name]()
    assert (len(aba_schedule(model).runs) > 1) == (name == "humanoid_mjx")
    st, joint_f, _ = _random_state(model, 0)
    ref = eval_forward_dynamics(model, st, model.control().replace(joint_f=joint_f))
    got = _aba(model, st, joint_f)
    aba_schedule_module._schedule.cache_clear()
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9 * float(jnp.max(jnp.abs(ref))))
    # unbatched calls take the dense path (same values)
    nd = model.joint_dof_count
    plain = jax.jit(aba_accelerations)(model, st.joint_q, st.joint_qd, st.body_q, joint_f, jnp.zeros(nd, F64),
                                       model.joint_armature, st.body_f)
    np.testing.assert_allclose(plain, got, rtol=1e-9, atol=1e-9 * float(jnp.max(jnp.abs(ref))))
    if name == "mixed_tree":  # eval_forward_dynamics under vmap runs the lane kernel
        st2, jf2, _ = _random_state(model, 7)
        ctrl = model.control()
        batch = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), st, st2)
        ctrls = jax.tree_util.tree_map(lambda a: jnp.stack([a, a]), ctrl).replace(joint_f=jnp.stack([joint_f, jf2]))
        out = jax.jit(jax.vmap(eval_forward_dynamics, in_axes=(None, 0, 0)))(model, batch, ctrls)
        np.testing.assert_allclose(out[1], eval_forward_dynamics(model, st2, ctrl.replace(joint_f=jf2)), rtol=1e-9,
                                   atol=1e-9)


def test_extra_diagonal_and_generalized_forces():
    """``e`` adds to H's diagonal and ``tau_extra`` to the right-hand side (linearity check)."""
    model = all_joints_builder().finalize(dtype=F64)
    st, joint_f, rng = _random_state(model, 1)
    nd = model.joint_dof_count
    extra = jnp.asarray(rng.uniform(0.0, 2.0, size=nd))
    tau = jnp.asarray(rng.normal(size=nd))
    base = _aba(model, st, joint_f, d_extra=extra)
    ref_base = eval_forward_dynamics(model.replace(joint_armature=extra), st, model.control().replace(joint_f=joint_f))
    np.testing.assert_allclose(base, ref_base, rtol=1e-9, atol=1e-9)
    h = np.asarray(eval_mass_matrix(model, st, include_armature=False))[0] + np.diag(np.asarray(extra))
    delta = _aba(model, st, joint_f, tau_extra=tau, d_extra=extra) - base
    np.testing.assert_allclose(delta, np.linalg.solve(h, np.asarray(tau)), rtol=1e-9, atol=1e-10)


def test_kinematic_static_and_several_articulations():
    """Kinematic DOFs get q̈ = 0 and pass their load on; articulations on a static body; two trees."""
    b = jaxart.ModelBuilder()
    kin = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1, is_kinematic=True)
    c = b.add_link(mass=1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.1)
    j0 = b.add_joint_revolute(-1, kin, axis=(0.0, 0.0, 1.0))
    j1 = b.add_joint_revolute(kin, c, axis=(0.0, 1.0, 0.0), parent_xform=((0.2, 0, 0), (0, 0, 0, 1)))
    b.add_articulation([j0, j1])
    static = b.add_link(mass=2.0, inertia=np.eye(3), xform=((1.0, 0.0, 0.0), (0, 0, 0, 1)))
    d = b.add_link(mass=1.5, com=(0, 0.1, -0.2), inertia=np.diag([0.1, 0.2, 0.3]))
    e = b.add_link(mass=0.5, inertia=np.eye(3) * 0.05)
    j2 = b.add_joint_ball(static, d, parent_xform=((0, 0, -0.3), (0, 0, 0, 1)))
    j3 = b.add_joint_fixed(d, e, parent_xform=((0.1, 0.0, -0.4), (0, 0, 0, 1)))
    b.add_articulation([j2, j3])
    model = b.finalize(dtype=F64)
    st, joint_f, _ = _random_state(model, 2)
    got = _aba(model, st, joint_f)
    ref = eval_forward_dynamics(model, st, model.control().replace(joint_f=joint_f))
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)
    assert float(got[0]) == 0.0 and abs(float(got[1])) > 1e-3


def test_schedule_is_a_valid_dof_tree():
    model = all_joints_builder().finalize(dtype=F64)
    sch = aba_schedule(model)
    nd = model.joint_dof_count
    placed = np.concatenate([run.level_dof.ravel() for run in sch.runs] + [sch.blocks.dof.ravel()])
    placed = placed[placed < nd]
    assert sorted(placed.tolist()) == list(range(nd))  # every DOF once (one articulation, all in the tree)
    # the multi-DOF root joint is a block, not a chain of levels
    root = int(np.flatnonzero(model.joint_parent < 0)[0])
    qs = model.topology.joint_qd_start.array
    assert sch.blocks.dof[0, :qs[root + 1] - qs[root]].tolist() == list(range(qs[root], qs[root + 1]))
    assert len(set(sch.dof_pos.tolist())) == nd
    # every body with a DOF-carrying ancestor joint is attached to exactly one DOF
    attached = sch.attach[sch.attach < model.body_count]
    assert len(attached) == len(set(attached.tolist())) == model.body_count


@pytest.mark.slow
def test_vmap_states_and_models_match_loop():
    model = MODELS["mixed_tree"]()
    states = [_random_state(model, s) for s in range(3)]
    q = jnp.stack([s.joint_q for s, _, _ in states])
    qd = jnp.stack([s.joint_qd for s, _, _ in states])
    jf = jnp.stack([f for _, f, _ in states])
    st0 = states[0][0]
    fn = jax.jit(jax.vmap(aba_accelerations, in_axes=(None, 0, 0, None, 0, None, None, None)))
    got = fn(model, q, qd, st0.body_q, jf, jnp.zeros(model.joint_dof_count), model.joint_armature, st0.body_f)
    for k, (s, f, _) in enumerate(states):
        ref = _aba(model, s.replace(body_f=st0.body_f), f)
        np.testing.assert_allclose(got[k], ref, rtol=1e-12, atol=1e-12)
    masses = jnp.stack([model.body_mass * (1.0 + 0.3 * k) for k in range(3)])
    models = jax.vmap(lambda m: model.replace(body_mass=m))(masses)
    fm = jax.jit(jax.vmap(aba_accelerations, in_axes=(0, None, None, None, None, None, None, None)))
    got = fm(models, st0.joint_q, st0.joint_qd, st0.body_q, jf[0], jnp.zeros(model.joint_dof_count),
             model.joint_armature, st0.body_f)
    for k in range(3):
        ref = _aba(model.replace(body_mass=masses[k]), st0, jf[0])
        np.testing.assert_allclose(got[k], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_dense_implicit_derivatives_match_finite_differences():
    """Derivatives of the forward dynamics (``aba_accelerations`` differentiates this dense solve; its
    values equal the lane kernel's, see above): the implicit rule (RNEA linearisation + factor reuse) in
    forward and reverse mode, for every input: coordinates, velocities, forces, the diagonal, body
    wrenches, masses and the DISTANCE-limit dyad; with a FREE root with COM offsets, an oblique revolute,
    a ball, a kinematic root (fixed rows) and a DISTANCE joint (rank-one coupling)."""
    from jaxart.dynamics.aba import dense_from_base
    from jaxart.kinematics.fk import base_bodies

    b = jaxart.ModelBuilder()
    links = [b.add_link(mass=1.0 + k, com=(0.1, -0.05 * k, 0.02), inertia=np.diag([0.1, 0.2, 0.3]) * (k + 1))
             for k in range(3)]
    b.add_articulation([b.add_joint_free(links[0]),
                        b.add_joint_revolute(links[0], links[1], axis=(0.0, 0.6, 0.8),
                                             parent_xform=((0.3, 0, 0), (0, 0, 0, 1))),
                        b.add_joint_ball(links[1], links[2], parent_xform=((0, 0, -0.4), (0, 0, 0, 1)))])
    kin = b.add_link(mass=2.0, inertia=np.eye(3) * 0.1, is_kinematic=True)
    arm = b.add_link(mass=0.5, com=(0.0, 0.1, 0.0), inertia=np.eye(3) * 0.02)
    b.add_articulation([b.add_joint_free(kin),
                        b.add_joint_revolute(kin, arm, axis=(1.0, 0.0, 0.0), parent_xform=((0, 0.2, 0), (0, 0, 0, 1)))])
    rope = b.add_link(mass=0.7, com=(0.05, 0.0, 0.0), inertia=np.eye(3) * 0.01, xform=((0, 0, -0.3), (0, 0, 0, 1)))
    b.add_articulation([b.add_joint_distance(-1, rope, min_distance=0.1, max_distance=0.5)])
    model = b.finalize(dtype=F64)
    st, joint_f, rng = _random_state(model, 7)
    nd, n = model.joint_dof_count, model.body_count
    base_q = st.body_q[base_bodies(model.schedule)]
    sizes = [model.joint_coord_count, nd, nd, nd, nd, 6 * n, n, nd]

    def f(x):
        q, qd, jf, tau, diag, bf, mass, dyad = jnp.split(x, np.cumsum(sizes)[:-1])
        return dense_from_base(model.replace(body_mass=mass), q, qd, base_q, jf, tau, diag, bf.reshape(n, 6),
                               dyad=dyad)

    x0 = jnp.concatenate([st.joint_q, st.joint_qd, joint_f, jnp.asarray(rng.normal(size=nd)),
                          jnp.asarray(rng.uniform(0.05, 0.2, size=nd)), st.body_f.ravel(), model.body_mass,
                          jnp.asarray(rng.normal(size=nd))])
    h = 1e-6
    steps = h * jnp.eye(x0.size)
    fd = ((jax.jit(jax.vmap(f))(x0 + steps) - jax.jit(jax.vmap(f))(x0 - steps)) / (2 * h)).T
    np.testing.assert_allclose(jax.jit(jax.jacrev(f))(x0), fd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(f))(x0), fd, rtol=1e-5, atol=1e-5)
    kin_dofs = np.arange(int(model.joint_qd_start[3]), int(model.joint_qd_start[4]))
    np.testing.assert_array_equal(np.asarray(fd)[kin_dofs], 0.0)  # the kinematic root's DOFs stay fixed
    assert (np.abs(np.delete(np.asarray(fd), kin_dofs, axis=0)).max(axis=1) > 1e-2).all()  # the others respond


def test_nan_world_does_not_poison_batch():
    model = MODELS["mixed_tree"]()
    st, joint_f, _ = _random_state(model, 5)
    qd = jnp.stack([st.joint_qd, st.joint_qd.at[2].set(jnp.nan), st.joint_qd])
    fn = jax.jit(jax.vmap(aba_accelerations, in_axes=(None, None, 0, None, None, None, None, None)))
    out = np.asarray(fn(model, st.joint_q, qd, st.body_q, joint_f, jnp.zeros(model.joint_dof_count),
                        model.joint_armature, st.body_f))
    assert np.all(np.isfinite(out[0])) and np.all(np.isfinite(out[2]))
    np.testing.assert_array_equal(out[0], out[2])
    assert not np.all(np.isfinite(out[1]))
