"""Newton's MuJoCo-integration mapping tables: one test per row, inspecting the MjModel built from a small jaxart model.

These tests compile the MjSpec only (no MJX), so they are fast; stepping is in test_solver_mujoco.py.
"""

import os
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.solvers.mujoco.convert import model_to_spec, resolve_options
from jaxart.solvers.mujoco.shapes import solref_from_ke_kd
from jaxart.solvers.mujoco.state import (
    control_to_ctrl,
    joint_q_to_qpos,
    joint_qd_to_qvel,
    qpos_to_joint_q,
    qvel_to_joint_qd,
)

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
J = jaxart.JointDofConfig
T = mujoco.mjtJoint
GT = mujoco.mjtGeom


def convert(model, **opts):
    """Compile the MjModel of ``model`` (no MJX); returns ``(mj_model, spec, layout)``."""
    spec, rec = model_to_spec(model, resolve_options(**opts))
    mj = spec.compile()
    return mj, spec, rec.resolve(mj, model.body_count)


def one_link(add_joint, *, mass=1.0, inertia=None, com=(0.0, 0.0, 0.0), shapes=None):
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=mass, com=com, inertia=np.diag([0.2, 0.25, 0.3]) if inertia is None else inertia,
                      label="link")
    if shapes:
        shapes(b, link)
    j = add_joint(b, link)
    b.add_articulation([j])
    return b


def jid(mj, name):
    return mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, name)


def bid(mj, name):
    return mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)


def qrot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]])


# ------------------------------------------------------------------ joint types
def test_revolute_is_hinge():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c, axis=(0.0, 0.6, 0.8), label="hinge",
                                                   parent_xform=((0, 0, 1), qrot([1, 0, 0], 0.3))))
    mj, _, _ = convert(b.finalize(dtype=F64))
    j = jid(mj, "hinge")
    assert mj.jnt_type[j] == T.mjJNT_HINGE and mj.nq == 1
    np.testing.assert_allclose(mj.jnt_axis[j], [0, 0.6, 0.8], atol=1e-12)
    np.testing.assert_allclose(mj.body_pos[bid(mj, "link")], [0, 0, 1])


def test_prismatic_is_slide():
    mj, _, _ = convert(one_link(lambda b, c: b.add_joint_prismatic(-1, c, axis=(0, 0, 1), label="s")).finalize())
    assert mj.jnt_type[jid(mj, "s")] == T.mjJNT_SLIDE
    np.testing.assert_allclose(mj.jnt_axis[0], [0, 0, 1])


def test_ball_is_ball():
    mj, _, _ = convert(one_link(lambda b, c: b.add_joint_ball(-1, c, label="ball")).finalize())
    assert mj.jnt_type[jid(mj, "ball")] == T.mjJNT_BALL and (mj.nq, mj.nv) == (4, 3)


def test_free_is_free_with_initial_pose_from_body_q():
    b = jaxart.ModelBuilder()
    pose = ((0.1, 0.2, 0.9), qrot([1, 1, 0], 0.4))
    b.add_body(xform=pose, mass=1.0, inertia=np.eye(3), label="box")
    mj, _, _ = convert(b.finalize(dtype=F64))
    assert mj.jnt_type[0] == T.mjJNT_FREE
    q = pose[1]
    np.testing.assert_allclose(mj.qpos0, [0.1, 0.2, 0.9, q[3], q[0], q[1], q[2]], atol=1e-12)


def test_free_joint_below_a_body_is_three_slides_and_a_ball():
    b = jaxart.ModelBuilder()
    a = b.add_link(mass=1.0, inertia=np.eye(3))
    c = b.add_link(mass=1.0, inertia=np.eye(3))
    js = [b.add_joint_revolute(-1, a), b.add_joint_free(c, parent=a, label="floating")]
    b.add_articulation(js)
    mj, _, _ = convert(b.finalize())  # dynamics: tests/solvers/mujoco/test_mujoco_free_ball_terms.py
    assert list(mj.jnt_type) == [T.mjJNT_HINGE, T.mjJNT_SLIDE, T.mjJNT_SLIDE, T.mjJNT_SLIDE, T.mjJNT_BALL]
    assert jid(mj, "floating_lin0") == 1 and jid(mj, "floating_ang") == 4


