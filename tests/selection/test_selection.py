"""ArticulationView (jaxart.selection.view): selection, pure getters/setters, roots, batches, jit/vmap, errors."""

import re

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.selection.view import ArticulationView  # noqa: E402
from jaxart.sim.enums import JointType  # noqa: E402

ROT = np.array([0.0, 0.0, np.sin(0.35), np.cos(0.35)])  # 0.7 rad about z


def _link(b, pos, label, quat=(0.0, 0.0, 0.0, 1.0)):
    return b.add_link(xform=(*pos, *quat), mass=1.0, inertia=np.eye(3) * 0.1, com=(0.0, 0.0, 0.05), label=label)


def robot_builder(x, *, root="free", hinge="revolute", anchors=False):
    """Two-link robot at ``x``: a root link on a ``root`` joint and an arm on a ``hinge`` joint."""
    b = jaxart.ModelBuilder()
    base = _link(b, (x, 0.0, 1.0), "base")
    b.add_shape_box(base, hx=0.1, hy=0.1, hz=0.1)
    if root == "free":
        kw = dict(parent_xform=(0.1, -0.2, 0.3, *ROT), child_xform=(0.0, 0.05, -0.1, *ROT[[1, 0, 2, 3]])) \
            if anchors else {}
        j0 = b.add_joint_free(base, label="root", **kw)
    elif root == "fixed":
        j0 = b.add_joint_fixed(-1, base, parent_xform=(x, 0.0, 1.0, 0, 0, 0, 1), label="root")
    else:
        j0 = b.add_joint_revolute(-1, base, parent_xform=(x, 0.0, 1.0, *ROT), child_xform=(0.0, 0.0, 0.1, 0, 0, 0, 1),
                                  axis=(0.0, 0.0, 1.0), label="root")
    arm = _link(b, (x, 0.0, 0.5), "arm")
    b.add_shape_sphere(arm, radius=0.05)
    b.add_shape_sphere(arm, radius=0.04, xform=(0.0, 0.0, -0.1, 0, 0, 0, 1))
    add = b.add_joint_revolute if hinge == "revolute" else b.add_joint_prismatic
    j1 = add(base, arm, parent_xform=(0.0, 0.0, -0.5, 0, 0, 0, 1), axis=(0.0, 1.0, 0.0), label="hinge")
    b.add_articulation([j0, j1], label="robot")
    return b


def make_model(other_hinge="revolute", **kw):
    main = jaxart.ModelBuilder()
    main.add_builder(robot_builder(0.0, **kw), label_prefix="robot0")
    main.add_builder(robot_builder(2.0, **kw), label_prefix="robot1")
    main.add_builder(robot_builder(5.0, hinge=other_hinge, **kw), label_prefix="other")
    model = main.finalize(dtype=jnp.float64)
    state = model.state()
    q = state.joint_q.at[model.joint_q_start[1]].set(0.3).at[model.joint_q_start[3]].set(-0.4)
    return model, jaxart.eval_fk(model, q, state.joint_qd, state)


@pytest.fixture(scope="module")
def free_model():
    return make_model()


def _randomize(tree, seed=0):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    keys = jax.random.split(jax.random.PRNGKey(seed), len(leaves))
    return treedef.unflatten([jax.random.normal(k, x.shape, x.dtype) for k, x in zip(keys, leaves, strict=True)])


# ---------------------------------------------------------------- selection
def test_pattern_matching_and_metadata(free_model):
    model, state = free_model
    view = ArticulationView(model, "robot*")
    assert view.count == view.count_per_world == 2
    np.testing.assert_array_equal(view.articulation_ids, [0, 1])
    np.testing.assert_array_equal(view.get_model_articulation_mask(), [True, True, False])
    assert view.is_floating_base and not view.is_fixed_base and view.root_joint_type == JointType.FREE
    assert view.joint_names == ["root", "hinge"] and view.joint_labels == ["robot0/root", "robot0/hinge"]
    assert view.link_names == ["base", "arm"] and view.body_names == view.link_names
    assert view.joint_dof_counts == [6, 1] and view.joint_coord_counts == [7, 1]
    assert view.joint_dof_names == [f"root:{k}" for k in range(6)] + ["hinge"]
    assert (view.joint_count, view.joint_dof_count, view.joint_coord_count) == (2, 7, 8)
    assert view.shape_count == 3 and view.link_shapes == [[0], [1, 2]]
    assert ArticulationView(model, ["other*", "robot1*"]).articulation_ids.tolist() == [1, 2]
    assert ArticulationView(model, re.compile(r"robot\d/robot")).count == 2
    assert ArticulationView(model, [2]).articulation_ids.tolist() == [2]
    assert ArticulationView(model, "*").count == 3


