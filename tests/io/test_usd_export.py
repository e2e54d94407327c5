"""USD export: ``export_model`` → ``add_usd`` round trips and ``export_trajectory`` animated stages.

Oracles: the original builder model (FK at random coordinates, masses, inertias, joint types, limits,
drives, shapes, filters) and pxr reading the written stage back (time samples, world transforms).
"""

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.io.usd import export_model, export_trajectory

pxr = pytest.importorskip("pxr")
from pxr import Usd, UsdGeom  # noqa: E402

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
JT = jaxart.JointType


@jax.jit
def _fk(model, q):
    """Body poses at coordinates ``q`` (compiled once per model structure)."""
    return jaxart.eval_fk(model, q, model.joint_qd, model.state()).body_q


def _builder():
    b = jaxart.ModelBuilder()
    base = b.add_link(mass=2.0, com=(0.1, 0.0, 0.0), inertia=np.diag([0.1, 0.2, 0.3]), label="base")
    b.add_shape_box(base, hx=0.1, hy=0.2, hz=0.3, label="base_box")
    arm = b.add_link(mass=1.0, com=(0.0, 0.1, 0.0), inertia=[[0.1, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.15]],
                     label="arm")
    b.add_shape_capsule(arm, radius=0.05, half_height=0.2, label="arm_capsule")
    slider = b.add_link(mass=0.5, inertia=np.eye(3) * 0.01, label="slider")
    b.add_shape_cylinder(slider, radius=0.04, half_height=0.1, xform=((0, 0, 0.1), (0, 0.6, 0, 0.8)),
                         label="slider_cyl")
    wrist = b.add_link(mass=0.7, com=(0.01, 0.02, 0.03), inertia=np.diag([0.02, 0.03, 0.04]), label="wrist")
    b.add_shape_cone(wrist, radius=0.05, half_height=0.05, label="wrist_cone")
    hand = b.add_link(mass=0.3, inertia=np.eye(3) * 0.004, label="hand")
    verts = [(0, 0, 0), (0.1, 0, 0), (0, 0.1, 0), (0, 0, 0.1)]
    b.add_shape_mesh(hand, mesh=jaxart.Mesh(verts, [0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3]), scale=(1, 2, 1),
                     label="hand_mesh")
    tip = b.add_link(mass=0.2, inertia=np.eye(3) * 0.002, label="tip")
    b.add_shape_sphere(tip, radius=0.03, label="tip_sphere")
    js = [b.add_joint_fixed(-1, base, parent_xform=((0, 0, 1), (0, 0, math.sin(0.4), math.cos(0.4))), label="root"),
          b.add_joint_revolute(base, arm, axis=(0.0, 0.6, 0.8), parent_xform=((0.2, 0, 0), (0, 0, 0, 1)),
                               child_xform=((-0.1, 0, 0), (0, 0, 0, 1)), limit_lower=-1.0, limit_upper=1.5,
                               target_ke=100.0, target_kd=3.0, target_q=0.4, effort_limit=20.0, label="shoulder"),
          b.add_joint_prismatic(arm, slider, axis=(0, 0, 1), parent_xform=((0, 0.3, 0), (0, 0, 0, 1)),
                                limit_lower=-0.1, limit_upper=0.2, label="slide"),
          b.add_joint_d6(slider, wrist, linear_axes=[(1, 0, 0)], angular_axes=[(0, 1, 0), (0, 0, 1)],
                         parent_xform=((0, 0, 0.2), (0.1, 0, 0, math.sqrt(0.99))), label="gimbal"),
          b.add_joint_ball(wrist, hand, parent_xform=((0.1, 0, 0), (0, 0, 0, 1)), label="ball"),
          b.add_joint_distance(hand, tip, parent_xform=((0, 0.1, 0), (0, 0, 0, 1)), min_distance=0.1,
                               max_distance=0.3, label="tether")]
    b.add_articulation(js, label="arm")
    loop = b.add_joint_revolute(tip, arm, axis=(1, 0, 0), label="loop")
    ball = b.add_body(xform=((1, 1, 1), (0, 0, 0, 1)), mass=1.0, inertia=np.eye(3) * 0.1, label="ball_body")
    s = b.add_shape_sphere(ball, radius=0.2, label="ball_sphere", cfg=jaxart.ShapeConfig(mu=0.3, restitution=0.5))
    b.add_ground_plane(label="ground")
    b.add_shape_collision_filter_pair(s, 0)
    b.joint_q[:3] = [0.3, 0.05, 0.1]
    return b, loop


