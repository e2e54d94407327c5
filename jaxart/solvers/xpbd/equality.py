"""Equality and mimic constraints of SolverXPBD as hard positional rows (CONNECT, WELD, JOINT, mimic).

Each round of the projection, after the joint rows, solves all equality rows together (all positions and
directions in world coordinates, world = body ``body_count``):

* **linear** (one row per CONNECT / WELD): the point ``p1 = x1·a1`` of body 1 and the point ``p2 = x2·a2`` of
  body 2 are pulled together along ``n = (p2 − p1)/|p2 − p1|`` (the joint linear row of
  :mod:`jaxart.solvers.xpbd.joints` between two arbitrary anchors). CONNECT: ``a1`` = anchor, ``a2`` the body-2
  point where the anchor lies in the model's initial configuration (FK of ``Model.joint_q``, as
  SolverFeatherstone and the MuJoCo bridge); WELD: ``a1`` = ``relpose.p``, ``a2`` = anchor.
* **angular** (one row per WELD): ``C = torquescale·|θ|`` along ``θ/|θ|`` with ``θ`` the rotation vector of
  ``q2 (q1 q_rel)⁻¹`` (``torquescale = 0`` leaves the rotation free).
* **coordinate** (one row per JOINT / mimic): ``C = q_a − P(q_b)`` with ``P`` the polynomial
  ``Σ c_k q_b^k`` (JOINT; no reference joint: ``c_0``) or ``coef0 + coef1·q_b`` (mimic). The coordinates of the
  scalar joints are those of the drives: PRISMATIC (1 linear DOF) ``q = a_p·(x_c − x_p)`` with gradient
  ``a_p`` on the child anchor and ``−a_p`` on the parent at the same point; REVOLUTE (1 angular DOF) the twist
  angle of ``q_p⁻¹ q_c`` with gradient the world axis, unwrapped to the nearest copy of the step-start
  ``joint_q``.

Every row ``r`` has up to four body entries (linear and angular gradients ``J_r``). The rows are hard (zero
compliance, no multiplier carried) and solved as one block: ``Δλ = −W⁻¹ C`` with ``W = J M⁻¹ Jᵀ`` over the
bodies they share (a few rows: a dense ``(R, R)`` solve), so coupled rows (a mimic and a JOINT on one leader,
a WELD's linear and angular rows) are projected exactly to first order instead of under-relaxed. The traced
``enabled`` flags ``e`` gate the block: ``W ∘ e eᵀ + diag(1 − e)`` and ``e·C``, so a disabled row gets
``Δλ = 0`` exactly (switched at run time without recompiling, gradients finite).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.fk import eval_fk
from jaxart.math import quat_conjugate, quat_mul, quat_rotate, transform_point
from jaxart.math.small import dot_last, matvec
from jaxart.sim.enums import EqType
from jaxart.solvers.maximal.joints import joint_static, rotation_vector
from jaxart.solvers.maximal.sums import segment_sum
from jaxart.solvers.xpbd.common import Bodies, apply_impulses, make_bodies, safe_unit
from jaxart.solvers.xpbd.joints import joint_coords

__all__ = ["EqualityPlan", "equality_data", "equality_plan", "solve_equality"]


class EqualityPlan(NamedTuple):
    """Static rows (numpy, hashable through the cache key: built once per model structure).

    Attributes:
        lin_eq: ``(R_l,)`` constraint of every linear row; ``lin_bodies`` ``(R_l, 2)`` (body 1, body 2).
        lin_connect: ``(R_l,)`` bool: CONNECT (else WELD).
        ang_eq, ang_bodies: WELD angular rows.
        crd_eq: ``(R_c,)`` constraint index (JOINT) or mimic index; ``crd_mimic`` ``(R_c,)`` bool.
        crd_joints: ``(R_c, 2)`` constrained and reference joint (−1: none).
        crd_bodies: ``(R_c, 4)`` child/parent bodies of the two joints (world for none).
        crd_linear: ``(R_c, 2)`` bool: the joint's coordinate is linear (PRISMATIC-like).
    """

    lin_eq: np.ndarray
    lin_bodies: np.ndarray
    lin_connect: np.ndarray
    ang_eq: np.ndarray
    ang_bodies: np.ndarray
    crd_eq: np.ndarray
    crd_mimic: np.ndarray
    crd_joints: np.ndarray
    crd_bodies: np.ndarray
    crd_linear: np.ndarray

    @property
    def empty(self) -> bool:
        """Whether there is no row."""
        return not (len(self.lin_eq) or len(self.ang_eq) or len(self.crd_eq))


def equality_plan(model) -> EqualityPlan:
    """The static rows of every equality and mimic constraint of ``model`` (enabled or not)."""
    return _plan(model.topology, model.equality)


@functools.lru_cache(maxsize=64)
def _plan(topo, eq) -> EqualityPlan:
    nb = topo.body_count
    st = joint_static(topo)
    world = lambda b: nb if b < 0 else int(b)  # noqa: E731
    types = eq.equality_constraint_type.array
    b1, b2 = eq.equality_constraint_body1.array, eq.equality_constraint_body2.array
    lin = [k for k in range(len(types)) if types[k] in (EqType.CONNECT, EqType.WELD)]
    ang = [k for k in range(len(types)) if types[k] == EqType.WELD]
    crd = [(k, False, int(eq.equality_constraint_joint1.array[k]), int(eq.equality_constraint_joint2.array[k]))
           for k in range(len(types)) if types[k] == EqType.JOINT]
    crd += [(k, True, int(eq.constraint_mimic_joint0.array[k]), int(eq.constraint_mimic_joint1.array[k]))
            for k in range(eq.constraint_mimic_count)]

    def pair(rows):
        return np.array([[world(b1[k]), world(b2[k])] for k in rows], np.int32).reshape(-1, 2)

    def bodies(j):
        return (nb, nb) if j < 0 else (int(st.child[j]), int(st.parent[j]))

    crd_bodies = np.array([[*bodies(ja), *bodies(jb)] for _, _, ja, jb in crd], np.int32).reshape(-1, 4)
    crd_linear = np.array([[j >= 0 and st.n_lin[j] == 1 for j in (ja, jb)] for _, _, ja, jb in crd],
                          bool).reshape(-1, 2)
    lin_b, ang_b = pair(lin), pair(ang)
    return EqualityPlan(
        lin_eq=np.asarray(lin, np.int32), lin_bodies=lin_b, lin_connect=types[lin] == EqType.CONNECT,
        ang_eq=np.asarray(ang, np.int32), ang_bodies=ang_b,
        crd_eq=np.array([c[0] for c in crd], np.int32), crd_mimic=np.array([c[1] for c in crd], bool),
        crd_joints=np.array([c[2:] for c in crd], np.int32).reshape(-1, 2), crd_bodies=crd_bodies,
        crd_linear=crd_linear)


class EqualityData(NamedTuple):
    """Per-step constants of the rows (traced)."""

    lin_a1: jnp.ndarray  # (R_l, 3) point on body 1 (its frame)
    lin_a2: jnp.ndarray  # (R_l, 3) point on body 2
    ang_qrel: jnp.ndarray  # (R_a, 4) unit relpose rotation
    ang_scale: jnp.ndarray  # (R_a,) torquescale
    crd_coef: jnp.ndarray  # (R_c, 5) polynomial coefficients of P (mimic: coef0, coef1, 0, 0, 0)
    crd_q0: jnp.ndarray  # (R_c, 2) step-start coordinates of the two joints (unwrapping reference)
    on: tuple  # (lin, ang, crd) enabled flags per row


def equality_data(model, plan: EqualityPlan, joint_q0, dtype) -> EqualityData:
    """The rows' constants for one step (``joint_q0``: the step-start coordinates)."""
    f = dtype
    ident = jnp.asarray([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], f)
    anchor = model.equality_constraint_anchor.astype(f)
    relpose = model.equality_constraint_relpose.astype(f)
    a1 = jnp.where(jnp.asarray(plan.lin_connect)[:, None], anchor[plan.lin_eq], relpose[plan.lin_eq, :3])
    a2 = anchor[plan.lin_eq]
    if plan.lin_connect.any():  # static: body-2 points of CONNECTs at the initial configuration
        x0 = eval_fk(model, model.joint_q, model.joint_qd, model.state()).body_q.astype(f)
        x0 = jnp.concatenate([x0, ident[None]], 0)
        x1, x2 = x0[plan.lin_bodies[:, 0]], x0[plan.lin_bodies[:, 1]]
        local2 = quat_rotate(quat_conjugate(x2[:, 3:]), transform_point(x1, a1) - x2[:, :3])
        a2 = jnp.where(jnp.asarray(plan.lin_connect)[:, None], local2, a2)
    qrel = relpose[plan.ang_eq, 3:]
    qrel = qrel / jnp.linalg.norm(qrel, axis=-1, keepdims=True)
    mimic = plan.crd_mimic
    poly = _pick(model.equality_constraint_polycoef.astype(f), plan.crd_eq, ~mimic)
    mim = _pick(jnp.stack([model.constraint_mimic_coef0.astype(f), model.constraint_mimic_coef1.astype(f)], -1),
                plan.crd_eq, mimic)
    coef = poly + jnp.concatenate([mim, jnp.zeros((mim.shape[0], 3), f)], -1)
    nq = model.joint_coord_count
    qs = np.asarray(model.joint_q_start)
    coord = np.where(plan.crd_joints >= 0, qs[plan.crd_joints.clip(0)], nq).astype(np.int32)
    crd_q0 = jnp.concatenate([joint_q0.astype(f), jnp.zeros((1,), f)])[coord]
    eq_on = model.equality_constraint_enabled.astype(f)
    crd_on = _pick(eq_on, plan.crd_eq, ~mimic) + _pick(model.constraint_mimic_enabled.astype(f), plan.crd_eq, mimic)
    scale = model.equality_constraint_torquescale.astype(f)[plan.ang_eq]
    return EqualityData(a1, a2, qrel, scale, coef, crd_q0, (eq_on[plan.lin_eq], eq_on[plan.ang_eq], crd_on))


