"""Lengths of spatial tendons as one function of the path entries' world positions (MuJoCo's ``mj_tendon``).

A spatial tendon's path (:class:`~jaxart.sim.tendons.TendonPathKind` entries) is cut into *segments* between
consecutive SITE entries, each straight or wrapped around the SPHERE/CYLINDER entry between them (with the
optional SIDE entry after it; :func:`~jaxart.dynamics.tendon_wrap.wrapped_length`). A PULLEY entry breaks the
path (no segment across it) and divides the lengths of the segments after it, up to the next pulley, by its
divisor. ``L = Σ_segments length / divisor``.

:func:`spatial_gradients` differentiates this one function with ``jax.grad``: ``∂L/∂p`` for every entry
(a straight segment's unit direction at its ends; for a wrapped segment the directions of its straight legs, and
their sum with reversed sign on the geometry's centre) and ``a × ∂L/∂a`` for a cylinder's world axis ``a`` (the
angular gradient of the geometry's body). Both the reduced-coordinate code (:mod:`jaxart.dynamics.tendon_forces`,
:mod:`jaxart.dynamics.engine.tendon_terms`) and the maximal-coordinate solvers (:mod:`jaxart.solvers.maximal.tendons`)
use these gradients as point forces and body torques, so all solvers share one definition of the length.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.tendon_wrap import wrapped_length
from jaxart.math.safe import safe_norm
from jaxart.sim.tendons import TendonPathKind as K

__all__ = ["PathLayout", "path_layout", "spatial_gradients", "spatial_lengths"]


class PathLayout(NamedTuple):
    """Static segment lists of a model's spatial tendons (entry indices into the attachment arrays).

    Attributes:
        entry_tendon: ``(P,)`` tendon of every entry.
        pulley: ``(P,)`` whether the entry is a PULLEY (its parameter is a divisor).
        straight: ``(a, b, divisor entry, tendon)`` of straight segments (divisor entry ``P``: none).
        wraps: ``(a, geom, side, b, divisor entry, tendon, cylinder, has_side)`` of wrapped segments (one
            vectorised evaluation for spheres and cylinders, with and without side points: one compiled copy).
    """

    entry_tendon: np.ndarray
    pulley: np.ndarray
    straight: tuple
    wraps: tuple


def path_layout(ten) -> PathLayout:
    """The :class:`PathLayout` of a :class:`~jaxart.sim.tendons.TendonTopology` (cached)."""
    return _layout(ten)


@functools.lru_cache(maxsize=64)
def _layout(ten) -> PathLayout:
    start = np.asarray(ten.tendon_attachment_start)
    kind = np.asarray(ten.tendon_attachment_kind)
    n = len(kind)
    straight: list[tuple] = []
    wraps: list[tuple] = []
    for t in range(ten.tendon_count):
        div, prev, geom = n, None, None
        for i in range(start[t], start[t + 1]):
            k = int(kind[i])
            if k == K.PULLEY:
                div, prev = i, None
            elif k in (K.SPHERE, K.CYLINDER):
                geom = i
            elif k == K.SITE:
                if prev is not None and geom is None:
                    straight.append((prev, i, div, t))
                elif prev is not None:
                    side = geom + 1 if geom + 1 < n and kind[geom + 1] == K.SIDE else -1
                    wraps.append((prev, geom, max(side, geom), i, div, t, int(kind[geom]) == K.CYLINDER, side >= 0))
                prev, geom = i, None
    return PathLayout(np.repeat(np.arange(ten.tendon_count, dtype=np.int32), np.diff(start)), kind == K.PULLEY,
                      _columns(straight, 4), _columns(wraps, 8))


def _columns(rows: list[tuple], m: int) -> tuple:
    """``m`` int32 index arrays, the columns of ``rows``."""
    return tuple(np.asarray([r[c] for r in rows], np.int32).reshape(-1) for c in range(m))


def spatial_lengths(model, p: jnp.ndarray, axis: jnp.ndarray) -> jnp.ndarray:
    """``(tendon_count,)`` spatial-tendon lengths (zero for FIXED tendons) from the entries' world positions.

    Args:
        model: The model (``tendon_attachment_param``: radii and divisors; static path structure).
        p: ``(P,)`` ×3 world positions of the path entries (geometry centres for SPHERE/CYLINDER entries).
        axis: ``(P, 3)`` world cylinder axes (read for CYLINDER entries only).

    Returns:
        The lengths [m].
    """
    lay = path_layout(model.tendon)
    param = model.tendon_attachment_param.astype(p.dtype)
    divisor = jnp.concatenate([jnp.where(jnp.asarray(lay.pulley), param, 1.0), jnp.ones((1,), p.dtype)])
    length = jnp.zeros((model.tendon.tendon_count,), p.dtype)
    a, b, d, t = lay.straight
    if t.size:
        length = length.at[t].add(safe_norm(p[b] - p[a], axis=-1) / divisor[d])
    a, g, s, b, d, t, cylinder, has_side = lay.wraps
    if t.size:
        fn = jax.vmap(lambda *args: wrapped_length(*args[:6], cylinder=args[6], has_side=args[7]))
        seg = fn(p[a], p[b], p[g], axis[g], param[g], p[s], jnp.asarray(cylinder, bool), jnp.asarray(has_side, bool))
        length = length.at[t].add(seg / divisor[d])
    return length


def spatial_gradients(model, p: jnp.ndarray, axis: jnp.ndarray) -> tuple:
    """Lengths and their gradients in the entries' positions and axes (``jax.grad`` of :func:`spatial_lengths`).

    Args:
        model: The model.
        p: ``(P, 3)`` world entry positions.
        axis: ``(P, 3)`` world cylinder axes.

    Returns:
        ``(length (T,), g_lin (P, 3), g_rot (P, 3))``: ``∂L/∂p`` of every entry (for its own tendon) and the
        angular gradient ``a × ∂L/∂a`` of the entry's body (non-zero for CYLINDER entries only), so that
        ``L̇ = Σ g_lin · ṗ + g_rot · ω``.
    """
    def total(p_, ax_):
        length = spatial_lengths(model, p_, ax_)
        return jnp.sum(length), length

    (_, length), (g_lin, g_ax) = jax.value_and_grad(total, argnums=(0, 1), has_aux=True)(p, axis)
    return length, g_lin, jnp.cross(axis, g_ax)
