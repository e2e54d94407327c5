"""MuJoCo's sensors for articulated bodies, evaluated as pure functions of ``(model, state, control, inputs)``.

The sensor table lives on the model (``model.sensor``: kinds, objects, reference frames, sizes, addresses; traced
cutoffs and frame offsets), filled by ``ModelBuilder.add_sensor*`` or the MJCF importer. :func:`eval_sensors`
returns MuJoCo's ``sensordata`` layout; :class:`SensorInputs` carries the step's accelerations, loads, contacts and
time for the sensors that need them. :class:`SensorIMU`, :class:`SensorContact` and :class:`SensorFrameTransform`
are Newton 1.8's sensor objects made functional.
"""

from jaxart.sensors.body_acceleration import body_accelerations
from jaxart.sensors.evaluate import eval_sensors
from jaxart.sensors.inputs import SensorInputs
from jaxart.sensors.lookup import sensor_dict, sensor_index, sensor_slice, sensor_value
from jaxart.sensors.newton import IMUReading, SensorContact, SensorFrameTransform, SensorIMU
from jaxart.sim.sensor_types import SensorDataType, SensorObjType, SensorType

__all__ = [
    "IMUReading",
    "SensorContact",
    "SensorFrameTransform",
    "SensorIMU",
    "SensorDataType",
    "SensorInputs",
    "SensorObjType",
    "SensorType",
    "body_accelerations",
    "eval_sensors",
    "sensor_dict",
    "sensor_index",
    "sensor_slice",
    "sensor_value",
]