def _pick(values, idx: np.ndarray, use: np.ndarray):
    """``values[idx]`` where ``use``, zero elsewhere (static indices; ``values`` may be empty)."""
    ext = jnp.concatenate([values, jnp.zeros((1, *values.shape[1:]), values.dtype)])
    return ext[np.where(use, idx, values.shape[0]).astype(np.int32)]


def _block_solve(b: Bodies, bodies: np.ndarray, lin, ang, c, on):
    """Hard rows with ``K`` body entries each, solved as one block: per-body ``(linear, angular)`` impulse sums.

    Args:
        b: Bodies at the iterate (world last).
        bodies: ``(R, K)`` static body of every entry.
        lin: ``(R, K, 3)`` linear gradient of each entry (direction of the positional impulse).
        ang: ``(R, K, 3)`` angular gradient (lever × linear, plus pure rotation terms).
        c: ``(R,)`` errors; ``on``: ``(R,)`` enabled flags.
    """
    nb = b.inv_m.shape[0] - 1
    inv_m, inv_iw = b.inv_m[bodies], b.inv_iw[bodies]  # (R, K), (R, K, 3, 3)
    same = (bodies[:, :, None, None] == bodies[None, None, :, :]) & (bodies[:, :, None, None] < nb)  # (R,K,R,K)
    i_ang = matvec(inv_iw, ang)
    pair = (jnp.einsum("rid,sjd->risj", lin * inv_m[..., None], lin) + jnp.einsum("rid,sjd->risj", i_ang, ang))
    w = jnp.sum(jnp.where(jnp.asarray(same), pair, 0.0), (1, 3))  # (R, R) = J M⁻¹ Jᵀ
    d = jnp.diagonal(w)
    reg = jnp.where(d > 0.0, 1e-6 * d, 1.0)  # redundant rows; a row without dynamic bodies gets Δλ = 0
    w = w * (on[:, None] * on[None, :]) + jnp.diag(1.0 - on + on * reg)
    dlam = jnp.linalg.solve(w, -on * c)
    flat = bodies.reshape(-1)
    p = segment_sum((lin * dlam[:, None, None]).reshape(-1, 3), flat, nb)
    a = segment_sum((ang * dlam[:, None, None]).reshape(-1, 3), flat, nb)
    return p, a


