"""Actuator activation dynamics (MuJoCo's ``dyntype`` integrator / filter / filterexact).

For each stateful actuator (:mod:`jaxart.sim.actuators`) with input ``u`` (``Control.actuator_ctrl``, clamped
to ``ctrlrange`` where limited), activation ``a`` (``State.actuator_act``) and time step ``dt``:

* INTEGRATOR: ``ȧ = u``, ``a' = a + dt·u``;
* FILTER: ``ȧ = (u − a)/τ``, ``a' = a + dt·ȧ`` (explicit Euler, MuJoCo's Euler and implicit integrators);
* FILTEREXACT: ``a' = a + (u − a)(1 − exp(−dt/τ))`` (the filter's exact solution over the step);
* MUSCLE: ``a' = a + dt·ȧ`` with MuJoCo's muscle rate (:func:`jaxart.laws.muscle.muscle_activation_rate`);

then ``a'`` is clamped to ``actrange`` where limited (a muscle's to ``[0, 1]`` always, as in MuJoCo).
A muscle's output is its force (:func:`jaxart.laws.muscle.muscle_force`) at the actuator length and velocity
of the step's start (``gain`` = gear times the joint coordinate or tendon length).

The output of the step (a force ``gain·a`` or a drive
target ``gain·a``, :class:`~jaxart.sim.actuators.ActuatorOutput`) uses ``a`` at the start of the step, or ``a'``
for ``actearly`` actuators — MuJoCo's order, so a model stepped with ``mj_step`` (Euler) and with a jaxart solver
sees the same actuator inputs.

All functions are pure and ``jit``/``vmap``/``grad`` compatible.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.laws.muscle import muscle_activation_rate, muscle_force
from jaxart.sim.actuators import ActuatorDynType, ActuatorOutput

__all__ = ["activation_control", "next_activation"]


def _clamp(x, rng, limited):
    return jnp.where(limited, jnp.clip(x, rng[..., 0], rng[..., 1]), x)


def next_activation(model, act: jax.Array, ctrl: jax.Array, dt) -> jax.Array:
    """The activation after one step of ``dt`` seconds.

    Args:
        model: A :class:`~jaxart.Model` with stateful actuators.
        act: ``(actuator_count,)`` activation at the start of the step.
        ctrl: ``(actuator_count,)`` inputs (clamped here to ``actuator_ctrlrange`` where limited).
        dt: Time step [s].

    Returns:
        ``(actuator_count,)`` activation at the end of the step, clamped to ``actuator_actrange`` where limited.
    """
    topo = model.actuator
    dyn = np.asarray(topo.actuator_dyntype)
    u = _clamp(ctrl, model.actuator_ctrlrange, np.asarray(topo.actuator_ctrllimited, bool))
    tau = jnp.maximum(model.actuator_timeconst, jnp.finfo(act.dtype).tiny)
    integ = act + dt * u
    euler = act + dt * (u - act) / tau
    exact = act + (u - act) * -jnp.expm1(-dt / tau)
    nxt = jnp.where(dyn == ActuatorDynType.INTEGRATOR, integ,
                    jnp.where(dyn == ActuatorDynType.FILTER, euler, exact))
    muscle = dyn == ActuatorDynType.MUSCLE
    if muscle.any():
        nxt = jnp.where(muscle, jnp.clip(act + dt * muscle_activation_rate(model.actuator_muscle, u, act), 0.0, 1.0),
                        nxt)
    return _clamp(nxt, model.actuator_actrange, np.asarray(topo.actuator_actlimited, bool))


def activation_control(model, control, act: jax.Array, act_next: jax.Array, transmission=None):
    """``control`` with the stateful actuators' outputs written in (forces added, targets replaced).

    Args:
        model: A :class:`~jaxart.Model` with stateful actuators.
        control: One world's :class:`~jaxart.Control` (not ``None``; tendon fields may be ``None``).
        act: ``(actuator_count,)`` activation at the start of the step.
        act_next: ``(actuator_count,)`` activation at its end (used by ``actearly`` actuators).
        transmission: ``(length, velocity)``, ``(actuator_count,)`` each: the joint coordinate / tendon length and
            its rate of each actuator's target (read by muscles; ``None`` when the model has none).

    Returns:
        The :class:`~jaxart.Control` the solver steps with.
    """
    topo = model.actuator
    early = np.asarray(topo.actuator_actearly, bool)
    used = jnp.where(early, act_next, act)
    out = model.actuator_gain * used
    muscle = np.asarray(topo.actuator_dyntype) == ActuatorDynType.MUSCLE
    if muscle.any():
        length, velocity = transmission
        gear = model.actuator_gain
        out = jnp.where(muscle, gear * muscle_force(model.actuator_muscle, gear * length, gear * velocity, used), out)
    kind = np.asarray(topo.actuator_output)
    target = np.asarray(topo.actuator_target)
    coord = np.asarray(topo.actuator_coord)
    fields = {}

    def write(name: str, k: ActuatorOutput, index: np.ndarray, *, add: bool, default) -> None:
        sel = np.flatnonzero(kind == k)
        if not sel.size:
            return
        base = fields.get(name, getattr(control, name))
        base = default() if base is None else base
        vals = out[sel].astype(base.dtype)
        fields[name] = base.at[index[sel]].add(vals) if add else base.at[index[sel]].set(vals)

    nt = model.tendon.tendon_count
    write("joint_act", ActuatorOutput.JOINT_FORCE, target, add=True, default=None)
    write("joint_target_q", ActuatorOutput.JOINT_POSITION_TARGET, coord, add=False, default=None)
    write("joint_target_qd", ActuatorOutput.JOINT_VELOCITY_TARGET, target, add=False, default=None)
    write("tendon_f", ActuatorOutput.TENDON_FORCE, target, add=True, default=lambda: jnp.zeros(nt, act.dtype))
    write("tendon_target_length", ActuatorOutput.TENDON_LENGTH_TARGET, target, add=False,
          default=lambda: model.tendon_target_length)
    write("tendon_target_velocity", ActuatorOutput.TENDON_VELOCITY_TARGET, target, add=False,
          default=lambda: model.tendon_target_velocity)
    return control.replace(**fields)
