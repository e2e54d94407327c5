"""MuJoCo's inside wrapping (a side site inside the wrapping sphere / cylinder) and side sites on other bodies.

Oracles: MuJoCo C ``mj_forward`` (``ten_length``, ``ten_J``, ``ten_wrapnum``) on our own MJCF model, imported
through jaxart's MJCF reader, at random joint configurations: inside wrapping on a sphere and on a cylinder (side
sites on the geometry's body), a side site on the parent body inside the child's cylinder, and a world side site
that a sphere carries in and out of itself (MuJoCo decides "inside" at every evaluation); the same lengths from
the model that ``SolverMuJoCo`` builds; central finite differences of ``jax.grad`` of the wrapped length; finite
values and gradients at degenerate configurations. float64 (conftest).
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.dynamics.tendon_forces import tendon_kinematics
from jaxart.dynamics.tendon_jacobian import tendon_jacobian
from jaxart.dynamics.tendon_wrap import wrapped_length
from jaxart.sim.builder_tendons import TendonWrapGeom, TendonWrapSite

_MJCF = """
<mujoco model="inside_wrap">
  <compiler angle="radian"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="w0" pos="0.05 0.02 0.25"/>
    <site name="w1" pos="0.7 0.05 0.3"/>
    <site name="w_side" pos="0.32 0.0 0.02"/>
    <body name="a">
      <joint name="ja" type="hinge" axis="0 1 0"/>
      <geom name="arm_a" type="capsule" fromto="0 0 0 0.6 0 0" size="0.02" mass="1"/>
      <geom name="ball" type="sphere" size="0.1" pos="0.3 0 0" mass="0.3"/>
      <site name="ball_in" pos="0.31 0.01 0.02"/>
      <site name="a_end" pos="0.6 0.03 0.05"/>
      <site name="a_in_cyl" pos="0.8 0.01 0.015"/>
      <body name="b" pos="0.6 0 0">
        <joint name="jb" type="hinge" axis="0.2 1 0.1"/>
        <geom name="arm_b" type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.5"/>
        <geom name="cyl" type="cylinder" size="0.07 0.05" pos="0.2 0 0" axisangle="1 0.3 0 1.2" mass="0.1"/>
        <site name="cyl_in" pos="0.2 0.01 0.02"/>
        <site name="b_end" pos="0.4 -0.04 0.02"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <spatial name="sph_in"><site site="w0"/><geom geom="ball" sidesite="ball_in"/><site site="a_end"/></spatial>
    <spatial name="cyl_in"><site site="w1"/><geom geom="cyl" sidesite="cyl_in"/><site site="b_end"/></spatial>
    <spatial name="cyl_other"><site site="w1"/><geom geom="cyl" sidesite="a_in_cyl"/><site site="b_end"/></spatial>
    <spatial name="sph_world"><site site="w1"/><geom geom="ball" sidesite="w_side"/><site site="w0"/></spatial>
  </tendon>
</mujoco>
"""
_NAMES = ("sph_in", "cyl_in", "cyl_other", "sph_world")
# (side site, geom, radius) of each tendon, to classify the configurations
_SIDES = (("ball_in", "ball", 0.1), ("cyl_in", "cyl", 0.07), ("a_in_cyl", "cyl", 0.07), ("w_side", "ball", 0.1))


def _configs():
    """Random hinge angles; ``jb`` stays small, so the parent's side site stays inside the child's cylinder."""
    rng = np.random.default_rng(7)
    return np.stack([rng.uniform(-1.5, 1.5, 16), rng.uniform(-0.2, 0.2, 16)], axis=1)


@pytest.fixture(scope="module")
def imported():
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(_MJCF)
    assert not res["unsupported"] and list(res["tendons"]) == list(_NAMES)
    return b.finalize(dtype=jnp.float64), res["mj_model"]


@jax.jit
def _reduced(model, qs):
    """jaxart's lengths and length Jacobians per configuration."""
    def one(q):
        s = jaxart.eval_fk(model, q, jnp.zeros_like(q), model.state())
        length, _, _ = tendon_kinematics(model, s.joint_q, s.joint_qd, s.body_q, s.body_qd)
        return length, tendon_jacobian(model, q, s.body_q)

    return jax.vmap(one)(qs)


