"""MJCF import (``ModelBuilder.add_mjcf``) checked against MuJoCo's own kinematics."""

from __future__ import annotations

import os
import warnings

import jax
import jax.numpy as jnp
import mujoco
import mujoco.mjx
import numpy as np
import pytest

import jaxart
from jaxart.assets import ASSET_NAMES, asset_path
from jaxart.io.mjcf import xyzw
from jaxart.sim.validate import np_quat_rotate, np_quat_to_matrix, np_transform_mul

jax.config.update("jax_enable_x64", True)

MJX_HUMANOID = os.path.join(os.path.dirname(mujoco.mjx.__file__), "test_data", "humanoid", "humanoid.xml")

# Every joint layout the importer handles: a FIXED base, two hinges at different anchors (chain),
# three non-orthogonal hinges (chain), slides + hinges at one anchor with refs (D6), a ball, a
# hinge-slide-ball mix (chain), a free root with an orthogonal 3-hinge child (D6). Degrees.
KITCHEN_SINK = """
<mujoco model="sink">
  <compiler angle="degree"/>
  <option gravity="0 0 -5"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="base" pos="0.1 0.2 0.3" quat="0.9 0.1 0.2 0.3">
      <geom type="box" size=".1 .1 .1"/>
      <body name="two_anchor" pos="0 0 0.5" euler="10 20 30">
        <joint name="ta0" axis="1 0 0" pos="0 0 0.1" ref="20"/>
        <joint name="ta1" axis="0 1 0" pos="0.1 0 0" range="-45 45"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="skew3" pos="0.3 0 0">
          <joint name="s0" axis="1 0 0" pos="0 0.01 0"/>
          <joint name="s1" axis="1 1 0" pos="0 0.01 0"/>
          <joint name="s2" axis="0 1 1" pos="0 0.01 0" ref="15"/>
          <geom type="sphere" size=".05" pos="0.1 0 0"/>
          <body name="slider_d6" pos="0 0.2 0">
            <joint name="sl0" type="slide" axis="1 0 0" ref="0.1"/>
            <joint name="sl1" type="slide" axis="0 0 1"/>
            <joint name="h0" axis="0 0 1" pos="0.05 0 0"/>
            <joint name="h1" axis="0 1 0" pos="0.05 0 0" ref="10"/>
            <geom type="ellipsoid" size=".05 .03 .02" pos="0 0.1 0"/>
            <body name="ballb" pos="0 0.2 0">
              <joint name="ball0" type="ball" pos="0 0 0.05"/>
              <geom type="cylinder" size=".02 .1" pos="0.01 0.02 0"/>
              <body name="mixed" pos="0 0 -0.2">
                <joint name="mx0" axis="0 1 0"/>
                <joint name="mx1" type="slide" axis="1 0 0"/>
                <joint name="mx2" type="ball" pos="0.02 0 0"/>
                <geom type="box" size=".02 .03 .04" pos="0.01 0 0" euler="10 0 40"/>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>
    <body name="floater" pos="1 0 1" euler="0 30 0">
      <freejoint name="float"/>
      <geom type="box" size=".1 .2 .3" pos="0.05 0 0"/>
      <body name="d6full" pos="0.2 0 0">
        <joint name="dx" axis="1 0 0" pos="0.01 0.02 0.03"/>
        <joint name="dy" axis="0 1 0" pos="0.01 0.02 0.03"/>
        <joint name="dz" axis="0 0 1" pos="0.01 0.02 0.03"/>
        <geom type="capsule" size=".03 .1" pos="0 0 -0.1"/>
      </body>
      <body name="welded" pos="0 0.3 0" euler="0 0 45"><geom type="box" size=".05 .05 .05" pos="0.02 0 0"/></body>
    </body>
  </worldbody>
</mujoco>
"""

SOURCES = {"mjx_humanoid": MJX_HUMANOID, "kitchen_sink": KITCHEN_SINK, **{n: asset_path(n) for n in ASSET_NAMES}}


_fk = jax.jit(jaxart.eval_fk)


def _import(source, **kw):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = b.add_mjcf(source, **kw)
    return b, res


