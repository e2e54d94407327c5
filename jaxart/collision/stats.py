"""Overflow counts of one ``collide`` call and the warning that reports them at run time."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct


class CollisionOverflowWarning(RuntimeWarning):
    """Contacts were dropped because a pair capacity or the contact capacity was too small."""


@struct.dataclass
class CollideStats:
    """What one :func:`~jaxart.collision.collide_with_stats` call kept and dropped (add a leading axis for batches).

    Attributes:
        pairs_overlapping: ``()`` int32 candidate pairs of the culled groups whose bounding volumes
            come within the contact threshold (0 when no group is culled).
        pair_overflow: ``()`` int32 overlapping pairs that exceeded their group's pair capacity and
            were not evaluated (the farthest are dropped).
        contacts_active: ``()`` int32 active contacts found before the capacity cut.
        contact_overflow: ``()`` int32 active contacts dropped by ``capacity`` (the deepest are kept).
    """

    pairs_overlapping: jax.Array
    pair_overflow: jax.Array
    contacts_active: jax.Array
    contact_overflow: jax.Array

    @property
    def overflow(self) -> jax.Array:
        """Total dropped pairs and contacts (0 = nothing was lost)."""
        return self.pair_overflow + self.contact_overflow


@jax.custom_batching.custom_vmap
def _report(pair_overflow: jax.Array, contact_overflow: jax.Array) -> jax.Array:
    jax.debug.callback(_warn, pair_overflow, contact_overflow)
    return pair_overflow


@_report.def_vmap
def _report_batched(axis_size, in_batched, pair_overflow, contact_overflow):
    del axis_size
    jax.debug.callback(_warn, pair_overflow, contact_overflow)  # one host call for the whole batch
    return pair_overflow, in_batched[0]


def report_overflow(stats: CollideStats) -> None:
    """Emit a :class:`CollisionOverflowWarning` at run time when ``stats`` shows dropped pairs or contacts.

    Works under ``jit``, ``vmap`` (one host callback per batch, not per world) and ``grad``.
    """
    _report(jax.lax.stop_gradient(stats.pair_overflow), jax.lax.stop_gradient(stats.contact_overflow))


def _warn(pair_overflow, contact_overflow) -> None:
    po, co = np.asarray(pair_overflow), np.asarray(contact_overflow)
    if not (np.any(po > 0) or np.any(co > 0)):
        return
    worlds = int(np.sum((po > 0) | (co > 0)))
    parts = []
    if np.any(po > 0):
        parts.append(f"up to {int(po.max())} overlapping shape pairs exceeded their group's pair capacity and were "
                     "not evaluated (raise pair_capacity=)")
    if np.any(co > 0):
        parts.append(f"up to {int(co.max())} active contacts exceeded capacity= and were dropped, the deepest kept "
                     "(raise capacity=)")
    where = f"in {worlds} of {po.size} worlds" if po.ndim else "in this world"
    warnings.warn(f"jaxart.collide: {'; '.join(parts)} {where}. Use collide_with_stats to read the counts; "
                  "overflow_warning=False silences this.", CollisionOverflowWarning, stacklevel=2)


def zero_stats() -> CollideStats:
    """Stats of a call that culled nothing and cut nothing (all counts 0)."""
    z = jnp.zeros((), jnp.int32)
    return CollideStats(z, z, z, z)
