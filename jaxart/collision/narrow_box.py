"""Box–box narrow phase: separating-axis test plus face clipping (up to 8 contacts).

Algorithm (fixed shapes, no data-dependent control flow):

1. SAT over the 15 axes (3 faces of A, 3 of B, 9 edge×edge cross products; near-zero cross
   products are skipped). The axis of largest separation (least penetration) wins; edge axes win
   only when they beat the best face axis by ``EDGE_BIAS`` (so resting faces are not replaced by
   edge contacts through round-off).
2. Face axis: the face of the owning box is the reference face, the most anti-parallel face of
   the other box the incident face. Their overlap polygon, in the reference face's plane, is
   enumerated from 25 fixed candidates: incident vertices inside the reference rectangle (4),
   reference corners inside the projected incident quad (4) and crossings of the incident edges
   with the reference edges (16), all with a small slack; candidates closer than a merge radius
   (1e-6 of the face size in float64, ~1e-4 in float32) to an earlier one are dropped, and the
   deepest ``MAX_POINTS`` are kept.
   Each contact's distance is measured along the reference normal between the incident face and
   the reference plane. When the faces do not overlap (separated boxes offset sideways) one
   speculative contact is placed at the incident box's nearest vertex.
3. Edge axis: one contact between the closest points of the two supporting edges; the distance
   is the SAT separation along the axis.

For separated boxes the distance is the SAT separation (exact when a face is closest, a lower
bound for edge/vertex configurations). The normal is the reference face normal (face case) or the
edge cross product (edge case), oriented from A to B; it is a smooth function of the owning box's
orientation within each case and switches discretely between cases.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jaxart.collision.geometry import NarrowResult, dedup, frame, segment_segment

#: Contact slots per box–box pair.
MAX_POINTS = 8
#: Relative preference of face axes over edge axes in the SAT selection.
EDGE_BIAS = 1e-4


def _sat(pa, ra, ha, pb, rb, hb):
    """Separations along the 15 axes, their A→B unit axes and validity."""
    d = pb - pa
    edges = jnp.cross(ra.T[:, None, :], rb.T[None, :, :]).reshape(9, 3)
    esq = jnp.sum(edges * edges, axis=-1)
    eok = esq > 1e-12
    edges = edges / jnp.sqrt(jnp.where(eok, esq, 1.0))[:, None]
    axes = jnp.concatenate([ra.T, rb.T, edges])
    dc = axes @ d
    sgn = jnp.where(dc >= 0.0, 1.0, -1.0)
    rad_a = jnp.abs(axes @ ra) @ ha
    rad_b = jnp.abs(axes @ rb) @ hb
    sep = jnp.abs(dc) - rad_a - rad_b
    ok = jnp.concatenate([jnp.ones(6, bool), eok])
    return sep, axes * sgn[:, None], ok


def _select_axis(sep, ok, size):
    big = jnp.asarray(jnp.finfo(sep.dtype).max, sep.dtype)
    face = jnp.argmax(sep[:6])
    sep_e = jnp.where(ok[6:], sep[6:], -big)
    edge = jnp.argmax(sep_e)
    use_edge = sep_e[edge] > sep[face] + EDGE_BIAS * (size + jnp.abs(sep[face]))
    return face, edge + 6, use_edge


def _inside_quad(pts2, quad2, tol):
    """Whether 2D points ``(m, 2)`` lie inside the convex quad ``(4, 2)`` (either winding, ``tol`` slack)."""
    e = jnp.roll(quad2, -1, axis=0) - quad2
    rel = pts2[:, None, :] - quad2[None, :, :]
    cr = e[None, :, 0] * rel[..., 1] - e[None, :, 1] * rel[..., 0]
    return jnp.all(cr >= -tol, axis=1) | jnp.all(cr <= tol, axis=1)


def _tolerances(dt, size):
    """(inclusion slack, merge radius) for the clipping tests, scaled by the face size."""
    eps = float(jnp.finfo(dt).eps)
    return 1e3 * eps * size, max(1e3 * eps, 1e-6) * size


def _face_contacts(p_ref, r_ref, h_ref, k, n, p_inc, r_inc, h_inc):
    """Clip the incident face against reference face ``k`` (normal ``n`` toward the incident box)."""
    dt = n.dtype
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    u, v = r_ref[:, k1], r_ref[:, k2]
    hu, hv = h_ref[k1], h_ref[k2]
    fc = p_ref + h_ref[k] * n
    proj = r_inc.T @ n
    b = jnp.argmax(jnp.abs(proj))
    m = -jnp.where(proj[b] >= 0.0, 1.0, -1.0) * r_inc[:, b]
    b1, b2 = (b + 1) % 3, (b + 2) % 3
    ic = p_inc + h_inc[b] * m
    cu, cv = r_inc[:, b1] * h_inc[b1], r_inc[:, b2] * h_inc[b2]
    signs = jnp.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]], dtype=dt)
    verts = ic + signs[:, :1] * cu + signs[:, 1:] * cv  # (4, 3) cyclic
    rel = verts - fc
    v2 = jnp.stack([rel @ u, rel @ v], axis=-1)
    vdist = rel @ n
    tol, merge = _tolerances(dt, hu + hv)
    # (a) incident vertices inside the reference rectangle
    ok_a = (jnp.abs(v2[:, 0]) <= hu + tol) & (jnp.abs(v2[:, 1]) <= hv + tol)
    # (b) reference corners inside the incident quad
    c2 = signs * jnp.stack([hu, hv])
    cw = fc + c2[:, :1] * u + c2[:, 1:] * v
    nm = jnp.dot(n, m)  # ≤ −1/√3 for the most anti-parallel face
    dist_b = ((ic - cw) @ m) / nm
    ok_b = _inside_quad(c2, v2, tol * (hu + hv))
    # (c) incident edges crossing reference edges
    w0, w1 = v2, jnp.roll(v2, -1, axis=0)
    p0, p1 = verts, jnp.roll(verts, -1, axis=0)
    pts_c, dist_c, ok_c = [], [], []
    for axis, lim, other in ((0, hu, hv), (1, hv, hu)):
        for side in (-1.0, 1.0):
            den = w1[:, axis] - w0[:, axis]
            good = jnp.abs(den) > tol
            lam = (side * lim - w0[:, axis]) / jnp.where(good, den, 1.0)
            o = w0[:, 1 - axis] + lam * (w1[:, 1 - axis] - w0[:, 1 - axis])
            ok_c.append(good & (lam >= 0.0) & (lam <= 1.0) & (jnp.abs(o) <= other + tol))
            pt = p0 + lam[:, None] * (p1 - p0)
            pts_c.append(pt)
            dist_c.append((pt - fc) @ n)
    pts = jnp.concatenate([verts, cw + dist_b[:, None] * n, *pts_c])
    ok = dedup(pts, jnp.concatenate([ok_a, ok_b, *ok_c]), merge)
    # no overlap (separated boxes offset sideways): one speculative contact at the nearest vertex
    near = jnp.argmin(vdist)
    pts = jnp.concatenate([pts, verts[near][None]])
    dist = jnp.concatenate([vdist, dist_b, *dist_c, vdist[near][None]])
    ok = jnp.concatenate([ok, ~jnp.any(ok)[None]])
    return pts, dist, ok


def box_box(xa, sa, xb, sb) -> NarrowResult:
    """Box–box contacts (``MAX_POINTS`` slots); see the module docstring for the algorithm."""
    pa, ra = frame(xa)
    pb, rb = frame(xb)
    sep, axes, ok = _sat(pa, ra, sa, pb, rb, sb)
    face, edge, use_edge = _select_axis(sep, ok, jnp.sum(sa) + jnp.sum(sb))
    # ---- face case: reference box A (face < 3) or B (face >= 3)
    ref_is_a = face < 3
    n_ab = axes[face]
    n_ref = jnp.where(ref_is_a, n_ab, -n_ab)
    k = face % 3
    p_ref, r_ref, h_ref = (jnp.where(ref_is_a, x, y) for x, y in ((pa, pb), (ra, rb), (sa, sb)))
    p_inc, r_inc, h_inc = (jnp.where(ref_is_a, y, x) for x, y in ((pa, pb), (ra, rb), (sa, sb)))
    pts, dist, okf = _face_contacts(p_ref, r_ref, h_ref, k, n_ref, p_inc, r_inc, h_inc)
    mid = pts - 0.5 * dist[:, None] * n_ref
    big = jnp.asarray(jnp.finfo(dist.dtype).max, dist.dtype)
    _, idx = lax.top_k(jnp.where(okf, -dist, -big), MAX_POINTS)
    face_res = NarrowResult(dist[idx], mid[idx], jnp.broadcast_to(n_ab, (MAX_POINTS, 3)), okf[idx])
    # ---- edge case
    i, j = (edge - 6) // 3, (edge - 6) % 3
    n_e = axes[edge]
    ea = pa + ra @ (jnp.where(ra.T @ n_e >= 0.0, 1.0, -1.0) * sa * (jnp.arange(3) != i))
    eb = pb - rb @ (jnp.where(rb.T @ n_e >= 0.0, 1.0, -1.0) * sb * (jnp.arange(3) != j))
    da, db = ra[:, i] * sa[i], rb[:, j] * sb[j]
    s, t = segment_segment(ea - da, ea + da, eb - db, eb + db)
    qa, qb = ea - da + 2.0 * s * da, eb - db + 2.0 * t * db
    slot0 = jnp.arange(MAX_POINTS) == 0
    edge_res = NarrowResult(
        jnp.full((MAX_POINTS,), sep[edge]),
        jnp.broadcast_to(0.5 * (qa + qb), (MAX_POINTS, 3)),
        jnp.broadcast_to(n_e, (MAX_POINTS, 3)),
        slot0,
    )
    return NarrowResult(*(jnp.where(use_edge, e, f) for e, f in zip(edge_res, face_res, strict=True)))
