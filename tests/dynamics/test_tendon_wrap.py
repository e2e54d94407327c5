"""Spatial tendons wrapping around spheres and cylinders, with side sites and pulleys (MuJoCo semantics).

Oracles: MuJoCo C ``mj_forward`` (``ten_length``, ``ten_J``, ``ten_velocity``, ``ten_wrapnum``) on our own MJCF
model (a sphere on the first link, a cylinder with an oblique axis on the second, a pulley with divisor 2), at
configurations where each wrapping tendon is straight and where it wraps, with side sites on either side; the
same lengths from the model that ``SolverMuJoCo`` builds from the jaxart model; a ``SolverFeatherstone`` rollout
with tendon springs vs MuJoCo C ``mj_step``; central finite differences of the wrapped length. float64 (conftest).
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
from jaxart.dynamics.tendons import eval_tendon_joint_forces
from jaxart.sim.builder_tendons import TendonWrapGeom, TendonWrapPulley, TendonWrapSite
from jaxart.solvers.maximal.tendons import tendon_entries, tendon_speeds

_MJCF = """
<mujoco model="wrap">
  <compiler angle="radian"/>
  <option timestep="0.001" integrator="Euler"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="w0" pos="0 0 0.3"/>
    <site name="w1" pos="0.5 0.1 0.35"/>
    <site name="w2" pos="-0.2 0 0.1"/>
    <site name="w3" pos="0.9 -0.1 0.2"/>
    <body name="a">
      <joint name="ja" type="hinge" axis="0 1 0"/>
      <geom name="arm_a" type="capsule" fromto="0 0 0 0.6 0 0" size="0.02" mass="1"/>
      <geom name="ball" type="sphere" size="0.12" pos="0.3 0 0" mass="0.5"/>
      <site name="ball_up" pos="0.3 0.02 0.25"/>
      <site name="ball_down" pos="0.3 0 -0.25"/>
      <site name="a_end" pos="0.6 0 0.01"/>
      <body name="b" pos="0.6 0 0">
        <joint name="jb" type="hinge" axis="0.2 1 0"/>
        <geom name="arm_b" type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.5"/>
        <geom name="cyl" type="cylinder" size="0.06 0.05" pos="0.15 0 0" axisangle="1 0 0 1.3" mass="0.1"/>
        <site name="cyl_side" pos="0.15 0.05 -0.2"/>
        <site name="b_end" pos="0.4 -0.05 0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <spatial name="sph"><site site="w0"/><geom geom="ball"/><site site="a_end"/></spatial>
    <spatial name="sph_up" stiffness="30" springlength="0.5">
      <site site="w0"/><geom geom="ball" sidesite="ball_up"/><site site="a_end"/></spatial>
    <spatial name="sph_down"><site site="w0"/><geom geom="ball" sidesite="ball_down"/><site site="a_end"/></spatial>
    <spatial name="cyl" stiffness="20" springlength="0.6">
      <site site="w1"/><geom geom="cyl"/><site site="b_end"/></spatial>
    <spatial name="cyl_side"><site site="w1"/><geom geom="cyl" sidesite="cyl_side"/><site site="b_end"/></spatial>
    <spatial name="pulley" stiffness="40" springlength="0.9">
      <site site="w2"/><site site="a_end"/><pulley divisor="2"/><site site="w3"/><site site="b_end"/></spatial>
  </tendon>
</mujoco>
"""
_WRAPS = ("sph", "sph_up", "sph_down", "cyl", "cyl_side")
# hinge angles (ja, jb): straight and wrapped cases of every wrapping tendon (asserted below)
_QS = np.array([[0.0, 0.0], [0.6, -0.4], [-0.5, 1.2], [1.2, 0.8], [-1.0, -1.1], [0.3, 2.2], [2.0, -2.0],
                [-2.4, 0.5]])


def _mj_eval(m, q, qd):
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = q, qd
    mujoco.mj_forward(m, d)
    jac = np.zeros((m.ntendon, m.nv))
    mujoco.mju_sparse2dense(jac, d.ten_J, m.ten_J_rownnz, m.ten_J_rowadr, m.ten_J_colind)
    return d.ten_length.copy(), jac, d.ten_velocity.copy(), d.ten_wrapnum.copy(), d.qfrc_passive.copy()


@pytest.fixture(scope="module")
def imported():
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(_MJCF)
    assert not res["unsupported"] and list(res["tendons"]) == [*_WRAPS, "pulley"]
    return b.finalize(dtype=jnp.float64), res["mj_model"]


@jax.jit
def _reduced(model, qs, qds):
    """Reduced-coordinate lengths, rates (one evaluation of the shared kinematics) and Jacobians, per state."""
    def one(q, qd):
        s = jaxart.eval_fk(model, q, qd, model.state())
        length, speed, _ = tendon_kinematics(model, s.joint_q, s.joint_qd, s.body_q, s.body_qd)
        return length, speed, tendon_jacobian(model, q, s.body_q)

    return jax.vmap(one)(qs, qds)


@jax.jit
def _maximal_and_forces(model, qs, qds):
    """The maximal solvers' lengths and rates, and the generalized tendon forces ``Jᵀ f``, per state."""
    def one(q, qd):
        s = jaxart.eval_fk(model, q, qd, model.state())
        ent = tendon_entries(model, s.body_q, s.joint_q)
        return ent.length, tendon_speeds(ent, s.body_qd), eval_tendon_joint_forces(model, s)

    return jax.vmap(one)(qs, qds)


