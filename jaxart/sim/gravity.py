"""Gravity compensation: the one place where a body's gravity force is defined.

MuJoCo's ``body_gravcomp`` (``<body gravcomp="...">``) applies an upward force ``gravcomp · m · (−g)`` at
the body's COM, so the net gravity force on body ``i`` is ``(1 − gravcomp_i) · m_i · g``. Every solver and
dynamics function that applies gravity multiplies ``model.gravity`` by :func:`gravity_mass` of the mass it
works with (a body's mass, or the 0/1 "has mass" mask of the maximal-coordinate integrators, which gives
the gravity acceleration). With ``gravcomp = 0`` the result is bit-identical to ``m · g``.
"""

from __future__ import annotations

__all__ = ["gravity_mass"]


def gravity_mass(mass, gravcomp):
    """The mass gravity acts on after compensation, ``(1 − gravcomp) · mass`` (elementwise, any shapes).

    Args:
        mass: Body masses [kg] (or a 0/1 mask for a per-unit-mass acceleration), any broadcastable shape.
        gravcomp: Gravity compensation fractions ``model.body_gravcomp`` [-], broadcastable against ``mass``
            (0: full gravity, 1: weightless, > 1: pushed up).

    Returns:
        ``mass · (1 − gravcomp)``; the gravity force is this times ``model.gravity``.
    """
    return mass * (1.0 - gravcomp)
