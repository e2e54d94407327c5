"""Cylinder against one height-field prism: closed forms, a brute-force separating-axis oracle, gradients."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

from jaxart.collision.prism import prism_hull  # noqa: E402
from jaxart.collision.prism_cylinder import cylinder_prism  # noqa: E402

TRI = np.array([[-0.5, -0.5, 0.0], [0.5, -0.5, 0.1], [0.5, 0.5, 0.25]])  # counter-clockwise from above
Z_BASE = -0.3
N_TOP = np.cross(TRI[1] - TRI[0], TRI[2] - TRI[0]) / np.linalg.norm(np.cross(TRI[1] - TRI[0], TRI[2] - TRI[0]))
R, HL = 0.1, 0.08


@jax.jit
def contact(c, a):
    res = cylinder_prism(c, a, R, HL, prism_hull(jnp.asarray(TRI), Z_BASE))
    return res.dist[0], res.normal[0], res.point[0]


def oracle(c, a):
    """max over unit axes of the exact separation: dense sampling, then Nelder–Mead from the best samples."""
    verts = np.concatenate([TRI, TRI * [1, 1, 0] + [0, 0, Z_BASE]])

    def sep(u):
        u = u / np.linalg.norm(u)
        w = -u
        aw = w @ a
        return -np.max(verts @ u) - (w @ c + HL * abs(aw) + R * np.sqrt(max(1.0 - aw * aw, 0.0)))

    rng = np.random.default_rng(0)
    us = rng.normal(size=(20000, 3))
    us /= np.linalg.norm(us, axis=1, keepdims=True)
    aw = -us @ a
    vals = -np.max(us @ verts.T, axis=1) - (-us @ c + HL * np.abs(aw) + R * np.sqrt(np.maximum(1.0 - aw * aw, 0.0)))
    starts = us[np.argsort(-vals)[:5]]
    best = max(-minimize(lambda u: -sep(u), s, method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-14,
                                                                              "maxiter": 4000}).fun for s in starts)
    return best


def inside_point():
    return TRI.mean(axis=0)


def test_cylinder_lying_on_the_top_face():
    """Axis parallel to the sloped face: depth = radius minus the axis' height above the plane."""
    a = np.cross(N_TOP, [1.0, 0.0, 0.0])
    a /= np.linalg.norm(a)
    c = inside_point() + 0.07 * N_TOP
    dist, normal, point = contact(jnp.asarray(c), jnp.asarray(a))
    assert abs(float(dist) - (0.07 - R)) < 1e-12
    np.testing.assert_allclose(normal, N_TOP, atol=1e-9)
    # the barrel line touches above the face's centroid: the point lies on the normal through the centre
    np.testing.assert_allclose(point, c - (R + 0.5 * (0.07 - R)) * N_TOP, atol=1e-9)


def test_tilted_cylinder_rim_into_the_top_face():
    """A tilted cylinder's deepest rim point against the face plane (closed form)."""
    a = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    c = inside_point() + 0.1 * N_TOP
    an = a @ N_TOP
    expect = 0.1 - HL * abs(an) - R * np.sqrt(1.0 - an * an)
    dist, normal, _ = contact(jnp.asarray(c), jnp.asarray(a))
    assert abs(float(dist) - expect) < 1e-12
    np.testing.assert_allclose(normal, N_TOP, atol=1e-9)


def test_matches_brute_force_separating_axis_maximum():
    """Rims across edges and corners (the curved patches): exact against a dense search over all axes."""
    rng = np.random.default_rng(3)
    corners = [TRI[2], TRI[1], TRI[0], 0.5 * (TRI[0] + TRI[2])]
    n_pen = 0
    for k in range(12):
        a = rng.normal(size=3)
        a /= np.linalg.norm(a)
        c = corners[k % 4] + rng.normal(size=3) * 0.05 + np.array([0.0, 0.0, 0.02])
        dist = float(contact(jnp.asarray(c), jnp.asarray(a))[0])
        ref = oracle(c, a)
        if ref < 0.0:  # penetrating: exact
            n_pen += 1
            assert abs(dist - ref) < 1e-8, (k, dist, ref)
        assert dist <= ref + 1e-10, (k, dist, ref)  # every axis is a lower bound
    assert n_pen >= 8


#: (centre, axis) where a rim crosses a prism edge: the best axis lies inside the edge's arc of normals.
RIM_EDGE = [((-0.0279190603581774, -0.019321235091098093, 0.19351687003449294),
             (-0.4539789989593493, -0.6446675608170257, 0.615066504155521)),
            ((-0.34181219924778855, -0.46194231718469597, 0.021751498806516556),
             (-0.0496954874437225, 0.9582996088387341, -0.28141111958709103)),
            ((0.5234878797696574, 0.2721801072219259, 0.265771181803217),
             (0.29585265178555964, -0.03325758809665585, 0.9546544617113804)),
            ((0.5340826377113735, -0.1107825634447559, 0.2712675873629372),
             (-0.594314631548348, -0.5497503855276585, -0.5869962796643113))]


def test_rim_across_an_edge_matches_brute_force():
    for c, a in RIM_EDGE:
        c, a = np.asarray(c), np.asarray(a) / np.linalg.norm(a)
        dist, normal, _ = contact(jnp.asarray(c), jnp.asarray(a))
        ref = oracle(c, a)
        assert ref < 0.0 and abs(float(dist) - ref) < 1e-8, (c, float(dist), ref)
        # not a face normal, not the axis: a curved patch of the Minkowski difference
        faces = np.asarray(prism_hull(jnp.asarray(TRI), Z_BASE).normals)
        assert np.min(np.abs(np.abs(faces @ np.asarray(normal)) - 1.0)) > 1e-4
        assert abs(abs(float(np.asarray(normal) @ a)) - 1.0) > 1e-4


def test_gradient_matches_finite_differences():
    a = jnp.asarray(np.array([0.2, 0.9, 0.3]) / np.linalg.norm([0.2, 0.9, 0.3]))
    c0 = jnp.asarray(TRI[2] + np.array([-0.05, -0.02, 0.05]))
    f = jax.jit(jax.value_and_grad(lambda c: contact(c, a)[0]))
    val, g = f(c0)
    assert float(val) < 0.0
    eps = 1e-6
    fd = [(f(c0.at[i].add(eps))[0] - f(c0.at[i].add(-eps))[0]) / (2 * eps) for i in range(3)]
    np.testing.assert_allclose(g, fd, atol=1e-6)
