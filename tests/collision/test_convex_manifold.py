"""Convex narrow phase on mesh hulls: edge–edge crossings against MuJoCo, resting manifolds, cylinders.

Penetration depth and normal of edge–edge configurations are checked against MuJoCo C
(``mj_collision``) on the same MJCF model; resting stacks and edge-on-barrel contacts against
closed forms.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from meshgen import grid_box, icosphere

import jaxart
from jaxart import collision as col

jax.config.update("jax_enable_x64", True)
HALF = np.array([0.5, 0.4, 0.3])
S2 = np.sqrt(0.5)


def _quat_wxyz(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.r_[np.cos(angle / 2), a * np.sin(angle / 2)]


def _fmt(x):
    return " ".join(f"{v:.15g}" for v in np.ravel(x))


def _crossing_xml(geom_a: str, zb: float, yaw: float) -> str:
    """A static geom turned 45° about X and a free mesh box turned 45° about Y (then ``yaw``), edges crossing."""
    v, f = grid_box(HALF, 13)
    qa = _quat_wxyz([1, 0, 0], np.pi / 4)
    qy = _quat_wxyz([0, 1, 0], np.pi / 4)
    qz = _quat_wxyz([0, 0, 1], yaw)
    qb = np.r_[qz[0] * qy[0] - qz[1:] @ qy[1:], qz[0] * qy[1:] + qy[0] * qz[1:] + np.cross(qz[1:], qy[1:])]
    a = ('type="box" size="' + _fmt(HALF) + '"') if geom_a == "box" else 'type="mesh" mesh="box"'
    return f"""<mujoco><asset><mesh name="box" vertex="{_fmt(v)}" face="{_fmt(f)}"/></asset>
      <worldbody><geom name="a" {a} quat="{_fmt(qa)}"/>
      <body name="b" pos="0.03 -0.02 {zb:.15g}"><freejoint/><geom name="b" type="mesh" mesh="box" quat="{_fmt(qb)}"/>
      </body></worldbody></mujoco>"""


def _jaxart_contacts(xml: str):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = b.add_mjcf(xml)
    model = b.finalize(dtype=jnp.float64)
    st = model.state()
    st = jaxart.eval_fk(model, st.joint_q, st.joint_qd, st)
    return res, jax.jit(col.collide)(model, st)


@pytest.mark.parametrize("geom_a", ["mesh", "box"])
def test_edge_edge_crossing_matches_mujoco(geom_a):
    depth = 0.03
    zb = (HALF[1] + HALF[2]) * S2 + (HALF[0] + HALF[2]) * S2 - depth  # top edge of A, bottom edge of B
    for yaw in (0.5,):
        xml = _crossing_xml(geom_a, zb, yaw)
        m = mujoco.MjModel.from_xml_string(xml)
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        assert d.ncon >= 1
        k = int(np.argmin(d.contact.dist[:d.ncon]))
        mj_dist, mj_normal = d.contact.dist[k], d.contact.frame[k, :3]
        res, c = _jaxart_contacts(xml)
        act = np.asarray(c.active)
        sep = np.asarray(c.separation)[act]
        i = int(np.argmin(sep))
        normal = np.asarray(c.normal)[act][i]
        a_is_geom1 = int(np.asarray(c.shape_a)[act][i]) == res["shapes"][m.geom(int(d.contact.geom[k, 0])).name]
        np.testing.assert_allclose(sep[i], mj_dist, atol=1e-6)
        np.testing.assert_allclose(sep[i], -depth, atol=1e-6)  # closed form (MuJoCo stores mesh vertices in float32)
        np.testing.assert_allclose(normal, mj_normal if a_is_geom1 else -mj_normal, atol=1e-6)
        np.testing.assert_allclose(np.abs(normal), [0.0, 0.0, 1.0], atol=1e-6)
        assert act.sum() == 1  # one edge–edge contact


def _hull_args(mesh):
    return tuple(x[0] for x in col.stack_hulls([mesh.hull], jnp.float64))


def _tf(p=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), angle=0.0):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    return jnp.asarray(np.r_[p, a * np.sin(angle / 2), np.cos(angle / 2)])


def test_mesh_mesh_resting_stack_manifold_and_gradients():
    """Pairs: a box resting on a big box (4 points), a sphere hull on it, two boxes' edges crossing (1 point)."""
    big = jaxart.Mesh(*grid_box([1.0, 1.0, 0.5], 13))
    small = jaxart.Mesh(*grid_box([0.3, 0.2, 0.1], 6))
    ball = jaxart.Mesh(*icosphere(0.2, 2))
    brick = jaxart.Mesh(*grid_box(HALF, 3))
    one = jnp.ones((3, 3))
    xs = _tf((0.1, -0.2, 0.59), angle=0.4)  # the small box 0.01 into the big box's top face
    xb = _tf((0.0, 0.0, 0.69), (1.0, 1.0, 0.0), 0.3)  # a tilted sphere hull touching it
    zc = (HALF[1] + HALF[2]) * S2 + (HALF[0] + HALF[2]) * S2 - 0.03
    xc = _tf((0.03, -0.02, zc), (0.1, 1.0, 0.0), np.pi / 4)  # edge over edge, 0.03 deep, slightly skew
    xa = jnp.stack([_tf(), _tf(), _tf(axis=(1.0, 0.0, 0.0), angle=np.pi / 4)])
    arr_a = col.stack_hulls([big.hull, big.hull, brick.hull], jnp.float64)
    arr_b = col.stack_hulls([small.hull, ball.hull, brick.hull], jnp.float64)

    def run(x):
        return jax.vmap(col.mesh_mesh)(xa, one, x, one, *arr_a, *arr_b)

    def deepest(x):
        r = run(x)
        return jnp.min(jnp.where(r.valid, r.dist, 9.0), axis=1)

    xsb = jnp.stack([xs, xb, xc])
    jrun = jax.jit(run)
    res = jrun(xsb)
    v = np.asarray(res.valid[0])
    assert v.sum() == 4
    np.testing.assert_allclose(np.asarray(res.dist[0])[v], -0.01, atol=1e-12)
    np.testing.assert_allclose(np.asarray(res.normal[0])[v], np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-12)
    np.testing.assert_allclose(np.asarray(res.point[0])[v][:, 2], 0.495, atol=1e-12)
    corners = np.asarray(xs[:2]) + np.array([[0.3 * sx, 0.2 * sy] for sx in (-1, 1) for sy in (-1, 1)]) @ np.array(
        [[np.cos(0.4), np.sin(0.4)], [-np.sin(0.4), np.cos(0.4)]])
    got = np.asarray(res.point[0])[v][:, :2]
    assert np.max(np.min(np.linalg.norm(got[:, None] - corners[None], axis=-1), axis=1)) < 1e-9
    # the sphere hull: its lowest vertex is the contact
    lowest = float(np.min((np.asarray(xb[:3]) + ball.hull.vertices @ _rot(xb).T)[:, 2]))
    np.testing.assert_allclose(np.min(np.where(res.valid[1], res.dist[1], 9.0)), lowest - 0.5, atol=1e-12)
    assert int(res.valid[2].sum()) == 1 and float(res.dist[2, 0]) < -0.02
    # gradients: +Z in position for the resting pairs; the edge–edge depth matches central differences
    g = np.asarray(jax.jit(jax.grad(lambda x: jnp.sum(deepest(x))))(xsb))
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g[:2, :3], [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]], atol=1e-9)
    def edge_depth(x):
        r = jrun(x)
        return float(np.min(np.where(r.valid[2], r.dist[2], 9.0)))

    for k in range(7):
        e = jnp.zeros_like(xsb).at[2, k].set(1e-6)
        np.testing.assert_allclose((edge_depth(xsb + e) - edge_depth(xsb - e)) / 2e-6, g[2, k], atol=1e-6)


