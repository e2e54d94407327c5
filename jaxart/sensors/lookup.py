"""Per-name access to sensor data (the layout of :func:`~jaxart.sensors.eval_sensors`)."""

from __future__ import annotations

import jax


def sensor_index(model, label: str) -> int:
    """Index of a sensor in the model's sensor table.

    Args:
        model: The model.
        label: The sensor's label (an imported MJCF sensor: its name, with the import's ``label_prefix``).

    Returns:
        The sensor index.

    Raises:
        KeyError: No sensor has that label.
    """
    labels = model.sensor.sensor_label
    if label not in labels:
        raise KeyError(f"sensor_index: no sensor labelled {label!r} (sensors: {list(labels)[:10]})")
    return labels.index(label)


def sensor_slice(model, label: str) -> slice:
    """Slice ``[adr, adr + dim)`` of a sensor in the sensor data vector (``KeyError`` for an unknown label)."""
    i = sensor_index(model, label)
    adr = int(model.sensor.sensor_adr.array[i])
    return slice(adr, adr + int(model.sensor.sensor_dim.array[i]))


def sensor_value(model, data: jax.Array, label: str) -> jax.Array:
    """Values of one sensor.

    Args:
        model: The model.
        data: ``(..., sensor_data_count)`` sensor data (leading batch axes allowed).
        label: The sensor's label.

    Returns:
        ``(..., dim)`` values.

    Raises:
        ValueError: ``data``'s last axis is not the sensor data length.
        KeyError: Unknown label.
    """
    if data.shape[-1:] != (model.sensor.sensor_data_count,):
        raise ValueError(f"sensor_value: data must end with the sensor data length {model.sensor.sensor_data_count}, "
                         f"got shape {tuple(data.shape)}")
    return data[..., sensor_slice(model, label)]


def sensor_dict(model, data: jax.Array) -> dict[str, jax.Array]:
    """``{label: (..., dim) values}`` of every sensor in ``data`` (``(..., sensor_data_count)``)."""
    return {label: sensor_value(model, data, label) for label in model.sensor.sensor_label}
