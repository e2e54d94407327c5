"""Articulation masks (``mask`` / ``indices`` / ``body_flag_filter``) shared by FK and IK."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.sim.enums import BodyFlags


def articulation_mask(model, mask, indices) -> jnp.ndarray | None:
    """Boolean ``(articulation_count,)`` selection, or ``None`` for "all".

    Raises:
        ValueError: If both ``mask`` and ``indices`` are given.
    """
    if mask is not None and indices is not None:
        raise ValueError("eval_fk/eval_ik: mask and indices are mutually exclusive; pass only one")
    n = model.articulation_count
    if mask is not None:
        mask = jnp.asarray(mask)
        if mask.shape[-1:] != (n,):
            raise ValueError(f"mask must have shape ({n},) (one entry per articulation), got {mask.shape}")
        return mask.astype(bool)
    if indices is not None:
        idx = jnp.asarray(indices, dtype=jnp.int32).reshape(-1)
        valid = (idx >= 0) & (idx < n)
        return jnp.zeros((n,), bool).at[jnp.where(valid, idx, n)].set(True, mode="drop")
    return None


def body_update_mask(model, art_mask, body_flag_filter) -> jnp.ndarray:
    """``(body_count,)`` bodies that FK writes: tree children of selected articulations whose flags
    match ``body_flag_filter``."""
    sch = model.schedule
    body_art = sch.body_articulation.array
    flags = model.topology.body_flags.array
    static = (body_art >= 0) & ((flags & int(BodyFlags(int(body_flag_filter)))) != 0)
    static = jnp.asarray(static)
    if art_mask is None:
        return static
    return static & art_mask[np.maximum(body_art, 0)]