def _validation_errors(path) -> list[str]:
    """Errors of every registered OpenUSD validator (UsdValidation) on the written stage."""
    from pxr import UsdValidation

    validators = UsdValidation.ValidationRegistry().GetOrLoadAllValidators()
    assert len(validators) > 10
    errors = UsdValidation.ValidationContext(validators).Validate(Usd.Stage.Open(str(path)))
    return [f"{e.GetName()}: {e.GetMessage()}" for e in errors]


def _q_by_label(model, other, q_model, labels):
    """``q_model`` re-laid out in ``other``'s coordinate order (joints matched through ``labels``)."""
    q = np.asarray(other.joint_q, dtype=np.float64).copy()
    qs, qs2 = np.asarray(model.joint_q_start), np.asarray(other.joint_q_start)
    for j, lab in enumerate(model.joint_label):
        if lab in labels:
            k = other.joint_label.index(labels[lab])
            q[qs2[k]:qs2[k + 1]] = q_model[qs[j]:qs[j + 1]]
    return q


def test_export_model_roundtrip_fk_masses_joints(tmp_path):
    b, _ = _builder()
    model = b.finalize(dtype=F64)
    path = tmp_path / "robot.usda"
    written = export_model(model, path)
    assert written["unsupported"] == []
    assert _validation_errors(path) == []
    b2 = jaxart.ModelBuilder()
    out = b2.add_usd(str(path))
    assert out["unsupported"] == []
    model2 = b2.finalize(dtype=F64)
    body = {lab: model2.body_label.index(p) for lab, p in written["bodies"].items()}
    joint = {lab: model2.joint_label.index(p) for lab, p in written["joints"].items()}
    assert model2.body_count == model.body_count and model2.joint_count == model.joint_count
    for i, lab in enumerate(model.body_label):
        k = body[lab]
        assert float(model2.body_mass[k]) == pytest.approx(float(model.body_mass[i]), rel=1e-6)
        np.testing.assert_allclose(model2.body_com[k], model.body_com[i], atol=1e-7)
        np.testing.assert_allclose(model2.body_inertia[k], model.body_inertia[i], rtol=1e-5, atol=1e-8)
    for j, lab in enumerate(model.joint_label):
        if lab in joint:
            k = joint[lab]
            assert model2.joint_type[k] == model.joint_type[j], lab
            assert tuple(model2.joint_dof_dim[k]) == tuple(model.joint_dof_dim[j]), lab
            assert (model2.joint_articulation[k] >= 0) == (model.joint_articulation[j] >= 0), lab
    assert model2.joint_type[model2.joint_label.index("/World/ball_body/ball_body/root_joint")] == JT.FREE
    # limits, drives and effort limits of the revolute survive (degrees in the file)
    d, d2 = int(model.joint_qd_start[joint_index(model, "shoulder")]), int(model2.joint_qd_start[joint["shoulder"]])
    for name in ("joint_limit_lower", "joint_limit_upper", "joint_target_ke", "joint_target_kd", "joint_effort_limit"):
        assert float(getattr(model2, name)[d2]) == pytest.approx(float(getattr(model, name)[d]), rel=1e-6), name
    # the written body poses are the model's FK at its default coordinates
    fk0 = np.asarray(_fk(model, model.joint_q))
    for i, lab in enumerate(model.body_label):
        np.testing.assert_allclose(b2.body_q[body[lab]][:3], fk0[i, :3], atol=1e-9, err_msg=lab)
        assert abs(abs(b2.body_q[body[lab]][3:] @ fk0[i, 3:]) - 1.0) < 1e-12, lab
    # FK at random coordinates
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = np.asarray(model.joint_q, dtype=np.float64).copy()
        qs = np.asarray(model.joint_q_start)
        for j in range(model.joint_count):
            n = qs[j + 1] - qs[j]
            if model.joint_type[j] in (JT.BALL, JT.FREE, JT.DISTANCE):
                quat = rng.normal(size=4)
                q[qs[j + 1] - 4:qs[j + 1]] = quat / np.linalg.norm(quat)
                q[qs[j]:qs[j + 1] - 4] = rng.normal(size=n - 4) * 0.2
            else:
                q[qs[j]:qs[j + 1]] = rng.uniform(-0.8, 0.8, n)
        q2 = _q_by_label(model, model2, q, {lab: model2.joint_label[k] for lab, k in joint.items()})
        s1, s2 = np.asarray(_fk(model, jnp.asarray(q))), np.asarray(_fk(model2, jnp.asarray(q2)))
        for i, lab in enumerate(model.body_label):
            a, c = s1[i], s2[body[lab]]
            np.testing.assert_allclose(c[:3], a[:3], atol=1e-6, err_msg=lab)
            assert abs(abs(a[3:] @ c[3:]) - 1.0) < 1e-10, lab
    # shapes: types, sizes, materials, filters
    shape = {lab: model2.shape_label.index(p) for lab, p in written["shapes"].items()}
    for s, lab in enumerate(model.shape_label):
        k = shape[lab]
        assert model2.shape_type[k] == model.shape_type[s], lab
        np.testing.assert_allclose(model2.shape_scale[k], model.shape_scale[s], rtol=1e-6, atol=1e-9, err_msg=lab)
        assert float(model2.shape_material_mu[k]) == pytest.approx(float(model.shape_material_mu[s]), rel=1e-6)
        assert float(model2.shape_material_restitution[k]) == pytest.approx(
            float(model.shape_material_restitution[s]), abs=1e-7)
    pair = sorted((shape["ball_sphere"], shape["base_box"]))
    assert tuple(pair) in {tuple(p) for p in np.asarray(model2.topology.shape_collision_filter_pairs)}


