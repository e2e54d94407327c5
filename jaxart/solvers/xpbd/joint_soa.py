"""Joint coordinates of the XPBD lane kernel in SoA form (same maths as :mod:`maximal_joints`).

Every function takes and returns component tuples of ``(J, L)`` arrays (see
:mod:`jaxart.solvers.xpbd.soa`); static per-joint data (``n_ang``, joint types) are numpy
arrays turned into ``(J, 1)`` masks. The angular coordinates of 1/2/3-axis joints are
:func:`jaxart.kinematics.angles.angular_coordinates` (shared with :func:`jaxart.eval_ik`); this
module adds the BALL rotation vector and its log-map Jacobian.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.angles import angular_coordinates
from jaxart.math.lanes import col as mask
from jaxart.math.soa import on_subset
from jaxart.sim.enums import JointType
from jaxart.solvers.xpbd import soa as s


def log_jacobian_inv(theta):
    """:func:`jaxart.solvers.xpbd.joints.log_jacobian_inv` (rows = covectors) in SoA form."""
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
