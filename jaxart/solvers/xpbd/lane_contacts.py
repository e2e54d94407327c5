"""Contacts of the XPBD lane kernel (:mod:`maximal_xpbd_lanes`): ``solve_contacts`` in SoA lane form.

Contact bodies are traced ids (``Contacts.body_a/body_b`` are arrays), so per-lane selects replace
the gathers (a chain of ``body_count + 1`` selects per quantity) and the per-body sums (one masked
sum per body over the contact rows); all per-contact quantities are materialised with
:func:`maximal_xpbd_soa.stage` before they fan out.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxart.math.static_index import item
from jaxart.solvers.xpbd import soa as s
from jaxart.solvers.xpbd.soa import Bodies, stage


def _select_rows(x, eq):
    """``x[idx]`` for traced ids as a select chain: ``x`` ``(nb1, L)``, ``eq[n]`` = ``idx == n`` ``(C, L)``."""
    acc = jnp.broadcast_to(item(x, 0), jnp.broadcast_shapes(x.shape[1:], eq[0].shape))
    for n in range(1, x.shape[0]):
        acc = jnp.where(eq[n], item(x, n), acc)
    return acc


def _contact_rows(b: Bodies, eq):
    """Body data of one contact side (``gather_rows``)."""
    g = lambda tree: jax.tree_util.tree_map(lambda x: _select_rows(x, eq), tree)  # noqa: E731
    return Bodies(g(b.p), g(b.q), g(b.com_w), g(b.inv_m), g(b.inv_iw))


def _row_sums(vals, eq_rows):
    """Per-body sums of rows ``vals`` (``(R, L)`` each) with ``eq_rows[r]`` = ``(nb1, L)`` masks ``ids[r] == n``."""
    return s.total(jnp.where(eq_rows[r], vals[r][None], 0.0) for r in range(len(eq_rows)))


def _sum_sides(eq_rows, on_b, on_a):
    """Per-body sums of contact rows on body B then body A (the traced ``body_sums`` order)."""
    out = []
    for vb, va in zip(on_b, on_a, strict=True):
        vals = [item(vb, c) for c in range(vb.shape[0])] + [item(va, c) for c in range(va.shape[0])]
        out.append(_row_sums(vals, eq_rows))
    return tuple(out)


def _weights(dyn_a, dyn_b, ra_cnt, rb_cnt):
    """Newton's per-contact Jacobi weight from the penetrating-contact counts of both bodies."""
    na = jnp.where(dyn_a, ra_cnt, 0.0)
    nbb = jnp.where(dyn_b, rb_cnt, 0.0)
    tot = na + nbb
    both = (na > 0.0) & (nbb > 0.0)
    single = jnp.maximum(jnp.maximum(na, nbb), 1.0)
    return jnp.where(both, 2.0 / jnp.where(tot > 0.0, tot, 1.0), 1.0 / single)


def _penetration_weight(cd, pen, ra, rb):
    """Newton's contact weighting from the penetrating-contact count of each body."""
    pen_f = pen.astype(ra.inv_m.dtype)
    rows = [pen_f[c] for c in range(pen_f.shape[0])] * 2
    cnt = jax.lax.stop_gradient(_row_sums(rows, cd["eq_ab"]))  # integer counts: no gradient
    return _weights(ra.inv_m > 0.0, rb.inv_m > 0.0, _select_rows(cnt, cd["eq_a"]),
                    _select_rows(cnt, cd["eq_b"]))


def _capped(on, err, w, room):
    ok = on & (w > 0.0)
    return jnp.where(ok, jnp.clip(err / jnp.where(ok, w, 1.0), 0.0, jnp.maximum(room, 0.0)), 0.0)


class _Geometry(NamedTuple):
    ra: Bodies
    rb: Bodies
    pa: tuple  # geometric contact points (``contacts._points``)
    pb: tuple
    drift: tuple  # material point of B minus that of A
    rel: tuple


def _contact_geometry(b: Bodies, cd) -> _Geometry:
    """Both bodies' rows, the contact points and the relative rotation since the step start."""
    ra, rb = _contact_rows(b, cd["eq_a"]), _contact_rows(b, cd["eq_b"])
    n = cd["normal"]
    pa = s.add(s.add(ra.p, s.qrot(ra.q, cd["core_a"])), s.scale(n, cd["radius_a"]))
    pb = s.sub(s.add(rb.p, s.qrot(rb.q, cd["core_b"])), s.scale(n, cd["radius_b"]))
    drift = s.sub(s.add(rb.p, s.qrot(rb.q, cd["local_b"])), s.add(ra.p, s.qrot(ra.q, cd["local_a"])))
    rel = s.sub(s.rotation_vector(s.qmul(rb.q, s.qconj(cd["q0_b"]))),
                s.rotation_vector(s.qmul(ra.q, s.qconj(cd["q0_a"]))))
    return _Geometry(ra, rb, pa, pb, drift, rel)


