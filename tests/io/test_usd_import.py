"""USD import (``ModelBuilder.add_usd``) through usd-core's UsdPhysics parser.

Oracles: MuJoCo C on MJCF twins written here (FK body poses, ``mj_fullM``), hand computations
(units, up axis, scaled colliders, density masses), and the parser's own semantics for topology.
Assets are our own, authored with pxr in the tests (tests/usd_assets.py) or as short USDA text.
"""

import math
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from usd_assets import Link, chain_mjcf, random_link, write_chain

import jaxart
from jaxart.dynamics import eval_mass_matrix

pxr = pytest.importorskip("pxr")
from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics, UsdShade  # noqa: E402

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64


def _stage(mpu: float = 1.0, up: str = "Z"):
    st = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(st, mpu)
    UsdGeom.SetStageUpAxis(st, up)
    return st


def _import(source, **kw):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = b.add_usd(source, **kw)
    msgs = [str(w.message) for w in rec if issubclass(w.category, UserWarning) and "add_usd" in str(w.message)]
    return b, out, msgs


@jax.jit
def _fk(model, q):
    return jaxart.eval_fk(model, q, model.joint_qd, model.state())


def _fk_vs_mujoco(model, m, d, q_jaxart, qpos):
    """Body poses against MuJoCo; 1e-6 because UsdPhysics hands over float32 frames (Gf.Vec3f/Quatf)."""
    d.qpos[:] = qpos
    mujoco.mj_kinematics(m, d)
    st = _fk(model, jnp.asarray(q_jaxart))
    bq = np.asarray(st.body_q)
    for i in range(model.body_count):
        mj = m.body(model.body_label[i].rsplit("/", 1)[-1]).id
        np.testing.assert_allclose(bq[i, :3], d.xpos[mj], atol=1e-6, err_msg=model.body_label[i])
        q = bq[i, 3:]
        assert abs(abs(np.dot([q[3], *q[:3]], d.xquat[mj])) - 1.0) < 1e-12, model.body_label[i]
    return st


def _fixed_chain(rng):
    return [random_link(rng, "base", None, "fixed"),
            random_link(rng, "upper", "base", "revolute", axis="Y"),
            random_link(rng, "slider", "upper", "prismatic", axis="Z"),
            random_link(rng, "wrist", "slider", "d6", d6_free=("transX", "rotY", "rotZ")),
            random_link(rng, "hand", "wrist", "revolute", axis="X")]


def test_fixed_base_chain_fk_and_mass_matrix_vs_mujoco():
    rng = np.random.default_rng(0)
    links = _fixed_chain(rng)
    st = _stage()
    write_chain(st, links)
    b, out, msgs = _import(st)
    assert msgs == []
    assert [b.joint_type[out["joints"][f"/robot/j_{n}"]] for n in ("base", "upper", "slider", "wrist", "hand")] == [
        jaxart.JointType.FIXED, jaxart.JointType.REVOLUTE, jaxart.JointType.PRISMATIC, jaxart.JointType.D6,
        jaxart.JointType.REVOLUTE]
    assert b.joint_dof_dim[out["joints"]["/robot/j_wrist"]] == (1, 2)
    model = b.finalize(dtype=F64)
    m = mujoco.MjModel.from_xml_string(chain_mjcf(links))
    d = mujoco.MjData(m)
    assert m.nq == model.joint_coord_count == 6
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, 6)
        state = _fk_vs_mujoco(model, m, d, q, q)
        mujoco.mj_forward(m, d)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        H = np.asarray(eval_mass_matrix(model, state, include_armature=False)[0])
        np.testing.assert_allclose(H, full, rtol=1e-6, atol=1e-7)
    # masses and inertias as authored (MassAPI, principal axes rotated into body axes)
    for lk in links:
        i = out["bodies"][f"/robot/{lk.name}"]
        assert b.body_mass[i] == pytest.approx(lk.mass, rel=1e-12)
        np.testing.assert_allclose(b.body_com[i], lk.com, atol=1e-12)
        mj = m.body(lk.name).id
        np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(b.body_inertia[i])), np.sort(m.body_inertia[mj]),
                                   rtol=1e-9)