def _random_qpos(m, rng):
    q = m.qpos0.copy()
    for j in range(m.njnt):
        a, jt = m.jnt_qposadr[j], m.jnt_type[j]
        if jt == mujoco.mjtJoint.mjJNT_FREE:
            v = rng.normal(size=4)
            q[a:a + 7] = np.concatenate([rng.uniform(-1, 1, 3), v / np.linalg.norm(v)])
        elif jt == mujoco.mjtJoint.mjJNT_BALL:
            v = rng.normal(size=4)
            q[a:a + 4] = v / np.linalg.norm(v)
        elif m.jnt_limited[j]:
            q[a] = rng.uniform(*m.jnt_range[j])
        else:
            q[a] = rng.uniform(-3.0, 3.0) if jt == mujoco.mjtJoint.mjJNT_HINGE else rng.uniform(-0.5, 0.5)
    return q


def _convert_qvel(m, d, qvel):
    """MuJoCo qvel → jaxart velocity convention, in MuJoCo DOF order (ball/free: parent frame, COM)."""
    out = qvel.copy()
    for j in range(m.njnt):
        a, v, jt = m.jnt_qposadr[j], m.jnt_dofadr[j], m.jnt_type[j]
        if jt == mujoco.mjtJoint.mjJNT_BALL:
            out[v:v + 3] = np_quat_rotate(xyzw(d.qpos[a:a + 4]), qvel[v:v + 3])
        elif jt == mujoco.mjtJoint.mjJNT_FREE:
            q = xyzw(d.qpos[a + 3:a + 7])
            w = np_quat_rotate(q, qvel[v + 3:v + 6])
            b = m.jnt_bodyid[j]
            out[v:v + 3] = qvel[v:v + 3] + np.cross(w, np_quat_rotate(q, m.body_ipos[b]))
            out[v + 3:v + 6] = w
    return out


def _mj_state(m, qpos, qvel):
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    mujoco.mj_comVel(m, d)
    vel = np.zeros((m.nbody, 6))
    for b in range(m.nbody):
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, vel[b], 0)
    return d, vel


def _quat_close(a, b, atol):
    return np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1)).max() < atol


@pytest.mark.parametrize("name", list(SOURCES))
def test_fk_matches_mujoco(name):
    b, res = _import(SOURCES[name])
    m = res["mj_model"]
    model = b.finalize(dtype=jnp.float64)
    assert np.isclose(sum(b.body_mass), mujoco.mj_getTotalmass(m), rtol=1e-12)
    cmap, dmap = res["coord_map"], res["dof_map"]
    assert (cmap >= 0).all() and sorted(dmap.tolist()) == list(range(m.nv))
    ids = np.array([res["bodies"][m.body(i).name or f"body_{i}"] for i in range(1, m.nbody)])
    rng = np.random.default_rng(0)
    qs, qds, refs = [], [], []
    for _ in range(4):
        qpos, qvel = _random_qpos(m, rng), rng.normal(size=m.nv)
        d, vel = _mj_state(m, qpos, qvel)
        qs.append(qpos[cmap])
        qds.append(_convert_qvel(m, d, qvel)[dmap])
        refs.append((d.xpos[1:].copy(), d.xquat[1:][:, [1, 2, 3, 0]], d.xipos[1:].copy(), vel[1:]))
    fk = jax.jit(jax.vmap(lambda q, qd: _fk(model, q, qd)))
    st = fk(jnp.asarray(np.stack(qs)), jnp.asarray(np.stack(qds)))
    body_q, body_qd = np.asarray(st.body_q)[:, ids], np.asarray(st.body_qd)[:, ids]
    com = np.asarray(model.body_com)[ids]
    for k, (xpos, xquat, xipos, vel) in enumerate(refs):
        np.testing.assert_allclose(body_q[k, :, :3], xpos, atol=1e-10)
        assert _quat_close(body_q[k, :, 3:], xquat, 1e-10)
        com_w = body_q[k, :, :3] + np.stack([np_quat_rotate(q, c) for q, c in zip(body_q[k, :, 3:], com, strict=True)])
        np.testing.assert_allclose(com_w, xipos, atol=1e-10)
        np.testing.assert_allclose(body_qd[k, :, :3], vel[:, 3:], atol=1e-9)
        np.testing.assert_allclose(body_qd[k, :, 3:], vel[:, :3], atol=1e-9)


