"""Signed distance of two convex shapes from their support functions (fixed-iteration EPA).

The signed separation of convex ``A`` and ``B`` along a unit direction ``u`` (from A toward B) is
``-g(u)`` with ``g(u) = h_A(u) + h_B(-u)`` (``h`` = support function); the true signed distance is
``-min_u g(u)`` for separated and penetrating shapes alike (the minimising ``u`` is the contact
normal: the closest-point direction, or the minimum translation direction).

Solver: the expanding-polytope algorithm (EPA) on the Minkowski difference ``A − B`` inflated by a
ball of radius ``ρ = |c_A − c_B| + (r_A + r_B) / 4`` (centres, bounding radii). The inflation makes
the origin an interior point in every configuration, so one algorithm covers both cases with no
GJK phase: ``min_u g(u) = min_u h_{D}(u) − ρ`` for ``D = (A − B) ⊕ B_ρ``. The polytope starts as
the icosahedron of the support points in its 12 vertex directions and grows by one support point
per iteration (fixed count :data:`EPA_ITERATIONS`; converged runs freeze); faces live in fixed
arrays, the horizon of visible faces is found by matching reversed edges.

Differentiability: the search (directions, faces, barycentric weights) runs under
``stop_gradient``. The result is recomputed from the found normal ``u`` and witness points held
as material points of each shape (their shape-frame coordinates are fixed), so that
``d(separation)/d(pose) = u · (v_B − v_A)`` at the witnesses — exact to first order within a
contact configuration, including face contacts where the support point is not unique. Shape
parameters (radii, half extents, vertices) enter through ``g(u)`` at the fixed direction and the
fixed poses (envelope theorem; exact where the support is unique or linear in the parameters).
The normal is held (zero gradient).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxart.collision.geometry import frame
from jaxart.collision.support import Convex

#: EPA iterations (support evaluations after the initial 12).
EPA_ITERATIONS = 24

#: Newton refinement steps of the EPA normal (see :func:`_newton`).
POLISH_ITERATIONS = 6

#: Finite-difference step [rad] of the Newton refinement.
_FD_STEP = 1e-3


def _icosahedron() -> tuple[np.ndarray, np.ndarray]:
    """Unit vertex directions ``(12, 3)`` and outward-wound faces ``(20, 3)`` of an icosahedron."""
    p = (1.0 + 5.0 ** 0.5) / 2.0
    v = np.array([[-1, p, 0], [1, p, 0], [-1, -p, 0], [1, -p, 0], [0, -1, p], [0, 1, p], [0, -1, -p], [0, 1, -p],
                  [p, 0, -1], [p, 0, 1], [-p, 0, -1], [-p, 0, 1]], float)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    faces = []
    for i in range(12):
        for j in range(i + 1, 12):
            for k in range(j + 1, 12):
                tri = (i, j, k)
                if all(np.dot(v[a], v[b]) > 0.4 for a, b in ((i, j), (j, k), (i, k))):
                    n = np.cross(v[j] - v[i], v[k] - v[i])
                    faces.append(tri if np.dot(n, v[i]) > 0 else (i, k, j))
    return v, np.array(faces, np.int32)


_ICO_V, _ICO_F = _icosahedron()


class ConvexContact(NamedTuple):
    """Result of :func:`signed_distance` for one pair.

    Attributes:
        dist: Scalar signed distance [m] (negative = penetration depth).
        normal: ``(3,)`` world unit normal from A toward B (held: zero gradient).
        point: ``(3,)`` world point midway between the witness points [m].
    """

    dist: jnp.ndarray
    normal: jnp.ndarray
    point: jnp.ndarray


class _Poly(NamedTuple):
    w: jnp.ndarray  # (NV, 3) Minkowski points
    pa: jnp.ndarray  # (NV, 3) support points of A
    pb: jnp.ndarray  # (NV, 3) support points of B
    faces: jnp.ndarray  # (NF, 3) int32 vertex indices, outward winding
    fvalid: jnp.ndarray  # (NF,)
    nv: jnp.ndarray  # int32 vertex count
    done: jnp.ndarray  # bool


def _face_planes(poly: _Poly):
    p0, p1, p2 = (poly.w[poly.faces[:, i]] for i in range(3))
    n = jnp.cross(p1 - p0, p2 - p0)
    ln = jnp.sqrt(jnp.sum(n * n, axis=-1))
    ok = poly.fvalid & (ln > 1e-30)
    n = n / jnp.where(ok, ln, 1.0)[:, None]
    big = jnp.asarray(jnp.finfo(p0.dtype).max, p0.dtype)
    return n, jnp.where(ok, jnp.sum(n * p0, axis=-1), big), p0


def _expand(poly: _Poly, supp: Callable, tol) -> _Poly:
    """One EPA step: add the support point of the closest face's normal, re-triangulate the hole."""
    nf = poly.faces.shape[0]
    n, dist, p0 = _face_planes(poly)
    f = jnp.argmin(dist)
    u = n[f]
    pa, pb, w = supp(u)
    full = poly.nv >= poly.w.shape[0]
    converged = (jnp.dot(u, w) - dist[f] <= tol) | full | poly.done
    visible = poly.fvalid & (jnp.sum(n * (w - p0), axis=-1) > tol)
    visible = visible.at[f].set(poly.fvalid[f])
    edges = jnp.stack([poly.faces[:, [0, 1]], poly.faces[:, [1, 2]], poly.faces[:, [2, 0]]], axis=1).reshape(-1, 2)
    evis = jnp.repeat(visible, 3)
    keep = jnp.repeat(poly.fvalid & ~visible, 3)
    twin = (edges[:, None, 0] == edges[None, :, 1]) & (edges[:, None, 1] == edges[None, :, 0])
    horizon = evis & jnp.any(twin & keep[None, :], axis=1)
    remaining = poly.fvalid & ~visible
    nh, nfree = jnp.sum(horizon), jnp.sum(~remaining)
    converged = converged | (nh > nfree) | (nh < 3)
    h_idx = jnp.nonzero(horizon, size=nf, fill_value=0)[0]
    slots = jnp.nonzero(~remaining, size=nf, fill_value=nf)[0]
    slots = jnp.where(jnp.arange(nf) < nh, slots, nf)  # out of range: dropped
    new = jnp.concatenate([edges[h_idx], jnp.broadcast_to(poly.nv, (nf, 1))], axis=1)
    faces = poly.faces.at[slots].set(new, mode="drop")
    fvalid = remaining.at[slots].set(True, mode="drop")
    grown = _Poly(poly.w.at[poly.nv].set(w, mode="drop"), poly.pa.at[poly.nv].set(pa, mode="drop"),
                  poly.pb.at[poly.nv].set(pb, mode="drop"), faces, fvalid, poly.nv + 1, poly.done)
    out = jax.tree_util.tree_map(lambda old, g: jnp.where(converged, old, g), poly, grown)
    return out._replace(done=converged)