def test_floating_base_with_ball_fk_vs_mujoco_and_floating_flag():
    rng = np.random.default_rng(1)
    root = random_link(rng, "torso", None, None)
    root.root_pose = np.array([0.1, -0.2, 0.8, 0.0, 0.0, math.sin(0.2), math.cos(0.2)])
    links = [root, random_link(rng, "shoulder", "torso", "ball"), random_link(rng, "elbow", "shoulder", "revolute",
                                                                              axis="Z")]
    st = _stage()
    write_chain(st, links)
    b, out, msgs = _import(st)
    assert msgs == []
    j = out["joints"]["/robot/torso/root_joint"]
    assert b.joint_type[j] == jaxart.JointType.FREE and b.joint_articulation[j] == 0
    np.testing.assert_allclose(b.joint_q[:7], root.root_pose, atol=1e-12)   # FREE q from the authored pose
    model = b.finalize(dtype=F64)
    m = mujoco.MjModel.from_xml_string(chain_mjcf(links))
    d = mujoco.MjData(m)
    ball = links[1]
    rc = ball.x_c[3:] / np.linalg.norm(ball.x_c[3:])
    for _ in range(3):
        p, qf, qb = rng.normal(size=3), rng.normal(size=4), rng.normal(size=4)
        qf, qb = qf / np.linalg.norm(qf), qb / np.linalg.norm(qb)
        hinge = rng.uniform(-2, 2)
        # MuJoCo's ball rotates in the child frame: q_mj = r_c q r_c⁻¹ (see usd_assets)
        from jaxart.sim.validate import np_quat_mul
        qmj = np_quat_mul(np_quat_mul(rc, qb), rc * [-1, -1, -1, 1])
        q_jx = np.concatenate([p, qf, qb, [hinge]])
        qpos = np.concatenate([p, [qf[3], *qf[:3]], [qmj[3], *qmj[:3]], [hinge]])
        _fk_vs_mujoco(model, m, d, q_jx, qpos)
    b2, out2, _ = _import(st, floating=False)
    j2 = out2["joints"]["/robot/torso/root_joint"]
    assert b2.joint_type[j2] == jaxart.JointType.FIXED
    np.testing.assert_allclose(b2.joint_X_p[j2], root.root_pose, atol=1e-12)


def test_fixed_root_promoted_to_free_with_floating_true():
    rng = np.random.default_rng(2)
    st = _stage()
    write_chain(st, _fixed_chain(rng)[:2])
    b, out, _ = _import(st, floating=True)
    assert b.joint_type[out["joints"]["/robot/j_base"]] == jaxart.JointType.FREE
    model = b.finalize(dtype=F64)
    s = _fk(model, model.joint_q)
    bq, ref = np.asarray(s.body_q), np.stack(b.body_q)
    np.testing.assert_allclose(bq[:, :3], ref[:, :3], atol=1e-6)                     # FK reproduces the stage
    np.testing.assert_allclose(np.abs(np.sum(bq[:, 3:] * ref[:, 3:], axis=1)), 1.0, atol=1e-9)


def _four_bar(exclude: bool):
    """Planar four-bar in the XZ plane: crank, coupler, rocker hinged about Y; the rocker pin closes the loop."""
    st = _stage()
    z = np.array([0, 0, 0, 0, 0, 0, 1.0])
    links = [Link("crank", None, "revolute", axis="Y", x_p=z.copy(), x_c=np.array([-0.5, 0, 0, 0, 0, 0, 1.0])),
             Link("coupler", "crank", "revolute", axis="Y", x_p=np.array([0.5, 0, 0, 0, 0, 0, 1.0]),
                  x_c=np.array([0, 0, -0.5, 0, 0, 0, 1.0])),
             Link("rocker", "coupler", "revolute", axis="Y", x_p=np.array([0, 0, 0.5, 0, 0, 0, 1.0]),
                  x_c=np.array([0.5, 0, 0, 0, 0, 0, 1.0]))]
    write_chain(st, links)
    pin = UsdPhysics.RevoluteJoint.Define(st, "/robot/pin")
    pin.CreateBody0Rel().SetTargets([Sdf.Path("/robot/rocker")])
    pin.CreateLocalPos0Attr(Gf.Vec3f(-0.5, 0, 0))
    pin.CreateLocalPos1Attr(Gf.Vec3f(0, 0, 1.0))   # world anchor: the ground pivot above the crank pivot
    pin.CreateAxisAttr("Y")
    if exclude:
        pin.CreateExcludeFromArticulationAttr(True)
    return st


def test_four_bar_excluded_loop_joint():
    b, out, msgs = _import(_four_bar(exclude=True))
    assert msgs == []                                    # an excluded loop joint is expected, not reported
    assert out["loop_joints"] == ["/robot/pin"] and out["orphan_joints"] == []
    pin = out["joints"]["/robot/pin"]
    assert b.joint_articulation[pin] == -1 and b.joint_parent[pin] == -1
    assert b.joint_child[pin] == out["bodies"]["/robot/rocker"]
    tree = [out["joints"][f"/robot/j_{n}"] for n in ("crank", "coupler", "rocker")]
    assert [b.joint_articulation[j] for j in tree] == [0, 0, 0]
    model = b.finalize(dtype=F64)                         # loop joints pass validation
    # closed square at q = 0: the rocker's pin sits at the world anchor (0, 0, 1) — hand computation
    s = _fk(model, model.joint_q)
    rocker = np.asarray(s.body_q)[out["bodies"]["/robot/rocker"]]
    np.testing.assert_allclose(rocker[:3] + [-0.5, 0, 0], [0.0, 0.0, 1.0], atol=1e-7)


def test_unmarked_loop_and_orphan_joints_are_reported():
    _, out, msgs = _import(_four_bar(exclude=False))
    assert len(out["loop_joints"]) == 1 and out["loop_joints"][0] in ("/robot/pin", "/robot/j_rocker")
    assert len(msgs) == 1 and out["loop_joints"][0] in msgs[0] and "excludeFromArticulation" in msgs[0]
    st = _stage()
    write_chain(st, _fixed_chain(np.random.default_rng(3))[:3], articulation=False)
    b, out, msgs = _import(st)
    assert len(msgs) == 1 and "orphan" in msgs[0]
    assert all(f"/robot/j_{n}" in msgs[0] for n in ("base", "upper", "slider"))
    assert sorted(out["orphan_joints"]) == ["/robot/j_base", "/robot/j_slider", "/robot/j_upper"]
    with pytest.raises(ValueError, match="orphan|articulation"):
        b.finalize()
    b.finalize(skip_validation_joints=True)


