"""Joint coordinates of the XPBD lane kernel in SoA form (same maths as :mod:`maximal_joints`).

Every function takes and returns component tuples of ``(J, L)`` arrays (see
:mod:`jaxart.solvers.maximal_xpbd_soa`); static per-joint data (``n_ang``, joint types) are numpy
arrays turned into ``(J, 1)`` masks.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.joints import euler_chain_soa
from jaxart.math.safe import safe_atan2
from jaxart.sim.enums import JointType
from jaxart.solvers import maximal_xpbd_soa as s


def mask(a: np.ndarray) -> jnp.ndarray:
    """Static ``(J,)`` numpy mask as a lane-broadcastable ``(J, 1)`` array."""
    return jnp.asarray(np.asarray(a))[:, None]


def rows(tree, idx: np.ndarray):
    """Rows ``idx`` (static) of every ``(J, L)`` leaf (``(J, 1)`` constants included)."""
    return jax.tree_util.tree_map(lambda x: x[idx], tree)


def expand(tree, idx: np.ndarray, count: int):
    """Inverse of :func:`rows`: ``(count, L)`` leaves holding the subset rows at ``idx`` and zeros elsewhere."""
    if len(idx) == count and np.array_equal(idx, np.arange(count)):
        return tree
    pos = np.full(count, len(idx), np.int32)
    pos[idx] = np.arange(len(idx), dtype=np.int32)

    def one(x):
        return jnp.concatenate([x, jnp.zeros((1, *x.shape[1:]), x.dtype)], 0)[pos]

    return jax.tree_util.tree_map(one, tree)


def on_subset(fn, sel: np.ndarray, *args):
    """``fn(*args)`` evaluated only on the joints where the static mask ``sel`` holds (zeros elsewhere)."""
    idx = np.flatnonzero(sel).astype(np.int32)
    return expand(fn(*rows(args, idx)), idx, len(sel))


def twist_angle(axis, q):
    """``quat_twist_angle``: ``2·atan2(axis · q.xyz, q.w)``."""
    return 2.0 * safe_atan2(s.dot(axis, q[:3]), q[3])


def _inv3(m):
    """``jaxart.math.inv3`` of a 3×3 row tuple."""
    c0 = s.cross(m[1], m[2])
    c1 = s.cross(m[2], m[0])
    c2 = s.cross(m[0], m[1])
    det = s.dot(m[0], c0)
    det = jnp.where(jnp.abs(det) < 1e-12, jnp.where(det < 0.0, -1e-12, 1e-12), det)
    return tuple(tuple(c[i] / det for c in (c0, c1, c2)) for i in range(3))


def _euler_xyz(m):
    """``matrix_to_euler_xyz`` of a 3×3 row tuple."""
    sb = jnp.clip(m[0][2], -1.0, 1.0)
    cb = s.safe_norm((m[0][0], m[0][1]))
    return (safe_atan2(-m[1][2], m[2][2]), safe_atan2(sb, cb), safe_atan2(-m[0][1], m[0][0]))


def angular_coordinates(n_ang: np.ndarray, axes, q_rel):
    """``maximal_joints.angular_coordinates`` in SoA form.

    Args:
        n_ang: ``(J,)`` static number of angular DOFs.
        axes: Three authored angular axes (SoA vectors).
        q_rel: Relative rotation ``q_p⁻¹ q_c`` (SoA quaternion).

    Returns:
        ``(angles (3 arrays), covectors (3 SoA vectors))`` in the parent-anchor frame.
    """
    a0 = axes[0]
    zero = jnp.zeros_like(q_rel[0])
    zv = (zero, zero, zero)
    one = mask(n_ang == 1)
    q1 = on_subset(twist_angle, n_ang == 1, a0, q_rel)
    if not np.any(n_ang >= 2):  # static: no Euler-chain branch in the program
        q1 = jnp.where(one, q1, 0.0)
        return (q1, zero, zero), (s.where(one, a0, zv), s.where(one, zv, zv), s.where(one, zv, zv))
    angles, cov = on_subset(lambda *a: _euler_coordinates(n_ang[n_ang >= 2], *a), n_ang >= 2, tuple(axes), q_rel)
    angles = (jnp.where(one, q1, angles[0]), jnp.where(one, zero, angles[1]), jnp.where(one, zero, angles[2]))
    cov = (s.where(one, a0, cov[0]), s.where(one, zv, cov[1]), s.where(one, zv, cov[2]))
    keep = [mask((k < n_ang) | (n_ang == 2)) for k in range(3)]
    return (tuple(jnp.where(keep[k], angles[k], 0.0) for k in range(3)),
            tuple(s.where(keep[k], cov[k], zv) for k in range(3)))


def _euler_coordinates(n_ang, axes, q_rel):
    """Euler-chain angles and covectors of 2/3-axis joints (the ``n_ang ≥ 2`` branch of
    ``angular_coordinates``, before the 1-axis override and the keep mask)."""
    a0, a1 = axes[0], axes[1]
    zero = jnp.zeros_like(q_rel[0])
    ones = jnp.ones_like(zero)
    eye = ((ones, zero, zero), (zero, ones, zero), (zero, zero, ones))
    two, three = mask(n_ang == 2), mask(n_ang == 3)
    basis = s.where(two, (a0, s.cross(a0, a1), a1), s.where(three, tuple(axes), eye))
    sg = jnp.sign(s.dot(s.cross(basis[0], basis[1]), basis[2]))
    sg = jnp.where(sg == 0.0, 1.0, sg)
    e = (basis[0], basis[1], s.cross(basis[0], basis[1]))  # columns of b_rh
    rot = s.rotmat(q_rel)
    a_t = tuple(tuple(s.total(e[i][r] * rot[r][k] for r in range(3)) for k in range(3)) for i in range(3))
    m = tuple(tuple(s.total(a_t[i][k] * e[j][k] for k in range(3)) for j in range(3)) for i in range(3))
    ea = _euler_xyz(m)
    angles = (ea[0], ea[1], sg * ea[2])
    _, transported = euler_chain_soa(list(basis), list(angles))
    cov = _inv3(s.transpose(tuple(transported)))
    angles = (angles[0], jnp.where(two, angles[2], angles[1]), jnp.where(two, angles[1], angles[2]))
    cov = (cov[0], s.where(two, cov[2], cov[1]), s.where(two, cov[1], cov[2]))
    return angles, cov


def log_jacobian_inv(theta):
    """``maximal_xpbd_joints.log_jacobian_inv`` (rows = covectors) in SoA form."""
    t2 = s.dot(theta, theta)
    small = t2 < 1e-8
    t = jnp.sqrt(jnp.where(small, 1.0, t2))
    coef = jnp.where(small, 1.0 / 12.0, 1.0 / jnp.where(small, 1.0, t2)
                     - (1.0 + jnp.cos(t)) / (2.0 * t * jnp.sin(jnp.where(small, 1.0, t))))
    x, y, z = theta
    zero = jnp.zeros_like(x)
    sk = ((zero, -z, y), (z, zero, -x), (-y, x, zero))
    sk2 = s.matmul(sk, sk)
    return tuple(tuple((1.0 if r == c else 0.0) - 0.5 * sk[r][c] + coef * sk2[r][c] for c in range(3))
                 for r in range(3))


def joint_angles(jtype: np.ndarray, n_ang: np.ndarray, axes, q_rel):
    """Angles and parent-frame covectors including BALL joints (rotation-vector components)."""
    angles, cov = angular_coordinates(n_ang, axes, q_rel)
    if np.any(jtype == JointType.BALL):  # static
        is_ball = jtype == JointType.BALL
        theta, jinv = on_subset(lambda q: (lambda th: (th, log_jacobian_inv(th)))(s.rotation_vector(q)), is_ball,
                                q_rel)
        angles = s.where(mask(is_ball), theta, angles)
        cov = s.where(mask(is_ball), jinv, cov)
    return angles, cov
