"""Geometry of equality and mimic constraints in maximal coordinates, shared by SolverXPBD and SolverSemiImplicit.

Semantics (all positions and directions in world coordinates, world = body ``body_count``):

* **CONNECT / WELD points**: the point ``p1 = x1·a1`` of body 1 and the point ``p2 = x2·a2`` of body 2 must
  coincide. CONNECT: ``a1`` = anchor, ``a2`` the body-2 point where the anchor lies in the model's initial
  configuration (FK of ``Model.joint_q``, as SolverFeatherstone and the MuJoCo bridge); WELD: ``a1`` =
  ``relpose.p``, ``a2`` = anchor.
* **WELD rotation**: ``θ`` = the rotation vector of ``q2 (q1 q_rel)⁻¹``, weighted by ``torquescale``
  (``0`` leaves the rotation free).
* **coordinate** (JOINT / mimic): ``C = q_a − P(q_b)`` with ``P`` the polynomial ``Σ c_k q_b^k`` (JOINT; no
  reference joint: ``c_0``) or ``coef0 + coef1·q_b`` (mimic). The coordinates are those of the drives: a linear
  DOF (PRISMATIC, or a D6's) ``q = a_w·(x_c − x_p)`` with gradient ``a_w`` on the child anchor and ``−a_w`` on
  the parent at the same point; an angular DOF (REVOLUTE's twist angle, a D6's Euler-chain angle) with its
  world covector as gradient, unwrapped to the nearest copy of the step-start ``joint_q``.
* **TENDON**: ``C = L_1 − P(L_2)`` with the tendon lengths and their per-body gradient entries of
  :mod:`jaxart.solvers.maximal.tendons` (the entries of ``L_2`` scaled by ``−P'(L_2)``). The law of both
  polynomial rows is :func:`~jaxart.laws.equality.polynomial_coupling`.

SolverXPBD projects these as hard rows (:mod:`jaxart.solvers.xpbd.equality`), SolverSemiImplicit applies
penalty springs along them (:mod:`jaxart.solvers.semi_implicit.equality`). The ``enabled`` flags are traced
(:class:`EqualityData` ``on``), so both switch constraints at run time without recompiling.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.fk import eval_fk
from jaxart.laws.angles import nearest_turn
from jaxart.laws.equality import connect_anchor2, mimic_polynomial, polynomial_coupling
from jaxart.math import quat_conjugate, quat_mul, transform_point
from jaxart.sim.enums import EqType
from jaxart.solvers.maximal.joints import joint_static, rotation_vector
from jaxart.solvers.maximal.tendons import tendon_entries

__all__ = ["EqualityData", "EqualityPlan", "coordinate_rows", "equality_data", "equality_plan", "tendon_rows",
           "weld_points", "weld_rotation"]


class EqualityPlan(NamedTuple):
    """Static rows (numpy, hashable through the cache key: built once per model structure).

    Attributes:
        lin_eq: ``(R_l,)`` constraint of every linear row; ``lin_bodies`` ``(R_l, 2)`` (body 1, body 2).
        lin_connect: ``(R_l,)`` bool: CONNECT (else WELD).
        ang_eq, ang_bodies: WELD angular rows.
        crd_eq: ``(R_c,)`` constraint index (JOINT) or mimic index; ``crd_mimic`` ``(R_c,)`` bool.
        crd_joints: ``(R_c, 2)`` constrained and reference joint (−1: none).
        crd_bodies: ``(R_c, 4)`` child/parent bodies of the two joints (world for none).
        crd_linear: ``(R_c, 2)`` bool: the coordinate is a linear DOF (else angular).
        crd_axis: ``(R_c, 2)`` the DOF's index among its joint's linear (or angular) DOFs.
        crd_coord: ``(R_c, 2)`` coordinate index of the DOF (``joint_coord_count`` for none).
        ten_eq: ``(R_t,)`` TENDON constraints; ``ten_pair`` ``(R_t, 2)`` constrained and reference tendon (−1: none).
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
    crd_axis: np.ndarray
    crd_coord: np.ndarray
    ten_eq: np.ndarray
    ten_pair: np.ndarray

    @property
    def empty(self) -> bool:
        """Whether there is no row."""
        return not (len(self.lin_eq) or len(self.ang_eq) or len(self.crd_eq) or len(self.ten_eq))


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
    dof1, dof2 = eq.equality_constraint_dof1.array, eq.equality_constraint_dof2.array
    crd = [(k, False, int(eq.equality_constraint_joint1.array[k]), int(eq.equality_constraint_joint2.array[k]),
            int(dof1[k]), int(dof2[k])) for k in range(len(types)) if types[k] == EqType.JOINT]
    crd += [(k, True, int(eq.constraint_mimic_joint0.array[k]), int(eq.constraint_mimic_joint1.array[k]), 0, 0)
            for k in range(eq.constraint_mimic_count)]
    ten = [k for k in range(len(types)) if types[k] == EqType.TENDON]

    def pair(rows):
        return np.array([[world(b1[k]), world(b2[k])] for k in rows], np.int32).reshape(-1, 2)

    def bodies(j):
        return (nb, nb) if j < 0 else (int(st.child[j]), int(st.parent[j]))

    qs = np.asarray(topo.joint_q_start.array)
    dofs = [((ja, da), (jb, db)) for _, _, ja, jb, da, db in crd]
    crd_linear = np.array([[j >= 0 and d < st.n_lin[j] for j, d in p] for p in dofs], bool).reshape(-1, 2)
    crd_axis = np.array([[d - (0 if j < 0 or d < st.n_lin[j] else st.n_lin[j]) for j, d in p] for p in dofs],
                        np.int32).reshape(-1, 2)
    nq = int(qs[-1]) if len(qs) else 0
    crd_coord = np.array([[qs[j] + d if j >= 0 else nq for j, d in p] for p in dofs], np.int32).reshape(-1, 2)
    crd_bodies = np.array([[*bodies(c[2]), *bodies(c[3])] for c in crd], np.int32).reshape(-1, 4)
    lin_b, ang_b = pair(lin), pair(ang)
    ten_pair = np.array([[eq.equality_constraint_tendon1.array[k], eq.equality_constraint_tendon2.array[k]]
                         for k in ten], np.int32).reshape(-1, 2)
    return EqualityPlan(
        lin_eq=np.asarray(lin, np.int32), lin_bodies=lin_b, lin_connect=types[lin] == EqType.CONNECT,
        ang_eq=np.asarray(ang, np.int32), ang_bodies=ang_b,
        crd_eq=np.array([c[0] for c in crd], np.int32), crd_mimic=np.array([c[1] for c in crd], bool),
        crd_joints=np.array([c[2:4] for c in crd], np.int32).reshape(-1, 2), crd_bodies=crd_bodies,
        crd_linear=crd_linear, crd_axis=crd_axis, crd_coord=crd_coord, ten_eq=np.asarray(ten, np.int32),
        ten_pair=ten_pair)


