"""Equality and mimic constraints in SolverSemiImplicit (penalty springs along the shared equality rows).

Oracles: the closed forms of small oscillations of the mechanisms of ``test_xpbd_equality`` (a CONNECT-pinned
bob, a WELDed box, three hinges coupled by a mimic and a JOINT polynomial), the static sag ``F / ke`` of a
penalty pin, free fall with the constraints switched off at run time, and SolverXPBD (hard rows) on the same
model. float64, explicit steps of 0.5 ms.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from test_xpbd_equality import AMP, MIMIC, POLY, G, _mechanisms, _omega, _qrot

import jaxart
from jaxart.sim.equality import set_constraints_enabled
from jaxart.solvers import SolverSemiImplicit, SolverXPBD

DT, STEPS, KE = 5e-4, 600, 1e4
F64 = np.float64


def _rollout(solver_of, model, st, steps=STEPS, dt=DT):
    traces = []

    def run(m, s0):
        traces.append(1)
        solver = solver_of(m)

        def body(s, _):
            s = solver.step(s, None, None, dt)
            return s, (s.body_q, s.joint_q)

        return jax.lax.scan(body, s0, None, length=steps)[1]

    return jax.jit(run), traces


@pytest.fixture(scope="module")
def mech():
    model, ix = _mechanisms(dtype=F64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    run, traces = _rollout(lambda m: SolverSemiImplicit(m, angular_damping=0.0, joint_attach_ke=KE,
                                                        joint_attach_kd=1.0), model, st)
    on = jax.device_get(run(model, st))
    off = jax.device_get(run(set_constraints_enabled(model, equality=[False] * 3, mimic=[False]), st))
    return model, ix, st, on, off, len(traces)


def test_constraints_hold_and_follow_the_closed_forms(mech):
    _, ix, _, (bq, jq), _, _ = mech
    t = DT * np.arange(1, STEPS + 1)
    pin = bq[:, ix["bob"], :3] + _qrot(bq[:, ix["bob"], 3:], np.array([0.0, 0.0, 0.5]))
    # a soft pin released unloaded sags up to twice its static sag m g / ke
    assert np.abs(pin - [0.0, 0.0, 2.0]).max() < 2.2 * G / KE
    com = bq[:, ix["bob"], :3]
    np.testing.assert_allclose(np.arctan2(com[:, 1], 2.0 - com[:, 2]), AMP * np.cos(_omega([(1, 1.0, 0.5)]) * t),
                               atol=0.006)
    box_on_link = bq[:, ix["link"], :3] + _qrot(bq[:, ix["link"], 3:], np.array([0.0, 0.0, -0.8]))
    assert np.abs(box_on_link - bq[:, ix["box"], :3]).max() < 2.5 * 0.5 * G / KE  # box mass 0.5
    assert np.abs(bq[:, ix["box"], 3:] - bq[:, ix["link"], 3:]).max() < 1e-3
    np.testing.assert_allclose(jq[:, ix["j"]], AMP * np.cos(_omega([(1, 1.0, 0.5), (1, 0.5, 0.8)]) * t), atol=0.006)
    qa = jq[:, ix["a"]]
    assert np.abs(jq[:, ix["b"]] - MIMIC * qa).max() < 1e-3
    assert np.abs(jq[:, ix["c"]] - np.polynomial.polynomial.polyval(qa, POLY)).max() < 1e-3
    w_coupled = _omega([(1, 1.0, 0.5), (MIMIC, 1.0, 1.0), (POLY[1], 1.0, 0.3)])
    np.testing.assert_allclose(qa, AMP * np.cos(w_coupled * t), atol=0.006)


def test_disabled_at_run_time_without_retracing(mech):
    _, ix, st, _, (bq, jq), traces = mech
    assert traces == 1
    n = np.arange(1, STEPS + 1)
    fall = G * DT * DT * n * (n + 1) / 2  # semi-implicit Euler free fall from rest
    for body in ("bob", "box"):
        np.testing.assert_allclose(bq[:, ix[body], 2], float(st.body_q[ix[body], 2]) - fall, atol=1e-9)
    assert np.abs(jq[:, ix["b"]] - MIMIC * jq[:, ix["a"]]).max() > 0.01


@pytest.mark.slow
def test_matches_xpbd_on_a_short_horizon(mech):
    """Same trajectories as the hard rows of SolverXPBD up to the springs' sag (slow: the XPBD rollout compiles
    for about a minute)."""
    model, ix, st, (bq, jq), _, _ = mech
    steps = 200
    run, _ = _rollout(lambda m: SolverXPBD(m, iterations=4), model, st, steps=steps)
    bq_x, jq_x = jax.device_get(run(model, st))
    for k in ("j", "a", "b", "c"):
        np.testing.assert_allclose(jq[:steps, ix[k]], jq_x[:, ix[k]], atol=2e-3)
    for body in ("bob", "box"):  # the soft hinge and WELD sag by up to 2 m g / ke each
        np.testing.assert_allclose(bq[:steps, ix[body], :3], bq_x[:, ix[body], :3], atol=6.0 * G / KE)


@pytest.mark.slow
def test_pin_sag_shrinks_with_stiffness():
    """A bob hanging at rest from a CONNECT: its pin sags by m g / ke (static balance of the penalty spring)."""
    b = jaxart.ModelBuilder()
    bob = b.add_body(xform=((0.0, 0.0, 1.5), (0, 0, 0, 1)), mass=2.0, inertia=[0.01] * 3, label="bob")
    b.add_equality_constraint_connect(bob, -1, anchor=(0.0, 0.0, 0.5), label="pin")
    model = b.finalize(dtype=F64)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    sag = []
    for ke in (1e3, 1e4):
        run, _ = _rollout(lambda m, ke=ke: SolverSemiImplicit(m, joint_attach_ke=ke, joint_attach_kd=89.0), model,
                          st, steps=500, dt=1e-3)  # kd: critical damping at ke = 1e3 (rate 22/s at both)
        bq, _ = jax.device_get(run(model, st))
        sag.append(2.0 - (bq[-1, bob, 2] + 0.5))
        assert np.abs(bq[:, bob, :2]).max() < 1e-9  # no sideways motion
    np.testing.assert_allclose(sag, [2.0 * G / 1e3, 2.0 * G / 1e4], rtol=1e-3)