def _pad(x, k: int = 4):
    """``(R, n, 3)`` entries padded with zero entries to ``(R, k, 3)``."""
    return jnp.concatenate([x, jnp.zeros((x.shape[0], k - x.shape[1], 3), x.dtype)], 1)


def _linear_rows(b: Bodies, plan: EqualityPlan, d: EqualityData):
    i1, i2 = plan.lin_bodies[:, 0], plan.lin_bodies[:, 1]
    p1 = transform_point(b.q[i1], d.lin_a1)
    p2 = transform_point(b.q[i2], d.lin_a2)
    c, n = safe_unit(p2 - p1)
    r1, r2 = p1 - b.com_w[i1], p2 - b.com_w[i2]
    return _pad(jnp.stack([-n, n], 1)), _pad(jnp.stack([-jnp.cross(r1, n), jnp.cross(r2, n)], 1)), c


def _angular_rows(b: Bodies, plan: EqualityPlan, d: EqualityData):
    q1, q2 = b.q[plan.ang_bodies[:, 0], 3:], b.q[plan.ang_bodies[:, 1], 3:]
    theta = rotation_vector(quat_mul(q2, quat_conjugate(quat_mul(q1, d.ang_qrel))))
    mag, g = safe_unit(theta)
    g = g * d.ang_scale[:, None]
    return _pad(jnp.zeros((g.shape[0], 2, 3), g.dtype)), _pad(jnp.stack([-g, g], 1)), d.ang_scale * mag


