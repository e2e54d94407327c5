"""Tree traversal: the one place that walks the kinematic tree in traced code.

Poses are composed root-to-leaf by pointer doubling: in round ``r`` every body composes the
accumulated transform of its ancestor ``2**r`` levels up with its own. All index arrays are
static (computed at ``finalize``), so a tree of depth ``d`` costs ``ceil(log2(d + 1))`` fully
vectorised rounds: compile time and sequential depth grow with ``log d``, not ``d``. Additive
quantities (twists at the world origin, accelerations) use the same rounds with ``+``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.math import transform_mul


def compose_down(schedule, local: jnp.ndarray) -> jnp.ndarray:
    """World transforms from per-body local transforms.

    Args:
        schedule: The model's :class:`~jaxart.sim.topology.KinematicSchedule`.
        local: ``(n + 1, 7)`` transform of each body relative to its tree parent (for roots and
            bodies without a tree joint: their world pose); the last row is the world (identity).

    Returns:
        ``(n + 1, 7)`` world transforms.
    """
    t = local
    for ptr in schedule.doubling:
        t = transform_mul(t[ptr.array], t)
    return t


def accumulate_down(schedule, values: jnp.ndarray) -> jnp.ndarray:
    """Sum ``values`` over each body's ancestors-or-self (root-to-leaf prefix sums).

    Args:
        schedule: The model's kinematic schedule.
        values: ``(n + 1, ...)`` per-body values; the last row (world) must be zero.

    Returns:
        ``(n + 1, ...)`` sums along each body's path to its root.
    """
    v = values
    for ptr in schedule.doubling:
        v = v + v[ptr.array]
    return v
