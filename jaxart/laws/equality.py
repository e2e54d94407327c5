"""Equality-constraint quantities shared by the reduced- and maximal-coordinate solvers (and the MuJoCo bridge's
conversion of TENDON polynomials)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_conjugate, quat_rotate, transform_point
from jaxart.math.small import dot_last

__all__ = ["connect_anchor2", "joint_polynomial", "mimic_polynomial", "offset_polycoef", "polynomial_coupling"]


def connect_anchor2(x1_0, x2_0, anchor1) -> jnp.ndarray:
    """CONNECT's body-2 point: where ``anchor1`` (body-1 frame) lies in body 2 at the initial poses.

    Args:
        x1_0: ``(..., 7)`` initial world pose of body 1 (identity for the world).
        x2_0: ``(..., 7)`` initial world pose of body 2.
        anchor1: ``(..., 3)`` the anchor in body 1's frame [m].

    Returns:
        ``(..., 3)`` the anchor in body 2's frame [m].
    """
    return quat_rotate(quat_conjugate(x2_0[..., 3:]), transform_point(x1_0, anchor1) - x2_0[..., :3])


def joint_polynomial(coef, x) -> tuple[jnp.ndarray, jnp.ndarray]:
    """JOINT equality's polynomial ``P(x) = Σ_k c_k x^k`` (k = 0..4) and its slope ``P'(x)``.

    Args:
        coef: ``(..., 5)`` coefficients ``c_0..c_4``.
        x: ``(...)`` the second joint's coordinate [m or rad].

    Returns:
        ``(value, slope)``, each ``(...)``.
    """
    x2 = x * x
    powers = jnp.stack([jnp.ones_like(x), x, x2, x2 * x, x2 * x2], -1)
    value = dot_last(coef, powers)
    slope = dot_last(coef[..., 1:], jnp.asarray([1.0, 2.0, 3.0, 4.0], x.dtype) * powers[..., :4])
    return value, slope


def polynomial_coupling(coef, x1, x2) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Residual of a JOINT or TENDON equality ``C = x1 − P(x2)`` and the slope ``P'(x2)``.

    The constraint's Jacobian row is ``J1 − P'(x2)·J2`` (``J1``, ``J2`` the rows of ``x1``, ``x2``). Without a
    reference coordinate pass ``x2 = 0`` (and a zero ``J2``): ``C = x1 − c_0``.

    Args:
        coef: ``(..., 5)`` coefficients ``c_0..c_4`` of ``P``.
        x1: ``(...)`` the constrained coordinate or tendon length [m or rad].
        x2: ``(...)`` the reference coordinate or length.

    Returns:
        ``(residual, slope)``, each ``(...)``.
    """
    value, slope = joint_polynomial(coef, x2)
    return x1 - value, slope


def mimic_polynomial(coef0, coef1) -> jnp.ndarray:
    """A mimic constraint ``q_0 = coef0 + coef1·q_1`` as JOINT polynomial coefficients ``(coef0, coef1, 0, 0, 0)``.

    Args:
        coef0: ``(...)`` offset [m or rad].
        coef1: ``(...)`` ratio.

    Returns:
        ``(..., 5)`` coefficients for :func:`joint_polynomial`.
    """
    zero = jnp.zeros_like(coef0)
    return jnp.stack([coef0, coef1, zero, zero, zero], -1)


def offset_polycoef(coef, ref1: float, ref2: float) -> np.ndarray:
    """Coefficients of ``y = ref1 + Σ_k coef_k (x − ref2)^k`` as a polynomial in ``x`` (host numpy, 5 terms).

    MuJoCo's JOINT/TENDON equalities act on offsets from the ``qpos0`` values (``y − y0 = Σ a_k (x − x0)^k``),
    jaxart's on the coordinates or lengths themselves: ``offset_polycoef(a, y0, x0)`` converts MuJoCo's to
    jaxart's, ``offset_polycoef(c, −y0, −x0)`` back.

    Args:
        coef: Up to 5 coefficients.
        ref1: Offset added to the value.
        ref2: Shift of the argument.

    Returns:
        ``(5,)`` coefficients (the terms above degree 4 vanish: the shift keeps the degree).
    """
    poly = np.polynomial.Polynomial(np.asarray(coef, np.float64))(np.polynomial.Polynomial([-float(ref2), 1.0]))
    out = np.zeros(5)
    out[: len(poly.coef)] = poly.coef[:5]
    out[0] += ref1
    return out
