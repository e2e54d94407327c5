"""Drives, limits and armature on loop-closing joints in SolverFeatherstone (:mod:`jaxart.dynamics.engine.loop_axes`).

Oracles: the same mechanism with the term on an equivalent tree joint (a parallelogram's loop angle equals its
rocker's angle; a slider closed by a PRISMATIC loop joint equals the tree slider), closed-form statics (a driven
pendulum's equilibrium, a hanging rope's stretch ``m g / ke``), finite differences. The models are passed to one
jitted rollout per mechanism, so every run of a mechanism shares its compilation.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from equality_models import INERTIA, fourbar_builder
from scipy.optimize import brentq

import jaxart
from jaxart.dynamics.engine.loop_axes import loop_axis_plan, loop_coordinates
from jaxart.sim.validate import np_quat_mul, np_transform_mul
from jaxart.solvers import SolverFeatherstone

jax.config.update("jax_enable_x64", True)
F64 = jnp.float64
DT = 5e-3
LOOP, ROCKER = 3, 2  # the parallelogram's loop DOF / coordinate and its rocker's


@functools.partial(jax.jit, static_argnames=("steps",))
def _rollout(model, joint_qd, steps: int = 400):
    """Body poses of ``steps`` steps from ``model.joint_q`` and ``joint_qd`` (no FREE angular damping)."""
    solver = SolverFeatherstone(model, angular_damping=0.0)
    st = model.state().replace(joint_qd=joint_qd)
    st = jaxart.eval_fk(model, st.joint_q, st.joint_qd, st)

    def body(s, _):
        s = solver.step(s, None, None, DT)
        return s, s.body_q

    return jax.lax.scan(body, st, None, length=steps)[1]


# ------------------------------------------------------------------ parallelogram: loop angle ≡ rocker angle
@functools.lru_cache(maxsize=1)
def _parallelogram():
    """The parallelogram of ``fourbar_builder`` closed by a REVOLUTE loop joint; the rocker (tree) and the loop joint
    both in POSITION_VELOCITY mode with zero gains, so every run below shares one compiled rollout."""
    b, _ = fourbar_builder("revolute")
    for d in (ROCKER, LOOP):
        b.joint_target_mode[d] = int(jaxart.JointTargetMode.POSITION_VELOCITY)
        b.joint_dof["target_ke"][d] = b.joint_dof["target_kd"][d] = 0.0
    return b.finalize(dtype=F64)


def _loop_angle(bq) -> np.ndarray:
    """Angle of the rocker's anchor frame about x relative to the coupler's (both anchors are unrotated)."""
    q1, q2 = np.asarray(bq[:, 1, 3:]), np.asarray(bq[:, 2, 3:])
    rel = np.array([np_quat_mul(np.array([-a[0], -a[1], -a[2], a[3]]), c) for a, c in zip(q1, q2, strict=True)])
    return 2.0 * np.arctan2(rel[:, 0], rel[:, 3])


def _set(model, dof, **values):
    return model.replace(**{f"joint_{k}": getattr(model, f"joint_{k}").at[dof].set(v) for k, v in values.items()})


def _qd(w: float):
    return jnp.array([w, -w, w, 0.0], F64)  # consistent with the parallelogram (the coupler translates)


@pytest.mark.slow
def test_driven_loop_joint_settles_at_the_closed_form_and_matches_the_tree_drive():
    """Drive (ke, kd, target 0.5 rad, effort limit 6 N·m, saturated at first) on the loop joint vs the same drive on
    the rocker's tree joint: same trajectory; both settle where ``ke (θ* − θ) = g Σ m ℓ · sin θ`` (= 9.81 sin θ)."""
    model = _parallelogram()
    gains = dict(target_ke=50.0, target_kd=5.0, effort_limit=6.0)
    runs = {}
    for dof in (LOOP, ROCKER):
        m = _set(model, dof, **gains).replace(joint_target_q=model.joint_target_q.at[dof].set(0.5))
        runs[dof] = _rollout(m, _qd(0.0))
    loop, tree = _loop_angle(runs[LOOP]), _loop_angle(runs[ROCKER])
    theta = brentq(lambda t: 50.0 * (0.5 - t) - 9.81 * np.sin(t), 0.0, 0.5)
    assert abs(loop[-1] - theta) < 1e-5
    np.testing.assert_allclose(loop, tree, atol=1e-6)
    free = _set(model, LOOP, **{**gains, "effort_limit": 1e6}).replace(
        joint_target_q=model.joint_target_q.at[LOOP].set(0.5))
    assert np.abs(_loop_angle(_rollout(free, _qd(0.0))) - loop).max() > 0.02  # the effort limit acted