def _coordinates(st, b: Bodies, jc, joints: np.ndarray, linear: np.ndarray, q0):
    """Coordinates ``(R,)`` (angles unwrapped to ``q0``) and entry gradients (child, parent) ``(R, 2, 3)`` ×2."""
    j = joints.clip(0)
    lin_ax = jc.lin_axes[j, 0]
    x_c = jc.fr.x_c[j, :3]
    r_c = x_c - b.com_w[st.child[j]]
    r_p = x_c - b.com_w[st.parent[j]]  # the parent's lever to the child anchor (the axis turns with the parent)
    lin_lin = jnp.stack([lin_ax, -lin_ax], 1)
    lin_ang = jnp.stack([jnp.cross(r_c, lin_ax), -jnp.cross(r_p, lin_ax)], 1)
    g = jc.cov[j, 0]
    is_lin = jnp.asarray(linear)
    angle = jc.angles[j, 0]
    angle = angle + 2.0 * jnp.pi * jnp.round((q0 - angle) / (2.0 * jnp.pi))
    q = jnp.where(is_lin, jc.q_lin[j, 0], angle)
    lin = jnp.where(is_lin[:, None, None], lin_lin, 0.0)
    ang = jnp.where(is_lin[:, None, None], lin_ang, jnp.stack([g, -g], 1))
    none = jnp.asarray(joints < 0)
    return jnp.where(none, 0.0, q), jnp.where(none[:, None, None], 0.0, lin), jnp.where(none[:, None, None], 0.0, ang)


def _coordinate_rows(model, b: Bodies, plan: EqualityPlan, d: EqualityData):
    st = joint_static(model.topology)
    jc = joint_coords(model, st, b.q[:-1])
    qa, lin_a, ang_a = _coordinates(st, b, jc, plan.crd_joints[:, 0], plan.crd_linear[:, 0], d.crd_q0[:, 0])
    qb, lin_b, ang_b = _coordinates(st, b, jc, plan.crd_joints[:, 1], plan.crd_linear[:, 1], d.crd_q0[:, 1])
    q2 = qb * qb
    powers = jnp.stack([jnp.ones_like(qb), qb, q2, q2 * qb, q2 * q2], -1)
    value = dot_last(d.crd_coef, powers)
    slope = dot_last(d.crd_coef[:, 1:], jnp.asarray([1.0, 2.0, 3.0, 4.0], qb.dtype) * powers[:, :4])
    lin = jnp.concatenate([lin_a, -slope[:, None, None] * lin_b], 1)
    ang = jnp.concatenate([ang_a, -slope[:, None, None] * ang_b], 1)
    return lin, ang, qa - value


def solve_equality(model, plan: EqualityPlan, data: EqualityData, q, inv_m, inv_i):
    """One projection of all equality rows (one block solve). Returns the new ``(body_count, 7)`` poses."""
    b = make_bodies(model, q, inv_m, inv_i)
    nb = model.body_count
    parts, bodies = [], []
    for rows, make, ids in ((plan.lin_eq, lambda: _linear_rows(b, plan, data), plan.lin_bodies),
                            (plan.ang_eq, lambda: _angular_rows(b, plan, data), plan.ang_bodies),
                            (plan.crd_eq, lambda: _coordinate_rows(model, b, plan, data), plan.crd_bodies)):
        if len(rows):  # static
            parts.append(make())
            bodies.append(np.concatenate([ids, np.full((len(ids), 4 - ids.shape[1]), nb, np.int32)], 1))
    lin, ang, c = (jnp.concatenate([p[i] for p in parts]) for i in range(3))
    p, a = _block_solve(b, np.concatenate(bodies), lin, ang, c, jnp.concatenate(list(data.on)))
    return apply_impulses(model, b, None, p, a)
