"""URDF import (``ModelBuilder.add_urdf``) checked against MuJoCo's URDF compiler and hand computations."""

from __future__ import annotations

import os
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
import trimesh
from helpers import TEST_ASSETS

import jaxart
from jaxart.io.urdf.parse import quat_from_rpy
from jaxart.sim.validate import np_quat_rotate, np_quat_to_matrix, np_transform_mul

jax.config.update("jax_enable_x64", True)

ASSETS = os.path.join(TEST_ASSETS, "urdf")
ARM = os.path.join(ASSETS, "arm.urdf")
PKG = os.path.join(ASSETS, "jaxart_test_description")
GRIPPER = os.path.join(PKG, "urdf", "gripper.urdf")
MJ_COMPILER = '<mujoco><compiler fusestatic="false" discardvisual="true" balanceinertia="false"/></mujoco>'


def _import(source, **kw):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = b.add_urdf(source, **kw)
    return b, res


def _mujoco(path, *, free_root=False):
    """MuJoCo's compile of the same URDF (no static-body fusion; optionally a free joint on the root)."""
    xml = open(path).read()
    xml = xml.replace('<robot name="test_arm">', '<robot name="test_arm">' + MJ_COMPILER, 1)
    spec = mujoco.MjSpec.from_string(xml)
    if free_root:
        spec.worldbody.first_body().add_freejoint()
    return spec.compile()


@jax.jit
def _fk(model, q):
    return jaxart.eval_fk(model, q, jnp.zeros(model.joint_dof_count, q.dtype)).body_q


@jax.jit
def _fk_and_mass(model, q):
    st = jaxart.eval_fk(model, q, jnp.zeros(model.joint_dof_count, q.dtype))
    return st.body_q, jaxart.eval_mass_matrix(model, st.replace(joint_q=q))[0]