def test_seed_scalar_view_and_filters(free_model):
    model, state = free_model
    view = ArticulationView(model, pattern="robot*")
    scalar = ArticulationView(model, pattern="robot*", include_joint_types=[JointType.PRISMATIC, JointType.REVOLUTE],
                              exclude_joint_types=[JointType.FREE, JointType.BALL])
    assert scalar.get_dof_positions(state).shape == (1, 2, 1)
    assert scalar.get_dof_velocities(state).shape == (1, 2, 1)
    assert view.get_link_transforms(state).shape == (1, 2, 2, 7)
    np.testing.assert_array_equal(scalar.get_dof_positions(state)[0, :, 0], [0.3, -0.4])
    q = scalar.get_dof_positions(state).at[..., 0].set(0.0)
    state2 = scalar.set_dof_positions(state, q)
    np.testing.assert_array_equal(scalar.get_dof_positions(state2)[0, :, 0], 0.0)
    # joint / link filters by leaf name or template index
    assert ArticulationView(model, "robot*", exclude_joints="root").joint_dof_names == ["hinge"]
    assert ArticulationView(model, "robot*", include_joints=[1]).joint_names == ["hinge"]
    both = ArticulationView(model, "robot*", include_joints="r*", include_joint_types=[JointType.REVOLUTE])
    assert both.joint_names == ["root", "hinge"]
    arm = ArticulationView(model, "robot*", include_links="arm")
    assert arm.link_names == ["arm"] and arm.shape_count == 2 and arm.link_shapes == [[0, 1]]
    np.testing.assert_array_equal(arm.get_link_transforms(state)[0, :, 0], state.body_q[np.array([1, 3])])
    assert ArticulationView(model, "robot*", exclude_links=["arm"]).link_names == ["base"]


def test_no_match_and_structure_errors():
    model, _ = make_model(other_hinge="prismatic")
    with pytest.raises(ValueError, match=r"pattern 'robt\*'.*available labels.*robot0/robot"):
        ArticulationView(model, "robt*")
    with pytest.raises(ValueError, match=r"'other/robot' is not structurally identical.*PRISMATIC"):
        ArticulationView(model, "*")
    assert ArticulationView(model, "robot*").count == 2
    with pytest.raises(TypeError, match="pattern"):
        ArticulationView(model, 3.0)
    with pytest.raises(ValueError, match="out of range"):
        ArticulationView(model, [7])
    with pytest.raises(ValueError, match="not a JointType"):
        ArticulationView(model, "robot*", include_joint_types=["hinge"])


# ---------------------------------------------------------------- getters / setters
ATTRS = [("joint_q", "state"), ("joint_qd", "state"), ("body_q", "state"), ("body_qd", "state"),
         ("body_f", "state"), ("joint_f", "control"), ("joint_target_q", "control"), ("joint_target_qd", "control"),
         ("joint_target_ke", "model"), ("joint_limit_lower", "model"), ("joint_axis", "model"),
         ("joint_X_p", "model"), ("joint_X_c", "model"), ("body_mass", "model"), ("body_inertia", "model"),
         ("body_com", "model"), ("shape_transform", "model"), ("shape_material_mu", "model")]


