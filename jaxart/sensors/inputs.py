"""What a caller passes to sensors that need more than the state: the step's accelerations, loads, contacts, time."""

from __future__ import annotations

import jax
from flax import struct


@struct.dataclass
class SensorInputs:
    """Per-step inputs of the sensors that read accelerations, contact forces or the time.

    Every field is optional; :func:`~jaxart.sensors.eval_sensors` raises ``ValueError`` naming the field when a
    model's sensor needs one that is ``None``.

    Attributes:
        joint_qdd: ``(joint_dof_count,)`` joint accelerations, the time derivative of ``State.joint_qd`` (same
            layout and frames). Read by ACCELEROMETER, FRAMELINACC, FRAMEANGACC, FORCE and TORQUE. Free motion
            under ``joint_f``/``body_f``: :func:`jaxart.eval_forward_dynamics`; a solver step ``state → next``:
            ``(next.joint_qd − state.joint_qd) / dt`` (evaluate the sensors at ``state``).
        body_f: ``(body_count, 6)`` external world wrenches ``(f [N], τ about the COM [N·m])`` acting during the step
            (FORCE/TORQUE read the subtree's external loads, MuJoCo's ``cfrc_ext``); add the step's contact wrenches
            (:func:`jaxart.dynamics.eval_body_contact_wrenches`) when contacts acted. ``None``: ``State.body_f``.
        contacts: :class:`~jaxart.collision.Contacts` of the step (``model.collide(state)``), read by TOUCH.
        contact_force: ``(capacity, 3)`` world force [N] of every contact row on shape B's body (A receives its
            opposite), read by TOUCH: :func:`jaxart.contact.implicit.implicit_contact_forces` for
            ``SolverFeatherstone(contact="implicit")``, ``jaxart.contact.penalty.contact_forces(...).force`` for the
            penalty law.
        time: Scalar simulation time [s], read by CLOCK.
    """

    joint_qdd: jax.Array | None = None
    body_f: jax.Array | None = None
    contacts: object | None = None
    contact_force: jax.Array | None = None
    time: jax.Array | float | None = None