def _rot(x):
    q = np.asarray(x[3:])
    w, v = q[3], q[:3]
    return (w * w - v @ v) * np.eye(3) + 2 * np.outer(v, v) + 2 * w * np.array(
        [[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def test_box_edge_crossing_cylinder_barrel():
    """A box edge crossing a lying cylinder's barrel with both edge vertices outside (edge–barrel contact)."""
    cyl_x = _tf(axis=(1.0, 0.0, 0.0), angle=np.pi / 2)  # cylinder axis along world Y
    cyl_s = jnp.array([0.2, 0.5, 0.0])
    half = jnp.full(3, 0.5)
    xb = _tf((0.0, 0.0, 0.5 * np.sqrt(2.0) + 0.19), (1.0, 0.0, 0.0), np.pi / 4)  # bottom edge along X at z = 0.19
    mesh = jaxart.Mesh(*grid_box([0.5, 0.5, 0.5], 4))

    @jax.jit
    def both(xb):
        return (col.cylinder_mesh(cyl_x, cyl_s, xb, jnp.ones(3), *_hull_args(mesh)),
                col.cylinder_box(cyl_x, cyl_s, xb, half))

    for res in both(xb):
        d = np.where(res.valid, res.dist, 9.0)
        k = int(np.argmin(d))
        np.testing.assert_allclose(d[k], -0.01, atol=1e-6)
        np.testing.assert_allclose(np.asarray(res.normal)[k], [0.0, 0.0, 1.0], atol=1e-4)


def test_cylinders_crossing_at_mid_length():
    """Two cylinders crossing in an X (barrel on barrel, every rim point outside the other cylinder)."""
    along_x = _tf(axis=(0.0, 1.0, 0.0), angle=np.pi / 2)
    along_y = _tf((0.05, -0.1, 0.37), axis=(1.0, 0.0, 0.0), angle=np.pi / 2)
    sa, sb = jnp.array([0.2, 0.6, 0.0]), jnp.array([0.18, 0.5, 0.0])
    res = jax.jit(col.cylinder_cylinder)(along_x, sa, along_y, sb)
    d = np.where(res.valid, res.dist, 9.0)
    k = int(np.argmin(d))
    np.testing.assert_allclose(d[k], 0.37 - 0.38, atol=1e-12)
    np.testing.assert_allclose(np.asarray(res.normal)[k], [0.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(np.asarray(res.point)[k], [0.05, 0.0, 0.195], atol=1e-12)  # over both axes
