"""Ellipsoid against one height-field prism: a closed form, a brute-force separating-axis oracle, gradients."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

from jaxart.collision.prism import prism_hull  # noqa: E402
from jaxart.collision.prism_ellipsoid import ellipsoid_prism  # noqa: E402

TRI = np.array([[-0.5, -0.5, 0.0], [0.5, -0.5, 0.1], [0.5, 0.5, 0.25]])  # counter-clockwise from above
Z_BASE = -0.3
N_TOP = np.cross(TRI[1] - TRI[0], TRI[2] - TRI[0]) / np.linalg.norm(np.cross(TRI[1] - TRI[0], TRI[2] - TRI[0]))
RADII = np.array([0.09, 0.16, 0.11])
VERTS = np.concatenate([TRI, TRI * [1, 1, 0] + [0, 0, Z_BASE]])


@jax.jit
def contact(c, rot):
    res = ellipsoid_prism(c, rot, jnp.asarray(RADII), prism_hull(jnp.asarray(TRI), Z_BASE))
    return res.dist[0], res.normal[0], res.point[0]


def oracle(c, rot):
    """max over unit axes of the exact separation: dense sampling, then Nelder–Mead from the best samples."""
    amat = RADII[:, None] * rot.T

    def sep(u):
        u = u / np.linalg.norm(u, axis=-1, keepdims=True)
        return -np.max(u @ VERTS.T, axis=-1) + u @ c - np.linalg.norm(u @ amat.T, axis=-1)

    us = np.random.default_rng(0).normal(size=(20000, 3))
    starts = us[np.argsort(-sep(us))[:5]]
    opts = {"xatol": 1e-12, "fatol": 1e-14, "maxiter": 4000}
    return max(-minimize(lambda u: -sep(u), s, method="Nelder-Mead", options=opts).fun for s in starts)


def test_axis_aligned_ellipsoid_over_the_top_face():
    """The deepest point along the face normal: depth = plane distance − |diag(radii) Rᵀ n| (closed form)."""
    rot = Rotation.from_rotvec([0.2, -0.4, 0.3]).as_matrix()
    c = TRI.mean(axis=0) + 0.1 * N_TOP
    dist, normal, point = contact(jnp.asarray(c), jnp.asarray(rot))
    reach = np.linalg.norm(RADII * (rot.T @ N_TOP))
    assert abs(float(dist) - (0.1 - reach)) < 1e-12
    np.testing.assert_allclose(normal, N_TOP, atol=1e-12)
    deepest = c - rot @ (RADII**2 * (rot.T @ N_TOP)) / reach
    np.testing.assert_allclose(point, deepest - 0.5 * float(dist) * N_TOP, atol=1e-12)


def test_matches_brute_force_separating_axis_maximum():
    """Ellipsoids over corners and edges (vertex and edge patches): exact against a dense search over all axes."""
    rng = np.random.default_rng(7)
    n_pen, n_curved = 0, 0
    faces = np.asarray(prism_hull(jnp.asarray(TRI), Z_BASE).normals)
    for k in range(12):
        rot = Rotation.from_rotvec(rng.normal(size=3)).as_matrix()
        i = k % 3
        anchor = TRI[i] if k < 6 else 0.5 * (TRI[i] + TRI[(i + 1) % 3])
        c = anchor + rng.normal(size=3) * 0.04 + np.array([0.0, 0.0, 0.05])
        dist, normal, _ = contact(jnp.asarray(c), jnp.asarray(rot))
        ref = oracle(c, rot)
        assert float(dist) <= ref + 1e-10, (k, float(dist), ref)  # every axis is a lower bound
        if ref < 0.0:
            n_pen += 1
            n_curved += np.min(np.abs(np.abs(faces @ np.asarray(normal)) - 1.0)) > 1e-4
            assert abs(float(dist) - ref) < 1e-8, (k, float(dist), ref)
    assert n_pen >= 8 and n_curved >= 4


def test_gradient_matches_finite_differences():
    rot = jnp.asarray(Rotation.from_rotvec([0.5, 0.1, -0.3]).as_matrix())
    c0 = jnp.asarray(TRI[2] + np.array([-0.04, -0.02, 0.06]))
    f = jax.jit(jax.value_and_grad(lambda c: contact(c, rot)[0]))
    val, g = f(c0)
    assert float(val) < 0.0
    eps = 1e-6
    fd = [(f(c0.at[i].add(eps))[0] - f(c0.at[i].add(-eps))[0]) / (2 * eps) for i in range(3)]
    np.testing.assert_allclose(g, fd, atol=1e-6)
