"""TENDON equality constraints and JOINT equalities on D6 DOFs vs MuJoCo C (``mj_step``), in every solver that
claims equality constraints (:mod:`claims`).

Our own MJCF scene, float64, contacts off, semi-implicit Euler at 1 ms: pendulums coupled by a fixed tendon held at
its ``qpos0`` length (``L = L0``), by a quadratic polynomial between two fixed tendons, a two-link arm whose tip is
held by a spatial tendon (a rigid rope to a world site), and a body with two hinges (one jaxart D6 joint) coupled
to a third hinge by JOINT equalities in both directions (a D6 DOF constrained, and a D6 DOF as reference). Every
body starts off its rest pose, so everything swings for the 0.5 s compared. The hard-row solvers are compared with
MuJoCo run with nearly hard equalities (``solref`` 2 ms, ``solimp`` 0.9999); SolverMuJoCo with MuJoCo's default
soft equalities, which it exports (``mjEQ_TENDON`` with the polynomial re-expanded about its own
``tendon_length0``, ``mjEQ_JOINT`` on the D6's hinge).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from claims import solver_params

import jaxart
from jaxart.dynamics import eval_tendon_lengths
from jaxart.solvers import SolverFeatherstone, SolverMuJoCo, SolverSemiImplicit, SolverXPBD

STEPS, DT = 500, 1e-3

_SCENE = """
<mujoco>
  <option timestep="0.001" integrator="Euler"/>{eq_default}
  <default><geom contype="0" conaffinity="0" type="capsule" size="0.03"/></default>
  <worldbody>
    <site name="anchor" pos="4.3 0 2.2"/>
    <body name="a" pos="0 0 2"><joint name="ja" axis="1 0 0"/><geom fromto="0 0 0 0 0.4 -0.2" mass="1"/></body>
    <body name="b" pos="1 0 2"><joint name="jb" axis="1 0 0"/><geom fromto="0 0 0 0 -0.1 -0.6" mass="0.5"/></body>
    <body name="c" pos="2 0 2"><joint name="jc" axis="1 0 0"/><geom fromto="0 0 0 0 0.3 -0.3" mass="1"/></body>
    <body name="d" pos="3 0 2"><joint name="jd" axis="1 0 0"/><geom fromto="0 0 0 0 -0.4 -0.1" mass="0.7"/></body>
    <body name="e1" pos="4 0 2"><joint name="je1" axis="1 0 0"/><geom fromto="0 0 0 0 0.4 0" mass="1"/>
      <body name="e2" pos="0 0.4 0"><joint name="je2" axis="1 0 0"/>
        <geom fromto="0 0 0 0 0.3 0.1" mass="0.5"/><site name="tip" pos="0 0.3 0.1"/></body></body>
    <body name="f" pos="5 0 2"><joint name="jf1" axis="1 0 0"/><joint name="jf2" axis="0 1 0"/>
      <geom fromto="0 0 0 0.2 0.3 -0.2" mass="1"/></body>
    <body name="g" pos="6 0 2"><joint name="jg" axis="0 1 0"/><geom fromto="0 0 0 0.4 0 -0.1" mass="0.6"/></body>
  </worldbody>
  <tendon>
    <fixed name="ab"><joint joint="ja" coef="-0.5"/><joint joint="jb" coef="0.5"/></fixed>
    <fixed name="tc"><joint joint="jc" coef="1"/></fixed>
    <fixed name="td"><joint joint="jd" coef="2"/></fixed>
    <spatial name="rope"><site site="anchor"/><site site="tip"/></spatial>
  </tendon>
  <equality>
    <tendon name="hold_ab" tendon1="ab"/>
    <tendon name="poly_cd" tendon1="tc" tendon2="td" polycoef="0 0.5 0.4 0 0"/>
    <tendon name="rope_len" tendon1="rope"/>
    <joint name="d6_couple" joint1="jf2" joint2="jg" polycoef="0 1.5 0 0 0"/>
    <joint name="d6_ref" joint1="jg" joint2="jf1" polycoef="0 -0.7 0 0 0"/>
  </equality>
