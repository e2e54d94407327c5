"""Candidate shape pairs, computed once per :class:`~jaxart.sim.topology.Topology` (static numpy).

Newton 1.8's rules (``newton/_src/sim/shape_contact_pairs.py`` and
``geometry/broad_phase_common.py::test_group_pair``), applied to every unordered shape pair:

* a shape takes part only if it has the collide-shapes flag (``has_shape_collision`` and not a
  site) **and** its collision group is not 0;
* shapes on the same body never collide; static shapes (body −1) share the "world body", so
  static–static pairs never collide;
* groups: a positive group collides with the same group and with every negative group; a
  negative group collides with every group except itself (so two shapes of group −1 do *not*
  collide with each other); 0 collides with nothing;
* explicit ``shape_collision_filter_pairs`` are excluded;
* parent/child filtering: for every joint whose ``collision_filter_parent`` is set, shapes of the
  parent body (the static world shapes when the parent is −1) and of the child body do not
  collide. The per-joint flag is read from ``topology.joint_collision_filter_parent`` when the
  topology has it; otherwise Newton's default is used (set for joints with a parent body and for
  FIXED joints to the world, unset for other joints to the world).

jaxart extension: ``topology.shape_explicit_contact_pairs`` (``ModelBuilder.add_shape_contact_pair``,
MJCF ``<contact><pair>``) are always candidates, whatever their groups, flags, bodies or filter
pairs (MuJoCo's explicit pairs likewise bypass ``contype``/``conaffinity`` and ``<exclude>``); a
pair the rules above already produce appears once.

Pairs are canonicalised so that shape A has the lower :class:`~jaxart.GeoType` (then the lower
index) and grouped by ``(type_a, type_b)`` so each narrow-phase function runs once, vectorised.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from jaxart.sim.builder_shapes import SHAPE_FLAG_COLLIDE_SHAPES
from jaxart.sim.enums import JointType


@dataclasses.dataclass(frozen=True, eq=False)
class PairGroup:
    """Candidate pairs sharing one ``(type_a, type_b)`` combination.

    Attributes:
        type_a, type_b: :class:`GeoType` values with ``type_a <= type_b``.
        shape_a, shape_b: ``(p,)`` shape indices (A has type ``type_a``).
        pair: ``(p,)`` int32 index into ``topology.shape_explicit_contact_pairs`` of each pair, −1 when the
            pair is not explicit.
    """

    type_a: int
    type_b: int
    shape_a: np.ndarray
    shape_b: np.ndarray
    pair: np.ndarray


def groups_collide(group_a: np.ndarray, group_b: np.ndarray) -> np.ndarray:
    """Newton's collision-group rule, elementwise (see the module docstring)."""
    ga, gb = np.asarray(group_a), np.asarray(group_b)
    pos = (ga > 0) & ((ga == gb) | (gb < 0))
    neg = (ga < 0) & (ga != gb)
    return (ga != 0) & (gb != 0) & (pos | neg)


def joint_filter_flags(topology) -> np.ndarray:
    """Per-joint ``collision_filter_parent`` (from the topology, else Newton's default rule)."""
    flags = getattr(topology, "joint_collision_filter_parent", None)
    if flags is not None:
        return np.asarray(flags, dtype=bool).reshape(topology.joint_count)
    parent = np.asarray(topology.joint_parent)
    jtype = np.asarray(topology.joint_type)
    return (parent >= 0) | (jtype == int(JointType.FIXED))


def candidate_pairs(topology) -> np.ndarray:
    """All shape pairs that may collide, ``(p, 2)`` with ``shape_a < shape_b`` (index order).

    Args:
        topology: A model :class:`~jaxart.sim.topology.Topology`.

    Returns:
        int32 array of unordered candidate pairs, lexicographically sorted.
    """
    n = topology.shape_count
    if n < 2:
        return np.zeros((0, 2), np.int32)
    ia, ib = _rule_pairs(topology)
    explicit = getattr(topology, "shape_explicit_contact_pairs", None)
    if explicit is not None and len(explicit):
        ex = np.sort(np.asarray(explicit, dtype=np.int64).reshape(-1, 2), axis=1)
        key = np.unique(np.concatenate([ia * n + ib, ex[:, 0] * n + ex[:, 1]]))  # sorted, deduplicated
        ia, ib = key // n, key % n
    return np.stack([ia, ib], axis=1).astype(np.int32)


