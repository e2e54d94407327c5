"""Broad phase: a static per-group pair capacity and, per step, the closest pairs that fill it.

The candidate pairs of a model (:mod:`jaxart.collision.pairs`) are static, and without a broad phase
every one of them runs its narrow phase every step: the contact rows scale with the number of
candidate pairs (quadratic in the number of free bodies), not with the contacts that exist. With a
**pair capacity** ``P`` for a ``(type_a, type_b)`` group of ``p > P`` pairs, each step:

1. bounds every pair's distance from below (:func:`~jaxart.collision.bounds.pair_bound`: bounding
   spheres, plane half-spaces, height-field boxes, box face axes);
2. marks a pair *overlapping* when its bound is below ``margin_a + margin_b + gap`` (the collide
   threshold, plus :data:`BROAD_PHASE_SLACK`): only these can hold an active contact;
3. keeps the ``P`` pairs with the smallest bound (``lax.top_k``) and runs the narrow phase on them
   alone; kept pairs that do not overlap report no contact. Overlapping pairs beyond ``P`` are
   dropped (the farthest first) and counted as the group's **pair overflow**.

So the active contacts equal those of the full evaluation whenever no group overflows. The choice
of pairs is discrete (no gradient); the narrow phase on the kept pairs is differentiable as before.

Default capacities (:func:`default_pair_capacity`): a group of ``p`` pairs among ``n`` distinct
shapes keeps ``min(p, max(BROAD_PHASE_MIN_PAIRS, BROAD_PHASE_PAIRS_PER_SHAPE · n))`` pairs. Small
groups (≤ 128 pairs: an arm's, a hand's or a humanoid's self-collision pairs, which sit within a few
centimetres of each other and would overflow any tighter capacity under the default 0.1 m gaps) and
groups whose pair count grows at most linearly with their shapes (a ground plane under every body)
run in full with no broad-phase overhead; the quadratic groups of many free bodies are culled to 4
pairs per shape (a body resting in a pile has fewer neighbours than that within a small gap; beyond
it the overflow warning says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxart.collision.bounds import pair_bound
from jaxart.collision.contacts import pair_row_values
from jaxart.math.static_index import take_rows
from jaxart.sim.enums import GeoType

#: Groups with at most this many pairs are evaluated in full by default.
BROAD_PHASE_MIN_PAIRS = 128
#: Default pairs kept per distinct shape of a culled group.
BROAD_PHASE_PAIRS_PER_SHAPE = 4
#: Extra distance [m] added to the overlap threshold (round-off between the bound and the narrow phase).
BROAD_PHASE_SLACK = 1e-4


class PairSelection(NamedTuple):
    """The pairs of one group kept for the narrow phase this step (``P`` = the group's capacity).

    Attributes:
        index: ``(P,)`` int32 positions of the kept pairs in the group's static pair arrays.
        keep: ``(P,)`` bool: the kept pair overlaps (only these may report contacts).
        overlapping: ``()`` int32 number of overlapping pairs in the group.
        overflow: ``()`` int32 overlapping pairs that did not fit (``max(overlapping - P, 0)``).
    """

    index: jnp.ndarray
    keep: jnp.ndarray
    overlapping: jnp.ndarray
    overflow: jnp.ndarray


def default_pair_capacity(group) -> int:
    """Default number of pairs of ``group`` evaluated per step (see the module docstring)."""
    p = len(group.shape_a)
    n = len(np.unique(np.concatenate([group.shape_a, group.shape_b])))
    return min(p, max(BROAD_PHASE_MIN_PAIRS, BROAD_PHASE_PAIRS_PER_SHAPE * n))


def pair_capacities(groups, pair_capacity=None) -> tuple[int, ...]:
    """Static pair capacity of each group (never more than its pair count).

    Args:
        groups: The model's :class:`~jaxart.collision.pairs.PairGroup` tuple.
        pair_capacity: ``None`` (defaults), an int ``>= 0`` applied to every group, or a mapping from
            ``(GeoType, GeoType)`` (either order) to an int ``>= 0``; groups missing from the mapping
            use the default and keys naming no group of this model are ignored.

    Returns:
        One capacity per group.

    Raises:
        TypeError: ``pair_capacity`` is not ``None``, an int or a mapping, or a key is not a pair of
            shape types.
        ValueError: A capacity is negative.
    """
    if pair_capacity is None:
        return tuple(default_pair_capacity(g) for g in groups)
    if isinstance(pair_capacity, Mapping):
        table = {_group_key(k): _count(v, f"pair_capacity[{k!r}]") for k, v in pair_capacity.items()}
        return tuple(min(len(g.shape_a), table.get((g.type_a, g.type_b), default_pair_capacity(g))) for g in groups)
    cap = _count(pair_capacity, "pair_capacity")
    return tuple(min(len(g.shape_a), cap) for g in groups)


def _count(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"collide: {what} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"collide: {what} must be >= 0, got {value}")
    return int(value)


def _group_key(key) -> tuple[int, int]:
    try:
        a, b = (int(GeoType(t)) for t in key)
    except (TypeError, ValueError):
        raise TypeError(f"collide: pair_capacity keys must be pairs of GeoType values, got {key!r}") from None
    return (min(a, b), max(a, b))


def select_pairs(model, xw: jnp.ndarray, radius: jnp.ndarray, group, capacity: int, thresh) -> PairSelection:
    """Keep the ``capacity`` pairs of ``group`` with the smallest distance bound.

    Args:
        model: The :class:`~jaxart.Model`.
        xw: ``(shape_count, 7)`` world shape transforms.
        radius: ``(shape_count,)`` bounding radii (:func:`~jaxart.collision.bounds.shape_bounding_radius`).
        group: The :class:`~jaxart.collision.pairs.PairGroup` (``p > capacity`` pairs).
        capacity: Static number of pairs to keep, ``>= 1``.
        thresh: ``(p,)`` or scalar contact threshold [m] of each pair: margins plus gap.

    Returns:
        The :class:`PairSelection`.
    """
    bound = pair_bound(model, xw, radius, group)
    overlap = bound < lax.stop_gradient(thresh) + BROAD_PHASE_SLACK
    score = jnp.where(jnp.isnan(bound), -jnp.inf, -bound)
    _, index = lax.top_k(score, capacity)
    n_over = jnp.sum(overlap, dtype=jnp.int32)
    return PairSelection(index.astype(jnp.int32), overlap[index], n_over, jnp.maximum(n_over - capacity, 0))


def pair_threshold(model, group, dtype, gap=None) -> jnp.ndarray:
    """Contact threshold [m] of each pair of ``group``: both margins plus ``gap`` (default: both gaps).

    Explicit pairs (``group.pair ≥ 0``) use their own ``contact_pair_margin`` and ``contact_pair_gap``.
    """
    margin = lax.stop_gradient(model.shape_margin).astype(dtype)
    out = take_rows(margin, group.shape_a) + take_rows(margin, group.shape_b)
    out = pair_row_values(group.pair, lax.stop_gradient(model.contact_pair_margin), out)
    if gap is None:
        g = lax.stop_gradient(model.shape_gap).astype(dtype)
        g = pair_row_values(group.pair, lax.stop_gradient(model.contact_pair_gap),
                            take_rows(g, group.shape_a) + take_rows(g, group.shape_b))
        return out + g
    return out + lax.stop_gradient(jnp.asarray(gap, dtype))


def take_selected(args, sel: PairSelection) -> list:
    """Rows of the narrow-phase arguments (leading axis = the group's pairs) for the kept pairs."""
    return [jnp.take(a, sel.index, axis=0) for a in args]
