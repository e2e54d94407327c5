"""Equality and mimic constraints of SolverXPBD as hard positional rows (CONNECT, WELD, JOINT, TENDON, mimic).

Each round of the projection, after the joint rows, solves all equality rows together. The row geometry
(points, rotations and coordinates, world = body ``body_count``) is shared with SolverSemiImplicit
(:mod:`jaxart.solvers.maximal.equality_rows`):

* **linear** (one row per CONNECT / WELD): the points ``p1``, ``p2`` are pulled together along
  ``n = (p2 − p1)/|p2 − p1|`` (the joint linear row of :mod:`jaxart.solvers.xpbd.joints` between two arbitrary
  anchors).
* **angular** (one row per WELD): ``C = torquescale·|θ|`` along ``θ/|θ|``.
* **coordinate** (one row per JOINT / mimic): ``C = q_a − P(q_b)``.
* **tendon** (one row per TENDON): ``C = L_1 − P(L_2)`` over the tendons' body entries.

Every row ``r`` has up to four body entries (a TENDON row: its tendons' entries; linear and angular gradients
``J_r``). The rows are hard (zero
compliance, no multiplier carried) and solved as one block: ``Δλ = −W⁻¹ C`` with ``W = J M⁻¹ Jᵀ`` over the
bodies they share (a few rows: a dense ``(R, R)`` solve), so coupled rows (a mimic and a JOINT on one leader,
a WELD's linear and angular rows) are projected exactly to first order instead of under-relaxed. The traced
``enabled`` flags ``e`` gate the block: ``W ∘ e eᵀ + diag(1 − e)`` and ``e·C``, so a disabled row gets
``Δλ = 0`` exactly (switched at run time without recompiling, gradients finite).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.math.small import matvec
from jaxart.solvers.maximal.equality_rows import (
    EqualityData,
    EqualityPlan,
    coordinate_rows,
    equality_data,
    equality_plan,
    tendon_rows,
    weld_points,
    weld_rotation,
)
from jaxart.solvers.maximal.joints import joint_static
from jaxart.solvers.maximal.sums import segment_sum
from jaxart.solvers.xpbd.common import Bodies, apply_impulses, make_bodies, safe_unit
from jaxart.solvers.xpbd.joints import joint_coords

__all__ = ["EqualityPlan", "equality_data", "equality_plan", "solve_equality"]


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
    p1, p2 = weld_points(b.q, plan, d)
    c, n = safe_unit(p2 - p1)
    r1, r2 = p1 - b.com_w[i1], p2 - b.com_w[i2]
    return _pad(jnp.stack([-n, n], 1)), _pad(jnp.stack([-jnp.cross(r1, n), jnp.cross(r2, n)], 1)), c


def _angular_rows(b: Bodies, plan: EqualityPlan, d: EqualityData):
    mag, g = safe_unit(weld_rotation(b.q, plan, d))
    g = g * d.ang_scale[:, None]
    return _pad(jnp.zeros((g.shape[0], 2, 3), g.dtype)), _pad(jnp.stack([-g, g], 1)), d.ang_scale * mag


def _coordinate_rows(model, b: Bodies, plan: EqualityPlan, d: EqualityData):
    jc = joint_coords(model, joint_static(model.topology), b.q[:-1])
    return coordinate_rows(model, b.com_w, jc, plan, d)


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
            bodies.append(ids)
    if len(plan.ten_eq):
        ids, lin_t, ang_t, c_t = tendon_rows(model, b.q[:-1], plan, data)
        parts.append((lin_t, ang_t, c_t))
        bodies.append(ids)
    k = max(4, *(ids.shape[1] for ids in bodies))
    bodies = [np.concatenate([ids, np.full((len(ids), k - ids.shape[1]), nb, np.int32)], 1) for ids in bodies]
    lin, ang, c = (jnp.concatenate([_pad(p[i], k) if i < 2 else p[i] for p in parts]) for i in range(3))
    p, a = _block_solve(b, np.concatenate(bodies), lin, ang, c, jnp.concatenate(list(data.on)))
    return apply_impulses(model, b, None, p, a)
