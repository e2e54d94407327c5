"""Mocap bodies: kinematic bodies whose pose is an input (MuJoCo's ``mocap_pos``/``mocap_quat``).

A mocap body is the child of a kinematic FREE joint listed in ``Model.mocap_joint``. Before every solver step
its joint coordinates are set from ``Control.mocap_pos``/``mocap_quat`` (the child anchor's pose in the parent
anchor's frame), its joint velocity and body twist to zero (MuJoCo's mocap bodies have no velocity: contacts and
equality constraints see a body that jumps to its new pose), and its ``body_q`` to the pose these coordinates
give. Kinematic bodies are not moved by the solvers, so the body stays where the input puts it.

Contacts are detected outside the step (``model.collide(state)``, or :func:`jaxart.rollout` before each step), at
the pose the previous step's input gave; MuJoCo collides at the new input. To collide at the new pose, detect
contacts on ``set_mocap(model, state, control)``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_normalize, transform_inverse, transform_mul

__all__ = ["set_mocap"]


def set_mocap(model, state, control):
    """``state`` with every mocap body at its ``control`` pose (unchanged when the mocap fields are ``None``).

    Args:
        model: A :class:`~jaxart.Model` with ``mocap_joint``.
        state: One world's :class:`~jaxart.State`.
        control: One world's :class:`~jaxart.Control` (``mocap_pos`` ``(nmocap, 3)``, ``mocap_quat`` ``(nmocap, 4)``
            xyzw, or ``None``).

    Returns:
        The :class:`~jaxart.State` the solver steps from.
    """
    if not model.mocap_joint or control is None or control.mocap_pos is None or control.mocap_quat is None:
        return state
    dtype = state.joint_q.dtype
    joints = np.asarray(model.mocap_joint, dtype=np.int64)
    topo = model.topology
    pose = jnp.concatenate([jnp.asarray(control.mocap_pos, dtype),
                            quat_normalize(jnp.asarray(control.mocap_quat, dtype))], axis=-1)
    joint_q = state.joint_q.at[model.mocap_coords].set(pose)
    dofs = (np.asarray(topo.joint_qd_start)[joints][:, None] + np.arange(6)).reshape(-1)
    joint_qd = state.joint_qd.at[dofs].set(0.0)
    parents = np.asarray(topo.joint_parent)[joints]
    children = np.asarray(topo.joint_child)[joints]
    identity = jnp.zeros(7, dtype).at[6].set(1.0)
    x_parent = jnp.where(jnp.asarray(parents >= 0)[:, None], state.body_q[np.maximum(parents, 0)], identity)
    anchor = transform_mul(transform_mul(x_parent, model.joint_X_p[joints]), pose)
    body_q = state.body_q.at[children].set(transform_mul(anchor, transform_inverse(model.joint_X_c[joints])))
    body_qd = state.body_qd.at[children].set(0.0)
    return state.replace(joint_q=joint_q, joint_qd=joint_qd, body_q=body_q, body_qd=body_qd)
