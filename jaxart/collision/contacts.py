"""The fixed-capacity ``Contacts`` pytree produced by :func:`jaxart.collision.collide`, and per-row parameters.

:func:`pair_row_values` and :func:`row_margins` give every contact law the parameters of a row: the
explicit pair's own values (``Model.contact_pair_*``) for rows of an explicit pair, else the shapes'.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Contacts:
    """Rigid contacts of one world with a fixed capacity ``c`` (add a leading axis for batches).

    Conventions: shape A has the lower :class:`~jaxart.GeoType` of the pair (plane < sphere <
    capsule < ellipsoid < cylinder < box < mesh), the normal points from A toward B, and
    ``separation = n · (point_b − point_a) − (margin_a + margin_b)`` (Newton's
    ``contact_surface_separation``): positive = gap, negative = penetration. Inactive rows hold
    finite values (padding rows: shape/body index −1); always mask with ``active``.

    Attributes:
        point: ``(c, 3)`` world contact point midway between the two (un-inflated) surfaces [m].
        point_a: ``(c, 3)`` world point on shape A's geometric surface [m].
        point_b: ``(c, 3)`` world point on shape B's geometric surface [m].
        normal: ``(c, 3)`` world unit normal from shape A toward shape B.
        separation: ``(c,)`` signed separation of the margin-inflated surfaces [m].
        shape_a, shape_b: ``(c,)`` int32 shape indices (−1 in unused rows).
        body_a, body_b: ``(c,)`` int32 owning bodies (−1 for static shapes and unused rows).
        pair: ``(c,)`` int32 index of the row's explicit contact pair (a row of
            ``topology.shape_explicit_contact_pairs`` and of the ``Model.contact_pair_*`` fields), −1 when
            the row's shapes are not an explicit pair and in unused rows.
        active: ``(c,)`` bool: a real contact with ``separation < gap`` (see ``collide``).
        slot_bodies: Static ``(body_a, body_b)`` tuples of ints when the rows' bodies are known at
            trace time (``collide`` without a capacity cut or broad-phase culling: every row belongs
            to a fixed shape pair), else ``None``. Part of the tree structure, not a leaf: consumers
            use it to sum per-body wrenches with static gathers instead of scatters.
    """

    point: jax.Array
    point_a: jax.Array
    point_b: jax.Array
    normal: jax.Array
    separation: jax.Array
    shape_a: jax.Array
    shape_b: jax.Array
    body_a: jax.Array
    body_b: jax.Array
    pair: jax.Array
    active: jax.Array
    slot_bodies: tuple | None = struct.field(pytree_node=False, default=None)

    @property
    def capacity(self) -> int:
        """Number of contact rows (static)."""
        return self.separation.shape[-1]

    @property
    def count(self) -> jax.Array:
        """Number of active contacts (traced)."""
        return jnp.sum(self.active, axis=-1)

    @classmethod
    def empty(cls, capacity: int, dtype=jnp.float32) -> Contacts:
        """A ``Contacts`` of ``capacity`` inactive rows."""
        z3 = jnp.zeros((capacity, 3), dtype)
        neg = jnp.full((capacity,), -1, jnp.int32)
        return cls(point=z3, point_a=z3, point_b=z3, normal=z3.at[:, 2].set(1.0),
                   separation=jnp.zeros((capacity,), dtype), shape_a=neg, shape_b=neg, body_a=neg, body_b=neg,
                   pair=neg, active=jnp.zeros((capacity,), bool))


def pair_row_values(pair: jax.Array, pair_values: jax.Array, row_values: jax.Array) -> jax.Array:
    """``row_values`` with the rows of explicit pairs replaced by their pair's value.

    Args:
        pair: ``(c,)`` explicit-pair index of every row (``Contacts.pair``; −1: not an explicit pair).
        pair_values: ``(k,)`` one value per explicit pair (a ``Model.contact_pair_*`` field).
        row_values: ``(c,)`` the value every row takes from its shapes.

    Returns:
        ``(c,)`` values in ``row_values``' dtype (``row_values`` itself when the model has no explicit pair).
    """
    if pair_values.shape[-1] == 0:
        return row_values
    return jnp.where(pair >= 0, pair_values.astype(row_values.dtype)[jnp.maximum(pair, 0)], row_values)


def row_margins(model, contacts: Contacts) -> tuple[jax.Array, jax.Array]:
    """Margins ``(m_a, m_b)`` [m], ``(c,)`` each, that inflate shape A's and B's surfaces in every row.

    ``shape_margin`` of the row's shapes (0 for padding), except in rows of an explicit pair, where the
    pair's ``contact_pair_margin`` is split evenly between the two surfaces (so ``m_a + m_b`` is the margin
    subtracted from the row's ``separation``).
    """
    dt = contacts.separation.dtype
    margin = model.shape_margin.astype(dt)
    ma = jnp.where(contacts.shape_a >= 0, margin[jnp.maximum(contacts.shape_a, 0)], 0.0)
    mb = jnp.where(contacts.shape_b >= 0, margin[jnp.maximum(contacts.shape_b, 0)], 0.0)
    half = 0.5 * model.contact_pair_margin
    return pair_row_values(contacts.pair, half, ma), pair_row_values(contacts.pair, half, mb)