def _rotation(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _mj_to_jaxart_velocity(m, d, res, b, floating):
    """Matrix T with ``qd_jaxart = T qvel_mujoco`` (FREE root: COM velocity and ω in the world frame)."""
    nv = m.nv
    t = np.zeros((b.joint_dof_count, nv))
    for name in [m.joint(j).name for j in range(m.njnt) if m.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE]:
        t[b.joint_qd_start[res["joints"][name]], m.joint(name).dofadr[0]] = 1.0
    if floating:
        r = np_quat_to_matrix(d.qpos[[4, 5, 6, 3]])
        com = r @ m.body_ipos[1]
        t[0:3, 0:3] = np.eye(3)
        t[0:3, 3:6] = -np.array([[0, -com[2], com[1]], [com[2], 0, -com[0]], [-com[1], com[0], 0]]) @ r
        t[3:6, 3:6] = r
    return t


@pytest.mark.parametrize("floating", [False, True])
def test_fk_and_mass_matrix_match_mujoco(floating):
    b, res = _import(ARM, floating=floating or None)
    m = _mujoco(ARM, free_root=floating)
    model = b.finalize(dtype=jnp.float64)
    assert np.isclose(sum(b.body_mass), mujoco.mj_getTotalmass(m), rtol=1e-12)
    rng = np.random.default_rng(0)
    d = mujoco.MjData(m)
    for _ in range(3):
        d.qpos[:] = 0.0
        q = np.asarray(b.joint_q, dtype=np.float64).copy()
        if floating:
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            pos = rng.uniform(-1, 1, 3)
            d.qpos[:7] = np.concatenate([pos, quat])
            q[:7] = np.concatenate([pos, quat[[1, 2, 3, 0]]])
        for j in range(m.njnt):
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                continue
            lo, hi = m.jnt_range[j] if m.jnt_limited[j] else (-3.0, 3.0)
            d.qpos[m.jnt_qposadr[j]] = q[b.joint_q_start[res["joints"][m.joint(j).name]]] = rng.uniform(lo, hi)
        mujoco.mj_forward(m, d)
        body_q, h = (np.asarray(x) for x in _fk_and_mass(model, jnp.asarray(q)))
        for i in range(1, m.nbody):
            k = res["bodies"][m.body(i).name]
            np.testing.assert_allclose(body_q[k, :3], d.xpos[i], atol=1e-10)
            r = np_quat_to_matrix(body_q[k, 3:])
            np.testing.assert_allclose(r, d.xmat[i].reshape(3, 3), atol=1e-10)
            np.testing.assert_allclose(body_q[k, :3] + r @ b.body_com[k], d.xipos[i], atol=1e-10)
            r_mj = d.ximat[i].reshape(3, 3)
            np.testing.assert_allclose(r @ b.body_inertia[k] @ r.T, r_mj @ np.diag(m.body_inertia[i]) @ r_mj.T,
                                       atol=1e-12)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        t = _mj_to_jaxart_velocity(m, d, res, b, floating)
        np.testing.assert_allclose(t.T @ h[:b.joint_dof_count, :b.joint_dof_count] @ t, full, atol=1e-10)
        if not floating:
            _check_arm_by_hand(b, res, q, body_q, h)


def _check_arm_by_hand(b, res, q, body_q, h):
    """Hand computations on the fixed-base arm: the first link's pose and the leaf joints' diagonal of H."""
    yaw = q[b.joint_q_start[res["joints"]["shoulder_yaw"]]]
    k = res["bodies"]["shoulder"]
    np.testing.assert_allclose(body_q[k, :3], [0.01, 0.02, 0.1], atol=1e-14)
    np.testing.assert_allclose(np_quat_to_matrix(body_q[k, 3:]), _rotation([0, 0, 1], 0.3 + yaw), atol=1e-14)
    for joint, link, axis in (("wrist", "hand", (0.6, 0, 0.8)), ("side", "side_arm", (0, 1, 0))):
        k, d = res["bodies"][link], b.joint_qd_start[res["joints"][joint]]
        r = np_quat_to_matrix(body_q[k, 3:])
        a = r @ np.asarray(axis)  # the leaf link's frame is its joint frame
        lever = r @ b.body_com[k]  # COM relative to the joint anchor (the link origin)
        expected = a @ (r @ b.body_inertia[k] @ r.T) @ a + b.body_mass[k] * np.sum(np.cross(a, lever) ** 2)
        assert np.isclose(h[d, d], expected, rtol=1e-12), joint


def test_mapping_of_joint_and_link_attributes():
    b, res = _import(ARM)
    j = res["joints"]
    assert b.joint_label[j["shoulder_yaw"]] == "shoulder_yaw" and b.body_label[res["bodies"]["hand"]] == "hand"
    assert b.articulation_label == ["test_arm"]
    assert [jaxart.JointType(b.joint_type[j[n]]).name for n in ("fixed_base", "shoulder_yaw", "shoulder_pitch",
                                                                 "extend", "mount")] == \
        ["FIXED", "REVOLUTE", "REVOLUTE", "PRISMATIC", "FIXED"]
    d = {k: np.asarray(v) for k, v in b.joint_dof.items()}
    yaw, pitch, ext = (b.joint_qd_start[j[n]] for n in ("shoulder_yaw", "shoulder_pitch", "extend"))
    assert (d["limit_lower"][yaw], d["limit_upper"][yaw], d["effort_limit"][yaw], d["velocity_limit"][yaw]) == \
        (-2.5, 2.5, 40.0, 3.0)
    assert (d["damping"][yaw], d["friction"][yaw], d["damping"][ext]) == (0.5, 0.1, 2.0)
    assert d["limit_lower"][pitch] == -1e10 and d["limit_upper"][pitch] == 1e10  # continuous
    np.testing.assert_allclose(b.joint_axis[yaw], [0, 0, 1])
    np.testing.assert_allclose(b.joint_axis[pitch], np.array([0.1, 1, 0.2]) / np.linalg.norm([0.1, 1, 0.2]))
    assert b.joint_target_mode[yaw] == int(jaxart.JointTargetMode.POSITION)
    # inertial origin rpy: tensor rotated into link axes, COM at the inertial origin
    k = res["bodies"]["shoulder"]
    i_frame = np.array([[0.011, 0.001, -0.002], [0.001, 0.013, 0.0015], [-0.002, 0.0015, 0.008]])
    rpy_r = _rotation([0, 0, 1], 0.5) @ _rotation([0, 1, 0], -0.2) @ _rotation([1, 0, 0], 0.3)
    np.testing.assert_allclose(b.body_inertia[k], rpy_r @ i_frame @ rpy_r.T, atol=1e-15)
    np.testing.assert_allclose(b.body_com[k], [0.01, -0.02, 0.1])
    assert b.body_mass[k] == 1.5
    # joint_damping_mode="drive" moves <dynamics damping> into target_kd
    b2, res2 = _import(ARM, joint_damping_mode="drive", force_position_velocity_actuation=True)
    q = b2.joint_qd_start[res2["joints"]["shoulder_yaw"]]
    assert b2.joint_dof["target_kd"][q] == 0.5 and b2.joint_dof["damping"][q] == 0.0
    assert b2.joint_target_mode[q] == int(jaxart.JointTargetMode.POSITION_VELOCITY)
    # without <inertial> (or ignoring it) the collision shapes' density gives the mass (Newton)
    dens, dres = _import(ARM, ignore_inertial_definitions=True)
    assert np.isclose(dens.body_mass[dres["bodies"]["base_link"]], 1000.0 * 0.2 * 0.2 * 0.1, rtol=1e-12)
    np.testing.assert_allclose(dens.body_com[dres["bodies"]["base_link"]], [0, 0, 0.05], atol=1e-15)
    assert dens.body_mass[dres["bodies"]["wrist_mount"]] == 0.0  # no collision geometry
    # orderings: links in file order, joints breadth first; file-order joints need parents first
    b3, res3 = _import(ARM, bodies_follow_joint_ordering=False, joint_ordering="bfs")
    assert b3.body_label == ["base_link", "shoulder", "upper_arm", "slider", "wrist_mount", "hand", "side_arm"]
    assert b3.joint_label == ["fixed_base", "shoulder_yaw", "shoulder_pitch", "side", "extend", "mount", "wrist"]
    b3.finalize()
    assert _import(ARM, joint_ordering=None)[0].joint_label[1:] == ["shoulder_yaw", "shoulder_pitch", "extend",
                                                                     "mount", "wrist", "side"]
    late = open(ARM).read().replace("</robot>", '<link name="tail"/><joint name="tail_j" type="fixed">'
                                    '<parent link="tail_parent"/><child link="tail"/></joint>'
                                    '<link name="tail_parent"/><joint name="tp" type="fixed"><parent link="hand"/>'
                                    '<child link="tail_parent"/></joint></robot>')
    with pytest.raises(ValueError, match="joint_ordering=None: joint 'tail_j'"):
        _import(late, joint_ordering=None)
    labels = _import(late)[0].joint_label  # depth first: hand's subtree before the shoulder's other child
    assert labels.index("wrist") + 1 == labels.index("tp") == labels.index("tail_j") - 1 == labels.index("side") - 2


def test_rpy_origins_and_inertials_by_hand():
    rpy, p, m, com = (0.4, -0.3, 1.1), (0.1, -0.2, 0.3), 2.0, (0.3, 0.05, 0.0)
    tensor = np.array([[0.01, 0.002, 0.001], [0.002, 0.02, -0.003], [0.001, -0.003, 0.03]])
    urdf = f"""<robot name="pend"><link name="world_anchor"/>
      <link name="bob"><inertial><origin xyz="{' '.join(map(str, com))}" rpy="0.2 0.1 -0.4"/>
        <mass value="{m}"/><inertia ixx="0.01" ixy="0.002" ixz="0.001" iyy="0.02" iyz="-0.003" izz="0.03"/>
      </inertial></link>
      <joint name="hinge" type="continuous"><parent link="world_anchor"/><child link="bob"/>
        <origin xyz="{' '.join(map(str, p))}" rpy="{' '.join(map(str, rpy))}"/><axis xyz="0 0 1"/></joint></robot>"""
    b, res = _import(urdf)
    r_origin = _rotation([0, 0, 1], rpy[2]) @ _rotation([0, 1, 0], rpy[1]) @ _rotation([1, 0, 0], rpy[0])
    np.testing.assert_allclose(np_quat_to_matrix(quat_from_rpy(rpy)), r_origin, atol=1e-15)
    x_p = b.joint_X_p[res["joints"]["hinge"]]
    np.testing.assert_allclose(x_p[:3], p, atol=0)
    np.testing.assert_allclose(np_quat_to_matrix(x_p[3:]), r_origin, atol=1e-15)
    np.testing.assert_allclose(b.joint_X_c[res["joints"]["hinge"]], [0, 0, 0, 0, 0, 0, 1], atol=0)
    bob = res["bodies"]["bob"]
    r_in = _rotation([0, 0, 1], -0.4) @ _rotation([0, 1, 0], 0.1) @ _rotation([1, 0, 0], 0.2)
    np.testing.assert_allclose(b.body_inertia[bob], r_in @ tensor @ r_in.T, atol=1e-15)
    np.testing.assert_allclose(b.body_com[bob], com, atol=0)
    assert b.body_mass[bob] == m and b.body_lock_inertia[bob]


def test_planar_and_floating_joints_by_hand():
    urdf = """<robot name="pf"><link name="base"/>
      <link name="sled"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
      <link name="drone"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
      <joint name="plane" type="planar"><parent link="base"/><child link="sled"/>
        <origin xyz="0 0 0.5" rpy="0.3 0 0"/><axis xyz="0 0 1"/><limit lower="-2" upper="2"/></joint>
      <joint name="free" type="floating"><parent link="sled"/><child link="drone"/><origin xyz="0.1 0 0"/></joint>
    </robot>"""
    b, res = _import(urdf)
    jp, jf = res["joints"]["plane"], res["joints"]["free"]
    assert b.joint_dof_dim[jp] == (2, 0) and jaxart.JointType(b.joint_type[jp]) == jaxart.JointType.D6
    assert jaxart.JointType(b.joint_type[jf]) == jaxart.JointType.FREE
    u, v = (np.asarray(b.joint_axis[b.joint_qd_start[jp] + k]) for k in range(2))
    np.testing.assert_allclose([u @ v, u[2], v[2], np.linalg.norm(u), np.linalg.norm(v)], [0, 0, 0, 1, 1], atol=1e-15)
    assert b.joint_dof["limit_lower"][b.joint_qd_start[jp]] == -2.0
    model = b.finalize(dtype=jnp.float64)
    pose = np.array([0.2, -0.1, 0.3, *quat_from_rpy((0.1, 0.2, 0.3))])
    q = np.concatenate([[0.4, -0.6], pose])
    body_q = np.asarray(_fk(model, jnp.asarray(q)))
    x_plane = np.array([0, 0, 0.5, *quat_from_rpy((0.3, 0, 0))])
    sled = np_transform_mul(x_plane, np.array([*(0.4 * u - 0.6 * v), 0, 0, 0, 1]))
    np.testing.assert_allclose(body_q[res["bodies"]["sled"]], sled, atol=1e-14)
    drone = np_transform_mul(np_transform_mul(sled, np.array([0.1, 0, 0, 0, 0, 0, 1.0])), pose)
    np.testing.assert_allclose(body_q[res["bodies"]["drone"]], drone, atol=1e-14)


def test_mimic_chains_and_dropped_follower():
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match=r"(?s)1 URDF element.*'pad_joint'.*mimic.*dropped"):
        res = b.add_urdf(GRIPPER)
    j = res["joints"]
    assert set(res["mimics"]) == {"right", "knuckle_joint"}
    m = res["mimics"]["right"]
    assert (b.constraint_mimic_joint0[m], b.constraint_mimic_joint1[m]) == (j["right"], j["left"])
    assert (b.constraint_mimic_coef0[m], b.constraint_mimic_coef1[m]) == (0.001, 1.0)
    k = res["mimics"]["knuckle_joint"]  # knuckle = 0.1 - 2 right = 0.1 - 2 (0.001 + left)
    assert b.constraint_mimic_joint1[k] == j["left"]
    np.testing.assert_allclose([b.constraint_mimic_coef0[k], b.constraint_mimic_coef1[k]], [0.098, -2.0])
    # scale converts the prismatic follower's offset; the revolute-from-prismatic ratio divides by scale
    b2, res2 = _import(GRIPPER, scale=2.0)
    k2 = res2["mimics"]["knuckle_joint"]
    np.testing.assert_allclose([b2.constraint_mimic_coef0[k2], b2.constraint_mimic_coef1[k2]], [0.098, -1.0])
    assert b2.constraint_mimic_coef0[res2["mimics"]["right"]] == 0.002
    with pytest.raises(ValueError, match="pad_joint"):
        jaxart.ModelBuilder().add_urdf(GRIPPER, strict=True)
    bad = open(GRIPPER).read().replace('<mimic joint="left"/>', '<mimic joint="nope"/>')
    with pytest.raises(ValueError, match="pad_joint.*'nope'"):
        jaxart.ModelBuilder().add_urdf(bad, package_dirs=[ASSETS, os.path.join(PKG, "urdf")])
    cyc = open(GRIPPER).read().replace('<origin xyz="0 0.02 0.02"/>',
                                       '<origin xyz="0 0.02 0.02"/><mimic joint="knuckle_joint"/>')
    with pytest.raises(ValueError, match="cyclic"):
        jaxart.ModelBuilder().add_urdf(cyc, package_dirs=[ASSETS, os.path.join(PKG, "urdf")])