class EqualityData(NamedTuple):
    """Per-step constants of the rows (traced)."""

    lin_a1: jnp.ndarray  # (R_l, 3) point on body 1 (its frame)
    lin_a2: jnp.ndarray  # (R_l, 3) point on body 2
    ang_qrel: jnp.ndarray  # (R_a, 4) unit relpose rotation
    ang_scale: jnp.ndarray  # (R_a,) torquescale
    crd_coef: jnp.ndarray  # (R_c, 5) polynomial coefficients of P (mimic: coef0, coef1, 0, 0, 0)
    crd_q0: jnp.ndarray  # (R_c, 2) step-start coordinates of the two joints (unwrapping reference)
    ten_coef: jnp.ndarray  # (R_t, 5) TENDON polynomial coefficients
    joint_q0: jnp.ndarray  # (joint_coord_count,) step-start coordinates (unwrapping reference of fixed tendons)
    on: tuple  # (lin, ang, crd, ten) enabled flags per row


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
        local2 = connect_anchor2(x1, x2, a1)
        a2 = jnp.where(jnp.asarray(plan.lin_connect)[:, None], local2, a2)
    qrel = relpose[plan.ang_eq, 3:]
    qrel = qrel / jnp.linalg.norm(qrel, axis=-1, keepdims=True)
    mimic = plan.crd_mimic
    poly = _pick(model.equality_constraint_polycoef.astype(f), plan.crd_eq, ~mimic)
    mim = _pick(mimic_polynomial(model.constraint_mimic_coef0.astype(f), model.constraint_mimic_coef1.astype(f)),
                plan.crd_eq, mimic)
    coef = poly + mim
    crd_q0 = jnp.concatenate([joint_q0.astype(f), jnp.zeros((1,), f)])[plan.crd_coord]
    eq_on = model.equality_constraint_enabled.astype(f)
    crd_on = _pick(eq_on, plan.crd_eq, ~mimic) + _pick(model.constraint_mimic_enabled.astype(f), plan.crd_eq, mimic)
    scale = model.equality_constraint_torquescale.astype(f)[plan.ang_eq]
    ten_coef = model.equality_constraint_polycoef.astype(f)[plan.ten_eq]
    return EqualityData(a1, a2, qrel, scale, coef, crd_q0, ten_coef, joint_q0.astype(f),
                        (eq_on[plan.lin_eq], eq_on[plan.ang_eq], crd_on, eq_on[plan.ten_eq]))


def _pick(values, idx: np.ndarray, use: np.ndarray):
    """``values[idx]`` where ``use``, zero elsewhere (static indices; ``values`` may be empty)."""
    ext = jnp.concatenate([values, jnp.zeros((1, *values.shape[1:]), values.dtype)])
    return ext[np.where(use, idx, values.shape[0]).astype(np.int32)]


def weld_points(q: jnp.ndarray, plan: EqualityPlan, d: EqualityData):
    """World points ``(p1, p2)`` ``(R_l, 3)`` of the CONNECT/WELD rows (``q``: ``(n+1, 7)`` poses, world last)."""
    return (transform_point(q[plan.lin_bodies[:, 0]], d.lin_a1), transform_point(q[plan.lin_bodies[:, 1]], d.lin_a2))