def test_attribute_round_trip_and_write(free_model):
    model, state = free_model
    sources = {"state": state, "control": model.control(), "model": model}
    view = ArticulationView(model, "robot*")
    for name, kind in ATTRS:
        src = sources[kind]
        vals = view.get_attribute(name, src)
        back = view.set_attribute(name, src, vals)
        for a, b in zip(jax.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(src), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=name)
        new_vals = vals + 1.5
        written = view.set_attribute(name, src, new_vals)
        np.testing.assert_array_equal(view.get_attribute(name, written), new_vals, err_msg=name)
        other = ArticulationView(model, "other*")
        np.testing.assert_array_equal(other.get_attribute(name, written), other.get_attribute(name, src))
    assert view.get_attribute("body_mass", model).shape == (1, 2, 2)
    assert view.get_attribute("body_inertia", model).shape == (1, 2, 2, 3, 3)
    assert view.get_attribute("joint_X_p", model).shape == (1, 2, 2, 7)
    assert view.get_attribute("shape_scale", model).shape == (1, 2, 3, 3)
    np.testing.assert_array_equal(view.get_attribute("joint_type", model)[0, 0], [JointType.FREE, JointType.REVOLUTE])
    np.testing.assert_allclose(view.get_attribute("body_inv_mass", model), 1.0 / view.get_attribute("body_mass", model))


def test_dof_force_and_velocity_setters(free_model):
    model, state = free_model
    view = ArticulationView(model, "robot*")
    f = jnp.arange(14.0).reshape(1, 2, 7)
    control = view.set_dof_forces(model.control(), f)
    np.testing.assert_array_equal(control.joint_f[:14], np.arange(14.0))
    np.testing.assert_array_equal(view.get_dof_forces(control), f)
    state2 = view.set_dof_velocities(state, -f)
    np.testing.assert_array_equal(view.get_dof_velocities(state2), -f)
    np.testing.assert_array_equal(state2.joint_qd[14:], state.joint_qd[14:])


# ---------------------------------------------------------------- roots
def test_seed_move_floating_roots(free_model):
    model, state = free_model
    view = ArticulationView(model, pattern="robot*")
    root_tf = view.get_root_transforms(state)
    state2 = view.set_root_transforms(state, root_tf.at[..., 0].add(0.2))
    state2 = jaxart.eval_fk(model, state2.joint_q, state2.joint_qd, state2)
    np.testing.assert_allclose(view.get_root_transforms(state2)[0, :, 0], [0.2, 2.2], atol=1e-12)
    shift = view.get_link_transforms(state2) - view.get_link_transforms(state)
    np.testing.assert_allclose(shift[..., 0], 0.2, atol=1e-12)
    np.testing.assert_allclose(shift[..., 1:], 0.0, atol=1e-12)
    np.testing.assert_array_equal(state2.body_q[4:], state.body_q[4:])  # "other" untouched


def test_floating_root_body_frame_with_anchors():
    model, state = make_model(anchors=True)
    view = ArticulationView(model, "robot*")
    rng = np.random.default_rng(3)
    quat = rng.normal(size=(1, 2, 4))
    target = jnp.concatenate([rng.normal(size=(1, 2, 3)), quat / np.linalg.norm(quat, axis=-1, keepdims=True)], -1)
    state2 = view.set_root_transforms(state, target, frame="body")
    state2 = jaxart.eval_fk(model, state2.joint_q, state2.joint_qd, state2)
    got = view.get_root_transforms(state2, frame="body")
    sign = jnp.sign(jnp.sum(got[..., 3:] * target[..., 3:], -1, keepdims=True))
    np.testing.assert_allclose(got[..., :3], target[..., :3], atol=1e-12)
    np.testing.assert_allclose(got[..., 3:] * sign, target[..., 3:], atol=1e-12)
    # body-frame twists: joint_qd holds them in the (rotated) parent-anchor frame
    twist = jnp.asarray(rng.normal(size=(1, 2, 6)))
    state3 = view.set_root_velocities(state2, twist, frame="body")
    state3 = jaxart.eval_fk(model, state3.joint_q, state3.joint_qd, state3)
    np.testing.assert_allclose(view.get_root_velocities(state3, frame="body"), twist, atol=1e-12)
    jt = view.get_root_velocities(state3)
    assert jt.shape == (1, 2, 6) and not np.allclose(jt, twist)
    np.testing.assert_array_equal(view.set_root_velocities(state3, jt).joint_qd, state3.joint_qd)


