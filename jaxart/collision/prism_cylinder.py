"""Cylinder against one height-field prism: the exact separating-axis penetration over a complete axis set.

The signed distance of two convex solids is the largest separation over unit axes ``u`` (prism → cylinder):
``sep(u) = -h_P(u) - h_C(-u)`` with support functions ``h_P`` (the prism's six vertices) and
``h_C(w) = c·w + l |a·w| + r sqrt(|w|² - (a·w)²)`` (centre ``c``, unit axis ``a``, radius ``r``, half
length ``l``). For penetrating solids the best axis is the normal of a smooth two-dimensional patch of
the Minkowski difference, and those patches come in five families, each with a candidate axis here:

* a prism face against the cylinder's deepest point: the five face normals;
* a prism vertex against a cap: ``±a``;
* a prism edge against a barrel line: edge × ``a`` (both orientations);
* a prism vertex against the barrel: the radial direction from the vertex to the axis;
* a prism edge against a rim circle: the axes perpendicular to the edge between its two faces' normals
  (the edge's arc on the Gauss map) form a one-parameter family, searched by
  :func:`~jaxart.collision.prism_arcs.arc_minimum` (samples, then Newton steps on the arc angle with
  closed-form first and second derivatives).

Every candidate's ``sep`` is evaluated with the exact support functions, so each is a lower bound of the
signed distance and the largest is exact for penetration (up to the arc refinement's convergence, far
below 1e-9 m). For separated solids the vertex–rim directions are added; the result is then a lower
bound of the distance (exact when a face, an edge pair or a vertex–rim pair is closest), as for the other
polytope pairs.

Witness point: the cylinder's support set along ``-u`` (a rim point, a barrel line or a cap disc) is
reduced to its point nearest the prism's support set's centroid along ``u`` (a vertex, an edge or a face;
an edge against a barrel line: the line's point closest to the edge), and the contact point lies half the
distance back along the normal. Gradients: the axis is held (``stop_gradient``); ``sep`` at the held axis
is differentiated through both support functions (exact to first order by the envelope theorem).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.collision.geometry import NarrowResult, segment_segment, unit
from jaxart.collision.hull_geometry import Hull
from jaxart.collision.prism import PRISM_EDGES
from jaxart.collision.prism_arcs import arc_minimum, edge_arcs

#: Depth spread [relative to the pair's size] within which support points count as one support set (a face,
#: an edge, a cap disc, a barrel line) for the contact point.
SUPPORT_TOL = 1e-6


def _cyl_support_value(c, a, r, hl, w):
    """``h_C(w)`` for directions ``w (..., 3)``."""
    aw = w @ a
    rad2 = jnp.sum(w * w, -1) - aw * aw
    pos = rad2 > 1e-30  # double where: a finite gradient along the axis
    radial = jnp.where(pos, jnp.sqrt(jnp.where(pos, rad2, 1.0)), 0.0)
    return w @ c + hl * jnp.abs(aw) + r * radial


def _sep(h: Hull, c, a, r, hl, u):
    """Separations ``(...,)`` along unit axes ``u (..., 3)`` (prism → cylinder)."""
    top = jnp.max(u @ h.verts.T, axis=-1)
    return -top - _cyl_support_value(c, a, r, hl, -u)


def _arc_axes(h: Hull, c, a, r, hl):
    """Best axis ``(9, 3)`` on each prism edge's Gauss arc (rim patches)."""
    n1, w, span = edge_arcs(h)
    k = h.verts[PRISM_EDGES[:, 0]] - c  # edge point relative to the centre
    p1, q1 = jnp.sum(n1 * k, -1), jnp.sum(w * k, -1)
    pa, qa = n1 @ a, w @ a

    def g_derivs(t):
        """``g = h_P(u) + h_C(-u)`` on the arc (``h_P`` = the edge's support) and its first two derivatives."""
        ct, st = jnp.cos(t), jnp.sin(t)
        f, f1 = p1 * ct + q1 * st, -p1 * st + q1 * ct
        b, b1 = pa * ct + qa * st, -pa * st + qa * ct
        s = jnp.where(b >= 0.0, 1.0, -1.0)
        rho = jnp.sqrt(jnp.maximum(1.0 - b * b, 1e-30))
        g = f + hl * s * b + r * rho
        g1 = f1 + hl * s * b1 - r * b * b1 / rho
        g2 = -f - hl * s * b - r * ((b1 * b1 - b * b) / rho + b * b * b1 * b1 / rho**3)
        return g, g1, g2

    t = arc_minimum(g_derivs, span)
    return jnp.cos(t)[:, None] * n1 + jnp.sin(t)[:, None] * w