USDA_DRIVES = """#usda 1.0
(
    metersPerUnit = 0.01
    kilogramsPerUnit = 1
    upAxis = "Z"
)
def Xform "r" (prepend apiSchemas = ["PhysicsArticulationRootAPI"])
{
    def Xform "a" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
    {
        float physics:mass = 1
    }
    def Xform "b" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
    {
        float physics:mass = 1
    }
    def Xform "c" (prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"])
    {
        float physics:mass = 1
    }
    def PhysicsRevoluteJoint "hinge" (prepend apiSchemas = ["PhysicsDriveAPI:angular"])
    {
        rel physics:body1 = </r/a>
        uniform token physics:axis = "Z"
        float physics:lowerLimit = -45
        float physics:upperLimit = 90
        float drive:angular:physics:stiffness = 2
        float drive:angular:physics:damping = 0.5
        float drive:angular:physics:targetPosition = 30
        float drive:angular:physics:targetVelocity = 10
        float drive:angular:physics:maxForce = 50000
        float state:angular:physics:position = 20
    }
    def PhysicsPrismaticJoint "slide" (prepend apiSchemas = ["PhysicsDriveAPI:linear"])
    {
        rel physics:body0 = </r/a>
        rel physics:body1 = </r/b>
        uniform token physics:axis = "X"
        float physics:lowerLimit = -5
        float physics:upperLimit = 15
        float drive:linear:physics:stiffness = 300
        float drive:linear:physics:targetPosition = 10
        float drive:linear:physics:maxForce = 700
        uniform token drive:linear:physics:type = "acceleration"
    }
    def PhysicsJoint "gimbal" (prepend apiSchemas = ["PhysicsLimitAPI:transX", "PhysicsLimitAPI:transY",
        "PhysicsLimitAPI:transZ", "PhysicsLimitAPI:rotX", "PhysicsDriveAPI:rotY"])
    {
        rel physics:body0 = </r/b>
        rel physics:body1 = </r/c>
        float limit:transX:physics:low = 1
        float limit:transX:physics:high = -1
        float limit:transY:physics:low = 1
        float limit:transY:physics:high = -1
        float limit:transZ:physics:low = -2
        float limit:transZ:physics:high = 3
        float limit:rotX:physics:low = -10
        float limit:rotX:physics:high = 20
        float drive:rotY:physics:stiffness = 1
        float state:rotX:physics:position = 5
    }
}
"""