def _trimesh(name):
    return trimesh.load(os.path.join(PKG, "meshes", name), force="mesh", process=False)


@pytest.mark.parametrize("as_string", [False, True])
def test_meshes_each_format_and_uris(as_string):
    source = open(GRIPPER).read() if as_string else GRIPPER
    b, res = _import(source, package_dirs=[ASSETS, os.path.join(PKG, "urdf")] if as_string else None)
    s = res["shapes"]
    palm, palm_visual = (b.shape_source[i] for i in s["palm"])
    np.testing.assert_allclose(palm.vertices, _trimesh("palm.obj").vertices)  # OBJ through package://
    np.testing.assert_allclose(palm_visual.vertices, 2.0 * _trimesh("pad.dae").vertices)  # DAE, scale 2
    assert not b.shape_cfg[s["palm"][1]].has_shape_collision and b.shape_cfg[s["palm"][0]].has_shape_collision
    left = b.shape_source[s["finger_left"][0]]  # STL through a relative path
    np.testing.assert_allclose(left.vertices, _trimesh("finger.stl").vertices, atol=1e-7)
    right = b.shape_source[s["finger_right"][0]]  # mirrored: y negated, winding flipped back to outward
    np.testing.assert_allclose(right.vertices, _trimesh("finger.stl").vertices * [1, -1, 1], atol=1e-7)
    np.testing.assert_array_equal(right.indices, np.asarray(_trimesh("finger.stl").faces)[:, ::-1])
    assert trimesh.Trimesh(right.vertices, right.indices, process=False).volume > 0
    np.testing.assert_allclose(b.shape_source[s["pad"][0]].vertices, _trimesh("pad.dae").vertices)
    knuckle = s["knuckle"][0]
    assert b.shape_type[knuckle] == int(jaxart.GeoType.CAPSULE)
    np.testing.assert_allclose(b.shape_scale[knuckle][:2], [0.005, 0.01])
    np.testing.assert_allclose(b.shape_transform[s["finger_right"][0]][3:], quat_from_rpy((0, 0, np.pi)), atol=1e-8)
    assert not b.shape_cfg[s["palm"][0]].is_visible and b.shape_cfg[s["palm"][1]].is_visible
    hv, hres = _import(GRIPPER, hide_visuals=True, force_show_colliders=True)
    assert len(hres["shapes"]["palm"]) == 1 and hv.shape_cfg[hres["shapes"]["palm"][0]].is_visible
    assert all(c.has_shape_collision for c in hv.shape_cfg)                  # no visual shapes
    vc, vres = _import(GRIPPER, parse_visuals_as_colliders=True)
    assert vres["shapes"]["palm"] == [0] and vc.shape_cfg[0].has_shape_collision and vc.shape_count == 1
    b.finalize()


