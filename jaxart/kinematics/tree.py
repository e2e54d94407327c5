"""Tree traversal: the one place that walks the kinematic tree in traced code.

Poses are composed root-to-leaf by pointer doubling: in round ``r`` every body composes the
accumulated transform of its ancestor ``2**r`` levels up with its own. All index arrays are
static (computed at ``finalize``), so a tree of depth ``d`` costs ``ceil(log2(d + 1))`` fully
vectorised rounds: compile time and sequential depth grow with ``log d``, not ``d``. Additive
quantities (twists at the world origin, accelerations) use the same rounds with ``+``.

Both functions take structure-of-arrays values (:mod:`jaxart.math.soa`) with the body axis last
(``n + 1`` entries; the last one is the world).
"""

from __future__ import annotations

import jax

from jaxart.math import soa


def compose_down(schedule, local: tuple) -> tuple:
    """World transforms from per-body local SoA transforms.

    Args:
        schedule: The model's :class:`~jaxart.sim.topology.KinematicSchedule`.
        local: SoA transform ``(p, q)`` of each body relative to its tree parent (for roots and
            bodies without a tree joint: their world pose); the last entry is the world (identity).

    Returns:
        SoA world transforms.
    """
    if not isinstance(local, tuple):  # stacked (n + 1, 7) array: body axis first
        return soa.from_transform(compose_down(schedule, soa.to_transform(local)))
    t = local
    for ptr in schedule.doubling:
        t = soa.tmul(soa.take(t, ptr.array), t)
    return t


def accumulate_down(schedule, values):
    """Sum ``values`` over each body's ancestors-or-self.

    ``values`` is a tuple (pytree) of SoA arrays with the body axis last, or one stacked array
    with the body axis first. The last body entry (world) must be zero.
    """
    v = values
    if not isinstance(values, tuple):  # a stacked array: body axis first
        for ptr in schedule.doubling:
            v = v + v[ptr.array]
        return v
    for ptr in schedule.doubling:
        v = jax.tree_util.tree_map(lambda x, p=ptr.array: x + x[..., p], v)
    return v