</mujoco>
"""
SOFT = _SCENE.replace("{eq_default}", "")
HARD = _SCENE.replace("{eq_default}", '<default><equality solref=".002 1" solimp=".9999 .9999 .001"/></default>')


class Case(NamedTuple):
    """One solver's scenario.

    Attributes:
        solver: The solver of a model.
        substeps: Steps per MuJoCo step (``DT / substeps`` each).
        hard: Compare with MuJoCo's nearly hard equalities (else its default soft ones).
        traj: Largest joint-coordinate difference from ``mj_step`` over the rollout [rad].
        rows: Largest residual of the fixed-tendon and D6 rows [rad].
    """

    solver: object
    substeps: int
    hard: bool
    traj: float
    rows: float


CASES = {
    "featherstone": Case(lambda m: SolverFeatherstone(m), 1, True, traj=2e-4, rows=1e-6),
    "xpbd": Case(lambda m: SolverXPBD(m, iterations=4), 1, True, traj=0.05, rows=1e-4),
    "semi_implicit": Case(lambda m: SolverSemiImplicit(m, angular_damping=0.0, joint_attach_ke=1e4,
                                                       joint_attach_kd=1.0), 10, True, traj=0.05, rows=2e-3),
    "mujoco": Case(lambda m: SolverMuJoCo(m), 1, False, traj=1e-8, rows=1e-2),
}


def _import(xml: str):
    b = jaxart.ModelBuilder()
    info = b.add_mjcf(xml)
    assert not info["unsupported"], info["unsupported"]
    return b.finalize(dtype=jnp.float64), info


def _mujoco_rollout(m) -> np.ndarray:
    d = mujoco.MjData(m)
    out = []
    for _ in range(STEPS):
        mujoco.mj_step(m, d)
        out.append(d.qpos.copy())
    return np.array(out)


def _rows(q: np.ndarray, ix: dict) -> np.ndarray:
    """Residuals of the fixed-tendon and D6 rows from joint coordinates ``(T, nq)`` (all start at 0)."""
    ja, jb, jc, jd, jf1, jf2, jg = (q[:, ix[k]] for k in ("ja", "jb", "jc", "jd", "jf1", "jf2", "jg"))
    return np.stack([jb - ja, jc - (0.5 * 2 * jd + 0.4 * (2 * jd) ** 2), jf2 - 1.5 * jg, jg + 0.7 * jf1], 1)


@pytest.mark.slow
@pytest.mark.parametrize("key, case", solver_params("tendon_equality", CASES))
def test_tendon_and_d6_joint_equalities_follow_mujoco(key, case):
    model, info = _import(HARD if case.hard else SOFT)
    ref = _mujoco_rollout(info["mj_model"])
    solver = case.solver(model) if key == "mujoco" else None

    def run(m, s0):
        sol = solver if solver is not None else case.solver(m)

        def body(s, _):
            s = sol.step(s, None, None, DT / case.substeps)
            return s, s.joint_q

        return jax.lax.scan(body, s0, None, length=STEPS * case.substeps)[1][case.substeps - 1::case.substeps]

    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    q = np.asarray(jax.jit(run)(model, st))
    cmap = info["coord_map"]
    assert np.ptp(ref, 0).min() > 0.02  # every coordinate moves
    np.testing.assert_allclose(q, ref[:, cmap], atol=case.traj)
    ix = {name: int(np.flatnonzero(cmap == info["mj_model"].jnt_qposadr[info["mj_model"].joint(name).id])[0])
          for name in ("ja", "jb", "jc", "jd", "jf1", "jf2", "jg")}
    assert np.abs(_rows(q, ix)).max() < case.rows


def test_import_and_bridge_export_reproduce_mujoco():
    """The imported constraints (absolute polynomials, D6 DOF references) exported by SolverMuJoCo step exactly like
    the source model in MuJoCo C (no JAX compile: the exported ``MjModel`` is stepped with ``mj_step``)."""
    model, info = _import(SOFT)
    eq = model.equality
    assert eq.equality_constraint_type.array.tolist() == [3, 3, 3, 2, 2]
    assert eq.equality_constraint_dof1.array.tolist() == [0, 0, 0, 1, 0]  # jf2 is the D6's second DOF
    assert eq.equality_constraint_dof2.array.tolist()[4] == 0  # jf1: its first
    m = info["mj_model"]
    rope0 = float(m.tendon_length0[m.tendon("rope").id])
    np.testing.assert_allclose(np.asarray(model.equality_constraint_polycoef[2]), [rope0, 0, 0, 0, 0])
    lengths = jax.jit(lambda mm: eval_tendon_lengths(mm, jaxart.eval_fk(mm, mm.joint_q, mm.joint_qd, mm.state())))(
        model)
    np.testing.assert_allclose(np.asarray(lengths), m.tendon_length0, atol=1e-12)
    exported = SolverMuJoCo(model, timestep=DT).mj_model
    kinds = [mujoco.mjtEq(int(t)) for t in exported.eq_type]
    assert kinds == [mujoco.mjtEq.mjEQ_TENDON] * 3 + [mujoco.mjtEq.mjEQ_JOINT] * 2
    used = np.where((m.eq_obj2id >= 0)[:, None], 1.0, np.eye(5)[0])  # without object 2 only data[0] is read
    np.testing.assert_allclose(exported.eq_data[:, :5] * used, m.eq_data[:, :5] * used, atol=1e-12)
    assert exported.nq == model.joint_coord_count  # hinges only: the bridge keeps jaxart's coordinate order
    got, ref = _mujoco_rollout(exported), _mujoco_rollout(m)
    assert np.ptp(ref, 0).min() > 0.02
    np.testing.assert_allclose(got, ref[:, info["coord_map"]], atol=1e-9)


def test_featherstone_constrained_accelerations_match_mujoco():
    """SolverFeatherstone's accelerations from rest (one 10 µs step) equal the hard-constrained accelerations of
    MuJoCo C's quantities: the saddle-point solve of ``mj_fullM``, ``qfrc_bias`` and the equality rows ``efc_J``
    (MuJoCo's own ``qacc`` keeps its rows soft: impedance at most 0.9999). This checks the TENDON rows (fixed,
    polynomial, spatial) and the D6 JOINT rows with their Jacobians."""
    model, info = _import(SOFT)
    m = info["mj_model"]
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.nefc == m.neq and np.abs(d.efc_pos).max() < 1e-12  # the rows hold at qpos0
    mass = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, mass)
    jac = d.efc_J.reshape(d.nefc, m.nv)
    kkt = np.block([[mass, jac.T], [jac, np.zeros((d.nefc, d.nefc))]])
    ref = np.linalg.solve(kkt, np.concatenate([-d.qfrc_bias, np.zeros(d.nefc)]))[: m.nv][info["dof_map"]]
    dt = 1e-5
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    ours = np.asarray(SolverFeatherstone(model).step(st, None, None, dt).joint_qd) / dt
    assert np.abs(ref).min() > 0.5  # every DOF accelerates
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
