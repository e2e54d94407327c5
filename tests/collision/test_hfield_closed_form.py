"""Closed-form sphere and capsule contacts against height-field prisms, checked against hand-computed geometry.

One grid cell (2 × 2 vertices) of a sloped height field is split into its two triangles; the
lower-right triangle ``(x > y)`` has vertices ``p00, p01, p11``. The expected distances are written
out here from the triangle's plane and edges (numpy), independently of the prism code.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxart.collision.narrow_hfield import hfield_capsule, hfield_sphere  # noqa: E402
from jaxart.collision.prism import prism_hull, segment_prism  # noqa: E402

HX, HY, Z_BASE = 0.5, 0.5, -0.3
HEIGHTS = np.array([[0.0, 0.1], [0.05, 0.25]])  # rows: y = -HY, +HY; columns: x = -HX, +HX
INFO = jnp.asarray([HX, HY, 2.0, 2.0, Z_BASE])
XA, SA = jnp.asarray([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]), jnp.ones(3)
P00, P01, P11 = (np.array([-HX, -HY, HEIGHTS[0, 0]]), np.array([HX, -HY, HEIGHTS[0, 1]]),
                 np.array([HX, HY, HEIGHTS[1, 1]]))
N_TOP = np.cross(P01 - P00, P11 - P00) / np.linalg.norm(np.cross(P01 - P00, P11 - P00))


def pose(p, quat=(0.0, 0.0, 0.0, 1.0)):
    return jnp.asarray(np.concatenate([p, quat]))


def deepest(res):
    k = int(np.argmin(np.where(np.asarray(res.valid), np.asarray(res.dist), np.inf)))
    return float(res.dist[k]), np.asarray(res.normal[k]), np.asarray(res.point[k])


@jax.jit
def sphere(c, r):
    return hfield_sphere(XA, SA, jnp.concatenate([c, XA[3:]]), jnp.asarray([r, 0.0, 0.0]), jnp.asarray(HEIGHTS), INFO,
                         window=(1, 1))


def test_sphere_over_triangle_face_is_plane_distance():
    c, r = np.array([0.3, -0.2, 0.4]), 0.05
    d_plane = N_TOP @ (c - P00)
    dist, n, p = deepest(sphere(jnp.asarray(c), r))
    assert dist == pytest.approx(d_plane - r, abs=1e-12)
    np.testing.assert_allclose(n, N_TOP, atol=1e-12)
    np.testing.assert_allclose(p, c - 0.5 * (d_plane + r) * N_TOP, atol=1e-12)  # midway between the surfaces


def test_sphere_beyond_the_grid_edge_touches_the_top_edge():
    c, r = np.array([0.62, 0.1, 0.35]), 0.2  # beyond x = HX, above the edge p01–p11
    e = P11 - P01
    q = P01 + np.clip((c - P01) @ e / (e @ e), 0.0, 1.0) * e
    dist, n, p = deepest(sphere(jnp.asarray(c), r))
    assert dist == pytest.approx(np.linalg.norm(c - q) - r, abs=1e-12)
    np.testing.assert_allclose(n, (c - q) / np.linalg.norm(c - q), atol=1e-12)


def test_sphere_centre_inside_prism_uses_least_penetration_face():
    c, r = np.array([0.3, -0.2, 0.05]), 0.02  # below the top plane, far above the base and inside the footprint
    d_plane = N_TOP @ (c - P00)
    assert d_plane < 0.0
    dist, n, _ = deepest(sphere(jnp.asarray(c), r))
    assert dist == pytest.approx(d_plane - r, abs=1e-12)
    np.testing.assert_allclose(n, N_TOP, atol=1e-12)


def capsule_pose(c, axis):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    v = np.cross([0.0, 0.0, 1.0], axis)
    angle = np.arccos(np.clip(axis[2], -1.0, 1.0))
    v = v / np.linalg.norm(v) if np.linalg.norm(v) > 0 else np.array([1.0, 0.0, 0.0])
    return pose(c, np.concatenate([v * np.sin(angle / 2), [np.cos(angle / 2)]]))


@pytest.mark.parametrize("height", [0.35, 0.1])  # separated, then penetrating the top face
def test_capsule_over_triangle_face(height):
    """A capsule over the triangle's interior: its lower end decides, ``n · (end − p00) − r``."""
    c, axis, r, half = np.array([0.25, -0.15, height]), np.array([1.0, 0.3, 0.2]), 0.04, 0.08
    ends = c + np.outer([-1.0, 1.0], half * axis / np.linalg.norm(axis))
    d_ends = (ends - P00) @ N_TOP
    res = jax.jit(hfield_capsule, static_argnames="window")(XA, SA, capsule_pose(c, axis), jnp.asarray([r, half, 0.0]),
                                                          jnp.asarray(HEIGHTS), INFO, window=(1, 1))
    dist, n, p = deepest(res)
    assert dist == pytest.approx(d_ends.min() - r, abs=1e-12)
    np.testing.assert_allclose(n, N_TOP, atol=1e-12)
    low = ends[np.argmin(d_ends)]
    np.testing.assert_allclose(p, low - 0.5 * (d_ends.min() + r) * N_TOP, atol=1e-12)


