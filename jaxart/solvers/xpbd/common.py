"""Shared XPBD machinery: world inverse inertias, generalised inverse masses, impulse application.

Conventions (positional XPBD, Müller et al. 2020): a scalar constraint ``C`` with unit direction
``n`` at lever ``r`` (or a pure angular direction ``g``) has generalised inverse mass
``w = m⁻¹ + (r × n)ᵀ I_w⁻¹ (r × n)`` per body; one solve gives
``Δλ = (−C − α̃ λ) / (w_A + w_B + α̃)`` with ``α̃ = α / dt²`` and the *positional impulse*
``p = n Δλ`` [kg·m] moves a body by ``Δx = m⁻¹ p`` and rotates it by ``Δθ = I_w⁻¹ (r × p)``.
Impulses of all rows are summed per body (Jacobi; :func:`jaxart.solvers.maximal.sums.segment_sum`,
a static gather when the body ids are known at trace time) and applied once.
The world is body ``body_count`` (zero inverse mass).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_integrate, quat_rotate, quat_to_matrix
from jaxart.math.small import dot_last, matmul, matvec
from jaxart.solvers.maximal.sums import concrete_ids, segment_sum

_IDENT = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])  # identity pose row (the world)


class Bodies(NamedTuple):
    """Per-body data at the current iterate, with the world appended as the last row.

    Attributes:
        q: ``(n+1, 7)`` poses.
        com_w: ``(n+1, 3)`` world COM positions.
        inv_m: ``(n+1,)`` inverse masses (0 for the world, static and kinematic bodies).
        inv_iw: ``(n+1, 3, 3)`` world-frame inverse inertia tensors.
    """

    q: jnp.ndarray
    com_w: jnp.ndarray
    inv_m: jnp.ndarray
    inv_iw: jnp.ndarray


def make_bodies(model, body_q: jnp.ndarray, inv_m: jnp.ndarray, inv_i: jnp.ndarray) -> Bodies:
    """Assemble :class:`Bodies` from poses and body-frame inverse mass properties."""
    dt = body_q.dtype
    q = jnp.concatenate([body_q, jnp.asarray(_IDENT, dt)], 0)
    com = jnp.concatenate([model.body_com.astype(dt), jnp.zeros((1, 3), dt)], 0)
    rot = quat_to_matrix(q[:, 3:])
    inv_i = jnp.concatenate([inv_i, jnp.zeros((1, 3, 3), dt)], 0)
    inv_iw = matmul(matmul(rot, inv_i), jnp.swapaxes(rot, -1, -2))
    com_w = q[:, :3] + quat_rotate(q[:, 3:], com)
    return Bodies(q, com_w, jnp.concatenate([inv_m, jnp.zeros((1,), dt)]), inv_iw)


class BodyRows(NamedTuple):
    """:class:`Bodies` data gathered for a set of rows (one packed gather: cheap to differentiate)."""

    q: jnp.ndarray
    com_w: jnp.ndarray
    inv_m: jnp.ndarray
    inv_iw: jnp.ndarray
    extra: jnp.ndarray


def gather_rows(b: Bodies, idx, extra: jnp.ndarray | None = None) -> BodyRows:
    """Gather the bodies ``idx`` (and optional per-body ``extra`` columns) with a single ``take``."""
    n = b.q.shape[0]
    parts = [b.q, b.com_w, b.inv_m[:, None], b.inv_iw.reshape(n, 9)]
    if extra is not None:
        parts.append(extra)
    rows = jnp.concatenate(parts, -1)[idx]
    k = rows.shape[0]
    return BodyRows(rows[:, :7], rows[:, 7:10], rows[:, 10], rows[:, 11:20].reshape(k, 3, 3), rows[:, 20:])


def row_linear_weight(r_rows: BodyRows, r: jnp.ndarray, n: jnp.ndarray) -> jnp.ndarray:
    """Generalised inverse mass ``m⁻¹ + (r × n)ᵀ I_w⁻¹ (r × n)`` of a point constraint along ``n`` at lever
    ``r`` on gathered body rows."""
    return r_rows.inv_m + quad(r_rows.inv_iw, jnp.cross(r, n))


def row_angular_weight(r_rows: BodyRows, g: jnp.ndarray) -> jnp.ndarray:
    """Generalised inverse mass ``gᵀ I_w⁻¹ g`` of a rotational constraint with gradient ``g`` on gathered
    body rows."""
    return quad(r_rows.inv_iw, g)


def quad(inv_iw: jnp.ndarray, v: jnp.ndarray) -> jnp.ndarray:
    """``vᵀ I_w⁻¹ v`` for stacked ``(..., 3, 3)`` and ``(..., 3)`` (broadcasting)."""
    return dot_last(v, matvec(inv_iw, v))


def safe_unit(v: jnp.ndarray, eps: float = 1e-12):
    """``(|v|, v/|v|)`` with zero length and zero direction for ``|v|² ≤ eps²`` (NaN-free gradients)."""
    n2 = dot_last(v, v)
    ok = n2 > eps * eps
    n = jnp.sqrt(jnp.where(ok, n2, 1.0))
    return jnp.where(ok, n, 0.0), jnp.where(ok[..., None], v / n[..., None], 0.0)


def body_sums(nb: int, ib, ia, lin_b: jnp.ndarray | None, ang_b: jnp.ndarray, lin_a: jnp.ndarray | None,
              ang_a: jnp.ndarray):
    """Per-body sums ``(p (nb, 3) or None, L (nb, 3))`` of rows acting on bodies ``ib`` and ``ia``.

    Rows with body ``nb`` (the world) are dropped; ``lin_*`` may be ``None`` (pure angular rows).
    Static ids (joint bodies) give two gather-based sums; traced ids (contacts: ``Contacts`` carries
    its body ids as arrays) one ``segment_sum`` over the concatenated rows.
    """
    if concrete_ids(ib) is None or concrete_ids(ia) is None:  # traced ids: one scatter per quantity
        idx = jnp.concatenate([jnp.asarray(ib), jnp.asarray(ia)])
        ang = segment_sum(jnp.concatenate([ang_b, ang_a]), idx, nb)
        return (None if lin_b is None else segment_sum(jnp.concatenate([lin_b, lin_a]), idx, nb)), ang
    ang = segment_sum(ang_b, ib, nb) + segment_sum(ang_a, ia, nb)
    if lin_b is None:
        return None, ang
    return segment_sum(lin_b, ib, nb) + segment_sum(lin_a, ia, nb), ang


def apply_impulses(model, b: Bodies, idx, lin: jnp.ndarray | None, ang: jnp.ndarray) -> jnp.ndarray:
    """Sum positional impulses per body and move the bodies.

    Args:
        model: The model (``body_com``).
        b: Current :class:`Bodies`.
        idx: ``(k,)`` body index of every impulse (``body_count`` = world, dropped), or ``None`` when
            ``lin``/``ang`` are already ``(body_count, 3)`` per-body sums.
        lin: ``(k, 3)`` linear positional impulses [kg·m] (``None``: none).
        ang: ``(k, 3)`` angular positional impulses about the COM (``r × p`` plus pure terms).

    Returns:
        New ``(body_count, 7)`` poses.
    """
    nb = model.body_count
    if idx is None:  # already summed per body (:func:`body_sums`)
        p, lam = lin, ang
    else:
        p, lam = (None if lin is None else segment_sum(lin, idx, nb)), segment_sum(ang, idx, nb)
    dx = 0.0 if p is None else b.inv_m[:nb, None] * p
    dth = matvec(b.inv_iw[:nb], lam)
    q_new = quat_integrate(b.q[:nb, 3:], dth, 1.0)
    com = model.body_com.astype(q_new.dtype)
    x_new = b.com_w[:nb] + dx - quat_rotate(q_new, com)
    return jnp.concatenate([x_new, q_new], -1)


def apply_velocity_impulses(b: Bodies, body_qd: jnp.ndarray, idx, lin, ang) -> jnp.ndarray:
    """Add velocity impulses (``Δv = m⁻¹ p``, ``Δω = I_w⁻¹ L``) summed per body."""
    nb = body_qd.shape[0]
    if idx is None:  # already summed per body (:func:`body_sums`)
        p, lam = lin, ang
    else:
        p, lam = segment_sum(lin, idx, nb), segment_sum(ang, idx, nb)
    dv = b.inv_m[:nb, None] * p
    dw = matvec(b.inv_iw[:nb], lam)
    return body_qd + jnp.concatenate([dv, dw], -1)
