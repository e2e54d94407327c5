"""Heightfield shapes of the MuJoCo bridge (HFIELD → ``mjGEOM_HFIELD``).

As in Newton's MuJoCo-integration mapping tables.

A jaxart :class:`~jaxart.sim.heightfield.Heightfield` with shape scale ``(sx, sy, sz)`` becomes an
``<hfield>`` asset with the normalised ``[0, 1]`` grid as data (row 0 at ``-hy``, as MuJoCo compiles
it) and ``size = (hx sx, hy sy, max(sz (max_z - min_z), ε), sz base)`` (``base`` defaults to
:data:`~jaxart.sim.heightfield.DEFAULT_HFIELD_BASE`), and an ``mjGEOM_HFIELD`` geom whose origin is the
shape origin shifted by ``sz min_z`` along the shape's own z axis, so MuJoCo's surface
``z = data · size_z`` sits exactly at jaxart's ``min_z + data (max_z - min_z)``.
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.sim.heightfield import DEFAULT_HFIELD_BASE, Heightfield
from jaxart.sim.validate import np_transform_mul

#: Smallest MuJoCo elevation range [m] (MuJoCo needs ``size_z > 0``; flat fields get this).
MIN_HFIELD_SIZE_Z = 1e-4


def hfield_size(src: Heightfield, scale: np.ndarray) -> np.ndarray:
    """MuJoCo ``hfield_size`` ``(size_x, size_y, size_z, size_base)`` of ``src`` under shape ``scale``."""
    sx, sy, sz = (float(v) for v in scale)
    base = DEFAULT_HFIELD_BASE if src.base is None else src.base
    return np.array([src.hx * sx, src.hy * sy, max((src.max_z - src.min_z) * sz, MIN_HFIELD_SIZE_Z), base * sz])


def hfield_geom_pose(src: Heightfield, scale: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Geom pose: shape pose ``x`` shifted by ``scale_z · min_z`` along its own z axis."""
    shift = np.array([0.0, 0.0, float(src.min_z) * float(scale[2]), 0.0, 0.0, 0.0, 1.0])
    return np_transform_mul(np.asarray(x, np.float64), shift)


def add_hfield(spec: mujoco.MjSpec, h, s: int, label: str, x: np.ndarray) -> tuple[np.ndarray, str]:
    """Register the ``<hfield>`` asset of heightfield shape ``s``.

    Args:
        spec: Target spec.
        h: The converter's host view of the model (``h.model.meshes``, ``h.shape_scale``).
        s: Shape index.
        label: Shape label (the asset is named ``<label>_hfield``).
        x: Shape pose in the MuJoCo body frame.

    Returns:
        ``(geom pose, asset name)``.

    Raises:
        ValueError: The shape has no :class:`Heightfield` data.
    """
    src = h.model.meshes[s] if s < len(h.model.meshes) else None
    if not isinstance(src, Heightfield):
        raise ValueError(f"SolverMuJoCo: heightfield shape {label!r} has no Heightfield data")
    scale = h.shape_scale[s]
    name = f"{label.replace('/', '_')}_hfield"
    data = np.asarray(src.data, np.float64).reshape(-1)
    spec.add_hfield(name=name, nrow=src.nrow, ncol=src.ncol, size=hfield_size(src, scale).tolist(),
                    userdata=data.tolist())
    return hfield_geom_pose(src, scale, x), name