def _search(a: Convex, b: Convex, iters: int):
    """EPA on the inflated Minkowski difference; returns ``(normal, witness on A, witness on B)``."""
    dt = a.center.dtype
    rho = jnp.sqrt(jnp.sum((a.center - b.center) ** 2)) + 0.25 * (a.radius + b.radius)
    scale = rho + a.radius + b.radius
    tol = max(100.0 * float(jnp.finfo(dt).eps), 1e-12) * scale

    def supp(u):
        pa, pb = a.support(u), b.support(-u)
        return pa, pb, pa - pb + rho * u

    dirs = jnp.asarray(_ICO_V, dt)
    pa0, pb0, w0 = jax.vmap(supp)(dirs)
    nv, nf = 12 + iters, 20 + 2 * iters + 8
    pad = jnp.zeros((nv - 12, 3), dt)
    faces = jnp.zeros((nf, 3), jnp.int32).at[:20].set(jnp.asarray(_ICO_F))
    poly = _Poly(jnp.concatenate([w0, pad]), jnp.concatenate([pa0, pad]), jnp.concatenate([pb0, pad]), faces,
                 jnp.arange(nf) < 20, jnp.asarray(12, jnp.int32), jnp.asarray(False))
    poly = lax.fori_loop(0, iters, lambda _, p: _expand(p, supp, tol), poly)
    n, dist, _ = _face_planes(poly)
    f = jnp.argmin(dist)
    u = n[f]
    tri = poly.faces[f]
    lam = _barycentric(dist[f] * u, poly.w[tri])
    return u, lam @ poly.pa[tri], lam @ poly.pb[tri]