def _references(m):
    rng = np.random.default_rng(0)
    qds = rng.uniform(-2.0, 2.0, _QS.shape)
    return qds, [np.array(x) for x in zip(*[_mj_eval(m, q, qd) for q, qd in zip(_QS, qds, strict=True)],
                                          strict=True)]


def test_lengths_jacobians_and_rates_match_mujoco_c(imported):
    model, m = imported
    qds, (ref_len, ref_jac, ref_rate, wrapnum, _) = _references(m)
    length, rate, jac = map(np.asarray, _reduced(model, jnp.asarray(_QS), jnp.asarray(qds)))
    np.testing.assert_allclose(length, ref_len, atol=1e-12)
    np.testing.assert_allclose(jac, ref_jac, atol=1e-10)
    np.testing.assert_allclose(rate, ref_rate, atol=1e-10)
    for k, name in enumerate(_WRAPS):  # 2 wrap points straight, 4 wrapped: both cases are covered
        assert {2, 4} <= set(wrapnum[:, k]), (name, wrapnum[:, k])
    # the side sites choose different sides: where both wrap, the lengths differ
    both = (wrapnum[:, 1] == 4) & (wrapnum[:, 2] == 4)
    assert both.any() and np.all(np.abs(length[both, 1] - length[both, 2]) > 1e-3)
    # pulley: the second branch counts half
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    site = {n: d.site(n).xpos for n in ("w2", "a_end", "w3", "b_end")}
    half = np.linalg.norm(site["a_end"] - site["w2"]) + 0.5 * np.linalg.norm(site["b_end"] - site["w3"])
    np.testing.assert_allclose(length[0, 5], half, atol=1e-12)


@pytest.mark.slow
def test_maximal_entries_and_spring_forces_match_mujoco_c(imported):
    """SolverXPBD/SolverSemiImplicit's per-body gradient entries (lengths, rates) and the generalized spring forces
    ``Jᵀ f`` (stiffness on a sphere, a cylinder and a pulley tendon) vs MuJoCo's ``ten_*`` and ``qfrc_passive``."""
    model, m = imported
    qds, (ref_len, _, ref_rate, _, ref_passive) = _references(m)
    length, rate, passive = map(np.asarray, _maximal_and_forces(model, jnp.asarray(_QS), jnp.asarray(qds)))
    np.testing.assert_allclose(length, ref_len, atol=1e-12)
    np.testing.assert_allclose(rate, ref_rate, atol=1e-10)
    np.testing.assert_allclose(passive, ref_passive, atol=1e-9)
    assert np.abs(passive).max() > 1.0


def test_bridge_maps_wraps_and_pulleys(imported):
    """``SolverMuJoCo`` builds MuJoCo wrap geoms, side sites and pulleys whose lengths equal jaxart's."""
    model, _ = imported
    solver = jaxart.solvers.SolverMuJoCo(model)
    assert solver.mj_model.ntendon == 6
    length = np.asarray(_reduced(model, jnp.asarray(_QS), jnp.zeros(_QS.shape))[0])  # compiled by the test above
    for q, expect in zip(_QS, length, strict=True):
        d = mujoco.MjData(solver.mj_model)
        d.qpos[solver.layout.q_dst] = q[solver.layout.q_src]
        mujoco.mj_forward(solver.mj_model, d)
        np.testing.assert_allclose(d.ten_length, expect, atol=1e-12)


@pytest.mark.slow
def test_featherstone_rollout_with_wrapped_tendon_springs_matches_mujoco_c(imported):
    """Explicit tendon springs over wrapped and pulley paths: SolverFeatherstone vs MuJoCo C ``mj_step`` (Euler) on
    the model SolverMuJoCo converts (same semi-implicit Euler, so the trajectories agree to round-off)."""
    model, _ = imported
    dt, steps = 1e-3, 300
    mj = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    mj.mj_model.opt.timestep = dt
    state = jaxart.eval_fk(model, jnp.asarray([1.2, 0.8]), jnp.asarray([0.5, -1.0]), model.state())
    d = mj.to_mj_data(state)
    mujoco.mj_forward(mj.mj_model, d)
    assert list(d.ten_wrapnum[[1, 3]]) == [4, 4]  # the sprung sphere and cylinder tendons start wrapped
    for _ in range(steps):
        mujoco.mj_step(mj.mj_model, d)
    out, _ = jaxart.rollout(jaxart.solvers.SolverFeatherstone(model, drive="explicit"), state, None, dt=dt,
                            length=steps, remat=None)
    slack = model.replace(tendon_stiffness=jnp.zeros_like(model.tendon_stiffness))
    free, _ = jaxart.rollout(jaxart.solvers.SolverFeatherstone(slack, drive="explicit"), state, None, dt=dt,
                             length=steps, remat=None)
    q_mj = np.asarray(d.qpos)[mj.layout.q_dst[np.argsort(mj.layout.q_src)]]
    np.testing.assert_allclose(out.joint_q, q_mj, atol=1e-8)
    assert np.abs(np.asarray(free.joint_q) - q_mj).max() > 0.02


