"""Small numpy helpers shared by the MJCF importer (MuJoCo ``wxyz`` ↔ jaxart ``xyzw``, gains)."""

from __future__ import annotations

import numpy as np

from jaxart.sim.validate import np_quat_to_matrix

IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def xyzw(q_wxyz) -> np.ndarray:
    """MuJoCo ``(w, x, y, z)`` quaternion → normalised jaxart ``(x, y, z, w)``."""
    q = np.asarray(q_wxyz, dtype=np.float64)
    q = np.array([q[1], q[2], q[3], q[0]])
    return q / np.linalg.norm(q)


def pose(pos, quat_wxyz) -> np.ndarray:
    """7-float jaxart transform from a MuJoCo position and ``wxyz`` quaternion."""
    return np.concatenate([np.asarray(pos, dtype=np.float64), xyzw(quat_wxyz)])


def translation(p) -> np.ndarray:
    """Pure translation transform."""
    return np.concatenate([np.asarray(p, dtype=np.float64), [0.0, 0.0, 0.0, 1.0]])


def axis_angle_transform(p, axis, angle: float) -> np.ndarray:
    """Transform with translation ``p`` and rotation of ``angle`` [rad] about unit ``axis``."""
    s = np.sin(0.5 * angle)
    return np.concatenate([np.asarray(p, dtype=np.float64), np.asarray(axis) * s, [np.cos(0.5 * angle)]])


def rotated_inertia(diag, iquat_wxyz) -> np.ndarray:
    """Principal inertia ``diag`` in the inertial frame ``iquat`` → 3×3 tensor in body axes."""
    r = np_quat_to_matrix(xyzw(iquat_wxyz))
    i = r @ np.diag(np.asarray(diag, dtype=np.float64)) @ r.T
    return 0.5 * (i + i.T)


def solref_gains(solref, m_eff: float, *, min_timeconst: float = 0.0) -> tuple[float, float]:
    """MuJoCo ``solref`` → penalty stiffness/damping ``(ke, kd)`` for an effective mass.

    MuJoCo's soft constraint drives the constraint coordinate ``r`` with reference acceleration
    ``a_ref = -b ṙ - k r`` where ``k = d/(dmax·τ·ζ)²`` and ``b = 2/(dmax·τ)``; at full impedance
    (``d = dmax``) the achieved acceleration is ``d·a_ref``, i.e. a spring-damper per unit mass with
    ``k_eff = 1/(τ ζ)²`` and ``b_eff = 2/τ`` (``ζ`` is then exactly the damping ratio). Scaling by the
    effective mass gives ``ke = m_eff/(τ ζ)²`` [N/m or N·m/rad], ``kd = 2 m_eff/τ``. ``τ`` is clamped to
    ``min_timeconst`` (MuJoCo's ``refsafe``: 2·timestep). Negative ``solref = (-stiffness, -damping)``
    is MuJoCo's direct form; it maps to ``ke = -solref[0]``, ``kd = -solref[1]`` (the inverse of
    Newton's ``solref_limit = (-ke, -kd)`` export).

    Args:
        solref: ``(timeconst, dampratio)`` or ``(-stiffness, -damping)``.
        m_eff: Effective mass or inertia the constraint acts on [kg or kg·m²].
        min_timeconst: Lower clamp for ``timeconst`` [s].

    Returns:
        ``(ke, kd)``.
    """
    a, b = float(solref[0]), float(solref[1])
    if a <= 0.0 and b <= 0.0 and (a < 0.0 or b < 0.0):
        return -a, -b
    tc = max(a, min_timeconst, 1e-9)
    zeta = max(b, 1e-9)
    return m_eff / (tc * zeta) ** 2, 2.0 * m_eff / tc
