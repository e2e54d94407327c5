"""Candidate-feature helpers for vertex/feature-based narrow phases (meshes, cylinders)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.collision.geometry import NarrowResult, dedup, frame, keep_deepest

#: Contact slots kept by feature-based pairs (box–mesh, mesh–mesh, cylinder–{box, cylinder, mesh}).
MAX_POINTS = 8


def vertices_against(pts_world, valid, x_other, closest, sign) -> NarrowResult:
    """Contacts of world points ``(m, 3)`` on shape P against shape Q at pose ``x_other``.

    Args:
        pts_world: Candidate points of P (vertices, rim points).
        valid: ``(m,)`` which candidates are real.
        x_other: Q's world transform.
        closest: Q's local ``point -> (surface point, outward normal, signed distance)``.
        sign: +1 if P is shape A of the pair (normal = −Q's normal), −1 if P is shape B.
    """
    p, rot = frame(x_other)
    surf, n_local, dist = jax.vmap(closest)((pts_world - p) @ rot)
    surf_w = p + surf @ rot.T
    n_q = n_local @ rot.T  # outward normal of Q
    normal = -sign * n_q
    return NarrowResult(dist, 0.5 * (pts_world + surf_w), normal, valid)


def box_corners(x, s):
    """The eight world corners ``(8, 3)`` of box ``(x, s)``."""
    c, rot = frame(x)
    signs = jnp.array([[i, j, k] for i in (-1.0, 1.0) for j in (-1.0, 1.0) for k in (-1.0, 1.0)], dtype=x.dtype)
    return c + (signs * s) @ rot.T


def merge_deepest(res: NarrowResult, size) -> NarrowResult:
    """Keep the deepest candidates, merge near-coincident ones, return ``MAX_POINTS`` slots."""
    res = keep_deepest(res, min(4 * MAX_POINTS, res.dist.shape[0]))  # bounds the O(m²) merge
    eps = float(jnp.finfo(res.dist.dtype).eps)
    ok = dedup(res.point, res.valid, max(1e3 * eps, 1e-6) * size)
    return keep_deepest(res._replace(valid=ok), min(MAX_POINTS, res.dist.shape[0]))
