"""Observations from a model's sensors: the physics of one environment step, keeping what the sensors read.

An environment step is ``action_repeat`` physics steps. Sensors are read as MuJoCo reads them after ``mj_step``:
at the state the last physics step started from, with that step's joint accelerations ``(qd' − qd) / dt`` and,
with contacts, that step's contacts and implicit-law contact forces. The physics is the one of
:meth:`jaxart.envs.Env.pipeline_step` (same solver, same contact law), so the trajectory does not change.
"""

from __future__ import annotations

import jax
from flax import struct

from jaxart.sensors import SensorInputs, eval_sensors
from jaxart.sim.model import Control, State


@struct.dataclass
class SensedStep:
    """The result of an environment step with its sensor readings.

    Attributes:
        state: Physics state after the step (what :meth:`~jaxart.envs.Env.pipeline_step` returns).
        sensordata: ``(sensor_data_count,)`` readings of every sensor of the model (MuJoCo's ``sensordata``
            layout; :func:`jaxart.sensors.sensor_dict` names them), taken at the start of the last physics step.
    """

    state: State
    sensordata: jax.Array


def check_sensing(env) -> None:
    """Raise when ``env``'s physics cannot feed its model's sensors.

    Raises:
        ValueError: The model has no sensors.
        NotImplementedError: Contacts under a law other than the implicit one of ``SolverFeatherstone`` (its
            per-contact forces, read by TOUCH, are only exposed for that law).
    """
    model = env.model
    if not model.sensor.sensor_count:
        raise ValueError(f"{type(env).__name__}: observation='sensors' needs a model with sensors, this one has none")
    solver = env.solver_cls(model, **env.solver_kwargs)
    if env.contacts and getattr(solver, "contact", None) != "implicit":
        raise NotImplementedError(f"{type(env).__name__}: sensor observations with contacts need SolverFeatherstone's "
                                  "implicit contact law (contact='implicit'); other laws' contact forces are not "
                                  "passed to the sensors")


def _inputs_of_step(env, solver, start: State, control: Control) -> tuple[State, SensorInputs]:
    """One physics step from ``start``, and the sensor inputs of that step."""
    from jaxart.contact.implicit import implicit_contact_forces

    model = env.model
    contacts = model.collide(start) if env.contacts else None
    nxt = solver.step(start, control, contacts, env.dt)
    qdd = (nxt.joint_qd - start.joint_qd) / env.dt
    if contacts is None:
        return nxt, SensorInputs(joint_qdd=qdd)
    force = implicit_contact_forces(model, start, contacts, nxt.joint_qd, env.dt,
                                    stiction_velocity=solver.stiction_velocity,
                                    activation_length=solver.contact_activation_length)
    return nxt, SensorInputs(joint_qdd=qdd, contacts=contacts, contact_force=force)


def sensed_step(env, pipeline_state: State, control: Control) -> SensedStep:
    """``env.action_repeat`` physics steps under a constant ``control`` and the sensors of the last one.

    Pure, ``jit``/``vmap``/``grad`` compatible (a ``lax.scan`` over the first ``action_repeat − 1`` steps).

    Args:
        env: A :class:`jaxart.envs.Env` (its model, solver, ``dt``, ``action_repeat`` and ``contacts``).
        pipeline_state: Physics state at the start of the environment step.
        control: Control held during the step.

    Returns:
        The :class:`SensedStep`.
    """
    model = env.model
    solver = env.solver_cls(model, **env.solver_kwargs)

    def body(s, _):
        return solver.step(s, control, model.collide(s) if env.contacts else None, env.dt), None

    start = pipeline_state
    if env.action_repeat > 1:
        start = jax.lax.scan(body, pipeline_state, None, length=env.action_repeat - 1)[0]
    nxt, inputs = _inputs_of_step(env, solver, start, control)
    return SensedStep(nxt, eval_sensors(model, start, control, inputs))


def sensors_at(env, pipeline_state: State, control: Control) -> jax.Array:
    """Sensor readings at ``pipeline_state`` for one physics step under ``control`` (the state is not advanced).

    Used for the first observation of an episode, which has no previous step: the accelerometer and touch sensors
    read the step the physics would take from the reset state.

    Args:
        env: The environment.
        pipeline_state: Physics state.
        control: Control of the trial step.

    Returns:
        ``(sensor_data_count,)`` readings.
    """
    solver = env.solver_cls(env.model, **env.solver_kwargs)
    return eval_sensors(env.model, pipeline_state, control, _inputs_of_step(env, solver, pipeline_state, control)[1])
