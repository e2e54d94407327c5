"""Stateful-actuator methods of ``ModelBuilder`` (mixin): actuators with activation dynamics.

See :mod:`jaxart.sim.actuators` for the table and :mod:`jaxart.laws.activation` for the law.
"""

from __future__ import annotations

import numpy as np

from jaxart.sim.actuators import TENDON_OUTPUTS, ActuatorDynType, ActuatorOutput
from jaxart.sim.enums import JointType
from jaxart.sim.validate import as_float

_SCALAR_COORD = (JointType.REVOLUTE, JointType.PRISMATIC, JointType.D6)


def _range(value, what: str) -> tuple[np.ndarray, int]:
    """``None`` → unlimited ``(0, 0)`` and flag 0; a ``(lo, hi)`` pair with ``lo <= hi`` → flag 1."""
    if value is None:
        return np.zeros(2), 0
    r = np.asarray(value, dtype=np.float64)
    if r.shape != (2,) or not np.all(np.isfinite(r)) or r[0] > r[1]:
        raise ValueError(f"{what} must be None or a finite (lower, upper) pair with lower <= upper, got {value!r}")
    return r, 1


def _muscle(value, dyn: ActuatorDynType, out: ActuatorOutput) -> np.ndarray:
    """The muscle parameter row (zeros for other actuators), validated against ``dyntype`` and ``output``."""
    if dyn != ActuatorDynType.MUSCLE:
        if value is not None:
            raise ValueError("add_actuator: muscle parameters need dyntype=ActuatorDynType.MUSCLE")
        return np.zeros(13)
    if out not in (ActuatorOutput.JOINT_FORCE, ActuatorOutput.TENDON_FORCE):
        raise ValueError(f"add_actuator: a muscle's output must be JOINT_FORCE or TENDON_FORCE, got {out.name}")
    prm = np.asarray(value if value is not None else [], dtype=np.float64)
    if prm.shape != (13,) or not np.all(np.isfinite(prm)):
        raise ValueError(f"add_actuator: muscle must be 13 finite parameters (MUSCLE_COLUMNS), got shape {prm.shape}")
    return prm