def test_d6_becomes_slides_and_hinges_with_suffixes():
    b = one_link(lambda b, c: b.add_joint_d6(-1, c, label="d6", linear_axes=[J(axis=(1, 0, 0)), J(axis=(0, 1, 0))],
                                             angular_axes=[J(axis=(0, 0, 1))]))
    mj, _, _ = convert(b.finalize())
    names = [mj.joint(i).name for i in range(mj.njnt)]
    assert names == ["d6_lin0", "d6_lin1", "d6_ang"]
    assert list(mj.jnt_type) == [T.mjJNT_SLIDE, T.mjJNT_SLIDE, T.mjJNT_HINGE]
    b = one_link(lambda b, c: b.add_joint_universal(-1, c, label="u"))
    mj, _, _ = convert(b.finalize())
    assert [mj.joint(i).name for i in range(mj.njnt)] == ["u_ang0", "u_ang1"]


def test_fixed_is_nested_body_and_mocap_on_world():
    b = jaxart.ModelBuilder()
    a = b.add_link(mass=1.0, inertia=np.eye(3), label="a")
    c = b.add_link(mass=1.0, inertia=np.eye(3), label="c")
    w = b.add_link(mass=1.0, inertia=np.eye(3), label="w")
    js = [b.add_joint_revolute(-1, a), b.add_joint_fixed(a, c, parent_xform=((0, 0, 0.5), (0, 0, 0, 1)))]
    b.add_articulation(js)
    b.add_articulation([b.add_joint_fixed(-1, w, parent_xform=((1, 0, 0), (0, 0, 0, 1)))])
    mj, _, _ = convert(b.finalize())
    assert mj.njnt == 1
    assert mj.body_parentid[bid(mj, "c")] == bid(mj, "a") and mj.body_jntnum[bid(mj, "c")] == 0
    np.testing.assert_allclose(mj.body_pos[bid(mj, "c")], [0, 0, 0.5])
    assert mj.body_mocapid[bid(mj, "w")] == 0 and mj.body_mocapid[bid(mj, "c")] == -1


def test_distance_joint_is_a_free_joint_with_a_limited_tendon():
    b = one_link(lambda b, c: b.add_joint_distance(-1, c, parent_xform=((0, 0, 0.5), (0, 0, 0, 1)), label="rope"))
    # default max_distance 1; mapping details and dynamics: tests/solvers/mujoco/test_mujoco_loops.py
    mj, _, _ = convert(b.finalize())
    assert list(mj.jnt_type) == [T.mjJNT_FREE] and mj.ntendon == 1 and mj.tendon_limited[0]


# ------------------------------------------------------------------ geometry types
@pytest.mark.parametrize("adder,gtype,size", [
    (lambda b, lk: b.add_shape_sphere(lk, radius=0.3), GT.mjGEOM_SPHERE, [0.3]),
    (lambda b, lk: b.add_shape_capsule(lk, radius=0.1, half_height=0.4), GT.mjGEOM_CAPSULE, [0.1, 0.4]),
    (lambda b, lk: b.add_shape_cylinder(lk, radius=0.2, half_height=0.3), GT.mjGEOM_CYLINDER, [0.2, 0.3]),
    (lambda b, lk: b.add_shape_box(lk, hx=0.1, hy=0.2, hz=0.3), GT.mjGEOM_BOX, [0.1, 0.2, 0.3]),
    (lambda b, lk: b.add_shape_ellipsoid(lk, rx=0.3, ry=0.2, rz=0.1), GT.mjGEOM_ELLIPSOID, [0.3, 0.2, 0.1]),
])
def test_primitive_geoms(adder, gtype, size):
    xf = ((0.1, -0.2, 0.3), qrot([0, 1, 1], 0.5))
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c), shapes=lambda b, lk: adder(b, lk) and None)
    b.shape_transform[-1] = np.concatenate(xf)
    mj, _, _ = convert(b.finalize(dtype=F64))
    assert mj.geom_type[0] == gtype
    np.testing.assert_allclose(mj.geom_size[0][:len(size)], size)
    np.testing.assert_allclose(mj.geom_pos[0], xf[0], atol=1e-12)
    q = xf[1]
    np.testing.assert_allclose(mj.geom_quat[0], [q[3], q[0], q[1], q[2]], atol=1e-12)


def test_plane_only_on_world_with_default_render_size():
    b = jaxart.ModelBuilder()
    b.add_ground_plane()
    b.add_shape_plane(plane=(0, 0, 1, -1.0), width=2.0, length=3.0)
    mj, _, _ = convert(b.finalize())
    assert list(mj.geom_type) == [GT.mjGEOM_PLANE] * 2 and list(mj.geom_bodyid) == [0, 0]
    np.testing.assert_allclose(mj.geom_size[0], [5, 5, 5])
    np.testing.assert_allclose(mj.geom_size[1][:2], [2, 3])
    np.testing.assert_allclose(mj.geom_pos[1], [0, 0, 1])
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c),
                 shapes=lambda b, lk: b.add_shape_plane(body=lk, label="tabletop"))
    with pytest.raises(ValueError, match="tabletop"):
        convert(b.finalize())


