"""Selections with static (trace-time) indices that are cheap to trace.

``x[numpy_index]`` goes through ``jax.numpy``'s general indexing (index normalisation, a nested
traced gather function): about 250 µs of Python per call when tracing. The lane kernels make
thousands of static selections (the humanoid's batched Featherstone step ~1400, its XPBD step with
contacts ~9000 integer item selections), a fifth of their trace time. These helpers emit the same
gather directly (the same HLO as ``x[idx]``) in a fraction of that.

Numpy inputs stay numpy (static bookkeeping is unaffected).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax


def take_rows(x, idx, axis: int = 0):
    """``x[idx]`` along ``axis`` for a static, non-negative integer index array of any shape.

    Args:
        x: Array (jax or numpy).
        idx: Static integer indices (numpy array or sequence), each in ``[0, x.shape[axis])``.
        axis: Axis to select along.

    Returns:
        The selection, shape ``x.shape[:axis] + idx.shape + x.shape[axis + 1:]`` (for a jax ``x`` the
        same in-bounds gather that ``x[idx]`` emits).

    Raises:
        TypeError: ``idx`` is not an integer array.
        IndexError: An index is negative or out of range.
    """
    idx = np.asarray(idx)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"take_rows: static integer indices expected, got dtype {idx.dtype}")
    axis = axis % np.ndim(x)
    n = np.shape(x)[axis]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"take_rows: indices must lie in [0, {n}), got range [{idx.min()}, {idx.max()}]")
    if isinstance(x, np.ndarray):
        return np.take(x, idx, axis=axis)
    if axis != 0:
        return jnp.moveaxis(take_rows(jnp.moveaxis(x, axis, 0), idx), tuple(range(idx.ndim)),
                            tuple(range(axis, axis + idx.ndim)))
    dims = lax.GatherDimensionNumbers(offset_dims=tuple(range(idx.ndim, idx.ndim + x.ndim - 1)),
                                      collapsed_slice_dims=(0,), start_index_map=(0,))
    return lax.gather(x, idx.astype(np.int32)[..., None], dims, (1, *x.shape[1:]),
                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def item(x, i: int, axis: int = 0):
    """``x[i]`` (``axis=0``) or ``x[:, i]`` (``axis=1``) for a static Python integer ``i`` (negatives count
    from the end, as in numpy)."""
    axis = axis % np.ndim(x)
    n = np.shape(x)[axis]
    i = int(i)
    if not -n <= i < n:
        raise IndexError(f"item: index {i} out of range for axis {axis} of size {n}")
    i %= n
    if isinstance(x, np.ndarray):
        return np.take(x, i, axis=axis)
    return lax.index_in_dim(x, i, axis, keepdims=False)