def test_missing_meshes_and_unresolved_packages(tmp_path):
    text = open(GRIPPER).read()
    with pytest.raises(ValueError, match=r"link 'palm'.*package://jaxart_test_description/meshes/palm\.obj.*package_dirs"):
        jaxart.ModelBuilder().add_urdf(text)  # XML string: no folder to search
    missing = text.replace("finger.stl", "no_finger.stl")
    path = tmp_path / "missing.urdf"
    path.write_text(missing)
    b = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match=r"link 'finger_left'.*no_finger\.stl"):
        b.add_urdf(str(path), package_dirs=[ASSETS])
    assert b.body_count == 0
    broken = tmp_path / "broken.stl"
    broken.write_text("solid nothing\nendsolid nothing\n")
    (tmp_path / "b.urdf").write_text('<robot name="b"><link name="l"><collision><geometry>'
                                     f'<mesh filename="{broken}"/></geometry></collision></link></robot>')
    with pytest.raises(ValueError, match=r"link 'l'.*broken\.stl"):
        b.add_urdf(str(tmp_path / "b.urdf"))
    # hide_visuals: visual meshes are never read, so a missing one is not even reported
    (tmp_path / "v.urdf").write_text('<robot name="v"><link name="l"><visual><geometry><mesh filename="gone.stl"/>'
                                     '</geometry></visual><collision><geometry><box size="0.1 0.2 0.3"/></geometry>'
                                     '</collision></link></robot>')
    shown = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match=r"link 'l' <visual>.*gone\.stl.*\(visual skipped\)"):
        out = shown.add_urdf(str(tmp_path / "v.urdf"))  # a missing visual mesh only drops that visual
    assert shown.shape_count == 1 and shown.shape_type[out["shapes"]["l"][0]] == int(jaxart.GeoType.BOX)
    hidden = jaxart.ModelBuilder()
    out = hidden.add_urdf(str(tmp_path / "v.urdf"), hide_visuals=True)
    assert hidden.shape_count == 1 and hidden.shape_type[out["shapes"]["l"][0]] == int(jaxart.GeoType.BOX)


