"""Height-field pairs (sphere, capsule, ellipsoid, cylinder, box, mesh) against MuJoCo C's ``mj_collision``.

MuJoCo collides each triangular prism under the shape with the shape (one contact per overlapping
prism); jaxart keeps the deepest distinct ones. Every active jaxart contact must match a MuJoCo
contact (distance and normal), and the deepest contacts must agree. The default tier runs the
sphere and the capsule (closed forms: contact points too), the cylinder and the ellipsoid; the slow tier the
box and the mesh.
"""

import functools

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.collision import collide  # noqa: E402
from jaxart.collision.narrow_hfield import hfield_ellipsoid  # noqa: E402

PARTNERS = {
    "sphere": 'type="sphere" size="0.11"',
    "capsule": 'type="capsule" size="0.07 0.12"',
    "ellipsoid": 'type="ellipsoid" size="0.09 0.16 0.11"',
    "cylinder": 'type="cylinder" size="0.1 0.08"',
    "box": 'type="box" size="0.12 0.1 0.09"',
    "mesh": 'type="mesh" mesh="m"',
}
MESH = "0.2 0 0  -0.1 0.17 0  -0.1 -0.17 0  0 0 0.2  0.05 0.02 -0.12  0.02 -0.05 -0.1"
ELEV = np.array([[0.1, 0.3, 0.2, 0.5, 0.4, 0.0],
                 [0.6, 0.2, 0.8, 0.3, 0.1, 0.2],
                 [0.2, 0.9, 0.4, 1.0, 0.5, 0.3],
                 [0.4, 0.1, 0.6, 0.2, 0.7, 0.6],
                 [0.0, 0.5, 0.3, 0.4, 0.2, 0.8]])
SIZE = (0.6, 0.5, 0.25, 0.1)


def scene_xml(partner: str) -> str:
    elev = " ".join(f"{v:g}" for v in ELEV.ravel())
    return (f'<mujoco><asset><mesh name="m" vertex="{MESH}"/>'
            f'<hfield name="h" nrow="5" ncol="6" size="{" ".join(map(str, SIZE))}" elevation="{elev}"/></asset>'
            '<worldbody><geom name="terrain" type="hfield" hfield="h" pos="0.05 -0.02 0.1" euler="0.1 -0.05 0.3"/>'
            f'<body name="b"><freejoint/><geom name="g" {PARTNERS[partner]}/></body></worldbody></mujoco>')


@functools.cache
def scene(partner: str):
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(scene_xml(partner))
    model = b.finalize(dtype=jnp.float64)
    run = jax.jit(lambda q: collide(model, model.state().replace(body_q=q)))
    return model, res["mj_model"], run


def qaa(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([axis * np.sin(angle / 2), [np.cos(angle / 2)]])


#: (x, y, z) of the shape in the terrain frame's neighbourhood and its orientation.
POSES = [((0.1, 0.05, 0.32), qaa((1, 2, 0.5), 0.7)),
         ((-0.25, 0.2, 0.3), qaa((0.3, -1, 1), 1.1)),
         ((0.3, -0.2, 0.26), qaa((0, 0, 1), 0.0))]


def compare(partner: str, pos, quat):
    """Match jaxart's active contacts to MuJoCo's.

    Returns:
        ``(max dist error, max normal error, deepest MuJoCo dist, max point error)``.
    """
    model, m, run = scene(partner)
    d = mujoco.MjData(m)
    d.qpos[:3], d.qpos[3:7] = pos, np.roll(quat, 1)
    mujoco.mj_forward(m, d)
    mj_dist = np.array([c.dist for c in d.contact[: d.ncon]])
    mj_n = np.array([c.frame[:3] for c in d.contact[: d.ncon]])  # terrain (geom1) -> shape
    mj_p = np.array([c.pos for c in d.contact[: d.ncon]])
    assert d.ncon > 0 and all(c.geom1 == 0 for c in d.contact[: d.ncon])
    body_q = np.concatenate([d.xpos[1:], np.roll(d.xquat[1:], -1, axis=1)], axis=1)
    out = run(jnp.asarray(body_q))
    act = np.asarray(out.active) & (np.asarray(out.separation) < 0.0)  # MuJoCo (gap 0): penetrating prisms only
    sep, nrm, pts = (np.asarray(x)[act] for x in (out.separation, out.normal, out.point))
    assert len(sep) > 0
    errs = []
    for s, n, p in zip(sep, nrm, pts, strict=True):  # each jaxart contact is one of MuJoCo's prism contacts
        k = np.argmin(np.abs(mj_dist - s) + np.linalg.norm(mj_n - n, axis=1))
        errs.append((abs(mj_dist[k] - s), np.linalg.norm(mj_n[k] - n), np.linalg.norm(mj_p[k] - p)))
    errs = np.array(errs)
    deepest = abs(sep.min() - mj_dist.min())
    return max(errs[:, 0].max(), deepest), errs[:, 1].max(), mj_dist.min(), errs[:, 2].max()


#: Contact-point tolerance [m] where both sides' witnesses are unique (closed forms against MuJoCo's prisms).
POINT_TOL = {"sphere": 1e-9, "capsule": 1e-4}


def check(partner: str):
    for pos, quat in POSES:
        dist_err, normal_err, deepest, point_err = compare(partner, pos, quat)
        assert deepest < 0.0
        # MuJoCo's EPA stops at ccd_tolerance 1e-6; polytope-polytope normals are exact on both sides
        assert dist_err < 1e-5 and normal_err < 5e-3, (partner, pos, dist_err, normal_err)
        assert point_err < POINT_TOL.get(partner, np.inf), (partner, pos, point_err)


def test_hfield_sphere_matches_mujoco():
    check("sphere")


def test_hfield_capsule_matches_mujoco():
    """The closed-form segment–prism contact: depth, normal and point per prism."""
    check("capsule")


_UNRESOLVED = ("box and mesh against height-field prisms: some of MuJoCo 4.0's per-prism contacts report a depth "
               "below the exact separating-axis minimum, and below the prisms' overlap along MuJoCo's own normal "
               "(its EPA stops on a face inside the Minkowski difference); test_box_on_flat_hfield_closed_form "
               "checks jaxart against the closed form instead")


@pytest.mark.parametrize("partner", ["cylinder", "ellipsoid"])
def test_hfield_smooth_convex_matches_mujoco(partner):
    """The separating-axis maxima over faces, edge arcs, caps, barrels and vertices: depth and normal per prism."""
    check(partner)


@pytest.mark.slow
@pytest.mark.parametrize("partner", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=_UNRESOLVED))
                                     for k in ("box", "mesh")])  # the others run in the default tier
