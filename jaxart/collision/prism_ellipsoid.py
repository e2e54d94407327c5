"""Ellipsoid against one height-field prism: the exact separating-axis penetration over a complete axis set.

As for the cylinder (:mod:`jaxart.collision.prism_cylinder`), the signed distance is the largest
separation ``sep(u) = -h_P(u) - h_E(-u)`` over unit axes ``u`` (prism → ellipsoid), with the ellipsoid's
support ``h_E(w) = c·w + |A w|``, ``A = diag(radii) Rᵀ`` (centre ``c``, rotation ``R``). The Minkowski
difference's smooth patches come in three families, each with a candidate axis:

* a prism face against the ellipsoid's deepest point: the five face normals;
* a prism edge against the ellipsoid: the best axis on the edge's Gauss arc
  (:func:`~jaxart.collision.prism_arcs.arc_minimum`, closed-form derivatives of ``g = h_P + h_E(-u)``);
* a prism vertex against the ellipsoid's surface: minus the ellipsoid's normal at the surface point
  nearest the vertex, from the root ``t`` of ``Σ (r_i p_i / (r_i² + t))² = 1`` (vertex ``p`` in the
  ellipsoid frame) found by :data:`VERTEX_BISECTIONS` bisection steps on its bracket
  ``(-min r_i², |r ∘ p|]``.

Every candidate is evaluated with the exact support functions (a lower bound of the signed distance);
the largest is exact for penetration and, for separated solids, a lower bound that is exact when a face,
an edge or a vertex is closest. The witness point is the ellipsoid's (unique) support point along ``-u``,
moved half the distance back along the normal. Gradients: the axis is held; ``sep`` at the held axis is
differentiated through both support functions (envelope theorem).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jaxart.collision.geometry import NarrowResult, unit
from jaxart.collision.hull_geometry import Hull
from jaxart.collision.prism import PRISM_EDGES
from jaxart.collision.prism_arcs import arc_minimum, edge_arcs

#: Bisection steps of the vertex–surface root (the bracket shrinks by 2⁻⁶⁰).
VERTEX_BISECTIONS = 60


def _norm(v):
    """Gradient-safe ``|v|`` over the last axis."""
    sq = jnp.sum(v * v, -1)
    pos = sq > 1e-30
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1.0)), 0.0)


def _sep(h: Hull, c, amat, u):
    """Separations ``(...,)`` along unit axes ``u (..., 3)`` (prism → ellipsoid); ``amat = diag(radii) Rᵀ``."""
    return -jnp.max(u @ h.verts.T, axis=-1) + u @ c - _norm(u @ amat.T)


def _arc_axes(h: Hull, c, amat):
    """Best axis ``(9, 3)`` on each prism edge's Gauss arc."""
    n1, w, span = edge_arcs(h)
    k = h.verts[PRISM_EDGES[:, 0]] - c
    p1, q1 = jnp.sum(n1 * k, -1), jnp.sum(w * k, -1)
    a1, aw = n1 @ amat.T, w @ amat.T  # (9, 3)

    def g_derivs(t):
        ct, st = jnp.cos(t)[..., None], jnp.sin(t)[..., None]
        au, au1 = ct * a1 + st * aw, -st * a1 + ct * aw
        n = jnp.maximum(_norm(au), 1e-30)
        dot = jnp.sum(au * au1, -1)
        f, f1 = p1 * ct[..., 0] + q1 * st[..., 0], -p1 * st[..., 0] + q1 * ct[..., 0]
        g2 = -f + (jnp.sum(au1 * au1, -1) - n * n) / n - dot * dot / n**3
        return f + n, f1 + dot / n, g2

    t = arc_minimum(g_derivs, span)
    return jnp.cos(t)[:, None] * n1 + jnp.sin(t)[:, None] * w


def _vertex_axes(h: Hull, c, rot, radii):
    """Minus the ellipsoid's unit normal ``(6, 3)`` at the surface point nearest each prism vertex."""
    p = (h.verts - c) @ rot  # (6, 3) ellipsoid frame
    r2 = radii * radii
    lo = jnp.broadcast_to(-jnp.min(r2), (6,))
    hi = jnp.maximum(_norm(radii * p), 0.0)

    def f(t):
        return jnp.sum((radii * p / (r2 + t[:, None])) ** 2, -1) - 1.0

    def bisect(_, bounds):
        a, b = bounds
        m = 0.5 * (a + b)
        above = f(m) > 0.0  # f decreases in t: the root lies above m
        return jnp.where(above, m, a), jnp.where(above, b, m)

    a, b = lax.fori_loop(0, VERTEX_BISECTIONS, bisect, (lo, hi))
    t = lax.stop_gradient(0.5 * (a + b))
    n_local = p / jnp.maximum(r2 + t[:, None], 1e-30 * jnp.max(r2))
    n, _ = unit(n_local @ rot.T, jnp.broadcast_to(rot[:, 2], (6, 3)), eps=1e-30)
    return -n


def ellipsoid_prism(c: jnp.ndarray, rot: jnp.ndarray, radii: jnp.ndarray, h: Hull) -> NarrowResult:
    """One contact between an ellipsoid and a prism (both in the height-field frame).

    Args:
        c: ``(3,)`` ellipsoid centre [m].
        rot: ``(3, 3)`` ellipsoid rotation (columns: its axes).
        radii: ``(3,)`` semi-axes [m].
        h: The prism (:func:`~jaxart.collision.prism.prism_hull`).

    Returns:
        A one-slot :class:`NarrowResult` (normal from the prism toward the ellipsoid).
    """
    amat = radii[:, None] * rot.T
    axes = jnp.concatenate([h.normals, _arc_axes(h, c, amat), _vertex_axes(h, c, rot, radii)])
    best = jnp.argmax(lax.stop_gradient(_sep(h, c, amat, axes)))
    u = lax.stop_gradient(axes[best])
    dist = _sep(h, c, amat, u)
    au = amat @ u
    q_e = c - amat.T @ au / jnp.maximum(_norm(au), 1e-30)  # the ellipsoid's support point along -u
    return NarrowResult(dist[None], (q_e - 0.5 * dist * u)[None], u[None], jnp.ones((1,), bool))

