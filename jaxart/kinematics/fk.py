"""Forward kinematics: generalized coordinates → world body poses and COM twists."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxart.kinematics.joints import joint_motion
from jaxart.kinematics.masks import articulation_mask, body_update_mask
from jaxart.kinematics.tree import accumulate_down, compose_down
from jaxart.math import quat_rotate, transform_identity, transform_inverse, transform_mul, transform_point
from jaxart.sim.enums import BodyFlags
from jaxart.sim.model import State


def eval_fk(model, joint_q, joint_qd, state: State | None = None, mask=None, indices=None,
            body_flag_filter: int = BodyFlags.ALL) -> State:
    """Evaluate forward kinematics (Newton's ``eval_fk``, functional).

    ``x_wc = x_wp · X_p · X_j(q) · X_c⁻¹``; ``body_qd = (v_com_world, ω_world)``. Bodies outside
    the selected articulations, bodies with no tree joint, and bodies whose flags do not match
    ``body_flag_filter`` keep their values from ``state``. (Newton reads a filtered parent's stale
    pose for its children; jaxart always propagates the freshly computed parent pose.)

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities.
        state: State to update (a new one is returned); ``model.state()`` when ``None``.
        mask: Optional ``(articulation_count,)`` booleans selecting articulations.
        indices: Optional articulation indices (exclusive with ``mask``).
        body_flag_filter: :class:`BodyFlags` of bodies to write.

    Returns:
        The updated :class:`State` (``joint_q``/``joint_qd`` set to the inputs).
    """
    with jax.named_scope("jaxart.eval_fk"):
        if state is None:
            state = model.state()
        art = articulation_mask(model, mask, indices)
        joint_q = jnp.asarray(joint_q, dtype=state.body_q.dtype)
        joint_qd = jnp.asarray(joint_qd, dtype=state.body_q.dtype)
        body_q, body_qd = fk_bodies(model, joint_q, joint_qd, state.body_q, state.body_qd)
        upd = body_update_mask(model, art, body_flag_filter)[:, None]
        return state.replace(
            body_q=jnp.where(upd, body_q, state.body_q),
            body_qd=jnp.where(upd, body_qd, state.body_qd),
            joint_q=joint_q,
            joint_qd=joint_qd,
        )


def fk_bodies(model, joint_q, joint_qd, body_q_base, body_qd_base):
    """World poses and COM twists of all bodies (no masking).

    Args:
        model: The model.
        joint_q: Coordinates.
        joint_qd: Velocities.
        body_q_base: ``(n, 7)`` poses used for bodies without a tree joint (tree roots).
        body_qd_base: ``(n, 6)`` twists used for bodies without a tree joint.

    Returns:
        ``(body_q (n, 7), body_qd (n, 6))``.
    """
    sch = model.schedule
    n = model.body_count
    tj = sch.tree_joint.array
    child = model.topology.joint_child.array[tj]
    motion = joint_motion(model, joint_q, joint_qd)
    x_p, x_c = model.joint_X_p[tj], model.joint_X_c[tj]
    local = transform_mul(transform_mul(x_p, motion.X_j), transform_inverse(x_c))
    ident = transform_identity(body_q_base.dtype)[None]
    t = jnp.concatenate([body_q_base, ident], axis=0).at[child].set(local)
    world = compose_down(sch, t)
    body_q = world[:n]
    com_w = transform_point(body_q, model.body_com)
    # joint twists referenced at the world origin: (v_ref - w x r, w)
    parent = sch.body_parent.array[child]
    x_wpa = transform_mul(world[parent], x_p)
    w = quat_rotate(x_wpa[:, 3:], motion.w)
    v = quat_rotate(x_wpa[:, 3:], motion.v)
    anchor = transform_mul(x_wpa, motion.X_j)[:, :3]
    ref = jnp.where(jnp.asarray(sch.is_com_ref.array)[:, None], com_w[child], anchor)
    twist_j = jnp.concatenate([v - jnp.cross(w, ref), w], axis=-1)
    base = jnp.concatenate([body_qd_base[:, :3] - jnp.cross(body_qd_base[:, 3:], com_w), body_qd_base[:, 3:]], -1)
    twists = jnp.concatenate([base, jnp.zeros((1, 6), base.dtype)], axis=0).at[child].set(twist_j)
    origin_twist = accumulate_down(sch, twists)[:n]
    omega = origin_twist[:, 3:]
    body_qd = jnp.concatenate([origin_twist[:, :3] + jnp.cross(omega, com_w), omega], axis=-1)
    return body_q, body_qd
