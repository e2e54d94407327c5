"""Narrow-phase functions against analytic contacts (distance, point, normal) and gradient safety."""

import jax

jax.config.update("jax_enable_x64", True)

import functools  # noqa: E402
import types  # noqa: E402

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from jaxart import collision as _col  # noqa: E402
from jaxart.math.quat import quat_mul, quat_to_matrix  # noqa: E402
from jaxart.sim.builder_shapes import Mesh  # noqa: E402

Z = np.array([0.0, 0.0, 1.0])
_NAMES = ("plane_sphere", "plane_capsule", "plane_box", "plane_ellipsoid", "plane_cylinder", "plane_mesh",
          "sphere_sphere", "sphere_capsule", "sphere_box", "sphere_cylinder", "capsule_capsule", "capsule_box",
          "capsule_cylinder", "box_box", "sphere_mesh", "capsule_mesh", "box_mesh", "mesh_mesh",
          "cylinder_box", "cylinder_cylinder", "cylinder_mesh")
col = types.SimpleNamespace(**{n: jax.jit(getattr(_col, n)) for n in _NAMES})  # compiled once per shape


def qaa(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]])


def tf(p=(0.0, 0.0, 0.0), q=(0.0, 0.0, 0.0, 1.0)):
    return jnp.asarray(np.concatenate([np.asarray(p, float), np.asarray(q, float)]))


def s3(a, b=0.0, c=0.0):
    return jnp.asarray([a, b, c], dtype=jnp.float64)


PLANE = (tf(), s3(0.0, 0.0))


def active(res):
    v = np.asarray(res.valid)
    return np.asarray(res.dist)[v], np.asarray(res.point)[v], np.asarray(res.normal)[v]


@functools.cache
def _jac(fn):
    """Jacobians of the masked distances and normals w.r.t. both poses (one compile per function)."""

    def f(xa, sa, xb, sb):
        r = fn(xa, sa, xb, sb)
        return jnp.concatenate([jnp.where(r.valid, r.dist, 0.0), jnp.where(r.valid[:, None], r.normal, 0.0).ravel()])

    return jax.jit(jax.jacrev(f, argnums=(0, 2)))


def grad_finite(fn, xa, sa, xb, sb):
    """Jacobians of the valid distances and normals w.r.t. both poses are finite."""
    ga, gb = _jac(fn)(xa, sa, xb, sb)
    assert np.all(np.isfinite(ga)) and np.all(np.isfinite(gb))
    return ga, gb


def fd_check(fn, xa, sa, xb, sb, slot=0, eps=1e-6, rot=True):
    """d(dist[slot])/d(pose of B) by autodiff equals central finite differences.

    All 7 pose components (raw quaternion entries included) unless ``rot=False``: where several
    slots tie (resting faces), a rotation reorders them, so only translations are comparable.
    """
    g = _jac(fn)(xa, sa, xb, sb)[1][slot]
    for i in range(7 if rot else 3):
        e = jnp.zeros(7).at[i].set(eps)
        fd = (fn(xa, sa, xb + e, sb).dist[slot] - fn(xa, sa, xb - e, sb).dist[slot]) / (2 * eps)
        np.testing.assert_allclose(g[i], fd, atol=1e-6)


# ------------------------------------------------------------------------------------------ plane
@pytest.mark.parametrize("h", [1.5, 1.0, 0.2, 0.0])
def test_plane_sphere_heights(h):
    res = col.plane_sphere(*PLANE, tf((0.3, -0.2, h)), s3(1.0))
    np.testing.assert_allclose(res.dist, [h - 1.0], atol=1e-12)
    np.testing.assert_allclose(res.point[0], [0.3, -0.2, 0.5 * (h - 1.0)], atol=1e-12)
    np.testing.assert_allclose(res.normal[0], Z)
    assert bool(res.valid[0])
    grad_finite(col.plane_sphere, *PLANE, tf((0.3, -0.2, h)), s3(1.0))


def test_plane_sphere_tilted_and_finite():
    q = qaa([1, 0, 0], 0.4)
    n = np.asarray(quat_to_matrix(jnp.asarray(q)))[:, 2]
    c = np.array([0.1, 0.7, 0.9])
    res = col.plane_sphere(tf((0, 0, 0.1), q), s3(0.0, 0.0), tf(c), s3(0.25))
    np.testing.assert_allclose(res.dist[0], n @ (c - [0, 0, 0.1]) - 0.25, atol=1e-12)
    np.testing.assert_allclose(res.normal[0], n, atol=1e-12)
    fd_check(col.plane_sphere, tf((0, 0, 0.1), q), s3(0.0, 0.0), tf(c), s3(0.25))
    # finite plane: half extents 1 x 2
    inside = col.plane_sphere(tf(), s3(1.0, 2.0), tf((0.9, 1.9, 0.5)), s3(0.6))
    outside = col.plane_sphere(tf(), s3(1.0, 2.0), tf((1.1, 0.0, 0.5)), s3(0.6))
    assert bool(inside.valid[0]) and not bool(outside.valid[0])