def test_every_hfield_pair_matches_mujoco(partner):
    check(partner)


def test_hfield_gradient_matches_finite_differences():
    """d(deepest distance)/d(position) of a round ellipsoid on a sloped prism face: autodiff vs central differences."""
    heights = jnp.asarray([[0.0, 0.1, 0.3], [0.05, 0.2, 0.25], [0.1, 0.15, 0.4]])
    info = jnp.asarray([0.5, 0.5, 3.0, 3.0, -0.1])
    xa = jnp.asarray([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    sa, sb = jnp.ones(3), jnp.asarray([0.1, 0.1, 0.1])

    def deepest(p):
        xb = jnp.concatenate([p, jnp.asarray([0.0, 0.0, 0.0, 1.0])])
        r = hfield_ellipsoid(xa, sa, xb, sb, heights, info, window=(2, 2))
        return jnp.min(jnp.where(r.valid, r.dist, jnp.inf))

    vg = jax.jit(jax.value_and_grad(deepest))
    p0 = jnp.asarray([0.12, -0.1, 0.18])
    val, g = vg(p0)
    eps = 1e-6
    fd = [(vg(p0.at[i].add(eps))[0] - vg(p0.at[i].add(-eps))[0]) / (2 * eps) for i in range(3)]
    assert float(val) < 0.0
    np.testing.assert_allclose(g, fd, atol=1e-6)
    assert abs(np.linalg.norm(g) - 1.0) < 1e-6  # a sphere's distance moves at unit speed along the normal


@pytest.mark.slow
def test_box_on_flat_hfield_closed_form():
    """A box tilted about x over a flat height field: deepest prism contact = the box face's depth, closed form."""
    b = jaxart.ModelBuilder()
    b.add_shape_heightfield(heightfield=jaxart.Heightfield(np.zeros((5, 5)), hx=1.0, hy=1.0, base=0.1), label="t")
    body = b.add_body(mass=1.0, inertia=np.eye(3) * 0.01, label="box")
    h = np.array([0.12, 0.1, 0.09])
    b.add_shape_box(body, hx=h[0], hy=h[1], hz=h[2])
    model = b.finalize(dtype=jnp.float64)
    c = np.array([0.05, 0.03, 0.08])
    body_q = jnp.asarray(np.concatenate([c, qaa((1, 0, 0), 0.4)])[None])
    out = jax.jit(lambda q: collide(model, model.state().replace(body_q=q)))(body_q)
    sep = np.where(np.asarray(out.active), np.asarray(out.separation), np.inf)
    k = int(np.argmin(sep))
    y_axis = np.array([0.0, np.cos(0.4), np.sin(0.4)])
    # the prisms touching y = 0 from below are pushed out of the box along its -y face normal
    assert sep[k] == pytest.approx(-(h[1] - y_axis @ c), abs=1e-9)
    np.testing.assert_allclose(np.asarray(out.normal[k]), y_axis, atol=1e-9)
