"""``eval_sensors``: every sensor of a model in one pure function, in the model's sensor data layout.

Sensors of one kind are evaluated together (one batched computation per kind present), then placed at their
addresses with one static gather; ``cutoff`` is applied as MuJoCo applies it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.sensors import acceleration, contact_values, frame_values, scalar_values, subtree
from jaxart.sensors.context import SensorContext
from jaxart.sensors.inputs import SensorInputs
from jaxart.sim import checks
from jaxart.sim.model import Control, State
from jaxart.sim.sensor_types import SensorDataType, SensorType

_T = SensorType
_EVALUATORS = {
    _T.JOINTPOS: scalar_values.joint_pos, _T.JOINTVEL: scalar_values.joint_vel,
    _T.JOINTACTFRC: scalar_values.joint_actuator_force, _T.TENDONPOS: scalar_values.tendon_pos,
    _T.TENDONVEL: scalar_values.tendon_vel, _T.TENDONACTFRC: scalar_values.tendon_actuator_force,
    _T.CLOCK: scalar_values.clock, _T.BALLQUAT: scalar_values.ball_quat, _T.BALLANGVEL: scalar_values.ball_angvel,
    _T.FRAMEPOS: frame_values.frame_pos, _T.FRAMEQUAT: frame_values.frame_quat,
    _T.FRAMEXAXIS: frame_values.frame_axis(0), _T.FRAMEYAXIS: frame_values.frame_axis(1),
    _T.FRAMEZAXIS: frame_values.frame_axis(2), _T.FRAMELINVEL: frame_values.frame_linvel,
    _T.FRAMEANGVEL: frame_values.frame_angvel, _T.VELOCIMETER: frame_values.velocimeter,
    _T.GYRO: frame_values.gyro, _T.MAGNETOMETER: frame_values.magnetometer,
    _T.FRAMELINACC: acceleration.frame_linacc, _T.FRAMEANGACC: acceleration.frame_angacc,
    _T.ACCELEROMETER: acceleration.accelerometer, _T.FORCE: acceleration.force, _T.TORQUE: acceleration.torque,
    _T.SUBTREECOM: subtree.subtree_com, _T.SUBTREELINVEL: subtree.subtree_linvel,
    _T.SUBTREEANGMOM: subtree.subtree_angmom,
    _T.TOUCH: contact_values.touch, _T.RANGEFINDER: contact_values.rangefinder,
}


def _check_inputs(model, inputs: SensorInputs) -> None:
    if not isinstance(inputs, SensorInputs):
        raise TypeError(f"eval_sensors: inputs must be a SensorInputs or None, got {type(inputs).__name__}")
    if inputs.joint_qdd is not None:
        checks.check_array(inputs.joint_qdd, (model.joint_dof_count,), "eval_sensors: inputs.joint_qdd")
    if inputs.body_f is not None:
        checks.check_array(inputs.body_f, (model.body_count, 6), "eval_sensors: inputs.body_f")
    if inputs.contacts is not None:
        checks.check_contacts(inputs.contacts, "eval_sensors: inputs.contacts")
        if inputs.contact_force is not None:
            checks.check_array(inputs.contact_force, (inputs.contacts.capacity, 3),
                               "eval_sensors: inputs.contact_force")
    if inputs.time is not None:
        checks.check_array(inputs.time, (), "eval_sensors: inputs.time")


def _apply_cutoff(model, data: jax.Array) -> jax.Array:
    """MuJoCo's cutoff: REAL outputs clipped to ``[−c, c]``, POSITIVE ones to ``≤ c``, where ``c > 0``."""
    sensor = model.sensor
    per = np.repeat(np.arange(sensor.sensor_count), sensor.sensor_dim.array)
    dtype_of = sensor.sensor_datatype.array[per]
    c = model.sensor_cutoff.astype(data.dtype)[per]
    on = c > 0.0
    real = jnp.asarray(dtype_of == int(SensorDataType.REAL))
    positive = jnp.asarray(dtype_of == int(SensorDataType.POSITIVE))
    clipped = jnp.where(real, jnp.clip(data, -c, c), jnp.where(positive, jnp.minimum(data, c), data))
    return jnp.where(on, clipped, data)


@jax.jit
def _eval(model, state: State, control: Control, inputs: SensorInputs) -> jax.Array:
    sensor = model.sensor
    ctx = SensorContext(model, state, control, inputs)
    types = sensor.sensor_type.array
    parts, order = [], []
    for kind in sorted({int(t) for t in types}):
        rows = np.flatnonzero(types == kind)
        parts.append(_EVALUATORS[SensorType(kind)](ctx, rows).reshape(-1))
        order.append(rows)
    flat = jnp.concatenate(parts)
    # position of every sensor's first value in ``flat``, then the static gather into address order
    dims = sensor.sensor_dim.array
    start = np.zeros(sensor.sensor_count, np.int64)
    offset = 0
    for rows in order:
        start[rows] = offset + np.concatenate([[0], np.cumsum(dims[rows])[:-1]])
        offset += int(dims[rows].sum())
    gather = np.concatenate([start[s] + np.arange(dims[s]) for s in range(sensor.sensor_count)])
    return _apply_cutoff(model, flat[gather])


def eval_sensors(model, state: State, control: Control | None = None,
                 inputs: SensorInputs | None = None) -> jax.Array:
    """Evaluate every sensor of ``model`` (MuJoCo's ``sensordata``, noise-free).

    Pure and ``jit``/``vmap``/``grad`` compatible. Sensors are laid out in the order they were added (MJCF order
    for imported ones); ``model.sensor_adr``/``sensor_dim`` give each one's slice (:func:`sensor_slice`).

    Args:
        model: The model.
        state: The state; ``body_q``/``body_qd`` must match ``joint_q``/``joint_qd`` (as after a solver step or
            :func:`jaxart.eval_fk`).
        control: Control read by JOINTACTFRC/TENDONACTFRC (``None``: the model's defaults).
        inputs: :class:`~jaxart.sensors.SensorInputs` with the step's joint accelerations (ACCELEROMETER,
            FRAMELINACC/ANGACC, FORCE, TORQUE), external wrenches, contacts and contact forces (TOUCH) and time
            (CLOCK); only the fields the model's sensors read are needed.

    Returns:
        ``(sensor_data_count,)`` sensor values (the model's dtype).

    Raises:
        ValueError: Bad shapes, or a sensor needs an input that is ``None``.
        TypeError: ``inputs`` is not a ``SensorInputs``.
    """
    checks.check_state(model, state, "eval_sensors: state")
    if control is not None and not isinstance(control, Control):
        raise TypeError(f"eval_sensors: control must be a Control or None, got {type(control).__name__}")
    inputs = SensorInputs() if inputs is None else inputs
    _check_inputs(model, inputs)
    if not model.sensor.sensor_count:
        return jnp.zeros((0,), state.body_q.dtype)
    return _eval(model, state, model.control() if control is None else control, inputs)