def _tetra_mesh():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]) * 0.2
    f = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    return jaxart.Mesh(v, f)


def test_mesh_is_convex_hulled_with_warning():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c),
                 shapes=lambda b, lk: b.add_shape_mesh(lk, mesh=_tetra_mesh(), scale=(1, 2, 1)))
    with pytest.warns(UserWarning, match="convex hull"):
        mj, _, _ = convert(b.finalize())
    assert mj.geom_type[0] == GT.mjGEOM_MESH and mj.nmesh == 1
    assert mj.mesh_vertnum[0] == 4
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c),
                 shapes=lambda b, lk: b.add_shape(body=lk, type=jaxart.GeoType.CONVEX_MESH, src=_tetra_mesh(),
                                                 scale=(1, 1, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mj, _, _ = convert(b.finalize())
    assert mj.geom_type[0] == GT.mjGEOM_MESH


def test_cone_is_unsupported():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c), shapes=lambda b, lk: b.add_shape_cone(lk, label="cone"))
    with pytest.raises(NotImplementedError, match="cone"):
        convert(b.finalize())


def test_sites_become_mujoco_sites():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c),
                 shapes=lambda b, lk: b.add_site(lk, xform=((0, 0, 0.3), (0, 0, 0, 1)), label="tip"))
    mj, _, _ = convert(b.finalize())
    assert mj.nsite == 1 and mj.ngeom == 0 and mj.site(0).name == "tip"
    np.testing.assert_allclose(mj.site_pos[0], [0, 0, 0.3])


# ------------------------------------------------------------------ shape parameters
def _shape_model(**cfg):
    b = jaxart.ModelBuilder()
    b.add_ground_plane(cfg=jaxart.ShapeConfig(**cfg))
    return b.finalize(dtype=F64)


def test_friction_triple():
    mj, _, _ = convert(_shape_model(mu=0.7, mu_torsional=0.02, mu_rolling=0.003))
    np.testing.assert_allclose(mj.geom_friction[0], [0.7, 0.02, 0.003])


def test_solref_from_ke_kd_and_fallback():
    mj, _, _ = convert(_shape_model(ke=1e4, kd=50.0))
    tc, dr = 2.0 / 50.0, 50.0 / (2 * np.sqrt(1e4))
    np.testing.assert_allclose(mj.geom_solref[0], [tc, dr])
    # the formula inverts MuJoCo's (timeconst, dampratio) -> (k, b) with impedance 1
    assert np.isclose(2.0 / tc, 50.0) and np.isclose(1.0 / (tc * tc * dr * dr), 1e4)
    mj, _, _ = convert(_shape_model(ke=0.0, kd=50.0))
    np.testing.assert_allclose(mj.geom_solref[0], [0.02, 1.0])
    assert solref_from_ke_kd(1e4, -1.0) == (0.02, 1.0)


def test_margin_and_gap_always_zero():
    mj, _, _ = convert(_shape_model(margin=0.01, gap=0.05))
    assert mj.geom_margin[0] == pytest.approx(0.01) and mj.geom_gap[0] == 0.0


def test_solref_limit_is_negative_ke_kd():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c, limit_lower=-1.0, limit_upper=0.5, limit_ke=300.0,
                                                   limit_kd=7.0))
    mj, _, _ = convert(b.finalize())
    assert mj.jnt_limited[0] == 1
    np.testing.assert_allclose(mj.jnt_range[0], [-1.0, 0.5])
    np.testing.assert_allclose(mj.jnt_solref[0], [-300.0, -7.0])
    mj, _, _ = convert(one_link(lambda b, c: b.add_joint_revolute(-1, c)).finalize())
    assert mj.jnt_limited[0] == 0


# ------------------------------------------------------------------ collision filtering
def _mj_collide(mj, s1, s2):
    g1, g2 = (mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, f"shape_{s}") for s in (s1, s2))
    if mj.geom_bodyid[g1] == mj.geom_bodyid[g2]:
        return False
    ok = (mj.geom_contype[g1] & mj.geom_conaffinity[g2]) or (mj.geom_contype[g2] & mj.geom_conaffinity[g1])
    b1, b2 = mj.geom_bodyid[g1], mj.geom_bodyid[g2]
    sig = (min(b1, b2) << 16) + max(b1, b2)
    excluded = sig in set(mj.exclude_signature.tolist())
    return bool(ok) and not excluded


