"""ModelBuilder: Newton's layout, mass accumulation, composition and bad-input validation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart import JointType


def _two_link():
    b = jaxart.ModelBuilder()
    a = b.add_link(label="a")
    b.add_shape_box(a, hx=0.1, hy=0.2, hz=0.3)
    c = b.add_link(label="c")
    b.add_shape_sphere(c, radius=0.1)
    j0 = b.add_joint_revolute(-1, a, axis=(0, 0, 1), label="j0")
    j1 = b.add_joint_ball(a, c, label="j1")
    b.add_articulation([j0, j1], label="robot")
    return b


def test_layout_and_starts():
    b = _two_link()
    d6 = b.add_link()
    J = jaxart.JointDofConfig
    j = b.add_joint_d6(1, d6, linear_axes=[J(axis=(1, 0, 0), limit_lower=-0.5, limit_upper=0.5)],
                       angular_axes=[J(axis=(0, 0, 1), limit_lower=-1.0, limit_upper=1.0)])
    b.add_articulation([j])
    m = b.finalize()
    assert m.joint_type.tolist() == [JointType.REVOLUTE, JointType.BALL, JointType.D6]
    assert m.joint_q_start.tolist() == [0, 1, 5, 7]
    assert m.joint_qd_start.tolist() == [0, 1, 4, 6]
    assert m.joint_dof_dim.tolist() == [[0, 1], [0, 3], [1, 1]]
    ds = m.joint_qd_start[2]
    np.testing.assert_allclose(m.joint_axis[ds], [1, 0, 0])
    np.testing.assert_allclose(m.joint_axis[ds + 1], [0, 0, 1])
    np.testing.assert_allclose([m.joint_limit_lower[ds], m.joint_limit_lower[ds + 1]], [-0.5, -1.0])
    np.testing.assert_allclose(m.joint_q[1:5], [0, 0, 0, 1])
    assert m.joint_target_q.shape == (m.joint_coord_count,)
    assert m.joint_target_qd.shape == (m.joint_dof_count,)
    assert m.body_label == ["a", "c", "body_2"]
    assert m.articulation_label == ["robot", "articulation_1"]
    assert m.articulation_start.tolist() == [0, 2] and m.articulation_end.tolist() == [2, 3]
    c = m.control()
    assert c.joint_f.shape == (6,) and c.joint_target_q.shape == (7,)


def test_mass_from_shape_density_and_parallel_axis():
    b = jaxart.ModelBuilder()
    body = b.add_link()
    b.add_shape_box(body, hx=0.5, hy=0.5, hz=0.5, xform=((1.0, 0, 0), (0, 0, 0, 1)))
    b.add_shape_sphere(body, radius=0.5, xform=((-1.0, 0, 0), (0, 0, 0, 1)))
    m = b.finalize(dtype=jnp.float64)
    m_box, m_sph = 1000.0, 1000.0 * 4 / 3 * np.pi * 0.125
    np.testing.assert_allclose(m.body_mass[0], m_box + m_sph)
    com_x = (m_box - m_sph) / (m_box + m_sph)
    np.testing.assert_allclose(m.body_com[0], [com_x, 0, 0], atol=1e-12)
    i_box = m_box / 6.0
    i_sph = 0.4 * m_sph * 0.25
    ixx = i_box + i_sph
    iyy = ixx + m_box * (1 - com_x) ** 2 + m_sph * (1 + com_x) ** 2
    np.testing.assert_allclose(np.diag(m.body_inertia[0]), [ixx, iyy, iyy], rtol=1e-12)


def test_capsule_and_cylinder_inertia_match_mujoco():
    import mujoco

    xml = """<mujoco><worldbody>
      <body name="c"><freejoint/><geom type="capsule" size="0.1 0.3" density="1000"/></body>
      <body name="y" pos="1 0 0"><freejoint/><geom type="cylinder" size="0.2 0.4" density="1000"/></body>
      <body name="e" pos="2 0 0"><freejoint/><geom type="ellipsoid" size="0.2 0.3 0.4" density="1000"/></body>
    </worldbody></mujoco>"""
    mj = mujoco.MjModel.from_xml_string(xml)
    b = jaxart.ModelBuilder()
    for geo, kw in [("capsule", dict(radius=0.1, half_height=0.3)), ("cylinder", dict(radius=0.2, half_height=0.4)),
                    ("ellipsoid", dict(rx=0.2, ry=0.3, rz=0.4))]:
        body = b.add_body()
        getattr(b, f"add_shape_{geo}")(body, **kw)
    m = b.finalize(dtype=jnp.float64)
    np.testing.assert_allclose(m.body_mass, mj.body_mass[1:], rtol=1e-9)
    np.testing.assert_allclose(np.diagonal(m.body_inertia, axis1=1, axis2=2), mj.body_inertia[1:], rtol=1e-9)


def test_lock_inertia_and_explicit_mass():
    b = jaxart.ModelBuilder()
    body = b.add_link(mass=2.0, inertia=(0.1, 0.2, 0.3), lock_inertia=True)
    b.add_shape_box(body)
    m = b.finalize()
    np.testing.assert_allclose(m.body_mass[0], 2.0)
    np.testing.assert_allclose(np.diag(m.body_inertia[0]), [0.1, 0.2, 0.3], rtol=1e-6)


def test_sites_and_ground_plane_are_massless():
    b = jaxart.ModelBuilder()
    body = b.add_link()
    s = b.add_site(body, xform=((0, 0, 1.0), (0, 0, 0, 1)), label="tip")
    g = b.add_ground_plane(height=0.5)
    m = b.finalize(dtype=jnp.float64)
    assert float(m.body_mass[0]) == 0.0
    assert m.shape_label[s] == "tip" and m.shape_body[g] == -1
    np.testing.assert_allclose(m.shape_transform[g, :3], [0, 0, 0.5])
    assert m.shape_type[g] == jaxart.GeoType.PLANE


def test_orphan_joint_rejected_and_loop_joint_accepted():
    b = jaxart.ModelBuilder()
    a = b.add_link()
    c = b.add_link()
    b.add_joint_revolute(-1, a, label="orphan_hinge")
    b.add_joint_revolute(a, c, label="other_orphan")
    with pytest.raises(ValueError, match="orphan_hinge.*other_orphan"):
        b.finalize()
    b.finalize(skip_validation_joints=True)
    b2 = jaxart.ModelBuilder()
    r = b2.add_link()
    x, y = b2.add_link(), b2.add_link()
    js = [b2.add_joint_fixed(-1, r), b2.add_joint_revolute(r, x), b2.add_joint_revolute(r, y)]
    b2.add_joint_fixed(x, y, label="loop")
    b2.add_articulation(js)
    m = b2.finalize()
    assert m.joint_articulation.tolist() == [0, 0, 0, -1]


def test_add_builder_offsets_and_xform():
    src = _two_link()
    dst = jaxart.ModelBuilder()
    dst.add_builder(src, xform=((1.0, 0, 0), (0, 0, 0, 1)), label_prefix="r0")
    dst.add_builder(src, xform=((2.0, 0, 0), (0, 0, 0, 1)), label_prefix="r1")
    m = dst.finalize(dtype=jnp.float64)
    assert m.body_count == 4 and m.joint_count == 4 and m.articulation_count == 2
    assert m.body_label[2] == "r1/a" and m.joint_parent.tolist() == [-1, 0, -1, 2]
    s = jaxart.eval_fk(m, m.joint_q, m.joint_qd)
    np.testing.assert_allclose(s.body_q[[0, 2], 0], [1.0, 2.0])
    with pytest.raises(ValueError, match="already exists"):
        dst.add_builder(src, label_prefix="r0")


def test_add_builder_moves_free_roots_through_joint_q_like_newton():
    src = jaxart.ModelBuilder()
    b = src.add_link(mass=1.0, inertia=np.eye(3) * 0.1, com=(0.1, 0.0, 0.0))
    x_p = ((0.0, 0.5, 0.0), (0.0, 0.0, np.sin(0.3), np.cos(0.3)))
    src.add_articulation([src.add_joint_free(b, parent_xform=x_p)])
    src.joint_q[:3] = [0.2, 0.0, 1.0]
    src.joint_qd[:] = [1.0, 0.0, 0.0, 0.0, 0.0, 2.0]
    ref = src.finalize(dtype=jnp.float64)
    s_ref = jaxart.eval_fk(ref, ref.joint_q, ref.joint_qd)
    rot = (0.0, 0.0, np.sin(0.4), np.cos(0.4))
    dst = jaxart.ModelBuilder()
    dst.add_builder(src, xform=((1.0, -2.0, 0.5), rot))
    m = dst.finalize(dtype=jnp.float64)
    np.testing.assert_allclose(m.joint_X_p, ref.joint_X_p)  # the anchor is untouched (Newton)
    s = jaxart.eval_fk(m, m.joint_q, m.joint_qd)
    moved = np.asarray(jaxart.math.transform_mul(jnp.asarray([1.0, -2.0, 0.5, *rot]), s_ref.body_q[0]))
    np.testing.assert_allclose(s.body_q[0], moved, atol=1e-12)
    w_rot = np.asarray(jaxart.math.quat_rotate(jnp.asarray(rot), s_ref.body_qd[0, 3:]))
    v_rot = np.asarray(jaxart.math.quat_rotate(jnp.asarray(rot), s_ref.body_qd[0, :3]))
    np.testing.assert_allclose(s.body_qd[0], np.concatenate([v_rot, w_rot]), atol=1e-12)


def test_model_is_a_pytree_with_static_topology():
    m = _two_link().finalize()
    leaves = jax.tree_util.tree_leaves(m)
    assert all(jnp.issubdtype(x.dtype, jnp.floating) for x in leaves)  # grad over a Model works
    assert hash(m.topology) == hash(_two_link().finalize().topology)
    assert "bodies=2" in repr(m.topology)
    g = jax.grad(lambda mm: jnp.sum(mm.body_mass))(m)
    np.testing.assert_allclose(g.body_mass, 1.0)


@pytest.mark.parametrize("call, match", [
    (lambda b: b.add_link(mass=-1.0), "mass must be >= 0"),
    (lambda b: b.add_link(mass=float("nan")), "mass must be finite"),
    (lambda b: b.add_link(com=(1.0, 2.0)), "com must have shape"),
    (lambda b: b.add_link(inertia=np.diag([-1.0, 1, 1])), "positive semi-definite"),
    (lambda b: b.add_link(xform=(0, 0, 0, 0, 0, 0, 0)), "non-zero quaternion"),
    (lambda b: (b.add_link(label="a"), b.add_link(label="a")), "already used"),
    (lambda b: b.add_joint_revolute(-1, 5), "body index 5 does not exist"),
    (lambda b: b.add_joint_revolute(-1, b.add_link(), axis=(0, 0, 0)), "non-zero vector"),
    (lambda b: b.add_joint_revolute(-1, b.add_link(), limit_lower=1.0, limit_upper=-1.0), "must not exceed"),
    (lambda b: b.add_joint_revolute(-1, b.add_link(), label="hinge", target_ke=-5.0), "hinge.*target_ke"),
    (lambda b: b.add_joint_revolute(-1, "x"), "must be a body index"),
    (lambda b: b.add_joint(99, -1, b.add_link()), "unknown joint type"),
    (lambda b: b.add_joint_d6(-1, b.add_link(), angular_axes=[(1, 0, 0), (1, 1, 0)]), "orthogonal"),
    (lambda b: b.add_shape_box(b.add_link(), hx=-1.0), "must be > 0"),
    (lambda b: b.add_shape_sphere(7), "body index 7"),
    (lambda b: b.add_articulation([3]), "joint index 3 does not exist"),
    (lambda b: b.add_articulation([]), "empty"),
    (lambda b: b.add_articulation("j"), "list of joint indices"),
])
def test_bad_input_names_the_element(call, match):
    b = jaxart.ModelBuilder()
    with pytest.raises((ValueError, TypeError), match=match):
        call(b)


def test_non_contiguous_articulation_and_double_parent():
    b = jaxart.ModelBuilder()
    a, c, d = b.add_link(), b.add_link(), b.add_link()
    j0 = b.add_joint_revolute(-1, a)
    b.add_joint_revolute(a, c)
    j2 = b.add_joint_revolute(c, d)
    with pytest.raises(ValueError, match="contiguous"):
        b.add_articulation([j0, j2])
    b2 = jaxart.ModelBuilder()
    a = b2.add_link()
    j0 = b2.add_joint_revolute(-1, a)
    j1 = b2.add_joint_prismatic(-1, a)
    with pytest.raises(ValueError, match="child of two joints"):
        b2.add_articulation([j0, j1])