def _barycentric(p, tri):
    """Barycentric coordinates of ``p`` (in the plane of ``tri (3, 3)``), clipped and renormalised."""
    e0, e1, ep = tri[1] - tri[0], tri[2] - tri[0], p - tri[0]
    d00, d01, d11 = jnp.dot(e0, e0), jnp.dot(e0, e1), jnp.dot(e1, e1)
    d20, d21 = jnp.dot(ep, e0), jnp.dot(ep, e1)
    den = d00 * d11 - d01 * d01
    ok = den > 1e-30
    v = (d11 * d20 - d01 * d21) / jnp.where(ok, den, 1.0)
    w = (d00 * d21 - d01 * d20) / jnp.where(ok, den, 1.0)
    lam = jnp.clip(jnp.stack([1.0 - v - w, v, w]), 0.0, 1.0)
    lam = jnp.where(ok, lam, jnp.array([1.0, 0.0, 0.0], p.dtype))
    return lam / jnp.sum(lam)


def _material(x: jnp.ndarray, p_world: jnp.ndarray) -> jnp.ndarray:
    """World position of the point of pose ``x`` that currently sits at ``p_world`` (held in the shape frame)."""
    c, rot = frame(x)
    c0, rot0 = frame(lax.stop_gradient(x))
    return c + rot @ (rot0.T @ (p_world - c0))


def _tangent_basis(u):
    """Two unit vectors ``(2, 3)`` orthogonal to ``u`` and to each other."""
    t = jnp.where(jnp.abs(u[0]) < 0.6, jnp.array([1.0, 0.0, 0.0], u.dtype), jnp.array([0.0, 1.0, 0.0], u.dtype))
    e1 = jnp.cross(u, t)
    e1 = e1 / jnp.sqrt(jnp.sum(e1 * e1))
    return jnp.stack([e1, jnp.cross(u, e1)])


def _newton(a: Convex, b: Convex, u0, axis, iters: int):
    """Refine a direction by safeguarded Newton steps on ``g(u)`` over the unit sphere.

    EPA converges slowly on curved shapes, where ``g`` is smooth and a few Newton steps reach full
    precision. Derivatives come from central differences of ``g`` on a stencil of step
    :data:`_FD_STEP` rad in tangent coordinates (cheap to compile, no autodiff through the support
    functions); the Hessian is shifted to be positive definite and the step is the best of the
    fractions 1, 1/2, 1/4, 1/8 and 0 (so ``g`` never increases; at kinks where EPA is already exact
    the zero step wins). ``axis`` (unit vector) restricts the search to the great circle
    ``u · axis = 0`` (edges, capsule and cylinder sides: kinks of ``g``), starting from the
    projection of ``u0``; ``None`` searches the whole sphere.
    """
    dt = u0.dtype
    h = jnp.asarray(_FD_STEP, dt)
    reg = 1e-3 * (a.radius + b.radius)
    circle = axis is not None
    if circle:
        p = u0 - jnp.dot(u0, axis) * axis
        pn = jnp.sqrt(jnp.sum(p * p))
        u0 = jnp.where(pn > 1e-9, p / jnp.where(pn > 1e-9, pn, 1.0), _tangent_basis(axis)[0])
    offsets = jnp.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1], [1, 1], [-1, -1]], dt)

    def step(_, u):
        basis = jnp.stack([jnp.cross(axis, u), jnp.zeros_like(u)]) if circle else _tangent_basis(u)

        def at(t):
            v = u + t @ basis
            return v / jnp.sqrt(jnp.sum(v * v))

        f = jax.vmap(lambda t: _g(a, b, at(t)))(h * offsets)
        grad = jnp.stack([f[1] - f[2], f[3] - f[4]]) / (2.0 * h)
        h11, h22 = (f[1] + f[2] - 2.0 * f[0]) / h**2, (f[3] + f[4] - 2.0 * f[0]) / h**2
        h12 = 0.5 * ((f[5] + f[6] - 2.0 * f[0]) / h**2 - h11 - h22)
        hess = jnp.array([[h11, h12], [h12, h22]])
        lo = jnp.min(jnp.linalg.eigvalsh(hess))
        hess = hess + jnp.maximum(0.0, reg - lo) * jnp.eye(2, dtype=dt)
        d = -jnp.linalg.solve(hess, grad)
        d = d * jnp.minimum(1.0, 0.2 / jnp.maximum(jnp.sqrt(jnp.sum(d * d)), 1e-30))
        fracs = jnp.array([0.0, 0.125, 0.25, 0.5, 1.0], dt)
        vals = jax.vmap(lambda fr: _g(a, b, at(fr * d)))(fracs)
        return at(fracs[jnp.argmin(vals)] * d)

    return lax.fori_loop(0, iters, step, u0)


