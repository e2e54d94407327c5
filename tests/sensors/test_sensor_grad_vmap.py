"""Sensors built with the builder: gradients against finite differences, ``vmap`` against a loop, Newton's sensor
objects against the sensor table, and the builder's checks and ``add_builder`` merge."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.sensors import (
    SensorContact,
    SensorFrameTransform,
    SensorIMU,
    SensorInputs,
    SensorObjType,
    SensorType,
    eval_sensors,
    sensor_value,
)

T = SensorType


def _arm(accelerations: bool = True):
    """Two hinged links over a floor and a box, with a site at the tip looking down."""
    b = jaxart.ModelBuilder()
    b.add_shape_plane(width=0.0, length=0.0)
    b.add_shape_box(-1, xform=((0.6, 0.0, -0.3), (0, 0, 0, 1)), hx=0.2, hy=0.2, hz=0.1)
    l1 = b.add_link(com=(0.25, 0.0, 0.0), mass=1.0, inertia=np.diag([0.01, 0.02, 0.03]), lock_inertia=True,
                    xform=((0.0, 0.0, 1.0), (0, 0, 0, 1)))
    l2 = b.add_link(com=(0.2, 0.0, 0.0), mass=0.5, inertia=np.diag([0.01, 0.01, 0.02]), lock_inertia=True,
                    xform=((0.5, 0.0, 1.0), (0, 0, 0, 1)))
    j1 = b.add_joint_revolute(-1, l1, axis=(0.0, 1.0, 0.0), parent_xform=((0.0, 0.0, 1.0), (0, 0, 0, 1)))
    j2 = b.add_joint_revolute(l1, l2, axis=(0.0, 0.3, 1.0), parent_xform=((0.5, 0.0, 0.0), (0, 0, 0, 1)))
    b.add_articulation([j1, j2])
    tip = b.add_site(l2, xform=((0.4, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)), label="tip")  # +Z points down
    mid = b.add_site(l1, xform=((0.2, 0.05, 0.0), (0.0, 0.0, 0.38268343, 0.92387953)), label="mid")
    b.add_sensor_site(T.FRAMEPOS, tip, ref=mid, ref_type=SensorObjType.SHAPE, label="pos")
    b.add_sensor_site(T.GYRO, tip, label="gyro")
    if accelerations:
        b.add_sensor_site(T.FRAMEQUAT, tip, ref=mid, ref_type=SensorObjType.SHAPE, label="quat")
        b.add_sensor_site(T.ACCELEROMETER, tip, label="acc")
        b.add_sensor_site(T.TORQUE, mid, label="torque")
    else:
        b.add_sensor_site(T.FRAMELINVEL, tip, ref=mid, ref_type=SensorObjType.SHAPE, label="linvel")
    b.add_sensor_site(T.RANGEFINDER, tip, label="range")
    b.add_sensor_body(T.SUBTREEANGMOM, l1, label="angmom")
    b.add_sensor_joint(T.JOINTACTFRC, j2, cutoff=0.5, label="drive")
    return b


@pytest.fixture(scope="module")
def arm():
    return _arm().finalize(dtype=jnp.float64)


@pytest.fixture(scope="module")
def kinematic_arm():
    return _arm(accelerations=False).finalize(dtype=jnp.float64)


def _readings(model, q, qd):
    state = jaxart.eval_fk(model, q, qd, model.state())
    inputs = SensorInputs(joint_qdd=jaxart.eval_forward_dynamics(model, state)) if (
        T.ACCELEROMETER in model.sensor_type) else None
    return eval_sensors(model, state, None, inputs)


def _check_gradient(arm):
    weights = jnp.asarray(np.random.default_rng(0).normal(size=arm.sensor_data_count))

    @jax.jit
    def loss(x):
        return jnp.sum(weights * _readings(arm, x[:2], x[2:]))

    x = jnp.asarray([0.3, -0.4, 0.7, -0.5])
    assert float(sensor_value(arm, _readings(arm, x[:2], x[2:]), "range")[0]) > 0.0  # the ray hits
    grad = jax.jit(jax.grad(loss))(x)
    direction = jnp.asarray([0.3, -0.7, 0.5, 0.4])
    h = 1e-6
    fd = (loss(x + h * direction) - loss(x - h * direction)) / (2 * h)
    np.testing.assert_allclose(float(grad @ direction), float(fd), rtol=1e-6)


def test_gradient_matches_finite_differences(kinematic_arm):
    """A loss of the position/velocity sensors (a frame position and velocity in a moving reference frame, the ray
    distance, the subtree momentum, the clipped drive force) differentiated w.r.t. coordinates and velocities."""
    _check_gradient(kinematic_arm)


@pytest.mark.slow
def test_gradient_with_accelerations_matches_finite_differences(arm):
    """The same with the accelerometer and a torque sensor fed by forward dynamics."""
    _check_gradient(arm)


def test_vmap_matches_a_loop(kinematic_arm):
    arm = kinematic_arm
    xs = jnp.asarray(np.random.default_rng(1).uniform(-1.0, 1.0, (3, 4)))
    batched = jax.jit(jax.vmap(lambda x: _readings(arm, x[:2], x[2:])))(xs)
    single = jax.jit(lambda x: _readings(arm, x[:2], x[2:]))
    for k in range(3):
        np.testing.assert_allclose(batched[k], single(xs[k]), rtol=1e-10, atol=1e-12)


def test_newton_sensor_objects_match_the_table(arm):
    tip, mid = arm.shape_label.index("tip"), arm.shape_label.index("mid")
    imu_sensor, frame_sensor = SensorIMU(arm, [tip]), SensorFrameTransform(arm, [tip], [mid])

    @jax.jit
    def evaluate(x):
        state = jaxart.eval_fk(arm, x[:2], x[2:], arm.state())
        qdd = jaxart.eval_forward_dynamics(arm, state)
        data = eval_sensors(arm, state, None, SensorInputs(joint_qdd=qdd))
        return data, imu_sensor.eval(arm, state, qdd), frame_sensor.eval(arm, state)

    data, imu, rel = evaluate(jnp.asarray([0.3, -0.4, 0.7, -0.5]))
    rel = rel[0]
    np.testing.assert_allclose(imu.accelerometer[0], sensor_value(arm, data, "acc"), atol=1e-12)
    np.testing.assert_allclose(imu.gyroscope[0], sensor_value(arm, data, "gyro"), atol=1e-12)
    np.testing.assert_allclose(rel[:3], sensor_value(arm, data, "pos"), atol=1e-12)
    quat = sensor_value(arm, data, "quat")
    np.testing.assert_allclose(np.abs(rel[3:] @ jnp.r_[quat[1:], quat[0]]), 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="sites"):
        SensorIMU(arm, [99])


def test_sensor_contact_sums_forces_per_body():
    contacts = jaxart.Contacts.empty(3, jnp.float64)
    contacts = contacts.replace(body_a=jnp.asarray([-1, 0, 1]), body_b=jnp.asarray([0, 1, 0]),
                                active=jnp.asarray([True, True, False]))
    force = jnp.asarray([[0.0, 0.0, 2.0], [1.0, 0.0, 0.0], [5.0, 5.0, 5.0]])
    b = jaxart.ModelBuilder()
    for _ in range(2):
        b.add_body(mass=1.0)
    net = SensorContact(b.finalize(skip_validation_joints=True), [0, 1]).eval(contacts, force)
    np.testing.assert_allclose(net, [[-1.0, 0.0, 2.0], [1.0, 0.0, 0.0]])


def test_builder_checks_and_merge():
    b = _arm()
    with pytest.raises(ValueError, match="reference frame"):
        b.add_sensor_site(T.GYRO, 0, ref=1, ref_type=SensorObjType.SHAPE)
    with pytest.raises(ValueError, match="obj_type"):
        b.add_sensor(T.GYRO, 0, obj_type=SensorObjType.BODY)
    with pytest.raises(ValueError, match="SHAPE index"):
        b.add_sensor_site(T.GYRO, 42)
    with pytest.raises(ValueError, match="cutoff"):
        b.add_sensor_site(T.GYRO, 2, cutoff=-1.0)
    with pytest.raises(ValueError, match="already"):
        b.add_sensor_site(T.GYRO, 2, label="gyro")
    with pytest.raises(ValueError, match="FREE"):
        free = jaxart.ModelBuilder()
        free.add_joint_free(free.add_body(mass=1.0))
        free.add_sensor(T.JOINTPOS, 0)
    top = _arm()
    n, s0, b0 = top.sensor_count, top.shape_count, top.body_count
    top.add_builder(_arm(), label_prefix="copy")
    model = top.finalize()
    assert model.sensor_count == 2 * n and model.sensor_label[n] == "copy/pos"
    assert model.sensor_objid[n] == model.sensor_objid[0] + s0 and model.sensor_refid[n] == model.sensor_refid[0] + s0
    assert model.sensor_objid[n + 6] == model.sensor_objid[6] + b0  # subtree body
    assert model.sensor_objid[n + 7] == model.sensor_objid[7] + 2
