"""Equality and mimic constraints, and their run-time ``enabled`` flags, in every solver that claims them.

Parametrised by the README's feature table (:mod:`claims`): each claimant gets one case, the settings of one
scenario. Oracles: closed forms of small oscillations (a point-pinned compound pendulum, a welded compound
pendulum, three hinged pendulums coupled by a mimic and a JOINT polynomial into one DOF) and of free fall with
the constraints switched off at run time (no retrace). One model holds the three independent mechanisms, so one
compiled rollout per solver checks them all. SolverXPBD enforces hard positional rows (float32, 2 ms steps);
SolverSemiImplicit penalty springs along the same rows (float64, explicit 0.5 ms steps; row tolerances are the
springs' sag ``m g / ke``). SolverFeatherstone's hard rows and SolverMuJoCo's mapped equalities are checked by
their own tests (:data:`CASES`).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from claims import Elsewhere, solver_params

import jaxart
from jaxart.sim.equality import set_constraints_enabled
from jaxart.solvers import SolverMuJoCo, SolverSemiImplicit, SolverXPBD

G, AMP = 9.81, 0.1
INERTIA = [0.01, 0.01, 0.01]
MIMIC, POLY = 0.5, (0.0, -0.8, 0.3)  # q_b = 0.5 q_a; q_c = −0.8 q_a + 0.3 q_a²
KE = 1e4  # SolverSemiImplicit's attachment stiffness [N/m]


class Case(NamedTuple):
    """One solver's scenario: its construction, the step and the tolerances of the checks.

    Attributes:
        solver: The solver of a model.
        dtype: The model's floating-point type (``None``: the builder's default, float32).
        dt: Time step [s].
        steps: Steps of the rollouts.
        pin: Largest drift of the CONNECT's pin [m].
        weld_position: Largest offset of the WELDed box from its place on the link [m].
        weld_rotation: Largest difference of the box's and the link's quaternions.
        rows: Largest residual of the mimic and JOINT-polynomial rows [rad].
        fall: Tolerance of the free fall with the constraints off [m].
        unheld: Smallest mimic residual with the constraints off [rad].
    """

    solver: object
    dtype: object
    dt: float
    steps: int
    pin: float
    weld_position: float
    weld_rotation: float
    rows: float
    fall: float
    unheld: float


CASES = {
    "xpbd": Case(lambda m: SolverXPBD(m, iterations=4), None, 2e-3, 500, pin=1e-4, weld_position=2e-4,
                 weld_rotation=1e-4, rows=1e-4, fall=5e-3, unheld=0.02),
    # a soft pin released unloaded sags up to twice its static sag m g / ke (the box: mass 0.5)
    "semi_implicit": Case(lambda m: SolverSemiImplicit(m, angular_damping=0.0, joint_attach_ke=KE,
                                                       joint_attach_kd=1.0), jnp.float64, 5e-4, 600,
                          pin=2.2 * G / KE, weld_position=2.5 * 0.5 * G / KE, weld_rotation=1e-3, rows=1e-3,
                          fall=1e-9, unheld=0.01),
    "featherstone": Elsewhere((
        "tests/solvers/featherstone/test_featherstone_constraints.py::test_pinned_pendulum_connect_keeps_the_pin",
        "tests/solvers/featherstone/test_featherstone_constraints.py::"
        "test_joint_and_mimic_rows_hold_and_batched_matches_single",
        "tests/solvers/featherstone/test_featherstone_constraints.py::"
        "test_enabled_flags_switch_at_run_time_without_retracing")),
    "mujoco": Elsewhere((
        "tests/solvers/test_equality.py::test_mujoco_residuals_match_jaxart_semantics",
        "tests/solvers/test_equality.py::test_connect_trajectory_matches_mujoco_c",
        "tests/solvers/mujoco/test_mujoco_loops.py::test_enabled_flags_set_eq_active_each_step_without_retracing")),
}

#: The run-time ``enabled`` flags: the same cases (their rollouts with the flags off).
ENABLED_CASES = CASES


def _rot_x(a: float):
    return (float(np.sin(a / 2)), 0.0, 0.0, float(np.cos(a / 2)))


def _down(pivot, a: float, d: float):
    """World point at distance ``d`` below ``pivot`` turned by ``a`` about x."""
    return (pivot[0], pivot[1] + d * np.sin(a), pivot[2] - d * np.cos(a))


def _hinge(b, pivot, com_z: float, mass: float, label: str):
    link = b.add_link(xform=(pivot, (0, 0, 0, 1)), mass=mass, com=(0, 0, com_z), inertia=INERTIA, label=label)
    j = b.add_joint_revolute(-1, link, axis=(1, 0, 0), parent_xform=(pivot, (0, 0, 0, 1)), label=f"j{label}")
    b.add_articulation([j])
    return link, j


def _mechanisms(dtype=None):
    """Bob pinned by a CONNECT at (0, 0, 2); link + box WELD at (1, 0, 2); hinges a, b, c at x = 2, 3, 4 coupled
    by a mimic (b ← a) and a JOINT (c ← a). All start at rest, turned by AMP (a: AMP, b and c on their rows)."""
    b = jaxart.ModelBuilder()
    pivot = (0.0, 0.0, 2.0)
    bob = b.add_body(xform=(_down(pivot, AMP, 0.5), _rot_x(AMP)), mass=1.0, inertia=INERTIA, label="bob")
    b.add_equality_constraint_connect(bob, -1, anchor=(0.0, 0.0, 0.5), label="pin")
    link, j = _hinge(b, (1.0, 0.0, 2.0), -0.5, 1.0, "link")
    box = b.add_body(xform=(_down((1.0, 0.0, 2.0), AMP, 0.8), _rot_x(AMP)), mass=0.5, inertia=INERTIA, label="box")
    b.add_equality_constraint_weld(link, box, relpose=((0.0, 0.0, -0.8), (0, 0, 0, 1)), label="weld")
    _, ja = _hinge(b, (2.0, 0.0, 2.0), -0.5, 1.0, "a")
    _, jb = _hinge(b, (3.0, 0.0, 2.0), -1.0, 1.0, "b")
    _, jc = _hinge(b, (4.0, 0.0, 2.0), -0.3, 1.0, "c")
    b.add_constraint_mimic(jb, ja, coef1=MIMIC, label="mimic")
    b.add_equality_constraint_joint(jc, ja, polycoef=POLY, label="poly")
    qs = b.joint_q_start
    b.joint_q[qs[j]] = AMP
    b.joint_q[qs[ja]], b.joint_q[qs[jb]] = AMP, MIMIC * AMP
    b.joint_q[qs[jc]] = POLY[1] * AMP + POLY[2] * AMP ** 2
    return b.finalize(dtype=dtype), dict(bob=bob, link=link, box=box, j=qs[j], a=qs[ja], b=qs[jb], c=qs[jc])


def _omega(parts) -> float:
    """Small-oscillation frequency of pendulum parts ``(scale, mass, com distance)`` about one hinge coordinate."""
    num = sum(s * s * m * d for s, m, d in parts) * G
    den = sum(s * s * (INERTIA[0] + m * d * d) for s, m, d in parts)
    return float(np.sqrt(num / den))


def _qrot(q, v):
    u, w = q[..., :3], q[..., 3:]
    return v + 2.0 * w * np.cross(u, v) + 2.0 * np.cross(u, np.cross(u, v))


def _rollout(solver_of, steps: int, dt: float):
    """A jitted rollout ``(model, state) -> (body_q, joint_q)`` histories and its list of traces."""
    traces = []

    def run(m, s0):
        traces.append(1)
        solver = solver_of(m)

        def body(s, _):
            s = solver.step(s, None, None, dt)
            return s, (s.body_q, s.joint_q)

        return jax.lax.scan(body, s0, None, length=steps)[1]

    return jax.jit(run), traces


_RUNS: dict = {}


def _runs(key: str, case: Case):
    """The case's rollouts with the constraints on and off (one compile), cached per solver for the module."""
    if key not in _RUNS:
        model, ix = _mechanisms(case.dtype)
        st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
        run, traces = _rollout(case.solver, case.steps, case.dt)
        on = jax.device_get(run(model, st))
        off = jax.device_get(run(set_constraints_enabled(model, equality=[False] * 3, mimic=[False]), st))
        _RUNS[key] = model, ix, st, on, off, len(traces)
    return _RUNS[key]