def test_drives_limits_units_and_d6_axes():
    b, out, msgs = _import(USDA_DRIVES)
    deg = math.pi / 180
    dof = b.joint_dof
    h = b.joint_qd_start[out["joints"]["/r/hinge"]]
    assert (dof["limit_lower"][h], dof["limit_upper"][h]) == pytest.approx((-45 * deg, 90 * deg))
    # stiffness per degree → per radian; the angular force unit is kg·(0.01 m)²/s²·m ... = 1e-4 N·m
    assert dof["target_ke"][h] == pytest.approx(2 / deg * 1e-4)
    assert dof["target_kd"][h] == pytest.approx(0.5 / deg * 1e-4)
    assert b.joint_target_q[b.joint_q_start[out["joints"]["/r/hinge"]]] == pytest.approx(30 * deg)
    assert dof["target_qd"][h] == pytest.approx(10 * deg)
    assert dof["effort_limit"][h] == pytest.approx(50000 * 1e-4)
    assert b.joint_q[b.joint_q_start[out["joints"]["/r/hinge"]]] == pytest.approx(20 * deg)
    assert b.joint_target_mode[h] == jaxart.JointTargetMode.POSITION_VELOCITY
    s = b.joint_qd_start[out["joints"]["/r/slide"]]
    assert (dof["limit_lower"][s], dof["limit_upper"][s]) == pytest.approx((-0.05, 0.15))
    assert dof["target_ke"][s] == pytest.approx(300.0)          # kg/s² is unit-free in length
    assert dof["effort_limit"][s] == pytest.approx(7.0)          # 700 kg·cm/s² = 7 N
    g = out["joints"]["/r/gimbal"]
    assert b.joint_type[g] == jaxart.JointType.D6 and b.joint_dof_dim[g] == (1, 3)
    gs = b.joint_qd_start[g]
    np.testing.assert_allclose(np.stack(b.joint_axis[gs:gs + 4]), [[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert (dof["limit_lower"][gs], dof["limit_upper"][gs]) == pytest.approx((-0.02, 0.03))
    assert (dof["limit_lower"][gs + 1], dof["limit_upper"][gs + 1]) == pytest.approx((-10 * deg, 20 * deg))
    assert dof["limit_upper"][gs + 2] == 1e10 and dof["target_ke"][gs + 2] == pytest.approx(1e-4 / deg)
    assert b.joint_q[b.joint_q_start[g] + 1] == pytest.approx(5 * deg)
    assert len(msgs) == 1 and "/r/slide" in msgs[0] and "acceleration" in msgs[0]


def _body_with(st, path, xform_ops=None):
    x = UsdGeom.Xform.Define(st, path)
    for kind, value in (xform_ops or []):
        getattr(x, f"Add{kind}Op")().Set(value)
    UsdPhysics.RigidBodyAPI.Apply(x.GetPrim())
    UsdPhysics.ArticulationRootAPI.Apply(x.GetPrim())
    return x


def test_units_up_axis_scaled_colliders_and_density_mass():
    st = _stage(mpu=0.01, up="Y")
    UsdPhysics.Scene.Define(st, "/scene")
    outer = UsdGeom.Xform.Define(st, "/w")
    outer.AddScaleOp().Set(Gf.Vec3f(2, 2, 2))
    _body_with(st, "/w/body", [("Translate", Gf.Vec3d(0, 10, 0))])
    cube = UsdGeom.Cube.Define(st, "/w/body/box")
    cube.CreateSizeAttr(10.0)
    cube.AddTranslateOp().Set(Gf.Vec3d(5, 0, 0))
    cube.AddScaleOp().Set(Gf.Vec3f(1, 2, 1))
    UsdPhysics.CollisionAPI.Apply(cube.GetPrim())
    cap = UsdGeom.Capsule.Define(st, "/w/body/cap")
    cap.CreateRadiusAttr(1.0)
    cap.CreateHeightAttr(4.0)
    cap.CreateAxisAttr("X")
    UsdPhysics.CollisionAPI.Apply(cap.GetPrim())
    b, out, msgs = _import(st)
    assert msgs == []
    assert b.gravity == pytest.approx(-9.81, rel=1e-6)            # 981 cm/s² along -Y → builder -Z
    i = out["bodies"]["/w/body"]
    # stage (0, 20, 0) cm with Y up → (0, 0, 0.2) m with Z up
    np.testing.assert_allclose(b.body_q[i][:3], [0, 0, 0.2], atol=1e-12)
    box = out["shapes"]["/w/body/box"]
    np.testing.assert_allclose(b.shape_scale[box], [0.1, 0.2, 0.1], rtol=1e-6)   # size 10 cm × scales 2·(1,2,1)
    np.testing.assert_allclose(b.shape_transform[box][:3], [0.1, 0, 0], atol=1e-9)
    c = out["shapes"]["/w/body/cap"]
    np.testing.assert_allclose(b.shape_scale[c][:2], [0.02, 0.04], rtol=1e-6)   # radius 1, height 4 units, ×2
    axis = jaxart.sim.validate.np_quat_rotate(b.shape_transform[c][3:], np.array([0.0, 0.0, 1.0]))
    np.testing.assert_allclose(np.abs(axis), [1, 0, 0], atol=1e-9)
    # default density 1000 kg/m³: box 0.2·0.4·0.2 m³ plus capsule (π r² 2h + 4/3 π r³) — hand computation
    r, hh = 0.02, 0.04
    expected = 1000 * (0.2 * 0.4 * 0.2 + math.pi * r * r * 2 * hh + 4 / 3 * math.pi * r ** 3)
    assert b.body_mass[i] == pytest.approx(expected, rel=1e-5)


def test_sphere_under_nonuniform_scale_is_reported():
    st = _stage()
    _body_with(st, "/b", [("Scale", Gf.Vec3f(1, 1, 3))])
    s = UsdGeom.Sphere.Define(st, "/b/s")
    UsdPhysics.CollisionAPI.Apply(s.GetPrim())
    _, _, msgs = _import(st)
    assert len(msgs) == 1 and "'/b/s'" in msgs[0] and "non-uniform" in msgs[0]


def test_materials_collision_groups_and_filtered_pairs():
    st = _stage()
    shapes = {}
    for k, name in enumerate(("a", "b", "c")):
        _body_with(st, f"/{name}", [("Translate", Gf.Vec3d(k, 0, 0))])
        g = UsdGeom.Sphere.Define(st, f"/{name}/geom")
        g.CreateRadiusAttr(0.1)
        UsdPhysics.CollisionAPI.Apply(g.GetPrim())
        shapes[name] = g.GetPrim()
    mat = UsdShade.Material.Define(st, "/mat")
    api = UsdPhysics.MaterialAPI.Apply(mat.GetPrim())
    api.CreateStaticFrictionAttr(0.7)
    api.CreateDynamicFrictionAttr(0.7)
    api.CreateRestitutionAttr(0.3)
    UsdShade.MaterialBindingAPI.Apply(shapes["a"]).Bind(mat, UsdShade.Tokens.weakerThanDescendants, "physics")
    grp = UsdPhysics.CollisionGroup.Define(st, "/group")
    grp.GetCollidersCollectionAPI().CreateIncludesRel().SetTargets([Sdf.Path("/a/geom"), Sdf.Path("/b/geom")])
    grp.CreateFilteredGroupsRel().SetTargets([Sdf.Path("/group")])     # members never collide with each other
    UsdPhysics.FilteredPairsAPI.Apply(st.GetPrimAtPath("/c")).CreateFilteredPairsRel().SetTargets(
        [Sdf.Path("/a")])
    b, out, msgs = _import(st)
    assert msgs == []
    sa, sb, sc = (out["shapes"][f"/{n}/geom"] for n in "abc")
    assert b.shape_cfg[sa].mu == pytest.approx(0.7) and b.shape_cfg[sa].restitution == pytest.approx(0.3)
    assert b.shape_cfg[sb].mu == b.default_shape_cfg.mu
    assert sorted(b.shape_collision_filter_pairs) == sorted([tuple(sorted((sa, sb))), tuple(sorted((sa, sc)))])
    # three floating bodies, each its own articulation with a FREE joint
    assert [b.joint_type[j] for j in range(b.joint_count)] == [jaxart.JointType.FREE] * 3


def test_each_joint_type_spherical_distance_fixed():
    st = _stage()
    root = UsdGeom.Xform.Define(st, "/art")
    UsdPhysics.ArticulationRootAPI.Apply(root.GetPrim())
    for n in ("p", "s", "d"):      # the parser collects an articulation's bodies below its root prim
        _body_with(st, f"/art/{n}").GetPrim().RemoveAPI(UsdPhysics.ArticulationRootAPI)
    j = UsdPhysics.FixedJoint.Define(st, "/art/fix")
    j.CreateBody1Rel().SetTargets([Sdf.Path("/art/p")])
    sj = UsdPhysics.SphericalJoint.Define(st, "/art/sph")
    sj.CreateBody0Rel().SetTargets([Sdf.Path("/art/p")])
    sj.CreateBody1Rel().SetTargets([Sdf.Path("/art/s")])
    sj.CreateConeAngle0LimitAttr(30.0)
    sj.CreateConeAngle1LimitAttr(30.0)
    dj = UsdPhysics.DistanceJoint.Define(st, "/art/dist")
    dj.CreateBody0Rel().SetTargets([Sdf.Path("/art/s")])
    dj.CreateBody1Rel().SetTargets([Sdf.Path("/art/d")])
    dj.CreateMinDistanceAttr(0.5)
    dj.CreateMaxDistanceAttr(2.0)
    b, out, msgs = _import(st)
    types = {p: jaxart.JointType(b.joint_type[i]) for p, i in out["joints"].items()}
    assert types == {"/art/fix": jaxart.JointType.FIXED, "/art/sph": jaxart.JointType.BALL,
                     "/art/dist": jaxart.JointType.DISTANCE}
    assert out["orphan_joints"] == [] and out["articulations"] == [0]
    d0 = b.joint_qd_start[out["joints"]["/art/dist"]]
    assert (b.joint_dof["limit_lower"][d0], b.joint_dof["limit_upper"][d0]) == pytest.approx((0.5, 2.0))
    assert len(msgs) == 1 and "/art/sph" in msgs[0] and "cone" in msgs[0] and "orphan" not in msgs[0]
    b.finalize()


def test_strict_and_label_prefix():
    with pytest.raises(ValueError, match="strict=True.*acceleration"):
        jaxart.ModelBuilder().add_usd(USDA_DRIVES, strict=True)
    b, _, _ = _import(USDA_DRIVES)
    with pytest.raises(ValueError, match="already exist.*label_prefix"):
        b.add_usd(USDA_DRIVES)
    with pytest.warns(UserWarning):
        out = b.add_usd(USDA_DRIVES, label_prefix="second")
    assert "second/r/a" in b.body_label and out["bodies"]["/r/a"] == b.body_label.index("second/r/a")


@pytest.mark.parametrize("source, match", [
    ("/nonexistent/robot.usda", "does not exist"),
    ("#usda 1.0\ndef Xform \"a\" {\n  double x = \n}\n", "could not open"),
    ("#usda 1.0\ndef PhysxGearJoint \"gear\"\n{\n}\n", "unknown joint type.*'/gear'.*PhysxGearJoint"),
    ("#usda 1.0\ndef Xform \"a\" (prepend apiSchemas = [\"PhysicsRigidBodyAPI\"])\n{\n}\n"
     "def PhysicsRevoluteJoint \"j\"\n{\n  rel physics:body0 = </a>\n  rel physics:body1 = </missing>\n}\n",
     "joint '/j': body1 target '/missing' does not exist"),
    ("#usda 1.0\ndef Xform \"a\" (prepend apiSchemas = [\"PhysicsRigidBodyAPI\"])\n{\n}\n"
     "def PhysicsFixedJoint \"j\"\n{\n  rel physics:body0 = </a>\n  rel physics:body1 = </a>\n}\n",
     "joint '/j' connects body '/a' to itself"),
    ("#usda 1.0\ndef Xform \"a\"\n{\n}\n"
     "def PhysicsFixedJoint \"j\"\n{\n  rel physics:body0 = </a>\n}\n", "joint '/j' connects no rigid body"),
])
def test_bad_input_raises_value_error_naming_the_element(source, match):
    with pytest.raises(ValueError, match=match):
        jaxart.ModelBuilder().add_usd(source)


def test_bad_argument_types():
    with pytest.raises(TypeError, match="source"):
        jaxart.ModelBuilder().add_usd(3)
    with pytest.raises(TypeError, match="floating"):
        jaxart.ModelBuilder().add_usd(USDA_DRIVES, floating="yes")


def test_xform_places_the_stage_and_non_body_joint_targets_anchor_the_world_side():
    rng = np.random.default_rng(4)
    links = _fixed_chain(rng)[:3]
    st = _stage()
    write_chain(st, links)
    frame = UsdGeom.Xform.Define(st, "/frame")                     # a static, non-body prim
    frame.AddTranslateOp().Set(Gf.Vec3d(0.0, 0.0, 1.0))
    root = UsdPhysics.FixedJoint.Get(st, "/robot/j_base")
    root.CreateBody0Rel().SetTargets([Sdf.Path("/frame")])         # localPos0 now relative to /frame
    b0, out0, _ = _import(st)
    x = np.array([0.5, -1.0, 0.25, 0.0, 0.0, math.sin(0.35), math.cos(0.35)])
    b1, out1, _ = _import(st, xform=x)
    from jaxart.sim.validate import np_transform_mul
    j = out0["joints"]["/robot/j_base"]
    shifted = links[0].x_p.copy()
    shifted[2] += 1.0
    np.testing.assert_allclose(b0.joint_X_p[j][:3], shifted[:3], atol=1e-6)
    np.testing.assert_allclose(b1.joint_X_p[j], np_transform_mul(x, b0.joint_X_p[j]), atol=1e-12)
    m0, m1 = b0.finalize(dtype=F64), b1.finalize(dtype=F64)
    q = jnp.asarray(rng.uniform(-1, 1, m0.joint_coord_count))
    p0, p1 = np.asarray(_fk(m0, q).body_q), np.asarray(_fk(m1, q).body_q)
    for i in range(m0.body_count):
        np.testing.assert_allclose(p1[i], np_transform_mul(x, p0[i]), atol=1e-12)


def test_density_and_mesh_collider_masses_by_hand():
    st = _stage()
    body = _body_with(st, "/b")
    UsdPhysics.MassAPI.Apply(body.GetPrim()).CreateDensityAttr(500.0)
    cube = UsdGeom.Cube.Define(st, "/b/box")
    cube.CreateSizeAttr(0.2)
    UsdPhysics.CollisionAPI.Apply(cube.GetPrim())
    mesh = UsdGeom.Mesh.Define(st, "/b/tet")                        # unit right tetrahedron scaled by (1, 2, 3)
    mesh.CreatePointsAttr([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)])
    mesh.CreateFaceVertexCountsAttr([3, 3, 3, 3])
    mesh.CreateFaceVertexIndicesAttr([0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3])
    mesh.AddTranslateOp().Set(Gf.Vec3d(1.0, 0.0, 0.0))
    mesh.AddScaleOp().Set(Gf.Vec3f(1, 2, 3))
    UsdPhysics.CollisionAPI.Apply(mesh.GetPrim())
    UsdPhysics.MeshCollisionAPI.Apply(mesh.GetPrim()).CreateApproximationAttr("convexHull")
    b, out, msgs = _import(st)
    assert msgs == []
    m_box, m_tet = 500 * 0.2 ** 3, 500 * (1 * 2 * 3) / 6
    i = out["bodies"]["/b"]
    assert b.body_mass[i] == pytest.approx(m_box + m_tet, rel=1e-5)
    # COM: box at the origin, tetrahedron centroid (1 + 1/4, 2/4, 3/4)
    np.testing.assert_allclose(b.body_com[i], np.array([1.25, 0.5, 0.75]) * m_tet / (m_box + m_tet), rtol=1e-5)
    s = out["shapes"]["/b/tet"]
    assert b.shape_type[s] == jaxart.GeoType.MESH
    np.testing.assert_allclose(b.shape_scale[s], [1, 2, 3])
    np.testing.assert_allclose(b.shape_source[s].vertices[1], [1, 0, 0])


def test_posed_bodies_without_joint_state_are_reported():
    st = _stage()
    write_chain(st, _fixed_chain(np.random.default_rng(5))[:3])
    op = UsdGeom.Xformable(st.GetPrimAtPath("/robot/slider")).GetOrderedXformOps()[0]
    op.Set(op.Get() + Gf.Vec3d(0.0, 0.0, 0.1))           # moved along no joint axis, no state authored
    _, _, msgs = _import(st)
    assert len(msgs) == 1 and "/robot/j_slider" in msgs[0] and "disagree" in msgs[0]
    assert "/robot/j_upper" not in msgs[0]


def test_world_as_body1_flips_one_dof_joints_and_rejects_mixed_d6():
    st = _stage()
    _body_with(st, "/a")
    j = UsdPhysics.RevoluteJoint.Define(st, "/a/hinge")        # body0 = the body, body1 = the world
    j.CreateBody0Rel().SetTargets([Sdf.Path("/a")])
    j.CreateAxisAttr("Z")
    UsdPhysics.RigidBodyAPI(st.GetPrimAtPath("/a")).CreateKinematicEnabledAttr(True)
    b, out, _ = _import(st)
    k = out["joints"]["/a/hinge"]
    assert b.joint_parent[k] == -1 and b.joint_child[k] == out["bodies"]["/a"]
    np.testing.assert_allclose(b.joint_axis[b.joint_qd_start[k]], [0, 0, -1])   # child moves by −q about +Z
    assert b.body_flags[out["bodies"]["/a"]] == jaxart.BodyFlags.KINEMATIC
    d6 = UsdPhysics.Joint.Define(st, "/a/gimbal")
    d6.CreateBody0Rel().SetTargets([Sdf.Path("/a")])
    j.GetPrim().SetActive(False)
    fresh = jaxart.ModelBuilder()
    with pytest.raises(NotImplementedError, match="'/a/gimbal'.*both linear and angular axes"):
        fresh.add_usd(st)
    assert fresh.body_count == 0                                  # raised before touching the builder


@pytest.mark.parametrize("free", [("rotX", "rotY", "rotZ"), ("transX", "transZ")])
def test_world_as_body1_reverses_multi_axis_d6(free):
    """body1 = the world: the body moves by the inverse of the authored D6 motion (closed form)."""
    from jaxart.sim.validate import np_quat_mul, np_transform_inverse, np_transform_mul

    st = _stage()
    _body_with(st, "/a")
    j = UsdPhysics.Joint.Define(st, "/a/d6")                      # body0 = the body, body1 = the world
    j.CreateBody0Rel().SetTargets([Sdf.Path("/a")])
    l0 = np.array([0.25, -0.5, 0.125, 0.5, 0.5, 0.5, 0.5])
    l1 = np.array([0.0, 0.375, 1.0, 0.0, 0.0, 0.0, 1.0])
    j.CreateLocalPos0Attr(Gf.Vec3f(*l0[:3]))
    j.CreateLocalRot0Attr(Gf.Quatf(l0[6], *l0[3:6]))
    j.CreateLocalPos1Attr(Gf.Vec3f(*l1[:3]))
    for name in ("transX", "transY", "transZ", "rotX", "rotY", "rotZ"):
        if name not in free:
            lim = UsdPhysics.LimitAPI.Apply(j.GetPrim(), name)
            lim.CreateLowAttr(1.0)
            lim.CreateHighAttr(-1.0)
    b, out, _ = _import(st)
    k = out["joints"]["/a/d6"]
    assert b.joint_parent[k] == -1 and b.joint_type[k] == jaxart.JointType.D6
    model = b.finalize(dtype=F64)
    q = np.array([0.3, -0.7, 1.1])[:len(free)]
    # authored motion J(q): translation along the free axes, then rotations in the order X, Y, Z
    trans = sum((q[i] * np.eye(3)["XYZ".index(n[-1])] for i, n in enumerate(free) if n.startswith("trans")),
                np.zeros(3))
    rot = np.array([0.0, 0.0, 0.0, 1.0])
    for i, n in enumerate(free):
        if n.startswith("rot"):
            rot = np_quat_mul(rot, np.concatenate([np.eye(3)["XYZ".index(n[-1])] * math.sin(q[i] / 2),
                                                   [math.cos(q[i] / 2)]]))
    motion = np.concatenate([trans, rot])
    # body1 (world) = body0 · L0 · J(q) · L1⁻¹  ⇒  body0 = L1 · J(q)⁻¹ · L0⁻¹
    expect = np_transform_mul(np_transform_mul(l1, np_transform_inverse(motion)), np_transform_inverse(l0))
    # jaxart's coordinates: the same values, angular ones in reverse order
    q_jax = q if free[0].startswith("trans") else q[::-1]
    got = np.asarray(_fk(model, jnp.asarray(q_jax)).body_q)[out["bodies"]["/a"]]
    np.testing.assert_allclose(got[:3], expect[:3], atol=1e-12)
    assert abs(abs(got[3:] @ expect[3:]) - 1.0) < 1e-12


def _carrier():
    """A host builder with one hinged body the stage gets attached to."""
    b = jaxart.ModelBuilder()
    c = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1, label="carrier")
    b.add_articulation([b.add_joint_revolute(-1, c, axis=(0, 0, 1), parent_xform=((0.3, 0, 0.5), (0, 0, 0, 1)),
                                             label="carrier_hinge")])
    b.add_shape_sphere(c, radius=0.05, label="carrier_geom")
    return b, c


def test_parent_body_attaches_the_stage_world_and_base_joint_replaces_root_joints():
    from jaxart.sim.validate import np_transform_mul

    rng = np.random.default_rng(6)
    links = _fixed_chain(rng)[:3]
    st = _stage()
    write_chain(st, links)
    _body_with(st, "/loose", [("Translate", Gf.Vec3d(0.2, 0.1, 0.3))])       # a floating root
    UsdGeom.Sphere.Define(st, "/loose/geom").CreateRadiusAttr(0.1)
    UsdPhysics.CollisionAPI.Apply(st.GetPrimAtPath("/loose/geom"))
    UsdPhysics.CollisionAPI.Apply(UsdGeom.Cube.Define(st, "/static_box").GetPrim())  # a static collider
    x = np.array([0.1, -0.2, 0.3, 0.0, math.sin(0.2), 0.0, math.cos(0.2)])
    alone, out0, _ = _import(st, xform=x)
    host, carrier = _carrier()
    carrier_mass = host.body_mass[carrier]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        out = host.add_usd(st, xform=x, parent_body=carrier)
    root, loose = out["joints"]["/robot/j_base"], out["joints"]["/loose/root_joint"]
    assert host.joint_parent[root] == carrier and host.joint_type[root] == jaxart.JointType.FIXED
    assert host.joint_parent[loose] == carrier and host.joint_type[loose] == jaxart.JointType.FIXED
    assert alone.joint_type[out0["joints"]["/loose/root_joint"]] == jaxart.JointType.FREE
    box = out["shapes"]["/static_box"]
    assert host.shape_body[box] == carrier and host.body_mass[carrier] == carrier_mass   # static: no mass added
    np.testing.assert_allclose(host.shape_transform[box], alone.shape_transform[out0["shapes"]["/static_box"]],
                               atol=1e-12)
    # FK: the attached stage is the standalone import moved rigidly with the carrier
    m_host, m_alone = host.finalize(dtype=F64), alone.finalize(dtype=F64)
    for _ in range(2):
        q = rng.uniform(-1.0, 1.0, m_host.joint_coord_count)
        q_alone = np.asarray(m_alone.joint_q, dtype=np.float64).copy()
        for path, j in out0["joints"].items():
            if alone.joint_type[j] != jaxart.JointType.FREE:
                n = sum(alone.joint_dof_dim[j])
                q_alone[alone.joint_q_start[j]:alone.joint_q_start[j] + n] = \
                    q[host.joint_q_start[out["joints"][path]]:host.joint_q_start[out["joints"][path]] + n]
        p_host, p_alone = np.asarray(_fk(m_host, jnp.asarray(q)).body_q), np.asarray(_fk(m_alone, q_alone).body_q)
        x_carrier = p_host[carrier]
        for path, i in out0["bodies"].items():
            if path == "/loose":
                continue
            np.testing.assert_allclose(p_host[out["bodies"][path]], np_transform_mul(x_carrier, p_alone[i]),
                                       atol=1e-10, err_msg=path)
        expect = np_transform_mul(x_carrier, alone.body_q[out0["bodies"]["/loose"]])
        np.testing.assert_allclose(p_host[out["bodies"]["/loose"]], expect, atol=1e-10)
    # base_joint replaces the stage's joint to the world (and gives floating roots the same joint)
    hinge = [jaxart.ModelBuilder.JointDofConfig(axis=(0, 0, 1))]
    host2, carrier2 = _carrier()
    out2 = host2.add_usd(st, parent_body=carrier2, base_joint={"joint_type": jaxart.JointType.REVOLUTE,
                                                               "angular_axes": hinge})
    assert "/robot/j_base" not in out2["joints"]
    for r in ("/robot/base/root_joint", "/loose/root_joint"):
        j = out2["joints"][r]
        assert host2.joint_type[j] == jaxart.JointType.REVOLUTE and host2.joint_parent[j] == carrier2, r
    assert host2.body_label[host2.joint_child[out2["joints"]["/robot/base/root_joint"]]] == "/robot/base"
    host2.finalize()
    # Newton's rules on the combination of floating / base_joint / parent_body
    with pytest.raises(ValueError, match="floating=True needs parent_body=-1"):
        _carrier()[0].add_usd(st, floating=True, parent_body=0)
    with pytest.raises(ValueError, match="mutually exclusive"):
        jaxart.ModelBuilder().add_usd(st, floating=False, base_joint={})
    with pytest.raises(ValueError, match="parent_body: body index 3 does not exist"):
        jaxart.ModelBuilder().add_usd(st, parent_body=3)
    with pytest.raises(ValueError, match="base_joint must not set 'label'"):
        jaxart.ModelBuilder().add_usd(st, base_joint={"label": "x"})


def test_enable_self_collisions_filters_within_each_articulation():
    st = _stage()
    for root in ("/r1", "/r2"):
        links = [Link("a", None, "fixed"), Link("b", "a", "revolute", axis="Y"), Link("c", "b", "revolute")]
        write_chain(st, links, root=root)
        for lk in links:
            g = UsdGeom.Sphere.Define(st, f"{root}/{lk.name}/geom")
            g.CreateRadiusAttr(0.1)
            UsdPhysics.CollisionAPI.Apply(g.GetPrim())
    on, out_on, _ = _import(st)
    assert on.shape_collision_filter_pairs == []
    off, out, _ = _import(st, enable_self_collisions=False)
    s = {(r, n): out["shapes"][f"{r}/{n}/geom"] for r in ("/r1", "/r2") for n in "abc"}
    within = {tuple(sorted((s[r, m], s[r, n]))) for r in ("/r1", "/r2") for m, n in (("a", "b"), ("a", "c"),
                                                                                      ("b", "c"))}
    assert set(off.shape_collision_filter_pairs) == within and len(off.shape_collision_filter_pairs) == 6
    # an authored flag on the articulation root wins over the argument
    st.GetPrimAtPath("/r2").CreateAttribute("physxArticulation:enabledSelfCollisions",
                                            Sdf.ValueTypeNames.Bool).Set(True)
    st.GetPrimAtPath("/r1").CreateAttribute("newton:selfCollisionEnabled", Sdf.ValueTypeNames.Bool).Set(False)
    mixed, out_m, _ = _import(st, enable_self_collisions=False)
    assert {mixed.body_label[mixed.shape_body[p]].split("/")[1] for pair in mixed.shape_collision_filter_pairs
            for p in pair} == {"r1"} and len(mixed.shape_collision_filter_pairs) == 3
    on2, _, _ = _import(st)
    assert len(on2.shape_collision_filter_pairs) == 3                     # /r1 says False