def _contact_impulses(g: _Geometry, weight, pen, cd, lam, relax):
    """Per-contact impulses on B and A and the new multipliers (``solve_contacts`` after the weights)."""
    ra, rb, pa, pb = g.ra, g.rb, g.pa, g.pb
    r_a, r_b = s.sub(pa, ra.com_w), s.sub(pb, rb.com_w)
    n = cd["normal"]
    d = s.dot(n, s.sub(pb, pa))
    row_w = lambda r, lev, v: r.inv_m + s.quad(r.inv_iw, s.cross(lev, v))  # noqa: E731
    w_n = row_w(ra, r_a, n) + row_w(rb, r_b, n)
    ok_n = pen & (w_n > 0.0)
    dn = jnp.where(ok_n, relax * weight * -d / jnp.where(ok_n, w_n, 1.0), 0.0)
    lam_n = lam[0] + dn
    drift = s.sub(g.drift, s.scale(n, s.dot(g.drift, n)))
    sd, t = s.safe_unit(drift)
    w_t = row_w(ra, r_a, t) + row_w(rb, r_b, t)
    on = cd["active"] & (lam_n > 0.0) & (w_t > 0.0)
    want = jnp.where(on, weight * sd / jnp.where(on, w_t, 1.0), 0.0)
    dt_ = jnp.clip(want, 0.0, jnp.maximum(cd["mu"] * lam_n - lam[1], 0.0))
    tw = s.dot(g.rel, n)
    roll_mag, roll_dir = s.safe_unit(s.sub(g.rel, s.scale(n, tw)))
    w_tor = s.quad(ra.inv_iw, n) + s.quad(rb.inv_iw, n)
    w_rol = s.quad(ra.inv_iw, roll_dir) + s.quad(rb.inv_iw, roll_dir)
    d_tor = _capped(on, weight * jnp.abs(tw), w_tor, cd["mu_torsional"] * lam_n - lam[2])
    d_rol = _capped(on, weight * roll_mag, w_rol, cd["mu_rolling"] * lam_n - lam[3])
    p = s.sub(s.scale(n, dn), s.scale(t, dt_))
    tor = s.scale(n, jnp.sign(tw) * d_tor)
    rol = s.scale(roll_dir, d_rol)
    ang_b = s.sub(s.sub(s.cross(r_b, p), tor), rol)
    ang_a = s.add(s.add(s.neg(s.cross(r_a, p)), tor), rol)
    return (p, ang_b, ang_a), (lam_n, lam[1] + dt_, lam[2] + d_tor, lam[3] + d_rol)


def solve_contacts(b: Bodies, cd, lam, relax: float):
    """``maximal_xpbd_contacts.solve_contacts`` (one Jacobi pass over all contacts)."""
    geo_in = {k: cd[k] for k in ("eq_a", "eq_b", "local_a", "local_b", "core_a", "core_b", "radius_a", "radius_b",
                                 "normal", "q0_a", "q0_b")}
    g = stage(_contact_geometry, b, geo_in)
    d = s.dot(cd["normal"], s.sub(g.pb, g.pa))
    pen = cd["active"] & (d < 0.0)
    weight = _penetration_weight(cd, pen, g.ra, g.rb)
    imp_in = {k: cd[k] for k in ("normal", "active", "mu", "mu_torsional", "mu_rolling")}
    (p, ang_b, ang_a), lam = stage(lambda *a: _contact_impulses(*a, relax), g, weight, pen, imp_in, lam)
    lin = _sum_sides(cd["eq_ba"], p, s.neg(p))
    ang = _sum_sides(cd["eq_ba"], ang_b, ang_a)
    return (lin, ang), lam


def contact_data(cin, nb1: int) -> dict:
    """SoA contact inputs plus the per-lane body-id masks (computed once per step)."""
    ids = jnp.arange(nb1)[:, None, None]
    ia, ib = cin["ia"], cin["ib"]
    eq_a, eq_b = ia[None] == ids, ib[None] == ids  # (nb1, C, L)
    cd = {k: (s.comps(v) if v.ndim == 3 else v) for k, v in cin.items() if k not in ("ia", "ib")}
    cd["eq_a"], cd["eq_b"] = eq_a, eq_b
    ncon = ia.shape[0]
    cd["eq_ab"] = [eq_a[:, c] for c in range(ncon)] + [eq_b[:, c] for c in range(ncon)]
    cd["eq_ba"] = [eq_b[:, c] for c in range(ncon)] + [eq_a[:, c] for c in range(ncon)]
    return cd
