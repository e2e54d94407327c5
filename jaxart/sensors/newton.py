"""Newton 1.8's sensor objects made functional: :class:`SensorIMU`, :class:`SensorContact`,
:class:`SensorFrameTransform`.

Newton's sensors hold device buffers and an ``update(state, …)`` method; here each object is a small static
description (hashable, usable as a ``jit`` static argument) whose ``eval`` method returns the readings as a pytree.
Semantics follow Newton: the IMU reports the site's linear acceleration minus gravity and its angular velocity in the
site frame (MuJoCo's accelerometer and gyro), the contact sensor the net contact force on each sensing body in world
axes, the frame-transform sensor each shape's pose relative to a reference site.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_rotate_inv, transform_inverse, transform_mul
from jaxart.sensors.body_acceleration import body_accelerations
from jaxart.sensors.frames import FrameRefs, frame_poses, point_accelerations, point_velocities
from jaxart.sim import checks


def _indices(values, limit: int, what: str) -> tuple[int, ...]:
    out = tuple(int(v) for v in np.asarray(values, dtype=np.int64).reshape(-1))
    if not out or any(not 0 <= v < limit for v in out):
        raise ValueError(f"{what} must be a non-empty list of indices in [0, {limit}), got {list(out)}")
    return out


def _shape_frames(model, state, shapes: tuple[int, ...]) -> tuple[FrameRefs, jax.Array]:
    idx = np.asarray(shapes, np.int64)
    refs = FrameRefs(np.asarray(model.topology.shape_body.array)[idx], idx)
    ident = jnp.broadcast_to(jnp.asarray([0.0] * 6 + [1.0], state.body_q.dtype), (len(shapes), 7))
    return refs, frame_poses(model, state, refs, ident)


class IMUReading(NamedTuple):
    """Readings of a :class:`SensorIMU`.

    Attributes:
        accelerometer: ``(n, 3)`` site acceleration minus gravity in the site frame [m/s²].
        gyroscope: ``(n, 3)`` site angular velocity in the site frame [rad/s].
    """

    accelerometer: jax.Array
    gyroscope: jax.Array


class SensorIMU:
    """Inertial measurement units on sites (Newton's ``SensorIMU``).

    Args:
        model: The model (checks the site indices).
        sites: Shape indices of the IMU sites.
    """

    def __init__(self, model, sites) -> None:
        self.sites = _indices(sites, model.shape_count, "SensorIMU: sites")

    def eval(self, model, state, joint_qdd) -> IMUReading:
        """Readings at ``state`` with joint accelerations ``joint_qdd`` (``(joint_dof_count,)``; see
        :class:`~jaxart.sensors.SensorInputs` for where they come from)."""
        checks.check_state(model, state, "SensorIMU.eval: state")
        checks.check_array(joint_qdd, (model.joint_dof_count,), "SensorIMU.eval: joint_qdd")
        refs, x = _shape_frames(model, state, self.sites)
        acc = body_accelerations(model, state, joint_qdd)
        a, _ = point_accelerations(model, state, acc, refs.body, x[:, :3])
        _, w = point_velocities(model, state, refs.body, x[:, :3])
        return IMUReading(quat_rotate_inv(x[:, 3:], a - model.gravity.astype(a.dtype)), quat_rotate_inv(x[:, 3:], w))

    def __hash__(self) -> int:
        return hash(("SensorIMU", self.sites))

    def __eq__(self, other) -> bool:
        return isinstance(other, SensorIMU) and other.sites == self.sites


class SensorFrameTransform:
    """Poses of shapes relative to reference sites (Newton's ``SensorFrameTransform``).

    Args:
        model: The model.
        shapes: Shape indices whose frames are measured.
        reference_sites: One reference shape per measured shape, or a single one for all.
    """

    def __init__(self, model, shapes, reference_sites) -> None:
        self.shapes = _indices(shapes, model.shape_count, "SensorFrameTransform: shapes")
        refs = _indices(reference_sites, model.shape_count, "SensorFrameTransform: reference_sites")
        if len(refs) == 1:
            refs = refs * len(self.shapes)
        if len(refs) != len(self.shapes):
            raise ValueError(f"SensorFrameTransform: reference_sites must hold 1 or {len(self.shapes)} indices, "
                             f"got {len(refs)}")
        self.reference_sites = refs

    def eval(self, model, state) -> jax.Array:
        """``(n, 7)`` poses ``(p [m], q_xyzw)`` of each shape frame in its reference site's frame."""
        checks.check_state(model, state, "SensorFrameTransform.eval: state")
        _, x = _shape_frames(model, state, self.shapes)
        _, ref = _shape_frames(model, state, self.reference_sites)
        return transform_mul(transform_inverse(ref), x)

    def __hash__(self) -> int:
        return hash(("SensorFrameTransform", self.shapes, self.reference_sites))

    def __eq__(self, other) -> bool:
        return isinstance(other, SensorFrameTransform) and (other.shapes, other.reference_sites) == (
            self.shapes, self.reference_sites)


class SensorContact:
    """Net contact force on bodies (Newton's ``SensorContact`` with body sensing objects).

    Args:
        model: The model.
        sensing_obj_bodies: Body indices whose contact forces are summed.
    """

    def __init__(self, model, sensing_obj_bodies) -> None:
        self.bodies = _indices(sensing_obj_bodies, model.body_count, "SensorContact: sensing_obj_bodies")

    def eval(self, contacts, contact_force) -> jax.Array:
        """``(n, 3)`` net world contact force [N] on each sensing body.

        Args:
            contacts: The step's :class:`~jaxart.collision.Contacts`.
            contact_force: ``(capacity, 3)`` world force of every contact row on shape B's body (A receives its
                opposite); see :class:`~jaxart.sensors.SensorInputs`.
        """
        checks.check_contacts(contacts, "SensorContact.eval: contacts")
        checks.check_array(contact_force, (contacts.capacity, 3), "SensorContact.eval: contact_force")
        bodies = jnp.asarray(self.bodies)[:, None]
        sign = ((jnp.asarray(contacts.body_b)[None] == bodies).astype(contact_force.dtype)
                - (jnp.asarray(contacts.body_a)[None] == bodies).astype(contact_force.dtype))
        sign = jnp.where(contacts.active[None], sign, 0.0)
        return sign @ contact_force

    def __hash__(self) -> int:
        return hash(("SensorContact", self.bodies))

    def __eq__(self, other) -> bool:
        return isinstance(other, SensorContact) and other.bodies == self.bodies