def test_initial_state_and_inertia_match_mujoco():
    b, res = _import(KITCHEN_SINK)
    m = res["mj_model"]
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    np.testing.assert_allclose(np.asarray(b.joint_q), m.qpos0[res["coord_map"]], atol=0)
    model = b.finalize(dtype=jnp.float64)
    st = _fk(model, model.joint_q, model.joint_qd)
    for i in range(1, m.nbody):
        bi = res["bodies"][m.body(i).name]
        np.testing.assert_allclose(np.asarray(st.body_q)[bi, :3], d.xpos[i], atol=1e-12)
        np.testing.assert_allclose(b.body_q[bi][:3], d.xpos[i], atol=1e-12)
        r = np_quat_to_matrix(np.asarray(st.body_q)[bi, 3:])
        i_world = r @ np.asarray(model.body_inertia)[bi] @ r.T
        r_mj = d.ximat[i].reshape(3, 3)
        np.testing.assert_allclose(i_world, r_mj @ np.diag(m.body_inertia[i]) @ r_mj.T, atol=1e-12)


def test_labels_preserved():
    b, res = _import(MJX_HUMANOID)
    m = res["mj_model"]
    for i in range(1, m.nbody):
        assert m.body(i).name in b.body_label
        assert b.body_label[res["bodies"][m.body(i).name]] == m.body(i).name
    for j in range(m.njnt):
        jid = res["joints"][m.joint(j).name]
        assert m.joint(j).name in b.joint_label[jid].split("+")
    assert b.joint_label[res["joints"]["root"]] == "root"
    assert b.shape_label[res["shapes"]["floor"]] == "floor"
    assert b.shape_body[res["shapes"]["floor"]] == -1
    unnamed = _import("<mujoco><worldbody><body><joint/><geom size='.1'/></body></worldbody></mujoco>")[0]
    assert unnamed.body_label == ["body_1"] and unnamed.joint_label == ["body_1_joint0"]


def test_d6_merging_and_intermediate_links():
    b, res = _import(MJX_HUMANOID)
    jt = [jaxart.JointType(t) for t in b.joint_type]
    d6 = sorted(b.joint_label[j] for j, t in enumerate(jt) if t == jaxart.JointType.D6)
    assert len(d6) == 5 and "hip_x_right+hip_z_right+hip_y_right" in d6 and "abdomen_z+abdomen_y" in d6
    # ankles: two hinges at different anchors → a massless intermediate link
    link = res["bodies"]["foot_right__ankle_y_right"]
    assert b.body_mass[link] == 0.0 and not np.any(b.body_inertia[link])
    assert b.joint_type[res["joints"]["ankle_x_right"]] == jaxart.JointType.REVOLUTE
    assert len(b.articulation_start) == 1 and b.articulation_end[0] == b.joint_count
    assert [jaxart.JointType(t).name for t in _import(asset_path("humanoid"))[0].joint_type].count("D6") == 7
    sink, r2 = _import(KITCHEN_SINK)
    kinds = {lab: jaxart.JointType(t).name for lab, t in zip(sink.joint_label, sink.joint_type, strict=True)}
    assert kinds["sl0+sl1+h0+h1"] == "D6" and kinds["dx+dy+dz"] == "D6" and kinds["ball0"] == "BALL"
    assert kinds["s0"] == kinds["s1"] == kinds["s2"] == "REVOLUTE"  # non-orthogonal: chain
    assert {"skew3__s0", "skew3__s1", "two_anchor__ta0", "mixed__mx0", "mixed__mx1"} <= set(r2["bodies"])
    assert sink.joint_dof_dim[r2["joints"]["h1"]] == (2, 2)
    assert kinds["base_fixed"] == kinds["welded_fixed"] == "FIXED" and kinds["float"] == "FREE"
    assert sink.joint_parent[r2["joints"]["welded_fixed"]] == r2["bodies"]["floater"]
    assert [sink.articulation_label[a] for a in r2["articulations"]] == ["base", "floater"]


