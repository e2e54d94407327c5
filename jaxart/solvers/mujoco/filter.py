"""Collision filtering for the MuJoCo bridge: jaxart shape filters → ``contype``/``conaffinity`` + excludes.

MuJoCo lets geoms A and B collide when ``(contype_A & conaffinity_B) | (contype_B & conaffinity_A)``
is non-zero. Following Newton's MuJoCo-integration mapping tables ("Collision filtering"), the pairs that
*may* collide form a graph that is coloured greedily; each colour is one ``contype`` bit and
``conaffinity`` is its complement, so geoms of one colour never collide and geoms of different
colours always do. Pairs that must not collide but received different colours are removed with a
body-level ``<exclude>`` when every shape pair of the two bodies is filtered; any pair left over is
counted as *uncovered* (a warning names how many). More than 32 colours: shapes of colour ≥ 32 fall
back to MuJoCo's defaults ``contype = conaffinity = 1`` (they then collide with everything), as in
Newton.

Explicit contact pairs (``topology.shape_explicit_contact_pairs``, a jaxart extension) become MuJoCo
``<contact><pair>`` elements (:func:`add_contact_pairs`), which MuJoCo tests regardless of
``contype``/``conaffinity``/``<exclude>`` and without duplicating a dynamic contact of the same geoms.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxart.sim.builder_shapes import SHAPE_FLAG_COLLIDE_SHAPES, SHAPE_FLAG_SITE
from jaxart.solvers.mujoco.shapes import solref_from_ke_kd

MAX_COLORS = 32


@dataclasses.dataclass(frozen=True)
class CollisionMasks:
    """Result of :func:`collision_masks`.

    Attributes:
        contype: ``(shape_count,)`` MuJoCo ``contype`` per shape (signed 32-bit values).
        conaffinity: ``(shape_count,)`` MuJoCo ``conaffinity`` per shape.
        color: ``(shape_count,)`` colour per shape, −1 for non-colliding shapes.
        exclude_bodies: Body pairs ``(a, b)`` (−1 = world) whose contacts are all filtered.
        uncovered_pairs: Number of filtered shape pairs MuJoCo will still collide.
    """

    contype: np.ndarray
    conaffinity: np.ndarray
    color: np.ndarray
    exclude_bodies: tuple[tuple[int, int], ...]
    uncovered_pairs: int


def group_pair_allowed(group_a: np.ndarray, group_b: np.ndarray) -> np.ndarray:
    """Newton's collision-group rule (``newton.geometry.test_group_pair``), vectorised.

    0 never collides; a positive group collides with itself and with negative groups; a negative
    group collides with everything except the same negative group.
    """
    a, b = np.asarray(group_a), np.asarray(group_b)
    pos = np.where(b < 0, True, a == b)
    neg = a != b
    return (a != 0) & (b != 0) & np.where(a > 0, pos, neg)


def allowed_pairs(shape_body: np.ndarray, shape_flags: np.ndarray, shape_group: np.ndarray,
                  filter_pairs: np.ndarray, parent_child: set[tuple[int, int]]) -> np.ndarray:
    """``(s, s)`` symmetric boolean matrix of shape pairs that may collide.

    Args:
        shape_body: Owning body per shape (−1 = world).
        shape_flags: Shape flags (collide bit, site bit).
        shape_group: Collision group per shape.
        filter_pairs: ``(k, 2)`` explicit shape pairs that never collide.
        parent_child: Body pairs ``(parent, child)`` whose contacts are filtered.
    """
    collides = ((shape_flags & SHAPE_FLAG_COLLIDE_SHAPES) != 0) & ((shape_flags & SHAPE_FLAG_SITE) == 0)
    collides &= shape_group != 0
    ok = collides[:, None] & collides[None, :]
    ok &= group_pair_allowed(shape_group[:, None], shape_group[None, :])
    ok &= shape_body[:, None] != shape_body[None, :]
    for a, b in np.asarray(filter_pairs, dtype=np.int64).reshape(-1, 2):
        ok[a, b] = ok[b, a] = False
    for pa, ch in parent_child:
        sel = np.outer(shape_body == pa, shape_body == ch)
        ok &= ~(sel | sel.T)
    np.fill_diagonal(ok, False)
    return ok


def collision_masks(shape_body: np.ndarray, shape_flags: np.ndarray, shape_group: np.ndarray,
                    filter_pairs: np.ndarray, parent_child: set[tuple[int, int]]) -> CollisionMasks:
    """Colour the may-collide graph into MuJoCo masks and body excludes (see module docstring)."""
    ok = allowed_pairs(shape_body, shape_flags, shape_group, filter_pairs, parent_child)
    ns = len(shape_body)
    collides = ((shape_flags & SHAPE_FLAG_COLLIDE_SHAPES) != 0) & ((shape_flags & SHAPE_FLAG_SITE) == 0)
    collides &= shape_group != 0
    color = np.full(ns, -1, dtype=np.int64)
    for s in np.nonzero(collides)[0]:
        used = set(color[np.nonzero(ok[s] & (color >= 0))[0]].tolist())
        c = 0
        while c in used:
            c += 1
        color[s] = c
    contype = np.zeros(ns, dtype=np.int64)
    conaff = np.zeros(ns, dtype=np.int64)
    for s in np.nonzero(color >= 0)[0]:
        if color[s] < MAX_COLORS:
            bit = 1 << int(color[s])
            contype[s] = _signed32(bit)
            conaff[s] = _signed32(~bit & 0xFFFFFFFF)
        else:
            contype[s] = conaff[s] = 1
    mj_collides = _mujoco_would_collide(contype, conaff, shape_body)
    leftover = mj_collides & ~ok
    excludes, uncovered = [], 0
    bodies = sorted({(int(min(shape_body[a], shape_body[b])), int(max(shape_body[a], shape_body[b])))
                     for a, b in zip(*np.nonzero(np.triu(leftover)), strict=True)})
    for ba, bb in bodies:
        sel = np.outer(shape_body == ba, shape_body == bb)
        sel = sel | sel.T
        if not np.any(ok & sel):
            excludes.append((ba, bb))
        else:
            uncovered += int(np.sum(np.triu(leftover & sel)))
    return CollisionMasks(contype, conaff, color, tuple(excludes), uncovered)


def _mujoco_would_collide(contype: np.ndarray, conaff: np.ndarray, shape_body: np.ndarray) -> np.ndarray:
    t = contype.astype(np.int64) & 0xFFFFFFFF
    a = conaff.astype(np.int64) & 0xFFFFFFFF
    hit = ((t[:, None] & a[None, :]) != 0) | ((t[None, :] & a[:, None]) != 0)
    hit &= shape_body[:, None] != shape_body[None, :]
    np.fill_diagonal(hit, False)
    return hit


def _signed32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= (1 << 31) else v


def add_contact_pairs(spec, h) -> int:
    """Add one MuJoCo ``<pair>`` per explicit jaxart contact pair, in pair order; returns how many.

    MuJoCo pair ``k`` is jaxart's explicit pair ``k`` and carries its parameters (``Model.contact_pair_*``):
    ``friction = (mu, mu, mu_torsional, mu_rolling, mu_rolling)``, ``solref`` from the pair's ``ke``/``kd``
    (:func:`~jaxart.solvers.mujoco.shapes.solref_from_ke_kd`, the mapping of the exported geoms),
    ``margin`` = the pair's total margin, ``gap`` = 0 and ``condim`` = 3, as for the exported geoms.

    Args:
        spec: The ``mujoco.MjSpec`` being built (geoms named by shape label already added).
        h: The converter's host copy of the model (``_Host``).
    """
    pairs = getattr(h.topo, "shape_explicit_contact_pairs", None)
    if pairs is None:
        return 0
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    for k, (a, b) in enumerate(pairs):
        mu, tors, roll = (float(h.contact_pair_mu[k]), float(h.contact_pair_mu_torsional[k]),
                          float(h.contact_pair_mu_rolling[k]))
        solref = solref_from_ke_kd(float(h.contact_pair_ke[k]), float(h.contact_pair_kd[k]))
        spec.add_pair(geomname1=h.shape_label[a], geomname2=h.shape_label[b], condim=3,
                      friction=[mu, mu, tors, roll, roll], solref=list(solref),
                      margin=float(h.contact_pair_margin[k]), gap=0.0)
    return len(pairs)
