"""Equality and mimic constraints in SolverXPBD (hard positional rows) and their run-time ``enabled`` flags.

Oracles: closed forms of small oscillations (a point-pinned compound pendulum, a welded compound pendulum, three
hinged pendulums coupled by a mimic and a JOINT polynomial into one DOF) and of free fall (constraints off).
One model holds the three independent mechanisms, so one compiled rollout checks them all (float32).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.sim.equality import set_constraints_enabled
from jaxart.solvers import SolverMuJoCo, SolverSemiImplicit, SolverXPBD

G, DT, STEPS, AMP = 9.81, 2e-3, 500, 0.1
INERTIA = [0.01, 0.01, 0.01]
MIMIC, POLY = 0.5, (0.0, -0.8, 0.3)  # q_b = 0.5 q_a; q_c = −0.8 q_a + 0.3 q_a²


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


@pytest.fixture(scope="module")
def rollouts():
    model, ix = _mechanisms()
    traces = []

    def rollout(m, st):
        traces.append(1)
        solver = SolverXPBD(m, iterations=4)

        def body(s, _):
            s = solver.step(s, None, None, DT)
            return s, (s.body_q, s.joint_q)

        return jax.lax.scan(body, st, None, length=STEPS)[1]

    run = jax.jit(rollout)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    on = jax.device_get(run(model, st))
    off = jax.device_get(run(set_constraints_enabled(model, equality=[False] * 3, mimic=[False]), st))
    return model, ix, st, on, off, len(traces)


def test_constraints_hold_and_match_small_oscillation_closed_forms(rollouts):
    _, ix, _, (bq, jq), _, _ = rollouts
    t = DT * np.arange(1, STEPS + 1)
    # CONNECT: the pin stays put; the bob swings as a compound pendulum about it
    pin = bq[:, ix["bob"], :3] + _qrot(bq[:, ix["bob"], 3:], np.array([0.0, 0.0, 0.5]))
    assert np.abs(pin - [0.0, 0.0, 2.0]).max() < 1e-4
    com = bq[:, ix["bob"], :3]
    angle = np.arctan2(com[:, 1], 2.0 - com[:, 2])
    np.testing.assert_allclose(angle, AMP * np.cos(_omega([(1, 1.0, 0.5)]) * t), atol=0.006)
    # WELD: the box keeps its pose on the link; the pair swings as one compound pendulum
    box_on_link = bq[:, ix["link"], :3] + _qrot(bq[:, ix["link"], 3:], np.array([0.0, 0.0, -0.8]))
    assert np.abs(box_on_link - bq[:, ix["box"], :3]).max() < 2e-4
    assert np.abs(bq[:, ix["box"], 3:] - bq[:, ix["link"], 3:]).max() < 1e-4  # same orientation (no sign flip)
    w_weld = _omega([(1, 1.0, 0.5), (1, 0.5, 0.8)])
    np.testing.assert_allclose(jq[:, ix["j"]], AMP * np.cos(w_weld * t), atol=0.006)
    # mimic and JOINT polynomial: both rows hold; the coupled hinges swing at the one-DOF frequency
    qa = jq[:, ix["a"]]
    assert np.abs(jq[:, ix["b"]] - MIMIC * qa).max() < 1e-4
    assert np.abs(jq[:, ix["c"]] - np.polynomial.polynomial.polyval(qa, POLY)).max() < 1e-4
    w_coupled = _omega([(1, 1.0, 0.5), (MIMIC, 1.0, 1.0), (POLY[1], 1.0, 0.3)])
    assert abs(w_coupled - _omega([(1, 1.0, 0.5)])) > 0.3  # distinguishable from the free hinge
    np.testing.assert_allclose(qa, AMP * np.cos(w_coupled * t), atol=0.006)


def test_disabled_at_run_time_without_retracing_gives_the_free_motion(rollouts):
    _, ix, st, _, (bq, jq), traces = rollouts
    assert traces == 1  # the second rollout (flags off) reused the compiled one
    n = np.arange(1, STEPS + 1)
    fall = G * DT * DT * n * (n + 1) / 2  # semi-implicit Euler free fall from rest
    for body in ("bob", "box"):
        np.testing.assert_allclose(bq[:, ix[body], 2], float(st.body_q[ix[body], 2]) - fall, atol=5e-3)
    t = DT * n
    np.testing.assert_allclose(jq[:, ix["a"]], AMP * np.cos(_omega([(1, 1.0, 0.5)]) * t), atol=0.006)
    assert np.abs(jq[:, ix["b"]] - MIMIC * jq[:, ix["a"]]).max() > 0.02  # the rows no longer hold


def test_flags_are_checked_and_read_by_the_other_solvers():
    model, _ = _mechanisms()
    assert model.equality_constraint_enabled.dtype == model.joint_q.dtype
    with pytest.raises(ValueError, match=r"equality constraint flags must have shape \(3,\)"):
        set_constraints_enabled(model, equality=[True, False])
    SolverSemiImplicit(model)  # enforced there (penalty springs: test_semi_implicit_equality)
    mj = SolverMuJoCo(set_constraints_enabled(model, equality=[True, False, True])).mj_model
    assert mj.eq_active0.tolist() == [1, 0, 1, 1]


@pytest.mark.slow
def test_gradients_through_enabled_and_disabled_rows_are_finite():
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
        s = SolverXPBD(m, iterations=2).step(st, None, None, DT)
        return jnp.sum(s.body_q[0, :3]) + jnp.sum(s.joint_q)

    grad = jax.jit(jax.grad(loss))
    for flag in (1.0, 0.0):
        g = grad(set_constraints_enabled(model, equality=[flag], mimic=[flag]))
        for leaf in jax.tree_util.tree_leaves(g):
            assert np.all(np.isfinite(np.asarray(leaf)))
        anchor = np.abs(np.asarray(g.equality_constraint_anchor)).max()
        assert anchor > 0.0 if flag else anchor == 0.0  # a disabled CONNECT's anchor has no effect
