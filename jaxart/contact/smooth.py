"""Smooth penalty contact for gradients through making and breaking contact.

``smooth_contact_body_wrenches(model, state, contacts, length=1e-3)`` is
:func:`jaxart.contact.penalty.contact_body_wrenches` with ``smooth=length``: the elastic force
``ke·s·softplus(−d/s)`` replaces ``−ke·d·[d<0]``, gates become sigmoids and the Coulomb clamp a
smooth saturation (exact formulas in :mod:`jaxart.contact.penalty`). Differences from Newton's
law are confined to ``|d| ≲ few·s`` and ``|v| ≲ few·smooth_velocity``; away from there both
variants agree. Its gradients are continuous across contact onset, so d(outcome)/d(parameters)
of a bouncing or sliding body matches finite differences (the exact law has a kink at ``d = 0``
whose finite differences depend on whether a step straddles it).
"""

from __future__ import annotations

import jax

from jaxart.contact.penalty import contact_body_wrenches


def smooth_contact_body_wrenches(model, state, contacts, *, length: float = 1e-3,
                                 velocity: float = 0.01) -> jax.Array:
    """Smooth penalty contact wrenches ``(body_count, 6)`` (world, about each COM).

    Args:
        model: The model.
        state: State with ``body_q``, ``body_qd``.
        contacts: :class:`~jaxart.collision.Contacts`.
        length: Smoothing length ``s`` [m] (> 0).
        velocity: Smoothing velocity [m/s] for damping and friction.
    """
    return contact_body_wrenches(model, state, contacts, smooth=length, smooth_velocity=velocity)
