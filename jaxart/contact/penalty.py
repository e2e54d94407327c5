"""Penalty contact (Newton's ``SolverSemiImplicit`` / Featherstone contact law) as body wrenches.

Per active contact row (shapes A, B; unit normal ``n`` from A to B; signed separation ``d``,
negative = penetration, margins already subtracted by :func:`jaxart.collision.collide`):

* **Materials** are the arithmetic mean of the two shapes' ``shape_material_ke/kd/kf/ka/mu``
  (Newton sums the parameters of the valid shapes and divides by their count); rows of an explicit
  contact pair use the pair's own ``contact_pair_*`` values (:func:`average_materials`).
* **Normal**: ``f_n = −ke·d − kd·min(v_n, 0)·[d < 0]`` along ``n`` on B (and the opposite on A),
  with ``v_n = n · (v_B − v_A)`` at the inflated contact points ``point_a + margin_a n`` and
  ``point_b − margin_b n``.
* **Adhesion**: Newton evaluates the law for every contact with ``d < ka``; for ``0 ≤ d < ka`` the
  elastic term ``−ke·d`` is negative and pulls the shapes together. ``collide`` only marks rows
  active when ``d < gap_a + gap_b``, so set ``shape_gap ≥ ka`` to see adhesion.
* **Friction** (only while ``d < 0``): viscous ``−kf·v_t`` clamped to the Coulomb cone
  ``μ·max(f_n, 0)`` (Newton's regularised Coulomb law; ``v_t`` = tangential relative velocity).

Used by ``SolverSemiImplicit``; for the reduced-coordinate solver the same wrenches enter as
``Jᵀ f`` through ``featherstone_step(..., extra_body_f=contact_body_wrenches(...))``.

Wrenches are world ``(f, τ)`` with ``τ`` about each body's centre of mass (``State.body_f``
convention) and are accumulated per body with ``segment_sum``; static shapes (body −1) and
padding rows are dropped.

**Smooth variant** (``smooth=s`` metres): for useful gradients through making/breaking contact,
the hard switches are replaced by smooth ones with length scale ``s`` and velocity scale
``smooth_velocity``: the elastic force becomes ``ke·s·softplus(−d/s)`` (→ ``−ke·d`` for
``d ≪ −s``, → 0 for ``d ≫ s``, a force of ``ke·s·ln2`` at ``d = 0``), every ``[d < 0]`` gate a
``sigmoid(−d/s)``, ``min(v_n, 0)`` becomes ``−σ_v·softplus(−v_n/σ_v)``, adhesion
``ke·d·sigmoid(d/s)·sigmoid((ka−d)/s)`` (only where ``ka > 0``), and the clamped friction the
smooth saturation ``kf·v_t·L / sqrt(L² + kf²|v_t|²)`` of the cone limit ``L``. Inactive rows
contribute nothing in both variants (the ``active`` mask is still a hard switch, so choose a
detection ``gap`` of a few ``s`` to let the smooth force fade in before a contact activates).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.collision.contacts import pair_row_values, row_margins
from jaxart.math import small, transform_point
from jaxart.math.segments import segment_sum

__all__ = ["ContactForces", "accumulate_point_forces", "average_materials", "contact_body_wrenches", "contact_forces"]


class ContactForces(NamedTuple):
    """Per-contact penalty forces (world frame, force on body B; A receives the opposite).

    Attributes:
        force: ``(c, 3)`` total force on B [N] (zero for inactive rows).
        normal_force: ``(c,)`` signed normal force magnitude along ``n`` on B (positive = push).
        point_a: ``(c, 3)`` application point on A (margin-inflated surface) [m].
        point_b: ``(c, 3)`` application point on B [m].
    """

    force: jax.Array
    normal_force: jax.Array
    point_a: jax.Array
    point_b: jax.Array


def average_materials(model, contacts):
    """Per-row contact material: Newton's mean of ``ke, kd, kf, ka, mu`` over the valid shapes of each row.

    Rows of an explicit contact pair (``contacts.pair ≥ 0``) take their pair's own values
    (``Model.contact_pair_ke/kd/kf/ka/mu``, e.g. an MJCF ``<pair friction solref>``) instead of the mean.

    Returns:
        Tuple ``(ke, kd, kf, ka, mu)`` of ``(c,)`` arrays (zeros for padding rows).
    """
    sa, sb = contacts.shape_a, contacts.shape_b
    va, vb = sa >= 0, sb >= 0
    cnt = jnp.maximum(va.astype(contacts.separation.dtype) + vb.astype(contacts.separation.dtype), 1.0)
    ia, ib = jnp.maximum(sa, 0), jnp.maximum(sb, 0)
    out = []
    for name in ("ke", "kd", "kf", "ka", "mu"):
        arr = getattr(model, f"shape_material_{name}").astype(contacts.separation.dtype)
        pair_arr = getattr(model, f"contact_pair_{name}")
        mean = (jnp.where(va, arr[ia], 0.0) + jnp.where(vb, arr[ib], 0.0)) / cnt
        out.append(pair_row_values(contacts.pair, pair_arr, mean))
    return tuple(out)


def _body_point_velocity(state, model, body, point):
    """World velocity of ``point`` rigidly attached to ``body`` (zero for body −1) and lever arm."""
    dt = point.dtype
    b = jnp.maximum(body, 0)
    static = (body < 0)[:, None]
    q = state.body_q[b]
    com_w = transform_point(q, model.body_com[b].astype(dt))
    r = jnp.where(static, 0.0, point - com_w)
    qd = state.body_qd[b]
    vel = jnp.where(static, 0.0, qd[:, :3] + jnp.cross(qd[:, 3:], r))
    return vel, r


def contact_forces(model, state, contacts, *, smooth: float | None = None,
                   smooth_velocity: float = 0.01) -> ContactForces:
    """Penalty force of every contact row (see the module docstring for the law).

    Args:
        model: The model (materials ``shape_material_*``, ``shape_margin``, ``body_com``).
        state: State with ``body_q``, ``body_qd``.
        contacts: :class:`~jaxart.collision.Contacts` from ``model.collide``.
        smooth: Length scale [m] of the smooth variant; ``None`` = Newton's exact law.
        smooth_velocity: Velocity scale [m/s] of the smooth variant.

    Returns:
        A :class:`ContactForces`.
    """
    if smooth is not None and not float(smooth) > 0.0:
        raise ValueError(f"contact_forces: smooth must be a positive length [m] or None, got {smooth}")
    dt = contacts.separation.dtype
    ke, kd, kf, ka, mu = average_materials(model, contacts)
    n = contacts.normal
    d = contacts.separation
    ma, mb = row_margins(model, contacts)
    pa = contacts.point_a + ma[:, None] * n
    pb = contacts.point_b - mb[:, None] * n
    va, _ = _body_point_velocity(state, model, contacts.body_a, pa)
    vb, _ = _body_point_velocity(state, model, contacts.body_b, pb)
    v = vb - va
    vn = small.dot_last(n, v)
    vt = v - vn[:, None] * n
    if smooth is None:
        pen = d < 0.0
        fn = -ke * d - kd * jnp.minimum(vn, 0.0) * pen
        limit = jnp.where(pen, mu * jnp.maximum(fn, 0.0), 0.0)
        speed_sq = small.dot_last(vt, vt)
        slip = limit / jnp.where(kf > 0.0, kf, 1.0)
        fast = speed_sq > slip * slip
        inv_speed = 1.0 / jnp.sqrt(jnp.where(fast, speed_sq, 1.0))
        ft_mag = jnp.where(fast, limit * inv_speed, kf)
        ft = jnp.where(((limit > 0.0) & (kf > 0.0))[:, None], -ft_mag[:, None] * vt, 0.0)
        on = contacts.active & (d < ka)
    else:
        s = jnp.asarray(smooth, dt)
        sv = jnp.asarray(smooth_velocity, dt)
        gate = jax.nn.sigmoid(-d / s)
        elastic = ke * s * jax.nn.softplus(-d / s)
        adhesion = jnp.where(ka > 0.0, -ke * d * jax.nn.sigmoid(d / s) * jax.nn.sigmoid((ka - d) / s), 0.0)
        damping = kd * sv * jax.nn.softplus(-vn / sv) * gate
        fn = elastic + adhesion + damping
        limit = mu * jnp.maximum(fn, 0.0) * gate
        ft = -smooth_friction_ratio(limit, kf, vt)[:, None] * vt
        on = contacts.active
    force = jnp.where(on[:, None], fn[:, None] * n + ft, 0.0)
    return ContactForces(force, jnp.where(on, fn, 0.0), pa, pb)


def smooth_friction_ratio(limit, kf, vt):
    """``L·tanh(kf·|v_t|/L)/|v_t|`` with its limits (``kf`` at ``v_t = 0``, 0 when ``L = 0``), NaN-free."""
    s2 = small.dot_last(vt, vt)
    ok = (s2 > 0.0) & (limit > 0.0)
    s = jnp.sqrt(jnp.where(ok, s2, 1.0))
    sat = kf * s > 20.0 * jnp.where(ok, limit, 1.0)  # tanh saturated: L/|v_t| (a tiny L would overflow 1/L)
    lim = jnp.where(ok & ~sat, limit, 1.0)
    ratio = jnp.where(sat, jnp.where(ok, limit, 0.0) / s, lim * jnp.tanh(kf * s / lim) / s)
    return jnp.where(ok, ratio, jnp.where(limit > 0.0, kf, 0.0))


def contact_body_wrenches(model, state, contacts, *, smooth: float | None = None,
                          smooth_velocity: float = 0.01) -> jax.Array:
    """Sum the penalty contact wrenches on every body.

    Args:
        model: The model.
        state: State with ``body_q``, ``body_qd``.
        contacts: :class:`~jaxart.collision.Contacts` (``None`` → zero wrenches).
        smooth: Length scale [m] of the smooth variant (``None`` = Newton's law).
        smooth_velocity: Velocity scale [m/s] of the smooth variant.

    Returns:
        ``(body_count, 6)`` world wrenches ``(f, τ)``, ``τ`` about each body's COM (``body_f``
        convention), ready to add to ``State.body_f``.
    """
    nb = model.body_count
    dt = state.body_q.dtype
    if contacts is None or contacts.capacity == 0:
        return jnp.zeros((nb, 6), dt)
    with jax.named_scope("contact_penalty"):
        cf = contact_forces(model, state, contacts, smooth=smooth, smooth_velocity=smooth_velocity)
        body_a, body_b = (contacts.body_a, contacts.body_b) if contacts.slot_bodies is None else (
            np.asarray(b, np.int32) for b in contacts.slot_bodies)
        return accumulate_point_forces(model, state, body_a, body_b, cf.point_a, cf.point_b, cf.force)


def accumulate_point_forces(model, state, body_a, body_b, point_a, point_b, force_b) -> jax.Array:
    """``segment_sum`` of point forces: ``force_b`` at ``point_b`` on B and ``−force_b`` at ``point_a`` on A.

    Bodies −1 (static) are dropped. Returns ``(body_count, 6)`` world wrenches about the COMs.
    """
    nb = model.body_count
    dt = state.body_q.dtype
    com_w = transform_point(state.body_q, model.body_com.astype(dt))
    com_ext = jnp.concatenate([com_w, jnp.zeros((1, 3), dt)], 0)
    xp = np if isinstance(body_a, np.ndarray) and isinstance(body_b, np.ndarray) else jnp  # static ids stay static
    ia = xp.where(body_a >= 0, body_a, nb)
    ib = xp.where(body_b >= 0, body_b, nb)
    wa = jnp.concatenate([-force_b, jnp.cross(point_a - com_ext[ia], -force_b)], -1)
    wb = jnp.concatenate([force_b, jnp.cross(point_b - com_ext[ib], force_b)], -1)
    seg = xp.concatenate([ia, ib])
    return segment_sum(jnp.concatenate([wa, wb], 0), seg, nb)  # static ids: a gather sum, no scatter



