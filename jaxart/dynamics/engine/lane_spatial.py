"""Spatial algebra on SoA component tuples (lane layout, :mod:`jaxart.math.lanes`).

Twists ``(v_at_world_origin, ω)`` and wrenches ``(f, τ about the world origin)`` are 6-tuples of
arrays (item axis first, lanes last). A rigid body's spatial inertia about the world origin is kept
as its ten independent numbers ``(m, h = m c, J_O)`` with ``J_O = R I Rᵀ + m (|c|² 1 − c cᵀ)``
(``xx, yy, zz, xy, xz, yz``), so sums of rigid inertias are plain sums and
``I (v, ω) = (m v − h × ω, J_O ω + h × v)``. General symmetric 6×6 matrices (articulated inertias)
are 21-tuples of their upper triangle, row by row (:data:`SYM`).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.motion import dof_rows
from jaxart.math import soa
from jaxart.math.static_index import take_rows

#: Position of entry ``(i, j)`` of a symmetric 6×6 matrix in its 21-tuple (upper triangle, row-major).
SYM = np.zeros((6, 6), np.int64)
_k = 0
for _i in range(6):
    for _j in range(_i, 6):
        SYM[_i, _j] = SYM[_j, _i] = _k
        _k += 1
#: ``(i, j)`` of every entry of the 21-tuple.
SYM_PAIRS = tuple((i, j) for i in range(6) for j in range(i, 6))


def columns(model, fr) -> tuple:
    """World-origin motion columns ``S`` of every DOF: six ``(nd + 1, L)`` components (last row zero).

    Linear DOF with world direction ``a``: ``(a, 0)``; angular DOF with world axis ``w`` through the
    reference point ``r``: ``(r × w, w)`` (see :mod:`jaxart.dynamics.motion`).
    """
    nd = model.joint_dof_count
    rot = fr.x_wpa[1]
    zero = jnp.zeros_like(fr.ref[0])
    s_lin = [(*soa.qrot(rot, a), zero, zero, zero) for a in fr.motion.lin_axes]
    s_ang = [(*soa.cross(fr.ref, w), *w) for w in (soa.qrot(rot, a) for a in fr.motion.ang_axes)]
    rows = dof_rows(model.schedule, nd)

    def component(c: int) -> jnp.ndarray:
        flat = [jnp.stack([s[k][c] for k in range(3)], axis=1).reshape(-1, zero.shape[-1]) for s in (s_lin, s_ang)]
        return take_rows(jnp.concatenate([*flat, jnp.zeros((1, zero.shape[-1]), zero.dtype)], axis=0), rows)

    return tuple(component(c) for c in range(6))


def sum_rows(values: tuple, table: np.ndarray) -> tuple:
    """``out[b] = Σ_m values[table[b, m]]`` per component (unrolled over the table width)."""
    return tuple(functools.reduce(jnp.add, (take_rows(x, table[:, m]) for m in range(table.shape[1]))) for x in values)


def rigid_inertia(model, world, com) -> tuple:
    """Ten-number spatial inertias about the world origin ``(m, h0..2, J_O xx, yy, zz, xy, xz, yz)``, ``(n, L)``."""
    n = model.body_count
    rot = soa.qmatrix(tuple(c[:n] for c in world[1]))
    body_i = model.body_inertia
    ri = [[sum(rot[r][k] * body_i[:, k, c] for k in range(3)) for c in range(3)] for r in range(3)]
    jc = [[sum(ri[r][k] * rot[c][k] for k in range(3)) for c in range(3)] for r in range(3)]
    m = model.body_mass
    h = soa.scale(com, m)
    csq = soa.dot(com, com)
    jo = (jc[0][0] + m * (csq - com[0] * com[0]), jc[1][1] + m * (csq - com[1] * com[1]),
          jc[2][2] + m * (csq - com[2] * com[2]), jc[0][1] - h[0] * com[1], jc[0][2] - h[0] * com[2],
          jc[1][2] - h[1] * com[2])
    return (m, *h, *jo)


def apply_rigid(inertia: tuple, twist: tuple) -> tuple:
    """``I (v, ω) = (m v − h × ω, J_O ω + h × v)`` for a ten-number inertia (six components)."""
    m, h, j = inertia[0], inertia[1:4], inertia[4:]
    v, w = twist[:3], twist[3:]
    lin = soa.sub(soa.scale(v, m), soa.cross(h, w))
    jw = (j[0] * w[0] + j[3] * w[1] + j[4] * w[2], j[3] * w[0] + j[1] * w[1] + j[5] * w[2],
          j[4] * w[0] + j[5] * w[1] + j[2] * w[2])
    return (*lin, *soa.add(jw, soa.cross(h, v)))


def rigid_to_sym(inertia: tuple) -> tuple:
    """Ten-number inertia → 21-tuple ``[[m 1, −[h]×], [[h]×, J_O]]``."""
    m, (h0, h1, h2), (xx, yy, zz, xy, xz, yz) = inertia[0], inertia[1:4], inertia[4:]
    zero = jnp.zeros_like(m)
    full = [[m, zero, zero, zero, h2, -h1],
            [zero, m, zero, -h2, zero, h0],
            [zero, zero, m, h1, -h0, zero],
            [None, None, None, xx, xy, xz],
            [None, None, None, None, yy, yz],
            [None, None, None, None, None, zz]]
    return tuple(full[i][j] for i, j in SYM_PAIRS)


def sym_matvec(m: tuple, v: tuple) -> tuple:
    """``M v`` for a 21-tuple symmetric ``M`` and a 6-tuple ``v``."""
    return tuple(sum(m[SYM[i, k]] * v[k] for k in range(6)) for i in range(6))


def dot6(a: tuple, b: tuple):
    """``Σ_k a_k b_k`` of two 6-tuples."""
    return sum(a[k] * b[k] for k in range(6))


def cross_motion(a: tuple, b: tuple) -> tuple:
    """Motion cross product ``a ×ₘ b``."""
    va, wa, vb, wb = a[:3], a[3:], b[:3], b[3:]
    return (*soa.add(soa.cross(wa, vb), soa.cross(va, wb)), *soa.cross(wa, wb))


def cross_force(a: tuple, f: tuple) -> tuple:
    """Force cross product ``a ×* f``."""
    va, wa, fl, ta = a[:3], a[3:], f[:3], f[3:]
    return (*soa.cross(wa, fl), *soa.add(soa.cross(wa, ta), soa.cross(va, fl)))


def origin_wrench(f: tuple, com: tuple) -> tuple:
    """Wrench ``(f, τ about the COM)`` moved to the world origin: ``(f, τ + c × f)``."""
    return (*f[:3], *soa.add(f[3:], soa.cross(com, f[:3])))
