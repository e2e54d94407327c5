"""Inverse kinematics: world body poses and COM twists → generalized coordinates."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.ik_lanes import ik_inputs, ik_kernel, ik_static
from jaxart.kinematics.masks import articulation_mask
from jaxart.math.lanes import lanes
from jaxart.sim import checks
from jaxart.sim.enums import BodyFlags


def eval_ik(model, state, joint_q=None, joint_qd=None, mask=None, indices=None,
            body_flag_filter: int = BodyFlags.ALL) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Evaluate inverse kinematics (Newton's ``eval_ik``, functional).

    Revolute (and 1-axis D6) angles are ``2·atan2(axis · q_pc.xyz, q_pc.w)`` in (−2π, 2π]; BALL
    returns ``q_p⁻¹ q_c`` without hemisphere flipping; 2/3-axis D6 invert the intrinsic Euler chain
    (any handedness); FREE/DISTANCE velocities are the child-COM twist in the parent-anchor frame.
    Linear coordinates are the exact inverse of :func:`~jaxart.eval_fk` (velocities are relative
    velocities seen from the moving parent anchor).

    The maths is :mod:`jaxart.kinematics.ik_lanes`; under ``vmap`` (batches > 1) it runs batch-minor
    (:func:`jaxart.math.lanes.lanes`), otherwise and for derivatives with one lane.

    Args:
        model: The model.
        state: State holding ``body_q`` and ``body_qd``.
        joint_q: Coordinates to update; ``state.joint_q`` when ``None``.
        joint_qd: Velocities to update; ``state.joint_qd`` when ``None``.
        mask: Optional ``(articulation_count,)`` booleans selecting articulations.
        indices: Optional articulation indices (exclusive with ``mask``).
        body_flag_filter: Only joints whose child body matches these flags are written.

    Returns:
        ``(joint_q, joint_qd)``; entries not selected keep their input values.
    """
    checks.check_ik(model, state, joint_q, joint_qd)
    with jax.named_scope("jaxart.eval_ik"):
        art = articulation_mask(model, mask, indices)
        dt = state.body_q.dtype
        joint_q = state.joint_q if joint_q is None else jnp.asarray(joint_q, dt)
        joint_qd = state.joint_qd if joint_qd is None else jnp.asarray(joint_qd, dt)
        ik = ik_static(model, body_flag_filter)
        child = model.topology.joint_child.array[ik.tj]
        parent = model.schedule.body_parent.array[child]
        fn = lanes(functools.partial(ik_kernel, ik, parent, child))
        q_new, qd_new = fn(ik_inputs(model, dt), state.body_q, state.body_qd, model.body_com.astype(dt),
                           joint_q, joint_qd)
        if art is None:
            return q_new, qd_new
        topo = model.topology
        ja = np.maximum(topo.joint_articulation.array, 0)
        coord_joint = np.repeat(np.arange(topo.joint_count), np.diff(topo.joint_q_start.array))
        dof_joint = np.repeat(np.arange(topo.joint_count), np.diff(topo.joint_qd_start.array))
        return jnp.where(art[ja[coord_joint]], q_new, joint_q), jnp.where(art[ja[dof_joint]], qd_new, joint_qd)
