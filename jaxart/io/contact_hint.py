"""Static sinking estimate for a floating import resting on the ground (the importers' stiffness hint).

jaxart's penalty contact pushes back with ``ke · depth`` per contact. A floating robot resting on its
lowest collision shapes with the builder's default ``ShapeConfig.ke`` (2.5e3 N/m) can sink deeply:
a 30 kg humanoid standing on two feet sinks ``30 · 9.81 / (2 · 2.5e3) ≈ 6`` cm.

The estimate is deliberately simple: ``depth = m g / Σ ke`` where ``m`` is the imported mass, ``g``
the builder's ``|gravity|`` and the sum runs over the **lowest** colliding shapes at the initial pose
(those whose lowest point lies within :data:`LOWEST_TOL` of the lowest one), one contact each. Shapes
that touch through several contact points (a box on a face) sink less, so the estimate errs on the
side of warning. :func:`sinking_hint` returns a message when the estimate exceeds :data:`MAX_SINK`.
"""

from __future__ import annotations

import numpy as np

from jaxart.sim.enums import GeoType
from jaxart.sim.validate import np_quat_to_matrix

#: Shapes whose lowest point is within this height [m] of the model's lowest point count as resting on the ground.
LOWEST_TOL = 0.01
#: Estimated sinking [m] above which :func:`sinking_hint` warns.
MAX_SINK = 0.01


def lowest_point(builder, shape: int) -> float | None:
    """Height [m] along ``builder.up_vector`` of a shape's lowest point at the builder's initial body poses.

    Args:
        builder: The builder holding the shape.
        shape: Shape index.

    Returns:
        The height, or ``None`` for shapes without a finite extent (planes, heightfields, other types).
    """
    up = np.asarray(builder.up_vector, dtype=np.float64)
    body = int(builder.shape_body[shape])
    x = np.asarray(builder.shape_transform[shape], dtype=np.float64)
    r_shape = np_quat_to_matrix(x[3:])
    centre = x[:3]
    if body >= 0:
        xb = np.asarray(builder.body_q[body], dtype=np.float64)
        rb = np_quat_to_matrix(xb[3:])
        centre, r_shape = xb[:3] + rb @ centre, rb @ r_shape
    u = r_shape.T @ up  # up in the shape frame
    s = np.asarray(builder.shape_scale[shape], dtype=np.float64)
    geo = int(builder.shape_type[shape])
    if geo == GeoType.SPHERE:
        reach = s[0]
    elif geo == GeoType.CAPSULE:
        reach = s[0] + s[1] * abs(u[2])
    elif geo == GeoType.CYLINDER:
        reach = s[1] * abs(u[2]) + s[0] * np.sqrt(max(0.0, 1.0 - u[2] ** 2))
    elif geo == GeoType.BOX:
        reach = float(np.abs(u) @ s)
    elif geo == GeoType.ELLIPSOID:
        reach = float(np.linalg.norm(s * u))
    elif geo == GeoType.MESH:
        reach = float(-(np.asarray(builder.shape_source[shape].vertices) * s @ u).min())
    else:
        return None
    return float(centre @ up - reach)


def sinking_depth(builder, shapes: list[int], mass: float) -> tuple[float, int, float] | None:
    """Static sinking estimate (module docstring) of ``mass`` resting on the lowest of ``shapes``.

    Args:
        builder: The builder holding the shapes.
        shapes: Candidate shape indices (non-colliding ones are ignored).
        mass: Supported mass [kg].

    Returns:
        ``(depth [m], number of lowest shapes, their mean ke [N/m])``, or ``None`` without gravity,
        mass or a colliding shape of finite extent.
    """
    g = abs(float(builder.gravity))
    heights = {s: h for s in shapes if builder.shape_cfg[s].has_shape_collision
               and builder.shape_cfg[s].collision_group != 0 and (h := lowest_point(builder, s)) is not None}
    if g == 0.0 or mass <= 0.0 or not heights:
        return None
    low = min(heights.values())
    lowest = [s for s, h in heights.items() if h <= low + LOWEST_TOL]
    ke = sum(float(builder.shape_cfg[s].ke) for s in lowest)
    if ke <= 0.0:
        return None
    return mass * g / ke, len(lowest), ke / len(lowest)


def sinking_hint(builder, shapes: list[int], mass: float, *, importer: str) -> str | None:
    """A message naming ``builder.default_shape_cfg.ke`` when the estimated sinking exceeds :data:`MAX_SINK`.

    Args:
        builder: The builder holding the shapes.
        shapes: The imported shapes.
        mass: The imported mass [kg].
        importer: The importer's name for the message (``"add_urdf"``).

    Returns:
        The message, or ``None`` when the estimate is within :data:`MAX_SINK` (or there is none).
    """
    est = sinking_depth(builder, shapes, mass)
    if est is None or est[0] <= MAX_SINK:
        return None
    depth, n, ke = est
    need = mass * abs(float(builder.gravity)) / (n * 1e-3)
    return (f"{importer}: with contact stiffness ke = {ke:.4g} N/m on its {n} lowest collision shape(s), the "
            f"model's weight ({mass:.4g} kg) would sink it about {100.0 * depth:.3g} cm into the ground (static "
            f"estimate m·g/Σke); set builder.default_shape_cfg.ke (about {need:.3g} N/m for 1 mm) before {importer}, "
            "or the shapes' ke after it")