def joint_index(model, label: str) -> int:
    return model.joint_label.index(label)


def test_export_model_reports_unwritable_features(tmp_path):
    b, _ = _builder()
    b.add_site(0, label="marker")
    model = b.finalize()
    with pytest.warns(UserWarning, match=r"1 model feature\(s\) not written:\n  - site 'marker'"):
        out = export_model(model, tmp_path / "m.usda")
    assert out["unsupported"] == ["site 'marker'"]


def test_export_model_lists_every_dropped_feature_in_one_warning(tmp_path):
    b, _ = _builder()
    j = {lab: b.joint_label.index(lab) for lab in ("shoulder", "slide")}
    s = {lab: b.shape_label.index(lab) for lab in ("base_box", "tip_sphere", "ball_sphere", "arm_capsule")}
    b.add_tendon_fixed([j["shoulder"], j["slide"]], [1.0, 0.5], label="cable", springlength=(0.2, 0.2))  # no FK
    b.add_constraint_mimic(j["slide"], j["shoulder"], coef1=0.1, label="follow")
    b.add_equality_constraint(jaxart.EqType.JOINT, joint1=j["slide"], label="hold")
    b.add_shape_contact_pair(s["base_box"], s["tip_sphere"])
    b.joint_dof["armature"][b.joint_qd_start[j["slide"]]] = 0.25
    b.shape_cfg[s["ball_sphere"]].ke = 123.0
    b.shape_cfg[s["ball_sphere"]].collision_group = -1           # collides with everything but group -1: no loss
    b.shape_cfg[s["arm_capsule"]].collision_group = 2            # kept apart from the group-1 colliders
    with pytest.warns(UserWarning) as rec:
        out = export_model(b.finalize(), tmp_path / "m.usda")
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert f"{len(out['unsupported'])} model feature(s) not written" in msg
    for part in ("1 tendon(s): ['cable']", "1 mimic constraint(s): ['follow']", "1 equality constraint(s): ['hold']",
                 "1 explicit contact pair(s): [('base_box', 'tip_sphere')]", "joint armature", "['slide']",
                 "contact stiffness ke", "['ball_sphere']", "collision groups", "'arm_capsule'"):
        assert part in msg, part
    assert "ball_sphere', 'arm_capsule" not in msg and "('arm_capsule', 'ball_sphere')" not in msg


