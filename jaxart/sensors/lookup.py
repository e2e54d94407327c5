"""Per-name access to sensor data (the layout of :func:`~jaxart.sensors.eval_sensors`)."""

from __future__ import annotations

import jax


def sensor_index(model, label: str) -> int:
    """Index of the sensor named ``label``.

    Raises:
        KeyError: No sensor has that label.
    """
    labels = model.sensor.sensor_label
    if label not in labels:
        raise KeyError(f"sensor_index: no sensor labelled {label!r} (sensors: {list(labels)[:10]})")
    return labels.index(label)


def sensor_slice(model, label: str) -> slice:
    """Slice of the sensor named ``label`` in the sensor data vector."""
    i = sensor_index(model, label)
    adr = int(model.sensor.sensor_adr.array[i])
    return slice(adr, adr + int(model.sensor.sensor_dim.array[i]))


def sensor_value(model, data: jax.Array, label: str) -> jax.Array:
    """The values of sensor ``label`` in ``data`` (``(..., sensor_data_count)``, batches allowed): ``(..., dim)``."""
    if data.shape[-1] != model.sensor.sensor_data_count:
        raise ValueError(f"sensor_value: data must end with the sensor data length {model.sensor.sensor_data_count}, "
                         f"got shape {tuple(data.shape)}")
    return data[..., sensor_slice(model, label)]


def sensor_dict(model, data: jax.Array) -> dict[str, jax.Array]:
    """``{label: values}`` of every sensor in ``data`` (``(..., sensor_data_count)``)."""
    return {label: sensor_value(model, data, label) for label in model.sensor.sensor_label}