def _mujoco(m, qs):
    """MuJoCo C's lengths, dense Jacobians, wrap-point counts and whether each side site is inside its geom."""
    d = mujoco.MjData(m)
    out = []
    for q in qs:
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        jac = np.zeros((m.ntendon, m.nv))
        mujoco.mju_sparse2dense(jac, d.ten_J, m.ten_J_rownnz, m.ten_J_rowadr, m.ten_J_colind)
        inside = [np.linalg.norm(d.site(s).xpos - d.geom(g).xpos) < r for s, g, r in _SIDES]
        out.append((d.ten_length.copy(), jac, d.ten_wrapnum.copy(), np.array(inside)))
    return [np.array(x) for x in zip(*out, strict=True)]


def test_inside_wrapping_lengths_and_jacobians_match_mujoco_c(imported):
    model, m = imported
    qs = _configs()
    ref_len, ref_jac, wrapnum, inside = _mujoco(m, qs)
    length, jac = map(np.asarray, _reduced(model, jnp.asarray(qs)))
    np.testing.assert_allclose(length, ref_len, atol=1e-12)
    # MuJoCo's Newton iteration stops at a residual of 1e-6, which moves its touching point by ~1e-8
    np.testing.assert_allclose(jac, ref_jac, atol=1e-7)
    wrapped = wrapnum == 4
    for k, name in enumerate(_NAMES):  # every tendon wraps inside somewhere; the spheres' paths also go straight
        assert (wrapped[:, k] & inside[:, k]).any(), name
    assert (~wrapped[:, 0]).any() and (~wrapped[:, 3]).any()
    assert inside[:, 2].all()  # the parent's side site stays inside the child's cylinder
    assert inside[:, 3].any() and (~inside[:, 3]).any() and (wrapped[:, 3] & ~inside[:, 3]).any()


def test_bridge_maps_inside_and_other_body_side_sites(imported):
    """``SolverMuJoCo`` rebuilds the wrap geoms and side sites (on their own bodies) with equal lengths."""
    model, _ = imported
    solver = jaxart.solvers.SolverMuJoCo(model)
    assert solver.mj_model.ntendon == len(_NAMES)
    qs = _configs()
    length = np.asarray(_reduced(model, jnp.asarray(qs))[0])
    d = mujoco.MjData(solver.mj_model)
    for q, expect in zip(qs, length, strict=True):
        d.qpos[solver.layout.q_dst] = q[solver.layout.q_src]
        mujoco.mj_forward(solver.mj_model, d)
        np.testing.assert_allclose(d.ten_length, expect, atol=1e-12)
    side = solver.mj_model.site(f"{model.tendon.tendon_label[2]}__s1")
    geom = solver.mj_model.geom(f"{model.tendon.tendon_label[2]}__g1")
    assert int(side.bodyid[0]) != int(geom.bodyid[0])


@jax.jit
def _length_and_grad(xs, axis, side, cylinder):
    def f(x):
        return wrapped_length(x[:3], x[3:6], x[6:9], axis, 0.15, side, cylinder=cylinder, has_side=True)

    return jax.vmap(f)(xs), jax.vmap(jax.grad(f))(xs)


