"""eval_ik under vmap (batch-minor lane kernel) against per-world calls, round trips, gradients, NaN isolation."""

import os

import jax
import jax.numpy as jnp
import mujoco.mjx
import numpy as np
import pytest
from helpers import all_joints_builder, quat_close, random_coords
from jax.test_util import check_grads

import jaxart

jax.config.update("jax_enable_x64", True)

F64 = jnp.float64
HUMANOID = os.path.join(os.path.dirname(mujoco.mjx.__file__), "test_data", "humanoid", "humanoid.xml")


@pytest.fixture(scope="module")
def mixed_model():
    """Every joint type (one articulation), a kinematic revolute link, a free body and a loop-closing joint."""
    b = all_joints_builder()
    link = b.add_link(mass=1.0, inertia=np.eye(3), com=(0.1, 0.0, 0.0), is_kinematic=True)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0), parent_xform=((1, 0, 0), (0, 0, 0, 1)))])
    b.add_body(xform=((0.0, 1.0, 2.0), (0.0, 0.0, 0.0, 1.0)), mass=2.0, inertia=np.eye(3))
    b.add_joint_ball(2, 8)  # loop-closing (in no articulation): IK copies its coordinates
    return b.finalize(dtype=F64)


def _states(model, rng, n, *, scale=1.0, noise=0.0):
    """FK states of random coordinates (plus pose/twist noise, so IK sees inconsistent poses too)."""
    qs, qds = zip(*[random_coords(model, rng, scale) for _ in range(n)], strict=True)
    st = jax.jit(jax.vmap(lambda q, qd: jaxart.eval_fk(model, q, qd, model.state())))(jnp.stack(qs), jnp.stack(qds))
    if noise:
        bq = st.body_q + noise * rng.normal(size=st.body_q.shape)
        bq = bq.at[..., 3:].set(bq[..., 3:] / jnp.linalg.norm(bq[..., 3:], axis=-1, keepdims=True))
        st = st.replace(body_q=bq, body_qd=st.body_qd + noise * rng.normal(size=st.body_qd.shape))
    return st, jnp.stack(qs), jnp.stack(qds)


def _world(tree, i):
    return jax.tree_util.tree_map(lambda x: x[i], tree)


def _assert_vmap_matches_per_world(fn, args, atol=1e-12):
    batched = jax.jit(jax.vmap(fn))(*args)
    single = jax.jit(fn)
    n = jax.tree_util.tree_leaves(args)[0].shape[0]
    for i in range(n):
        ref = single(*_world(args, i))
        for a, r in zip(batched, ref, strict=True):
            np.testing.assert_allclose(a[i], r, atol=atol, rtol=0)
    return batched


def test_humanoid_vmap_matches_per_world():
    b = jaxart.ModelBuilder()
    b.add_mjcf(HUMANOID)  # imports without a report (its explicit pairs keep their own parameters)
    m = b.finalize(dtype=F64)
    rng = np.random.default_rng(0)
    st, _, _ = _states(m, rng, 4, noise=0.05)
    q_in = rng.normal(size=(4, m.joint_coord_count))
    qd_in = rng.normal(size=(4, m.joint_dof_count))
    _assert_vmap_matches_per_world(lambda s, q, qd: jaxart.eval_ik(m, s, q, qd), (st, q_in, qd_in))


@pytest.mark.slow
def test_every_joint_type_masks_and_flag_filter(mixed_model):
    m = mixed_model
    rng = np.random.default_rng(1)
    st, _, _ = _states(m, rng, 3, noise=0.02)
    q_in = rng.normal(size=(3, m.joint_coord_count))
    qd_in = rng.normal(size=(3, m.joint_dof_count))
    masks = jnp.array([[True, False, True], [False, True, True], [True, True, False]])
    idx = jnp.array([[0], [2], [1]])
    _assert_vmap_matches_per_world(lambda s, q, qd, ix: jaxart.eval_ik(m, s, q, qd, indices=ix), (st, q_in, qd_in, idx))
    for flt in (jaxart.BodyFlags.ALL, jaxart.BodyFlags.KINEMATIC):
        out = _assert_vmap_matches_per_world(
            lambda s, q, qd, mk, flt=flt: jaxart.eval_ik(m, s, q, qd, mask=mk, body_flag_filter=flt),
            (st, q_in, qd_in, masks))
    # last filter (KINEMATIC): only the kinematic revolute link's coordinate may change, where selected
    qs = m.joint_q_start
    kin_joint = 9
    changed = np.asarray(out[0] != q_in)
    assert not changed[:, : qs[kin_joint]].any() and not changed[:, qs[kin_joint + 1]:].any()
    np.testing.assert_array_equal(changed[:, qs[kin_joint]], np.asarray(masks[:, 1]))
    # the loop-closing BALL joint (last joint) keeps its input coordinates under the default filter
    q_all, _ = jax.vmap(lambda s, q, qd: jaxart.eval_ik(m, s, q, qd))(st, q_in, qd_in)
    np.testing.assert_array_equal(q_all[:, qs[-2]:], q_in[:, qs[-2]:])