def test_limited_loop_joint_stops_at_its_limit():
    """Penalty limits ±0.3 rad on the loop joint of a parallelogram swinging at 3 rad/s (free swing: ±0.65 rad):
    it stops at each limit within the penalty's overshoot ``ω √(I/k)`` over 2 s at 5 ms, like the tree limit."""
    model = _parallelogram()
    lim = dict(limit_lower=-0.3, limit_upper=0.3, limit_ke=1e5, limit_kd=10.0)
    loop = _loop_angle(_rollout(_set(model, LOOP, **lim), _qd(3.0)))
    tree = _loop_angle(_rollout(_set(model, ROCKER, **lim), _qd(3.0)))
    assert loop.max() < 0.3 + 5e-3 and loop.min() > -0.3 - 5e-3
    assert loop.max() > 0.29 and loop.min() < -0.29
    np.testing.assert_allclose(loop, tree, atol=1e-3)


# ------------------------------------------------------------------ slider on a swinging arm: PRISMATIC loop ≡ tree
TH0, S0 = 0.3, 0.1  # arm angle about y, slide


@functools.lru_cache(maxsize=2)
def _slider(loop: bool):
    """An arm hinged to the world about y with a slider along its x axis (spring 30 N/m to the rest slide 0.1 m): a
    tree PRISMATIC joint, or a FREE slider closed by a loop-closing PRISMATIC joint with the same frames (its axis
    turns with the arm, so the slide's acceleration has a velocity-product term ``J̇ q̇``)."""
    b = jaxart.ModelBuilder()
    arm = b.add_link(mass=1.0, com=(0.3, 0, 0), inertia=INERTIA, label="arm")
    hinge = b.add_joint_revolute(-1, arm, axis=(0, 1, 0), label="hinge")
    x2 = np_transform_mul(np.r_[0, 0, 0, 0, np.sin(TH0 / 2), 0, np.cos(TH0 / 2)], np.r_[0.2 + S0, 0, 0, 0, 0, 0, 1])
    sl = b.add_link(xform=(x2[:3], x2[3:]), mass=0.5, com=(0.05, 0, 0.02), inertia=INERTIA, label="slider")
    kw = dict(axis=(1, 0, 0), parent_xform=((0.2, 0, 0), (0, 0, 0, 1)), stiffness=30.0, label="slide")
    if loop:
        b.add_articulation([hinge])
        b.add_articulation([b.add_joint_free(sl)])
        b.add_joint_prismatic(arm, sl, **kw)
    else:
        b.add_articulation([hinge, b.add_joint_prismatic(arm, sl, **kw)])
        b.joint_q[1] = S0
    b.joint_q[0] = TH0
    m = b.finalize(dtype=F64)
    return m.replace(joint_rest_q=m.joint_rest_q.at[-1].set(S0))


def _slide(bq) -> np.ndarray:
    """Slide of the slider's anchor along the arm's x axis, from the body poses."""
    arm, sl = np.asarray(bq[:, 0]), np.asarray(bq[:, 1])
    anchor = np.array([np_transform_mul(a, np.r_[0.2, 0, 0, 0, 0, 0, 1])[:3] for a in arm])
    axis = np.array([np_transform_mul(a, np.r_[1.0, 0, 0, 0, 0, 0, 1])[:3] for a in arm]) - arm[:, :3]
    return np.sum((sl[:, :3] - anchor) * axis, -1)


def _slider_run(loop: bool, **values):
    m = _slider(loop)
    return _slide(_rollout(_set(m, m.joint_dof_count - 1, **values), jnp.zeros(m.joint_dof_count, F64), steps=200))


@pytest.mark.slow
def test_loop_joint_armature_matches_tree_armature():
    """Armature 0.3 kg on the slide (it changes the 1 s trajectory by 0.26 m): the loop joint's trajectory matches
    the tree joint's within the two formulations' own O(dt) difference without armature (dropping ``J̇ q̇`` from the
    armature's acceleration would leave 0.12 m)."""
    tree = {a: _slider_run(False, armature=a) for a in (0.0, 0.3)}
    loop = {a: _slider_run(True, armature=a) for a in (0.0, 0.3)}
    effect = np.abs(tree[0.3] - tree[0.0]).max()
    base = np.abs(loop[0.0] - tree[0.0]).max()
    assert effect > 0.2 and base < 0.01
    assert np.abs(loop[0.3] - tree[0.3]).max() < max(base, 0.02 * effect)


