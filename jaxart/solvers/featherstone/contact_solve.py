"""The fixed-iteration solve of the implicit contact law inside the Featherstone step.

Each iteration linearises the law of :mod:`jaxart.contact.implicit` at the row velocities ``u'`` of the
previous iteration (the first at the start-of-step velocities) and solves the joint-space system once:
single worlds, derivatives and rows between two moving bodies by the dense world solve
(:mod:`jaxart.dynamics.engine.dense_solve`, CRBA + Cholesky, implicit derivatives), batches whose rows all
have a static side by the articulated-body algorithm with the rows as body impedances
(:mod:`jaxart.solvers.featherstone.aba_contact`, one pair of passes per iteration over terms computed once).
Both evaluate the same sequence of linear systems.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxart.contact.implicit import ContactLaw, linearize
from jaxart.dynamics.aba import aba_solve, aba_terms, dense_from_base
from jaxart.solvers.featherstone.aba_contact import contact_dof_loads, row_frame, static_row_velocities

__all__ = ["dense_contact_accelerations", "lane_contact_accelerations"]


def dense_contact_accelerations(model, forces: tuple, law: ContactLaw, iterations: int, **solve) -> jnp.ndarray:
    """Joint accelerations of one world with the implicit contact law, by the dense world solve.

    Args:
        model: The model.
        forces: ``(joint_q, joint_qd, base_q, joint_f, tau_extra, d_extra, body_f)`` as
            :func:`~jaxart.dynamics.aba.dense_from_base` takes them.
        law: The rows' :class:`~jaxart.contact.implicit.ContactLaw` (body ids traced, or numpy when static).
        iterations: Number of linear solves (≥ 1).
        **solve: Further keywords of :func:`~jaxart.dynamics.aba.dense_from_base` (``dyad``, ``constraints``,
            ``lowrank``).

    Returns:
        ``(nd,)`` joint accelerations.
    """
    return dense_from_base(model, *forces, contact=law, dt=law.dt, contact_iterations=iterations, **solve)


def lane_contact_accelerations(model, forces: tuple, law: ContactLaw, bodies: tuple, iterations: int) -> jnp.ndarray:
    """Lane kernel of :func:`dense_contact_accelerations` for rows that all have a static side.

    Args:
        model: The model.
        forces: ``(joint_q, joint_qd, base_q, joint_f, tau_extra, d_extra, body_f)`` in the lane layout, as
            :func:`~jaxart.dynamics.aba.aba_terms` takes them.
        law: The rows' law in the lane layout (body ids unused).
        bodies: Static ``(body_a, body_b)`` tuples of the rows.
        iterations: Number of solves (≥ 1).

    Returns:
        ``(nd, L)`` joint accelerations.
    """
    terms = aba_terms(model, *forces)
    frame = row_frame(model, bodies, terms, law.dt)  # per-row terms fixed over the iterations
    u = static_row_velocities(model, law.point, bodies, frame)
    qdd = None
    for k in range(iterations):
        qdd = aba_solve(model, terms, contact_dof_loads(model, linearize(law, u, first=k == 0), bodies, frame, law.dt))
        if k + 1 < iterations:
            u = static_row_velocities(model, law.point, bodies, frame, terms.s, law.dt * qdd)
    return qdd