def _g(a: Convex, b: Convex, u):
    """Overlap ``g(u) = h_A(u) + h_B(-u)`` (minus the signed separation along ``u``)."""
    return jnp.dot(u, a.support(u) - b.support(-u))


def _argmin_direction(a: Convex, b: Convex, cands):
    vals = jax.vmap(lambda v: _g(a, b, v))(cands)
    return cands[jnp.argmin(vals)]


def _edge_crosses(ka, kb, fallback):
    """Unit ``±(e_a × e_b)`` ``(2 m n, 3)`` of every edge-direction pair (degenerate pairs: ``fallback``)."""
    c = jnp.cross(ka[:, None, :], kb[None, :, :]).reshape(-1, 3)
    ln = jnp.sqrt(jnp.sum(c * c, axis=-1, keepdims=True))
    c = jnp.where(ln > 1e-9, c / jnp.where(ln > 1e-9, ln, 1.0), fallback)
    return jnp.concatenate([c, -c])


def _best_direction(a: Convex, b: Convex, iters: int):
    """The candidate direction of smallest ``g``.

    Candidates: EPA's normal and its Newton refinement; the face normals of both shapes (and, for
    vertex sets, the face spanned by the extreme vertices); the cross products of every pair of edge
    directions (with the face normals this is the separating-axis set, exact for two polytopes); then
    Newton searches along the great circle of every edge direction from the best so far (an edge
    against a curved surface).
    """
    u, wa, wb = _search(a, b, iters)
    best = _argmin_direction(a, b, jnp.concatenate([u[None], _newton(a, b, u, None, POLISH_ITERATIONS)[None],
                                                     a.face_normals(), -b.face_normals()]))
    ka, kb, extra = [a.kink_axes()], [b.kink_axes()], [best[None]]
    for shape, sign, k in ((a, 1.0, ka), (b, -1.0, kb)):
        if shape.features is not None:  # faces / edges of vertex sets, found near the current best
            n, e = shape.features(sign * best)
            extra.append(sign * n[None])
            k.append(e[None])
    ka, kb = jnp.concatenate(ka), jnp.concatenate(kb)
    if ka.shape[0] and kb.shape[0]:
        extra.append(_edge_crosses(ka, kb, best))
    best = _argmin_direction(a, b, jnp.concatenate(extra))
    axes = jnp.concatenate([ka, kb])
    if axes.shape[0]:
        arcs = jax.vmap(lambda e: _newton(a, b, best, e, POLISH_ITERATIONS))(axes)
        best = _argmin_direction(a, b, jnp.concatenate([best[None], arcs]))
    return best, wa, wb


def signed_distance(make_a: Callable, xa: jnp.ndarray, sa: jnp.ndarray, make_b: Callable, xb: jnp.ndarray,
                    sb: jnp.ndarray, iters: int = EPA_ITERATIONS) -> ConvexContact:
    """Signed distance, normal and contact point of two convex shapes (see the module docstring).

    Args:
        make_a: ``(pose (7,), params) -> Convex`` building shape A (e.g. :func:`support.ellipsoid`).
        xa: ``(7,)`` world pose of A.
        sa: A's shape parameters (passed to ``make_a``).
        make_b, xb, sb: The same for B.
        iters: EPA iterations (static).

    Returns:
        A :class:`ConvexContact`.
    """
    xa0, xb0, sa0, sb0 = (lax.stop_gradient(v) for v in (xa, xb, sa, sb))
    ca, cb = make_a(xa0, sa0), make_b(xb0, sb0)
    u, wa, wb = _best_direction(ca, cb, iters)
    u = lax.stop_gradient(u)

    def gap(s_a, s_b):  # -g(u) at the held poses
        return jnp.dot(u, make_b(xb0, s_b).support(-u) - make_a(xa0, s_a).support(u))

    d0 = gap(sa0, sb0)
    if ca.smooth:
        pa = ca.support(u)
        pb = pa + d0 * u
    elif cb.smooth:
        pb = cb.support(-u)
        pa = pb - d0 * u
    else:  # both may have flat features: EPA's witnesses fix the point within the contact patch
        mid = 0.5 * (wa + wb)
        pa, pb = mid - 0.5 * d0 * u, mid + 0.5 * d0 * u
    pa, pb = lax.stop_gradient(pa), lax.stop_gradient(pb)
    ma, mb = _material(xa, pa), _material(xb, pb)
    dist = jnp.dot(u, mb - ma) + (gap(sa, sb) - d0)
    return ConvexContact(dist, u, 0.5 * (ma + mb))