def test_joint_ref_keeps_qpos_numbers():
    xml = """<mujoco><compiler angle="degree"/><worldbody><body name="a" pos="0 0 1">
      <joint name="h" axis="0 1 0" ref="30" pos="0.1 0 0"/><geom size=".1"/>
      <body name="s" pos="0.5 0 0"><joint name="sl" type="slide" axis="1 0 0" ref="0.2"/><geom size=".1"/></body>
      </body></worldbody></mujoco>"""
    b, res = _import(xml)
    m = res["mj_model"]
    assert np.allclose(b.joint_q, [np.deg2rad(30.0), 0.2]) and np.allclose(m.qpos0, b.joint_q)
    model = b.finalize(dtype=jnp.float64)
    for q in ([np.deg2rad(30.0), 0.2], [0.0, 0.0], [1.0, -0.3]):
        st = _fk(model, jnp.asarray(q), jnp.zeros(2))
        d, _ = _mj_state(m, np.asarray(q), np.zeros(2))
        np.testing.assert_allclose(np.asarray(st.body_q)[:, :3], d.xpos[1:], atol=1e-12)
    st0 = _fk(model, model.joint_q, model.joint_qd)
    np.testing.assert_allclose(np.asarray(st0.body_q)[:, :3], [[0, 0, 1], [0.5, 0, 1]], atol=1e-12)


def test_actuator_gains_mapping():
    xml = """<mujoco><compiler angle="radian"/><worldbody><body><joint name="a" range="-1 1"/><geom size=".1"/>
      <body pos="0 0 1"><joint name="b"/><geom size=".1"/>
      <body pos="0 0 1"><joint name="c"/><geom size=".1"/>
      <body pos="0 0 1"><joint name="d" damping="0.3" armature="0.2" frictionloss="0.1" stiffness="5" springref="0.4"/>
      <geom size=".1"/></body></body></body></body></worldbody>
      <actuator><position joint="a" kp="50" kv="3" gear="2" forcerange="-7 7" ctrlrange="-0.5 0.5"/>
      <velocity joint="b" kv="4"/><motor joint="c" gear="3" ctrlrange="-2 2"/><position joint="d" kp="9"/>
      <velocity joint="d" kv="1.5"/></actuator></mujoco>"""
    b, res = _import(xml)
    assert res["unsupported"] == []
    dof = b.joint_dof
    mode = [jaxart.JointTargetMode(x) for x in b.joint_target_mode]
    assert mode == [jaxart.JointTargetMode.POSITION_VELOCITY, jaxart.JointTargetMode.VELOCITY,
                    jaxart.JointTargetMode.EFFORT, jaxart.JointTargetMode.POSITION_VELOCITY]
    np.testing.assert_allclose(dof["target_ke"], [50 * 4, 0, 0, 9])
    np.testing.assert_allclose(dof["target_kd"], [3 * 4, 4, 0, 1.5])
    np.testing.assert_allclose(dof["effort_limit"][:3], [14.0, 1e6, 6.0])
    np.testing.assert_allclose([dof["limit_lower"][0], dof["limit_upper"][0]], [-1, 1])
    assert dof["limit_lower"][1] == -jaxart.MAXVAL and dof["limit_ke"][0] > 0 and dof["limit_kd"][0] > 0
    np.testing.assert_allclose([dof[k][3] for k in ("damping", "armature", "friction", "stiffness", "rest_q")],
                               [0.3, 0.2, 0.1, 5.0, 0.4])


def test_limit_gains_from_solreflimit():
    xml = """<mujoco><compiler angle="radian"/><option timestep="0.001"/><worldbody>
      <body><joint range="-1 1" solreflimit="0.05 0.5"/>
      <geom type="sphere" size=".1" pos="0.5 0 0" mass="2"/></body><body pos="0 2 0">
      <joint range="-1 1" solreflimit="-300 -7"/><geom size=".1"/></body></worldbody></mujoco>"""
    b, res = _import(xml)
    m = res["mj_model"]
    i_eff = 1.0 / m.dof_invweight0[0]
    np.testing.assert_allclose(b.joint_dof["limit_ke"], [i_eff / (0.05 * 0.5) ** 2, 300.0])
    np.testing.assert_allclose(b.joint_dof["limit_kd"], [2 * i_eff / 0.05, 7.0])


