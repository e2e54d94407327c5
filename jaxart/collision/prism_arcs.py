"""The Gauss-map arcs of a prism's edges and a one-dimensional minimum over them.

A prism edge between faces with unit normals ``n1`` and ``n2`` supports the prism along every axis
``u(t) = cos t · n1 + sin t · w`` for ``t ∈ [0, span]``, where ``w`` is the unit component of ``n2``
orthogonal to ``n1`` and ``span = arccos(n1 · n2)``; those axes are perpendicular to the edge. Against a
smooth convex shape the best separating axis of an edge contact lies on that arc, where
``g(t) = h_P(u) + h_S(-u)`` (support functions) is smallest. :func:`arc_minimum` finds it by sampling then
safeguarded Newton steps on ``t`` with the caller's closed-form derivatives.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from jaxart.collision.geometry import unit
from jaxart.collision.hull_geometry import Hull
from jaxart.collision.prism import PRISM_EDGES

#: Samples of each arc (end points excluded: those are face normals).
ARC_SAMPLES = 8

#: Safeguarded Newton steps on the arc angle after sampling.
ARC_NEWTON = 6


def edge_arcs(h: Hull) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """``(n1 (9, 3), w (9, 3), span (9,))`` of the prism's nine edges (see the module docstring)."""
    n1, n2 = h.normals[PRISM_EDGES[:, 2]], h.normals[PRISM_EDGES[:, 3]]
    cos_t = jnp.clip(jnp.sum(n1 * n2, -1), -1.0, 1.0)
    edge = h.verts[PRISM_EDGES[:, 1]] - h.verts[PRISM_EDGES[:, 0]]
    w, _ = unit(n2 - cos_t[:, None] * n1, jnp.cross(n1, edge), eps=1e-12)
    return n1, w, jnp.arccos(cos_t)


def arc_minimum(derivs: Callable, span: jnp.ndarray) -> jnp.ndarray:
    """Angles ``(9,)`` minimising ``g`` on each arc.

    Args:
        derivs: ``t (..., 9) -> (g, g', g'')`` elementwise per edge.
        span: ``(9,)`` arc lengths [rad].

    Returns:
        The best sample refined by :data:`ARC_NEWTON` Newton steps, each clamped to one sample spacing
        (a gradient step of that length where ``g'' <= 0``) and to the arc.
    """
    frac = (jnp.arange(ARC_SAMPLES, dtype=span.dtype) + 0.5) / ARC_SAMPLES
    ts = span[None, :] * frac[:, None]
    t = ts[jnp.argmin(derivs(ts)[0], axis=0), jnp.arange(span.shape[0])]
    step_max = span / ARC_SAMPLES
    for _ in range(ARC_NEWTON):
        _, g1, g2 = derivs(t)
        newton = -g1 / jnp.where(g2 > 0.0, g2, 1.0)
        step = jnp.where(g2 > 0.0, jnp.clip(newton, -step_max, step_max), -jnp.sign(g1) * step_max)
        t = jnp.clip(t + step, 0.0, span)
    return t