def test_collapse_fixed_joints_merges_like_mujoco_fusestatic():
    ref, rres = _import(ARM)
    col, cres = _import(ARM, collapse_fixed_joints=True)
    assert col.body_count == ref.body_count - 1 and "mount" not in cres["joints"]
    assert cres["bodies"]["wrist_mount"] == cres["bodies"]["slider"]
    m = mujoco.MjModel.from_xml_string(open(ARM).read().replace(
        '<robot name="test_arm">', '<robot name="test_arm">' + MJ_COMPILER.replace('"false"', '"true"', 1), 1))
    # MuJoCo also fuses the fixed root into its world body; every other body must match
    assert {m.body(i).name for i in range(1, m.nbody)} == set(col.body_label) - {"base_link"}
    for i in range(1, m.nbody):  # MuJoCo's fused bodies: same mass, COM and inertia tensor in link axes
        k = cres["bodies"][m.body(i).name]
        r = np_quat_to_matrix(m.body_iquat[i][[1, 2, 3, 0]])
        assert np.isclose(col.body_mass[k], m.body_mass[i], rtol=1e-12)
        np.testing.assert_allclose(col.body_com[k], m.body_ipos[i], atol=1e-12)
        np.testing.assert_allclose(col.body_inertia[k], r @ np.diag(m.body_inertia[i]) @ r.T, atol=1e-12)
    for name in ("hand", "side_arm", "slider"):  # frames below the merged link are unchanged
        np.testing.assert_allclose(col.body_q[cres["bodies"][name]], ref.body_q[rres["bodies"][name]], atol=1e-12)
    k = cres["bodies"]["hand"]
    assert col.joint_parent[cres["joints"]["wrist"]] == cres["bodies"]["slider"] and col.body_label[k] == "hand"