@pytest.mark.slow  # compiles the loop slider (shared with the armature test)
def test_limited_loop_prismatic_joint_stops_at_its_limits():
    """Slide limits [0.05, 0.25] m on the loop PRISMATIC joint (free motion: 0.1 → 0.64 m): held over 1 s at 5 ms."""
    s = _slider_run(True, limit_lower=0.05, limit_upper=0.25, limit_ke=1e5, limit_kd=10.0)
    assert s.max() < 0.25 + 2e-3 and s.min() > 0.05 - 2e-3
    assert s.max() > 0.249


def test_loop_distance_joint_limit_hangs_a_body_at_the_rope_length():
    """A free body hanging from the world by a loop-closing DISTANCE joint (max distance 0.5 m, anchor 0.1 m above
    its COM) dropped from 0.3 m: the rope catches it and it settles at ``0.5 + m g / limit_ke`` (closed form)."""
    b = jaxart.ModelBuilder()
    body = b.add_link(xform=((0, 0, 0.6), (0, 0, 0, 1)), mass=1.0, inertia=INERTIA, label="bob")
    b.add_articulation([b.add_joint_free(body)])
    b.add_joint_distance(-1, body, parent_xform=((0, 0, 1.0), (0, 0, 0, 1)), child_xform=((0, 0, 0.1), (0, 0, 0, 1)),
                         max_distance=0.5, label="rope")
    b.joint_dof["limit_ke"][6], b.joint_dof["limit_kd"][6] = 1e4, 100.0
    model = b.finalize(dtype=F64)
    bq = np.asarray(_rollout(model, model.joint_qd))
    dist = 1.0 - (bq[:, 0, 2] + 0.1)
    assert dist.max() < 0.5 + 0.02
    assert abs(dist[-1] - (0.5 + 9.81 / 1e4)) < 1e-6
    assert np.abs(bq[:, 0, :2]).max() < 1e-9  # straight down


@pytest.mark.slow  # the compilation of the reverse pass dominates (short horizon)
def test_gradients_of_a_driven_closed_loop_step_match_finite_differences():
    """d(loss)/d(target, ke, kd, initial crank rate) through 5 steps of the parallelogram driven on its loop joint."""
    model = _parallelogram()

    def loss(p):
        m = _set(model, LOOP, target_ke=p[1], target_kd=p[2]).replace(
            joint_target_q=model.joint_target_q.at[LOOP].set(p[0]))
        bq = _rollout(m, _qd(p[3]), steps=5)
        return jnp.sum(bq[-1, 1, :3] ** 2) + jnp.sum(bq[-1, 0, 3:] * jnp.array([1.0, 2.0, 0.5, 0.3]))

    p0 = jnp.array([0.5, 40.0, 3.0, 0.7], F64)
    grad = np.asarray(jax.jit(jax.grad(loss))(p0))
    f = jax.jit(loss)
    eps = np.array([1e-6, 1e-4, 1e-5, 1e-6])
    fd = np.array([(f(p0.at[i].add(eps[i])) - f(p0.at[i].add(-eps[i]))) / (2 * eps[i]) for i in range(4)])
    assert np.all(np.isfinite(grad)) and np.all(np.abs(grad) > 1e-4)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-10)


# ------------------------------------------------------------------ loop coordinates ≡ tree coordinates
_Q = np.array([0.0, np.sin(0.2), 0.1, np.cos(0.2)]) / np.linalg.norm([0.0, np.sin(0.2), 0.1, np.cos(0.2)])
_JOINTS = {  # type: (add_joint args, joint_q, joint_qd)
    "revolute": (("revolute", dict(axis=(0.0, 0.6, 0.8))), [0.7], [1.3]),
    "ball": (("ball", {}), list(np.array([0.1, -0.2, 0.3, 0.9]) / np.linalg.norm([0.1, -0.2, 0.3, 0.9])),
             [0.5, -1.0, 0.7]),
    "d6": (("d6", dict(linear_axes=[(1, 0, 0), (0.6, 0.8, 0)], angular_axes=[(0, 0, 1), (0, 1, 0), (1, 0, 0)])),
           [0.1, -0.05, 0.4, -0.3, 0.2], [0.3, 0.2, -0.5, 0.8, 1.1]),
    "d6_two_angles": (("d6", dict(linear_axes=[(0, 0, 1)], angular_axes=[(1, 0, 0), (0, 1, 0)])),
                      [0.05, 0.6, -0.4], [0.2, -0.7, 0.9]),
}


