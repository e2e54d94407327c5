"""XPBD rigid contact: non-penetration, static/dynamic Coulomb friction, torsional and rolling friction.

Contact points are frozen in each body's frame at the start of the step and re-evaluated at every
iterate; the normal ``n`` (A → B) is kept from collision. Each side has two points: the *material*
point (the margin-inflated surface point, carried by the body's rotation), whose drift is the slip,
and the *geometric* point, a frozen core point plus the shape's rounding radius along ``n`` (spheres:
the centre plus ``r``; capsules: the segment point plus ``r``; other shapes: the material point), at
which the impulses act and whose separation ``d = n · (g_B − g_A)`` is the signed distance. A ball
spinning by ``θ`` in a step thus keeps its contact point at the bottom (a material point would rise by
``r (1 − cos θ)`` and leave the ball penetrating). Per iteration and contact (Jacobi over contacts):

* **normal**: for ``d < 0`` a positional impulse ``Δλ_n = −d / w_n`` (times ``relaxation``),
  accumulated ``λ_n ≥ 0``;
* **friction**: the tangential drift of the two material points since the step start is cancelled
  (static friction) as long as the accumulated tangential impulse stays inside the cone
  ``λ_t ≤ μ λ_n`` of the same step; beyond it the impulse is capped at the cone (dynamic friction),
  so a step's friction impulse never exceeds ``μ`` times its normal impulse, at impacts too;
* **torsional / rolling**: the relative rotation since the step start about ``n`` / perpendicular
  to ``n`` is cancelled within ``μ_torsional λ_n`` / ``μ_rolling λ_n`` (Newton's units: metres).

Materials ``μ, μ_torsional, μ_rolling, restitution`` are the mean of the two shapes (Newton); rows of an
explicit contact pair take the pair's ``contact_pair_mu/mu_torsional/mu_rolling`` (restitution stays the mean).
Each contact's impulse is scaled by ``1/N`` where ``N`` counts the penetrating contacts of its
dynamic body (harmonic mean ``2/(N_A + N_B)`` when both are dynamic; Newton's contact weighting),
so that a resting box with four corner contacts is not over-corrected.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.collision.contacts import pair_row_values, row_margins
from jaxart.math import quat_conjugate, quat_mul, transform_inverse, transform_point
from jaxart.math.small import dot_last
from jaxart.sim.enums import GeoType
from jaxart.solvers.maximal.joints import rotation_vector
from jaxart.solvers.maximal.sums import segment_sum
from jaxart.solvers.xpbd.common import (
    Bodies,
    body_sums,
    gather_rows,
    row_angular_weight,
    row_linear_weight,
    safe_unit,
)

_IDENT = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])  # identity pose row (the world)


class ContactFrame(NamedTuple):
    """Step-start contact data: body indices (world = n), local points, normal, materials."""

    ia: jnp.ndarray
    ib: jnp.ndarray
    local_a: jnp.ndarray
    local_b: jnp.ndarray
    normal: jnp.ndarray
    active: jnp.ndarray
    mu: jnp.ndarray
    mu_torsional: jnp.ndarray
    mu_rolling: jnp.ndarray
    restitution: jnp.ndarray
    core_a: jnp.ndarray
    core_b: jnp.ndarray
    radius_a: jnp.ndarray
    radius_b: jnp.ndarray


def _rounding_radius(model, shape, f):
    """Rounding radius [m] of each contact shape (sphere/capsule radius, else 0), ``(C,)``."""
    st = jnp.asarray(np.isin(np.asarray(model.shape_type), (int(GeoType.SPHERE), int(GeoType.CAPSULE))))
    idx = jnp.maximum(shape, 0)
    return jnp.where((shape >= 0) & st[idx], model.shape_scale[idx, 0].astype(f), 0.0)


def contact_frame(model, body_q, contacts) -> ContactFrame:
    """Freeze the contact points in the body frames of ``body_q`` (the collision poses).

    ``local_a/b``: material points ``(C, 3)`` [m, body frame]; ``core_a/b``: the material points moved by the
    rounding radii ``radius_a/b`` ``(C,)`` [m] against ``n`` (A) / along ``n`` (B), body frame.
    """
    nb = model.body_count
    f = body_q.dtype
    ia = jnp.where(contacts.body_a >= 0, contacts.body_a, nb)
    ib = jnp.where(contacts.body_b >= 0, contacts.body_b, nb)
    q_ext = jnp.concatenate([body_q, jnp.asarray(_IDENT, f)], 0)
    n = contacts.normal.astype(f)
    ma, mb = (m.astype(f) for m in row_margins(model, contacts))
    pa = contacts.point_a.astype(f) + ma[:, None] * n
    pb = contacts.point_b.astype(f) - mb[:, None] * n
    ta_inv, tb_inv = transform_inverse(q_ext[ia]), transform_inverse(q_ext[ib])
    la, lb = transform_point(ta_inv, pa), transform_point(tb_inv, pb)
    rad_a, rad_b = _rounding_radius(model, contacts.shape_a, f), _rounding_radius(model, contacts.shape_b, f)
    ca = transform_point(ta_inv, pa - rad_a[:, None] * n)
    cb = transform_point(tb_inv, pb + rad_b[:, None] * n)
    mats = []
    empty = model.shape_material_restitution[:0]  # restitution has no per-pair value
    for arr, pair_arr in ((model.shape_material_mu, model.contact_pair_mu),
                          (model.shape_material_mu_torsional, model.contact_pair_mu_torsional),
                          (model.shape_material_mu_rolling, model.contact_pair_mu_rolling),
                          (model.shape_material_restitution, empty)):
        arr = arr.astype(f)
        va, vb = contacts.shape_a >= 0, contacts.shape_b >= 0
        cnt = jnp.maximum(va.astype(f) + vb.astype(f), 1.0)
        mean = (jnp.where(va, arr[jnp.maximum(contacts.shape_a, 0)], 0.0)
                + jnp.where(vb, arr[jnp.maximum(contacts.shape_b, 0)], 0.0)) / cnt
        mats.append(pair_row_values(contacts.pair, pair_arr, mean))
    active = contacts.active & (contacts.shape_a != contacts.shape_b) & (ia != ib)
    return ContactFrame(ia, ib, la, lb, n, active, *mats, ca, cb, rad_a, rad_b)


class ContactLambda(NamedTuple):
    """Accumulated positional impulses per contact (normal, tangential, torsional, rolling)."""

    normal: jnp.ndarray
    tangent: jnp.ndarray
    torsion: jnp.ndarray
    rolling: jnp.ndarray


def zero_lambda(cf: ContactFrame) -> ContactLambda:
    """All-zero :class:`ContactLambda`."""
    z = jnp.zeros_like(cf.mu)
    return ContactLambda(z, z, z, z)


def _points(ra, rb, cf: ContactFrame):
    """Geometric contact points of both sides and their levers from the COMs (world)."""
    pa = transform_point(ra.q, cf.core_a) + cf.radius_a[:, None] * cf.normal
    pb = transform_point(rb.q, cf.core_b) - cf.radius_b[:, None] * cf.normal
    return pa, pb, pa - ra.com_w, pb - rb.com_w


def _weights(b: Bodies, cf: ContactFrame, pen, dyn_a, dyn_b):
    """Newton's per-contact Jacobi weight from the penetrating-contact count of each body."""
    nb1 = b.inv_m.shape[0]
    pen = pen.astype(b.q.dtype)
    cnt = segment_sum(jnp.concatenate([pen, pen]), jnp.concatenate([cf.ia, cf.ib]), nb1)
    cnt = jax.lax.stop_gradient(cnt)  # integer counts: no gradient
    na = jnp.where(dyn_a, cnt[cf.ia], 0.0)
    nbb = jnp.where(dyn_b, cnt[cf.ib], 0.0)
    total = na + nbb
    both = (na > 0.0) & (nbb > 0.0)
    single = jnp.maximum(jnp.maximum(na, nbb), 1.0)
    return jnp.where(both, 2.0 / jnp.where(total > 0.0, total, 1.0), 1.0 / single)


