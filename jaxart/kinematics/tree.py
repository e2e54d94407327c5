"""Tree traversal: the one place that walks the kinematic tree in traced code.

Two static schedules, chosen by tree depth (both index arrays are computed from the static
:class:`~jaxart.sim.topology.KinematicSchedule`, never from traced data):

* **Levels** (depth ≤ :data:`LEVELS_MAX_DEPTH`, e.g. humanoids, quadrupeds, arms): bodies are
  grouped by depth and level ``d`` composes its parents' values from level ``d − 1`` with its
  own, so every body is composed exactly once. By default the levels run as a ``lax.scan`` over
  depth (each level padded to the widest); ``unroll=True`` (used by the batch-minor FK kernel under
  ``vmap``, never differentiated) unrolls them, 1.55 vs 1.84 µs per humanoid world at batch 4096.
  Unrolled levels must not reach reverse-mode code: there XLA re-evaluates chains of levels per
  element (a checkpointed arm7 rollout gradient took 216 ms instead of 19 ms).
* **Pointer doubling** (deeper trees, e.g. long chains): in round ``r`` every body composes the
  accumulated value of its ancestor ``2**r`` levels up with its own, so a tree of depth ``d``
  costs ``ceil(log2(d + 1))`` fully vectorised rounds and compile time stays flat with depth. The
  rounds run inside ``lax.fori_loop`` (static trip count, so reverse mode works). The loop is a
  performance necessity, not style: unrolled, XLA fuses the chain of per-round gathers into every
  consumer and re-evaluates each round's producers once per use, so a body's value is recomputed
  ``2**rounds`` times (measured on a 128-link chain: 1.8 ms → 56 µs per world). XLA:CPU drops
  ``optimization_barrier``; a loop boundary is what forces materialisation.

Measured per humanoid world at batch 4096 (batch-major FK incl. twists): unrolled
doubling 8 µs, looped doubling 5 µs, unrolled levels 2.7 µs. Unrolled levels' compile time grows
with depth, hence the cut-over.

Values are pytrees of arrays with the body axis first (SoA components in the lane layout of
:mod:`jaxart.math.lanes`); ``n + 1`` entries, the last one is the world.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import soa
from jaxart.math.static_index import take_rows

#: Trees up to this depth use the level schedule; deeper ones use looped pointer doubling.
LEVELS_MAX_DEPTH = 8


@functools.lru_cache(maxsize=64)
def _levels(schedule) -> tuple[tuple[np.ndarray, np.ndarray], ...] | None:
    """Per depth ``d ≥ 1``: ``(slots at depth d, their parents' positions within level d − 1)``;
    level 0 (slots listed first) holds the world and bodies without a tree joint. ``None`` when
    the tree is deeper than :data:`LEVELS_MAX_DEPTH`."""
    parent = np.append(schedule.body_parent.array, len(schedule.body_parent.array))
    depth = np.zeros(len(parent), dtype=np.int64)  # 0: world and bodies without a tree joint
    for body in _tree_children(schedule):  # parents before children
        depth[body] = depth[parent[body]] + 1
    if depth.max(initial=0) > LEVELS_MAX_DEPTH:
        return None
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)) + 1)]
    pos = np.zeros(len(parent), dtype=np.int64)
    for lv in levels:
        pos[lv] = np.arange(len(lv))
    return tuple((lv, pos[parent[lv]]) for lv in levels)


def _tree_children(schedule) -> np.ndarray:
    """Bodies with a tree joint in schedule order (``tree_joint`` is depth-ordered)."""
    body_of_joint = {int(j): b for b, j in enumerate(schedule.body_joint.array) if j >= 0}
    return np.asarray([body_of_joint[int(j)] for j in schedule.tree_joint.array], dtype=np.int64)


def _rows(x, idx):
    return take_rows(x, idx) if isinstance(idx, np.ndarray) else x[idx]  # traced: the scan's parent positions


def _take(values, idx):
    return jax.tree_util.tree_map(lambda x: _rows(x, idx), values)


def _concat(parts: list):
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs, axis=0), *parts)


def _run_levels(levels, combine, values):
    """Level schedule: level 0 as given, level ``d`` = ``combine(parents in d − 1, own)``."""
    outs = [_take(values, levels[0][0])]
    for slots, par_pos in levels[1:]:
        outs.append(combine(_take(outs[-1], par_pos), _take(values, slots)))
    order = np.concatenate([lv for lv, _ in levels])
    return _take(_concat(outs), np.argsort(order))


def _run_levels_scan(levels, combine, values):
    """Level schedule as a ``lax.scan`` over depth, every level padded to the widest one.

    The loop boundary materialises each level once; unrolled, XLA fuses a level into each consumer
    and, inside reverse-mode code (e.g. a checkpointed rollout step), re-evaluates whole chains of
    levels per element (measured: arm7 100-step gradient with per-step remat 216 ms unrolled, 19 ms
    looped).
    """
    width = max(len(lv) for lv, _ in levels)
    pad = lambda a, fill: np.concatenate([a, np.full(width - len(a), fill, a.dtype)])  # noqa: E731
    world_slot = int(levels[0][0][np.argmax(levels[0][0])])
    slots = np.stack([pad(lv, world_slot) for lv, _ in levels[1:]])
    parents = jnp.asarray(np.stack([pad(pp, 0) for _, pp in levels[1:]]).astype(np.int32))
    first = _take(values, pad(levels[0][0], world_slot))

    def body(prev, xs):
        own, par = xs
        new = combine(_take(prev, par), own)
        return new, new

    _, rest = jax.lax.scan(body, first, (_take(values, slots), parents))
    flat = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b.reshape(-1, *b.shape[2:])], axis=0), first, rest)
    position = np.zeros(sum(len(lv) for lv, _ in levels), dtype=np.int64)
    for d, (lv, _) in enumerate(levels):
        position[lv] = d * width + np.arange(len(lv))
    return _take(flat, position)


def _run_doubling(schedule, combine, values):
    """Looped pointer doubling: ``v ← combine(v[ancestor 2**r up], v)`` per round."""
    if not schedule.doubling:
        return values
    ptrs = jnp.asarray(np.stack([p.array for p in schedule.doubling]))

    def step(ptr, v):
        return combine(_take(v, ptr), v)

    if ptrs.shape[0] == 1:
        return step(ptrs[0], values)
    return jax.lax.fori_loop(0, ptrs.shape[0], lambda r, v: step(ptrs[r], v), values)


def _traverse(schedule, combine, values, unroll: bool):
    levels = _levels(schedule)
    if levels is None:
        return _run_doubling(schedule, combine, values)
    if unroll:
        return _run_levels(levels, combine, values)
    return _run_levels_scan(levels, combine, values)


def compose_down(schedule, local: tuple, *, unroll: bool = False) -> tuple:
    """World transforms from per-body local SoA transforms.

    Args:
        schedule: The model's :class:`~jaxart.sim.topology.KinematicSchedule`.
        local: SoA transform ``(p, q)`` of each body relative to its tree parent (for roots and
            bodies without a tree joint: their world pose); the last entry is the world (identity).
            Body axis first (any trailing axes, e.g. lanes).
        unroll: Unroll the level schedule (see the module docstring).

    Returns:
        World transforms in the same form as ``local``.
    """
    return _traverse(schedule, soa.tmul, local, unroll)


def accumulate_down(schedule, values, *, unroll: bool = False):
    """Sum ``values`` (a pytree of arrays, body axis first) over each body's ancestors-or-self.

    The last body entry (world) must be zero. ``unroll`` as in :func:`compose_down`.
    """
    return _traverse(schedule, lambda a, b: jax.tree_util.tree_map(jnp.add, a, b), values, unroll)
