"""Angular joint coordinates from relative rotations (inverse of the Euler chain), SoA lane form.

Used by :func:`jaxart.eval_ik` (:mod:`jaxart.kinematics.ik_lanes`) and the XPBD lane kernel. Every
argument is a component tuple of ``(J, L)`` arrays (:mod:`jaxart.math.soa`, lanes last); static
per-joint data are numpy arrays.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.joints import euler_chain_soa
from jaxart.math import soa
from jaxart.math.lanes import col


def angular_coordinates(n_ang: np.ndarray, axes, q_rel) -> tuple[tuple, tuple]:
    """Angles and covectors of 1-, 2- and 3-axis angular joints (parent-anchor frame).

    One axis: ``2·atan2(a0 · q.xyz, q.w)`` in (−2π, 2π]. Two axes: the chain ``(a0, a0 × a1, a1)``
    with the locked middle angle (0 when satisfied) in entry 2. Three axes: the intrinsic Euler
    decomposition ``R = R(a0,q0) R(a1,q1) R(a2,q2)`` for right- or left-handed axis sets.

    Args:
        n_ang: ``(J,)`` static number of angular DOFs.
        axes: Three authored angular axes (SoA vectors; zero for absent DOFs).
        q_rel: Relative rotation ``q_p⁻¹ q_c`` (SoA quaternion).

    Returns:
        ``(angles (3 arrays), covectors (3 SoA vectors))``: ``q̇_k = covector_k · ω_rel``; entries
        ``k ≥ n_ang`` are zero unless ``n_ang == 2``.
    """
    a0 = axes[0]
    zero = jnp.zeros_like(q_rel[0])
    zv = (zero, zero, zero)
    one = col(n_ang == 1)
    q1 = soa.on_subset(soa.twist_angle, n_ang == 1, a0, q_rel)
    if not np.any(n_ang >= 2):  # static: no Euler-chain branch in the program
        q1 = jnp.where(one, q1, 0.0)
        return (q1, zero, zero), (soa.where(one, a0, zv), soa.where(one, zv, zv), soa.where(one, zv, zv))
    angles, cov = soa.on_subset(lambda *a: _euler_coordinates(n_ang[n_ang >= 2], *a), n_ang >= 2, tuple(axes), q_rel)
    angles = (jnp.where(one, q1, angles[0]), jnp.where(one, zero, angles[1]), jnp.where(one, zero, angles[2]))
    cov = (soa.where(one, a0, cov[0]), soa.where(one, zv, cov[1]), soa.where(one, zv, cov[2]))
    keep = [col((k < n_ang) | (n_ang == 2)) for k in range(3)]
    return (tuple(jnp.where(keep[k], angles[k], 0.0) for k in range(3)),
            tuple(soa.where(keep[k], cov[k], zv) for k in range(3)))


def _euler_coordinates(n_ang: np.ndarray, axes, q_rel) -> tuple[tuple, tuple]:
    """Euler-chain angles and covectors of 2/3-axis joints (before the 1-axis override and keep mask)."""
    a0, a1 = axes[0], axes[1]
    zero = jnp.zeros_like(q_rel[0])
    ones = jnp.ones_like(zero)
    eye = ((ones, zero, zero), (zero, ones, zero), (zero, zero, ones))
    two, three = col(n_ang == 2), col(n_ang == 3)
    basis = soa.select(two, (a0, soa.cross(a0, a1), a1), soa.select(three, tuple(axes), eye))
    sg = jnp.sign(soa.dot(soa.cross(basis[0], basis[1]), basis[2]))
    sg = jnp.where(sg == 0.0, 1.0, sg)
    e = (basis[0], basis[1], soa.cross(basis[0], basis[1]))  # columns of the right-handed basis
    rot = soa.qmatrix(q_rel)
    a_t = tuple(tuple(soa.total(e[i][r] * rot[r][k] for r in range(3)) for k in range(3)) for i in range(3))
    m = tuple(tuple(soa.total(a_t[i][k] * e[j][k] for k in range(3)) for j in range(3)) for i in range(3))
    ea = soa.euler_xyz(m)
    angles = (ea[0], ea[1], sg * ea[2])
    _, transported = euler_chain_soa(list(basis), list(angles))
    cov = soa.inv3(soa.transpose(tuple(transported)))
    angles = (angles[0], jnp.where(two, angles[2], angles[1]), jnp.where(two, angles[1], angles[2]))
    cov = (cov[0], soa.where(two, cov[2], cov[1]), soa.where(two, cov[1], cov[2]))
    return angles, cov