def test_export_model_is_silent_when_nothing_is_lost(tmp_path):
    """A URDF import's visual shapes (collision group 0, non-colliding) lose nothing: no warning."""
    urdf = ('<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" '
            'ixy="0" ixz="0" iyz="0"/></inertial><visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual>'
            '<collision><geometry><sphere radius="0.05"/></geometry></collision></link><link name="c"><inertial>'
            '<mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'
            '<collision><geometry><sphere radius="0.05"/></geometry></collision></link><joint name="j" '
            'type="revolute"><parent link="a"/><child link="c"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>'
            '<limit lower="-1" upper="1" effort="5" velocity="1000000"/></joint></robot>')
    b = jaxart.ModelBuilder()
    b.add_urdf(urdf)
    assert any(c.collision_group == 0 for c in b.shape_cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = export_model(b.finalize(), tmp_path / "r.usda")
    assert out["unsupported"] == []
    # a colliding shape in group 0 is written with collisions disabled (it never collides in jaxart either)
    b.shape_cfg[next(k for k, c in enumerate(b.shape_cfg) if c.has_shape_collision)].collision_group = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        export_model(b.finalize(), tmp_path / "g0.usda")
    b2 = jaxart.ModelBuilder()
    b2.add_usd(str(tmp_path / "g0.usda"))
    assert sorted(c.has_shape_collision for c in b2.shape_cfg) == [False, False, True]


def _d6_chain():
    """Multi-axis D6 joints in one chain: (name, linear axes, angular axes, exact in float32)."""
    cfg = jaxart.ModelBuilder.JointDofConfig
    joints = [("planar", [(1, 0, 0), (0, 1, 0)], [(0, 0, 1)], True),
              ("gimbal", [], [(1, 0, 0), (0, 1, 0), (0, 0, 1)], True),
              ("turned_planar", [(0.6, 0.8, 0), (-0.8, 0.6, 0)], [(0, 0, 1)], False),
              ("yx", [], [(0, 1, 0), (1, 0, 0)], False),
              ("cylinder", [(0, 0, 1)], [(0, 0, 1)], True)]
    b = jaxart.ModelBuilder()
    frames = [((0.25, -0.5, 0.125), (0.5, 0.5, 0.5, 0.5)), ((0.0, 0.375, -0.25), (0.0, 0.0, 0.0, 1.0))]
    parent, js = -1, []
    for k, (name, lin, ang, _) in enumerate(joints):
        link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1, label=name + "_link")
        limits = [(-0.5 - 0.1 * i, 0.25 + 0.2 * i) for i in range(len(lin) + len(ang))]
        js.append(b.add_joint_d6(
            parent, link, parent_xform=frames[k % 2], child_xform=frames[(k + 1) % 2], label=name,
            linear_axes=[cfg(axis=a, limit_lower=lo, limit_upper=hi) for a, (lo, hi) in zip(lin, limits, strict=False)],
            angular_axes=[cfg(axis=a, limit_lower=lo, limit_upper=hi) for a, (lo, hi) in
                          zip(ang, limits[len(lin):], strict=True)]))
        parent = link
    b.add_articulation(js, label="d6_chain")
    return b.finalize(dtype=F64), joints


def test_multi_axis_d6_round_trip_fk_and_limits(tmp_path):
    model, joints = _d6_chain()
    path = tmp_path / "d6.usda"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = export_model(model, path)
    b2 = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b2.add_usd(str(path))
    model2 = b2.finalize(dtype=F64)
    joint = {lab: model2.joint_label.index(p) for lab, p in written["joints"].items()}
    for j, (name, lin, ang, _) in enumerate(joints):
        k = joint[name]
        assert model2.joint_type[k] == JT.D6 and tuple(model2.joint_dof_dim[k]) == (len(lin), len(ang)), name
        d, d2 = int(model.joint_qd_start[j]), int(model2.joint_qd_start[k])
        for side in ("lower", "upper"):
            a = np.asarray(getattr(model, f"joint_limit_{side}"))[d:d + len(lin) + len(ang)]
            c = np.asarray(getattr(model2, f"joint_limit_{side}"))[d2:d2 + len(lin) + len(ang)]
            np.testing.assert_allclose(c, a, rtol=1e-6, err_msg=name)
    rng = np.random.default_rng(3)
    labels = {lab: model2.joint_label[k] for lab, k in joint.items()}
    exact = [k for k, (*_, ok) in enumerate(joints) if all(joints[i][3] for i in range(k + 1))]
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, model.joint_coord_count)
        q2 = _q_by_label(model, model2, q, labels)
        s1, s2 = np.asarray(_fk(model, jnp.asarray(q))), np.asarray(_fk(model2, jnp.asarray(q2)))
        for i, (name, *_rest) in enumerate(joints):
            a, c = s1[i], s2[model2.body_label.index(written["bodies"][name + "_link"])]
            tol = 1e-10 if i in exact else 1e-6   # rotated joint frames are stored as float32
            np.testing.assert_allclose(c[:3], a[:3], atol=tol, err_msg=name)
            assert abs(abs(a[3:] @ c[3:]) - 1.0) < tol, name


def test_export_model_rejects_unexportable_d6_and_bad_arguments(tmp_path):
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3))
    b.add_articulation([b.add_joint_d6(-1, link, angular_axes=[(1, 0, 0), (0, 1, 0), (0, 0, -1)],
                                       label="left_handed")])
    with pytest.raises(NotImplementedError, match=r"'left_handed'.*X, Y, Z order.*right-handed"):
        export_model(b.finalize(), tmp_path / "d6.usda")
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3))
    b.add_articulation([b.add_joint_d6(-1, link, linear_axes=[(1, 0, 0), (0.6, 0.8, 0)], label="skew")])
    with pytest.raises(NotImplementedError, match="'skew'"):
        export_model(b.finalize(), tmp_path / "d6.usda")
    with pytest.raises(TypeError, match="model"):
        export_model(b, tmp_path / "x.usda")
    with pytest.raises(ValueError, match=r"\.usd, \.usda or \.usdc"):
        export_model(b.finalize(), tmp_path / "x.txt")