def _spheres(groups, filter_pairs=()):
    b = jaxart.ModelBuilder()
    for i, g in enumerate(groups):
        b.add_body(xform=((i, 0, 0), (0, 0, 0, 1)), label=f"b{i}")
        b.add_shape_sphere(i, radius=0.1, cfg=jaxart.ShapeConfig(collision_group=g))
    for a, c in filter_pairs:
        b.add_shape_collision_filter_pair(a, c)
    return b


def test_collision_groups_by_graph_coloring():
    groups = [1, 1, 2, -1, -1, -2, 0]
    mj, _, _ = convert(_spheres(groups).finalize())

    def newton_rule(a, c):
        if a == 0 or c == 0:
            return False
        if a > 0:
            return a == c or c < 0
        return a != c

    for a in range(len(groups)):
        for c in range(a + 1, len(groups)):
            assert _mj_collide(mj, a, c) == newton_rule(groups[a], groups[c]), (a, c)
    g6 = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, "shape_6")
    assert mj.geom_contype[g6] == 0 and mj.geom_conaffinity[g6] == 0  # group 0: no collisions


def test_fully_filtered_body_pairs_become_excludes():
    # greedy colouring gives s0 and s2 different colours, so the filtered pair needs an <exclude>
    b = _spheres([1, 1, 1], filter_pairs=[(0, 1), (0, 2)])
    mj, spec, _ = convert(b.finalize())
    assert mj.nexclude == 1
    assert not _mj_collide(mj, 0, 1) and not _mj_collide(mj, 0, 2) and _mj_collide(mj, 1, 2)
    assert "<exclude" in spec.to_xml()


def test_parent_child_filtered_non_colliding_shapes_zero():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c),
                 shapes=lambda b, lk: b.add_shape_box(lk, cfg=jaxart.ShapeConfig(has_shape_collision=False)))
    mj, _, _ = convert(b.finalize())
    assert mj.geom_contype[0] == 0 and mj.geom_conaffinity[0] == 0
    b = jaxart.ModelBuilder()
    a = b.add_link(mass=1.0, inertia=np.eye(3))
    c = b.add_link(mass=1.0, inertia=np.eye(3))
    b.add_shape_sphere(a, radius=0.1)
    b.add_shape_sphere(c, radius=0.1)
    b.add_articulation([b.add_joint_revolute(-1, a), b.add_joint_revolute(a, c)])
    b.add_ground_plane(label="shape_2")
    mj, _, _ = convert(b.finalize())
    assert not _mj_collide(mj, 0, 1) and _mj_collide(mj, 0, 2) and _mj_collide(mj, 1, 2)


def test_more_than_32_colors_fall_back_to_defaults():
    mj, _, _ = convert(_spheres([1] * 34, filter_pairs=[(32, 33)]).finalize())
    assert list(mj.geom_contype[32:]) == [1, 1] and list(mj.geom_conaffinity[32:]) == [1, 1]
    assert len(set(mj.geom_contype[:32].tolist())) == 32
    assert _mj_collide(mj, 0, 32) and _mj_collide(mj, 5, 33) and not _mj_collide(mj, 32, 33)  # via <exclude>


def test_partially_filtered_body_pair_warns():
    b = _spheres([1, 1, 1], filter_pairs=[(0, 1), (0, 2)])
    b.add_shape_sphere(0, radius=0.1, xform=((0, 0, 0.3), (0, 0, 0, 1)))  # second shape of body 0
    with pytest.warns(UserWarning, match="1 filtered shape pairs"):
        mj, _, _ = convert(b.finalize())
    assert _mj_collide(mj, 3, 2) and _mj_collide(mj, 0, 2)  # the uncovered pair collides


# ------------------------------------------------------------------ mass and inertia
def test_explicit_diagonal_inertia_and_com():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c, child_xform=((0, 0, 0.2), (0, 0, 0, 1))),
                 mass=2.5, com=(0.1, 0.0, 0.3), inertia=np.diag([0.1, 0.2, 0.3]))
    mj, _, _ = convert(b.finalize(dtype=F64))
    k = bid(mj, "link")
    assert mj.body_mass[k] == pytest.approx(2.5)
    np.testing.assert_allclose(mj.body_ipos[k], [0.1, 0.0, 0.1], atol=1e-12)  # in the child-anchor frame
    np.testing.assert_allclose(mj.body_inertia[k], [0.1, 0.2, 0.3], atol=1e-12)


def test_full_inertia_when_off_diagonal():
    inertia = np.array([[0.3, 0.05, 0.0], [0.05, 0.2, 0.02], [0.0, 0.02, 0.25]])
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c), inertia=inertia)
    mj, spec, _ = convert(b.finalize(dtype=F64))
    k = bid(mj, "link")
    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, mj.body_iquat[k])
    rot = rot.reshape(3, 3)
    np.testing.assert_allclose(rot @ np.diag(mj.body_inertia[k]) @ rot.T, inertia, atol=1e-10)
    np.testing.assert_allclose(spec.body("link").fullinertia, [0.3, 0.2, 0.25, 0.05, 0.0, 0.02])


