"""Sensors against MuJoCo C's ``sensordata`` on the same MJCF model (float64).

One model carries 48 sensors of 28 kinds (joints, tendon, actuators, frames with every object and reference type,
subtrees, site sensors, rays against every primitive, clock); jaxart's state and joint accelerations are MuJoCo's
``qpos``/``qvel``/``qacc`` mapped to jaxart's coordinates. All sensors are evaluated by one compiled function, for
the initial state and a moving, actuated one with external wrenches.
"""

import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from sensor_models import ARM_XML, arm_states, import_model

import jaxart
from jaxart.sensors import (
    SensorContact,
    SensorInputs,
    SensorType,
    eval_sensors,
    sensor_dict,
    sensor_slice,
    sensor_value,
)


@pytest.fixture(scope="module")
def arm():
    m = mujoco.MjModel.from_xml_string(ARM_XML)
    model, info = import_model(ARM_XML)
    return m, model, info


def _compare(m, d, got, atol=1e-9):
    for i in range(m.nsensor):
        a, n = int(m.sensor_adr[i]), int(m.sensor_dim[i])
        ref, val = d.sensordata[a:a + n], got[a:a + n]
        quat = (mujoco.mjtSensor.mjSENS_FRAMEQUAT, mujoco.mjtSensor.mjSENS_BALLQUAT)
        if m.sensor_type[i] in quat and ref @ val < 0.0:
            val = -val  # a quaternion's sign carries no meaning
        np.testing.assert_allclose(val, ref, atol=atol * max(1.0, np.abs(ref).max()), err_msg=m.sensor(i).name)


def test_every_sensor_matches_mujoco(arm):
    m, model, info = arm
    assert model.sensor_count == m.nsensor and model.sensor_data_count == m.nsensordata
    assert {int(t) for t in model.sensor_type} == {int(t) for t in SensorType} - {SensorType.TOUCH}  # touch: below
    np.testing.assert_array_equal(model.sensor_adr, m.sensor_adr)
    for d, state, qdd, control, body_f in arm_states(m, model, info):
        inputs = SensorInputs(joint_qdd=qdd, body_f=jnp.asarray(body_f), time=jnp.asarray(d.time))
        got = np.asarray(eval_sensors(model, state, control, inputs))
        _compare(m, d, got)
    # the moving state exercises both cutoffs (a clipped joint velocity and a clipped force)
    assert abs(got[sensor_slice(model, "jv1cut")][0]) == pytest.approx(0.05)
    assert np.abs(got[sensor_slice(model, "force_cut")]).max() == pytest.approx(1.5)


def test_lookup_helpers(arm):
    m, model, info = arm
    data = jnp.arange(model.sensor_data_count, dtype=jnp.float64)
    assert sensor_slice(model, "fq_xbody") == slice(int(m.sensor("fq_xbody").adr[0]),
                                                     int(m.sensor("fq_xbody").adr[0]) + 4)
    batch = jnp.stack([data, data])
    np.testing.assert_array_equal(sensor_value(model, batch, "acc")[1], data[sensor_slice(model, "acc")])
    assert set(sensor_dict(model, data)) == {m.sensor(i).name for i in range(m.nsensor)}
    assert info["sensors"]["clock"] == m.sensor("clock").id
    with pytest.raises(KeyError, match="nope"):
        sensor_slice(model, "nope")


def test_missing_inputs_are_named(arm):
    _, model, _ = arm
    with pytest.raises(ValueError, match="joint_qdd"):
        eval_sensors(model, model.state(), None, SensorInputs(time=0.0))
    with pytest.raises(ValueError, match="joint_qdd"):
        eval_sensors(model, model.state(), None, SensorInputs(joint_qdd=jnp.zeros(3), time=0.0))
    with pytest.raises(TypeError, match="inputs"):
        eval_sensors(model, model.state(), None, {"time": 0.0})


TOUCH_XML = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.1 0.08 0.1" mass="2"/>
      <site name="bottom" type="box" size="0.12 0.1 0.03" pos="0 0 -0.1"/>
      <site name="top" type="sphere" size="0.05" pos="0 0 0.1"/>
      <site name="corner" type="sphere" size="0.02" pos="0.1 0.08 -0.1"/>
    </body>
  </worldbody>
  <sensor>
    <touch name="bottom" site="bottom"/>
    <touch name="top" site="top"/>
    <touch name="corner" site="corner"/>
    <touch name="capped" site="bottom" cutoff="5"/>
  </sensor>
