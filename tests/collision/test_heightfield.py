"""Heightfield shapes end to end: builder, SolverMuJoCo conversion and contacts, MJCF import, collide errors."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.sim.heightfield import DEFAULT_HFIELD_BASE, Heightfield  # noqa: E402
from jaxart.sim.validate import np_quat_rotate  # noqa: E402

RAW = np.array([[0.0, 0.2, 0.5, 0.1],
                [0.3, 0.9, 0.4, 0.2],
                [0.6, 0.7, 1.0, 0.8]])  # nrow=3 (y), ncol=4 (x), asymmetric


def world_heights(hf: Heightfield, xform, scale=(1.0, 1.0, 1.0)) -> np.ndarray:
    """World points (nrow, ncol, 3) of a heightfield's grid vertices (the definition in the module docstring)."""
    xs = np.linspace(-hf.hx, hf.hx, hf.ncol) * scale[0]
    ys = np.linspace(-hf.hy, hf.hy, hf.nrow) * scale[1]
    gx, gy = np.meshgrid(xs, ys)
    local = np.stack([gx, gy, hf.heights * scale[2]], axis=-1)
    p, q = np.asarray(xform[0], float), np.asarray(xform[1], float)
    return p + np.stack([np_quat_rotate(q, v) for v in local.reshape(-1, 3)]).reshape(local.shape)


def mj_world_heights(m: mujoco.MjModel, g: int) -> np.ndarray:
    """The same vertices computed from a compiled MuJoCo hfield geom (MuJoCo's convention)."""
    k = int(m.geom_dataid[g])
    nrow, ncol, adr = int(m.hfield_nrow[k]), int(m.hfield_ncol[k]), int(m.hfield_adr[k])
    sx, sy, sz, _ = m.hfield_size[k]
    data = m.hfield_data[adr:adr + nrow * ncol].reshape(nrow, ncol)
    gx, gy = np.meshgrid(np.linspace(-sx, sx, ncol), np.linspace(-sy, sy, nrow))
    local = np.stack([gx, gy, data * sz], axis=-1).reshape(-1, 3)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    rot = d.geom_xmat[g].reshape(3, 3)
    return (d.geom_xpos[g] + local @ rot.T).reshape(nrow, ncol, 3)


# ------------------------------------------------------------------ data class / builder
def test_heightfield_normalises_like_newton():
    hf = Heightfield(RAW * 3.0 - 1.0, hx=2.0, hy=1.5)
    assert (hf.nrow, hf.ncol) == (3, 4)
    np.testing.assert_allclose(hf.data, RAW)
    assert (hf.min_z, hf.max_z) == (-1.0, 2.0)
    np.testing.assert_allclose(hf.heights, RAW * 3.0 - 1.0)
    hf2 = Heightfield(RAW.reshape(-1), 3, 4, min_z=-0.5, max_z=0.5)
    np.testing.assert_allclose(hf2.heights, RAW - 0.5)
    flat = Heightfield(np.full((2, 2), 0.7))
    assert np.all(flat.data == 0.0) and flat.min_z == flat.max_z == 0.7
    assert hf.mass == 0.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(data=np.zeros((1, 4))), "nrow must be >= 2"),
    (dict(data=np.zeros(6), nrow=2, ncol=4), "expected nrow"),
    (dict(data=np.zeros(6), nrow=2), "both nrow and ncol"),
    (dict(data=np.zeros(3)), "must be 2D"),
    (dict(data=[[0.0, np.nan], [1.0, 2.0]]), "finite"),
    (dict(data=RAW, hx=0.0), "hx must be > 0"),
    (dict(data=RAW, hy=-1.0), "hy must be > 0"),
    (dict(data=RAW, min_z=0.0), "both be given"),
    (dict(data=RAW, min_z=1.0, max_z=0.0), "max_z"),
    (dict(data=RAW, base=0.0), "base must be > 0"),
])
def test_heightfield_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Heightfield(**kwargs)


def test_builder_validation_names_label_and_argument():
    b = jaxart.ModelBuilder()
    body = b.add_body(mass=1.0, label="box")
    hf = Heightfield(RAW)
    with pytest.raises(ValueError, match=r"label='t1'.*static; body must be -1"):
        b.add_shape_heightfield(body=body, heightfield=hf, label="t1")
    with pytest.raises(TypeError, match=r"label='t2'.*heightfield must be a jaxart.Heightfield"):
        b.add_shape_heightfield(heightfield=None, label="t2")
    with pytest.raises(TypeError, match=r"label='t3'.*heightfield must be a jaxart.Heightfield"):
        b.add_shape(body=-1, type=jaxart.GeoType.HFIELD, label="t3")
    with pytest.raises(TypeError, match=r"label='t4'.*needs type=GeoType.HFIELD"):
        b.add_shape(body=-1, type=jaxart.GeoType.BOX, scale=(1, 1, 1), src=hf, label="t4")
    with pytest.raises(ValueError, match=r"label='t5'.*size parameters must be > 0"):
        b.add_shape_heightfield(heightfield=hf, scale=(1.0, 0.0, 1.0), label="t5")
    edited = Heightfield(RAW)
    edited.hx = -1.0
    with pytest.raises(ValueError, match=r"label='t6'.*heightfield: hx must be > 0"):
        b.add_shape_heightfield(heightfield=edited, label="t6")
    assert b.shape_count == 0