def test_zero_mass_body_inertia_from_geoms():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c), mass=0.0, inertia=np.zeros((3, 3)),
                 shapes=lambda b, lk: b.add_shape_sphere(lk, radius=0.1, cfg=jaxart.ShapeConfig(density=0.0)))
    m = b.finalize()
    assert float(m.body_mass[0]) == 0.0
    mj, _, _ = convert(m)
    assert mj.body_mass[1] == pytest.approx(1000 * 4 / 3 * np.pi * 0.1**3)  # MuJoCo's default density


# ------------------------------------------------------------------ actuators and joint properties
@pytest.mark.parametrize("mode,expect", [
    (jaxart.JointTargetMode.POSITION, [([100.0], [0, -100.0, -5.0])]),
    (jaxart.JointTargetMode.VELOCITY, [([5.0], [0, 0, -5.0])]),
    (jaxart.JointTargetMode.POSITION_VELOCITY, [([100.0], [0, -100.0, 0]), ([5.0], [0, 0, -5.0])]),
    (jaxart.JointTargetMode.NONE, []),
])
def test_actuators_per_target_mode(mode, expect):
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c, target_ke=100.0, target_kd=5.0, actuator_mode=mode))
    mj, _, layout = convert(b.finalize(dtype=F64))
    assert mj.nu == len(expect)
    for k, (gain, bias) in enumerate(expect):
        np.testing.assert_allclose(mj.actuator_gainprm[k][:1], gain)
        np.testing.assert_allclose(mj.actuator_biasprm[k][:3], bias)
        assert mj.actuator_trntype[k] == mujoco.mjtTrn.mjTRN_JOINT and mj.actuator_trnid[k][0] == 0
    assert len(layout.pos_act) + len(layout.vel_act) == len(expect)


def test_ball_drives_per_axis_via_gear_and_forcerange():
    axes = [J(axis=a, target_ke=40.0, target_kd=2.0, effort_limit=7.0, limit_ke=0.0, limit_kd=0.0)
            for a in ((1, 0, 0), (0, 1, 0), (0, 0, 1))]
    b = one_link(lambda b, c: b.add_joint(jaxart.JointType.BALL, -1, c, angular_axes=axes, label="ball"))
    model = b.finalize(dtype=F64)
    mj, _, layout = convert(model)
    assert mj.nu == 6  # POSITION_VELOCITY: a position and a velocity actuator per axis
    for k in range(6):
        assert mj.actuator_forcelimited[k] == 1
        np.testing.assert_allclose(mj.actuator_forcerange[k], [-7.0, 7.0])
    np.testing.assert_allclose(mj.actuator_gear[[0, 2, 4], :3], np.eye(3))
    target = qrot([1, -2, 0.5], 0.8)
    ctrl = np.asarray(control_to_ctrl(layout, jnp.asarray(target), jnp.zeros(3)))
    rotvec = np.zeros(3)
    mujoco.mju_quat2Vel(rotvec, target[[3, 0, 1, 2]], 1.0)
    np.testing.assert_allclose(ctrl[[0, 2, 4]], rotvec, atol=1e-12)
    d = mujoco.MjData(mj)
    d.qpos[:] = np.asarray(joint_q_to_qpos(layout, jnp.asarray(target)))
    d.ctrl[:] = ctrl
    mujoco.mj_forward(mj, d)
    np.testing.assert_allclose(d.actuator_force, 0.0, atol=1e-10)  # at its target the drive is idle
    d.qpos[:] = [1, 0, 0, 0]
    mujoco.mj_forward(mj, d)
    np.testing.assert_allclose(d.actuator_force[[0, 2, 4]], np.clip(40.0 * rotvec, -7, 7), atol=1e-10)


def test_effort_limit_and_passive_joint_properties():
    b = one_link(lambda b, c: b.add_joint_prismatic(-1, c, effort_limit=40.0, armature=0.3, damping=2.0,
                                                    friction=0.4, stiffness=11.0, rest_q=0.25))
    mj, _, _ = convert(b.finalize(dtype=F64))
    assert mj.jnt_actfrclimited[0] == 1
    np.testing.assert_allclose(mj.jnt_actfrcrange[0], [-40.0, 40.0])
    assert mj.dof_armature[0] == pytest.approx(0.3) and mj.dof_damping[0] == pytest.approx(2.0)
    assert mj.dof_frictionloss[0] == pytest.approx(0.4) and mj.jnt_stiffness[0] == pytest.approx(11.0)
    assert mj.qpos_spring[0] == pytest.approx(0.25)