</mujoco>
"""


def test_touch_of_a_resting_box_is_its_weight():
    """A box settled on the floor: the bottom zone reads the weight (MuJoCo and jaxart's implicit contact law),
    the top zone nothing, a corner zone part of it, and the cutoff caps it."""
    from jaxart.contact.implicit import implicit_contact_forces

    m = mujoco.MjModel.from_xml_string(TOUCH_XML)
    d = mujoco.MjData(m)
    for _ in range(1500):
        mujoco.mj_step(m, d)
    weight = 2.0 * 9.81
    np.testing.assert_allclose(d.sensordata[0], weight, rtol=1e-3)

    model, _ = import_model(TOUCH_XML)
    dt = 4e-3
    solver = jaxart.solvers.SolverFeatherstone(model, angular_damping=0.0)
    box = SensorContact(model, [0])

    @jax.jit
    def settle_and_read(st):
        def step(_, carry):  # the last iteration's input state, contacts and contact forces are kept
            contacts = model.collide(carry[3])
            nxt = solver.step(carry[3], None, contacts, dt)
            return carry[3], contacts, implicit_contact_forces(model, carry[3], contacts, nxt.joint_qd, dt), nxt

        contacts = model.collide(st)
        st, contacts, force, _ = jax.lax.fori_loop(0, 300, step, (st, contacts, jnp.zeros_like(contacts.point), st))
        inputs = SensorInputs(contacts=contacts, contact_force=force)
        return eval_sensors(model, st, None, inputs), box.eval(contacts, force)

    got, net = settle_and_read(model.state())
    got = np.asarray(got)
    np.testing.assert_allclose(net[0], [0.0, 0.0, weight], rtol=1e-3, atol=1e-3 * weight)
    np.testing.assert_allclose(got[0], weight, rtol=1e-3)
    np.testing.assert_allclose(got[0], d.sensordata[0], rtol=2e-3)
    assert got[1] == 0.0 and d.sensordata[1] == 0.0
    assert 0.0 < got[2] < weight and 0.0 < d.sensordata[2] < weight
    assert got[3] == pytest.approx(5.0) and d.sensordata[3] == pytest.approx(5.0)


def test_import_reports_dropped_sensors():
    xml = """
    <mujoco><worldbody><body><joint name="b" type="ball"/><geom size=".1" mass="1"/><site name="s"/>
      <body pos="0 0 -0.3"><joint name="h" axis="0 1 0"/><geom size=".1" mass="1"/></body></body></worldbody>
      <actuator><motor name="m" joint="h" gear="2"/></actuator>
      <sensor><e_kinetic name="ek"/><actuatorpos name="ap" actuator="m"/>
        <actuatorfrc name="af" actuator="m"/><actuatorvel name="av" actuator="m"/>
        <jointpos name="jp" joint="h" noise="0.1"/>
        <gyro name="g" site="s"/></sensor>
    </mujoco>"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, info = import_model(xml)
    text = "\n".join(str(w.message) for w in caught)
    for name in ("'ap'", "'af'", "'av'"):
        assert f"sensor {name}" in text and "dropped" in text
    assert "noise" in text
    assert model.sensor_label == ["jp", "g"] and set(info["sensors"]) == {"jp", "g"}
    assert "sensor 'ek' (e_kinetic): sensor type not supported" in text
    b = jaxart.ModelBuilder()
    for prefix in ("a", "b"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b.add_mjcf(xml, label_prefix=prefix)
    twice = b.finalize()
    assert twice.sensor_label == ["a/jp", "a/g", "b/jp", "b/g"]
    assert twice.sensor_objid[3] == twice.shape_label.index("b/s")
    assert twice.sensor_objid[2] == 7  # DOFs: ball (3) + hinge per copy
    with pytest.raises(ValueError, match="e_kinetic"):
        jaxart.ModelBuilder().add_mjcf(xml, strict=True)
