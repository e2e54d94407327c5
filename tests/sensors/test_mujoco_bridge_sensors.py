"""``SolverMuJoCo`` carries the model's sensors: its ``sensor_data`` against MuJoCo C on the original MJCF, MuJoCo C
on the converted model and ``jaxart.sensors.eval_sensors`` (float64, a static and a moving, actuated state)."""


import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from sensor_models import ARM_XML, arm_states, import_model, jaxart_state

import jaxart
from jaxart.sensors import SensorInputs, eval_sensors, sensor_slice
from jaxart.solvers.mujoco import SolverMuJoCo

# MJX collides no cylinder with a box: the sensor model's geoms are made non-colliding (rays still hit them)
_ARM = ARM_XML.replace("<mujoco>", '<mujoco><default><geom contype="0" conaffinity="0"/></default>', 1)


@pytest.fixture(scope="module")
def arm():
    m = mujoco.MjModel.from_xml_string(_ARM)
    model, info = import_model(_ARM)
    with pytest.warns(UserWarning, match="rays do not hit cylinders"):
        solver = SolverMuJoCo(model)
    return m, model, info, solver


def _compare(m, ref, got, *, skip=(), atol=1e-9):
    for i in range(m.nsensor):
        if m.sensor(i).name in skip:
            continue
        a, n = int(m.sensor_adr[i]), int(m.sensor_dim[i])
        r, val = ref[a:a + n], got[a:a + n]
        quat = (mujoco.mjtSensor.mjSENS_FRAMEQUAT, mujoco.mjtSensor.mjSENS_BALLQUAT)
        if m.sensor_type[i] in quat and r @ val < 0.0:
            val = -val  # a quaternion's sign carries no meaning
        np.testing.assert_allclose(val, r, atol=atol * max(1.0, np.abs(r).max()), err_msg=m.sensor(i).name)


def test_converted_model_carries_the_sensors(arm):
    m, model, info, solver = arm
    mj = solver.mj_model
    assert mj.nsensor == model.sensor_count and mj.nsensordata == model.sensor_data_count
    np.testing.assert_array_equal(mj.sensor_adr, model.sensor_adr)
    np.testing.assert_array_equal(mj.sensor_type, [  # the importer reads actuator sensors on their joint/tendon
        {mujoco.mjtSensor.mjSENS_ACTUATORFRC: mujoco.mjtSensor.mjSENS_JOINTACTFRC,
         mujoco.mjtSensor.mjSENS_ACTUATORPOS: mujoco.mjtSensor.mjSENS_JOINTPOS,
         mujoco.mjtSensor.mjSENS_ACTUATORVEL: mujoco.mjtSensor.mjSENS_TENDONVEL}.get(int(t), int(t))
        for t in m.sensor_type])
    np.testing.assert_array_equal(mj.sensor_cutoff, m.sensor_cutoff)
    np.testing.assert_array_equal(mj.opt.magnetic, m.opt.magnetic)
    assert [mj.sensor(i).name for i in range(mj.nsensor)] == list(model.sensor_label)
    k = model.sensor_label.index("fq_geom_ref")  # reference frames are sites at the referenced frame
    assert mj.sensor_reftype[k] == mujoco.mjtObj.mjOBJ_SITE and mj.site(int(mj.sensor_refid[k])).name.endswith("__ref")


def test_converted_model_sensors_match_the_original_in_mujoco_c(arm):
    """MuJoCo C's ``mj_forward`` on the converted model reads what it reads on the original MJCF."""
    m, model, info, solver = arm
    for d, state, _, control, _ in arm_states(m, model, info):
        dc = solver.to_mj_data(state, control)
        dc.time = d.time
        mujoco.mj_forward(solver.mj_model, dc)
        # jointactuatorfrc on j1 also counts the tendon motor through j1 (af1 is MuJoCo's actuatorfrc of m1 alone,
        # as jaxart's JOINTACTFRC; sensor_data reads the joint's own actuators)
        _compare(m, d.sensordata, dc.sensordata, skip=("af1",))
        af1 = dc.sensordata[sensor_slice(model, "af1")][0]
        assert af1 == pytest.approx(d.ctrl[0] + 0.7 * d.ctrl[2], abs=1e-12)  # t1 = 0.7 j1, tendon motor gear 1


@pytest.mark.slow
def test_sensor_data_matches_mujoco_and_eval_sensors(arm):
    m, model, info, solver = arm
    for d, state, qdd, control, body_f in arm_states(m, model, info):
        got = np.asarray(solver.sensor_data(state, control, time=d.time))
        _compare(m, d.sensordata, got, skip=("rf_cyl",))  # MJX's rays miss cylinders (warned at construction)
        inputs = SensorInputs(joint_qdd=qdd, body_f=jnp.asarray(body_f), time=jnp.asarray(d.time))
        _compare(m, np.asarray(eval_sensors(model, state, control, inputs)), got, skip=("rf_cyl",))
    # the moving state exercises both cutoffs (a clipped joint velocity and a clipped force)
    assert abs(got[sensor_slice(model, "jv1cut")][0]) == pytest.approx(0.05)
    assert np.abs(got[sensor_slice(model, "force_cut")]).max() == pytest.approx(1.5)


