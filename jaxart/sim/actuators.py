"""Stateful actuators (activation dynamics) and their ``finalize`` wiring.

A stateful actuator has an activation ``a`` (``State.actuator_act``) driven by its input ``u``
(``Control.actuator_ctrl``) through first-order dynamics (:class:`ActuatorDynType`, MuJoCo's ``dyntype``;
the law is :mod:`jaxart.laws.activation`). The activation sets one control input of the model before each
solver step (:class:`ActuatorOutput`): a feed-forward force ``gain · a`` on a DOF or a tendon, or a drive
target ``gain · a`` (position / velocity of a DOF, length / length rate of a tendon). Actuators without
dynamics need no entry here: they are joint or tendon drives and ``Control`` forces.

The integer/boolean/label fields are static (:class:`ActuatorTopology`, part of ``Model``'s aux data);
time constants, gains, ranges and initial activations are traced ``Model`` leaves (see
:class:`~jaxart.sim.model.Model`).
"""

from __future__ import annotations

import dataclasses
import enum

from jaxart.sim.static import StaticArray, StaticRecord, static_ints


class ActuatorDynType(enum.IntEnum):
    """Activation dynamics (values match MuJoCo's ``mjtDyn``).

    INTEGRATOR: ``ȧ = u``. FILTER: ``ȧ = (u − a) / τ``, integrated by explicit Euler. FILTEREXACT: the same
    filter integrated exactly over the step, ``a ← a + (u − a)(1 − exp(−dt/τ))``. MUSCLE: MuJoCo's muscle
    activation (:mod:`jaxart.laws.muscle`), explicit Euler; its output is the muscle force, not ``gain · a``.
    """

    INTEGRATOR = 1
    FILTER = 2
    FILTEREXACT = 3
    MUSCLE = 4


class ActuatorOutput(enum.IntEnum):
    """What the activation sets (``actuator_target`` indexes a DOF or a tendon).

    JOINT_FORCE: adds ``gain · a`` to ``Control.joint_act`` of the DOF [N or N·m].
    JOINT_POSITION_TARGET: sets the DOF's ``Control.joint_target_q`` to ``gain · a`` [m or rad] (REVOLUTE,
    PRISMATIC or D6 DOFs, which have one coordinate each).
    JOINT_VELOCITY_TARGET: sets ``Control.joint_target_qd`` of the DOF to ``gain · a``.
    TENDON_FORCE: adds ``gain · a`` to ``Control.tendon_f`` [N].
    TENDON_LENGTH_TARGET / TENDON_VELOCITY_TARGET: set ``Control.tendon_target_length`` / ``tendon_target_velocity``.

    A MUSCLE actuator has a FORCE output; ``gain`` is its gear (the moment arm: actuator length ``gain·q`` or
    ``gain·L``) and it adds ``gain · f`` with ``f`` the muscle force of :func:`jaxart.laws.muscle.muscle_force`.
    """

    JOINT_FORCE = 0
    JOINT_POSITION_TARGET = 1
    JOINT_VELOCITY_TARGET = 2
    TENDON_FORCE = 3
    TENDON_LENGTH_TARGET = 4
    TENDON_VELOCITY_TARGET = 5


#: Outputs whose target index is a tendon (the others index DOFs).
TENDON_OUTPUTS = (ActuatorOutput.TENDON_FORCE, ActuatorOutput.TENDON_LENGTH_TARGET,
                  ActuatorOutput.TENDON_VELOCITY_TARGET)

#: Static per-actuator fields exposed on ``Model`` as numpy arrays (labels as lists).
ACTUATOR_STATIC_FIELDS = (
    "actuator_dyntype",
    "actuator_output",
    "actuator_target",
    "actuator_coord",
    "actuator_actlimited",
    "actuator_ctrllimited",
    "actuator_actearly",
    "actuator_label",
    "actuator_count",
)


@dataclasses.dataclass(frozen=True, eq=False)
class ActuatorTopology(StaticRecord):
    """Static structure of a model's stateful actuators (hashable; part of ``Model``'s static data).

    Attributes:
        actuator_dyntype: ``(nact,)`` :class:`ActuatorDynType` values.
        actuator_output: ``(nact,)`` :class:`ActuatorOutput` values.
        actuator_target: ``(nact,)`` DOF index (joint outputs) or tendon index (tendon outputs).
        actuator_coord: ``(nact,)`` coordinate index of the DOF for JOINT_POSITION_TARGET and joint muscles, −1
            otherwise.
        actuator_actlimited: ``(nact,)`` 1 when the activation is clamped to ``actuator_actrange``.
        actuator_ctrllimited: ``(nact,)`` 1 when the input is clamped to ``actuator_ctrlrange``.
        actuator_actearly: ``(nact,)`` 1 when the output uses the end-of-step activation (MuJoCo's ``actearly``).
        actuator_label: ``nact`` names.
    """

    actuator_dyntype: StaticArray
    actuator_output: StaticArray
    actuator_target: StaticArray
    actuator_coord: StaticArray
    actuator_actlimited: StaticArray
    actuator_ctrllimited: StaticArray
    actuator_actearly: StaticArray
    actuator_label: tuple[str, ...]

    @property
    def actuator_count(self) -> int:
        """Number of stateful actuators."""
        return len(self.actuator_label)


def actuator_fields(builder, arr) -> dict:
    """``Model`` constructor arguments for the builder's stateful actuators.

    Args:
        builder: The :class:`~jaxart.ModelBuilder`.
        arr: ``arr(values, shape)`` → traced array of the model's dtype (from ``finalize``).

    Returns:
        Keyword arguments: the traced float fields and ``actuator`` (:class:`ActuatorTopology`).
    """
    b = builder
    n = b.actuator_count
    qd_start = list(b.joint_qd_start) + [b.joint_dof_count]
    coords = []
    for out, dof, dyn in zip(b.actuator_output, b.actuator_target, b.actuator_dyntype, strict=True):
        joint_muscle = dyn == ActuatorDynType.MUSCLE and out == ActuatorOutput.JOINT_FORCE
        if out != ActuatorOutput.JOINT_POSITION_TARGET and not joint_muscle:
            coords.append(-1)
            continue
        j = max(k for k in range(b.joint_count) if qd_start[k] <= dof)
        coords.append(b.joint_q_start[j] + dof - qd_start[j])
    topo = ActuatorTopology(
        actuator_dyntype=static_ints(b.actuator_dyntype),
        actuator_output=static_ints(b.actuator_output),
        actuator_target=static_ints(b.actuator_target),
        actuator_coord=static_ints(coords),
        actuator_actlimited=static_ints(b.actuator_actlimited),
        actuator_ctrllimited=static_ints(b.actuator_ctrllimited),
        actuator_actearly=static_ints(b.actuator_actearly),
        actuator_label=tuple(b.actuator_label),
    )
    return dict(
        actuator_timeconst=arr(b.actuator_timeconst, (n,)),
        actuator_gain=arr(b.actuator_gain, (n,)),
        actuator_ctrlrange=arr(b.actuator_ctrlrange, (n, 2)),
        actuator_actrange=arr(b.actuator_actrange, (n, 2)),
        actuator_act0=arr(b.actuator_act0, (n,)),
        actuator_muscle=arr(b.actuator_muscle, (n, 13)),
        actuator=topo,
    )


__all__ = ["ACTUATOR_STATIC_FIELDS", "ActuatorDynType", "ActuatorOutput", "ActuatorTopology", "TENDON_OUTPUTS",
           "actuator_fields"]
