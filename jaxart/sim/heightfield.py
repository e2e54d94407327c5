"""Heightfields: 2D elevation grids for static terrain (Newton's ``newton.Heightfield``, host data).

Grid convention (Newton's and MuJoCo's compiled one): ``data[r, c]`` is the elevation at
``x = (2 c / (ncol - 1) - 1) hx``, ``y = (2 r / (nrow - 1) - 1) hy`` in the shape frame, so row 0
lies at ``y = -hy`` and column 0 at ``x = -hx``. The stored ``data`` is normalised to ``[0, 1]``;
the elevation [m] in the shape frame is ``min_z + data (max_z - min_z)`` (times the shape's z scale).
Heightfields are always static (``body = -1``) and carry no mass.
"""

from __future__ import annotations

import numpy as np

from jaxart.sim.enums import GeoType
from jaxart.sim.validate import as_float

#: Base thickness [m] below the lowest point used for MuJoCo when ``Heightfield.base`` is ``None``.
DEFAULT_HFIELD_BASE = 1e-4


class Heightfield:
    """A heightfield for :meth:`~jaxart.ModelBuilder.add_shape_heightfield`.

    Args:
        data: Elevation grid ``(nrow, ncol)`` (or ``nrow * ncol`` values with ``nrow``/``ncol``
            given). Any finite values; they are normalised to ``[0, 1]`` internally.
        nrow: Number of rows (y samples), >= 2; default ``data.shape[0]``.
        ncol: Number of columns (x samples), >= 2; default ``data.shape[1]``.
        hx: Half extent [m] along x (the grid spans ``[-hx, hx]``).
        hy: Half extent [m] along y.
        min_z: Elevation [m] of the data minimum; with ``max_z``, or both omitted to use the data's
            own minimum/maximum. Uniform data normalises to zeros (surface at ``min_z``).
        max_z: Elevation [m] of the data maximum (>= ``min_z``).
        base: jaxart extension: MuJoCo base thickness [m] below the lowest point (MJCF
            ``size[3]``); ``None`` uses :data:`DEFAULT_HFIELD_BASE`.

    Raises:
        ValueError: Wrong grid shape, fewer than 2 rows/columns, non-finite values, non-positive
            extents, only one of ``min_z``/``max_z``, or ``max_z < min_z``.
    """

    def __init__(self, data, nrow: int | None = None, ncol: int | None = None, hx: float = 1.0, hy: float = 1.0,
                 min_z: float | None = None, max_z: float | None = None, *, base: float | None = None) -> None:
        what = "Heightfield"
        try:
            raw = np.asarray(data, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{what}: data must be a numeric (nrow, ncol) grid") from None
        if nrow is None and ncol is None:
            if raw.ndim != 2:
                raise ValueError(f"{what}: data must be 2D (nrow, ncol) when nrow/ncol are omitted, got {raw.shape}")
            nrow, ncol = raw.shape
        elif nrow is None or ncol is None:
            raise ValueError(f"{what}: give both nrow and ncol or neither")
        nrow, ncol = _count(nrow, f"{what}: nrow"), _count(ncol, f"{what}: ncol")
        if raw.size != nrow * ncol:
            raise ValueError(f"{what}: data has {raw.size} values, expected nrow * ncol = {nrow} * {ncol}")
        raw = raw.reshape(nrow, ncol)
        if not np.all(np.isfinite(raw)):
            raise ValueError(f"{what}: data must be finite")
        if (min_z is None) != (max_z is None):
            raise ValueError(f"{what}: min_z and max_z must both be given or both omitted")
        lo, hi = float(raw.min()), float(raw.max())
        self.data = (raw - lo) / (hi - lo) if hi > lo else np.zeros_like(raw)
        self.nrow, self.ncol = nrow, ncol
        self.hx, self.hy = hx, hy
        self.min_z = lo if min_z is None else min_z
        self.max_z = hi if max_z is None else max_z
        self.base = base
        self.validate(what)

    def validate(self, what: str) -> None:
        """Check the (possibly edited) fields; errors start with ``what``.

        Raises:
            ValueError: See the class docstring.
        """
        self.nrow, self.ncol = _count(self.nrow, f"{what}: nrow"), _count(self.ncol, f"{what}: ncol")
        d = np.asarray(self.data, dtype=np.float64)
        if d.shape != (self.nrow, self.ncol):
            raise ValueError(f"{what}: data must have shape (nrow, ncol) = {(self.nrow, self.ncol)}, got {d.shape}")
        if not np.all(np.isfinite(d)) or d.min() < 0.0 or d.max() > 1.0:
            raise ValueError(f"{what}: normalised data must be finite and lie in [0, 1]")
        self.data = d
        self.hx = as_float(self.hx, f"{what}: hx", positive=True)
        self.hy = as_float(self.hy, f"{what}: hy", positive=True)
        self.min_z = as_float(self.min_z, f"{what}: min_z")
        self.max_z = as_float(self.max_z, f"{what}: max_z")
        if self.max_z < self.min_z:
            raise ValueError(f"{what}: max_z ({self.max_z}) must be >= min_z ({self.min_z})")
        if self.base is not None:
            self.base = as_float(self.base, f"{what}: base", positive=True)

    @property
    def heights(self) -> np.ndarray:
        """Elevations ``(nrow, ncol)`` [m] in the shape frame (unscaled)."""
        return self.min_z + self.data * (self.max_z - self.min_z)

    @property
    def mass(self) -> float:
        """Always 0: heightfields are static."""
        return 0.0

    def __repr__(self) -> str:
        return (f"Heightfield(nrow={self.nrow}, ncol={self.ncol}, hx={self.hx}, hy={self.hy}, "
                f"min_z={self.min_z}, max_z={self.max_z})")


def _count(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"{what} must be an int, got {n!r}")
    if n < 2:
        raise ValueError(f"{what} must be >= 2, got {n}")
    return int(n)


def check_heightfield_shape(geo: GeoType, body: int, src, what: str) -> None:
    """Validate a shape's heightfield source: HFIELD needs a :class:`Heightfield` and ``body = -1``.

    Args:
        geo: The shape's geometry type.
        body: Owning body index.
        src: The shape source passed to ``add_shape``.
        what: Error-message prefix naming the shape.

    Raises:
        TypeError: HFIELD without a :class:`Heightfield`, or a :class:`Heightfield` on another type.
        ValueError: HFIELD on a body other than the world, or invalid heightfield fields.
    """
    if geo != GeoType.HFIELD:
        if isinstance(src, Heightfield):
            raise TypeError(f"{what}: a Heightfield source needs type=GeoType.HFIELD")
        return
    if not isinstance(src, Heightfield):
        raise TypeError(f"{what}: heightfield must be a jaxart.Heightfield, got {type(src).__name__}")
    if int(body) != -1:
        raise ValueError(f"{what}: heightfields are static; body must be -1 (the world), got {body}")
    src.validate(f"{what}: heightfield")
