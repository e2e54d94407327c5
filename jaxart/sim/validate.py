"""Input conversion and validation helpers for the builder (numpy, host side).

Every helper takes a ``what`` string naming the element and argument (e.g.
``"add_joint_revolute(label='elbow'): axis"``) so error messages point at the culprit.
"""

from __future__ import annotations

import numbers

import numpy as np

from jaxart.sim.enums import Axis


def as_float(value, what: str, *, positive: bool = False, nonneg: bool = False) -> float:
    """Convert to a finite float, raising ``TypeError``/``ValueError`` naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | np.ndarray | np.generic):
        try:
            value = float(np.asarray(value).reshape(()))
        except (TypeError, ValueError):
            raise TypeError(f"{what} must be a real number, got {type(value).__name__}") from None
    value = float(np.asarray(value).reshape(()))
    if not np.isfinite(value):
        raise ValueError(f"{what} must be finite, got {value}")
    if positive and value <= 0.0:
        raise ValueError(f"{what} must be > 0, got {value}")
    if nonneg and value < 0.0:
        raise ValueError(f"{what} must be >= 0, got {value}")
    return value


def as_array(value, shape: tuple[int, ...], what: str) -> np.ndarray:
    """Convert to a finite float64 array of exactly ``shape``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be numeric with shape {shape}, got {value!r}") from None
    if arr.shape != shape:
        if arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise ValueError(f"{what} must have shape {shape}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite, got {arr.tolist()}")
    return arr


def as_vec3(value, what: str) -> np.ndarray:
    """Convert a 3-vector (tuple, list, numpy or jax array)."""
    return as_array(value, (3,), what)


def as_axis(value, what: str) -> np.ndarray:
    """Convert an axis given as :class:`Axis`, ``"x"``/``"y"``/``"z"``, or a vector; normalised."""
    if isinstance(value, Axis) or (isinstance(value, int) and not isinstance(value, bool)):
        if int(value) not in (0, 1, 2):
            raise ValueError(f"{what}: axis index must be 0, 1 or 2, got {value}")
        return np.array(Axis(int(value)).to_vector())
    if isinstance(value, str):
        key = value.strip().upper()
        if key not in ("X", "Y", "Z"):
            raise ValueError(f"{what}: axis name must be 'X', 'Y' or 'Z', got {value!r}")
        return np.array(Axis[key].to_vector())
    v = as_vec3(value, what)
    n = np.linalg.norm(v)
    if n < 1e-12:
        raise ValueError(f"{what} must be a non-zero vector, got {v.tolist()}")
    return v / n


def as_quat(value, what: str) -> np.ndarray:
    """Convert an ``(x, y, z, w)`` quaternion; it must be non-zero and is normalised."""
    q = as_array(value, (4,), what)
    n = np.linalg.norm(q)
    if n < 1e-12:
        raise ValueError(f"{what} must be a non-zero quaternion (x, y, z, w), got {q.tolist()}")
    return q / n


def as_transform(value, what: str) -> np.ndarray:
    """Convert a transform: 7 floats ``(p, q_xyzw)``, a ``(p, q)`` pair, or ``None`` (identity)."""
    if value is None:
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    if isinstance(value, tuple | list) and len(value) == 2:
        p = as_vec3(value[0], f"{what} (position)")
        q = as_quat(value[1], f"{what} (rotation)")
        return np.concatenate([p, q])
    arr = as_array(value, (7,), what)
    q = as_quat(arr[3:], f"{what} (rotation)")
    return np.concatenate([arr[:3], q])


def as_inertia(value, what: str) -> np.ndarray:
    """Convert a symmetric positive semi-definite 3×3 inertia (or a 3-vector diagonal)."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape == (3,):
        arr = np.diag(arr)
    arr = as_array(arr, (3, 3), what)
    if not np.allclose(arr, arr.T, atol=1e-9 * max(1.0, np.abs(arr).max())):
        raise ValueError(f"{what} must be symmetric, got {arr.tolist()}")
    ev = np.linalg.eigvalsh(arr)
    if ev.min() < -1e-9 * max(1.0, ev.max()):
        raise ValueError(f"{what} must be positive semi-definite, eigenvalues {ev.tolist()}")
    return arr


# ---- small numpy rigid-body helpers used by the builder and importers ----


def np_quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of xyzw quaternions (numpy)."""
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), [aw * bw - av @ bv]])


def np_quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate a vector by an xyzw quaternion (numpy)."""
    u, w = q[:3], q[3]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def np_quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """3×3 rotation matrix of an xyzw quaternion (numpy)."""
    return np.stack([np_quat_rotate(q, e) for e in np.eye(3)], axis=1)


def np_transform_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Compose transforms ``a * b`` (numpy)."""
    return np.concatenate([a[:3] + np_quat_rotate(a[3:], b[:3]), np_quat_mul(a[3:], b[3:])])


def np_transform_inverse(t: np.ndarray) -> np.ndarray:
    """Inverse transform (numpy)."""
    qi = np.concatenate([-t[3:6], t[6:]])
    return np.concatenate([-np_quat_rotate(qi, t[:3]), qi])


def np_quat_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc quaternion rotating unit vector ``a`` onto unit vector ``b`` (numpy)."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    c = np.cross(a, b)
    d = float(a @ b)
    if d < -1.0 + 1e-12:
        perp = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(perp) < 1e-6:
            perp = np.cross(a, [0.0, 1.0, 0.0])
        perp /= np.linalg.norm(perp)
        return np.array([*perp, 0.0])
    q = np.array([*c, 1.0 + d])
    return q / np.linalg.norm(q)
