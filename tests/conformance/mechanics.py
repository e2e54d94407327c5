"""Rollouts and mechanical energies shared by the conformance suites' scenarios."""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

import jaxart


def body_energies(model, body_q: jax.Array, body_qd: jax.Array) -> jax.Array:
    """``(body_count,)`` kinetic plus gravitational energy [J] of each body.

    Args:
        model: The model (masses, COMs, inertias, gravity).
        body_q: ``(body_count, 7)`` world poses.
        body_qd: ``(body_count, 6)`` world COM twists (linear [m/s], angular [rad/s]).
    """
    com = jaxart.math.transform_point(body_q, model.body_com)
    rot = jaxart.math.quat_to_matrix(body_q[:, 3:])
    inertia = rot @ model.body_inertia @ jnp.swapaxes(rot, -1, -2)
    v, w = body_qd[:, :3], body_qd[:, 3:]
    kinetic = 0.5 * model.body_mass * jnp.sum(v * v, -1) + 0.5 * jnp.einsum("bi,bij,bj->b", w, inertia, w)
    return kinetic - model.body_mass * (com @ model.gravity)


def rollout(solver, steps: int, dt: float, contacts: bool):
    """``steps`` steps from the model's initial state (poses from FK), without control, in one jitted scan.

    Args:
        solver: The solver (its model is the scenario).
        steps: Number of steps.
        dt: Step [s].
        contacts: Collide every step (``model.collide``) or step without contacts.

    Returns:
        Per step ``(joint_q (steps, joint_coord_count), body_q (steps, body_count, 7),
        body_qd (steps, body_count, 6), energies (steps, body_count))``, and the initial energies ``(body_count,)``.
    """
    model = solver.model

    def run():
        start = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

        def step(s, _):
            s = solver.step(s, None, model.collide(s) if contacts else None, dt)
            return s, (s.joint_q, s.body_q, s.body_qd, body_energies(model, s.body_q, s.body_qd))

        return jax.lax.scan(step, start, None, length=steps)[1], body_energies(model, start.body_q, start.body_qd)

    return jax.device_get(jax.jit(run)())


def mujoco_c_qpos(solver, steps: int, dt: float) -> np.ndarray:
    """``(steps, nq)`` coordinates of MuJoCo C (``mj_step``) on the model that ``solver`` (a
    :class:`~jaxart.solvers.SolverMuJoCo`) steps, from its ``qpos0`` at step ``dt`` [s], without control."""
    mj_model = copy.copy(solver.mj_model)
    mj_model.opt.timestep = dt
    data = mujoco.MjData(mj_model)
    out = np.empty((steps, mj_model.nq))
    for k in range(steps):
        mujoco.mj_step(mj_model, data)
        out[k] = data.qpos
    return out
