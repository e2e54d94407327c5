"""Pair filtering (Newton's rules) and ``collide`` on small models: jit, vmap, capacity, gap, gradients."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.collision import candidate_pairs, collide, default_capacity, groups_collide  # noqa: E402

Cfg = jaxart.ShapeConfig
jcollide = jax.jit(collide, static_argnames=("capacity",))


def pairs_of(builder):
    model = builder.finalize(dtype=jnp.float64)
    return {tuple(p) for p in candidate_pairs(model.topology).tolist()}


def test_group_rule_matches_newton():
    ga = np.array([1, 1, 1, -1, -1, -2, 0, 0, 2])
    gb = np.array([1, 2, -1, -1, 3, -1, 1, -1, 2])
    expect = [True, False, True, False, True, True, False, False, True]
    np.testing.assert_array_equal(groups_collide(ga, gb), expect)
    np.testing.assert_array_equal(groups_collide(gb, ga), expect)


def test_groups_sites_and_has_shape_collision():
    b = jaxart.ModelBuilder()
    bodies = [b.add_body(xform=((i, 0, 0), (0, 0, 0, 1))) for i in range(7)]
    b.add_shape_sphere(bodies[0], radius=0.1, cfg=Cfg(collision_group=1))  # 0
    b.add_shape_sphere(bodies[1], radius=0.1, cfg=Cfg(collision_group=1))  # 1
    b.add_shape_sphere(bodies[2], radius=0.1, cfg=Cfg(collision_group=2))  # 2
    b.add_shape_sphere(bodies[3], radius=0.1, cfg=Cfg(collision_group=-1))  # 3
    b.add_shape_sphere(bodies[4], radius=0.1, cfg=Cfg(collision_group=-1))  # 4
    b.add_shape_sphere(bodies[5], radius=0.1, cfg=Cfg(collision_group=0))  # 5
    b.add_shape_sphere(bodies[6], radius=0.1, cfg=Cfg(has_shape_collision=False))  # 6
    b.add_site(bodies[6])  # 7
    expect = {(0, 1), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4)}
    assert pairs_of(b) == expect


def test_same_body_static_static_and_explicit_filter():
    b = jaxart.ModelBuilder()
    b.add_ground_plane()  # 0 static
    b.add_shape_box(-1, xform=((0, 0, 1), (0, 0, 0, 1)))  # 1 static
    body = b.add_body(xform=((0, 0, 0.5), (0, 0, 0, 1)))
    b.add_shape_sphere(body, radius=0.1)  # 2
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)  # 3 same body as 2
    other = b.add_body(xform=((1, 0, 0.5), (0, 0, 0, 1)))
    b.add_shape_sphere(other, radius=0.1)  # 4
    b.add_shape_collision_filter_pair(4, 2)
    assert pairs_of(b) == {(0, 2), (0, 3), (1, 2), (1, 3), (0, 4), (1, 4), (3, 4)}


def test_parent_child_filtering():
    b = jaxart.ModelBuilder()
    b.add_ground_plane()  # 0
    links = [b.add_link(xform=((0, 0, 0.2 * i), (0, 0, 0, 1))) for i in range(3)]
    for link in links:
        b.add_shape_box(link, hx=0.1, hy=0.1, hz=0.15)  # shapes 1, 2, 3
    j0 = b.add_joint_free(links[0])
    j1 = b.add_joint_revolute(links[0], links[1], axis=(1.0, 0.0, 0.0))
    j2 = b.add_joint_revolute(links[1], links[2], axis=(1.0, 0.0, 0.0))
    b.add_articulation([j0, j1, j2])
    # free joint to the world does not filter the ground; parent/child pairs are filtered;
    # the grandparent–grandchild pair (1, 3) collides
    assert pairs_of(b) == {(0, 1), (0, 2), (0, 3), (1, 3)}


def test_fixed_joint_to_world_filters_static_shapes():
    b = jaxart.ModelBuilder()
    b.add_ground_plane()  # 0
    base = b.add_link()
    b.add_shape_box(base, hx=0.1, hy=0.1, hz=0.1)  # 1
    arm = b.add_link(xform=((0, 0, 0.3), (0, 0, 0, 1)))
    b.add_shape_capsule(arm, radius=0.05, half_height=0.2)  # 2
    j0 = b.add_joint_fixed(-1, base)
    j1 = b.add_joint_revolute(base, arm, axis=(0.0, 1.0, 0.0))
    b.add_articulation([j0, j1])
    assert pairs_of(b) == {(0, 2)}


def test_joint_filter_flags_default_and_override():
    from types import SimpleNamespace

    from jaxart.collision.pairs import joint_filter_flags

    topo = SimpleNamespace(joint_count=4, joint_parent=np.array([-1, -1, 0, 1]),
                           joint_type=np.array([int(jaxart.JointType.FREE), int(jaxart.JointType.FIXED),
                                                int(jaxart.JointType.REVOLUTE), int(jaxart.JointType.BALL)]))
    np.testing.assert_array_equal(joint_filter_flags(topo), [False, True, True, True])  # Newton's default
    topo.joint_collision_filter_parent = np.array([True, False, False, True])  # per-joint flags win
    np.testing.assert_array_equal(joint_filter_flags(topo), [True, False, False, True])


def _scene():
    """Ground plane, a unit cube resting on it, two nearby spheres."""
    b = jaxart.ModelBuilder()
    b.add_ground_plane()
    box = b.add_body(xform=((0, 0, 0.49), (0, 0, 0, 1)))
    b.add_shape_box(box, hx=0.5, hy=0.5, hz=0.5)
    s1 = b.add_body(xform=((3, 0, 0.3), (0, 0, 0, 1)))
    b.add_shape_sphere(s1, radius=0.3)
    s2 = b.add_body(xform=((3.5, 0, 0.3), (0, 0, 0, 1)))
    b.add_shape_sphere(s2, radius=0.3, cfg=Cfg(margin=0.01))
    return b.finalize(dtype=jnp.float64)


def test_collide_scene_contacts():
    model = _scene()
    c = jax.jit(lambda m, s: m.collide(s))(model, model.state())
    act = np.asarray(c.active)
    assert c.capacity == 4 + 1 + 1 + 1 + 1 + 1  # plane-box 4, plane-sphere x2, sphere-sphere, sphere-box x2
    assert default_capacity(model) == c.capacity
    sa, sb = np.asarray(c.shape_a)[act], np.asarray(c.shape_b)[act]
    sep = np.asarray(c.separation)[act]
    box_rows = (sa == 0) & (sb == 1)
    assert np.sum(box_rows) == 4  # the four deepest corners
    np.testing.assert_allclose(sep[box_rows], -0.01, atol=1e-12)
    np.testing.assert_allclose(np.asarray(c.normal)[act][box_rows], np.tile([0, 0, 1.0], (4, 1)))
    ss = (sa == 2) & (sb == 3)
    np.testing.assert_allclose(sep[ss], [0.5 - 0.6 - 0.01], atol=1e-12)  # margin subtracted
    pa, pb = np.asarray(c.point_a)[act][ss][0], np.asarray(c.point_b)[act][ss][0]
    np.testing.assert_allclose(pa, [3.3, 0, 0.3], atol=1e-12)
    np.testing.assert_allclose(pb, [3.2, 0, 0.3], atol=1e-12)
    np.testing.assert_array_equal(np.asarray(c.body_a)[act][ss], [1])
    np.testing.assert_array_equal(np.asarray(c.body_b)[act][box_rows], [0, 0, 0, 0])
    assert np.all(np.asarray(c.body_a)[act][box_rows] == -1)


def test_gap_and_capacity():
    model = _scene()
    state = model.state()
    c = jcollide(model, state, gap=0.0)
    assert int(c.count) == 4 + 1 + 1  # penetrating box corners, overlapping spheres, margin sphere on ground
    small = jcollide(model, state, capacity=2)
    assert small.capacity == 2 and bool(jnp.all(small.active))
    np.testing.assert_allclose(np.sort(np.asarray(small.separation)), [-0.11, -0.01], atol=1e-12)
    big = jcollide(model, state, capacity=20)
    assert big.capacity == 20 and int(big.count) == 4 + 2 + 1  # box corners, spheres on ground, sphere pair
    assert np.all(np.asarray(big.shape_a)[9:] == -1)
    with pytest.raises(ValueError, match="capacity"):
        collide(model, state, capacity=-1)


def test_collide_vmap_and_gradient_of_height():
    model = _scene()
    state = model.state()
    heights = jnp.array([0.3, 0.49, 0.6, 2.0])

    def min_box_sep(z, s):
        s = s.replace(body_q=s.body_q.at[0, 2].set(z))
        c = collide(model, s)
        rows = (c.shape_a == 0) & (c.shape_b == 1)
        return jnp.min(jnp.where(rows, c.separation, jnp.inf)), jnp.sum(c.active & rows)

    seps, counts = jax.jit(jax.vmap(min_box_sep, in_axes=(0, None)))(heights, state)
    np.testing.assert_allclose(seps, heights - 0.5, atol=1e-12)
    np.testing.assert_array_equal(counts, [4, 4, 4, 0])
    # vmap over a model leaf (domain randomisation of the box size)
    scales = jnp.stack([model.shape_scale.at[1].set(h) for h in (0.4, 0.5, 0.6)])
    seps = jax.jit(jax.vmap(lambda sc: jnp.min(collide(model.replace(shape_scale=sc), state).separation[2:6])))(
        scales)
    np.testing.assert_allclose(seps, [0.09, -0.01, -0.11], atol=1e-12)
    # gradient of a separation w.r.t. the body height, and of sphere–sphere w.r.t. x
    g = jax.jit(jax.grad(lambda z: min_box_sep(z, state)[0]))(0.49)
    np.testing.assert_allclose(g, 1.0, atol=1e-12)

    def sphere_sep(x):
        c = collide(model, state.replace(body_q=state.body_q.at[2, 0].set(x)))
        return jnp.sum(jnp.where((c.shape_a == 2) & (c.shape_b == 3), c.separation, 0.0))

    vg = jax.jit(jax.value_and_grad(sphere_sep))
    eps = 1e-6
    fd = (vg(3.5 + eps)[0] - vg(3.5 - eps)[0]) / (2 * eps)
    np.testing.assert_allclose(vg(3.5)[1], fd, atol=1e-8)


def test_gradient_wrt_pose_is_finite_when_resting():
    model = _scene()

    def loss(body_q):
        c = collide(model, model.state().replace(body_q=body_q))
        w = jnp.where(c.active, 1.0, 0.0)
        return jnp.sum(w * c.separation) + jnp.sum(w[:, None] * (c.point + c.normal))

    g = jax.jit(jax.grad(loss))(model.body_q)
    assert np.all(np.isfinite(np.asarray(g)))


def test_unsupported_pair_raises():
    b = jaxart.ModelBuilder()
    a = b.add_body()
    b.add_shape_ellipsoid(a, rx=0.1, ry=0.2, rz=0.3)
    c = b.add_body(xform=((1, 0, 0), (0, 0, 0, 1)))
    b.add_shape(body=c, type=jaxart.GeoType.CONE, scale=(0.1, 0.2, 0.0), label="crate")
    model = b.finalize(dtype=jnp.float64)
    with pytest.raises(NotImplementedError, match="ELLIPSOID-CONE.*crate"):
        collide(model, model.state())


def test_no_shapes_gives_empty_contacts():
    b = jaxart.ModelBuilder()
    b.add_body()
    model = b.finalize()
    c = collide(model, model.state())
    assert c.capacity == 0
    assert collide(model, model.state(), capacity=3).capacity == 3


def test_mesh_on_plane_and_sphere_on_mesh():
    b = jaxart.ModelBuilder()
    b.add_ground_plane()
    body = b.add_body(xform=((0, 0, 0.2), (0, 0, 0, 1)))
    v = np.array([[-1, -1, -1], [1, -1, -1], [0, 1, -1], [0, 0, 1]], float) * 0.25  # apex at +0.25
    mesh = jaxart.Mesh(v, [[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]])
    b.add_shape_mesh(body, mesh=mesh)  # shape 1
    ball = b.add_body(xform=((0, 0, 0.2 + 0.25 + 0.1 + 0.02), (0, 0, 0, 1)))
    b.add_shape_sphere(ball, radius=0.1)  # shape 2
    model = b.finalize(dtype=jnp.float64)
    c = jcollide(model, model.state())
    act = np.asarray(c.active)
    sa, sb, sep = np.asarray(c.shape_a)[act], np.asarray(c.shape_b)[act], np.asarray(c.separation)[act]
    np.testing.assert_allclose(np.sort(sep[(sa == 0) & (sb == 1)]), [-0.05] * 3, atol=1e-12)
    on_mesh = (sa == 2) & (sb == 1)
    np.testing.assert_allclose(sep[on_mesh], [0.02], atol=1e-12)
    np.testing.assert_allclose(np.asarray(c.normal)[act][on_mesh], [[0, 0, -1.0]], atol=1e-12)
    np.testing.assert_allclose(np.asarray(c.point_b)[act][on_mesh], [[0, 0, 0.45]], atol=1e-12)


def test_float32_model_stays_float32():
    b = jaxart.ModelBuilder()
    b.add_ground_plane()
    box = b.add_body(xform=((0, 0, 0.49), (0, 0, 0, 1)))
    b.add_shape_box(box, hx=0.5, hy=0.5, hz=0.5)
    ball = b.add_body(xform=((0.2, 0.1, 1.25), (0, 0, 0, 1)))
    b.add_shape_capsule(ball, radius=0.25, half_height=0.3)
    model = b.finalize()  # float32 default
    c = jcollide(model, model.state())
    assert c.separation.dtype == jnp.float32 and c.point.dtype == jnp.float32
    act = np.asarray(c.active)
    sa, sb, sep = np.asarray(c.shape_a)[act], np.asarray(c.shape_b)[act], np.asarray(c.separation)[act]
    np.testing.assert_allclose(sep[(sa == 0) & (sb == 1)], [-0.01] * 4, atol=1e-6)
    np.testing.assert_allclose(np.min(sep[(sa == 2) & (sb == 1)]), 1.25 - 0.3 - 0.25 - 0.99, atol=1e-6)
