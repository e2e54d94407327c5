"""Equality and mimic constraints of ``SolverSemiImplicit`` as penalty springs (CONNECT, WELD, JOINT, TENDON,
mimic).

The constraints are held like the solver's joints (:mod:`jaxart.solvers.maximal.penalty_joints`): by springs
with the joint attachment gains ``ke = joint_attach_ke``, ``kd = joint_attach_kd`` along the rows of
:mod:`jaxart.solvers.maximal.equality_rows` (the geometry SolverXPBD projects hard). Every scalar row ``C`` with
entries ``(J_lin, J_ang)`` on up to four bodies (``Ċ = Σ J_lin·v + J_ang·ω``) adds the force ``λ J_lin`` and
torque ``λ J_ang`` with ``λ = −e (ke C + kd' Ċ)``:

* CONNECT / WELD points: three rows ``C_i = (p2 − p1)_i`` (the attachment spring ``−ke (p2 − p1) − kd (ṗ2 − ṗ1)``
  on body 2 at ``p2``, its reaction on body 1 at ``p1``);
* WELD rotation: three rows ``C_i = s θ_i`` (``s`` = torquescale), gradient ``±s`` about the world axes;
* JOINT / mimic: ``C = q_a − P(q_b)`` with the coordinate gradients;
* TENDON: ``C = L_1 − P(L_2)`` with the tendons' body entries (damping ``kd``).

Angular rows (WELD rotations, JOINT/mimic rows whose constrained joint is angular) use ``kd' = 0.01 kd`` as
Newton's angular attachment damping; the others ``kd' = kd``. ``e`` is the traced ``enabled`` flag, so a
constraint is switched at run time without recompiling. Like the joints, the constraints are soft: a load ``F``
separates a CONNECT by about ``F / ke``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_rotate
from jaxart.solvers.maximal.equality_rows import (
    coordinate_rows,
    equality_data,
    equality_plan,
    tendon_rows,
    weld_points,
    weld_rotation,
)
from jaxart.solvers.maximal.joints import extend_world, joint_static
from jaxart.solvers.maximal.penalty_joints import ANGULAR_DAMPING_SCALE
from jaxart.solvers.maximal.sums import segment_sum
from jaxart.solvers.xpbd.joints import joint_coords

__all__ = ["equality_wrenches"]


def equality_wrenches(model, state, *, attach_ke: float, attach_kd: float) -> jnp.ndarray:
    """World wrenches ``(body_count, 6)`` (force, torque about the COM) of the equality and mimic springs.

    Args:
        model: The model (disabled constraints, ``enabled = 0``, contribute exactly zero).
        state: The state (``body_q``, ``body_qd``; ``joint_q`` as the angle-unwrapping reference).
        attach_ke: Spring stiffness [N/m, N·m/rad].
        attach_kd: Spring damping [N·s/m]; angular rows ×0.01.

    Returns:
        The wrenches (zeros without constraints).
    """
    nb, dtype = model.body_count, state.body_q.dtype
    plan = equality_plan(model)
    if plan.empty:
        return jnp.zeros((nb, 6), dtype)
    d = equality_data(model, plan, state.joint_q, dtype)
    q, qd = extend_world(state.body_q, state.body_qd)
    com = jnp.concatenate([model.body_com.astype(dtype), jnp.zeros((1, 3), dtype)], 0)
    com_w = q[:, :3] + quat_rotate(q[:, 3:], com)
    rows = []  # (bodies (R, 4) static, lin (R, 4, 3), ang (R, 4, 3), C (R,), on (R,), kd scale (R,))
    eye = jnp.eye(3, dtype=dtype)
    if len(plan.lin_eq):
        p1, p2 = weld_points(q, plan, d)
        r1, r2 = p1 - com_w[plan.lin_bodies[:, 0]], p2 - com_w[plan.lin_bodies[:, 1]]
        lin = jnp.stack([-jnp.broadcast_to(eye, (len(plan.lin_eq), 3, 3)), jnp.broadcast_to(eye, r1.shape + (3,))], 2)
        ang = jnp.stack([-jnp.cross(r1[:, None, :], eye), jnp.cross(r2[:, None, :], eye)], 2)
        rows.append((plan.lin_bodies, lin, ang, p2 - p1, d.on[0], 1.0))
    if len(plan.ang_eq):
        s = d.ang_scale[:, None, None] * eye
        ang = jnp.stack([-s, s], 2)
        rows.append((plan.ang_bodies, jnp.zeros_like(ang), ang, d.ang_scale[:, None] * weld_rotation(q, plan, d),
                     d.on[1], ANGULAR_DAMPING_SCALE))
    if len(plan.crd_eq):
        jc = joint_coords(model, joint_static(model.topology), state.body_q)
        lin, ang, c = coordinate_rows(model, com_w, jc, plan, d)
        scale = np.where(plan.crd_linear[:, 0], 1.0, ANGULAR_DAMPING_SCALE)
        rows.append((plan.crd_bodies, lin[:, None], ang[:, None], c[:, None], d.on[2], scale))
    if len(plan.ten_eq):
        bodies, lin, ang, c = tendon_rows(model, state.body_q, plan, d)
        rows.append((bodies, lin[:, None], ang[:, None], c[:, None], d.on[3], 1.0))
    force = jnp.zeros((nb, 3), dtype)
    torque = jnp.zeros((nb, 3), dtype)
    for bodies, lin, ang, c, on, kd_scale in rows:
        force, torque = _add_rows(nb, qd, bodies, lin, ang, c, on, attach_ke, attach_kd * np.asarray(kd_scale),
                                  force, torque)
    return jnp.concatenate([force, torque], -1)


def _add_rows(nb, qd, bodies: np.ndarray, lin, ang, c, on, ke, kd, force, torque):
    """Accumulate the penalty wrenches of constraints with ``k`` entries ``bodies (R, k)`` and ``m`` rows each.

    ``lin``/``ang``: ``(R, m, k, 3)`` gradients; ``c``: ``(R, m)`` errors; ``on``: ``(R,)``; ``kd``: scalar or
    ``(R,)``.
    """
    v = qd[bodies]  # (R, k, 6)
    cdot = jnp.sum(lin * v[:, None, :, :3] + ang * v[:, None, :, 3:], (-2, -1))
    kd = jnp.reshape(jnp.asarray(kd, c.dtype), (-1, 1))
    lam = -on[:, None] * (ke * c + kd * cdot)  # (R, m)
    flat = np.repeat(bodies[:, None, :], lin.shape[1], 1).reshape(-1)
    f = (lin * lam[..., None, None]).reshape(-1, 3)
    t = (ang * lam[..., None, None]).reshape(-1, 3)
    return force + segment_sum(f, flat, nb), torque + segment_sum(t, flat, nb)