@pytest.mark.parametrize("key, case", solver_params("equality", CASES))
def test_constraints_hold_and_match_small_oscillation_closed_forms(key, case):
    _, ix, _, (bq, jq), _, _ = _runs(key, case)
    t = case.dt * np.arange(1, case.steps + 1)
    # CONNECT: the pin stays put; the bob swings as a compound pendulum about it
    pin = bq[:, ix["bob"], :3] + _qrot(bq[:, ix["bob"], 3:], np.array([0.0, 0.0, 0.5]))
    assert np.abs(pin - [0.0, 0.0, 2.0]).max() < case.pin
    com = bq[:, ix["bob"], :3]
    angle = np.arctan2(com[:, 1], 2.0 - com[:, 2])
    np.testing.assert_allclose(angle, AMP * np.cos(_omega([(1, 1.0, 0.5)]) * t), atol=0.006)
    # WELD: the box keeps its pose on the link; the pair swings as one compound pendulum
    box_on_link = bq[:, ix["link"], :3] + _qrot(bq[:, ix["link"], 3:], np.array([0.0, 0.0, -0.8]))
    assert np.abs(box_on_link - bq[:, ix["box"], :3]).max() < case.weld_position
    assert np.abs(bq[:, ix["box"], 3:] - bq[:, ix["link"], 3:]).max() < case.weld_rotation  # same sign too
    w_weld = _omega([(1, 1.0, 0.5), (1, 0.5, 0.8)])
    np.testing.assert_allclose(jq[:, ix["j"]], AMP * np.cos(w_weld * t), atol=0.006)
    # mimic and JOINT polynomial: both rows hold; the coupled hinges swing at the one-DOF frequency
    qa = jq[:, ix["a"]]
    assert np.abs(jq[:, ix["b"]] - MIMIC * qa).max() < case.rows
    assert np.abs(jq[:, ix["c"]] - np.polynomial.polynomial.polyval(qa, POLY)).max() < case.rows
    w_coupled = _omega([(1, 1.0, 0.5), (MIMIC, 1.0, 1.0), (POLY[1], 1.0, 0.3)])
    assert abs(w_coupled - _omega([(1, 1.0, 0.5)])) > 0.3  # distinguishable from the free hinge
    np.testing.assert_allclose(qa, AMP * np.cos(w_coupled * t), atol=0.006)