def test_xform_scale_parent_body_and_up_axis():
    x = np.array([0.5, -0.2, 1.0, *quat_from_rpy((0.1, -0.2, 0.3))])
    b, res = _import(ARM, xform=x, floating=True)
    np.testing.assert_allclose(b.joint_q[:7], x)
    np.testing.assert_allclose(b.body_q[res["bodies"]["base_link"]], x)
    model = b.finalize(dtype=jnp.float64)
    body_q = np.asarray(_fk_and_mass(model, model.joint_q)[0])  # the initial state is consistent
    np.testing.assert_allclose(body_q, np.stack(b.body_q), atol=1e-12)
    one, r1 = _import(ARM)
    two, r2 = _import(ARM, scale=2.0)
    np.testing.assert_allclose(np.stack(two.body_q)[:, :3], 2.0 * np.stack(one.body_q)[:, :3], atol=1e-14)
    ext = two.joint_qd_start[r2["joints"]["extend"]]
    assert two.joint_dof["limit_upper"][ext] == 0.2 and two.joint_dof["velocity_limit"][ext] == 1.0
    np.testing.assert_allclose(two.body_inertia[1], 4.0 * one.body_inertia[1])
    assert two.body_mass == one.body_mass
    # attach to a body of an existing robot, twice, with prefixes
    host = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        arm = host.add_urdf(ARM, label_prefix="a")
        hand = arm["bodies"]["hand"]
        tool = host.add_urdf(GRIPPER, parent_body=hand, xform=x, label_prefix="g")
        with pytest.raises(ValueError, match="label_prefix"):
            host.add_urdf(GRIPPER, parent_body=hand, label_prefix="g")
    root = host.joint_child[tool["joints"]["fixed_base"]]
    assert host.joint_parent[tool["joints"]["fixed_base"]] == hand and host.body_label[root] == "g/palm"
    np.testing.assert_allclose(host.body_q[root], np_transform_mul(host.body_q[hand], x), atol=1e-14)
    host.finalize()
    # up_axis="Y": the URDF's +Y becomes the builder's +Z
    yb, yres = _import('<robot name="y"><link name="a"/><link name="c"/><joint name="j" type="fixed">'
                       '<parent link="a"/><child link="c"/><origin xyz="0 1 0"/></joint></robot>', up_axis="Y")
    np.testing.assert_allclose(yb.body_q[yres["bodies"]["c"]][:3], [0, 0, 1], atol=1e-14)