@pytest.mark.parametrize("root", ["fixed", "revolute"])
def test_fixed_base_roots_move_via_model(root):
    model, state = make_model(root=root)
    view = ArticulationView(model, "robot*")
    assert not view.is_floating_base and view.is_fixed_base == (root == "fixed")
    assert view.get_root_velocities(state) is None
    assert view.set_root_velocities(state, jnp.zeros((1, 2, 6))) is state
    tf = view.get_root_transforms(state)
    np.testing.assert_array_equal(tf[0, :, 0], [0.0, 2.0])
    with pytest.raises(ValueError, match="pass the Model as target"):
        view.set_root_transforms(state, tf)
    model2 = view.set_root_transforms(model, tf.at[..., 0].add(0.2))
    np.testing.assert_array_equal(view.get_root_transforms(state, model=model2)[0, :, 0], [0.2, 2.2])
    state2 = jaxart.eval_fk(model2, state.joint_q, state.joint_qd, state)
    shift = view.get_link_transforms(state2) - view.get_link_transforms(state)
    np.testing.assert_allclose(shift[..., 0], 0.2, atol=1e-12)
    np.testing.assert_allclose(shift[..., 1:], 0.0, atol=1e-12)
    # body frame: put the root link origin at a world pose
    target = view.get_root_transforms(state, frame="body").at[..., :3].add(jnp.array([0.3, -0.1, 0.25]))
    if root == "revolute":
        with pytest.raises(ValueError, match="needs state="):
            view.set_root_transforms(model, target, frame="body")
    model3 = view.set_root_transforms(model, target, frame="body", state=state)
    state3 = jaxart.eval_fk(model3, state.joint_q, state.joint_qd, state)
    np.testing.assert_allclose(view.get_root_transforms(state3, frame="body"), target, atol=1e-12)


# ---------------------------------------------------------------- batches, masks, jit, vmap
def test_batched_state_shapes_and_masks(free_model):
    model, state = free_model
    view = ArticulationView(model, "robot*")
    batched = jax.tree_util.tree_map(lambda x: jnp.stack([x, x + 1.0, x + 2.0]), state)
    q = view.get_dof_positions(batched)
    assert q.shape == (3, 2, 8) and view.get_link_transforms(batched).shape == (3, 2, 2, 7)
    np.testing.assert_array_equal(q[1], view.get_dof_positions(state)[0] + 1.0)
    out = view.set_dof_positions(batched, jnp.zeros((3, 2, 8)), mask=jnp.array([True, False, True]))
    got = view.get_dof_positions(out)
    np.testing.assert_array_equal(got[0], 0.0)
    np.testing.assert_array_equal(got[1], q[1])
    mask2 = jnp.array([[True, False], [False, False], [False, True]])
    got = view.get_dof_positions(view.set_dof_positions(batched, jnp.zeros((3, 2, 8)), mask=mask2))
    np.testing.assert_array_equal(got, jnp.where(mask2[..., None], 0.0, q))
    np.testing.assert_array_equal(view.get_model_articulation_mask(mask2), [[1, 0, 0], [0, 0, 0], [0, 1, 0]])
    # two batch axes flatten into one world axis
    b2 = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (2, 3, *x.shape)), state)
    assert view.get_dof_velocities(b2).shape == (6, 2, 7)
    out = view.set_dof_velocities(b2, jnp.ones((2, 3, 2, 7)))
    assert out.joint_qd.shape == b2.joint_qd.shape
    np.testing.assert_array_equal(view.get_dof_velocities(out), 1.0)