def test_builder_stores_heightfield_massless_and_add_builder_carries_it():
    hf = Heightfield(RAW, hx=2.0, hy=1.0)
    sub = jaxart.ModelBuilder()
    s = sub.add_shape_heightfield(xform=((0.0, 0.0, 0.1), (0, 0, 0, 1)), heightfield=hf, scale=(1.0, 2.0, 0.5),
                                  label="terrain")
    top = jaxart.ModelBuilder()
    ball = top.add_body(mass=1.0, inertia=np.eye(3) * 0.01, lock_inertia=True, label="ball")
    top.add_shape_sphere(ball, radius=0.1)
    top.add_builder(sub, xform=((1.0, 0.0, 0.0), (0, 0, 0, 1)))
    model = top.finalize(dtype=jnp.float64)
    k = model.shape_label.index("terrain")
    assert model.shape_type[k] == int(jaxart.GeoType.HFIELD) and model.shape_body[k] == -1
    assert model.meshes[k] is hf and sub.shape_source[s] is hf
    np.testing.assert_allclose(model.shape_scale[k], [1.0, 2.0, 0.5])
    np.testing.assert_allclose(model.shape_transform[k][:3], [1.0, 0.0, 0.1])
    np.testing.assert_allclose(model.body_mass, [1.0])


# ------------------------------------------------------------------ SolverMuJoCo conversion
def tilted_model():
    hf = Heightfield(RAW * 0.8 - 0.3, hx=1.0, hy=0.5, base=0.05)  # min_z = -0.3, max_z = 0.5
    b = jaxart.ModelBuilder()
    q = np.array([np.sin(0.15), 0.0, 0.0, np.cos(0.15)])  # 0.3 rad about x
    xform = ((0.2, -0.1, 0.4), q)
    b.add_shape_heightfield(xform=xform, heightfield=hf, scale=(2.0, 1.5, 0.5), label="terrain")
    return b.finalize(dtype=jnp.float64), hf, xform


def test_mjmodel_hfield_size_data_and_shifted_origin():
    model, hf, xform = tilted_model()
    m = jaxart.solvers.SolverMuJoCo(model).mj_model
    assert m.nhfield == 1 and m.geom_type[0] == mujoco.mjtGeom.mjGEOM_HFIELD
    assert (m.hfield_nrow[0], m.hfield_ncol[0]) == (3, 4)
    np.testing.assert_allclose(m.hfield_size[0], [2.0, 0.75, 0.5 * 0.8, 0.5 * 0.05])
    np.testing.assert_allclose(m.hfield_data.reshape(3, 4), RAW, atol=1e-6)
    shift = np_quat_rotate(np.asarray(xform[1]), np.array([0.0, 0.0, 0.5 * -0.3]))
    np.testing.assert_allclose(m.geom_pos[0], np.asarray(xform[0]) + shift, atol=1e-12)
    np.testing.assert_allclose(mj_world_heights(m, 0), world_heights(hf, xform, (2.0, 1.5, 0.5)), atol=1e-6)


def test_flat_heightfield_gets_positive_mujoco_sizes():
    b = jaxart.ModelBuilder()
    b.add_shape_heightfield(heightfield=Heightfield(np.full((2, 3), 0.25)), label="flat")
    m = jaxart.solvers.SolverMuJoCo(b.finalize(dtype=jnp.float64)).mj_model
    assert m.hfield_size[0][2] > 0.0 and m.hfield_size[0][3] == pytest.approx(DEFAULT_HFIELD_BASE)
    np.testing.assert_allclose(m.geom_pos[0], [0.0, 0.0, 0.25])
    np.testing.assert_allclose(m.hfield_data, 0.0)


@pytest.mark.slow
def test_sphere_rests_on_heightfield_plateau_in_solver_mujoco():
    rng = np.random.default_rng(0)
    raw = rng.uniform(0.0, 1.0, (7, 7))
    raw[2:5, 2:5] = 0.4  # flat plateau of 3x3 vertices around the centre, bumps elsewhere
    raw[0, 0], raw[6, 6] = 0.0, 1.0
    hf = Heightfield(raw, hx=1.0, hy=1.0, min_z=-0.3, max_z=0.5)
    cfg = jaxart.ModelBuilder.ShapeConfig(ke=2.5e5, kd=1000.0)  # solref (0.002, 1): stiff contact
    b = jaxart.ModelBuilder()
    b.add_shape_heightfield(xform=((0.2, -0.1, 0.4), (0, 0, 0, 1)), heightfield=hf, scale=(2.0, 1.5, 0.5),
                            cfg=cfg, label="terrain")
    ball = b.add_body(xform=((0.25, -0.05, 1.0), (0, 0, 0, 1)), mass=1.0, inertia=np.eye(3) * 0.004,
                      lock_inertia=True, label="ball")
    b.add_shape_sphere(ball, radius=0.1, cfg=cfg)
    model = b.finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverMuJoCo(model)
    state = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    run = jax.jit(lambda s: jax.lax.scan(lambda x, _: (solver.step(x, None, None, 1e-3), None), s, None,
                                         length=700)[0])
    out = run(state)
    plateau = 0.4 + 0.5 * (-0.3 + 0.4 * 0.8)  # xform z + scale_z (min_z + data (max_z - min_z))
    p = np.asarray(out.body_q[0, :3])
    assert abs(p[2] - (plateau + 0.1)) < 1e-3, p
    assert abs(float(out.body_qd[0, 2])) < 1e-2  # settled vertically (MJX's prism contacts may leave slow rolling)
    assert np.all(np.abs(p[:2] - [0.2, -0.1]) < [0.6, 0.45])  # still on the plateau