def test_base_joint_and_self_collisions():
    x = np.array([0.0, 0.0, 0.2, *quat_from_rpy((0.0, 0.0, 0.5))])
    axes = [jaxart.ModelBuilder.JointDofConfig(axis=a) for a in ((1, 0, 0), (0, 1, 0))]
    b, res = _import(ARM, base_joint={"joint_type": jaxart.JointType.D6, "linear_axes": axes}, xform=x)
    j = res["joints"]["base_joint"]
    assert b.joint_dof_dim[j] == (2, 0)
    np.testing.assert_allclose(b.body_q[res["bodies"]["base_link"]], x, atol=1e-14)
    model = b.finalize(dtype=jnp.float64)
    q = np.asarray(b.joint_q).copy()
    q[0] = 0.3  # slides along the world X axis (xform's rotation is kept out of the joint frame)
    body_q = np.asarray(_fk(model, jnp.asarray(q)))
    np.testing.assert_allclose(body_q[res["bodies"]["base_link"]], [0.3, 0, 0.2, *x[3:]], atol=1e-14)
    nc, _ = _import(ARM, enable_self_collisions=False)
    pairs = set(nc.shape_collision_filter_pairs)
    colliding = [s for s in range(nc.shape_count) if nc.shape_cfg[s].has_shape_collision]
    assert all((a, c) in pairs for a in colliding for c in colliding if a < c and nc.shape_body[a] != nc.shape_body[c])