def test_round_trip_under_vmap(mixed_model):
    m = mixed_model
    rng = np.random.default_rng(2)
    st, qs, qds = _states(m, rng, 5)
    q2, qd2 = jax.jit(jax.vmap(lambda s: jaxart.eval_ik(m, s)))(st)
    np.testing.assert_allclose(qd2, qds, atol=1e-9)
    types, starts = m.joint_type, m.joint_q_start
    for j, t in enumerate(types):
        a, e = starts[j], starts[j + 1]
        if t in (jaxart.JointType.BALL, jaxart.JointType.FREE, jaxart.JointType.DISTANCE):
            np.testing.assert_allclose(q2[:, a:e - 4], qs[:, a:e - 4], atol=1e-9)
            assert all(quat_close(q2[i, e - 4:e], qs[i, e - 4:e], atol=1e-9) for i in range(len(qs)))
        elif j < len(types) - 1:  # the loop-closing joint is not written (input = state.joint_q)
            np.testing.assert_allclose(q2[:, a:e], qs[:, a:e], atol=1e-9)


@pytest.mark.slow
def test_gradients_under_vmap_match_finite_differences():
    b = jaxart.ModelBuilder()
    links = [b.add_link(mass=1.0, inertia=np.eye(3), com=(0.1, 0.0, 0.05)) for _ in range(4)]
    J = jaxart.JointDofConfig
    js = [b.add_joint_revolute(-1, links[0], axis=(0.0, 0.6, 0.8), parent_xform=((0, 0, 1), (0, 0, 0, 1))),
          b.add_joint_ball(links[0], links[1], parent_xform=((0.3, 0, 0), (0, 0, 0, 1))),
          b.add_joint_d6(links[1], links[2], linear_axes=[J(axis=(1, 0, 0))],
                         angular_axes=[J(axis=(1, 0, 0)), J(axis=(0, 0, 1))]),
          b.add_joint_free(links[3], parent=links[2])]
    b.add_articulation(js)
    m = b.finalize(dtype=F64)
    rng = np.random.default_rng(3)
    st, _, _ = _states(m, rng, 2, scale=0.5)

    def loss(body_q, body_qd):
        q2, qd2 = jaxart.eval_ik(m, m.state().replace(body_q=body_q, body_qd=body_qd))
        return jnp.sum(jnp.cos(q2)) + jnp.sum(qd2**2)

    def batched(body_q, body_qd):
        return jnp.sum(jax.vmap(loss)(body_q, body_qd))

    check_grads(jax.jit(batched), (st.body_q, st.body_qd), order=1, modes=["rev"], atol=1e-4, rtol=1e-4)
    grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
    grad_batched = jax.jit(jax.grad(batched, argnums=(0, 1)))
    per_example = grad_batched(st.body_q, st.body_qd)  # worlds are independent: world i's own gradient
    for i in range(2):
        ref = grad(st.body_q[i], st.body_qd[i])
        for a, r in zip(per_example, ref, strict=True):
            np.testing.assert_allclose(a[i], r, atol=1e-10)
    # identity rotations, zero velocities: finite gradients through the batched path
    g = grad_batched(jnp.tile(m.state().body_q, (2, 1, 1)), jnp.zeros_like(st.body_qd))
    assert all(np.all(np.isfinite(x)) for x in g)


def test_nan_in_one_world_stays_in_that_world(mixed_model):
    m = mixed_model
    rng = np.random.default_rng(4)
    st, _, _ = _states(m, rng, 4)
    ik = jax.jit(jax.vmap(lambda s: jaxart.eval_ik(m, s)))
    clean = ik(st)
    dirty = ik(st.replace(body_q=st.body_q.at[1, 3].set(jnp.nan)))
    assert np.isnan(np.asarray(dirty[0][1])).any()
    for a, r in zip(dirty, clean, strict=True):
        np.testing.assert_array_equal(np.delete(np.asarray(a), 1, 0), np.delete(np.asarray(r), 1, 0))