@pytest.mark.parametrize("key, case", solver_params("enabled", ENABLED_CASES))
def test_disabled_at_run_time_without_retracing_gives_the_free_motion(key, case):
    _, ix, st, _, (bq, jq), traces = _runs(key, case)
    assert traces == 1  # the second rollout (flags off) reused the compiled one
    n = np.arange(1, case.steps + 1)
    fall = G * case.dt * case.dt * n * (n + 1) / 2  # semi-implicit Euler free fall from rest
    for body in ("bob", "box"):
        np.testing.assert_allclose(bq[:, ix[body], 2], float(st.body_q[ix[body], 2]) - fall, atol=case.fall)
    t = case.dt * n
    np.testing.assert_allclose(jq[:, ix["a"]], AMP * np.cos(_omega([(1, 1.0, 0.5)]) * t), atol=0.006)
    assert np.abs(jq[:, ix["b"]] - MIMIC * jq[:, ix["a"]]).max() > case.unheld  # the rows no longer hold


def test_flags_are_checked_and_read_by_the_other_solvers():
    model, _ = _mechanisms()
    assert model.equality_constraint_enabled.dtype == model.joint_q.dtype
    with pytest.raises(ValueError, match=r"equality constraint flags must have shape \(3,\)"):
        set_constraints_enabled(model, equality=[True, False])
    SolverSemiImplicit(model)
    mj = SolverMuJoCo(set_constraints_enabled(model, equality=[True, False, True])).mj_model
    assert mj.eq_active0.tolist() == [1, 0, 1, 1]


