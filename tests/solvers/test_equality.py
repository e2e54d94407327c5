"""Equality and mimic constraints: builder, Model fields, MJCF import, SolverMuJoCo mapping and stepping.

MuJoCo C is the oracle: constraint residuals (``efc_pos``) of the converted ``MjModel`` are
compared with residuals computed from jaxart's documented semantics at random configurations, so
every frame conversion (child-anchor MuJoCo frames, world references) is exercised.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from equality_models import INERTIA, all_types_builder, chain_builder, fourbar_builder, point, residual_norms

import jaxart
from jaxart.sim.enums import EqType
from jaxart.sim.validate import np_quat_mul, np_transform_inverse, np_transform_mul

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64


# ------------------------------------------------------------------ builder
def test_builder_fields_and_defaults():
    b, ix = all_types_builder()
    assert b.equality_constraint_type == [EqType.CONNECT, EqType.WELD, EqType.JOINT]
    assert b.equality_constraint_body1 == [ix["l2"], ix["l1"], -1]
    assert b.equality_constraint_body2 == [-1, ix["l3"], -1]
    assert b.equality_constraint_joint1 == [-1, -1, ix["j2"]] and b.equality_constraint_joint2 == [-1, -1, ix["j1"]]
    np.testing.assert_allclose(b.equality_constraint_polycoef[2], [0.1, -1.0, 0.3, 0.0, 0.0])
    assert b.equality_constraint_torquescale == [0.0, 0.5, 0.0]
    np.testing.assert_allclose(np.linalg.norm(b.equality_constraint_relpose[1][3:]), 1.0)  # normalised
    assert b.constraint_mimic_joint0 == [ix["j3"]] and b.constraint_mimic_coef1 == [0.5]
    # generic API defaults (Newton's): identity relpose, torquescale 1 for WELD, zero polycoef
    k = b.add_equality_constraint(EqType.WELD, body1=ix["l2"], body2=ix["l3"])
    np.testing.assert_allclose(b.equality_constraint_relpose[k], [0, 0, 0, 0, 0, 0, 1])
    assert b.equality_constraint_torquescale[k] == 1.0 and b.equality_constraint_label[k] == f"equality_constraint_{k}"
    k = b.add_equality_constraint(EqType.JOINT, joint1=ix["j1"])
    np.testing.assert_allclose(b.equality_constraint_polycoef[k], np.zeros(5))
    # weld helper without relpose preserves the current relative pose (anchor on body2)
    k = b.add_equality_constraint_weld(ix["l1"], ix["l2"], anchor=(0.0, 0.3, 0.0))
    x1, x2 = b.body_q[ix["l1"]], b.body_q[ix["l2"]]
    rp = b.equality_constraint_relpose[k]
    np.testing.assert_allclose(point(x1, rp[:3]), point(x2, [0.0, 0.3, 0.0]), atol=1e-12)
    np.testing.assert_allclose(np_quat_mul(x1[3:], rp[3:]), x2[3:], atol=1e-12)


@pytest.mark.parametrize("call, exc, match", [
    (lambda b, ix: b.add_equality_constraint(7, body1=0), ValueError, "unknown constraint_type"),
    (lambda b, ix: b.add_equality_constraint_connect(9, -1, label="c"), ValueError,
     r"label='c'.*body1.*does not exist"),
    (lambda b, ix: b.add_equality_constraint_connect(ix["l1"], 1.5), TypeError, "body2 must be a body index"),
    (lambda b, ix: b.add_equality_constraint_connect(-1, -1), ValueError, "same world"),
    (lambda b, ix: b.add_equality_constraint_connect(ix["l1"], ix["l1"]), ValueError, "two distinct bodies"),
    (lambda b, ix: b.add_equality_constraint_connect(ix["l1"], -1, anchor=(0, np.nan, 0), label="n"), ValueError,
     r"label='n'.*anchor must be finite"),
    (lambda b, ix: b.add_equality_constraint_connect(ix["l1"], -1, anchor=(0, 1)), ValueError,
     "anchor must have shape"),
    (lambda b, ix: b.add_equality_constraint_weld(ix["l1"], ix["l2"], torquescale=-1.0), ValueError,
     "torquescale must be >= 0"),
    (lambda b, ix: b.add_equality_constraint_weld(ix["l1"], ix["l2"], relpose=(0, 0, 0, 0, 0, 0, 0)), ValueError,
     "relpose.*non-zero quaternion"),
    (lambda b, ix: b.add_equality_constraint_weld(ix["l1"], ix["l2"], torquescale=np.inf), ValueError, "finite"),
    (lambda b, ix: b.add_equality_constraint(EqType.CONNECT, body1=0, joint1=0), ValueError, "joint1 is not used"),
    (lambda b, ix: b.add_equality_constraint(EqType.CONNECT, body1=0, torquescale=1.0), ValueError,
     "torquescale is not used"),
    (lambda b, ix: b.add_equality_constraint(EqType.JOINT, joint1=0, body1=0), ValueError, "body1 is not used"),
    (lambda b, ix: b.add_equality_constraint_joint(5, 0, label="jj"), ValueError,
     r"label='jj'.*joint1.*does not exist"),
    (lambda b, ix: b.add_equality_constraint_joint(ix["j1"], ix["j1"]), ValueError, "same joint"),
    (lambda b, ix: b.add_equality_constraint_joint(ix["j1"], "j2"), TypeError, "joint2 must be a joint index"),
    (lambda b, ix: b.add_equality_constraint_joint(ix["j1"], ix["j2"], polycoef=[1, 2, 3, 4, 5, 6]), ValueError,
     "1 to 5 coefficients"),
    (lambda b, ix: b.add_equality_constraint_joint(ix["j1"], ix["j2"], polycoef=[1, np.inf]), ValueError, "finite"),
    (lambda b, ix: b.add_equality_constraint_joint(ix["jb"], ix["j2"]), ValueError, "scalar"),
    (lambda b, ix: b.add_equality_constraint_connect(ix["l1"], -1, enabled=1), TypeError, "enabled must be a bool"),
    (lambda b, ix: b.add_constraint_mimic(ix["jb"], ix["j1"], label="m"), ValueError,
     r"label='m'.*joint0 'jb' is BALL.*REVOLUTE or PRISMATIC"),
    (lambda b, ix: b.add_constraint_mimic(ix["j1"], 99), ValueError, "joint1.*does not exist"),
    (lambda b, ix: b.add_constraint_mimic(ix["j1"], ix["j2"], coef1=np.nan), ValueError, "coef1 must be finite"),
    (lambda b, ix: b.add_constraint_mimic(ix["j1"], ix["j1"]), ValueError, "same joint"),
])
def test_builder_validation(call, exc, match):
    b, ix = chain_builder()
    lb = b.add_link(mass=1.0, inertia=INERTIA, label="lb")
    ix["jb"] = b.add_joint_ball(ix["l3"], lb, label="jb")
    with pytest.raises(exc, match=match):
        call(b, ix)


def test_duplicate_labels_rejected():
    b, ix = chain_builder()
    b.add_equality_constraint_connect(ix["l1"], -1, label="x")
    with pytest.raises(ValueError, match="'x' is already used"):
        b.add_equality_constraint_weld(ix["l1"], -1, label="x")


def test_add_builder_offsets_indices_and_labels():
    src, ix = all_types_builder()
    dst = jaxart.ModelBuilder()
    dst.add_builder(src, label_prefix="a")
    dst.add_builder(src, label_prefix="b")
    nb, nj, ne = src.body_count, src.joint_count, src.equality_constraint_count
    assert dst.equality_constraint_count == 2 * ne and dst.constraint_mimic_count == 2
    assert dst.equality_constraint_body1[ne:] == [x + nb if x >= 0 else -1 for x in src.equality_constraint_body1]
    assert dst.equality_constraint_body2[ne:] == [x + nb if x >= 0 else -1 for x in src.equality_constraint_body2]
    assert dst.equality_constraint_joint1[ne:] == [x + nj if x >= 0 else -1 for x in src.equality_constraint_joint1]
    assert dst.equality_constraint_joint2[ne:] == [x + nj if x >= 0 else -1 for x in src.equality_constraint_joint2]
    assert dst.constraint_mimic_joint0 == [ix["j3"], ix["j3"] + nj]
    assert dst.constraint_mimic_joint1 == [ix["j1"], ix["j1"] + nj]
    assert dst.equality_constraint_label[ne] == "b/con" and dst.constraint_mimic_label == ["a/mimic", "b/mimic"]
    np.testing.assert_allclose(dst.equality_constraint_relpose[ne + 1], src.equality_constraint_relpose[1])
    with pytest.raises(ValueError, match="label"):
        dst.add_builder(src, label_prefix="a")


def test_add_builder_moves_world_frame_constraint_data():
    src, ix = chain_builder()
    src.add_equality_constraint_connect(-1, ix["l1"], anchor=(0.1, 0.2, 0.3))
    src.add_equality_constraint_weld(-1, ix["l2"], anchor=(0.0, 0.1, 0.0), label="w1")
    src.add_equality_constraint_weld(ix["l2"], -1, anchor=(0.3, 0.0, 0.0), relpose=((0, 0, 0.2), (0, 0, 0, 1)))
    dst = jaxart.ModelBuilder()
    x = np.array([1.0, 2.0, 0.0, 0.0, 0.0, np.sin(0.3), np.cos(0.3)])
    dst.add_builder(src, xform=x)
    np.testing.assert_allclose(dst.equality_constraint_anchor[0], point(x, [0.1, 0.2, 0.3]))
    moved = np_transform_mul(x, src.equality_constraint_relpose[1])
    np.testing.assert_allclose(dst.equality_constraint_relpose[1], moved)
    np.testing.assert_allclose(dst.equality_constraint_anchor[1], [0.0, 0.1, 0.0])  # on body2: unchanged
    np.testing.assert_allclose(dst.equality_constraint_anchor[2], point(x, [0.3, 0.0, 0.0]))  # on the world
    np.testing.assert_allclose(dst.equality_constraint_relpose[2], src.equality_constraint_relpose[2])
    # the preserved weld still holds after the move: x_world · relpose == x_l2 · anchor
    xl2 = dst.body_q[ix["l2"]]
    rp = dst.equality_constraint_relpose[1]
    np.testing.assert_allclose(rp[:3], point(xl2, [0.0, 0.1, 0.0]), atol=1e-12)


def test_model_fields_static_and_traced():
    b, ix = all_types_builder()
    m = b.finalize(dtype=F64)
    assert m.equality_constraint_count == 3 and m.constraint_mimic_count == 1
    np.testing.assert_array_equal(m.equality_constraint_type, [0, 1, 2])
    np.testing.assert_array_equal(m.equality_constraint_body1, [ix["l2"], ix["l1"], -1])
    np.testing.assert_array_equal(m.equality_constraint_enabled, [True, True, True])
    assert m.equality_constraint_label == ["con", "weld", "joint"] and m.constraint_mimic_label == ["mimic"]
    assert m.equality_constraint_anchor.shape == (3, 3) and m.equality_constraint_anchor.dtype == F64
    assert m.equality_constraint_relpose.shape == (3, 7) and m.equality_constraint_polycoef.shape == (3, 5)
    assert m.constraint_mimic_coef0.shape == (1,)
    leaves = jax.tree_util.tree_leaves(m)
    assert any(x is m.equality_constraint_anchor for x in leaves)  # traced
    g = jax.grad(lambda mm: jnp.sum(mm.equality_constraint_anchor ** 2) + mm.constraint_mimic_coef1[0])(m)
    np.testing.assert_allclose(g.equality_constraint_anchor, 2 * m.equality_constraint_anchor)
    # an empty builder gives empty, well-shaped fields
    e = jaxart.ModelBuilder().finalize(dtype=F64)
    assert e.equality_constraint_anchor.shape == (0, 3) and e.equality_constraint_count == 0


def test_native_solvers_accept_enabled_and_disabled_constraints():
    """All native solvers enforce them (test_featherstone_constraints, tests/conformance/test_equality_rows)."""
    b, ix = chain_builder()
    b.add_constraint_mimic(ix["j3"], ix["j1"], label="mim")
    m = b.finalize(dtype=F64)
    jaxart.solvers.SolverSemiImplicit(m)
    jaxart.solvers.SolverXPBD(m)
    b, ix = chain_builder()
    b.add_equality_constraint_connect(ix["l2"], -1, label="off", enabled=False)
    jaxart.solvers.SolverFeatherstone(b.finalize(dtype=F64))  # disabled constraints are fine


# ------------------------------------------------------------------ MJCF import
MJCF = """
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0 0 1" euler="0 0.3 0">
      <joint name="ja" type="hinge" axis="0 1 0" ref="0.2"/>
      <geom size=".1" mass="1"/>
      <body name="b" pos="0 0 -0.5">
        <joint name="jb" type="hinge" axis="0 1 0"/>
        <geom size=".1" mass="1"/>
      </body>
    </body>
    <body name="c" pos="1 0 1">
      <freejoint/>
      <geom size=".1" mass="1"/>
    </body>
    <body name="d" pos="1 1 1">
      <joint name="jd" type="slide" axis="0 0 1" ref="0.1"/>
      <geom size=".1" mass="1"/>
    </body>
  </worldbody>
  <equality>
    <connect name="con" body1="b" body2="world" anchor="0 0 -0.2"/>
    <weld name="w" body1="a" body2="c" anchor="0.1 0 0" torquescale="2" active="false"/>
    <joint name="jj" joint1="jb" joint2="ja" polycoef="0.1 2 0.5 0 0"/>
    <joint name="jd0" joint1="jd"/>
    <weld name="ww" body1="world" body2="d" anchor="0 0.1 0"/>
  </equality>