def test_joint_actuator_force_clamps_drive_and_joint_act_together():
    """JOINTACTFRC's DOF takes ``joint_act`` through a motor, so the effort limit bounds drive + joint_act."""
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1, com=(0.3, 0.0, 0.0))
    j = b.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0), target_ke=10.0, target_kd=1.0, effort_limit=4.0)
    b.add_articulation([j])
    b.add_sensor_joint(jaxart.sensors.SensorType.JOINTACTFRC, j, label="frc")
    model = b.finalize(dtype=jnp.float64)
    solver = SolverMuJoCo(model)
    assert solver.mj_model.actuator("frc__act").trntype == mujoco.mjtTrn.mjTRN_JOINT
    state = jaxart.eval_fk(model, jnp.asarray([0.1]), jnp.asarray([0.5]), model.state())
    acts = jnp.asarray([[0.0], [2.0], [-20.0]])
    control = jax.vmap(lambda a: model.control().replace(joint_act=a, joint_target_q=jnp.asarray([0.2])))(acts)
    got = np.asarray(jax.vmap(lambda c: solver.sensor_data(state, c))(control))[:, 0]  # batched controls
    expected = np.clip(10.0 * (0.2 - 0.1) - 1.0 * 0.5 + np.asarray(acts[:, 0]), -4.0, 4.0)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    control = model.control().replace(joint_act=jnp.asarray([2.0]), joint_target_q=jnp.asarray([0.2]))
    assert got[1] == pytest.approx(float(eval_sensors(model, state, control)[0]), abs=1e-12)


def test_unmapped_sensor_is_left_out_with_a_warning_and_sensor_data_raises():
    b = jaxart.ModelBuilder()
    mid = b.add_link()  # a massless link folded into its child's MuJoCo body
    tip = b.add_link(mass=1.0, inertia=np.eye(3) * 0.1)
    j0 = b.add_joint_revolute(-1, mid, axis=(1.0, 0.0, 0.0))
    j1 = b.add_joint_revolute(mid, tip, axis=(0.0, 1.0, 0.0), parent_xform=((0.0, 0.0, 0.3), (0, 0, 0, 1)))
    b.add_articulation([j0, j1])
    b.add_sensor_body(jaxart.sensors.SensorType.FRAMEPOS, mid, label="on_mid")
    model = b.finalize(dtype=jnp.float64)
    with pytest.warns(UserWarning, match="'on_mid'.*folded"):
        solver = SolverMuJoCo(model)
    assert solver.mj_model.nsensor == 0
    solver.step(model.state(), None, None, 1e-3)  # stepping is unaffected
    with pytest.raises(NotImplementedError, match="'on_mid'.*folded"):
        solver.sensor_data(model.state())


_TOUCH = """<mujoco><option timestep="0.002"/>
<worldbody>
  <geom name="floor" type="plane" size="0 0 1"/>
  <body name="box" pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="2"/>
    <site name="bottom" type="box" size="0.11 0.11 0.02" pos="0 0 -0.1"/>
    <site name="top" type="box" size="0.11 0.11 0.02" pos="0 0 0.1"/></body>
</worldbody>
<sensor><touch name="bottom" site="bottom"/><touch name="top" site="top"/><force name="f" site="top"/></sensor>
</mujoco>"""


@pytest.mark.slow
def test_touch_of_a_resting_box_through_the_bridge():
    """Contacts found by MuJoCo's collision inside the bridge: a settled box's bottom zone reads its weight."""
    m = mujoco.MjModel.from_xml_string(_TOUCH)
    d = mujoco.MjData(m)
    for _ in range(1500):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    model, info = import_model(_TOUCH)
    solver = SolverMuJoCo(model)
    state, _ = jaxart_state(model, info, m, d)
    got = np.asarray(solver.sensor_data(state))
    dc = solver.to_mj_data(state)
    np.testing.assert_allclose(got, dc.sensordata, rtol=1e-6, atol=1e-9)  # MJX = MuJoCo C on the converted model
    weight = 2.0 * 9.81
    # the converted contact's solref is jaxart's mapping of the MJCF one, so the MJCF's resting depth is a few
    # percent off the converted model's equilibrium
    assert got[0] == pytest.approx(weight, rel=5e-2) and d.sensordata[0] == pytest.approx(weight, rel=1e-3)
    assert got[1] == 0.0
