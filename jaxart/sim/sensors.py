"""Static sensor table of a model and its ``finalize`` wiring.

Each sensor has a :class:`~jaxart.sim.sensor_types.SensorType`, an object and an optional reference frame
(:class:`~jaxart.sim.sensor_types.SensorObjType` and an index each), an output size and its address in the sensor
data vector (MuJoCo's ``sensor_adr``, in the order sensors were added). The integer fields and labels are static
(:class:`SensorTopology`, part of ``Model``'s aux data: changing them recompiles); the cutoffs, the frame offsets
``sensor_obj_xform``/``sensor_ref_xform`` and the magnetic field are traced ``Model`` leaves.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxart.sim.sensor_types import sensor_datatype, sensor_dim
from jaxart.sim.static import StaticArray, StaticRecord, static_ints

#: Static per-sensor fields exposed on ``Model`` as numpy arrays (labels as lists).
SENSOR_STATIC_FIELDS = (
    "sensor_type",
    "sensor_objtype",
    "sensor_objid",
    "sensor_reftype",
    "sensor_refid",
    "sensor_dim",
    "sensor_adr",
    "sensor_datatype",
    "sensor_label",
    "sensor_count",
    "sensor_data_count",
)

#: MuJoCo's default magnetic field ``opt.magnetic`` (the builder's default ``sensor_magnetic_field``).
DEFAULT_MAGNETIC_FIELD = (0.0, -0.5, 0.0)


@dataclasses.dataclass(frozen=True, eq=False)
class SensorTopology(StaticRecord):
    """Static structure of a model's sensors (hashable; part of ``Model``'s static data).

    Attributes:
        sensor_type: ``(nsensor,)`` :class:`~jaxart.sim.sensor_types.SensorType` values.
        sensor_objtype: ``(nsensor,)`` :class:`~jaxart.sim.sensor_types.SensorObjType` of the object.
        sensor_objid: ``(nsensor,)`` object index (body, shape, DOF or tendon; −1 = the world body / none).
        sensor_reftype: ``(nsensor,)`` object type of the reference frame (NONE = world).
        sensor_refid: ``(nsensor,)`` reference frame index (−1 = none).
        sensor_dim: ``(nsensor,)`` output size.
        sensor_adr: ``(nsensor,)`` first index of each sensor in the sensor data vector.
        sensor_datatype: ``(nsensor,)`` :class:`~jaxart.sim.sensor_types.SensorDataType` (how cutoff applies).
        sensor_label: ``nsensor`` names.
    """

    sensor_type: StaticArray
    sensor_objtype: StaticArray
    sensor_objid: StaticArray
    sensor_reftype: StaticArray
    sensor_refid: StaticArray
    sensor_dim: StaticArray
    sensor_adr: StaticArray
    sensor_datatype: StaticArray
    sensor_label: tuple[str, ...]

    @property
    def sensor_count(self) -> int:
        """Number of sensors."""
        return len(self.sensor_label)

    @property
    def sensor_data_count(self) -> int:
        """Length of the sensor data vector (MuJoCo's ``nsensordata``)."""
        return int(np.sum(self.sensor_dim.array)) if self.sensor_count else 0


def sensor_fields(builder, arr) -> dict:
    """``Model`` constructor arguments for the builder's sensors.

    Args:
        builder: The :class:`~jaxart.ModelBuilder`.
        arr: ``arr(values, shape)`` → traced array of the model's dtype (from ``finalize``).

    Returns:
        Keyword arguments: ``sensor_cutoff``, ``sensor_obj_xform``, ``sensor_ref_xform``, ``sensor_magnetic_field``
        and ``sensor`` (:class:`SensorTopology`).
    """
    b = builder
    n = len(b.sensor_type)
    dims = [sensor_dim(t) for t in b.sensor_type]
    topo = SensorTopology(
        sensor_type=static_ints(b.sensor_type),
        sensor_objtype=static_ints(b.sensor_objtype),
        sensor_objid=static_ints(b.sensor_objid),
        sensor_reftype=static_ints(b.sensor_reftype),
        sensor_refid=static_ints(b.sensor_refid),
        sensor_dim=static_ints(dims),
        sensor_adr=StaticArray(np.concatenate([[0], np.cumsum(dims, dtype=np.int64)])[:n].astype(np.int32)),
        sensor_datatype=static_ints([sensor_datatype(t) for t in b.sensor_type]),
        sensor_label=tuple(b.sensor_label),
    )
    return dict(
        sensor_cutoff=arr(b.sensor_cutoff, (n,)),
        sensor_obj_xform=arr(b.sensor_obj_xform, (n, 7)),
        sensor_ref_xform=arr(b.sensor_ref_xform, (n, 7)),
        sensor_magnetic_field=arr(b.sensor_magnetic_field, (3,)),
        sensor=topo,
    )