</mujoco>
"""


def _mj_residuals(m_mj, d) -> dict[int, np.ndarray]:
    """Per-equality residual rows of a forward-evaluated MuJoCo model."""
    rows = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    out: dict[int, list[float]] = {}
    for r in np.flatnonzero(rows):
        out.setdefault(int(d.efc_id[r]), []).append(float(d.efc_pos[r]))
    return {k: np.asarray(v) for k, v in out.items()}


def test_mjcf_equalities_import_and_keep_mujoco_residuals():
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # connect/weld/joint are supported: nothing to report
        res = b.add_mjcf(MJCF, xform=((0.5, 0, 0), (0, 0, 0, 1)), label_prefix="r")
    assert res["equalities"] == {"con": 0, "w": 1, "jj": 2, "jd0": 3, "ww": 4}
    assert b.equality_constraint_type == [EqType.CONNECT, EqType.WELD, EqType.JOINT, EqType.JOINT, EqType.WELD]
    assert b.equality_constraint_label == ["r/con", "r/w", "r/jj", "r/jd0", "r/ww"]
    assert b.equality_constraint_enabled == [True, False, True, True, True]
    bodies, joints = res["bodies"], res["joints"]
    assert b.equality_constraint_body1[:2] == [bodies["b"], bodies["a"]]
    assert b.equality_constraint_body2[:2] == [-1, bodies["c"]]
    assert b.equality_constraint_joint1[2:4] == [joints["jb"], joints["jd"]]
    assert b.equality_constraint_joint2[2:4] == [joints["ja"], -1]
    np.testing.assert_allclose(b.equality_constraint_anchor[0], [0, 0, -0.2])
    assert b.equality_constraint_torquescale[1] == 2.0
    # MuJoCo's polynomial acts on offsets from qpos0 (refs 0.2 and 0.1), jaxart's on joint_q
    x = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(np.polynomial.polynomial.polyval(x, b.equality_constraint_polycoef[2]),
                               0.1 + 2 * (x - 0.2) + 0.5 * (x - 0.2) ** 2, atol=1e-12)
    np.testing.assert_allclose(b.equality_constraint_polycoef[3], [0.1, 0, 0, 0, 0])  # y - 0.1 = 0
    # the weld's relpose reproduces MuJoCo's (compiler-inferred) relative pose at qpos0
    xa, xc = b.body_q[bodies["a"]], b.body_q[bodies["c"]]
    rp = b.equality_constraint_relpose[1]
    np.testing.assert_allclose(point(xa, rp[:3]), point(xc, [0.1, 0, 0]), atol=1e-12)
    np.testing.assert_allclose(np.abs(np_quat_mul(xa[3:], rp[3:]) @ xc[3:]), 1.0, atol=1e-12)
    # a world reference picks up the import's xform (relpose in the jaxart world frame)
    assert b.equality_constraint_body1[4] == -1 and b.equality_constraint_body2[4] == bodies["d"]
    xd, rp = b.body_q[bodies["d"]], b.equality_constraint_relpose[4]
    np.testing.assert_allclose(rp[:3], point(xd, [0, 0.1, 0]), atol=1e-12)
    np.testing.assert_allclose(np.abs(rp[3:] @ xd[3:]), 1.0, atol=1e-12)
    assert abs(xd[0] - 1.5) < 1e-12  # (the body itself sits at MJCF x = 1 shifted by the xform's 0.5)


def test_mjcf_unsupported_equalities_are_reported():
    xml = MJCF.replace('<joint name="jd0" joint1="jd"/>', '<connect site1="s1" site2="s2"/>').replace(
        '<geom size=".1" mass="1"/>\n      <body name="b"', '<geom size=".1" mass="1"/><site name="s1"/>\n'
        '      <body name="b"').replace('<freejoint/>', '<freejoint/><site name="s2"/>')
    b = jaxart.ModelBuilder()
    with pytest.warns(UserWarning, match="site-based connect"):
        res = b.add_mjcf(xml)
    assert list(res["equalities"]) == ["con", "w", "jj", "ww"]  # the site-based connect is skipped
    with pytest.raises(ValueError, match="site-based connect"):
        jaxart.ModelBuilder().add_mjcf(xml, strict=True)


# ------------------------------------------------------------------ SolverMuJoCo mapping
@pytest.fixture(scope="module")
def all_types_solver():
    b, ix = all_types_builder()
    model = b.finalize(dtype=F64)
    return model, jaxart.solvers.SolverMuJoCo(model), ix


def test_mjmodel_equality_rows(all_types_solver):
    model, solver, ix = all_types_solver
    mj = solver.mj_model
    E = mujoco.mjtEq
    assert [mj.eq(i).name for i in range(mj.neq)] == ["con", "weld", "joint", "mimic"]
    np.testing.assert_array_equal(mj.eq_type, [E.mjEQ_CONNECT, E.mjEQ_WELD, E.mjEQ_JOINT, E.mjEQ_JOINT])
    bid = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, n) for n in ("l1", "l2", "l3")]
    jid = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, n) for n in ("j1", "j2", "j3")]
    np.testing.assert_array_equal(mj.eq_obj1id, [bid[1], bid[0], jid[1], jid[2]])
    np.testing.assert_array_equal(mj.eq_obj2id, [0, bid[2], jid[0], jid[0]])
    np.testing.assert_array_equal(mj.eq_active0, [1, 1, 1, 1])
    # anchor in l2's MuJoCo frame = body frame · joint_X_c
    x_c = np.asarray(model.joint_X_c[ix["j2"]])
    np.testing.assert_allclose(mj.eq_data[0, 0:3], point(np_transform_inverse(x_c), [0.05, 0.02, -0.5]), atol=1e-12)
    np.testing.assert_allclose(mj.eq_data[1, 10], 0.5)
    np.testing.assert_allclose(mj.eq_data[2, 0:5], [0.1, -1.0, 0.3, 0, 0])
    np.testing.assert_allclose(mj.eq_data[3, 0:5], [0.2, 0.5, 0, 0, 0])


def test_mujoco_residuals_match_jaxart_semantics(all_types_solver):
    model, solver, _ = all_types_solver
    rng = np.random.default_rng(3)
    for trial in range(3):
        jq = np.asarray(model.joint_q) if trial == 0 else rng.uniform(-0.6, 0.6, model.joint_coord_count)
        st = jaxart.eval_fk(model, jnp.asarray(jq), model.joint_qd, model.state())
        d = solver.to_mj_data(st)
        res = _mj_residuals(solver.mj_model, d)
        mine = residual_norms(model, np.asarray(st.body_q), jq)
        got = [np.linalg.norm(res[0]), np.linalg.norm(res[1][:3]), np.linalg.norm(res[1][3:]), abs(res[2][0]),
               abs(res[3][0])]
        np.testing.assert_allclose(got, mine, atol=1e-10)
        assert min(mine[1:]) > 1e-3  # the configurations violate every constraint but the CONNECT at q0
        if trial == 0:  # CONNECT holds at the initial configuration by construction
            assert np.linalg.norm(res[0]) < 1e-12


def test_disabled_constraints_map_to_inactive_rows():
    b, ix = chain_builder()
    b.add_equality_constraint_connect(ix["l2"], -1, label="c", enabled=False)
    b.add_constraint_mimic(ix["j3"], ix["j1"], label="m", enabled=False)
    solver = jaxart.solvers.SolverMuJoCo(b.finalize(dtype=F64))
    np.testing.assert_array_equal(solver.mj_model.eq_active0, [0, 0])


def test_save_to_mjcf_round_trip_keeps_equalities(all_types_solver, tmp_path):
    model, solver, _ = all_types_solver
    xml = solver.save_to_mjcf(str(tmp_path / "eq.xml"))
    mj2 = mujoco.MjModel.from_xml_string(xml)
    mj = solver.mj_model
    np.testing.assert_array_equal(mj2.eq_type, mj.eq_type)
    np.testing.assert_array_equal(mj2.eq_obj1id, mj.eq_obj1id)
    np.testing.assert_array_equal(mj2.eq_obj2id, mj.eq_obj2id)
    np.testing.assert_array_equal(mj2.eq_active0, mj.eq_active0)
    np.testing.assert_allclose(mj2.eq_data[:, 0:3], mj.eq_data[:, 0:3], atol=1e-6)  # MJCF prints 6 digits
    np.testing.assert_allclose(mj2.eq_data[1, 3:11], mj.eq_data[1, 3:11], atol=1e-6)  # weld relpose, torquescale
    np.testing.assert_allclose(mj2.eq_data[2:, 3:5], mj.eq_data[2:, 3:5], atol=1e-6)  # joint polycoef
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = b.add_mjcf(str(tmp_path / "eq.xml"))
    assert b.equality_constraint_type == [EqType.CONNECT, EqType.WELD, EqType.JOINT, EqType.JOINT]
    assert list(res["equalities"]) == ["con", "weld", "joint", "mimic"]
    np.testing.assert_allclose(b.equality_constraint_polycoef[3], [0.2, 0.5, 0, 0, 0])


# ------------------------------------------------------------------ stepping
def rollout_fn(solver, n, dt):
    def run(state, control):
        def body(s, _):
            s = solver.step(s, control, None, dt)
            return s, (s.joint_q, s.body_q)
        return jax.lax.scan(body, state, None, length=n)
    return jax.jit(run)


@pytest.mark.slow
def test_connect_trajectory_matches_mujoco_c():
    """A free body hanging from a CONNECT: bridge (MJX) vs MuJoCo C ``mj_step`` on the same MjModel.

    MuJoCo 4's C solver adds the J̇q̇ (centripetal) term to equality reference accelerations and MJX
    does not, so starting from rest the first steps agree to round-off and the gap then grows
    with the squared angular velocity (a few 1e-5 here after 0.2 s).
    """
    b = jaxart.ModelBuilder()
    body = b.add_body(xform=((0.3, 0, 1.0), (0, 0, 0, 1)), mass=1.0, com=(0.02, 0, -0.1), inertia=[.02, .03, .01],
                      label="bob")
    b.add_equality_constraint_connect(body, -1, anchor=(0.2, 0.0, 0.4), label="pin")
    model = b.finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    n, dt = 100, 0.002
    _, (hist, body_hist) = rollout_fn(solver, n, dt)(st, model.control())
    mj = solver.mj_model
    mj.opt.timestep = dt
    d = solver.to_mj_data(st)
    from jaxart.solvers.mujoco.state import qpos_to_joint_q

    ref = []
    for _ in range(n):
        d.qacc_warmstart[:] = 0.0
        mujoco.mj_step(mj, d)
        ref.append(np.asarray(qpos_to_joint_q(solver.layout, jnp.asarray(d.qpos), model.joint_coord_count)))
    ref = np.stack(ref)
    np.testing.assert_allclose(hist[0], ref[0], atol=1e-12)
    np.testing.assert_allclose(hist, ref, atol=2e-4)
    # it swings (COM offset from the pin) and the pin holds in world coordinates
    assert np.abs(hist[-1, :3] - hist[0, :3]).max() > 0.02
    pins = np.stack([point(x[0], [0.2, 0, 0.4]) for x in np.asarray(body_hist)])
    np.testing.assert_allclose(pins, np.broadcast_to([0.5, 0.0, 1.4], pins.shape), atol=2e-3)


@pytest.mark.parametrize("loop, types", [
    ("revolute", [mujoco.mjtEq.mjEQ_CONNECT] * 2), ("ball", [mujoco.mjtEq.mjEQ_CONNECT]),
    ("fixed", [mujoco.mjtEq.mjEQ_WELD])])
def test_loop_joints_become_equalities(loop, types):
    b, lj = fourbar_builder(loop)
    model = b.finalize(dtype=F64)
    solver = jaxart.solvers.SolverMuJoCo(model)
    mj = solver.mj_model
    np.testing.assert_array_equal(mj.eq_type, types)
    body = {n: mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, n) for n in ("coupler", "rocker")}
    np.testing.assert_array_equal(mj.eq_obj1id, [body["coupler"]] * len(types))
    np.testing.assert_array_equal(mj.eq_obj2id, [body["rocker"]] * len(types))
    if loop == "revolute":  # two points 0.05 m either side of the anchor along the hinge axis (Newton)
        np.testing.assert_allclose(mj.eq_data[:, 0:3], [[-0.05, 0.5, 0], [0.05, 0.5, 0]], atol=1e-12)
        np.testing.assert_allclose(mj.eq_data[:, 3:6], [[-0.05, 0, -0.5], [0.05, 0, -0.5]], atol=1e-12)
    # closed at the initial configuration; a consistent motion of the parallelogram keeps it closed
    for q in (0.0, 0.4):
        jq = jnp.asarray(model.joint_q).at[model.joint_q_start[:3]].set([q, -q, q])
        d = solver.to_mj_data(jaxart.eval_fk(model, jq, model.joint_qd, model.state()))
        rows = np.concatenate(list(_mj_residuals(mj, d).values()))
        if loop == "fixed" and q > 0.0:  # the weld also locks the coupler–rocker angle: residual sin(q/2)
            np.testing.assert_allclose(np.linalg.norm(rows), np.sin(q / 2), atol=1e-12)
        else:
            np.testing.assert_allclose(rows, 0.0, atol=1e-12)
    if loop != "revolute":
        return
    # a short simulated swing keeps the loop closed; the loop joint's own coordinate is untouched
    st = jaxart.eval_fk(model, model.joint_q, jnp.asarray(model.joint_qd).at[:3].set([2.0, -2.0, 2.0]), model.state())
    final, (hist, body_hist) = rollout_fn(solver, 100, 0.002)(st, model.control())
    assert abs(float(hist[-1, 0])) > 0.1
    np.testing.assert_allclose(hist[:, model.joint_q_start[lj]], model.joint_q[model.joint_q_start[lj]])
    gap = [np.linalg.norm(point(x[1], [0, 0.5, 0]) - point(x[2], [0, 0, -0.5])) for x in np.asarray(body_hist)]
    assert max(gap) < 2e-3
    np.testing.assert_allclose(hist[:, 0], -hist[:, 1], atol=5e-3)  # parallelogram: the coupler stays level
    np.testing.assert_allclose(hist[:, 0], hist[:, 2], atol=5e-3)


def test_unsupported_loop_and_orphan_joints_raise():
    b, ix = chain_builder()  # PRISMATIC / D6 loops map to an auxiliary body (test_mujoco_loops.py); a D6 without DOFs
    b.add_joint_d6(ix["l3"], ix["l1"], label="loop")  # does not
    with pytest.raises(NotImplementedError, match="'loop'.*D6.*no MuJoCo mapping"):
        jaxart.solvers.SolverMuJoCo(b.finalize(dtype=F64))
    b = jaxart.ModelBuilder()
    link = b.add_link(mass=1.0, inertia=INERTIA)
    b.add_joint_revolute(-1, link, label="lonely")
    with pytest.raises(NotImplementedError, match="'lonely' is an orphan"):
        jaxart.solvers.SolverMuJoCo(b.finalize(dtype=F64, skip_validation_joints=True))


def test_constraint_on_folded_massless_link_raises():
    b = jaxart.ModelBuilder()
    mid = b.add_link(label="mid")  # massless, shapeless, one child: folded into its child's MuJoCo body
    j0 = b.add_joint_revolute(-1, mid, axis=(1, 0, 0), label="ja")
    tip = b.add_link(mass=1.0, com=(0, 0, -0.3), inertia=INERTIA, label="tip")
    j1 = b.add_joint_revolute(mid, tip, axis=(0, 1, 0), label="jb")
    b.add_articulation([j0, j1])
    b.add_equality_constraint_connect(mid, -1, anchor=(0, 0, 0.1), label="on_mid")
    with pytest.raises(NotImplementedError, match="'on_mid'.*'mid' is a massless link folded"):
        jaxart.solvers.SolverMuJoCo(b.finalize(dtype=F64))


# ------------------------------------------------------------------ TENDON and D6-DOF JOINT constraints
def _tendon_builder():
    """Chain builder with a D6 body (hinges about x and y), two fixed tendons and a spatial one."""
    b, ix = chain_builder()
    cfg = jaxart.ModelBuilder.JointDofConfig
    ld = b.add_link(mass=1.0, inertia=INERTIA, label="ld")
    ix["jd"] = b.add_joint_d6(ix["l3"], ld, angular_axes=[cfg(axis=(1, 0, 0)), cfg(axis=(0, 1, 0))], label="jd")
    ix["t0"] = b.add_tendon_fixed([(ix["j1"], 1.0), ((ix["jd"], 1), -0.5)])
    ix["t1"] = b.add_tendon_fixed([(ix["j2"], 2.0)])
    ix["t2"] = b.add_tendon_spatial([(ix["l1"], (0.0, 0.0, 0.1)), (-1, (0.0, 0.0, 1.0))])
    return b, ix


def test_tendon_and_d6_joint_constraints_in_the_builder():
    b, ix = _tendon_builder()
    k = b.add_equality_constraint_tendon(ix["t0"], ix["t1"], polycoef=(0.1, 0.5, 0.2), label="tt")
    assert b.equality_constraint_type[k] == EqType.TENDON
    assert (b.equality_constraint_tendon1[k], b.equality_constraint_tendon2[k]) == (ix["t0"], ix["t1"])
    assert b.equality_constraint_joint1[k] == -1 and b.equality_constraint_body1[k] == -1
    np.testing.assert_allclose(b.equality_constraint_polycoef[k], [0.1, 0.5, 0.2, 0.0, 0.0])
    k2 = b.add_equality_constraint_tendon(ix["t2"], polycoef=[0.8])
    assert b.equality_constraint_tendon2[k2] == -1
    assert b.add_equality_constraint_tendon(ix["t1"], ix["t2"]) == k2 + 1  # default polycoef (0, 1): L1 = L2
    np.testing.assert_allclose(b.equality_constraint_polycoef[k2 + 1], [0.0, 1.0, 0.0, 0.0, 0.0])
    j = b.add_equality_constraint_joint((ix["jd"], 1), ix["j1"], polycoef=(0.0, 2.0))
    assert (b.equality_constraint_joint1[j], b.equality_constraint_dof1[j]) == (ix["jd"], 1)
    assert (b.equality_constraint_joint2[j], b.equality_constraint_dof2[j]) == (ix["j1"], 0)
    j2 = b.add_equality_constraint_joint(ix["j2"], (ix["jd"], 0))
    assert (b.equality_constraint_joint2[j2], b.equality_constraint_dof2[j2]) == (ix["jd"], 0)
    dst = jaxart.ModelBuilder()
    dst.add_builder(b, label_prefix="a")
    dst.add_builder(b, label_prefix="b")
    nt, ne, nj = b.tendon_count, b.equality_constraint_count, b.joint_count
    assert dst.equality_constraint_tendon1[ne + k] == ix["t0"] + nt and dst.equality_constraint_tendon2[ne + k2] == -1
    assert dst.equality_constraint_joint1[ne + j] == ix["jd"] + nj and dst.equality_constraint_dof1[ne + j] == 1
    model = dst.finalize(skip_validation_joints=True)  # the D6 joint is outside the chain's articulation
    assert model.equality_constraint_tendon1.tolist()[ne + k] == ix["t0"] + nt
    assert model.equality_constraint_dof1.tolist()[ne + j] == 1


@pytest.mark.parametrize("call, exc, match", [
    (lambda b, ix: b.add_equality_constraint_tendon(9, ix["t1"], label="t"), ValueError,
     r"label='t'.*tendon1.*does not exist"),
    (lambda b, ix: b.add_equality_constraint_tendon(ix["t0"]), ValueError, "polycoef is required"),
    (lambda b, ix: b.add_equality_constraint_tendon(ix["t0"], ix["t0"]), ValueError, "same tendon"),
    (lambda b, ix: b.add_equality_constraint_tendon(ix["t0"], 1.0), TypeError, "tendon2 must be a tendon index"),
    (lambda b, ix: b.add_equality_constraint_tendon(ix["t0"], ix["t1"], polycoef=[1] * 6), ValueError,
     "1 to 5 coefficients"),
    (lambda b, ix: b.add_equality_constraint(EqType.TENDON, tendon1=ix["t0"], joint1=ix["j1"], polycoef=[0.0]),
     ValueError, "joint1 is not used"),
    (lambda b, ix: b.add_equality_constraint(EqType.JOINT, joint1=ix["j1"], tendon1=ix["t0"]), ValueError,
     "tendon1 is not used"),
    (lambda b, ix: b.add_equality_constraint(EqType.WELD, body1=ix["l1"], tendon2=ix["t0"]), ValueError,
     "tendon2 is not used"),
    (lambda b, ix: b.add_equality_constraint_joint((ix["jd"], 2), ix["j1"]), ValueError, "DOF 2 .* does not exist"),
    (lambda b, ix: b.add_equality_constraint_joint((ix["jd"], 1.0), ix["j1"]), TypeError, "DOF must be an int"),
    (lambda b, ix: b.add_equality_constraint_joint((ix["jd"], 0, 1), ix["j1"]), ValueError, r"\(joint, dof\) pair"),
    (lambda b, ix: b.add_equality_constraint_joint((ix["jd"], 1), (ix["jd"], 1)), ValueError, "same joint"),
    (lambda b, ix: b.add_equality_constraint_joint(ix["jd"], ix["j1"]), ValueError, "scalar"),
])
def test_tendon_and_d6_joint_validation(call, exc, match):
    b, ix = _tendon_builder()
    with pytest.raises(exc, match=match):
        call(b, ix)