class ActuatorBuilderMixin:
    """Stateful-actuator methods; expects the joint/DOF and tendon lists of ``ModelBuilder``."""

    def _init_actuators(self) -> None:
        self.actuator_dyntype: list[int] = []
        self.actuator_output: list[int] = []
        self.actuator_target: list[int] = []
        self.actuator_actlimited: list[int] = []
        self.actuator_ctrllimited: list[int] = []
        self.actuator_actearly: list[int] = []
        self.actuator_timeconst: list[float] = []
        self.actuator_gain: list[float] = []
        self.actuator_ctrlrange: list[np.ndarray] = []
        self.actuator_actrange: list[np.ndarray] = []
        self.actuator_act0: list[float] = []
        self.actuator_muscle: list[np.ndarray] = []
        self.actuator_label: list[str] = []

    @property
    def actuator_count(self) -> int:
        """Number of stateful actuators added so far."""
        return len(self.actuator_label)

    def add_actuator(self, target: int, *, dyntype: ActuatorDynType,
                     output: ActuatorOutput = ActuatorOutput.JOINT_FORCE, gain: float = 1.0,
                     timeconst: float = 0.0, ctrlrange=None, actrange=None,
                     actearly: bool = False, act0: float = 0.0, muscle=None, label: str | None = None) -> int:
        """Add an actuator with activation dynamics (MuJoCo's ``dyntype`` integrator/filter/filterexact).

        Args:
            target: DOF index (joint outputs) or tendon index (tendon outputs).
            dyntype: :class:`~jaxart.sim.actuators.ActuatorDynType`.
            output: :class:`~jaxart.sim.actuators.ActuatorOutput`: what ``gain · activation`` sets.
            gain: Output per unit activation (a force for the FORCE outputs, a target otherwise).
            timeconst: Filter time constant τ [s] (> 0 for FILTER/FILTEREXACT; ignored by INTEGRATOR).
            ctrlrange: ``None`` or ``(lower, upper)`` clamp of the input ``Control.actuator_ctrl``.
            actrange: ``None`` or ``(lower, upper)`` clamp of the activation after each step.
            actearly: Use the end-of-step activation for the output of the same step (MuJoCo's ``actearly``).
            act0: Initial activation (``model.state().actuator_act``).
            muscle: The 13 muscle parameters (``jaxart.laws.muscle.MUSCLE_COLUMNS``), required by (and only
                accepted with) ``dyntype=MUSCLE``, whose output must be JOINT_FORCE (a DOF with its own
                coordinate) or TENDON_FORCE and whose ``gain`` is the gear.
            label: Unique name (default ``actuator_<i>``).

        Returns:
            The actuator index (into ``Control.actuator_ctrl`` / ``State.actuator_act``).

        Raises:
            ValueError: Unknown enum values, a missing DOF/tendon, a position target on a DOF without its own
                coordinate, ``timeconst <= 0`` for a filter, or bad ranges.
            TypeError: Non-integer ``target`` or a non-string label.
        """
        try:
            dyn, out = ActuatorDynType(int(dyntype)), ActuatorOutput(int(output))
        except (TypeError, ValueError):
            raise ValueError(f"add_actuator: unknown dyntype {dyntype!r} or output {output!r}; use "
                             "jaxart.sim.actuators.ActuatorDynType / ActuatorOutput") from None
        if isinstance(target, bool) or not isinstance(target, int | np.integer):
            raise TypeError(f"add_actuator: target must be a DOF or tendon index (int), got {target!r}")
        target = int(target)
        count = self.tendon_count if out in TENDON_OUTPUTS else self.joint_dof_count
        if not 0 <= target < count:
            kind = "tendon" if out in TENDON_OUTPUTS else "DOF"
            raise ValueError(f"add_actuator: {kind} index {target} does not exist ({kind} count {count})")
        prm = _muscle(muscle, dyn, out)
        if out == ActuatorOutput.JOINT_POSITION_TARGET or (dyn == ActuatorDynType.MUSCLE and out not in TENDON_OUTPUTS):
            j = max(k for k in range(self.joint_count) if self.joint_qd_start[k] <= target)
            if JointType(self.joint_type[j]) not in _SCALAR_COORD:
                raise ValueError("add_actuator: a position target or joint muscle needs a REVOLUTE, PRISMATIC or D6 "
                                 f"DOF; DOF {target} belongs to a {JointType(self.joint_type[j]).name} joint")
        tau = as_float(timeconst, "add_actuator: timeconst", nonneg=True)
        if dyn in (ActuatorDynType.FILTER, ActuatorDynType.FILTEREXACT) and tau <= 0.0:
            raise ValueError(f"add_actuator: timeconst must be > 0 [s] for a {dyn.name} actuator, got {tau}")
        crange, climited = _range(ctrlrange, "add_actuator: ctrlrange")
        arange, alimited = _range(actrange, "add_actuator: actrange")
        label = self._check_label(label, f"actuator_{self.actuator_count}", self.actuator_label, "actuator")
        self.actuator_dyntype.append(int(dyn))
        self.actuator_output.append(int(out))
        self.actuator_target.append(target)
        self.actuator_actlimited.append(alimited)
        self.actuator_ctrllimited.append(climited)
        self.actuator_actearly.append(int(bool(actearly)))
        self.actuator_timeconst.append(tau)
        self.actuator_gain.append(as_float(gain, "add_actuator: gain"))
        self.actuator_ctrlrange.append(crange)
        self.actuator_actrange.append(arange)
        self.actuator_act0.append(as_float(act0, "add_actuator: act0"))
        self.actuator_muscle.append(prm)
        self.actuator_label.append(label)
        return self.actuator_count - 1

    def _merge_actuators(self, src, dof_offset: int, tendon_offset: int, prefix: str | None) -> None:
        """Append ``src``'s stateful actuators with shifted DOF/tendon indices (``add_builder``)."""
        for k in range(src.actuator_count):
            new = f"{prefix}/{src.actuator_label[k]}" if prefix else src.actuator_label[k]
            if new in self.actuator_label:
                raise ValueError(f"add_builder: actuator label {new!r} already exists; pass a distinct label_prefix")
            shift = tendon_offset if ActuatorOutput(src.actuator_output[k]) in TENDON_OUTPUTS else dof_offset
            self.actuator_target.append(src.actuator_target[k] + shift)
            for name in ("dyntype", "output", "actlimited", "ctrllimited", "actearly", "timeconst", "gain", "act0"):
                getattr(self, f"actuator_{name}").append(getattr(src, f"actuator_{name}")[k])
            self.actuator_ctrlrange.append(src.actuator_ctrlrange[k].copy())
            self.actuator_actrange.append(src.actuator_actrange[k].copy())
            self.actuator_muscle.append(src.actuator_muscle[k].copy())
            self.actuator_label.append(new)
