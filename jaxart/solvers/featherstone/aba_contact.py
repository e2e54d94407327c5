"""Implicit contact against static geometry folded into the articulated-body algorithm (lane layout).

A row whose other side is static (body −1) acts on one body ``b`` only. In world-origin Plücker
coordinates the point velocity is ``u = X V_b`` with ``X = [I, −[p]×]``, so the contact wrench of the
implicit law (:mod:`jaxart.contact.implicit`) at the end-of-step twist ``V_b' = V_b + dt·ã_b`` is

``X_pᵀ (s·f0 − W u') = s·F0 − K V_b − dt·K ã_b``,  ``K = X_pᵀ W X_p``,  ``F0 = (f0, p × f0)``

with ``s = +1`` when ``b`` is shape B's body and ``−1`` when it is A's. ``ã_b = Σ_anc S q̈`` is the body's
acceleration without velocity-product terms (``a_b = ã_b + C_b`` with ``C_b = Σ_anc Ṡ q̇``), because
semi-implicit Euler advances velocities at the current configuration. The body equation
``f = I a + p`` therefore gains the 6×6 impedance ``dt·K`` on its inertia and
``−(s·F0 − K V_b + dt·K C_b)`` on its bias: an added articulated inertia, exactly what the backward
pass of the algorithm absorbs in ``O(n)``. It is the same linear system as the dense world solve of
:mod:`jaxart.dynamics.engine.contact_terms` (used for single worlds, derivatives and body–body contacts).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxart.dynamics.aba import AbaTerms, DofLoads
from jaxart.dynamics.engine import lane_spatial as ls
from jaxart.dynamics.engine.aba_schedule import aba_schedule
from jaxart.dynamics.layout import dynamics_layout
from jaxart.math import soa
from jaxart.math.static_index import take_rows

__all__ = ["RowFrame", "contact_dof_loads", "row_frame", "static_row_velocities", "static_side_only"]


def static_side_only(bodies) -> bool:
    """Whether every row of static ``(body_a, body_b)`` tuples has a static side (body −1)."""
    return all(a < 0 or b < 0 for a, b in zip(*bodies, strict=True))


class _Tables(NamedTuple):
    body: np.ndarray  # (R,) moving body of each row (n: none)
    sign: np.ndarray  # (R,) +1 when it is shape B's body, −1 when A's
    ancestors: np.ndarray  # (n + 1, nd + 1) 0/1: DOFs each body moves with (last row and column zero)
    dof_rows: tuple  # ((dof, (rows...)), ...): rows attached to each DOF that has any


@functools.lru_cache(maxsize=64)
def _tables(lay, sched, bodies: tuple, n: int, nd: int) -> _Tables:
    """Static per-row tables of static-side rows (see :class:`_Tables`)."""
    a, b = np.asarray(bodies[0]), np.asarray(bodies[1])
    body = np.where(b >= 0, b, np.where(a >= 0, a, n))
    sign = np.where(b >= 0, 1.0, -1.0)
    anc = [[] for _ in range(n + 1)]
    for ai in range(lay.link_body.shape[0]):
        for lk, lb in enumerate(lay.link_body[ai]):
            if lb < n:
                anc[int(lb)] = [int(d) for d in lay.dof_index[ai][lay.link_dof[ai, lk]]]
    ancestors = np.zeros((n + 1, nd + 1))
    for i, dofs in enumerate(anc):
        ancestors[i, dofs] = 1.0
    att = np.full(n + 1, nd, np.int64)
    for d in range(nd):
        att[sched.attach[d][sched.attach[d] < n]] = d
    dof_rows = tuple((d, tuple(int(r) for r in np.flatnonzero(att[body] == d))) for d in range(nd)
                     if np.any(att[body] == d))
    return _Tables(body, sign, ancestors, dof_rows)


def _row_tables(model, bodies: tuple) -> _Tables:
    return _tables(dynamics_layout(model), aba_schedule(model), bodies, model.body_count, model.joint_dof_count)


def _row_sums(ancestors: np.ndarray, body: np.ndarray, values: tuple) -> tuple:
    """``Σ_{k ∈ anc(body_r)} values_k`` per row: one small matrix product per component over the bodies, then a
    gather of the rows' bodies (instead of a gather per ancestor)."""
    mat = jnp.asarray(ancestors, values[0].dtype)
    return tuple(take_rows(_product(mat, x), body) for x in values)


def _product(mat, x):
    """``mat @ x`` for a static 0/1 matrix, at full precision on every backend (the default of GPUs and TPUs
    rounds float32 operands of products)."""
    return jnp.matmul(mat, x, precision=lax.Precision.HIGHEST)


def _impedance(p: tuple, n: tuple, alpha, beta) -> tuple:
    """21-tuple ``X_pᵀ W X_p = β Σ_e w_e w_eᵀ + (α − β) w_n w_nᵀ`` with ``w = (e, p × e)``."""
    gamma = alpha - beta
    w_n = (*n, *soa.cross(p, n))
    pp = soa.dot(p, p)
    cross_e = [(0.0, p[2], -p[1]), (-p[2], 0.0, p[0]), (p[1], -p[0], 0.0)]  # p × e_x, p × e_y, p × e_z

    def e_entry(i, j):
        if i < 3 and j < 3:
            return 1.0 if i == j else 0.0
        if i < 3:
            return cross_e[i][j - 3]
        return (pp if i == j else 0.0) - p[i - 3] * p[j - 3]

    return tuple(beta * e_entry(i, j) + gamma * w_n[i] * w_n[j] for i, j in ls.SYM_PAIRS)