def _arms(loop: bool):
    """One arm hinged to the world per entry of ``_JOINTS``, a link attached to it by that joint: in the tree, or on
    a FREE joint and closed by the joint as a loop joint (armature on its axes, so that it enters the plan)."""
    b = jaxart.ModelBuilder()
    frames = dict(parent_xform=((0.1, 0.2, 0.0), tuple(_Q)), child_xform=((0.0, -0.1, 0.05), (0, 0, 0.6, 0.8)))
    for (jtype, kw), _, _ in _JOINTS.values():
        arm = b.add_link(mass=1.0, com=(0.2, 0, 0), inertia=INERTIA)
        hinge = b.add_joint_revolute(-1, arm, axis=(0, 0.8, 0.6))
        link = b.add_link(mass=0.5, com=(0.05, 0.0, 0.02), inertia=INERTIA)
        if not loop:
            b.add_articulation([hinge, getattr(b, f"add_joint_{jtype}")(arm, link, **kw, **frames)])
            continue
        b.add_articulation([hinge])
        b.add_articulation([b.add_joint_free(link)])
        j = getattr(b, f"add_joint_{jtype}")(arm, link, **kw, **frames)
        d0, d1 = b.joint_qd_start[j], b.joint_dof_count
        b.joint_dof["armature"][d0:d1] = [0.01] * (d1 - d0)
    return b.finalize(dtype=F64)


@pytest.mark.slow
def test_loop_coordinates_and_rates_equal_the_tree_joints():
    """Each joint of ``_JOINTS`` between a swinging arm and a link, as a tree joint at ``(q, q̇)``, and as a loop joint
    closing the same configuration (the link on a FREE joint at its tree pose and twist): the loop joint's measured
    coordinates and rates (its rows ``J q̇``) are the tree joint's ``q, q̇`` (PRISMATIC: the slider tests; the D6
    entries have linear axes)."""
    tree, loop = _arms(False), _arms(True)
    q_t = np.concatenate([[0.4 + 0.1 * k, *q] for k, (_, q, _) in enumerate(_JOINTS.values())])
    qd_t = np.concatenate([[-0.9 + 0.2 * k, *qd] for k, (_, _, qd) in enumerate(_JOINTS.values())])
    st = jaxart.eval_fk(tree, jnp.asarray(q_t), jnp.asarray(qd_t), tree.state())
    qs, ds = tree.topology.joint_q_start.array, tree.topology.joint_qd_start.array  # joints: hinge 2k, joint 2k + 1
    lqs, lds = loop.topology.joint_q_start.array, loop.topology.joint_qd_start.array  # hinge 3k, FREE, loop 3k + 2
    q_l, qd_l = np.array(loop.joint_q), np.array(loop.joint_qd)
    for k in range(len(_JOINTS)):
        q_l[lqs[3 * k]], qd_l[lds[3 * k]] = q_t[qs[2 * k]], qd_t[ds[2 * k]]
        q_l[lqs[3 * k + 1]:lqs[3 * k + 2]] = st.body_q[2 * k + 1]
        qd_l[lds[3 * k + 1]:lds[3 * k + 2]] = st.body_qd[2 * k + 1]
    sl = jaxart.eval_fk(loop, jnp.asarray(q_l), jnp.asarray(qd_l), loop.state())
    np.testing.assert_allclose(sl.body_qd, st.body_qd, atol=1e-12)  # the same configuration and motion
    q_m, qd_m, _ = loop_coordinates(loop, jnp.asarray(q_l), jnp.asarray(qd_l), sl.body_q, loop_axis_plan(loop))
    for k, kind in enumerate(_JOINTS):
        j, t = 3 * k + 2, 2 * k + 1
        np.testing.assert_allclose(q_m[lqs[j]:lqs[j + 1]], q_t[qs[t]:qs[t + 1]], atol=1e-10, err_msg=kind)
        np.testing.assert_allclose(qd_m[lds[j]:lds[j + 1]], qd_t[ds[t]:ds[t + 1]], atol=1e-10, err_msg=kind)
