"""Per-pair contact parameters of explicit contact pairs (``ContactPairConfig``, MJCF ``<contact><pair>``)."""

import warnings

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxart  # noqa: E402
from jaxart.contact import average_materials, contact_forces  # noqa: E402
from jaxart.io.mjcf.convert import solref_gains  # noqa: E402
from jaxart.solvers.mujoco import mjx  # noqa: E402
from jaxart.solvers.mujoco.contacts import ContactBridge, contacts_to_mjx  # noqa: E402

G = 9.81
MU_PAIR, MU_GEOMS = 0.3, 0.9
V0 = 1.0
SLOW = pytest.mark.slow

# A 1 kg box (0.1 m half extents) resting on the floor; the box geom collides with the floor by contype too,
# so without the pair the contact would use the geoms' mean friction 0.9 and solref (0.01, 1).
BOX_XML = f"""<mujoco><option timestep="0.001"/>
  <worldbody><geom name="floor" type="plane" size="2 2 .1" friction="{MU_GEOMS} .005 .0001" solref=".01 1"/>
    <body name="box" pos="0 0 .1"><freejoint/>
      <geom name="b" type="box" size=".1 .1 .1" mass="1" friction="{MU_GEOMS} .005 .0001" solref=".01 1"/></body>
  </worldbody>
  <contact><pair geom1="b" geom2="floor" friction="{MU_PAIR} {MU_PAIR} .005 .0001 .0001" solref=".02 .8"
    margin=".002" gap=".001"/></contact></mujoco>"""


def _box_model():
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every pair parameter is imported: nothing to report
        res = b.add_mjcf(BOX_XML)
    return b.finalize(dtype=jnp.float64), res


def test_mjcf_pair_parameters_reach_every_contact_row():
    model, res = _box_model()
    ke, kd = solref_gains((0.02, 0.8), 1.0, min_timeconst=0.002)
    np.testing.assert_allclose([model.contact_pair_mu[0], model.contact_pair_ke[0], model.contact_pair_kd[0]],
                               [MU_PAIR, ke, kd], rtol=1e-12)
    np.testing.assert_allclose([model.contact_pair_margin[0], model.contact_pair_gap[0]], [0.002, 0.001])
    s = model.state()
    collide = jax.jit(model.collide)
    c = collide(s.replace(body_q=s.body_q.at[0, 2].set(0.1 - 1e-3)))
    act = np.asarray(c.active)
    assert act.sum() == 4 and np.all(np.asarray(c.pair)[act] == 0)
    np.testing.assert_allclose(np.asarray(c.separation)[act], -1e-3 - 0.002, atol=1e-12)  # the pair's margin
    got = [np.asarray(x)[act] for x in average_materials(model, c)]
    np.testing.assert_allclose(got[0], ke, rtol=1e-12)
    np.testing.assert_allclose(got[1], kd, rtol=1e-12)
    np.testing.assert_allclose(got[4], MU_PAIR, rtol=1e-12)
    geom_ke = solref_gains((0.01, 1.0), 1.0, min_timeconst=0.002)[0]
    np.testing.assert_allclose(np.asarray(model.shape_material_ke), geom_ke)  # the geoms keep their own
    # the pair's gap: detected up to margin + gap = 3 mm above the floor (MuJoCo too: its contacts there are
    # detected but exert no force)
    assert int(collide(s.replace(body_q=s.body_q.at[0, 2].set(0.1 + 0.0031))).count) == 0
    assert int(collide(s.replace(body_q=s.body_q.at[0, 2].set(0.1 + 0.0029))).count) == 4
    # the penalty law's application points sit on the margin-inflated surfaces (half the pair margin each)
    cf = contact_forces(model, s, c)
    np.testing.assert_allclose(np.asarray(cf.point_b - cf.point_a)[act], [[0.0, 0.0, -3e-3]] * 4, atol=1e-12)