@jax.jit
def _length_and_grad(xs, axis, side, cylinder, has_side):
    def f(x):
        return wrapped_length(x[:3], x[3:6], x[6:9], axis, 0.15, side, cylinder=cylinder, has_side=has_side)

    return jax.vmap(f)(xs), jax.vmap(jax.grad(f))(xs)


def test_wrapped_length_gradient_matches_finite_differences():
    """``jax.grad`` of the wrapped length (sphere and cylinder, with and without a side point) vs central
    differences, and finite gradients where the segment is straight."""
    rng = np.random.default_rng(1)
    axis = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    c, side = np.array([0.1, 0.0, 0.05]), np.array([0.1, 0.3, 0.2])
    cases = [(np.array([-0.5, 0.05, 0.1]), np.array([0.6, -0.1, 0.0])),  # crosses: wraps
             (np.array([-0.5, 0.6, 0.1]), np.array([0.6, 0.5, 0.0]))]    # misses: straight
    for cyl in (False, True):
        for sd in (None, side):
            for x0, x1 in cases:
                x = np.concatenate([x0, x1, c]) + 1e-3 * rng.standard_normal(9)
                eps = 1e-6
                pts = jnp.asarray(np.concatenate([x[None], x + eps * np.eye(9), x - eps * np.eye(9)]))
                vals, grads = _length_and_grad(pts, jnp.asarray(axis), jnp.asarray(side), cyl, sd is not None)
                vals, g = np.asarray(vals), np.asarray(grads[0])
                assert np.all(np.isfinite(g))
                fd = (vals[1:10] - vals[10:]) / (2 * eps)
                np.testing.assert_allclose(g, fd, atol=1e-6)
                # translation invariance: the gradients of the three points sum to zero
                np.testing.assert_allclose(g[:3] + g[3:6] + g[6:], 0.0, atol=1e-10)


def test_builder_wrap_validation():
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 1, 0))])
    s0 = b.add_site(link, xform=(0.5, 0, 0, 0, 0, 0, 1))
    s1 = b.add_site(-1, xform=(0, 0, 0.05, 0, 0, 0, 1))
    ball = b.add_shape_sphere(link, xform=(0.25, 0, 0, 0, 0, 0, 1), radius=0.1)
    box = b.add_shape_box(link, hx=0.1, hy=0.1, hz=0.1)
    ell = b.add_shape_ellipsoid(link, rx=0.1, ry=0.2, rz=0.1)
    site0, site1 = TendonWrapSite(s0), TendonWrapSite(s1)
    for geom, name in ((box, "BOX"), (ell, "ELLIPSOID")):
        with pytest.raises(NotImplementedError, match=f"label='t'.*type {name}"):
            b.add_tendon_spatial([site1, TendonWrapGeom(geom), site0], label="t")
    with pytest.raises(ValueError, match="between two points"):
        b.add_tendon_spatial([site1, site0, TendonWrapGeom(ball)], label="t")
    with pytest.raises(ValueError, match="pulley may not"):
        b.add_tendon_spatial([site1, site0, TendonWrapPulley(2.0)], label="t")
    with pytest.raises(ValueError, match="neighbour that is not a pulley"):
        b.add_tendon_spatial([site1, TendonWrapPulley(2.0), site0, (link, (0.1, 0, 0))], label="t")
    with pytest.raises(ValueError, match="divisor"):
        b.add_tendon_spatial([site1, site0, TendonWrapPulley(0.0), site1, site0], label="t")
    assert b.tendon_count == 0
    b.add_tendon_spatial([TendonWrapPulley(2.0), site1, TendonWrapGeom(ball), site0], label="t", target_length=0.0)
    model = b.finalize(dtype=jnp.float64)  # springlength -1: the initial length (one compiled evaluation)
    # closed form in the x-z plane: tangent legs plus the arc between the tangent points, halved by the pulley
    a, c, r = np.array([0.0, 0.0, 0.05]) - [0.25, 0, 0], np.array([0.5, 0.0, 0.0]) - [0.25, 0, 0], 0.1
    na, nc = np.linalg.norm(a), np.linalg.norm(c)
    arc = np.arccos(a @ c / (na * nc)) - np.arccos(r / na) - np.arccos(r / nc)
    expect = 0.5 * (np.sqrt(na**2 - r**2) + np.sqrt(nc**2 - r**2) + r * arc)
    np.testing.assert_allclose(model.tendon_springlength[0], [expect, expect], atol=1e-12)