def weld_rotation(q: jnp.ndarray, plan: EqualityPlan, d: EqualityData) -> jnp.ndarray:
    """``(R_a, 3)`` world rotation vectors of ``q2 (q1 q_rel)⁻¹`` of the WELD rows (not yet scaled)."""
    q1, q2 = q[plan.ang_bodies[:, 0], 3:], q[plan.ang_bodies[:, 1], 3:]
    return rotation_vector(quat_mul(q2, quat_conjugate(quat_mul(q1, d.ang_qrel))))


def _coordinates(st, com_w, jc, joints: np.ndarray, linear: np.ndarray, axis: np.ndarray, q0):
    """Coordinates ``(R,)`` (angles unwrapped to ``q0``) and entry gradients (child, parent) ``(R, 2, 3)`` ×2."""
    j = joints.clip(0)
    lin_ax = jc.lin_axes[j, axis]
    x_c = jc.fr.x_c[j, :3]
    r_c = x_c - com_w[st.child[j]]
    r_p = x_c - com_w[st.parent[j]]  # the parent's lever to the child anchor (the axis turns with the parent)
    lin_lin = jnp.stack([lin_ax, -lin_ax], 1)
    lin_ang = jnp.stack([jnp.cross(r_c, lin_ax), -jnp.cross(r_p, lin_ax)], 1)
    g = jc.cov[j, axis]
    is_lin = jnp.asarray(linear)
    angle = nearest_turn(jc.angles[j, axis], q0)
    q = jnp.where(is_lin, jc.q_lin[j, axis], angle)
    lin = jnp.where(is_lin[:, None, None], lin_lin, 0.0)
    ang = jnp.where(is_lin[:, None, None], lin_ang, jnp.stack([g, -g], 1))
    none = jnp.asarray(joints < 0)
    return jnp.where(none, 0.0, q), jnp.where(none[:, None, None], 0.0, lin), jnp.where(none[:, None, None], 0.0, ang)


def coordinate_rows(model, com_w: jnp.ndarray, jc, plan: EqualityPlan, d: EqualityData):
    """JOINT/mimic rows: linear and angular gradients ``(R_c, 4, 3)`` on ``plan.crd_bodies`` and errors ``(R_c,)``.

    Args:
        model: The model.
        com_w: ``(n+1, 3)`` world COM positions (world last).
        jc: The joints' coordinates at the same poses (:func:`jaxart.solvers.xpbd.joints.joint_coords`).
        plan, d: The rows.
    """
    st = joint_static(model.topology)
    qa, lin_a, ang_a = _coordinates(st, com_w, jc, plan.crd_joints[:, 0], plan.crd_linear[:, 0],
                                    plan.crd_axis[:, 0], d.crd_q0[:, 0])
    qb, lin_b, ang_b = _coordinates(st, com_w, jc, plan.crd_joints[:, 1], plan.crd_linear[:, 1],
                                    plan.crd_axis[:, 1], d.crd_q0[:, 1])
    err, slope = polynomial_coupling(d.crd_coef, qa, qb)
    lin = jnp.concatenate([lin_a, -slope[:, None, None] * lin_b], 1)
    ang = jnp.concatenate([ang_a, -slope[:, None, None] * ang_b], 1)
    return lin, ang, err


def tendon_rows(model, body_q: jnp.ndarray, plan: EqualityPlan, d: EqualityData):
    """TENDON rows: body entries ``(R_t, 2K)``, linear and angular gradients ``(R_t, 2K, 3)`` and errors ``(R_t,)``.

    Args:
        model: The model.
        body_q: ``(body_count, 7)`` poses (no world row).
        plan, d: The rows.

    Returns:
        ``(bodies, lin, ang, err)``: ``bodies`` static numpy (``body_count`` = world / padding); the entries of the
        constrained tendon, then the reference tendon's scaled by ``−P'(L_2)`` (zero without one).
    """
    te = tendon_entries(model, body_q, d.joint_q0)
    t1, t2 = plan.ten_pair[:, 0], plan.ten_pair[:, 1]
    has2 = jnp.asarray(t2 >= 0)
    l2 = jnp.where(has2, te.length[t2.clip(0)], 0.0)
    err, slope = polynomial_coupling(d.ten_coef, te.length[t1], l2)
    scale = jnp.where(has2, slope, 0.0)[:, None, None]
    nb = model.body_count
    bodies = np.concatenate([te.bodies[t1], np.where((t2 >= 0)[:, None], te.bodies[t2.clip(0)], nb)], 1)
    lin = jnp.concatenate([te.lin[t1], -scale * te.lin[t2.clip(0)]], 1).astype(body_q.dtype)
    ang = jnp.concatenate([te.ang[t1], -scale * te.ang[t2.clip(0)]], 1).astype(body_q.dtype)
    return bodies.astype(np.int32), lin, ang, err.astype(body_q.dtype)