def test_builder_pair_defaults_come_from_the_shapes():
    b = jaxart.ModelBuilder()
    cfg = jaxart.ShapeConfig(ke=1.0e4, kd=10.0, mu=0.4, margin=0.01, gap=0.02)
    g = b.add_ground_plane(cfg=jaxart.ShapeConfig(ke=3.0e4, kd=30.0, mu=0.8, margin=0.0, gap=0.01))
    s0 = b.add_shape_sphere(b.add_body(), radius=0.1, cfg=cfg)
    b.add_shape_contact_pair(g, s0, jaxart.ContactPairConfig(mu=0.1))
    m = b.finalize(dtype=jnp.float64)
    np.testing.assert_allclose([m.contact_pair_mu[0], m.contact_pair_ke[0], m.contact_pair_kd[0],
                                m.contact_pair_margin[0], m.contact_pair_gap[0]], [0.1, 2.0e4, 20.0, 0.01, 0.03])
    with pytest.raises(ValueError, match="ContactPairConfig: mu must be >= 0"):
        jaxart.ContactPairConfig(mu=-1.0)
    s1 = b.add_shape_sphere(b.add_body(), radius=0.1, cfg=cfg)
    with pytest.raises(TypeError, match="cfg must be a ContactPairConfig"):
        b.add_shape_contact_pair(g, s1, {"mu": 0.1})


def _slide_distance(model, solver_name: str) -> float:
    """Distance the box slides from ``V0`` until it stops, simulated for 0.5 s (dt = 2 ms; 1 ms semi-implicit)."""
    s = model.state()
    z = 0.1 + float(model.contact_pair_margin[0])  # resting on the pair's margin-inflated surface
    if solver_name != "SolverXPBD":  # the penalty laws rest at mg / (4 ke) below it (four corner rows)
        z -= G / (4.0 * float(model.contact_pair_ke[0]))
    s = jaxart.eval_fk(model, s.joint_q.at[2].set(z), s.joint_qd.at[0].set(V0), s)
    solver = getattr(jaxart.solvers, solver_name)(model)

    dt = 1e-3 if solver_name == "SolverSemiImplicit" else 2e-3  # its explicit joint springs need 1 ms

    def step(st, _):
        return solver.step(st, None, model.collide(st), dt), None

    final, _ = jax.jit(lambda st: jax.lax.scan(step, st, None, length=round(0.5 / dt)))(s)
    assert abs(float(final.body_qd[0, 0])) < 1e-2  # stopped
    assert abs(float(final.body_q[0, 2]) - z) < 1e-3  # on the floor
    return float(final.body_q[0, 0])


@pytest.mark.parametrize("solver_name", ["SolverFeatherstone", pytest.param("SolverSemiImplicit", marks=SLOW),
                                         pytest.param("SolverXPBD", marks=SLOW)])
def test_box_slides_the_pair_friction_distance(solver_name):
    model, _ = _box_model()
    expected = V0**2 / (2.0 * MU_PAIR * G)  # 0.170 m; the geoms' friction would stop it at 0.057 m
    np.testing.assert_allclose(_slide_distance(model, solver_name), expected, rtol=0.05)


def test_mujoco_c_slides_the_same_distance():
    m = mujoco.MjModel.from_xml_string(BOX_XML)
    d = mujoco.MjData(m)
    d.qvel[0] = V0
    for _ in range(600):
        mujoco.mj_step(m, d)
    np.testing.assert_allclose(d.qpos[0], V0**2 / (2.0 * MU_PAIR * G), rtol=0.05)


def test_solver_mujoco_exports_the_pair_parameters():
    model, _ = _box_model()
    solver = jaxart.solvers.SolverMuJoCo(model)
    m = solver.mj_model
    assert m.npair == 1
    np.testing.assert_allclose(m.pair_friction[0, :2], MU_PAIR)
    np.testing.assert_allclose(m.pair_margin[0], 0.002)
    ke, kd = float(model.contact_pair_ke[0]), float(model.contact_pair_kd[0])
    np.testing.assert_allclose(m.pair_solref[0], [2.0 / kd, kd / (2.0 * np.sqrt(ke))], rtol=1e-12)
    # jaxart's contacts fed to MJX: the pair's rows take the exported pair's friction, solref and margin
    bridge = ContactBridge.build(m, solver.mjx_model, mjx.make_data(solver.mjx_model), model.topology.shape_label)
    s = model.state()
    c = model.collide(s.replace(body_q=s.body_q.at[0, 2].set(0.1 - 1e-3)))
    con = contacts_to_mjx(bridge, solver.mjx_model, bridge.data_for(c.capacity)._impl.contact, c)
    act = np.asarray(c.active)
    np.testing.assert_allclose(np.asarray(con.friction)[act, :2], MU_PAIR)
    np.testing.assert_allclose(np.asarray(con.solref)[act], np.broadcast_to(m.pair_solref[0], (4, 2)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(con.includemargin)[act], 0.002)
    np.testing.assert_allclose(np.asarray(con.dist - con.includemargin)[act], -3e-3, atol=1e-12)