# ------------------------------------------------------------------ MJCF import and round trip
MJCF = """
<mujoco>
  <asset>
    <hfield name="hill" nrow="3" ncol="4" size="2 1 0.6 0.05"
            elevation="0.6 0.7 1.0 0.8  0.3 0.9 0.4 0.2  0.0 0.2 0.5 0.1"/>
  </asset>
  <worldbody>
    <geom name="terrain" type="hfield" hfield="hill" pos="0.1 0.2 -0.3" friction="0.7 0.01 0.001"/>
    <body name="ball" pos="0 0 1">
      <freejoint/>
      <geom name="b" type="sphere" size="0.1"/>
      <geom name="moving_hf" type="hfield" hfield="hill" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_import_heightfield_and_report():
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match="moving_hf.*heightfield not on the world"):
        res = b.add_mjcf(MJCF)
    assert not any("'terrain'" in s for s in res["unsupported"])
    s = res["shapes"]["terrain"]
    assert "moving_hf" not in res["shapes"]
    hf = b.shape_source[s]
    assert isinstance(hf, Heightfield) and b.shape_body[s] == -1
    np.testing.assert_allclose(hf.data, RAW, atol=1e-6)  # MuJoCo flips the XML rows: row 0 is at -y
    assert (hf.hx, hf.hy, hf.min_z, hf.max_z, hf.base) == pytest.approx((2.0, 1.0, 0.0, 0.6, 0.05))
    assert b.shape_cfg[s].mu == pytest.approx(0.7)
    m_src = res["mj_model"]
    np.testing.assert_allclose(world_heights(hf, (b.shape_transform[s][:3], b.shape_transform[s][3:])),
                               mj_world_heights(m_src, 0), atol=1e-6)


def test_save_to_mjcf_then_add_mjcf_round_trip(tmp_path):
    model, hf, xform = tilted_model()
    path = str(tmp_path / "hf.xml")
    jaxart.solvers.SolverMuJoCo(model, save_to_mjcf=path)
    b = jaxart.ModelBuilder()
    res = b.add_mjcf(path)
    s = res["shapes"]["terrain"]
    back = b.shape_source[s]
    x = b.shape_transform[s]
    np.testing.assert_allclose(world_heights(back, (x[:3], x[3:])), world_heights(hf, xform, (2.0, 1.5, 0.5)),
                               atol=1e-6)
    assert back.base == pytest.approx(0.5 * 0.05)
    m2 = jaxart.solvers.SolverMuJoCo(b.finalize(dtype=jnp.float64)).mj_model
    np.testing.assert_allclose(mj_world_heights(m2, 0), world_heights(hf, xform, (2.0, 1.5, 0.5)), atol=1e-6)


# ------------------------------------------------------------------ jaxart collision pipeline
def test_collide_heightfield_pairs_have_contact_slots():
    """Height-field pairs are collided (tests/collision/test_hfield_pairs.py compares them with MuJoCo)."""
    b = jaxart.ModelBuilder()
    b.add_shape_heightfield(heightfield=Heightfield(RAW), label="terrain")
    ball = b.add_body(xform=((0, 0, 1), (0, 0, 0, 1)), mass=1.0, inertia=np.eye(3) * 0.01, label="ball")
    b.add_shape_sphere(ball, radius=0.1, label="ball_geom")
    model = b.finalize(dtype=jnp.float64)
    state = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    assert jaxart.collision.default_capacity(model) == jaxart.collision.features.MAX_POINTS
    c = jax.eval_shape(model.collide, state)  # traced, not compiled
    assert c.capacity == jaxart.collision.features.MAX_POINTS


def test_heightfield_without_collidable_partner_does_not_raise():
    b = jaxart.ModelBuilder()
    b.add_shape_heightfield(heightfield=Heightfield(RAW), label="terrain")
    b.add_ground_plane()  # static-static: never a pair
    ball = b.add_body(xform=((0, 0, 1), (0, 0, 0, 1)), mass=1.0, inertia=np.eye(3) * 0.01, label="ball")
    b.add_shape_sphere(ball, radius=0.1)
    b.add_shape_collision_filter_pair(0, 2)
    model = b.finalize(dtype=jnp.float64)
    state = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    c = model.collide(state)
    assert c.capacity > 0  # sphere-plane only
    assert not np.any(np.asarray(c.shape_a) == 0) and not np.any(np.asarray(c.shape_b) == 0)
