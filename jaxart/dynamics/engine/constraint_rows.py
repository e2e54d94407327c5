"""Bilateral constraint rows of the reduced-coordinate solve: loop-closing joints, equality and mimic constraints.

Every constraint contributes scalar rows ``g_r(q) = 0`` with a Jacobian row ``G_r`` over the flat DOF slots of
all articulation blocks (``N = A·D``, the world layout of :mod:`jaxart.dynamics.engine.contact_terms`), so
``ġ_r = G_r q̇``. The rows (all positions and directions in world coordinates):

* **loop-closing joint** (outside every articulation; parent anchor frame ``P = X_wp·X_p``, child anchor
  frame ``C = X_wc·X_c``): the anchor offset ``p_C − p_P`` along the directions that none of its linear
  axes span (3 rows for REVOLUTE/BALL/FIXED, 2 for PRISMATIC, D6 by its linear axes); the orientation:
  no angular axis → the rotation vector of ``q_C q_P⁻¹`` (3 rows), one axis ``a`` → ``a_P × a_C`` along two
  directions perpendicular to ``a`` (2 rows), two axes ``u, v`` → ``u_P·v_C − u·v`` (1 row; the Euler
  chain ``R(u)R(v)`` keeps ``v`` at a fixed angle to ``u``), three axes (BALL, D6) → none. FREE joints
  constrain nothing.
* **CONNECT**: ``x2·a2 − x1·a1`` (3 rows), with ``a2`` the body-2 point where the anchor lies in the
  model's initial configuration (forward kinematics of ``Model.joint_q``).
* **WELD**: ``x2·anchor − x1·relpose.p`` (3 rows) and ``torquescale ×`` the rotation vector of
  ``q2 (q1 q_rel)⁻¹`` (3 rows).
* **JOINT**: ``q1 − Σ c_k q2^k`` (``q``: a scalar joint's coordinate or one D6 DOF's); **mimic**:
  ``q0 − coef0 − coef1·q1``; **TENDON**: ``L1 − Σ c_k L2^k`` with the tendon lengths and their Jacobian rows
  (:func:`~jaxart.dynamics.tendon_jacobian.tendon_jacobian`) (1 row each; the law
  :func:`~jaxart.laws.equality.polynomial_coupling`).
* **hard DISTANCE limit** (a DISTANCE joint, tree or loop, whose first DOF has a finite limit and
  ``limit_ke = limit_kd = 0``): ``|p_C − p_P| − d_lim`` (1 row), gated by its activity: on for a step when the
  distance predicted from the step's start, ``d + dt·ḋ``, is beyond ``max_distance`` or below ``min_distance``
  (an active set without complementarity: the row holds the limit for that step even where the body would
  have moved back inside).

Every equality and mimic constraint makes rows; their traced ``equality_constraint_enabled`` /
``constraint_mimic_enabled`` flags ``e`` scale them (``e·G_r``, ``e·g_r``), so a disabled constraint has zero
rows, and :func:`constraint_rows` (``with_enabled=True``) returns the per-row flags for the solve, which adds
``1 − e`` to the rows' regularisation (the multiplier of a disabled row is then exactly zero): switching them
needs no recompilation. Loop joints make rows when ``joint_enabled`` (static: changing it recompiles).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.engine.tendon_terms import flat_dof_rows
from jaxart.dynamics.layout import DynamicsLayout, body_slot_masks
from jaxart.dynamics.tendon_forces import tendon_kinematics
from jaxart.dynamics.tendon_jacobian import tendon_jacobian
from jaxart.laws.equality import connect_anchor2, mimic_polynomial, polynomial_coupling
from jaxart.math import quat_conjugate, quat_mul, quat_rotate, safe_normalize, transform_mul, transform_point
from jaxart.sim.enums import EqType, JointType

__all__ = ["ConstraintPlan", "constraint_plan", "constraint_rows"]

_IDENT = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


class ConstraintPlan(NamedTuple):
    """Static row structure (hashable tuples of ints).

    Attributes:
        loops: ``(joint, parent, child, n_linear, n_angular, first_dof)`` of every enforced loop joint.
        connect: ``(constraint, body1, body2)`` of CONNECT constraints (enabled or not).
        weld: ``(constraint, body1, body2)`` of WELD constraints.
        joint: ``(constraint, q1, dof1, q2, dof2)`` of JOINT constraints (coordinate and DOF indices; −1: no
            reference joint).
        mimic: ``(constraint, q0, dof0, q1, dof1)`` of mimic constraints.
        tendon: ``(constraint, tendon1, tendon2)`` of TENDON constraints (−1: no reference tendon).
        distance: ``(joint, parent, child, first_dof)`` of DISTANCE joints with hard distance limits.
    """

    loops: tuple
    connect: tuple
    weld: tuple
    joint: tuple
    mimic: tuple
    distance: tuple = ()
    tendon: tuple = ()

    @property
    def empty(self) -> bool:
        """Whether there is no row."""
        return not (self.loops or self.connect or self.weld or self.joint or self.mimic or self.distance
                    or self.tendon)


def constraint_plan(model, *, ignore_loop_joints: bool = False) -> ConstraintPlan:
    """The static rows of ``model`` (see the module docstring).

    Args:
        model: The model.
        ignore_loop_joints: Leave loop-closing joints out (the tree is simulated without them).

    Returns:
        The :class:`ConstraintPlan` (the free axes' drives, limits and armature:
        :mod:`jaxart.dynamics.engine.loop_axes`).
    """
    return _plan(model.topology, model.equality, bool(ignore_loop_joints), _hard_distance(model))


def _hard_distance(model) -> tuple | None:
    """Static flags of the joints whose first DOF has a finite limit and ``limit_ke = limit_kd = 0`` (a DISTANCE
    joint's hard limit), or ``None`` for a traced model (every DISTANCE joint then gets its gated row)."""
    try:
        lo, hi = np.asarray(model.joint_limit_lower), np.asarray(model.joint_limit_upper)
        ke, kd = np.asarray(model.joint_limit_ke), np.asarray(model.joint_limit_kd)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None
    if not len(lo):
        return (False,) * model.topology.joint_count
    d0 = np.minimum(np.asarray(model.topology.joint_qd_start.array)[:-1], len(lo) - 1)  # DOF-less joints: unread
    return tuple((((lo[d0] >= 0.0) | (hi[d0] >= 0.0)) & (ke[d0] <= 0.0) & (kd[d0] <= 0.0)).tolist())


@functools.lru_cache(maxsize=64)
def _plan(topo, eq, ignore_loop_joints: bool, hard: tuple | None = None) -> ConstraintPlan:
    art = topo.joint_articulation.array
    qs, qst = topo.joint_qd_start.array, topo.joint_q_start.array
    loops = []
    if not ignore_loop_joints:
        for j in np.flatnonzero(art < 0):
            jt = JointType(int(topo.joint_type.array[j]))
            if not topo.joint_enabled.array[j] or jt in (JointType.FREE, JointType.DISTANCE):
                continue
            nl, na = (int(x) for x in topo.joint_dof_dim.array[j])
            if jt == JointType.BALL:
                nl, na = 0, 3
            loops.append((int(j), int(topo.joint_parent.array[j]), int(topo.joint_child.array[j]), nl, na,
                          int(qs[j])))
    groups = {EqType.CONNECT: [], EqType.WELD: [], EqType.JOINT: [], EqType.TENDON: []}
    for k in range(eq.equality_constraint_count):
        t = EqType(int(eq.equality_constraint_type.array[k]))
        if t == EqType.JOINT:
            j1, j2 = int(eq.equality_constraint_joint1.array[k]), int(eq.equality_constraint_joint2.array[k])
            d1, d2 = int(eq.equality_constraint_dof1.array[k]), int(eq.equality_constraint_dof2.array[k])
            ref = (int(qst[j2]) + d2, int(qs[j2]) + d2) if j2 >= 0 else (-1, -1)
            groups[t].append((k, int(qst[j1]) + d1, int(qs[j1]) + d1, *ref))
        elif t == EqType.TENDON:
            groups[t].append((k, int(eq.equality_constraint_tendon1.array[k]),
                              int(eq.equality_constraint_tendon2.array[k])))
        else:
            b1, b2 = eq.equality_constraint_body1.array[k], eq.equality_constraint_body2.array[k]
            groups[t].append((k, int(b1), int(b2)))
    mimic = []
    for k in range(eq.constraint_mimic_count):
        j0, j1 = int(eq.constraint_mimic_joint0.array[k]), int(eq.constraint_mimic_joint1.array[k])
        mimic.append((k, int(qst[j0]), int(qs[j0]), int(qst[j1]), int(qs[j1])))
    distance = []
    for j in np.flatnonzero(topo.joint_type.array == int(JointType.DISTANCE)):
        if (art[j] < 0 and (ignore_loop_joints or not topo.joint_enabled.array[j])) or (hard is not None
                                                                                          and not hard[j]):
            continue
        distance.append((int(j), int(topo.joint_parent.array[j]), int(topo.joint_child.array[j]), int(qs[j])))
    return ConstraintPlan(loops=tuple(loops), connect=tuple(groups[EqType.CONNECT]), weld=tuple(groups[EqType.WELD]),
                          joint=tuple(groups[EqType.JOINT]), mimic=tuple(mimic), distance=tuple(distance),
                          tendon=tuple(groups[EqType.TENDON]))


class BodyFrames:
    """World poses and flat-slot Jacobians of bodies (−1 = world: identity pose, no columns)."""

    def __init__(self, lay: DynamicsLayout, terms, dtype) -> None:
        self.body_q = terms.body_q
        self.cols = terms.S.reshape(-1, 6)
        self.table = body_slot_masks(lay, terms.body_q.shape[0])
        self.dtype = dtype

    def pose(self, b: int):
        return jnp.asarray(_IDENT, self.dtype) if b < 0 else self.body_q[b]

    def _mask(self, b: int):
        return jnp.asarray(self.table[b] if b >= 0 else np.zeros(self.table.shape[1], bool), self.dtype)

    def point_jac(self, b: int, p):
        """``(N, 3)``: velocity of world point ``p`` moving with body ``b``."""
        return (self.cols[:, :3] + jnp.cross(self.cols[:, 3:], p)) * self._mask(b)[:, None]

    def ang_jac(self, b: int):
        """``(N, 3)``: angular velocity of body ``b``."""
        return self.cols[:, 3:] * self._mask(b)[:, None]


def _rotvec(q):
    """Small-angle rotation vector ``2·sign(w)·xyz`` of a unit quaternion."""
    return 2.0 * jnp.where(q[3] < 0.0, -1.0, 1.0) * q[:3]


def _perp_basis(a):
    """``(2, 3)`` unit directions perpendicular to unit ``a`` (and to each other)."""
    helper = jnp.where(jnp.abs(a[0]) < 0.9, jnp.asarray([1.0, 0.0, 0.0], a.dtype), jnp.asarray([0.0, 1.0, 0.0],
                                                                                                 a.dtype))
    d1 = safe_normalize(jnp.cross(a, helper))
    return jnp.stack([d1, jnp.cross(a, d1)])


def _linear_rows(fr: BodyFrames, b1, p1, b2, p2, dirs, *, at_p2: bool = False):
    """Rows of ``dirs · (p2 − p1)`` with ``p1`` on ``b1`` and ``p2`` on ``b2``.

    ``at_p2``: ``dirs`` and ``p1`` move with ``b1`` (a loop joint's parent-anchor frame). The exact rate is then
    ``dirs · (v2(p2) − v1(p2))`` — body 1's velocity at the point ``p2`` — which stays exact when the offset
    along the joint's free linear axes is large; with fixed world ``dirs`` it is ``dirs · (v2(p2) − v1(p1))``.
    """
    jac = fr.point_jac(b2, p2) - fr.point_jac(b1, p2 if at_p2 else p1)
    return dirs @ jac.T, dirs @ (p2 - p1)


def _angular_rows(fr: BodyFrames, b1, b2, dirs, err, scale=1.0):
    jac = (fr.ang_jac(b2) - fr.ang_jac(b1)) * scale
    return dirs @ jac.T, err


def _loop_rows(model, fr: BodyFrames, loop):
    j, parent, child, nl, na, d0 = loop
    xp = transform_mul(fr.pose(parent), model.joint_X_p[j].astype(fr.dtype))
    xc = transform_mul(fr.pose(child), model.joint_X_c[j].astype(fr.dtype))
    axes = quat_rotate(xp[3:], model.joint_axis[d0:d0 + nl + na].astype(fr.dtype))  # world axes
    eye = jnp.eye(3, dtype=fr.dtype)
    out = []
    if nl < 3:
        lin = {0: eye, 1: None, 2: None}[nl]
        if nl == 1:
            lin = quat_rotate(xp[3:], _perp_basis(model.joint_axis[d0].astype(fr.dtype)))
        elif nl == 2:
            lin = safe_normalize(jnp.cross(axes[0], axes[1]))[None]
        out.append(_linear_rows(fr, parent, xp[:3], child, xc[:3], lin, at_p2=True))
    if na == 0:
        out.append(_angular_rows(fr, parent, child, eye, _rotvec(quat_mul(xc[3:], quat_conjugate(xp[3:])))))
    elif na == 1:
        a = model.joint_axis[d0 + nl].astype(fr.dtype)
        dirs = quat_rotate(xp[3:], _perp_basis(a))
        out.append(_angular_rows(fr, parent, child, dirs, dirs @ jnp.cross(axes[nl], quat_rotate(xc[3:], a))))
    elif na == 2:
        u_p, v = axes[nl], model.joint_axis[d0 + nl + 1].astype(fr.dtype)
        v_c = quat_rotate(xc[3:], v)
        err = u_p @ v_c - model.joint_axis[d0 + nl].astype(fr.dtype) @ v
        out.append(_angular_rows(fr, parent, child, jnp.cross(v_c, u_p)[None], err[None]))
    return out


def _distance_rows(model, fr: BodyFrames, entry, qd_flat, dt):
    """Gated row of a hard DISTANCE limit: ``d − d_lim`` with ``d = |p_C − p_P|``, active when the distance
    predicted from the step's start, ``d + dt·ḋ``, crosses a finite limit and the joint's ``limit_ke/kd`` are 0."""
    j, parent, child, d0 = entry
    xp = transform_mul(fr.pose(parent), model.joint_X_p[j].astype(fr.dtype))
    xc = transform_mul(fr.pose(child), model.joint_X_c[j].astype(fr.dtype))
    delta = xc[:3] - xp[:3]
    d = jnp.sqrt(jnp.sum(delta * delta) + jnp.finfo(fr.dtype).tiny)
    row, _ = _linear_rows(fr, parent, xp[:3], child, xc[:3], (delta / d)[None])
    pred = d + dt * (row[0] @ qd_flat)
    lo, hi = (x[d0].astype(fr.dtype) for x in (model.joint_limit_lower, model.joint_limit_upper))
    over, under = (hi >= 0.0) & (pred > hi), (lo >= 0.0) & (pred < lo)
    hard = (model.joint_limit_ke[d0] <= 0.0) & (model.joint_limit_kd[d0] <= 0.0) & (d > 1e-9)
    flag = ((over | under) & hard).astype(fr.dtype)
    return _gated([(row, (d - jnp.where(over, hi, lo))[None])], flag)


def _gated(rows, flag):
    """``(e·G, e·g, e)`` triples of row blocks ``(G, g)`` gated by the traced flag ``e``."""
    return [(jac * flag, err * flag, jnp.broadcast_to(flag, err.shape)) for jac, err in rows]


def _equality_rows(model, fr: BodyFrames, plan: ConstraintPlan, body_q0):
    out = []
    eye = jnp.eye(3, dtype=fr.dtype)
    on = model.equality_constraint_enabled.astype(fr.dtype)
    for k, b1, b2 in plan.connect:
        anchor = model.equality_constraint_anchor[k].astype(fr.dtype)
        x1_0 = jnp.asarray(_IDENT, fr.dtype) if b1 < 0 else body_q0[b1]
        x2_0 = jnp.asarray(_IDENT, fr.dtype) if b2 < 0 else body_q0[b2]
        local2 = connect_anchor2(x1_0, x2_0, anchor)
        p1, p2 = transform_point(fr.pose(b1), anchor), transform_point(fr.pose(b2), local2)
        out += _gated([_linear_rows(fr, b1, p1, b2, p2, eye)], on[k])
    for k, b1, b2 in plan.weld:
        rel = model.equality_constraint_relpose[k].astype(fr.dtype)
        x1, x2 = fr.pose(b1), fr.pose(b2)
        p1 = transform_point(x1, rel[:3])
        p2 = transform_point(x2, model.equality_constraint_anchor[k].astype(fr.dtype))
        lin = _linear_rows(fr, b1, p1, b2, p2, eye)
        ts = model.equality_constraint_torquescale[k].astype(fr.dtype)
        q_target = quat_mul(x1[3:], rel[3:] / jnp.linalg.norm(rel[3:]))
        err = ts * _rotvec(quat_mul(x2[3:], quat_conjugate(q_target)))
        out += _gated([lin, _angular_rows(fr, b1, b2, eye, err, scale=ts)], on[k])
    return out


def _joint_rows(model, joint_q, n_slots: int, slot_of: np.ndarray, plan: ConstraintPlan, dtype):
    out = []
    on, on_mimic = model.equality_constraint_enabled.astype(dtype), model.constraint_mimic_enabled.astype(dtype)
    for k, q1, d1, q2, d2 in plan.joint:
        coef = model.equality_constraint_polycoef[k].astype(dtype)
        out += _gated([_coordinate_row(joint_q, n_slots, slot_of, coef, (q1, d1), (q2, d2), dtype)], on[k])
    for k, q0, d0, q1, d1 in plan.mimic:
        c0, c1 = model.constraint_mimic_coef0[k], model.constraint_mimic_coef1[k]
        coef = mimic_polynomial(c0.astype(dtype), c1.astype(dtype))
        out += _gated([_coordinate_row(joint_q, n_slots, slot_of, coef, (q0, d0), (q1, d1), dtype)], on_mimic[k])
    return out


def _coordinate_row(joint_q, n_slots: int, slot_of: np.ndarray, coef, a: tuple, b: tuple, dtype):
    """The row ``q_a − P(q_b)`` of a JOINT or mimic constraint: ``(1, n_slots)`` gradient and ``(1,)`` error.

    ``a``, ``b``: ``(coordinate, dof)`` indices of the two joints (``b`` negative: no second joint, ``P(0)``).
    """
    (qa, da), (qb, db) = a, b
    x = joint_q[qb].astype(dtype) if qb >= 0 else jnp.zeros((), dtype)
    err, slope = polynomial_coupling(coef, joint_q[qa].astype(dtype), x)
    row = _unit(n_slots, slot_of, da, dtype) - (slope * _unit(n_slots, slot_of, db, dtype) if qb >= 0 else 0.0)
    return row[None], err[None]


def _tendon_rows(model, lay: DynamicsLayout, terms, joint_q, plan: ConstraintPlan, dtype):
    """TENDON rows ``L1 − P(L2)`` with the Jacobian ``J1 − P'(L2) J2`` over the flat slots."""
    if not plan.tendon:
        return []
    zeros_qd = jnp.zeros((model.joint_dof_count,), dtype)
    length = tendon_kinematics(model, joint_q, zeros_qd, terms.body_q, jnp.zeros_like(terms.body_q[:, :6]))[0]
    jac = flat_dof_rows(lay, tendon_jacobian(model, joint_q, terms.body_q)).astype(dtype)
    on = model.equality_constraint_enabled.astype(dtype)
    out = []
    for k, t1, t2 in plan.tendon:
        coef = model.equality_constraint_polycoef[k].astype(dtype)
        x2 = length[t2].astype(dtype) if t2 >= 0 else jnp.zeros((), dtype)
        err, slope = polynomial_coupling(coef, length[t1].astype(dtype), x2)
        row = jac[t1] - (slope * jac[t2] if t2 >= 0 else 0.0)
        out += _gated([(row[None], err[None])], on[k])
    return out


def _unit(n: int, slot_of: np.ndarray, dof: int, dtype):
    e = np.zeros(n)
    if slot_of[dof] >= 0:
        e[slot_of[dof]] = 1.0
    return jnp.asarray(e, dtype)


@functools.lru_cache(maxsize=64)
def _slot_of(lay: DynamicsLayout, dof_count: int) -> np.ndarray:
    """Flat world slot of every global DOF (−1 for DOFs outside the blocks)."""
    out = np.full(dof_count, -1, np.int64)
    flat = lay.dof_index.reshape(-1)
    valid = flat < dof_count
    out[flat[valid]] = np.flatnonzero(valid)
    return out


def constraint_rows(model, lay: DynamicsLayout, terms, joint_q, plan: ConstraintPlan, body_q0=None, *,
                    with_enabled: bool = False, dt=None):
    """``(G, g)``: the ``(m, N)`` Jacobian rows over the flat DOF slots and the ``(m,)`` position errors.

    Args:
        model: The model.
        lay: Its dynamics layout.
        terms: :class:`~jaxart.dynamics.motion.BlockTerms` of the configuration (poses, columns).
        joint_q: ``(joint_coord_count,)`` coordinates (JOINT/mimic/TENDON rows).
        plan: :func:`constraint_plan` of the model.
        body_q0: ``(n, 7)`` body poses of the initial configuration (needed with CONNECT rows).
        with_enabled: Also return the ``(m,)`` row flags (1 for loop rows, the traced ``enabled`` flag of
            equality/mimic rows, the activity of hard DISTANCE limits).
        dt: The step's time step: hard DISTANCE limits are active when ``d + dt·ḋ`` crosses them (``None``: 0).

    Returns:
        ``(G, g)`` with ``ġ = G q̇`` (flat block velocities; rows of disabled constraints are zero), and the row
        flags when ``with_enabled``.
    """
    dtype = terms.S.dtype
    fr = BodyFrames(lay, terms, dtype)
    rows = [(*r, jnp.ones(r[1].shape, dtype)) for loop in plan.loops for r in _loop_rows(model, fr, loop)]
    rows += _equality_rows(model, fr, plan, body_q0)
    rows += _joint_rows(model, joint_q, fr.cols.shape[0], _slot_of(lay, model.joint_dof_count), plan, dtype)
    rows += _tendon_rows(model, lay, terms, joint_q, plan, dtype)
    step = jnp.zeros((), dtype) if dt is None else jnp.asarray(dt, dtype)
    for entry in plan.distance:
        rows += _distance_rows(model, fr, entry, terms.qd.reshape(-1).astype(dtype), step)
    out = tuple(jnp.concatenate([r[i] for r in rows]) for i in range(3))
    return out if with_enabled else out[:2]
