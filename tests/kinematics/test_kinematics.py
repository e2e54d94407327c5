"""Forward/inverse kinematics: Newton conventions, round trips, derivatives, masks, jit/vmap/grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import all_joints_builder, quat_close, quat_from_axis_angle_np, random_coords

import jaxart
from jaxart.math import quat_mul, quat_rotate, transform_mul

F64 = jnp.float64


@pytest.fixture(scope="module")
def tree_model():
    return all_joints_builder().finalize(dtype=F64)


def _single(joint_adder, *, com=(0.0, 0.0, 0.0)):
    b = jaxart.ModelBuilder()
    link = b.add_link(com=com, mass=1.0, inertia=np.eye(3))
    j = joint_adder(b, link)
    b.add_articulation([j])
    return b.finalize(dtype=F64)


def test_newton_revolute_example():
    b = jaxart.ModelBuilder()
    body = b.add_link()
    b.add_shape_box(body)
    joint = b.add_joint_revolute(parent=-1, child=body, axis=(0.0, 0.0, 1.0))
    b.add_articulation([joint])
    b.joint_q[-1] = 0.5
    b.joint_qd[-1] = 10.0
    model = b.finalize(dtype=F64)
    state = model.state()
    assert np.all(np.asarray(state.joint_q) == [0.5]) and np.all(np.asarray(state.joint_qd) == [10.0])
    np.testing.assert_allclose(state.body_q[0], [0, 0, 0, 0, 0, 0, 1])  # not updated before FK
    state = jaxart.eval_fk(model, state.joint_q, state.joint_qd, state)
    np.testing.assert_allclose(state.body_q[0], [0, 0, 0, 0, 0, np.sin(0.25), np.cos(0.25)], atol=1e-12)
    np.testing.assert_allclose(state.body_qd[0], [0, 0, 0, 0, 0, 10.0], atol=1e-12)


def test_add_body_free_joint_initialised_from_pose():
    b = jaxart.ModelBuilder()
    tf = (1.0, 2.0, 3.0, *quat_from_axis_angle_np([0, 0, 1], 0.5 * np.pi))
    body = b.add_body(xform=tf)
    b.add_shape_box(body)
    model = b.finalize(dtype=F64)
    state = model.state()
    np.testing.assert_allclose(state.body_q[0], tf, atol=1e-12)
    assert state.joint_q.shape == (7,)
    np.testing.assert_allclose(state.joint_q, tf, atol=1e-12)
    fk = jaxart.eval_fk(model, state.joint_q, state.joint_qd, state)
    np.testing.assert_allclose(fk.body_q[0], tf, atol=1e-12)


def test_joint_frame_composition_hand_computed():
    # x_wc = X_p * X_j(q) * X_c^-1 for a revolute about Z by 90 degrees
    b = jaxart.ModelBuilder()
    link = b.add_link(com=(0.5, 0, 0), mass=2.0, inertia=np.eye(3))
    j = b.add_joint_revolute(-1, link, axis=(0, 0, 1), parent_xform=((1.0, 0, 0), (0, 0, 0, 1)),
                             child_xform=((-0.5, 0, 0), (0, 0, 0, 1)))
    b.add_articulation([j])
    m = b.finalize(dtype=F64)
    s = jaxart.eval_fk(m, jnp.array([np.pi / 2]), jnp.array([2.0]))
    # child origin: anchor (1,0,0) + R_z(90) * (0.5, 0, 0) = (1, 0.5, 0)
    np.testing.assert_allclose(s.body_q[0, :3], [1.0, 0.5, 0.0], atol=1e-12)
    # COM at origin + R*(0.5,0,0) = (1, 1, 0); v_com = w x (com - anchor) = 2 z x (0, 1, 0) = (-2, 0, 0)
    np.testing.assert_allclose(s.body_qd[0], [-2.0, 0, 0, 0, 0, 2.0], atol=1e-12)


def test_default_revolute_axis_is_x_and_gravity_default():
    b = jaxart.ModelBuilder()
    link = b.add_link()
    j = b.add_joint_revolute(-1, link)
    b.add_articulation([j])
    m = b.finalize()
    np.testing.assert_allclose(m.joint_axis[0], [1, 0, 0])
    np.testing.assert_allclose(m.gravity, [0, 0, -9.81], rtol=1e-6)
    assert m.up_axis == 2
    b2 = jaxart.ModelBuilder(up_axis="y")
    np.testing.assert_allclose(b2.finalize().gravity, [0, -9.81, 0], rtol=1e-6)


def test_d6_intrinsic_rotation_and_translation_order():
    J = jaxart.JointDofConfig
    m = _single(lambda b, c: b.add_joint_d6(-1, c, linear_axes=[J(axis=(1, 0, 0))],
                                            angular_axes=[J(axis=(0, 0, 1)), J(axis=(0, 1, 0))]))
    q = jnp.array([0.7, 0.3, -0.4])
    s = jaxart.eval_fk(m, q, jnp.zeros(3))
    expect_q = np.asarray(quat_mul(jnp.asarray(quat_from_axis_angle_np([0, 0, 1], 0.3)),
                                   jnp.asarray(quat_from_axis_angle_np([0, 1, 0], -0.4))))
    assert quat_close(s.body_q[0, 3:], expect_q, atol=1e-12)
    np.testing.assert_allclose(s.body_q[0, :3], [0.7, 0, 0], atol=1e-12)  # translation before rotation


def test_free_joint_qd_parent_anchor_frame_child_com():
    rot = quat_from_axis_angle_np([0, 0, 1], np.pi / 2)
    b = jaxart.ModelBuilder()
    parent = b.add_link(mass=1.0, inertia=np.eye(3))
    child = b.add_link(mass=1.0, inertia=np.eye(3), com=(0.3, 0.0, 0.0))
    j0 = b.add_joint_fixed(-1, parent)
    j1 = b.add_joint_free(child, parent=parent, parent_xform=((0, 0, 0), rot))
    b.add_articulation([j0, j1])
    m = b.finalize(dtype=F64)
    q = jnp.array([0, 0, 0, 0, 0, 0, 1.0])
    qd = jnp.array([1.0, 0, 0, 0, 0, 0])  # COM velocity along the parent-anchor x axis
    s = jaxart.eval_fk(m, q, qd)
    np.testing.assert_allclose(s.body_qd[1], [0, 1.0, 0, 0, 0, 0], atol=1e-12)  # anchor x = world y
    qd = jnp.array([0, 0, 0, 0, 0, 2.0])  # spin about anchor z: COM (not origin) is the reference
    s = jaxart.eval_fk(m, q, qd)
    np.testing.assert_allclose(s.body_qd[1], [0, 0, 0, 0, 0, 2.0], atol=1e-12)


def test_world_rooted_free_joint_qd_equals_body_qd():
    m = _single(lambda b, c: b.add_joint_free(c), com=(0.2, -0.1, 0.3))
    rng = np.random.default_rng(0)
    q, qd = random_coords(m, rng)
    s = jaxart.eval_fk(m, q, qd)
    np.testing.assert_allclose(s.body_qd[0], qd, atol=1e-12)
    np.testing.assert_allclose(s.body_q[0], q, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fk_ik_fk_round_trip_all_joint_types(tree_model, seed):
    rng = np.random.default_rng(seed)
    q, qd = random_coords(tree_model, rng)
    s = jaxart.eval_fk(tree_model, q, qd)
    q2, qd2 = jaxart.eval_ik(tree_model, s)
    s2 = jaxart.eval_fk(tree_model, q2, qd2)
    np.testing.assert_allclose(s2.body_q[:, :3], s.body_q[:, :3], atol=1e-10)
    for a, c in zip(np.asarray(s2.body_q[:, 3:]), np.asarray(s.body_q[:, 3:]), strict=True):
        assert quat_close(a, c, atol=1e-10)
    np.testing.assert_allclose(s2.body_qd, s.body_qd, atol=1e-9)
    # scalar coordinates and velocities come back exactly (angles within the principal ranges used)
    np.testing.assert_allclose(qd2, qd, atol=1e-9)


def test_revolute_angles_beyond_pi_survive_round_trip():
    m = _single(lambda b, c: b.add_joint_revolute(-1, c, axis=(0.0, 0.6, 0.8)))
    for angle in [3.5, -3.5, 6.0, -6.2, 2 * np.pi]:
        s = jaxart.eval_fk(m, jnp.array([angle]), jnp.array([0.3]))
        q, qd = jaxart.eval_ik(m, s)
        np.testing.assert_allclose(q, [angle], atol=1e-10)
        np.testing.assert_allclose(qd, [0.3], atol=1e-12)


def test_ball_ik_returns_relative_quaternion_without_hemisphere_flip():
    m = _single(lambda b, c: b.add_joint_ball(-1, c))
    qb = np.array([0.1, -0.2, 0.3, -0.9])
    qb /= np.linalg.norm(qb)
    s = jaxart.eval_fk(m, jnp.asarray(qb), jnp.array([0.1, 0.2, 0.3]))
    q, qd = jaxart.eval_ik(m, s)
    np.testing.assert_allclose(q, qb, atol=1e-12)  # w < 0 preserved
    np.testing.assert_allclose(qd, [0.1, 0.2, 0.3], atol=1e-12)


def test_d6_three_axis_left_handed_inverse():
    J = jaxart.JointDofConfig
    m = _single(lambda b, c: b.add_joint_d6(-1, c, angular_axes=[J(axis=(1, 0, 0)), J(axis=(0, 0, 1)),
                                                                J(axis=(0, 1, 0))]))
    q = jnp.array([0.4, -0.8, 1.3])
    s = jaxart.eval_fk(m, q, jnp.array([0.5, -0.2, 0.9]))
    q2, qd2 = jaxart.eval_ik(m, s)
    np.testing.assert_allclose(q2, q, atol=1e-10)
    np.testing.assert_allclose(qd2, [0.5, -0.2, 0.9], atol=1e-10)


def test_body_qd_is_time_derivative_of_body_q(tree_model):
    rng = np.random.default_rng(5)
    q, qd = random_coords(tree_model, rng)
    h = 1e-6
    s = jaxart.eval_fk(tree_model, q, qd)
    # integrate coordinates along qd (quaternion joints: omega in the parent-anchor frame, left-multiplied)
    q_np = np.array(q)
    types, qs, ds = tree_model.joint_type, tree_model.joint_q_start, tree_model.joint_qd_start
    for j, t in enumerate(types):
        a, d = qs[j], ds[j]
        if t in (jaxart.JointType.FREE, jaxart.JointType.DISTANCE, jaxart.JointType.BALL):
            off = 3 if t != jaxart.JointType.BALL else 0
            w = np.array(qd[d + off:d + off + 3])
            qq = q_np[a + off:a + off + 4]
            dq = 0.5 * np.asarray(quat_mul(jnp.array([*w, 0.0]), jnp.asarray(qq)))
            q_np[a + off:a + off + 4] = qq + h * dq
        else:
            q_np[a:qs[j + 1]] += h * np.array(qd[d:ds[j + 1]])
    # angular velocities: finite differences of the world orientations (linear: see the jvp test below)
    s2 = jaxart.eval_fk(tree_model, jnp.asarray(q_np), qd)
    # angular velocity from quaternion differences: w = 2 dq q^*
    dqq = (np.asarray(s2.body_q[:, 3:]) - np.asarray(s.body_q[:, 3:])) / h
    conj = np.asarray(s.body_q[:, 3:]) * np.array([-1, -1, -1, 1])
    fd_w = 2 * np.asarray(quat_mul(jnp.asarray(dqq), jnp.asarray(conj)))[:, :3]
    np.testing.assert_allclose(fd_w, s.body_qd[:, 3:], atol=2e-5)


def test_body_qd_matches_jvp_of_fk(tree_model):
    # d/dt body COM position along a coordinate path whose derivative is consistent with qd
    rng = np.random.default_rng(7)
    q, _ = random_coords(tree_model, rng)
    # pick qd that is zero on FREE/DISTANCE linear DOFs so that the path q(t) is easy to write down
    types, qs, ds = tree_model.joint_type, tree_model.joint_q_start, tree_model.joint_qd_start
    qd = np.array(rng.normal(size=tree_model.joint_dof_count))
    for j, t in enumerate(types):
        if t in (jaxart.JointType.FREE, jaxart.JointType.DISTANCE):
            qd[ds[j]:ds[j] + 3] = 0.0

    def path(t):
        out = q
        for j, jt in enumerate(types):
            a, d = qs[j], ds[j]
            if jt in (jaxart.JointType.FREE, jaxart.JointType.DISTANCE, jaxart.JointType.BALL):
                off = 0 if jt == jaxart.JointType.BALL else 3
                w = jnp.asarray(qd[d + off:d + off + 3])
                rot = jnp.concatenate([jnp.sin(0.5 * t * jnp.linalg.norm(w)) * w / jnp.linalg.norm(w),
                                       jnp.cos(0.5 * t * jnp.linalg.norm(w))[None]])
                out = out.at[a + off:a + off + 4].set(quat_mul(rot, q[a + off:a + off + 4]))
            else:
                out = out.at[a:qs[j + 1]].add(t * jnp.asarray(qd[d:ds[j + 1]]))
        return out

    def com_pos(t):
        st = jaxart.eval_fk(tree_model, path(t), jnp.zeros(tree_model.joint_dof_count))
        return st.body_q[:, :3] + quat_rotate(st.body_q[:, 3:], tree_model.body_com)

    # FREE root's linear qd is 0 but its COM moves with the rotation about the anchor: equivalent COM velocity
    _, v = jax.jvp(com_pos, (0.0,), (1.0,))
    qd_eff = np.array(qd)
    s = jaxart.eval_fk(tree_model, q, jnp.asarray(qd_eff))
    # along this path FREE/DISTANCE anchors are fixed, so their child COMs move by w_rel x (com - anchor):
    # convert that into the COM-referenced linear joint velocity FK expects
    for j, t in enumerate(types):
        if t in (jaxart.JointType.FREE, jaxart.JointType.DISTANCE):
            child = tree_model.joint_child[j]
            parent = tree_model.joint_parent[j]
            # recompute expected COM velocity of that child: rotation about its child anchor
            anchor = np.asarray(transform_mul(s.body_q[child], tree_model.joint_X_c[j]))[:3]
            com = np.asarray(s.body_q[child, :3] + quat_rotate(s.body_q[child, 3:], tree_model.body_com[child]))
            w_rel = np.asarray(s.body_qd[child, 3:]) - (0 if parent < 0 else np.asarray(s.body_qd[parent, 3:]))
            qd_eff_v = np.cross(w_rel, com - anchor)
            rot = np.asarray(transform_mul(s.body_q[parent], tree_model.joint_X_p[j]))[3:] if parent >= 0 else \
                np.asarray(tree_model.joint_X_p[j])[3:]
            qd_eff[tree_model.joint_qd_start[j]:tree_model.joint_qd_start[j] + 3] = np.asarray(
                quat_rotate(jnp.asarray(rot) * jnp.array([-1, -1, -1, 1.0]), jnp.asarray(qd_eff_v)))
    s = jaxart.eval_fk(tree_model, q, jnp.asarray(qd_eff))
    np.testing.assert_allclose(v, s.body_qd[:, :3], atol=1e-8)


def test_mask_indices_and_flag_filter():
    b = jaxart.ModelBuilder()
    arts = []
    for i in range(3):
        link = b.add_link(mass=1.0, inertia=np.eye(3), is_kinematic=(i == 2))
        j = b.add_joint_revolute(-1, link, axis=(0, 0, 1), parent_xform=((i, 0, 0), (0, 0, 0, 1)),
                                 child_xform=((-0.5, 0, 0), (0, 0, 0, 1)))
        arts.append(b.add_articulation([j]))
    m = b.finalize(dtype=F64)
    base = m.state()
    q = jnp.array([0.3, 0.4, 0.5])
    qd = jnp.array([1.0, 2.0, 3.0])
    full = jaxart.eval_fk(m, q, qd, base)
    s = jaxart.eval_fk(m, q, qd, base, mask=jnp.array([True, False, True]))
    np.testing.assert_allclose(s.body_q[0], full.body_q[0])
    np.testing.assert_allclose(s.body_q[1], base.body_q[1])
    s = jaxart.eval_fk(m, q, qd, base, indices=jnp.array([1]))
    np.testing.assert_allclose(s.body_q[1], full.body_q[1])
    np.testing.assert_allclose(s.body_q[0], base.body_q[0])
    with pytest.raises(ValueError, match="mutually exclusive"):
        jaxart.eval_fk(m, q, qd, base, mask=jnp.array([True, True, True]), indices=jnp.array([0]))
    s = jaxart.eval_fk(m, q, qd, base, body_flag_filter=jaxart.BodyFlags.KINEMATIC)
    np.testing.assert_allclose(s.body_q[2], full.body_q[2])
    np.testing.assert_allclose(s.body_q[0], base.body_q[0])
    s = jaxart.eval_fk(m, q, qd, base, body_flag_filter=jaxart.BodyFlags.DYNAMIC)
    np.testing.assert_allclose(s.body_q[2], base.body_q[2])
    # IK with mask keeps unselected coordinates
    q_in = jnp.zeros(3)
    q2, qd2 = jaxart.eval_ik(m, full, q_in, jnp.zeros(3), mask=jnp.array([False, True, False]))
    np.testing.assert_allclose(q2, [0.0, 0.4, 0.0], atol=1e-12)
    np.testing.assert_allclose(qd2, [0.0, 2.0, 0.0], atol=1e-12)
    q2, _ = jaxart.eval_ik(m, full, q_in, jnp.zeros(3), body_flag_filter=jaxart.BodyFlags.DYNAMIC)
    np.testing.assert_allclose(q2, [0.3, 0.4, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match="mutually exclusive"):
        jaxart.eval_ik(m, full, mask=jnp.array([True, True, True]), indices=jnp.array([0]))


@pytest.mark.slow  # jit, vmap and grad compiles of FK and IK: ~48 s on the loaded 2-core machine
def test_jit_vmap_grad_through_fk_and_ik(tree_model):
    rng = np.random.default_rng(3)
    batch = [random_coords(tree_model, rng) for _ in range(4)]
    qs = jnp.stack([b[0] for b in batch])
    qds = jnp.stack([b[1] for b in batch])
    fk = jax.jit(lambda q, qd: jaxart.eval_fk(tree_model, q, qd))
    out = jax.vmap(fk)(qs, qds)
    for i in range(4):
        ref = jaxart.eval_fk(tree_model, qs[i], qds[i])
        np.testing.assert_allclose(out.body_q[i], ref.body_q, atol=1e-12)
        np.testing.assert_allclose(out.body_qd[i], ref.body_qd, atol=1e-12)
    ik = jax.jit(jax.vmap(lambda st: jaxart.eval_ik(tree_model, st)))
    q2, qd2 = ik(out)
    np.testing.assert_allclose(qd2, qds, atol=1e-9)

    def loss(q, qd):
        s = jaxart.eval_fk(tree_model, q, qd)
        return jnp.sum(s.body_q[:, :3] ** 2) + jnp.sum(jnp.sin(s.body_qd))

    from jax.test_util import check_grads

    check_grads(loss, (qs[0], qds[0]), order=1, modes=["rev", "fwd"], atol=1e-4, rtol=1e-4)

    def ik_loss(q, qd):
        s = jaxart.eval_fk(tree_model, q, qd)
        qq, qqd = jaxart.eval_ik(tree_model, s)
        return jnp.sum(jnp.cos(qq)) + jnp.sum(qqd**2)

    check_grads(ik_loss, (qs[1], qds[1]), order=1, modes=["rev"], atol=1e-4, rtol=1e-4)


@pytest.mark.slow
def test_grads_finite_at_identity_and_zero_velocity(tree_model):
    q0 = tree_model.joint_q
    qd0 = jnp.zeros(tree_model.joint_dof_count)

    def f(q, qd):
        s = jaxart.eval_fk(tree_model, q, qd)
        qq, qqd = jaxart.eval_ik(tree_model, s)
        return jnp.sum(qq) + jnp.sum(qqd) + jnp.sum(s.body_q)

    g = jax.grad(f, argnums=(0, 1))(q0, qd0)
    assert all(np.all(np.isfinite(x)) for x in g)


def test_grad_wrt_model_leaves():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3), com=(0.5, 0, 0))
    j = b.add_joint_revolute(-1, link, axis=(0, 0, 1), parent_xform=((1.0, 0, 0), (0, 0, 0, 1)))
    b.add_articulation([j])
    m = b.finalize(dtype=F64)

    def tip_x(model):
        s = jaxart.eval_fk(model, jnp.array([0.3]), jnp.array([0.0]))
        return s.body_q[0, 0]

    g = jax.grad(tip_x)(m)
    np.testing.assert_allclose(g.joint_X_p[0, 0], 1.0, atol=1e-12)
    assert float(g.body_mass[0]) == 0.0


def test_loop_joint_ignored_by_fk_and_ik():
    b = jaxart.ModelBuilder()
    root = b.add_link(mass=1.0, inertia=np.eye(3))
    b.add_shape_box(root, hx=0.1, hy=0.1, hz=0.1)
    j_root = b.add_joint_fixed(-1, root)
    a = b.add_link(mass=1.0, inertia=np.eye(3))
    c = b.add_link(mass=1.0, inertia=np.eye(3))
    j_a = b.add_joint_revolute(root, a, axis=jaxart.Axis.Z, parent_xform=((1.0, 0, 0), (0, 0, 0, 1)))
    j_b = b.add_joint_revolute(root, c, axis=jaxart.Axis.Z, parent_xform=((-1.0, 0, 0), (0, 0, 0, 1)))
    b.add_joint_fixed(a, c)
    b.add_articulation([j_root, j_a, j_b])
    m = b.finalize(dtype=F64)
    assert m.joint_articulation.tolist() == [0, 0, 0, -1]
    s = jaxart.eval_fk(m, jnp.array([0.2, -0.3]), jnp.zeros(2))
    np.testing.assert_allclose(s.body_q[1, :3], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(s.body_q[2, :3], [-1, 0, 0], atol=1e-12)
    q, _ = jaxart.eval_ik(m, s)
    np.testing.assert_allclose(q, [0.2, -0.3], atol=1e-12)


def test_deep_chain_uses_log_depth_schedule():
    b = jaxart.ModelBuilder()
    prev, js = -1, []
    for i in range(40):
        link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.01)
        js.append(b.add_joint_revolute(prev, link, axis=(0, 0, 1), parent_xform=((0.1 if i else 0, 0, 0),
                                                                                   (0, 0, 0, 1))))
        prev = link
    b.add_articulation(js)
    m = b.finalize(dtype=F64)
    assert m.schedule.depth == 40 and len(m.schedule.doubling) == 6
    q = jnp.full(40, 2 * np.pi / 40)
    s = jaxart.eval_fk(m, q, jnp.ones(40))
    # the chain closes into a 40-gon: the last body's x-axis has turned by 2 pi
    np.testing.assert_allclose(s.body_q[-1, 3:], [0, 0, 0, -1], atol=1e-9)
    np.testing.assert_allclose(s.body_qd[-1, 5], 40.0, atol=1e-9)
