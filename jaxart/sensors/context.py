"""What every sensor group reads: the model's sensor table, the state, and quantities computed once per call."""

from __future__ import annotations

import functools

import jax
import numpy as np

from jaxart.sensors.body_acceleration import body_accelerations
from jaxart.sensors.frames import FrameRefs, frame_poses, frame_refs
from jaxart.sensors.inputs import SensorInputs
from jaxart.sim.sensor_types import SensorType


class SensorContext:
    """Model, state, control and :class:`~jaxart.sensors.inputs.SensorInputs` of one evaluation, with the body
    accelerations and joint wrenches computed on first use (once per traced call).

    Attributes:
        model: The model.
        state: The state (``body_q``/``body_qd`` consistent with ``joint_q``/``joint_qd``).
        control: The control (the model's defaults when the caller passed ``None``).
        inputs: The per-step inputs.
    """

    def __init__(self, model, state, control, inputs: SensorInputs) -> None:
        self.model, self.state, self.control, self.inputs = model, state, control, inputs
        self._sensor = model.sensor

    def objects(self, rows: np.ndarray) -> FrameRefs:
        """Static bodies/shapes of the sensors' objects."""
        return frame_refs(self.model, self._sensor.sensor_objtype.array[rows], self._sensor.sensor_objid.array[rows])

    def references(self, rows: np.ndarray) -> FrameRefs:
        """Static bodies/shapes of the sensors' reference frames (world for NONE)."""
        return frame_refs(self.model, self._sensor.sensor_reftype.array[rows], self._sensor.sensor_refid.array[rows])

    def object_poses(self, rows: np.ndarray) -> jax.Array:
        """``(k, 7)`` world poses of the sensed frames."""
        return frame_poses(self.model, self.state, self.objects(rows), self.model.sensor_obj_xform[rows])

    def reference_poses(self, rows: np.ndarray) -> jax.Array:
        """``(k, 7)`` world poses of the reference frames (``sensor_ref_xform`` alone for the world)."""
        return frame_poses(self.model, self.state, self.references(rows), self.model.sensor_ref_xform[rows])

    def has_reference(self, rows: np.ndarray) -> np.ndarray:
        """Static ``(k,)`` mask of sensors with a reference frame."""
        return self._sensor.sensor_reftype.array[rows] != 0

    def objid(self, rows: np.ndarray) -> np.ndarray:
        """Static object indices."""
        return self._sensor.sensor_objid.array[rows]

    def require(self, name: str, kind: SensorType):
        """The input ``name``; ``ValueError`` when it is ``None``."""
        value = getattr(self.inputs, name)
        if value is None:
            raise ValueError(f"eval_sensors: the model has {kind.name} sensors, which read SensorInputs.{name}; "
                             "pass it in `inputs` (see jaxart.sensors.SensorInputs)")
        return value

    @functools.cached_property
    def body_acc(self) -> jax.Array:
        """``(body_count, 6)`` classical body accelerations ``(a_com, α)`` of ``inputs.joint_qdd``."""
        return body_accelerations(self.model, self.state, self.inputs.joint_qdd)

    @functools.cached_property
    def joint_wrenches(self) -> jax.Array:
        """``(joint_count, 6)`` world wrenches (:func:`jaxart.dynamics.eval_joint_wrenches`) of ``inputs.joint_qdd``
        and ``inputs.body_f``."""
        from jaxart.dynamics.joint_wrenches import eval_joint_wrenches

        return eval_joint_wrenches(self.model, self.state, self.inputs.joint_qdd, body_f=self.inputs.body_f)