def solve_contacts(b: Bodies, q0_ext, cf: ContactFrame, lam: ContactLambda, *, relaxation: float):
    """One Jacobi pass over all contacts. Returns ``(impulses, new λ)``."""
    ra = gather_rows(b, cf.ia, q0_ext[:, 3:])
    rb = gather_rows(b, cf.ib, q0_ext[:, 3:])
    pa, pb, r_a, r_b = _points(ra, rb, cf)
    n = cf.normal
    d = dot_last(n, pb - pa)
    pen = cf.active & (d < 0.0)
    weight = _weights(b, cf, pen, ra.inv_m > 0.0, rb.inv_m > 0.0)
    w_n = row_linear_weight(ra, r_a, n) + row_linear_weight(rb, r_b, n)
    ok_n = pen & (w_n > 0.0)
    dn = jnp.where(ok_n, relaxation * weight * -d / jnp.where(ok_n, w_n, 1.0), 0.0)
    lam_n = lam.normal + dn
    # friction: tangential drift of the two material points since the step start
    drift = transform_point(rb.q, cf.local_b) - transform_point(ra.q, cf.local_a)
    drift = drift - dot_last(drift, n)[:, None] * n
    s, t = safe_unit(drift)
    w_t = row_linear_weight(ra, r_a, t) + row_linear_weight(rb, r_b, t)
    on = cf.active & (lam_n > 0.0) & (w_t > 0.0)
    want = jnp.where(on, weight * s / jnp.where(on, w_t, 1.0), 0.0)
    dt_ = jnp.clip(want, 0.0, jnp.maximum(cf.mu * lam_n - lam.tangent, 0.0))
    # torsional and rolling: relative rotation since the step start
    rel = (rotation_vector(quat_mul(rb.q[:, 3:], quat_conjugate(rb.extra)))
           - rotation_vector(quat_mul(ra.q[:, 3:], quat_conjugate(ra.extra))))
    tw = dot_last(rel, n)
    roll_mag, roll_dir = safe_unit(rel - tw[:, None] * n)
    w_tor = row_angular_weight(ra, n) + row_angular_weight(rb, n)
    w_rol = row_angular_weight(ra, roll_dir) + row_angular_weight(rb, roll_dir)
    d_tor = _capped(on, weight * jnp.abs(tw), w_tor, cf.mu_torsional * lam_n - lam.torsion)
    d_rol = _capped(on, weight * roll_mag, w_rol, cf.mu_rolling * lam_n - lam.rolling)
    p = n * dn[:, None] - t * dt_[:, None]  # linear impulse on B (A gets −p)
    ang_b = jnp.cross(r_b, p) - n * (jnp.sign(tw) * d_tor)[:, None] - roll_dir * d_rol[:, None]
    ang_a = -jnp.cross(r_a, p) + n * (jnp.sign(tw) * d_tor)[:, None] + roll_dir * d_rol[:, None]
    nb = b.inv_m.shape[0] - 1
    imp = (None, *body_sums(nb, cf.ib, cf.ia, p, ang_b, -p, ang_a))
    return imp, ContactLambda(lam_n, lam.tangent + dt_, lam.torsion + d_tor, lam.rolling + d_rol)