def _rule_pairs(topology) -> tuple[np.ndarray, np.ndarray]:
    """Pairs allowed by groups, flags, bodies, filter pairs and parent/child filtering (sorted, ``a < b``)."""
    n = topology.shape_count
    body = np.maximum(np.asarray(topology.shape_body), -1)
    group = np.asarray(topology.shape_collision_group)
    flags = np.asarray(topology.shape_flags)
    active = ((flags & SHAPE_FLAG_COLLIDE_SHAPES) != 0) & (group != 0)
    ia, ib = np.triu_indices(n, k=1)
    keep = active[ia] & active[ib] & (body[ia] != body[ib])
    keep &= groups_collide(group[ia], group[ib]) | groups_collide(group[ib], group[ia])
    excluded = np.zeros((n, n), bool)
    fp = np.asarray(topology.shape_collision_filter_pairs).reshape(-1, 2)
    excluded[fp[:, 0], fp[:, 1]] = True
    excluded[fp[:, 1], fp[:, 0]] = True
    parent, child = np.asarray(topology.joint_parent), np.asarray(topology.joint_child)
    body_pairs = set()
    for j in np.nonzero(joint_filter_flags(topology))[0]:
        body_pairs.add((int(parent[j]), int(child[j])))
        body_pairs.add((int(child[j]), int(parent[j])))
    if body_pairs:
        bp = np.array(sorted(body_pairs))
        nb = topology.body_count + 1
        table = np.zeros((nb, nb), bool)
        table[bp[:, 0] + 1, bp[:, 1] + 1] = True
        keep &= ~table[body[ia] + 1, body[ib] + 1]
    keep &= ~excluded[ia, ib]
    return ia[keep].astype(np.int64), ib[keep].astype(np.int64)


def explicit_pair_index(topology, pairs: np.ndarray) -> np.ndarray:
    """``(p,)`` int32 index of each shape pair in ``topology.shape_explicit_contact_pairs`` (−1: not explicit)."""
    pairs = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    out = np.full(len(pairs), -1, np.int32)
    explicit = getattr(topology, "shape_explicit_contact_pairs", None)
    if explicit is None or len(pairs) == 0:
        return out
    lookup = {(int(a), int(b)): k for k, (a, b) in enumerate(np.sort(np.asarray(explicit).reshape(-1, 2), axis=1))}
    for i, (a, b) in enumerate(pairs.tolist()):
        out[i] = lookup.get((a, b), -1)
    return out


def group_pairs(pairs: np.ndarray, shape_type: np.ndarray, pair_index: np.ndarray | None = None
                ) -> tuple[PairGroup, ...]:
    """Canonicalise pairs (A = lower type, then lower index) and group them by type combination.

    Args:
        pairs: ``(p, 2)`` shape pairs.
        shape_type: ``(shape_count,)`` :class:`~jaxart.GeoType` of every shape.
        pair_index: ``(p,)`` explicit-pair index of each pair (:func:`explicit_pair_index`); ``None``: all −1.
    """
    shape_type = np.asarray(shape_type)
    if len(pairs) == 0:
        return ()
    pair_index = np.full(len(pairs), -1, np.int32) if pair_index is None else np.asarray(pair_index, np.int32)
    a, b = pairs[:, 0], pairs[:, 1]
    swap = shape_type[a] > shape_type[b]
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    ta, tb = shape_type[a], shape_type[b]
    out = []
    for key in sorted(set(zip(ta.tolist(), tb.tolist(), strict=True))):
        sel = (ta == key[0]) & (tb == key[1])
        out.append(PairGroup(int(key[0]), int(key[1]), a[sel].astype(np.int32), b[sel].astype(np.int32),
                             pair_index[sel]))
    return tuple(out)


@functools.lru_cache(maxsize=128)
def pair_groups(topology) -> tuple[PairGroup, ...]:
    """Grouped candidate pairs of a topology (cached: topologies hash by content)."""
    pairs = candidate_pairs(topology)
    return group_pairs(pairs, np.asarray(topology.shape_type), explicit_pair_index(topology, pairs))