def test_segment_cutting_a_vertical_edge_is_an_edge_edge_contact():
    """A horizontal segment cutting the prism's vertical edge at p01 by ``δ``: depth ``δ`` along the bisector."""
    h = prism_hull(jnp.asarray(np.stack([P00, P01, P11])), Z_BASE)
    u = np.array([1.0, -1.0, 0.0]) / np.sqrt(2.0)  # between the faces x = HX (+x) and y = -HY (-y)
    w = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    delta, corner = 0.02, np.array([HX, -HY, -0.1])
    a, b = corner - delta * u - 0.2 * w, corner - delta * u + 0.2 * w
    s = jax.jit(segment_prism)(jnp.asarray(a), jnp.asarray(b), h)
    assert float(s.dist) == pytest.approx(-delta, abs=1e-12)
    np.testing.assert_allclose(np.asarray(s.normal), u, atol=1e-12)
    np.testing.assert_allclose(np.asarray(s.on_segment), corner - delta * u, atol=1e-12)
    np.testing.assert_allclose(np.asarray(s.on_prism), corner, atol=1e-12)


@pytest.mark.parametrize("fn", ["sphere", "capsule"])
def test_closed_form_gradient_matches_finite_differences(fn):
    """d(deepest distance)/d(position): autodiff through the closed forms vs central differences."""
    q = np.asarray(capsule_pose(np.zeros(3), [0.4, -0.3, 0.5]))[3:]

    def f(p):
        xb = jnp.concatenate([p, jnp.asarray(q)])
        if fn == "sphere":
            r = hfield_sphere(XA, SA, xb, jnp.asarray([0.07, 0.0, 0.0]), jnp.asarray(HEIGHTS), INFO, window=(1, 1))
        else:
            r = hfield_capsule(XA, SA, xb, jnp.asarray([0.05, 0.1, 0.0]), jnp.asarray(HEIGHTS), INFO, window=(1, 1))
        return jnp.min(jnp.where(r.valid, r.dist, jnp.inf))

    vg = jax.jit(jax.value_and_grad(f))
    p0 = jnp.asarray([0.2, -0.1, 0.12])
    val, g = vg(p0)
    eps = 1e-6
    fd = [(vg(p0.at[i].add(eps))[0] - vg(p0.at[i].add(-eps))[0]) / (2 * eps) for i in range(3)]
    assert float(val) < 0.0
    np.testing.assert_allclose(g, fd, atol=1e-6)


def test_box_axes_match_general_hull_sat():
    """``hull_box`` (box directions and support) against ``hull_hull`` (Gauss-map edge pairs) on random poses."""
    from jaxart.collision.geometry import frame
    from jaxart.collision.hull_geometry import box_hull, world_hull
    from jaxart.collision.narrow_hull import hull_box, hull_hull

    h = prism_hull(jnp.asarray(np.stack([P00, P01, P11])), Z_BASE)
    half = jnp.asarray([0.12, 0.1, 0.06])

    @jax.jit
    def both(x):
        hb = world_hull(box_hull(half), x)
        return hull_box(h, hb, frame(x)[1], half), hull_hull(h, hb), hull_box(h, hb, frame(x)[1], half, 4)

    rng = np.random.default_rng(3)
    for _ in range(12):
        q = rng.normal(size=4)
        c = np.array([rng.uniform(-0.4, 0.6), rng.uniform(-0.6, 0.3), rng.uniform(-0.1, 0.35)])
        fast, ref, four = both(pose(c, q / np.linalg.norm(q)))
        np.testing.assert_array_equal(np.asarray(four.dist), np.asarray(fast.dist)[:4])  # the first spread points
        for r in (fast, ref):
            assert bool(r.valid[0])
        assert float(fast.dist[0]) == pytest.approx(float(ref.dist[0]), abs=1e-12)
        np.testing.assert_allclose(np.asarray(fast.normal[0]), np.asarray(ref.normal[0]), atol=1e-9)
        np.testing.assert_allclose(np.asarray(fast.point), np.asarray(ref.point), atol=1e-9)
