"""Drives, limits and armature on loop-closing joints in SolverFeatherstone (:mod:`jaxart.dynamics.loop_axes`).

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
