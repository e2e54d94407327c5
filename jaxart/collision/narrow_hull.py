"""Convex polytope–polytope narrow phase (mesh hulls and boxes): SAT with Gauss-map pruning plus clipping.

Why SAT + clipping: hulls are small static polytopes (≤ ``maxhullvert`` vertices), so every
candidate separating axis can be enumerated with fixed array shapes — no iteration whose count
depends on the configuration (as GJK/EPA or MPR need), no ``while_loop``, and each distance is a
plain dot product of vertices, hence differentiable within a contact configuration. The
face-clipping step yields the multi-point manifold a resting polytope needs directly, where
GJK/EPA gives one point per call (MuJoCo adds more with extra perturbed runs).

Algorithm (one pair, world frame):

1. **Face axes**: every face normal of A and of B. The separation along a face normal of A is
   ``min_j n · b_j − offset``; along a face of B likewise with A's vertices. Cost ``O(F·H)``.
2. **Edge axes**: the cross product of every edge pair whose arcs on the Gauss map intersect
   (the edge of A between face normals ``n1, n2`` and the edge of B between ``−m1, −m2``), i.e.
   the pairs that form a face of the Minkowski difference; only those can be separating or
   least-penetration axes, and for them the separation is the distance of the edges' lines
   along the axis. Cost ``O(E_a·E_b)``.
3. The axis of largest separation wins; an edge axis only when it beats the best face axis by
   ``EDGE_BIAS`` (relative), so resting faces are not replaced by edge contacts through round-off.
4. **Face axis**: the winning face is the reference face, the other hull's face most
   anti-parallel to it the incident face. Their overlap is enumerated from fixed candidates:
   incident vertices inside the reference polygon, reference vertices inside the incident
   polygon (projected along the reference normal) and crossings of incident edges with reference
   edges. Each candidate's distance is measured along the reference normal from the reference
   plane to the incident face. ``MAX_POINTS`` spread points are kept (the deepest first, then
   repeatedly the candidate farthest from those chosen, penetrating candidates before
   separated ones). When the faces do not overlap one speculative contact is placed at the
   incident face's nearest vertex.
5. **Edge axis**: one contact between the closest points of the two edges; the distance is the
   SAT separation along the axis.

For separated hulls the distance is the SAT separation (exact when a face or an edge pair is
closest, a lower bound for vertex configurations), as for box–box. Normals point from A to B.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.collision.geometry import NarrowResult, segment_segment
from jaxart.collision.hull_geometry import Hull, polygon_sides

#: Contact slots per polytope pair (box–mesh, mesh–mesh).
MAX_POINTS = 8
#: Relative preference of face axes over edge axes in the SAT selection.
EDGE_BIAS = 1e-4


def _arcs_cross(a, b, c, d):
    """Whether the great arcs ``a→b`` and ``c→d`` (shorter arcs, unit vectors) intersect."""
    bxa = jnp.cross(b, a)
    dxc = jnp.cross(d, c)
    cba, dba = jnp.sum(c * bxa, -1), jnp.sum(d * bxa, -1)
    adc, bdc = jnp.sum(a * dxc, -1), jnp.sum(b * dxc, -1)
    return (cba * dba < 0.0) & (adc * bdc < 0.0) & (cba * bdc > 0.0)


def _face_seps(ha: Hull, hb: Hull):
    """Separations along A's face normals and along B's (axis −m), each ``(F,)``."""
    big = jnp.asarray(jnp.finfo(ha.verts.dtype).max, ha.verts.dtype)
    pb = jnp.where(hb.vmask[None, :], ha.normals @ hb.verts.T, big)
    pa = jnp.where(ha.vmask[None, :], hb.normals @ ha.verts.T, big)
    return jnp.min(pb, axis=1) - ha.offsets, jnp.min(pa, axis=1) - hb.offsets


def _edge_seps(ha: Hull, hb: Hull):
    """Separations ``(E_a·E_b,)``, A→B axes and validity of the Minkowski-face edge pairs."""
    a0, a1 = ha.verts[ha.edges[:, 0]], ha.verts[ha.edges[:, 1]]
    b0, b1 = hb.verts[hb.edges[:, 0]], hb.verts[hb.edges[:, 1]]
    na1, na2 = ha.normals[ha.edges[:, 2]], ha.normals[ha.edges[:, 3]]
    nb1, nb2 = -hb.normals[hb.edges[:, 2]], -hb.normals[hb.edges[:, 3]]
    gauss = _arcs_cross(na1[:, None], na2[:, None], nb1[None], nb2[None])  # (Ea, Eb)
    da, db = a1 - a0, b1 - b0
    ax = jnp.cross(da[:, None], db[None])
    sq = jnp.sum(ax * ax, -1)
    ok = gauss & (sq > 1e-12 * jnp.sum(da * da, -1)[:, None] * jnp.sum(db * db, -1)[None])
    ax = ax / jnp.sqrt(jnp.where(ok, sq, 1.0))[..., None]
    # orient away from A: the axis lies between A's two face normals of the edge
    sgn = jnp.where(jnp.sum(ax * (na1 + na2)[:, None], -1) >= 0.0, 1.0, -1.0)
    ax = ax * sgn[..., None]
    sep = jnp.sum(ax * (b0[None] - a0[:, None]), -1)
    return sep.reshape(-1), ax.reshape(-1, 3), ok.reshape(-1)


def _pad_cols(faces, p):
    return jnp.concatenate([faces, jnp.repeat(faces[:, -1:], p - faces.shape[1], axis=1)], axis=1)


def _candidates(ref_poly, n, offset, inc_poly, m, inc_offset, tol):
    """Clipping candidates: incident-surface points ``(k, 3)``, distances along ``n`` and validity."""
    dist_a = inc_poly @ n - offset
    ok_a = jnp.all(polygon_sides(ref_poly, n, inc_poly) >= -tol, axis=-1)
    side_b = polygon_sides(inc_poly, n, ref_poly)
    ok_b = jnp.all(side_b >= -tol, axis=-1) | jnp.all(side_b <= tol, axis=-1)
    mn = jnp.dot(m, n)
    good_mn = mn < -1e-6
    t_b = (inc_offset - ref_poly @ m) / jnp.where(good_mn, mn, -1.0)
    pts_b = ref_poly + t_b[:, None] * n
    ok_b = ok_b & good_mn
    # incident edge k (p0 → p1) crossing reference side plane j within reference edge j
    p0, p1 = inc_poly, jnp.roll(inc_poly, -1, axis=0)
    r0, r1 = ref_poly, jnp.roll(ref_poly, -1, axis=0)
    e = r1 - r0
    w = jnp.cross(n, e)  # inward normal of side j (CCW about n)
    f0 = jnp.einsum("jk,ijk->ij", w, p0[:, None] - r0[None])
    f1 = jnp.einsum("jk,ijk->ij", w, p1[:, None] - r0[None])
    den = f0 - f1
    good = jnp.abs(den) > tol
    lam = f0 / jnp.where(good, den, 1.0)
    pts_c = p0[:, None] + lam[..., None] * (p1 - p0)[:, None]
    ee = jnp.sum(e * e, -1)
    mu = jnp.einsum("ijk,jk->ij", pts_c - r0[None], e) / jnp.where(ee > 0.0, ee, 1.0)
    slack = 1e3 * float(jnp.finfo(n.dtype).eps)
    ok_c = good & (lam >= 0.0) & (lam <= 1.0) & (mu >= -slack) & (mu <= 1.0 + slack) & (ee[None] > 0.0)
    pts_c = pts_c.reshape(-1, 3)
    pts = jnp.concatenate([inc_poly, pts_b, pts_c])
    dist = jnp.concatenate([dist_a, t_b, pts_c @ n - offset])
    return pts, dist, jnp.concatenate([ok_a, ok_b, ok_c.reshape(-1)])


def spread_points(pts: jnp.ndarray, dist: jnp.ndarray, ok: jnp.ndarray, k: int, merge) -> tuple[jnp.ndarray, ...]:
    """Indices ``(k,)`` and validity ``(k,)`` of ``k`` spread candidates (step 4 of the module docstring).

    Args:
        pts: ``(m, 3)`` candidate points [m].
        dist: ``(m,)`` their distances [m] (negative = penetrating).
        ok: ``(m,)`` which candidates are real.
        k: Number of slots (static).
        merge: Radius [m] under which a candidate duplicates a chosen one (its slot is invalid).
    """
    big = jnp.asarray(jnp.finfo(dist.dtype).max, dist.dtype)
    first = jnp.argmin(jnp.where(ok, dist, big))
    span = jnp.max(jnp.where(ok[:, None], jnp.abs(pts - pts[first]), 0.0))
    deep = ok & (dist <= jnp.maximum(dist[first], 0.0))
    bonus = jnp.where(deep, 16.0 * span * span + 1.0, 0.0)
    d2 = jnp.sum((pts - pts[first]) ** 2, -1)
    idx, valid = [first], [jnp.any(ok)]
    taken = jnp.zeros(pts.shape[0], bool).at[first].set(True)
    for _ in range(k - 1):
        score = jnp.where(ok & ~taken, d2 + bonus, -1.0)
        j = jnp.argmax(score)
        idx.append(j)
        valid.append(ok[j] & ~taken[j] & (d2[j] > merge * merge))
        taken = taken.at[j].set(True)
        d2 = jnp.minimum(d2, jnp.sum((pts - pts[j]) ** 2, -1))
    return jnp.stack(idx), jnp.stack(valid)


def _face_manifold(ha: Hull, hb: Hull, best: jnp.ndarray, n_ab: jnp.ndarray, size, k: int = MAX_POINTS) -> NarrowResult:
    fa = ha.normals.shape[0]
    ref_is_a = best < fa
    p = max(ha.faces.shape[1], hb.faces.shape[1])
    fa_idx, fb_idx = jnp.minimum(best, fa - 1), jnp.maximum(best - fa, 0)
    n = jnp.where(ref_is_a, ha.normals[fa_idx], hb.normals[fb_idx])  # outward of the reference hull
    offset = jnp.where(ref_is_a, ha.offsets[fa_idx], hb.offsets[fb_idx])
    ref_poly = jnp.where(ref_is_a, ha.verts[_pad_cols(ha.faces, p)[fa_idx]], hb.verts[_pad_cols(hb.faces, p)[fb_idx]])
    ia = jnp.argmin(ha.normals @ n)
    ib = jnp.argmin(hb.normals @ n)
    m = jnp.where(ref_is_a, hb.normals[ib], ha.normals[ia])
    inc_offset = jnp.where(ref_is_a, hb.offsets[ib], ha.offsets[ia])
    inc_poly = jnp.where(ref_is_a, hb.verts[_pad_cols(hb.faces, p)[ib]], ha.verts[_pad_cols(ha.faces, p)[ia]])
    eps = float(jnp.finfo(n.dtype).eps)
    pts, dist, ok = _candidates(ref_poly, n, offset, inc_poly, m, inc_offset, 1e3 * eps * size * size)
    near = jnp.argmin(inc_poly @ n)
    pts = jnp.concatenate([pts, inc_poly[near][None]])
    dist = jnp.concatenate([dist, (inc_poly[near] @ n - offset)[None]])
    ok = jnp.concatenate([ok, ~jnp.any(ok)[None]])
    idx, valid = spread_points(pts, dist, ok, k, max(1e3 * eps, 1e-6) * size)
    mid = pts[idx] - 0.5 * dist[idx, None] * n
    return NarrowResult(dist[idx], mid, jnp.broadcast_to(n_ab, (k, 3)), valid)


def hull_hull(ha: Hull, hb: Hull, slots: int = MAX_POINTS) -> NarrowResult:
    """Contacts between two world-frame convex hulls (see the module docstring).

    Args:
        ha: Shape A's hull in the world frame (:func:`~jaxart.collision.hull_geometry.world_hull`).
        hb: Shape B's hull in the world frame.
        slots: Contact slots (static; face contacts keep that many spread points).

    Returns:
        A :class:`NarrowResult` with ``slots`` slots whose normals point from A to B.
    """
    sep_e, axes_e, ok_e = _edge_seps(ha, hb)
    big = jnp.asarray(jnp.finfo(sep_e.dtype).max, sep_e.dtype)
    be = jnp.argmax(jnp.where(ok_e, sep_e, -big))
    eb = hb.edges.shape[0]
    i, j = be // eb, be % eb
    edge_a = (ha.verts[ha.edges[i, 0]], ha.verts[ha.edges[i, 1]])
    edge_b = (hb.verts[hb.edges[j, 0]], hb.verts[hb.edges[j, 1]])
    return _face_or_edge(ha, hb, jnp.where(ok_e[be], sep_e[be], -big), axes_e[be], edge_a, edge_b, slots)


def hull_box(ha: Hull, hb: Hull, rot_b: jnp.ndarray, half_b: jnp.ndarray, slots: int = MAX_POINTS) -> NarrowResult:
    """:func:`hull_hull` for a box B, whose edge axes come from its three directions and support function.

    The edge axes are every edge of A crossed with each box axis, in both orientations
    (``3 · 2 · E_a`` axes instead of ``E_a · 12`` Gauss-map tests); the separation along an axis is
    evaluated with the box's closed-form support, and an axis counts only when its edge of A lies on
    A's support along it (parallel edges of A give the same axis).

    Args:
        ha: Shape A's hull.
        hb: The box as a hull in the same frame (:func:`~jaxart.collision.hull_geometry.box_hull` placed
            with :func:`~jaxart.collision.hull_geometry.world_hull`).
        rot_b: ``(3, 3)`` the box's rotation in that frame (columns: its axes).
        half_b: ``(3,)`` its half extents [m].
        slots: Contact slots (static; face contacts keep that many spread points).

    Returns:
        A :class:`NarrowResult` with ``slots`` slots whose normals point from A to B.
    """
    dt = ha.verts.dtype
    a0, a1 = ha.verts[ha.edges[:, 0]], ha.verts[ha.edges[:, 1]]
    ax = jnp.cross((a1 - a0)[:, None, :], rot_b.T[None, :, :]).reshape(-1, 3)  # (3 E_a, 3): edge i, box axis k
    sq = jnp.sum(ax * ax, -1)
    ok = sq > 1e-12 * jnp.repeat(jnp.sum((a1 - a0) ** 2, -1), 3)
    ax = ax / jnp.sqrt(jnp.where(ok, sq, 1.0))[:, None]
    ax = jnp.concatenate([ax, -ax])
    centre = jnp.mean(hb.verts, axis=0)
    top_a = jnp.max(jnp.where(ha.vmask[None, :], ax @ ha.verts.T, -jnp.finfo(dt).max), axis=1)
    sep = ax @ centre - jnp.abs(ax @ rot_b) @ half_b - top_a
    edge_i = jnp.tile(jnp.repeat(jnp.arange(a0.shape[0]), 3), 2)
    size = jnp.max(jnp.abs(ha.verts - ha.verts[0])) + jnp.sum(half_b)
    on_support = jnp.sum(ax * a0[edge_i], -1) >= top_a - 1e3 * float(jnp.finfo(dt).eps) * size
    ok = jnp.concatenate([ok, ok]) & on_support
    big = jnp.asarray(jnp.finfo(dt).max, dt)
    be = jnp.argmax(jnp.where(ok, sep, -big))
    u, k = ax[be], be % 3
    side = -jnp.sign(u @ rot_b) * half_b  # the box edge along axis k that supports -u
    mid_b = centre + rot_b @ side.at[k].set(0.0)
    edge_b = (mid_b - half_b[k] * rot_b[:, k], mid_b + half_b[k] * rot_b[:, k])
    edge_a = (a0[edge_i[be]], a1[edge_i[be]])
    return _face_or_edge(ha, hb, jnp.where(ok[be], sep[be], -big), u, edge_a, edge_b, slots)


def _face_or_edge(ha: Hull, hb: Hull, sep_e, axis_e, edge_a, edge_b, k: int = MAX_POINTS) -> NarrowResult:
    """The face manifold of the best face axis, or one contact of the best edge pair where that separates more."""
    sep_a, sep_b = _face_seps(ha, hb)
    sep_f = jnp.concatenate([sep_a, sep_b])
    axes_f = jnp.concatenate([ha.normals, -hb.normals])
    best = jnp.argmax(sep_f)
    size = jnp.max(jnp.abs(ha.verts - ha.verts[0])) + jnp.max(jnp.abs(hb.verts - hb.verts[0]))
    use_edge = sep_e > sep_f[best] + EDGE_BIAS * (size + jnp.abs(sep_f[best]))
    face_res = _face_manifold(ha, hb, best, axes_f[best], size, k)
    (a0, a1), (b0, b1) = edge_a, edge_b
    s, t = segment_segment(a0, a1, b0, b1)
    mid = 0.5 * (a0 + s * (a1 - a0) + b0 + t * (b1 - b0))
    edge_res = NarrowResult(jnp.full((k,), sep_e), jnp.broadcast_to(mid, (k, 3)), jnp.broadcast_to(axis_e, (k, 3)),
                            jnp.arange(k) == 0)
    return NarrowResult(*(jnp.where(use_edge, e, f) for e, f in zip(edge_res, face_res, strict=True)))