class RowFrame(NamedTuple):
    """Per-row terms of static-side contact rows that stay fixed over the contact iterations (lane layout).

    Attributes:
        twist: Twists ``V_b`` of the rows' bodies (world-origin Plücker), 6-tuple of ``(R, L)``.
        offset: ``V_b − dt·C_b`` with ``C_b = Σ_anc Ṡ q̇``, 6-tuple of ``(R, L)``.
    """

    twist: tuple
    offset: tuple


def row_frame(model, bodies: tuple, terms: AbaTerms, dt) -> RowFrame:
    """The :class:`RowFrame` of static-side rows.

    Args:
        model: The model.
        bodies: Static ``(body_a, body_b)`` tuples of the rows (every row has a static side).
        terms: The step's :class:`~jaxart.dynamics.aba.AbaTerms` (twists ``vel``, velocity products ``c``).
        dt: Time step [s].

    Returns:
        The :class:`RowFrame`.
    """
    n = model.body_count
    tab = _row_tables(model, bodies)
    v_ext = tuple(jnp.concatenate([x[:n], jnp.zeros_like(x[:1])], axis=0) for x in terms.vel)
    twist = tuple(take_rows(x, tab.body) for x in v_ext)
    c_row = _row_sums(tab.ancestors, tab.body, terms.c)
    return RowFrame(twist=twist, offset=tuple(v - dt * cr for v, cr in zip(twist, c_row, strict=True)))


def contact_dof_loads(model, rows, bodies: tuple, frame: RowFrame, dt) -> DofLoads | None:
    """Impedances and bias wrenches of static-side contact rows on the DOFs their bodies are attached to.

    Args:
        model: The model.
        rows: :class:`~jaxart.contact.implicit.ImplicitContactRows` in the lane layout (``(R, ..., L)``
            leaves; body ids unused).
        bodies: Static ``(body_a, body_b)`` tuples of the rows (every row has a static side).
        frame: The rows' :class:`RowFrame`.
        dt: Time step [s].

    Returns:
        :class:`~jaxart.dynamics.aba.DofLoads`: ``dt·K`` and ``K (V_b − dt·C_b) − s·F0`` summed per DOF (``None``
        when no row has a moving body).
    """
    tab = _row_tables(model, bodies)
    if not tab.dof_rows:
        return None
    comps = lambda x: tuple(x[:, k] for k in range(3))  # noqa: E731
    p, normal, f0 = comps(rows.point), comps(rows.normal), comps(rows.force0)
    k0 = _impedance(p, normal, rows.alpha, rows.beta)
    s = jnp.asarray(tab.sign, rows.alpha.dtype)[:, None]
    f0w = (*f0, *soa.cross(p, f0))
    bias = tuple(kv - s * f for kv, f in zip(ls.sym_matvec(k0, frame.offset), f0w, strict=True))

    pick = np.zeros((len(tab.dof_rows), len(tab.body)))
    for i, (_, rs) in enumerate(tab.dof_rows):
        pick[i, list(rs)] = 1.0
    pick = jnp.asarray(pick, rows.alpha.dtype)
    # rows summed per DOF, (k, L): a product with a static 0/1 matrix, so each row's law is evaluated once (a
    # concatenation of row slices made XLA re-emit the whole law inside it for every slice)
    per_dof = lambda x: _product(pick, x)  # noqa: E731

    return DofLoads(dofs=tuple(d for d, _ in tab.dof_rows), impedance=tuple(per_dof(dt * k) for k in k0),
                    bias=tuple(per_dof(x) for x in bias))


def static_row_velocities(model, point, bodies: tuple, frame: RowFrame, s: tuple | None = None,
                          dqd=None) -> jnp.ndarray:
    """Row velocities ``u = v_B(p) − v_A(p)`` of static-side rows in the lane layout.

    Args:
        model: The model.
        point: ``(R, 3, L)`` world contact points [m].
        bodies: Static ``(body_a, body_b)`` tuples of the rows (every row has a static side).
        frame: The rows' :class:`RowFrame` (twists of their bodies).
        s: DOF columns ``S``, 6-tuple of ``(nd + 1, L)`` (world-origin Plücker, last row padding); with ``dqd``.
        dqd: Optional ``(nd, L)`` velocity change ``Δq̇`` (at the same configuration) added to the twists.

    Returns:
        ``(R, 3, L)`` row velocities [m/s].
    """
    tab = _row_tables(model, bodies)
    twist = frame.twist
    if dqd is not None:
        dq = jnp.concatenate([dqd, jnp.zeros_like(dqd[:1])], axis=0)
        sdq = tuple(x * dq for x in s)
        twist = tuple(t + x for t, x in zip(twist, _row_sums(tab.ancestors, tab.body, sdq), strict=True))
    p = tuple(point[:, k] for k in range(3))
    lin = soa.add(twist[:3], soa.cross(twist[3:], p))
    sg = jnp.asarray(tab.sign, point.dtype)[:, None]
    return jnp.stack([sg * x for x in lin], axis=1)