def _candidate_axes(h: Hull, c, a, r, hl):
    """Unit candidate axes ``(m, 3)`` (prism → cylinder) and their validity (see the module docstring)."""
    fallback = jnp.broadcast_to(a, (6, 3))
    e = h.verts[PRISM_EDGES[:, 1]] - h.verts[PRISM_EDGES[:, 0]]
    ex, ex_len = unit(jnp.cross(e, a), jnp.broadcast_to(a, (9, 3)), eps=1e-12)
    ok_ex = ex_len > 1e-6 * jnp.sqrt(jnp.sum(e * e, -1))
    rel = c - h.verts
    perp = rel - (rel @ a)[:, None] * a
    radial, rad_len = unit(perp, fallback, eps=1e-12)
    rims = []
    for side in (1.0, -1.0):  # vertex → nearest rim point (separated solids)
        centre = c + side * hl * a
        out, _ = unit(-perp, fallback, eps=1e-12)
        rims.append(unit(centre - r * out - h.verts, fallback, eps=1e-12)[0])
    axes = jnp.concatenate([h.normals, a[None], -a[None], ex, -ex, radial, *rims, _arc_axes(h, c, a, r, hl)])
    ok = jnp.concatenate([jnp.ones(7, bool), ok_ex, ok_ex, rad_len > 1e-12, jnp.ones(21, bool)])
    return axes, ok


def _witness(h: Hull, c, a, r, hl, u, dist):
    """Contact point: the cylinder's support set along ``-u`` nearest the prism's support centroid along ``u``."""
    dt = h.verts.dtype
    proj = h.verts @ u
    size = jnp.max(jnp.abs(h.verts - h.verts[0])) + r + hl
    tol = SUPPORT_TOL * size
    on_top = proj >= jnp.max(proj) - tol
    q_p = jnp.sum(jnp.where(on_top[:, None], h.verts, 0.0), 0) / jnp.sum(on_top)
    au = jnp.dot(a, u)
    out, out_len = unit(-(u - au * a), jnp.zeros(3, dt), eps=1e-12)  # cylinder's radial support direction
    cap = r * out_len < tol  # the cap's depth spread along u
    barrel = hl * jnp.abs(au) < tol  # the barrel line's
    side = jnp.where(au >= 0.0, -1.0, 1.0)
    # cap disc: the point of the disc nearest q_p
    cap_c = c + side * hl * a
    off = (q_p - cap_c) - jnp.dot(q_p - cap_c, a) * a
    off_dir, off_len = unit(off, jnp.zeros(3, dt), eps=1e-12)
    on_cap = cap_c + jnp.minimum(off_len, r) * off_dir
    # barrel line: the point of the line nearest q_p
    line_c = c + r * out
    on_line = line_c + jnp.clip(jnp.dot(q_p - line_c, a), -hl, hl) * a
    # an edge crossing the barrel line: the line's point closest to the edge
    top2 = jnp.argsort(-proj)[:2]
    _, t_line = segment_segment(h.verts[top2[0]], h.verts[top2[1]], line_c - hl * a, line_c + hl * a)
    on_line = jnp.where(jnp.sum(on_top) == 2, line_c + (2.0 * t_line - 1.0) * hl * a, on_line)
    rim = c + side * hl * a + r * out
    q_c = jnp.where(cap, on_cap, jnp.where(barrel, on_line, rim))
    return q_c - 0.5 * dist * u


def cylinder_prism(c: jnp.ndarray, a: jnp.ndarray, r, hl, h: Hull) -> NarrowResult:
    """One contact between a cylinder and a prism (both in the height-field frame).

    Args:
        c: ``(3,)`` cylinder centre [m].
        a: ``(3,)`` unit cylinder axis.
        r: Scalar radius [m].
        hl: Scalar half length [m].
        h: The prism (:func:`~jaxart.collision.prism.prism_hull`).

    Returns:
        A one-slot :class:`NarrowResult` (normal from the prism toward the cylinder).
    """
    axes, ok = _candidate_axes(h, c, a, r, hl)
    sep = _sep(h, c, a, r, hl, axes)
    big = jnp.asarray(jnp.finfo(sep.dtype).max, sep.dtype)
    best = jnp.argmax(jnp.where(ok, jax.lax.stop_gradient(sep), -big))
    u = jax.lax.stop_gradient(axes[best])
    dist = _sep(h, c, a, r, hl, u)
    point = _witness(h, c, a, r, hl, u, dist)
    return NarrowResult(dist[None], point[None], u[None], jnp.ones((1,), bool))