def test_velocity_limit_ignored_with_warning():
    b = one_link(lambda b, c: b.add_joint_revolute(-1, c, velocity_limit=3.0))
    with pytest.warns(UserWarning, match="velocity_limit"):
        convert(b.finalize())


def test_non_depth_first_joint_order_warns():
    b = jaxart.ModelBuilder()
    ls = [b.add_link(mass=1.0, inertia=np.eye(3)) for _ in range(4)]
    js = [b.add_joint_revolute(-1, ls[0]), b.add_joint_revolute(ls[0], ls[1]), b.add_joint_revolute(ls[0], ls[2]),
          b.add_joint_revolute(ls[1], ls[3])]
    b.add_articulation(js)
    with pytest.warns(UserWarning, match="depth-first"):
        mj, _, layout = convert(b.finalize())
    # qpos follows MuJoCo's depth-first order; the layout permutes jaxart coordinates into it
    assert list(layout.q_dst[np.argsort(layout.q_src)]) == [0, 1, 3, 2]


# ------------------------------------------------------------------ solver options
def test_solver_option_defaults_and_overrides():
    mj, _, _ = convert(_shape_model())
    o = mj.opt
    assert o.solver == mujoco.mjtSolver.mjSOL_NEWTON and o.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert o.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and (o.iterations, o.ls_iterations) == (100, 50)
    assert o.jacobian == mujoco.mjtJacobian.mjJAC_AUTO
    mj, _, _ = convert(_shape_model(), solver="CG", integrator="euler", cone="elliptic", iterations=7,
                       ls_iterations=3, impratio=2.0, tolerance=1e-6, jacobian="sparse")
    o = mj.opt
    assert o.jacobian == mujoco.mjtJacobian.mjJAC_SPARSE
    assert o.solver == mujoco.mjtSolver.mjSOL_CG and o.integrator == mujoco.mjtIntegrator.mjINT_EULER
    assert o.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and (o.iterations, o.ls_iterations) == (7, 3)
    assert o.impratio == 2.0 and o.tolerance == 1e-6
    with pytest.raises(ValueError, match="integrator"):
        resolve_options(integrator="verlet")


# ------------------------------------------------------------------ frames and state mapping
def _tree_builder():
    """Every MuJoCo-mappable joint type with rotated anchors and COM offsets."""
    b = jaxart.ModelBuilder()
    r1, r2 = qrot([1, 2, 3], 0.7), qrot([0, 1, -1], -1.1)
    ls = [b.add_link(com=(0.05 * i, -0.02, 0.1), inertia=np.diag([0.1, 0.2, 0.3]) + 0.01, mass=1.0 + i,
                     label=f"L{i}") for i in range(7)]
    js = [
        b.add_joint_free(ls[0], parent_xform=((0.1, 0.2, 0.3), r1), child_xform=((0.0, 0.1, 0.0), r2)),
        b.add_joint_revolute(ls[0], ls[1], axis=(0.0, 0.6, 0.8), parent_xform=((0.3, 0, 0), r1),
                             child_xform=((0, 0, -0.2), r2)),
        b.add_joint_prismatic(ls[1], ls[2], axis=(1.0, 0.0, 0.0), parent_xform=((0, 0.4, 0), r2)),
        b.add_joint_ball(ls[2], ls[3], parent_xform=((0, 0, 0.5), r1), child_xform=((0.1, 0, 0), r1)),
        b.add_joint_d6(ls[3], ls[4], linear_axes=[J(axis=(1, 0, 0)), J(axis=(0, 0, 1))],
                       angular_axes=[J(axis=(0, 1, 0)), J(axis=(0, 0, 1)), J(axis=(1, 0, 0))],
                       parent_xform=((0.2, 0, 0), r2), child_xform=((0, 0.1, 0), r1)),
        b.add_joint_d6(ls[4], ls[5], angular_axes=[J(axis=(1, 0, 0)), J(axis=(0, 0, 1))],
                       child_xform=((0, 0.3, 0), r1)),
        b.add_joint_fixed(ls[5], ls[6], parent_xform=((0.1, 0.1, 0.1), r2), child_xform=((0, 0, 0.1), r1)),
    ]
    b.add_articulation(js)
    return b