def test_inside_wrap_gradient_matches_finite_differences():
    """``jax.grad`` of the inside-wrapped length (sphere and cylinder) vs central differences; the side point only
    selects the branch, so the gradients of the endpoints and the centre sum to zero (translation invariance)."""
    rng = np.random.default_rng(2)
    axis = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    c = np.array([0.1, 0.0, 0.05])
    side = c + np.array([0.02, -0.03, 0.01])  # inside
    x0, x1 = np.array([-0.5, 0.4, 0.1]), np.array([0.6, 0.3, 0.0])  # the straight line misses: wraps inside
    eps = 1e-6
    for cyl in (False, True):
        x = np.concatenate([x0, x1, c]) + 1e-2 * rng.standard_normal(9)
        pts = jnp.asarray(np.concatenate([x[None], x + eps * np.eye(9), x - eps * np.eye(9)]))
        vals, grads = _length_and_grad(pts, jnp.asarray(axis), jnp.asarray(side), cyl)
        vals, g = np.asarray(vals), np.asarray(grads[0])
        straight = np.linalg.norm(x[3:6] - x[:3])
        assert vals[0] > straight + 1e-3  # really wrapped
        fd = (vals[1:10] - vals[10:]) / (2 * eps)
        np.testing.assert_allclose(g, fd, atol=1e-7)
        np.testing.assert_allclose(g[:3] + g[3:6] + g[6:], 0.0, atol=1e-10)


def test_inside_wrap_degenerate_configurations_stay_finite():
    """Endpoints collinear with the centre (same side, opposite sides), an endpoint on the surface or at the
    centre, a side point at the centre: finite lengths and gradients."""
    c, axis = np.zeros(3), np.array([0.0, 0.0, 1.0])
    cases = [((0.3, 0, 0), (0.5, 0, 0)), ((0.3, 0, 0), (-0.4, 0, 0)), ((0.15, 0, 0), (0.1, 0.5, 0)),
             ((0, 0, 0), (0.1, 0.5, 0)), ((0.3, 0.3, 0.1), (0.3, 0.3, 0.1)), ((0.3, 0.2, 0), (0.2, 0.3, 0))]
    rows = np.array([np.concatenate([a, b, c]) for a, b in cases])
    xs = jnp.asarray(np.resize(rows, (19, 9)))  # the shape of the gradient test's batch: one compilation
    for cyl in (False, True):
        vals, grads = _length_and_grad(xs, jnp.asarray(axis), jnp.zeros(3), cyl)
        assert np.all(np.isfinite(np.asarray(vals))) and np.all(np.isfinite(np.asarray(grads)))
        # collinear on one side: the path touches the circle on the shared ray (length |x0−p| + |p−x1| ≥ straight)
        np.testing.assert_allclose(vals[0], 0.15 + 0.35, atol=1e-12)


def test_builder_accepts_side_sites_inside_and_on_other_bodies():
    """The builder keeps the side site's own body; ``finalize`` resolves the rest length through it."""
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 1, 0))])
    s0 = b.add_site(link, xform=(0.5, 0, 0.05, 0, 0, 0, 1))
    s1 = b.add_site(-1, xform=(0, 0, 0.3, 0, 0, 0, 1))
    ball = b.add_shape_sphere(link, xform=(0.25, 0, 0, 0, 0, 0, 1), radius=0.1)
    inside_world = b.add_site(-1, xform=(0.26, 0, 0.01, 0, 0, 0, 1))  # inside the ball at q = 0
    b.add_tendon_spatial([TendonWrapSite(s1), TendonWrapGeom(ball, inside_world), TendonWrapSite(s0)], label="t")
    model = b.finalize(dtype=jnp.float64)
    assert list(np.asarray(model.tendon.tendon_attachment_body)) == [-1, 0, -1, 0]
    # closed form at q = 0 (the path lies in the x-z plane): the shortest path through the ball's disk
    e0, e1 = np.array([0.0, 0.3]) - [0.25, 0.0], np.array([0.5, 0.05]) - [0.25, 0.0]
    th = np.linspace(0.0, 2 * np.pi, 400001)
    p = 0.1 * np.stack([np.cos(th), np.sin(th)], 1)
    expect = np.min(np.linalg.norm(p - e0, axis=1) + np.linalg.norm(p - e1, axis=1))
    assert expect > np.linalg.norm(e1 - e0) + 1e-3
    np.testing.assert_allclose(model.tendon_springlength[0], [expect, expect], atol=1e-9)