def test_degrees_and_radians_give_radians():
    xml = """<mujoco><compiler angle="{u}"/><worldbody><body euler="{e} 0 0"><joint range="{lo} {hi}"/>
      <geom size=".1"/></body></worldbody></mujoco>"""
    bd, _ = _import(xml.format(u="degree", e=90, lo=-45, hi=60))
    br, _ = _import(xml.format(u="radian", e=np.pi / 2, lo=-np.pi / 4, hi=np.pi / 3))
    for b in (bd, br):
        np.testing.assert_allclose([b.joint_dof["limit_lower"][0], b.joint_dof["limit_upper"][0]],
                                   [-np.pi / 4, np.pi / 3], atol=1e-12)
    np.testing.assert_allclose(bd.joint_X_p[0], br.joint_X_p[0], atol=1e-12)


TENDON_XML = """<mujoco><option gravity="1 0 -9.81"/><worldbody><body><joint name="j0"/><geom size=".1"/>
  <site name="s0"/><body pos="0 0 1"><joint name="j1"/><geom size=".1"/><site name="s1"/></body></body></worldbody>
  <tendon><fixed name="t"><joint joint="j0" coef="1"/><joint joint="j1" coef="-1"/></fixed></tendon>
  <actuator><motor name="tm" tendon="t"/></actuator><sensor><e_potential/></sensor></mujoco>"""


def test_unsupported_features_warn_once_and_strict_raises():
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning) as rec:
        res = b.add_mjcf(TENDON_XML)
    assert len(rec) == 1
    msg = str(rec[0].message)
    for word in ("sensor", "gravity"):
        assert word in msg
    # the fixed tendon and the motor on it are imported (tests/dynamics/test_tendons.py,
    # tests/dynamics/test_tendon_actuators.py)
    assert "'tm'" not in msg
    assert len(res["unsupported"]) == 2 and b.gravity == -9.81 and b.joint_count == 2 and b.tendon_count == 1
    b2 = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match="strict=True.*sensor"):
        b2.add_mjcf(TENDON_XML, strict=True)
    assert b2.body_count == 0 and b2.joint_count == 0


def test_bad_input_errors(tmp_path):
    b = jaxart.ModelBuilder()
    with pytest.raises(ValueError, match="no_such_file.xml"):
        b.add_mjcf(str(tmp_path / "no_such_file.xml"))
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body></worldbody></mujoco>")
    with pytest.raises(ValueError, match=r"bad\.xml.*XML"):
        b.add_mjcf(str(bad))
    with pytest.raises(ValueError, match="invalid keyword"):
        b.add_mjcf("<mujoco><worldbody><body><joint type='foo'/></body></worldbody></mujoco>")
    with pytest.raises(TypeError, match="no_such_kwarg"):
        b.add_mjcf(asset_path("pendulum"), no_such_kwarg=1)
    with pytest.raises(TypeError):
        b.add_mjcf(asset_path("pendulum"), floating="yes")
    with pytest.raises(TypeError):
        b.add_mjcf(3.0)
    assert b.body_count == 0
    b.add_mjcf(asset_path("pendulum"))
    with pytest.raises(ValueError, match="label_prefix"):
        b.add_mjcf(asset_path("pendulum"))
    b.add_mjcf(asset_path("pendulum"), label_prefix="second")
    assert b.body_count == 2 and b.body_label[1].startswith("second/")


def _rand_xform(seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=4)
    return np.concatenate([rng.uniform(-1, 1, 3), q / np.linalg.norm(q)])