def _pendulum():
    b = jaxart.ModelBuilder()
    a = b.add_link(mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01, label="upper")
    b.add_shape_capsule(a, radius=0.05, half_height=0.25, xform=((0.25, 0, 0), (0, math.sqrt(0.5), 0, math.sqrt(0.5))),
                        label="upper_geom")
    c = b.add_link(mass=1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01, label="lower")
    b.add_shape_box(c, hx=0.25, hy=0.05, hz=0.05, xform=((0.25, 0, 0), (0, 0, 0, 1)), label="lower_geom")
    b.add_articulation([b.add_joint_revolute(-1, a, axis=(0, 1, 0), parent_xform=((0, 0, 2), (0, 0, 0, 1))),
                        b.add_joint_revolute(a, c, axis=(0, 1, 0), parent_xform=((0.5, 0, 0), (0, 0, 0, 1)))])
    b.add_ground_plane()
    return b.finalize(dtype=F64)


def test_export_trajectory_time_samples_match_body_poses(tmp_path):
    model = _pendulum()
    qs = np.stack([[0.1 * t, -0.05 * t] for t in range(12)])
    fk = jax.jit(jax.vmap(lambda q: jaxart.eval_fk(model, q, model.joint_qd, model.state())))
    traj = fk(jnp.asarray(qs))                         # a State with a leading time axis
    path = tmp_path / "traj.usda"
    out = export_trajectory(model, traj, path, fps=30.0)
    assert out["frames"] == 12
    assert _validation_errors(path) == []
    stage = Usd.Stage.Open(str(path))
    assert stage.GetTimeCodesPerSecond() == 30.0
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (0.0, 11.0)
    assert UsdGeom.GetStageUpAxis(stage) == "Z"
    bq = np.asarray(traj.body_q)
    for i, lab in enumerate(model.body_label):
        prim = stage.GetPrimAtPath(out["bodies"][lab])
        xf = UsdGeom.Xformable(prim)
        assert len(xf.GetOrderedXformOps()[0].GetTimeSamples()) == 12
        for t in (0, 5, 11):
            mat = xf.ComputeLocalToWorldTransform(Usd.TimeCode(t))
            np.testing.assert_allclose(np.asarray(mat.ExtractTranslation()), bq[t, i, :3], atol=1e-12)
            rq = mat.ExtractRotationQuat()
            q = np.array([*rq.GetImaginary(), rq.GetReal()])
            assert abs(abs(q @ bq[t, i, 3:]) - 1.0) < 1e-10
    # shapes are geometry under the body xforms, at their local transforms
    geom = stage.GetPrimAtPath(out["bodies"]["lower"] + "/lower_geom")
    assert geom.IsA(UsdGeom.Cube)
    world = UsdGeom.Xformable(geom).ComputeLocalToWorldTransform(Usd.TimeCode(11))
    expected = bq[11, 1, :3] + jaxart.sim.validate.np_quat_rotate(bq[11, 1, 3:], np.array([0.25, 0, 0]))
    np.testing.assert_allclose(np.asarray(world.ExtractTranslation()), expected, atol=1e-12)
    assert stage.GetPrimAtPath(out["bodies"]["upper"] + "/upper_geom").IsA(UsdGeom.Capsule)
    assert stage.GetPrimAtPath("/World/static/ground_plane").IsA(UsdGeom.Plane)
    # a list of States works too
    states = [jax.tree.map(lambda x, t=t: x[t], traj) for t in range(3)]
    assert export_trajectory(model, states, tmp_path / "list.usdc")["frames"] == 3


def test_export_trajectory_bad_input(tmp_path):
    model = _pendulum()
    with pytest.raises(ValueError, match=r"shape \(T, 2, 7\)"):
        export_trajectory(model, np.zeros((4, 3, 7)), tmp_path / "a.usda")
    with pytest.raises(ValueError, match="fps"):
        export_trajectory(model, np.zeros((4, 2, 7)), tmp_path / "a.usda", fps=0.0)
    with pytest.raises(ValueError, match="non-finite"):
        export_trajectory(model, np.full((4, 2, 7), np.nan), tmp_path / "a.usda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="model"):
            export_trajectory(None, np.zeros((1, 2, 7)), tmp_path / "a.usda")