def _capped(on, err, w, room):
    ok = on & (w > 0.0)
    return jnp.where(ok, jnp.clip(err / jnp.where(ok, w, 1.0), 0.0, jnp.maximum(room, 0.0)), 0.0)


def restitution_impulses(b: Bodies, body_qd, qd_pre, cf: ContactFrame, lam: ContactLambda, gravity, dt):
    """Velocity impulses giving touching contacts the normal velocity ``−e v_n⁻`` (Müller et al.).

    ``v_n⁻`` is the relative normal velocity before the position solve; contacts approaching
    slower than ``2 |g| dt`` are left at rest (no jitter). Returns ``(None, lin, ang)`` (per-body sums).
    """
    zeros = jnp.zeros((1, 6), body_qd.dtype)
    vel_ext = jnp.concatenate([jnp.concatenate([body_qd, zeros], 0), jnp.concatenate([qd_pre, zeros], 0)], -1)
    ra = gather_rows(b, cf.ia, vel_ext)
    rb = gather_rows(b, cf.ib, vel_ext)
    _, _, r_a, r_b = _points(ra, rb, cf)
    n = cf.normal

    def vel(rows, r, k):
        tw = rows.extra[:, 6 * k:6 * k + 6]
        return tw[:, :3] + jnp.cross(tw[:, 3:], r)

    vn = dot_last(n, vel(rb, r_b, 0) - vel(ra, r_a, 0))
    vn_pre = dot_last(n, vel(rb, r_b, 1) - vel(ra, r_a, 1))
    touching = cf.active & (lam.normal > 0.0)
    threshold = 2.0 * jnp.sqrt(dot_last(gravity, gravity)) * dt
    target = jnp.where(vn_pre < -threshold, -cf.restitution * vn_pre, 0.0)
    w_n = row_linear_weight(ra, r_a, n) + row_linear_weight(rb, r_b, n)
    weight = _weights(b, cf, touching, ra.inv_m > 0.0, rb.inv_m > 0.0)
    ok = touching & (w_n > 0.0)
    dv = jnp.where(ok, weight * jnp.maximum(target - vn, 0.0) / jnp.where(ok, w_n, 1.0), 0.0)
    p = n * dv[:, None]
    nb = b.inv_m.shape[0] - 1
    return (None, *body_sums(nb, cf.ib, cf.ia, p, jnp.cross(r_b, p), -p, -jnp.cross(r_a, p)))