def _random_state(model, rng):
    q = np.zeros(model.joint_coord_count)
    qs, types = model.joint_q_start, model.joint_type
    for j, t in enumerate(types):
        a, e = qs[j], qs[j + 1]
        if t == jaxart.JointType.FREE:
            q[a:a + 3] = rng.normal(size=3)
            q[a + 3:a + 7] = rng.normal(size=4)
        elif t == jaxart.JointType.BALL:
            q[a:e] = rng.normal(size=4)
        else:
            q[a:e] = rng.uniform(-1.0, 1.0, size=e - a)
    for j, t in enumerate(types):
        if t in (jaxart.JointType.FREE, jaxart.JointType.BALL):
            s = qs[j + 1] - 4
            q[s:s + 4] /= np.linalg.norm(q[s:s + 4])
    return jnp.asarray(q), jnp.asarray(rng.normal(size=model.joint_dof_count))


@pytest.fixture(scope="module")
def tree():
    model = _tree_builder().finalize(dtype=F64)
    mj, _, layout = convert(model)
    return model, mj, layout


def assert_kinematics_match(model, mj, layout, rng, n=3):
    """MuJoCo's COM positions, twists and inertial axes equal jaxart's FK on random states."""
    d = mujoco.MjData(mj)
    for _ in range(n):
        q, qd = _random_state(model, rng)
        st = jaxart.eval_fk(model, q, qd)
        d.qpos[:] = np.asarray(joint_q_to_qpos(layout, q))
        d.qvel[:] = np.asarray(joint_qd_to_qvel(layout, q, qd))
        mujoco.mj_forward(mj, d)
        body_q, body_qd = np.asarray(st.body_q), np.asarray(st.body_qd)
        com_w = np.asarray(jaxart.math.transform_point(st.body_q, model.body_com))
        for b in range(model.body_count):
            if float(model.body_mass[b]) == 0.0:
                continue  # folded into its child's MuJoCo body
            k = layout.body_mj[b]
            np.testing.assert_allclose(d.xipos[k], com_w[b], atol=1e-10)  # COM positions
            vel = np.zeros(6)
            mujoco.mj_objectVelocity(mj, d, mujoco.mjtObj.mjOBJ_BODY, k, vel, 0)  # (ω, v at xipos), world
            np.testing.assert_allclose(vel[:3], body_qd[b, 3:], atol=1e-10)
            np.testing.assert_allclose(vel[3:], body_qd[b, :3], atol=1e-10)
            # orientation: MuJoCo frame = jaxart body frame * joint_X_c (child anchor)
            rot = np.asarray(jaxart.math.quat_to_matrix(body_q[b, 3:]))
            np.testing.assert_allclose(d.ximat[k].reshape(3, 3), rot @ _inertia_axes(mj, k, model, b), atol=1e-9)


def test_body_frames_and_velocities_match_mujoco_kinematics(tree):
    model, mj, layout = tree
    assert_kinematics_match(model, mj, layout, np.random.default_rng(3))


def test_massless_intermediate_links_fold_into_multi_joint_bodies():
    b = jaxart.ModelBuilder()
    r1 = qrot([1, 2, 3], 0.7)
    a = b.add_link(label="a_dummy")  # massless, no shapes (like an MJCF multi-joint body import)
    c = b.add_link(label="a_dummy2")
    d = b.add_link(mass=1.5, com=(0.1, 0.0, -0.1), inertia=np.diag([0.02, 0.03, 0.04]), label="a")
    b.add_shape_sphere(d, radius=0.05)
    e = b.add_link(mass=1.0, com=(0.0, 0.1, 0.0), inertia=np.diag([0.02, 0.03, 0.04]), label="e")
    js = [b.add_joint_revolute(-1, a, axis=(0, 1, 0), parent_xform=((0, 0, 1), r1), child_xform=((0.1, 0, 0), r1)),
          b.add_joint_prismatic(a, c, axis=(1, 0, 0), parent_xform=((0, 0.2, 0), (0, 0, 0, 1))),
          b.add_joint_revolute(c, d, axis=(0, 0, 1), parent_xform=((0.3, 0, 0), r1), child_xform=((0, 0, 0.2), r1)),
          b.add_joint_revolute(d, e, axis=(1, 0, 0), parent_xform=((0, 0, -0.3), (0, 0, 0, 1)))]
    b.add_articulation(js)
    model = b.finalize(dtype=F64)
    mj, _, layout = convert(model)
    assert mj.nbody == 3 and mj.njnt == 4 and list(mj.body_jntnum) == [0, 3, 1]
    assert list(layout.body_mj) == [1, 1, 1, 2]
    assert_kinematics_match(model, mj, layout, np.random.default_rng(5))


