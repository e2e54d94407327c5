"""Segment sums (per-body sums of per-row quantities) without scatters when the ids are static.

``jax.ops.segment_sum`` lowers to a scatter, which XLA:CPU runs as a serial loop over rows (one
per world under ``vmap``). When the segment ids are known at trace time (joint parent/child
bodies from the topology), the sum is instead written as a gather from a static padded
``(segments, k)`` table of contributing rows (padding points at an appended zero row; a column of
consecutive rows is a slice) followed by an unrolled addition of the ``k`` gathered slices, which
fuses with its producers and consumers. Traced ids keep ``segment_sum``. Contact bodies are
static when the :class:`~jaxart.collision.Contacts` come from ``model.collide`` in the same trace
(without a capacity cut); contacts passed into a jitted function as arguments are tracers.
"""

from __future__ import annotations

import functools
import operator

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math.static_index import take_rows


def concrete_ids(x) -> np.ndarray | None:
    """``x`` as an int32 numpy array when its value is known at trace time, else ``None``."""
    if x is None:
        return None
    if isinstance(x, np.ndarray):
        return x.astype(np.int32)
    try:
        return np.asarray(x).astype(np.int32)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError, TypeError):
        return None


@functools.lru_cache(maxsize=256)
def _table(key: bytes, n_rows: int, num_segments: int) -> np.ndarray:
    seg = np.frombuffer(key, np.int32)
    counts = np.bincount(seg[(seg >= 0) & (seg < num_segments)], minlength=num_segments)
    k = max(int(counts.max(initial=0)), 1)
    table = np.full((num_segments, k), n_rows, np.int32)
    fill = np.zeros(num_segments, np.int64)
    for row, s in enumerate(seg):
        if 0 <= s < num_segments:
            table[s, fill[s]] = row
            fill[s] += 1
    table.flags.writeable = False
    return table


def gather_table(seg: np.ndarray, num_segments: int) -> np.ndarray:
    """Static ``(num_segments, k)`` table of the rows with ``seg == s`` (padding = ``len(seg)``).

    Ids outside ``[0, num_segments)`` (e.g. the world row ``body_count``) are dropped.
    """
    seg = np.ascontiguousarray(np.asarray(seg, np.int32).reshape(-1))
    return _table(seg.tobytes(), len(seg), int(num_segments))


def segment_sum(data: jnp.ndarray, seg, num_segments: int) -> jnp.ndarray:
    """``jax.ops.segment_sum(data, seg, num_segments)`` for ids outside range dropped.

    Static (numpy or concrete) ``seg``: gather-based sum from :func:`gather_table`; traced ``seg``:
    ``jax.ops.segment_sum``.

    Args:
        data: ``(rows, ...)`` per-row values.
        seg: ``(rows,)`` segment id of every row.
        num_segments: Number of output segments.

    Returns:
        ``(num_segments, ...)`` sums (bit-for-bit order may differ from a scatter: float rounding).
    """
    ids = concrete_ids(seg)
    if ids is None:
        return jax.ops.segment_sum(data, seg, num_segments=num_segments)
    table = gather_table(ids, num_segments)
    n = data.shape[0]
    if np.all(table == n):  # no row lands in range (e.g. all contacts on the world side)
        return jnp.zeros((num_segments, *data.shape[1:]), data.dtype)
    ext = None
    terms = []
    for col in table.T:
        if col[0] + num_segments <= n and np.array_equal(col, col[0] + np.arange(num_segments)):
            terms.append(data[col[0]:col[0] + num_segments])  # contiguous rows: a slice, no gather
            continue
        if ext is None:
            ext = jnp.concatenate([data, jnp.zeros((1, *data.shape[1:]), data.dtype)], 0)
        terms.append(take_rows(ext, col))
    return functools.reduce(operator.add, terms)

