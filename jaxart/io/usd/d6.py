"""The joint frame in which a jaxart D6 becomes a UsdPhysics generic joint (``export_model``).

A UsdPhysics generic joint moves along / about the coordinate axes of its joint frame, and
``add_usd`` reads its free axes in the order transX, transY, transZ, rotX, rotY, rotZ (angular
coordinates composing as ``Rx·Ry·Rz``, jaxart's D6 convention). Rotating both joint frames by ``R``
turns the motion ``X_j(q)`` into ``Rᵀ·X_j(q)·R``: the axes become ``Rᵀ a_k`` with the same coordinates.
So a D6 is writable when one proper rotation ``R`` maps every linear axis and every angular axis onto a
coordinate axis, each group in increasing X, Y, Z order (unit-length, mutually orthogonal axes within
a group; a linear and an angular axis may coincide, as in a cylindrical joint).
"""

from __future__ import annotations

import itertools

import numpy as np

_E = np.eye(3)


def d6_frame(linear: np.ndarray, angular: np.ndarray, *, atol: float = 1e-9) -> tuple[np.ndarray, list, list] | None:
    """Find the frame rotation of a D6 joint.

    Args:
        linear: ``(n_lin, 3)`` linear axes.
        angular: ``(n_ang, 3)`` angular axes.
        atol: Tolerance on unit length and orthogonality.

    Returns:
        ``(R, linear indices, angular indices)``: the rotation (columns: the joint frame's new X, Y, Z
        in the old frame) closest to the identity and, per axis, the coordinate axis it maps to; ``None``
        when no proper rotation does it.
    """
    lin = [np.asarray(a, dtype=np.float64) for a in np.reshape(linear, (-1, 3))]
    ang = [np.asarray(a, dtype=np.float64) for a in np.reshape(angular, (-1, 3))]
    if any(abs(np.linalg.norm(a) - 1.0) > atol for a in lin + ang):
        return None
    best = None
    for li in itertools.combinations(range(3), len(lin)):
        for ai in itertools.combinations(range(3), len(ang)):
            pairs = list(zip(li, lin, strict=True)) + list(zip(ai, ang, strict=True))
            r = _complete(dict(pairs), atol) if _consistent(pairs, atol) else None
            if r is not None and (best is None or np.trace(r) > np.trace(best[0]) + 1e-12):
                best = (r, list(li), list(ai))
    return best


def _consistent(pairs: list, atol: float) -> bool:
    """Same column → same axis; different columns → orthogonal axes."""
    for (i, a), (j, b) in itertools.combinations(pairs, 2):
        if i == j and not np.allclose(a, b, atol=atol):
            return False
        if i != j and abs(float(a @ b)) > atol:
            return False
    return True


def _complete(cols: dict, atol: float) -> np.ndarray | None:
    """A proper rotation with the given columns, the rest chosen closest to the identity."""
    if len(cols) == 1:
        (i, c), = cols.items()
        j = (i + 1) % 3
        u = _E[j] - (_E[j] @ c) * c
        if np.linalg.norm(u) < 0.5:
            u = _E[(i + 2) % 3] - (_E[(i + 2) % 3] @ c) * c
        cols[j] = u / np.linalg.norm(u)
    if len(cols) == 2:
        k = ({0, 1, 2} - set(cols)).pop()
        cols[k] = np.cross(cols[(k + 1) % 3], cols[(k + 2) % 3])
    if not cols:
        return np.eye(3)
    r = np.stack([cols[0], cols[1], cols[2]], axis=1)
    return r if np.linalg.det(r) > 1.0 - 1e3 * atol else None