def test_plane_capsule_lying_and_standing():
    lying = col.plane_capsule(*PLANE, tf((0, 0, 0.25), qaa([1, 0, 0], np.pi / 2)), s3(0.3, 0.5))
    d, p, n = active(lying)
    np.testing.assert_allclose(d, [-0.05, -0.05], atol=1e-12)
    np.testing.assert_allclose(np.sort(p[:, 1]), [-0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(p[:, 2], [-0.025, -0.025], atol=1e-12)
    standing = col.plane_capsule(*PLANE, tf((0, 0, 1.0)), s3(0.3, 0.5))
    np.testing.assert_allclose(np.sort(standing.dist), [0.2, 1.2], atol=1e-12)
    grad_finite(col.plane_capsule, *PLANE, tf((0, 0, 0.3), qaa([1, 0, 0], np.pi / 2)), s3(0.3, 0.5))


@pytest.mark.parametrize("theta", [0.0, 0.3, np.pi / 4])
def test_plane_box(theta):
    h, half = 0.8, np.array([0.2, 0.4, 0.5])
    res = col.plane_box(*PLANE, tf((0.1, 0, h), qaa([1, 0, 0], theta)), jnp.asarray(half))
    lowest = h - (half[1] * np.sin(theta) + half[2] * np.cos(theta))
    np.testing.assert_allclose(np.min(res.dist), lowest, atol=1e-12)
    expect_min_count = 4 if theta == 0.0 else 2
    assert np.sum(np.isclose(res.dist, lowest)) == expect_min_count
    np.testing.assert_allclose(res.normal, np.tile(Z, (4, 1)))
    fd_check(col.plane_box, *PLANE, tf((0.1, 0, h), qaa([1, 0, 0], theta)), jnp.asarray(half),
             slot=int(np.argmin(res.dist)), rot=False)


def test_plane_ellipsoid():
    r = np.array([0.5, 0.3, 0.2])
    res = col.plane_ellipsoid(*PLANE, tf((0, 0, 1.0)), jnp.asarray(r))
    np.testing.assert_allclose(res.dist, [0.8], atol=1e-12)
    np.testing.assert_allclose(res.point[0], [0, 0, 0.4], atol=1e-12)
    q = qaa([1, 2, 3], 0.9)
    rot = np.asarray(quat_to_matrix(jnp.asarray(q)))
    res = col.plane_ellipsoid(*PLANE, tf((0, 0, 1.0), q), jnp.asarray(r))
    support = np.sqrt(np.sum((r * (rot.T @ Z)) ** 2))
    np.testing.assert_allclose(res.dist, [1.0 - support], atol=1e-12)
    fd_check(col.plane_ellipsoid, *PLANE, tf((0, 0, 1.0), q), jnp.asarray(r))
    grad_finite(col.plane_ellipsoid, *PLANE, tf((0, 0, 0.0)), jnp.asarray(r))


def test_plane_cylinder_upright_lying_tilted():
    r, hh = 0.3, 0.5
    up = col.plane_cylinder(*PLANE, tf((0, 0, 0.45)), s3(r, hh))
    np.testing.assert_allclose(up.dist, [-0.05] * 4, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(up.point)[:, :2], axis=1), [r] * 4, atol=1e-12)
    grad_finite(col.plane_cylinder, *PLANE, tf((0, 0, 0.45)), s3(r, hh))  # degenerate rim direction
    lying = col.plane_cylinder(*PLANE, tf((0, 0, 0.25), qaa([1, 0, 0], np.pi / 2)), s3(r, hh))
    deep = np.isclose(lying.dist, -0.05)
    assert np.sum(deep) == 2
    np.testing.assert_allclose(np.sort(np.asarray(lying.point)[deep][:, 1]), [-hh, hh], atol=1e-12)
    th = 0.6
    tilt = col.plane_cylinder(*PLANE, tf((0, 0, 1.0), qaa([0, 1, 0], th)), s3(r, hh))
    np.testing.assert_allclose(np.min(tilt.dist), 1.0 - hh * np.cos(th) - r * np.sin(th), atol=1e-12)


def test_plane_mesh_tetrahedron():
    verts = jnp.asarray([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [9, 9, 9]], dtype=jnp.float64)
    mask = jnp.asarray([True, True, True, True, False])
    q = qaa([1, 1, 0], 0.7)
    rot = np.asarray(quat_to_matrix(jnp.asarray(q)))
    res = col.plane_mesh(*PLANE, tf((0, 0, 0.5), q), s3(2.0, 1.0, 0.5), verts, mask)
    world = 0.5 * Z + (np.asarray(verts[:4]) * [2.0, 1.0, 0.5]) @ rot.T
    np.testing.assert_allclose(np.sort(np.asarray(res.dist)[np.asarray(res.valid)]), np.sort(world[:, 2]), atol=1e-12)
    assert int(np.sum(res.valid)) == 4


# --------------------------------------------------------------------------------------- spheres
@pytest.mark.parametrize("d", [3.0, 1.5, 0.4])
def test_sphere_sphere(d):
    res = col.sphere_sphere(tf((1, 0, 0)), s3(1.0), tf((1 + d * 0.6, d * 0.8, 0)), s3(0.5))
    np.testing.assert_allclose(res.dist, [d - 1.5], atol=1e-12)
    np.testing.assert_allclose(res.normal[0], [0.6, 0.8, 0], atol=1e-12)
    mid = np.array([1, 0, 0]) + (1.0 + 0.5 * (d - 1.5)) * np.array([0.6, 0.8, 0])
    np.testing.assert_allclose(res.point[0], mid, atol=1e-12)
    fd_check(col.sphere_sphere, tf((1, 0, 0)), s3(1.0), tf((1 + d * 0.6, d * 0.8, 0)), s3(0.5))


def test_sphere_sphere_coincident_is_finite():
    res = col.sphere_sphere(tf((1, 2, 3)), s3(1.0), tf((1, 2, 3)), s3(0.5))
    np.testing.assert_allclose(res.dist, [-1.5])
    np.testing.assert_allclose(res.normal[0], Z)
    grad_finite(col.sphere_sphere, tf((1, 2, 3)), s3(1.0), tf((1, 2, 3)), s3(0.5))


def test_sphere_capsule_side_and_end():
    cap = (tf((0, 0, 0), qaa([0, 1, 0], np.pi / 2)), s3(0.2, 1.0))  # axis along world X, x in [-1, 1]
    side = col.sphere_capsule(tf((0.4, 0, 0.7)), s3(0.3), *cap)
    np.testing.assert_allclose(side.dist, [0.2], atol=1e-12)
    np.testing.assert_allclose(side.normal[0], -Z, atol=1e-12)
    np.testing.assert_allclose(side.point[0], [0.4, 0, 0.3], atol=1e-12)
    end = col.sphere_capsule(tf((1.3, 0.4, 0)), s3(0.1), *cap)
    np.testing.assert_allclose(end.dist, [0.5 - 0.3], atol=1e-12)
    np.testing.assert_allclose(end.normal[0], [-0.6, -0.8, 0], atol=1e-12)
    fd_check(col.sphere_capsule, tf((1.3, 0.4, 0)), s3(0.1), *cap)
    grad_finite(col.sphere_capsule, tf((0.2, 0, 0)), s3(0.1), *cap)  # centre on the axis


# -------------------------------------------------------------------------------------- capsules
def test_capsule_capsule_crossed():
    a = (tf((0, 0, 0), qaa([0, 1, 0], np.pi / 2)), s3(0.2, 1.0))  # along X
    b = (tf((0.3, 0.1, 0.5), qaa([1, 0, 0], np.pi / 2)), s3(0.1, 1.0))  # along Y, above
    res = col.capsule_capsule(*a, *b)
    d, p, n = active(res)
    assert len(d) == 1
    np.testing.assert_allclose(d, [0.2], atol=1e-12)
    np.testing.assert_allclose(n[0], Z, atol=1e-12)
    np.testing.assert_allclose(p[0], [0.3, 0, 0.3], atol=1e-12)
    fd_check(col.capsule_capsule, *a, *b)


def test_capsule_capsule_parallel_two_points():
    q = qaa([0, 1, 0], np.pi / 2)
    a = (tf((0, 0, 0), q), s3(0.2, 1.0))  # x in [-1, 1]
    b = (tf((0.5, 0, 0.35), q), s3(0.2, 1.0))  # x in [-0.5, 1.5], slightly penetrating
    d, p, n = active(col.capsule_capsule(*a, *b))
    np.testing.assert_allclose(d, [-0.05, -0.05], atol=1e-12)
    np.testing.assert_allclose(np.sort(p[:, 0]), [-0.5, 1.0], atol=1e-12)
    np.testing.assert_allclose(n, [Z, Z], atol=1e-12)
    grad_finite(col.capsule_capsule, *a, *b)
    # coaxial, overlapping: centre lines coincide (degenerate normal) -> finite gradients
    grad_finite(col.capsule_capsule, *a, tf((0.5, 0, 0), q), s3(0.2, 1.0))


def test_capsule_capsule_intersecting_axes_finite():
    a = (tf((0, 0, 0), qaa([0, 1, 0], np.pi / 2)), s3(0.2, 1.0))
    b = (tf((0, 0, 0), qaa([1, 0, 0], np.pi / 2)), s3(0.1, 1.0))
    d, _, _ = active(col.capsule_capsule(*a, *b))
    np.testing.assert_allclose(d, [-0.3], atol=1e-12)
    grad_finite(col.capsule_capsule, *a, *b)


# -------------------------------------------------------------------------------------- cylinders
CYL = (tf((0, 0, 0)), s3(0.5, 1.0))


@pytest.mark.parametrize(
    "centre, dist, normal",
    [
        ((0.0, 0.9, 0.2), 0.4 - 0.2, -np.array([0.0, 1.0, 0.0])),  # beside the barrel
        ((0.1, -0.2, 1.5), 0.5 - 0.2, -Z),  # above the top cap
        ((0.8, 0.0, 1.4), 0.5 - 0.2, -np.array([0.6, 0.0, 0.8])),  # off the rim
        ((0.0, 0.45, 0.0), -0.05 - 0.2, -np.array([0.0, 1.0, 0.0])),  # inside, barrel nearest
        ((0.1, 0.0, -0.9), -0.1 - 0.2, Z),  # inside, bottom cap nearest
    ],
)
def test_sphere_cylinder(centre, dist, normal):
    res = col.sphere_cylinder(tf(centre), s3(0.2), *CYL)
    np.testing.assert_allclose(res.dist, [dist], atol=1e-12)
    np.testing.assert_allclose(res.normal[0], normal, atol=1e-12)
    np.testing.assert_allclose(res.point[0], np.asarray(centre) + (0.2 + 0.5 * dist) * np.asarray(normal),
                               atol=1e-12)
    fd_check(col.sphere_cylinder, tf(centre), s3(0.2), *CYL)


def test_sphere_cylinder_on_axis_finite():
    res = col.sphere_cylinder(tf((0, 0, 0.2)), s3(0.1), *CYL)
    np.testing.assert_allclose(res.dist, [-0.5 - 0.1], atol=1e-12)  # barrel nearer than the caps
    grad_finite(col.sphere_cylinder, tf((0, 0, 0.2)), s3(0.1), *CYL)


def test_capsule_cylinder_across_top_cap():
    cap = (tf((0.05, 0.1, 1.15), qaa([0, 1, 0], np.pi / 2)), s3(0.1, 1.0))  # along X, ends overhang the rim
    d, p, n = active(col.capsule_cylinder(*cap, *CYL))
    np.testing.assert_allclose(np.min(d), 0.05, atol=1e-7)
    k = int(np.argmin(d))
    np.testing.assert_allclose(n[k], -Z, atol=1e-6)
    np.testing.assert_allclose(p[k, 2], 1.025, atol=1e-7)
    assert abs(p[k, 0]) <= 0.5
    grad_finite(col.capsule_cylinder, *cap, *CYL)


# ------------------------------------------------------------------------------------------ boxes
BOX = (tf((0, 0, 0)), s3(1.0, 0.5, 0.25))


@pytest.mark.parametrize(
    "centre, dist, normal",
    [
        ((0.2, 0.1, 0.75), 0.2, -Z),  # above the top face
        ((1.3, 0.9, 0.0), 0.5 - 0.3, -np.array([0.6, 0.8, 0.0])),  # beside a vertical edge
        ((0.2, 0.1, 0.15), -0.1 - 0.3, -Z),  # centre inside, nearest face is the top
        ((0.95, 0.0, 0.0), -0.05 - 0.3, -np.array([1.0, 0, 0])),  # centre inside, nearest face +X
    ],
)
def test_sphere_box(centre, dist, normal):
    res = col.sphere_box(tf(centre), s3(0.3), *BOX)
    np.testing.assert_allclose(res.dist, [dist], atol=1e-12)
    np.testing.assert_allclose(res.normal[0], normal, atol=1e-12)
    c = np.asarray(centre)
    np.testing.assert_allclose(res.point[0], c + (0.3 + 0.5 * dist) * np.asarray(normal), atol=1e-12)
    fd_check(col.sphere_box, tf(centre), s3(0.3), *BOX)


def test_sphere_box_centre_at_box_centre_finite():
    res = col.sphere_box(tf((0, 0, 0)), s3(0.1), *BOX)
    np.testing.assert_allclose(res.dist, [-0.35], atol=1e-12)
    grad_finite(col.sphere_box, tf((0, 0, 0)), s3(0.1), *BOX)
    grad_finite(col.sphere_box, tf((0.2, 0.1, 0.25)), s3(0.1), *BOX)  # centre exactly on the surface


def test_capsule_box_lying_flat_gives_two_contacts():
    cap = (tf((0.1, 0.0, 0.25 + 0.2 - 0.01), qaa([0, 1, 0], np.pi / 2)), s3(0.2, 0.5))
    d, p, n = active(col.capsule_box(*cap, *BOX))
    np.testing.assert_allclose(d, [-0.01, -0.01], atol=1e-12)
    np.testing.assert_allclose(np.sort(p[:, 0]), [-0.4, 0.6], atol=1e-12)
    np.testing.assert_allclose(n, [-Z, -Z], atol=1e-12)
    grad_finite(col.capsule_box, *cap, *BOX)


def test_capsule_box_across_an_edge():
    box = (tf((0, 0, 0), qaa([0, 1, 0], np.pi / 4)), s3(0.5, 2.0, 0.5))  # top is an edge along Y at z = √2/2
    cap = (tf((0.0, 0.3, 1.0), qaa([0, 1, 0], np.pi / 2)), s3(0.1, 1.0))  # along X, above the edge
    res = col.capsule_box(*cap, *box)
    assert bool(res.valid[2])
    np.testing.assert_allclose(res.dist[2], 1.0 - np.sqrt(0.5) - 0.1, atol=1e-6)
    np.testing.assert_allclose(res.normal[2], -Z, atol=1e-5)
    np.testing.assert_allclose(res.point[2][:2], [0.0, 0.3], atol=1e-5)
    assert np.all(np.asarray(res.dist[:2]) > res.dist[2])
    g = jax.jit(jax.grad(lambda x: col.capsule_box(x, cap[1], *box).dist[2]))(cap[0])
    np.testing.assert_allclose(g[:3], [0.0, 0.0, 1.0], atol=1e-5)


def test_box_box_face_face_same_size():
    half = s3(0.5, 0.5, 0.5)
    res = col.box_box(tf((0, 0, 0)), half, tf((0, 0, 1.02)), half)
    d, p, n = active(res)
    assert len(d) == 4
    np.testing.assert_allclose(d, 0.02, atol=1e-12)
    np.testing.assert_allclose(n, np.tile(Z, (4, 1)), atol=1e-12)
    np.testing.assert_allclose(np.sort(np.abs(p[:, :2]).ravel()), 0.5, atol=1e-12)
    np.testing.assert_allclose(p[:, 2], 0.51, atol=1e-12)
    grad_finite(col.box_box, tf((0, 0, 0)), half, tf((0, 0, 1.0)), half)
    fd_check(col.box_box, tf((0, 0, 0)), half, tf((0, 0, 0.97)), half, rot=False)


@pytest.mark.parametrize("dtype", [jnp.float64, jnp.float32])
@pytest.mark.parametrize("offset", [1e-7, 1e-3])
def test_box_box_nearly_coincident_corners_keep_four_contacts(dtype, offset):
    half = s3(0.5, 0.5, 0.5).astype(dtype)
    res = col.box_box(tf().astype(dtype), half, tf((offset, 0, 0.99)).astype(dtype), half)
    d, p, _ = active(res)
    assert len(d) == 4
    np.testing.assert_allclose(d, -0.01, atol=1e-6)
    np.testing.assert_allclose(np.sort(p[:, 0]), [-0.5 + offset] * 2 + [0.5] * 2, atol=1e-6)


def test_box_box_rotated_small_on_large():
    big, small = s3(1.0, 1.0, 0.5), s3(0.3, 0.3, 0.2)
    res = col.box_box(tf((0, 0, 0)), big, tf((0.1, 0.2, 0.69), qaa(Z, 0.5)), small)
    d, p, n = active(res)
    assert len(d) == 4
    np.testing.assert_allclose(d, -0.01, atol=1e-12)
    np.testing.assert_allclose(n, np.tile(Z, (4, 1)), atol=1e-12)
    np.testing.assert_allclose(p.mean(axis=0)[:2], [0.1, 0.2], atol=1e-12)
    tilted = tf((0.1, 0.2, 0.8), qaa([1, 1, 0], 0.3))  # one corner deepest: slot 0 is unique
    assert float(col.box_box(tf(), big, tilted, small).dist[0]) < float(col.box_box(tf(), big, tilted, small).dist[1])
    fd_check(col.box_box, tf(), big, tilted, small)
    # large box above the small one: the reference face is the small box's, normal still A->B
    res = col.box_box(tf((0, 0, 0)), small, tf((0.0, 0.0, 0.69), qaa(Z, 0.5)), big)
    d, p, n = active(res)
    assert len(d) == 4
    np.testing.assert_allclose(d, -0.01, atol=1e-12)
    np.testing.assert_allclose(n, np.tile(Z, (4, 1)), atol=1e-12)


def test_box_box_octagon_overlap_gives_eight_points():
    half = s3(0.5, 0.5, 0.5)
    d, p, n = active(col.box_box(tf((0, 0, 0)), half, tf((0, 0, 0.99), qaa(Z, np.pi / 4)), half))
    assert len(d) == 8
    np.testing.assert_allclose(d, -0.01, atol=1e-12)
    assert np.all(np.abs(p[:, :2]) <= 0.5 + 1e-9)  # inside both squares
    rot = np.array([[np.cos(np.pi / 4), -np.sin(np.pi / 4)], [np.sin(np.pi / 4), np.cos(np.pi / 4)]])
    assert np.all(np.abs(p[:, :2] @ rot) <= 0.5 + 1e-9)
    assert len(np.unique(np.round(p[:, :2], 9), axis=0)) == 8


def test_box_box_edge_edge():
    half = s3(0.5, 0.5, 0.5)
    za = 0.0
    xa = tf((0, 0, za), qaa([1, 0, 0], np.pi / 4))  # top edge along X at z = √2/2
    xb = tf((0.1, -0.05, 1.4), qaa([0, 1, 0], np.pi / 4))  # bottom edge along Y at z = 1.4 - √2/2
    d, p, n = active(col.box_box(xa, half, xb, half))
    assert len(d) == 1
    np.testing.assert_allclose(d, [1.4 - np.sqrt(2.0)], atol=1e-12)
    np.testing.assert_allclose(n[0], Z, atol=1e-12)
    np.testing.assert_allclose(p[0], [0.1, 0.0, 0.7], atol=1e-12)
    fd_check(col.box_box, xa, half, xb, half)


def test_box_box_separated_and_deep():
    half = s3(0.5, 0.5, 0.5)
    far = col.box_box(tf(), half, tf((2.0, 0.1, 0.0)), half)
    d, _, n = active(far)
    np.testing.assert_allclose(d, 1.0, atol=1e-12)
    np.testing.assert_allclose(n[0], [1, 0, 0], atol=1e-12)
    deep = col.box_box(tf(), half, tf((0.0, 0.3, 0.1)), half)
    d, _, n = active(deep)
    np.testing.assert_allclose(d, -0.7, atol=1e-12)
    np.testing.assert_allclose(n[0], [0, 1, 0], atol=1e-12)
    grad_finite(col.box_box, tf(), half, tf((0.0, 0.0, 0.0)), half)  # coincident boxes


# ------------------------------------------------------------------------------ random properties
def _random_pairs(n, seed, spread):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(2, n, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    xa = np.concatenate([rng.normal(size=(n, 3)) * 0.1, q[0]], 1)
    xb = np.concatenate([rng.normal(size=(n, 3)) * spread, q[1]], 1)
    sa, sb = rng.uniform(0.1, 0.6, size=(2, n, 3))
    return [jnp.asarray(a) for a in (xa, sa, xb, sb)]


def _surface_points(res):
    pa = res.point - 0.5 * res.dist[..., None] * res.normal
    pb = res.point + 0.5 * res.dist[..., None] * res.normal
    return pa, pb


def _box_sdf_world(x, s, p):
    from jaxart.collision.geometry import box_sdf, frame

    c, rot = frame(x)
    return jax.vmap(lambda pt: box_sdf(rot.T @ (pt - c), s))(p)


def test_box_box_random_penetrating_contacts_lie_on_both_surfaces():
    xa, sa, xb, sb = _random_pairs(150, 0, 0.6)
    res = jax.jit(jax.vmap(_col.box_box))(xa, sa, xb, sb)
    pa, pb = _surface_points(res)
    da = np.asarray(jax.jit(jax.vmap(_box_sdf_world))(xa, sa, pa))
    db = np.asarray(jax.jit(jax.vmap(_box_sdf_world))(xb, sb, pb))
    valid = np.asarray(res.valid)
    assert np.all(valid.sum(axis=1) >= 1)
    pen = (np.where(valid, np.asarray(res.dist), np.inf).min(axis=1) < 0.0)[:, None] & valid
    assert pen.sum() > 100
    np.testing.assert_allclose(da[pen], 0.0, atol=1e-9)
    np.testing.assert_allclose(db[pen], 0.0, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(res.normal)[valid], axis=-1), 1.0, atol=1e-12)


def _seg_dist_brute(a0, a1, b0, b1, m=400):
    t = np.linspace(0.0, 1.0, m)
    pa = a0 + t[:, None] * (a1 - a0)
    pb = b0 + t[:, None] * (b1 - b0)
    return np.min(np.linalg.norm(pa[:, None] - pb[None], axis=-1))


def test_capsule_capsule_random_distance_matches_brute_force():
    xa, sa, xb, sb = _random_pairs(40, 1, 0.5)
    res = jax.jit(jax.vmap(_col.capsule_capsule))(xa, sa, xb, sb)
    for i in range(40):
        segs = []
        for x, s in ((xa[i], sa[i]), (xb[i], sb[i])):
            c, rot = np.asarray(x[:3]), np.asarray(quat_to_matrix(x[3:]))
            segs += [c - rot[:, 2] * float(s[1]), c + rot[:, 2] * float(s[1])]
        expect = _seg_dist_brute(*segs) - float(sa[i, 0]) - float(sb[i, 0])
        got = np.min(np.where(res.valid[i], res.dist[i], np.inf))
        np.testing.assert_allclose(got, expect, atol=2e-3)


def test_capsule_box_random_points_on_surfaces():
    xa, sa, xb, sb = _random_pairs(100, 2, 0.6)
    sa = sa.at[:, 0].multiply(0.3)
    res = jax.jit(jax.vmap(_col.capsule_box))(xa, sa, xb, sb)
    pa, pb = _surface_points(res)
    db = np.asarray(jax.jit(jax.vmap(_box_sdf_world))(xb, sb, pb))
    valid = np.asarray(res.valid)
    np.testing.assert_allclose(db[valid], 0.0, atol=1e-9)
    # point_a lies on an end-cap or mid-segment sphere, so within the capsule; a separated
    # mid-segment contact (interior minimum of the box distance) lies exactly on the capsule surface
    rot = np.asarray(quat_to_matrix(xa[:, 3:]))
    a0 = np.asarray(xa[:, :3]) - rot[:, :, 2] * np.asarray(sa[:, 1:2])
    a1 = np.asarray(xa[:, :3]) + rot[:, :, 2] * np.asarray(sa[:, 1:2])
    d = np.asarray(a1 - a0)[:, None]
    t = np.clip(np.sum((np.asarray(pa) - a0[:, None]) * d, -1) / np.sum(d * d, -1), 0.0, 1.0)
    seg_dist = np.linalg.norm(np.asarray(pa) - (a0[:, None] + t[..., None] * d), axis=-1)
    r = np.asarray(sa[:, :1])
    assert np.all(seg_dist[valid] <= np.broadcast_to(r, valid.shape)[valid] + 1e-9)
    mid = valid[:, 2] & (np.asarray(res.dist[:, 2]) > 0.0)  # the distance is C¹ outside the box
    assert mid.sum() > 5
    np.testing.assert_allclose(seg_dist[:, 2][mid], r[:, 0][mid], atol=1e-6)


# --------------------------------------------------------------------------- MuJoCo as an oracle
def _mj_size(kind, s):
    return {"sphere": f"{s[0]}", "capsule": f"{s[0]} {s[1]}", "cylinder": f"{s[0]} {s[1]}"}.get(
        kind, f"{s[0]} {s[1]} {s[2]}")


def _compare_with_mujoco(kind_a, kind_b, fn, n, seed):
    """(ours, mujoco) deepest distances and the dot product of their normals over random poses."""
    mujoco = pytest.importorskip("mujoco")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        sa, sb = rng.uniform(0.1, 0.5, (2, 3))
        q = rng.normal(size=(2, 4))
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        pa, pb = rng.normal(size=3) * 0.05, rng.normal(size=3) * 0.5
        xml = f"""<mujoco><worldbody>
          <body><freejoint/><geom type="{kind_a}" size="{_mj_size(kind_a, sa)}" margin="2"/></body>
          <body><freejoint/><geom type="{kind_b}" size="{_mj_size(kind_b, sb)}" margin="2"/></body>
        </worldbody></mujoco>"""
        m = mujoco.MjModel.from_xml_string(xml)
        d = mujoco.MjData(m)
        d.qpos[:] = np.concatenate([pa, q[0], pb, q[1]])  # MuJoCo quaternions are wxyz
        mujoco.mj_forward(m, d)
        if d.ncon == 0:
            continue
        k = int(np.argmin([c.dist for c in d.contact[: d.ncon]]))
        res = fn(tf(pa, q[0][[1, 2, 3, 0]]), jnp.asarray(sa), tf(pb, q[1][[1, 2, 3, 0]]), jnp.asarray(sb))
        dist = np.where(res.valid, res.dist, np.inf)
        j = int(np.argmin(dist))
        out.append((dist[j], d.contact[k].dist, float(np.dot(res.normal[j], d.contact[k].frame[:3]))))
    return np.array(out)


@pytest.mark.parametrize("pair", ["sphere-box", "sphere-capsule", "capsule-capsule", "sphere-cylinder", "capsule-box"])
def test_exact_pairs_match_mujoco_when_separated_or_shallow(pair):
    ka, kb = pair.split("-")
    res = _compare_with_mujoco(ka, kb, getattr(col, f"{ka}_{kb}"), 40, seed=len(pair))
    sel = res[:, 1] > -0.03  # MuJoCo's deep-penetration depths are heuristic for capsule pairs
    assert sel.sum() > 15
    np.testing.assert_allclose(res[sel, 0], res[sel, 1], atol=1e-9)
    np.testing.assert_allclose(res[sel, 2], 1.0, atol=1e-7)


def test_box_box_and_capsule_cylinder_against_mujoco():
    boxes = _compare_with_mujoco("box", "box", col.box_box, 60, seed=3)
    sep, pen = boxes[:, 1] > 0.0, boxes[:, 1] <= 0.0
    assert sep.sum() > 20 and pen.sum() > 20
    assert np.all(boxes[sep, 0] <= boxes[sep, 1] + 1e-9)  # SAT separation: a lower bound of the distance
    # penetrating: same depth and normal, except where MuJoCo's face preference picks a slightly
    # deeper axis than the least-penetration one (ours is then shallower by < 1e-3)
    same = np.isclose(boxes[pen, 0], boxes[pen, 1], atol=1e-9) & np.isclose(boxes[pen, 2], 1.0, atol=1e-9)
    assert same.mean() > 0.8
    assert np.all(boxes[pen, 0] >= boxes[pen, 1] - 1e-9)
    np.testing.assert_allclose(boxes[pen, 0], boxes[pen, 1], atol=1e-3)
    cyl = _compare_with_mujoco("capsule", "cylinder", col.capsule_cylinder, 40, seed=4)
    sep = cyl[:, 1] > 0.0
    assert sep.sum() > 15
    # ours is the exact distance of realised points; MuJoCo's convex solver stops within a tolerance
    assert np.all(cyl[sep, 0] <= cyl[sep, 1] + 1e-9)
    np.testing.assert_allclose(cyl[sep, 0], cyl[sep, 1], atol=5e-3)


# ----------------------------------------------------------------------------------------- meshes
def cube_mesh():
    """Unit-half-extent cube mesh as narrow-phase hull arrays ``(verts, vmask, planes, faces, edges)``."""
    v = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
    tris = []
    for axis in range(3):
        for sgn in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sgn
            face = [i for i in range(8) if v[i, axis] == sgn]
            c, u = v[face].mean(0), np.roll(n, 1)
            w = np.cross(n, u)
            f = [face[k] for k in np.argsort([np.arctan2((v[i] - c) @ w, (v[i] - c) @ u) for i in face])]
            for t in ((f[0], f[1], f[2]), (f[0], f[2], f[3])):
                if np.cross(v[t[1]] - v[t[0]], v[t[2]] - v[t[0]]) @ n < 0:
                    t = (t[0], t[2], t[1])
                tris.append(t)
    hull = Mesh(v, np.array(tris)).hull
    return tuple(x[0] for x in _col.stack_hulls([hull], jnp.float64))


def test_sphere_and_capsule_mesh_equal_box_versions():
    mesh = cube_mesh()
    xa, sa, xb, sb = _random_pairs(15, 5, 0.6)
    sa = sa.at[:, 0].multiply(0.4)
    for fm, fb in ((col.sphere_mesh, col.sphere_box), (col.capsule_mesh, col.capsule_box)):
        for i in range(15):
            rm, rb = fm(xa[i], sa[i], xb[i], sb[i], *mesh), fb(xa[i], sa[i], xb[i], sb[i])
            np.testing.assert_array_equal(rm.valid, rb.valid)
            v = np.asarray(rm.valid)
            np.testing.assert_allclose(np.asarray(rm.dist)[v], np.asarray(rb.dist)[v], atol=1e-9)
            np.testing.assert_allclose(np.asarray(rm.normal)[v], np.asarray(rb.normal)[v], atol=1e-7)


def test_box_and_mesh_resting_on_a_mesh():
    mesh = cube_mesh()
    big = s3(1.0, 1.0, 0.5)
    small = s3(0.3, 0.2, 0.1)
    xs = tf((0.1, -0.2, 0.59), qaa(Z, 0.4))
    for res in (col.box_mesh(xs, small, tf(), big, *mesh), col.mesh_mesh(xs, small, tf(), big, *mesh, *mesh)):
        d, p, n = active(res)
        deep = d < 0.0
        assert deep.sum() == 4
        np.testing.assert_allclose(d[deep], -0.01, atol=1e-12)
        np.testing.assert_allclose(n[deep], np.tile(-Z, (4, 1)), atol=1e-12)  # from the small box (A) down
        np.testing.assert_allclose(p[deep][:, 2], 0.495, atol=1e-12)
    gb = _jac(lambda xa, sa, xb, sb: _col.box_mesh(xa, sa, xb, sb, *mesh))(xs, small, tf(), big)
    assert all(np.all(np.isfinite(g)) for g in gb)


# ------------------------------------------------------------------------ cylinder feature pairs
TABLE = (tf(), s3(1.0, 1.0, 0.5))
CAN = s3(0.2, 0.3)


def test_cylinder_box_standing_lying_tilted():
    d, p, n = active(col.cylinder_box(tf((0.1, 0, 0.79)), CAN, *TABLE))
    np.testing.assert_allclose(np.sort(d)[:4], -0.01, atol=1e-12)
    np.testing.assert_allclose(n[np.argsort(d)[:4]], np.tile(-Z, (4, 1)), atol=1e-12)
    rolled = np.asarray(quat_mul(jnp.asarray(qaa([1, 0, 0], np.pi / 2)), jnp.asarray(qaa(Z, 0.77))))
    d, p, n = active(col.cylinder_box(tf((0.1, 0, 0.69), rolled), CAN, *TABLE))
    deep = d < 0.0
    np.testing.assert_allclose(d[deep], [-0.01, -0.01], atol=1e-12)
    np.testing.assert_allclose(np.sort(p[deep][:, 1]), [-0.3, 0.3], atol=1e-12)
    q = np.array([0.5, 0.3, 0.4, 0.7]) / np.linalg.norm([0.5, 0.3, 0.4, 0.7])
    az = np.asarray(quat_to_matrix(jnp.asarray(q)))[2, 2]
    res = col.cylinder_box(tf((0.1, 0, 0.69), q), CAN, *TABLE)
    lowest = 0.69 - 0.3 * abs(az) - 0.2 * np.sqrt(1 - az * az)
    np.testing.assert_allclose(np.min(res.dist), lowest - 0.5, atol=1e-12)
    grad_finite(col.cylinder_box, tf((0.1, 0, 0.79)), CAN, *TABLE)  # upright: rim direction degenerate
    fd_check(col.cylinder_box, tf((0.1, 0, 0.69), q), CAN, *TABLE)


def test_cylinder_cylinder_stacked_and_mesh_matches_box():
    lying = qaa([1, 0, 0], np.pi / 2)  # axis along world -Y
    d, p, n = active(col.cylinder_cylinder(tf((0, 0, 0), lying), CAN, tf((0, 0.05, 0.39), lying), CAN))
    deep = d < 0.0
    np.testing.assert_allclose(d[deep], [-0.01, -0.01], atol=1e-12)
    np.testing.assert_allclose(np.sort(p[deep][:, 1]), [-0.25, 0.3], atol=1e-12)  # ends of the overlap
    np.testing.assert_allclose(n[deep], np.tile(Z, (2, 1)), atol=1e-12)
    grad_finite(col.cylinder_cylinder, tf((0, 0, 0), lying), CAN, tf((0, 0.05, 0.39), lying), CAN)
    mesh = cube_mesh()
    xa, sa, xb, sb = _random_pairs(12, 6, 0.5)
    for i in range(12):
        rm, rb = col.cylinder_mesh(xa[i], sa[i], xb[i], sb[i], *mesh), col.cylinder_box(xa[i], sa[i], xb[i], sb[i])
        np.testing.assert_allclose(np.where(rm.valid, rm.dist, 9).min(), np.where(rb.valid, rb.dist, 9).min(),
                                   atol=1e-9)