@pytest.mark.parametrize(("source", "on_body"), [(asset_path("arm7"), False), (asset_path("quadruped"), True)])
def test_xform_and_parent_body_placement(source, on_body):
    ref, rres = _import(source)
    x = _rand_xform(1)
    b = jaxart.ModelBuilder()
    off, base = 0, x
    if on_body:
        carrier = b.add_body(xform=_rand_xform(2), mass=1.0, inertia=np.eye(3), label="carrier")
        off, base = 1, np_transform_mul(b.body_q[carrier], x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = b.add_mjcf(source, xform=x, parent_body=carrier if on_body else -1)
    model = b.finalize(dtype=jnp.float64)
    st = _fk(model, model.joint_q, model.joint_qd)
    for i in rres["bodies"].values():
        expect = np_transform_mul(base, np.asarray(ref.body_q[i]))
        np.testing.assert_allclose(np.asarray(st.body_q)[i + off, :3], expect[:3], atol=1e-10)
        assert _quat_close(np.asarray(st.body_q)[i + off, 3:], expect[3:], 1e-10)
        np.testing.assert_allclose(b.body_q[i + off][:3], np.asarray(st.body_q)[i + off, :3], atol=1e-10)
    root = b.articulation_start[res["articulation"]]
    assert b.joint_parent[root] == (carrier if on_body else -1)
    static = [s for s in range(b.shape_count) if b.shape_type[s] == jaxart.GeoType.PLANE]
    assert all(b.shape_body[s] == (carrier if on_body else -1) for s in static)
    if not on_body:  # world-welded base: X_p carries the xform
        np.testing.assert_allclose(b.joint_X_p[root], np_transform_mul(x, ref.joint_X_p[0]), atol=1e-12)


def test_floating_override():
    b, _ = _import(MJX_HUMANOID, floating=False)
    assert b.joint_type[0] == jaxart.JointType.FIXED and b.joint_parent[0] == -1
    np.testing.assert_allclose(b.joint_X_p[0][:3], [0, 0, 1.282], atol=1e-12)
    a, res = _import(asset_path("arm7"), floating=True)
    assert a.joint_type[0] == jaxart.JointType.FREE and res["coord_map"][:7].tolist() == [-1] * 7
    model = a.finalize(dtype=jnp.float64)
    st = _fk(model, model.joint_q, model.joint_qd)
    np.testing.assert_allclose(np.asarray(st.body_q), np.asarray(a.body_q), atol=1e-12)


def test_shapes_materials_and_collision_filters():
    xml = """<mujoco><option timestep="0.002"/><asset><mesh name="tet" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/></asset>
      <worldbody><geom name="floor" type="plane" size="1 1 .1" contype="1" conaffinity="1"/>
      <body name="a"><freejoint/><geom name="ga" type="box" size=".1 .2 .3" friction="0.7 0.01 0.002"
        solref="0.02 1" margin="0.01" gap="0.005" contype="1" conaffinity="0"/>
        <geom name="gm" type="mesh" mesh="tet" contype="0" conaffinity="0"/></body>
      <body name="b" pos="1 0 0"><freejoint/><geom name="gb" type="cylinder" size=".1 .2" contype="1"
        conaffinity="0"/></body>
      <body name="c" pos="2 0 0"><freejoint/><geom name="gc" type="sphere" size=".1"/></body>
      </worldbody></mujoco>"""
    b, res = _import(xml)
    m, s = res["mj_model"], res["shapes"]
    assert [jaxart.GeoType(b.shape_type[s[k]]).name for k in ("floor", "ga", "gm", "gb", "gc")] == [
        "PLANE", "BOX", "MESH", "CYLINDER", "SPHERE"]
    cfg = b.shape_cfg[s["ga"]]
    assert (cfg.mu, cfg.mu_torsional, cfg.mu_rolling, cfg.margin, cfg.gap) == (0.7, 0.01, 0.002, 0.01, 0.005)
    mass = m.body_subtreemass[1]
    np.testing.assert_allclose([cfg.ke, cfg.kd], [mass / 0.02**2, 2 * mass / 0.02])
    np.testing.assert_allclose(b.shape_scale[s["gb"]], [0.1, 0.2, 0.0])
    assert b.shape_source[s["gm"]].vertices.shape == (4, 3) and not b.shape_cfg[s["gm"]].has_shape_collision
    assert all(c.density == 0.0 for c in b.shape_cfg)
    # ga and gb have contype 1 / conaffinity 0: MuJoCo never tests them against each other
    assert b.shape_collision_filter_pairs == [(s["ga"], s["gb"])]
    arm = """<mujoco><worldbody><body name="a"><joint/><geom name="ga" size=".1"/><body name="b" pos="0 0 1">
      <joint/><geom name="gb" size=".1"/><body name="c" pos="0 0 1"><joint/><geom name="gc" size=".1"/></body>
      </body></body></worldbody></mujoco>"""
    b1, r1 = _import(arm)
    assert b1.shape_collision_filter_pairs == [(r1["shapes"]["ga"], r1["shapes"]["gb"]),
                                               (r1["shapes"]["gb"], r1["shapes"]["gc"])]  # parent-child
    b2, _ = _import(arm, enable_self_collisions=False)
    assert len(b2.shape_collision_filter_pairs) == 3


def test_gravity_and_exclude_pairs():
    b, res = _import(MJX_HUMANOID)
    assert b.gravity == -9.81 and res["timestep"] == 0.005
    xml = """<mujoco><option gravity="0 0 -3"/><worldbody><body name="a"><freejoint/><geom size=".1"/></body>
      <body name="b"><freejoint/><geom size=".1"/></body></worldbody><contact><exclude body1="a" body2="b"/>
      </contact></mujoco>"""
    b2, res2 = _import(xml)
    assert b2.gravity == -3.0 and res2["unsupported"] == []
    assert b2.shape_collision_filter_pairs == [(0, 1)]


def test_keyframes_mocap_and_other_actuators():
    b, res = _import(MJX_HUMANOID)
    m = res["mj_model"]
    k = [m.key(i).name for i in range(m.nkey)].index("squat")
    np.testing.assert_allclose(res["keyframes"]["squat"], m.key_qpos[k][res["coord_map"]])
    # the 4 explicit <pair>s are imported with their own friction/solref: nothing is reported
    assert res["unsupported"] == [] and len(b.shape_explicit_contact_pairs) == 4
    xml = """<mujoco><worldbody><body name="mc" mocap="true" pos="0 0 1"><geom size=".1"/></body>
      <body name="bb"><joint name="ball" type="ball"/><geom size=".1"/>
      <body name="h" pos="0 0 1"><joint name="hinge"/><geom size=".1"/></body></body></worldbody>
      <actuator><motor name="ballmotor" joint="ball" gear="1 0 0 0 0 0"/>
      <position name="slow" joint="hinge" kp="10" timeconst="0.1"/>
      <general name="weird" joint="hinge" gainprm="1" biastype="affine" biasprm="1 2 3"/></actuator></mujoco>"""
    b2, res2 = _import(xml)
    assert b2.body_flags[res2["bodies"]["mc"]] == int(jaxart.BodyFlags.KINEMATIC)
    assert b2.joint_type[res2["joints"]["mc_mocap"]] == jaxart.JointType.FREE
    assert b2.mocap_joint == [res2["joints"]["mc_mocap"]] and res2["mocap"] == {"mc": 0}
    assert res2["actuators"] == {"slow": 0}  # filterexact: a stateful actuator setting the position target
    text = " ".join(res2["unsupported"])
    for word in ("'ballmotor'", "'weird'"):
        assert word in text
    assert "mocap" not in text and "'slow'" not in text
    hinge_dof = b2.joint_qd_start[res2["joints"]["hinge"]]
    assert b2.joint_target_mode[hinge_dof] == jaxart.JointTargetMode.POSITION
    assert b2.joint_dof["target_ke"][hinge_dof] == 10.0


def test_mesh_files_scaled_by_mujoco():
    path = os.path.join(os.path.dirname(mujoco.mjx.__file__), "test_data", "convex.xml")
    b, res = _import(path)
    m = res["mj_model"]
    for name in ("tetrahedron", "dodecahedron", "pyramid"):
        g = m.geom(name).id
        mesh = b.shape_source[res["shapes"][name]]
        k = m.geom_dataid[g]
        verts = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        np.testing.assert_allclose(mesh.vertices, verts)  # compiled: scaled and re-centred by MuJoCo
        assert mesh.indices.shape == (m.mesh_facenum[k], 3)
        np.testing.assert_allclose(b.shape_transform[res["shapes"][name]][:3], m.geom_pos[g])
