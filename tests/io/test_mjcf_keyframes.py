"""MJCF keyframes (qpos, qvel, act, ctrl, mocap poses, time) against MuJoCo C's ``mj_resetDataKeyframe``."""

from __future__ import annotations

import jax.numpy as jnp
import mujoco
import numpy as np

import jaxart

_XML = """<mujoco><option timestep="0.002"/>
<worldbody>
  <body name="hand" mocap="true" pos="0 0 1"><geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
  <body name="eye" mocap="true" pos="1 0 1"><geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
  <body name="arm" pos="0 0 0.5" euler="0.1 0.2 0.3">
    <joint name="hinge" axis="0 1 0" ref="0.2"/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" mass="1"/>
    <body name="tip" pos="0.4 0 0">
      <joint name="slide" type="slide" axis="1 0 0"/>
      <joint name="twist" axis="0 0 1"/>
      <geom type="box" size="0.05 0.04 0.03" pos="0.05 0 0" mass="0.5"/>
      <body name="wrist" pos="0.1 0 0"><joint name="ball" type="ball"/>
        <geom type="sphere" size="0.04" pos="0 0 -0.1" mass="0.3"/></body>
    </body>
  </body>
  <body name="float" pos="-1 0 0.5"><freejoint name="free"/>
    <geom type="box" size="0.1 0.2 0.05" pos="0.02 0.01 0" mass="2"/></body>
  <body name="lever" pos="2 0 0.5"><joint name="h2" axis="1 0 0"/><geom type="sphere" size="0.1" mass="1"/></body>
</worldbody>
<actuator>
  <motor name="m" joint="hinge"/>
  <position name="servo" joint="twist" kp="4" timeconst="0.05"/>
  <general name="int" joint="slide" dyntype="integrator" gainprm="1"/>
  <position name="pos2" joint="h2" kp="3" ctrlrange="-0.5 0.5" ctrllimited="true"/>
</actuator>
<keyframe>
  <key name="pose" time="1.5" qpos="0.3 0.1 -0.4 0.8 0.2 -0.5 0.1 -1 0.2 0.6 0.9 0.1 0.3 -0.2 0.05"
       qvel="0.5 -0.2 0.7 1.0 -0.5 0.3 0.4 0.1 -0.3 0.8 -0.6 0.2 0.4" act="0.25 -0.4" ctrl="0.1 0.2 0.3 0.9"
       mpos="0.1 0.2 1.1 1 0.3 1.2" mquat="0.9 0.1 0.3 0 0 1 0 0"/>
</keyframe>
</mujoco>"""


def _wxyz(q):
    return np.asarray(q)[..., [3, 0, 1, 2]]


def test_keyframe_state_and_control_match_mj_reset_data_keyframe():
    b = jaxart.ModelBuilder()
    info = b.add_mjcf(_XML)
    assert not [w for w in info["unsupported"] if "keyframe" in w]
    model = b.finalize(dtype=jnp.float64)
    m = info["mj_model"]
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    mujoco.mj_forward(m, d)
    key = info["keyframe_data"]["pose"]
    np.testing.assert_array_equal(info["keyframes"]["pose"], key.joint_q)
    assert key.time == d.time == 1.5
    np.testing.assert_array_equal(key.ctrl, d.ctrl)
    state, control = key.state(model), key.control(model)
    # stateful actuators in add_mjcf's order: the filterexact servo, then the integrator motor
    assert info["actuators"] == {"servo": 0, "int": 1}
    np.testing.assert_allclose(state.actuator_act, d.act, atol=0)
    np.testing.assert_allclose(control.actuator_ctrl, d.ctrl[1:3], atol=0)
    # drives without activation dynamics: the motor's force into joint_act, the servo's clamped target
    hinge_dof = info["dof_start"] + list(info["dof_map"]).index(int(m.jnt_dofadr[m.joint("hinge").id]))
    h2_coord = info["coord_start"] + list(info["coord_map"]).index(int(m.jnt_qposadr[m.joint("h2").id]))
    assert float(control.joint_act[hinge_dof]) == 0.1 and float(jnp.abs(control.joint_act).sum()) == 0.1
    assert float(control.joint_target_q[h2_coord]) == 0.5
    np.testing.assert_allclose(control.mocap_pos, d.mocap_pos, atol=0)
    quat = d.mocap_quat / np.linalg.norm(d.mocap_quat, axis=1, keepdims=True)
    np.testing.assert_allclose(_wxyz(jaxart.math.quat_normalize(control.mocap_quat)), quat, atol=1e-15)
    # poses and COM twists of every body from the keyframe's qpos/qvel (FK) equal MuJoCo's
    vel = np.zeros(6)
    for name in ("arm", "tip", "wrist", "float", "lever"):
        i, k = m.body(name).id, info["bodies"][name]
        np.testing.assert_allclose(state.body_q[k, :3], d.xpos[i], atol=1e-12, err_msg=name)
        assert abs(abs(float(np.dot(_wxyz(state.body_q[k, 3:]), d.xquat[i]))) - 1.0) < 1e-12, name
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, i, vel, 0)  # (ω, v at the COM), world
        np.testing.assert_allclose(state.body_qd[k, 3:], vel[:3], atol=1e-12, err_msg=name)
        np.testing.assert_allclose(state.body_qd[k, :3], vel[3:], atol=1e-12, err_msg=name)