@pytest.mark.slow
def test_semi_implicit_matches_xpbd_on_a_short_horizon():
    """SolverSemiImplicit's springs follow SolverXPBD's hard rows up to their sag (slow: the XPBD rollout compiles
    for about a minute)."""
    case = CASES["semi_implicit"]
    model, ix, st, (bq, jq), _, _ = _runs("semi_implicit", case)
    steps = 200
    run, _ = _rollout(lambda m: SolverXPBD(m, iterations=4), steps, case.dt)
    bq_x, jq_x = jax.device_get(run(model, st))
    for k in ("j", "a", "b", "c"):
        np.testing.assert_allclose(jq[:steps, ix[k]], jq_x[:, ix[k]], atol=2e-3)
    for body in ("bob", "box"):  # the soft hinge and WELD sag by up to 2 m g / ke each
        np.testing.assert_allclose(bq[:steps, ix[body], :3], bq_x[:, ix[body], :3], atol=6.0 * G / KE)


@pytest.mark.slow
def test_semi_implicit_pin_sag_shrinks_with_stiffness():
    """A bob hanging at rest from a CONNECT: its pin sags by m g / ke (static balance of the penalty spring)."""
    b = jaxart.ModelBuilder()
    bob = b.add_body(xform=((0.0, 0.0, 1.5), (0, 0, 0, 1)), mass=2.0, inertia=[0.01] * 3, label="bob")
    b.add_equality_constraint_connect(bob, -1, anchor=(0.0, 0.0, 0.5), label="pin")
    model = b.finalize(dtype=jnp.float64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    sag = []
    for ke in (1e3, 1e4):
        # kd: critical damping at ke = 1e3 (rate 22/s at both)
        run, _ = _rollout(lambda m, ke=ke: SolverSemiImplicit(m, joint_attach_ke=ke, joint_attach_kd=89.0), 500, 1e-3)
        bq, _ = jax.device_get(run(model, st))
        sag.append(2.0 - (bq[-1, bob, 2] + 0.5))
        assert np.abs(bq[:, bob, :2]).max() < 1e-9  # no sideways motion
    np.testing.assert_allclose(sag, [2.0 * G / 1e3, 2.0 * G / 1e4], rtol=1e-3)


@pytest.mark.slow
def test_xpbd_gradients_through_enabled_and_disabled_rows_are_finite():
    """Gradient of one step with respect to the model (flags included) with the rows on and off (a CONNECTed bob
    and a mimic pair; the reverse-mode compile of the per-world XPBD step takes minutes)."""
    b = jaxart.ModelBuilder()
    bob = b.add_body(xform=((0.0, 0.05, 1.5), (0, 0, 0, 1)), mass=1.0, inertia=INERTIA, label="bob")
    b.add_equality_constraint_connect(bob, -1, anchor=(0.0, -0.05, 0.5), label="pin")
    _, ja = _hinge(b, (1.0, 0.0, 2.0), -0.5, 1.0, "a")
    _, jb = _hinge(b, (2.0, 0.0, 2.0), -0.5, 1.0, "b")
    b.add_constraint_mimic(jb, ja, coef1=MIMIC)
    model = b.finalize()
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    st = st.replace(body_qd=st.body_qd.at[1, 3].set(1.0))  # hinge a turns, b starts at rest

    def loss(m):
        s = SolverXPBD(m, iterations=2).step(st, None, None, CASES["xpbd"].dt)
        return jnp.sum(s.body_q[0, :3]) + jnp.sum(s.joint_q)

    grad = jax.jit(jax.grad(loss))
    for flag in (1.0, 0.0):
        g = grad(set_constraints_enabled(model, equality=[flag], mimic=[flag]))
        for leaf in jax.tree_util.tree_leaves(g):
            assert np.all(np.isfinite(np.asarray(leaf)))
        anchor = np.abs(np.asarray(g.equality_constraint_anchor)).max()
        assert anchor > 0.0 if flag else anchor == 0.0  # a disabled CONNECT's anchor has no effect