def _inertia_axes(mj, k, model, b):
    """Rotation from the jaxart body frame to MuJoCo's inertial frame (static)."""
    tj = [j for j in range(model.joint_count) if model.joint_child[j] == b]
    x_c = np.asarray(model.joint_X_c[tj[0]]) if tj else np.array([0, 0, 0, 0, 0, 0, 1.0])
    r_c = np.asarray(jaxart.math.quat_to_matrix(jnp.asarray(x_c[3:])))
    ri = np.zeros(9)
    mujoco.mju_quat2Mat(ri, mj.body_iquat[k])
    return r_c @ ri.reshape(3, 3)


def test_state_round_trips(tree):
    model, _, layout = tree
    rng = np.random.default_rng(7)
    to_q = jax.jit(lambda q: qpos_to_joint_q(layout, joint_q_to_qpos(layout, q), model.joint_coord_count))
    to_qd = jax.jit(lambda q, qd: qvel_to_joint_qd(layout, joint_q_to_qpos(layout, q),
                                                   joint_qd_to_qvel(layout, q, qd), model.joint_dof_count))
    for _ in range(5):
        q, qd = _random_state(model, rng)
        np.testing.assert_allclose(to_q(q), q, atol=1e-12)
        np.testing.assert_allclose(to_qd(q, qd), qd, atol=1e-12)


def test_identity_anchor_free_and_ball_qpos_equal_joint_q():
    b = jaxart.ModelBuilder()
    a = b.add_body(xform=((0.1, 0.2, 0.3), qrot([0, 0, 1], 0.3)), mass=1.0, inertia=np.eye(3))
    c = b.add_link(mass=1.0, inertia=np.eye(3))
    b.add_articulation([b.add_joint_ball(a, c)])
    model = b.finalize(dtype=F64)
    _, _, layout = convert(model)
    q = np.asarray(model.joint_q)
    qpos = np.asarray(joint_q_to_qpos(layout, model.joint_q))
    np.testing.assert_allclose(qpos[:3], q[:3])
    np.testing.assert_allclose(qpos[3:7], q[[6, 3, 4, 5]])  # xyzw -> wxyz
    np.testing.assert_allclose(qpos[7:], q[[10, 7, 8, 9]])


def test_save_to_mjcf_round_trip(tmp_path):
    model = _tree_builder().finalize(dtype=F64)
    mj, spec, _ = convert(model)
    path = os.path.join(tmp_path, "tree.xml")
    with open(path, "w") as f:
        f.write(spec.to_xml())
    mj2 = mujoco.MjModel.from_xml_path(path)
    assert (mj2.nq, mj2.nv, mj2.nbody, mj2.njnt) == (mj.nq, mj.nv, mj.nbody, mj.njnt)
    np.testing.assert_allclose(mj2.body_mass, mj.body_mass)
    # MjSpec.to_xml writes 6 significant digits
    np.testing.assert_allclose(mj2.body_pos, mj.body_pos, atol=1e-6)
    np.testing.assert_allclose(mj2.body_quat, mj.body_quat, atol=1e-6)
    np.testing.assert_allclose(mj2.jnt_axis, mj.jnt_axis, atol=1e-6)


def test_save_to_mjcf_then_add_mjcf_reproduces_the_model(tmp_path):
    model = _tree_builder().finalize(dtype=F64)
    mj, spec, layout = convert(model)
    path = os.path.join(tmp_path, "tree.xml")
    with open(path, "w") as f:
        f.write(spec.to_xml())
    b2 = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b2.add_mjcf(path)
    model2 = b2.finalize(dtype=F64)
    mj2, _, layout2 = convert(model2)
    assert (mj2.nq, mj2.nv, mj2.nbody) == (mj.nq, mj.nv, mj.nbody)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, qd = _random_state(model, rng)
        qpos, qvel = joint_q_to_qpos(layout, q), joint_qd_to_qvel(layout, q, qd)
        q2 = qpos_to_joint_q(layout2, qpos, model2.joint_coord_count)
        qd2 = qvel_to_joint_qd(layout2, qpos, qvel, model2.joint_dof_count)
        s1, s2 = jaxart.eval_fk(model, q, qd), jaxart.eval_fk(model2, q2, qd2)
        com1 = np.asarray(jaxart.math.transform_point(s1.body_q, model.body_com))
        com2 = np.asarray(jaxart.math.transform_point(s2.body_q, model2.body_com))
        for i, label in enumerate(model.body_label):
            k = model2.body_label.index(label)
            assert float(model2.body_mass[k]) == pytest.approx(float(model.body_mass[i]), rel=1e-5)
            np.testing.assert_allclose(com2[k], com1[i], atol=1e-5)  # MJCF text keeps 6 digits
            np.testing.assert_allclose(s2.body_qd[k], s1.body_qd[i], atol=1e-4)