def test_report_lists_ignored_elements_and_strict_raises():
    with pytest.warns(UserWarning) as rec:
        jaxart.ModelBuilder().add_urdf(ARM)
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert "2 URDF element(s)" in msg and "'shoulder_trans'" in msg and "<gazebo>" in msg and "'hand'" in msg
    b = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match="strict=True.*transmission"):
        b.add_urdf(ARM, strict=True)
    assert b.body_count == 0
    odd = ('<robot name="odd"><link name="a"><self_collision_checking/><collision><geometry><cone radius="1"/>'
           '</geometry></collision></link><link name="b"/><joint name="j" type="continuous"><parent link="a"/>'
           '<child link="b"/><limit lower="-1" upper="1"/><calibration rising="0"/><safety_controller/></joint>'
           '<ros2_control name="hw"/></robot>')
    with pytest.warns(UserWarning) as rec:
        res = b.add_urdf(odd)
    assert len(rec) == 1 and len(res["unsupported"]) == 6
    for part in ("<ros2_control>", "'hw'", "link 'a': <self_collision_checking>", "geometry <cone>",
                 "joint 'j': <calibration>", "joint 'j': <safety_controller>", "'j': continuous joint <limit"):
        assert part in str(rec[0].message), part
    assert b.shape_count == 0 and b.joint_dof["limit_upper"][0] == 1e10


_BAD = {
    "malformed": ('<robot name="x"><link name="a"></robot>', r"malformed XML"),
    "unknown joint type": ('<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="ball">'
                           '<parent link="a"/><child link="b"/></joint></robot>',
                           r"joint 'j'.*unknown joint type 'ball'"),
    "missing parent link": ('<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="fixed">'
                            '<parent link="ghost"/><child link="b"/></joint></robot>',
                            r"joint 'j'.*parent link 'ghost'"),
    "two roots": ('<robot name="x"><link name="a"/><link name="b"/></robot>', r"exactly one root.*'a', 'b'"),
    "two parents": ('<robot name="x"><link name="a"/><link name="b"/><link name="c"/>'
                    '<joint name="j1" type="fixed"><parent link="a"/><child link="c"/></joint>'
                    '<joint name="j2" type="fixed"><parent link="b"/><child link="c"/></joint></robot>',
                    r"link 'c'.*'j1' and 'j2'"),
    "bad number": ('<robot name="x"><link name="a"><inertial><mass value="heavy"/></inertial></link></robot>',
                   r"link 'a' <inertial> <mass> attribute 'value'"),
    "zero axis": ('<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
                  '<parent link="a"/><child link="b"/><axis xyz="0 0 0"/></joint></robot>', r"joint 'j'.*non-zero"),
    "not a robot": ("<mujoco/>", r"<robot>"),
    "xacro": ('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:macro name="m"/></robot>',
              r"xacro"),
}


@pytest.mark.parametrize("case", list(_BAD))
def test_bad_input_raises_naming_the_element(case):
    xml, pattern = _BAD[case]
    b = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match=pattern):
        b.add_urdf(xml)
    assert b.body_count == 0 and b.joint_count == 0


def test_bad_arguments(tmp_path):
    b = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match="no_such.urdf"):
        b.add_urdf(str(tmp_path / "no_such.urdf"))
    with pytest.raises(ValueError, match="mutually exclusive"):
        b.add_urdf(ARM, floating=True, base_joint={})
    with pytest.raises(TypeError, match="no_such_kwarg"):
        b.add_urdf(ARM, no_such_kwarg=1)
    with pytest.raises(ValueError, match="mesh_maxhullvert"):
        b.add_urdf(ARM, mesh_maxhullvert=3)
    with pytest.raises(TypeError):
        b.add_urdf(3.0)
    with pytest.raises(ValueError, match="scale"):
        b.add_urdf(ARM, scale=0.0)
    with pytest.raises(ValueError, match="package://nowhere/robot.urdf.*not found"):
        b.add_urdf("package://nowhere/robot.urdf", package_dirs=[ASSETS])
    by_uri, _ = _import("package://jaxart_test_description/urdf/gripper.urdf", package_dirs=[ASSETS])
    declared, _ = _import('<?xml version="1.0" encoding="utf-8"?>\n' + open(ARM).read().split("?>", 1)[1])
    assert by_uri.body_label[0] == "palm" and declared.body_count == 7
    with pytest.warns(UserWarning):
        b.add_urdf(ARM)
    with pytest.raises(ValueError, match="floating=True needs parent_body=-1"):
        b.add_urdf(ARM, floating=True, parent_body=0, label_prefix="p")
    np.testing.assert_allclose(np_quat_rotate(quat_from_rpy((0, 0, np.pi / 2)), np.array([1.0, 0, 0])), [0, 1, 0],
                               atol=1e-15)