def test_jit_vmap_grad(free_model):
    model, state = free_model
    view = ArticulationView(model, "robot*")
    get = jax.jit(view.get_dof_positions)
    put = jax.jit(lambda s, v: view.set_root_transforms(s, v, mask=jnp.array([[True, False]])))
    np.testing.assert_array_equal(get(state), view.get_dof_positions(state))
    tf = view.get_root_transforms(state).at[..., 2].add(1.0)
    out = put(state, tf)
    np.testing.assert_array_equal(view.get_root_transforms(out)[0, 0], tf[0, 0])
    np.testing.assert_array_equal(view.get_root_transforms(out)[0, 1], view.get_root_transforms(state)[0, 1])
    batched = _randomize(state)
    batched = jax.tree_util.tree_map(lambda x: jnp.stack([x, 2 * x]), batched)
    per_world = jax.vmap(view.get_link_velocities)(batched)
    assert per_world.shape == (2, 1, 2, 2, 6)
    np.testing.assert_array_equal(per_world[:, 0], view.get_link_velocities(batched))
    upd = jax.vmap(lambda s: view.set_dof_velocities(s, jnp.zeros((1, 2, 7))))(batched)
    np.testing.assert_array_equal(view.get_dof_velocities(upd), 0.0)
    d = jax.jit(jax.grad(lambda v: view.eval_fk(view.set_root_transforms(state, v)).body_q[1, 0]))(tf)
    np.testing.assert_allclose(d[0, :, :3], [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], atol=1e-12)
    g = jax.grad(lambda m: jnp.sum(view.get_attribute("body_mass", m) ** 2))(model)
    np.testing.assert_array_equal(g.body_mass, jnp.where(jnp.arange(6) < 4, 2.0 * model.body_mass, 0.0))


def test_value_and_mask_errors(free_model):
    model, state = free_model
    view = ArticulationView(model, "robot*")
    with pytest.raises(ValueError, match=r"values have shape \(2, 8\), expected \(1, 2, 8\)"):
        view.set_dof_positions(state, jnp.zeros((2, 8)))
    with pytest.raises(ValueError, match=r"expected \(1, 2, 7\)"):
        view.set_root_transforms(state, jnp.zeros((1, 2, 6)))
    with pytest.raises(ValueError, match=r"mask has shape \(3,\), expected \(1, 2\)"):
        view.set_dof_positions(state, jnp.zeros((1, 2, 8)), mask=jnp.array([True, True, False]))
    with pytest.raises(ValueError, match="Boolean"):
        view.set_dof_positions(state, jnp.zeros((1, 2, 8)), mask=jnp.array([1]))
    with pytest.raises(ValueError, match="unknown attribute 'joint_speed'"):
        view.get_attribute("joint_speed", state)
    with pytest.raises(ValueError, match="State has no attribute 'body_mass'"):
        view.get_attribute("body_mass", state)
    with pytest.raises(ValueError, match="read-only"):
        view.set_attribute("joint_type", model, jnp.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="frame must be one of"):
        view.get_root_transforms(state, frame="world")
    with pytest.raises(TypeError, match="jaxart Model"):
        ArticulationView(state, "robot*")


@pytest.mark.slow
def test_view_eval_fk_only_touches_selection(free_model):
    model, state = free_model
    view = ArticulationView(model, "robot*")
    q = state.joint_q.at[:].add(0.1)  # moves every articulation's coordinates, "other" included
    moved = view.eval_fk(state.replace(joint_q=q))
    full = jaxart.eval_fk(model, q, state.joint_qd, state)
    np.testing.assert_allclose(moved.body_q[:4], full.body_q[:4], atol=1e-12)
    np.testing.assert_array_equal(moved.body_q[4:], state.body_q[4:])
    batched = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), state.replace(joint_q=q))
    out = view.eval_fk(batched, mask=jnp.array([[True, False], [False, True]]))
    assert out.body_q.shape == (2, 6, 7)
    np.testing.assert_allclose(out.body_q[0, :2], full.body_q[:2], atol=1e-12)
    np.testing.assert_array_equal(out.body_q[0, 2:], state.body_q[2:])
    np.testing.assert_array_equal(out.body_q[1, :2], state.body_q[:2])
    np.testing.assert_allclose(out.body_q[1, 2:4], full.body_q[2:4], atol=1e-12)
