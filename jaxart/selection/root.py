"""Root pose/twist conversions of :class:`jaxart.selection.ArticulationView` (pure jnp).

``frame="joint"`` (Newton's behaviour) reads and writes the root joint's own data: the FREE/DISTANCE
coordinates ``joint_q[root:root+7]`` (child anchor in the parent-anchor frame) or, for other roots,
``Model.joint_X_p[root]``. ``frame="body"`` works with the world pose / COM twist of the root
link instead and converts with ``x_wc = X_p · X_j(q) · X_c⁻¹`` (roots must hang from the world).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math.quat import quat_rotate_inv
from jaxart.math.transform import transform_inverse, transform_mul
from jaxart.selection.ops import cast_values, gather, scatter
from jaxart.sim.model import Model

FRAMES = ("joint", "body")


def check_frame(frame: str, what: str) -> None:
    """ValueError unless ``frame`` is ``"joint"`` or ``"body"``."""
    if frame not in FRAMES:
        raise ValueError(f"ArticulationView.{what}: frame must be one of {FRAMES}, got {frame!r}")


def body_to_free_coords(pose_w: jnp.ndarray, x_p: jnp.ndarray, x_c: jnp.ndarray) -> jnp.ndarray:
    """FREE/DISTANCE coordinates ``X_p⁻¹ · T · X_c`` placing the child body origin at world pose ``T``.

    Args:
        pose_w: ``(..., 7)`` world pose of the child body origin.
        x_p: ``(..., 7)`` world → parent anchor (``joint_X_p`` of a world-parented joint).
        x_c: ``(..., 7)`` child body → child anchor (``joint_X_c``).

    Returns:
        ``(..., 7)`` joint coordinates ``(p, q_xyzw)`` of the child anchor in the parent-anchor frame.
    """
    return transform_mul(transform_inverse(x_p), transform_mul(pose_w, x_c))


def body_to_free_velocity(twist_w: jnp.ndarray, x_p: jnp.ndarray) -> jnp.ndarray:
    """FREE/DISTANCE ``joint_qd`` ``(R_p⁻¹ v_com, R_p⁻¹ ω)`` from a world COM twist ``(v_com, ω)``."""
    q = x_p[..., 3:]
    return jnp.concatenate([quat_rotate_inv(q, twist_w[..., :3]), quat_rotate_inv(q, twist_w[..., 3:])], axis=-1)


def moved_parent_anchor(pose_w: jnp.ndarray, *, x_p: jnp.ndarray, x_c: jnp.ndarray,
                        body_w: jnp.ndarray | None) -> jnp.ndarray:
    """New world ``joint_X_p`` of a non-floating root so that its child body origin lands at ``pose_w``.

    With the current root-body pose ``B`` (FK-consistent) this is the rigid displacement
    ``T · B⁻¹ · X_p``; for roots without coordinates (FIXED, ``X_j = I``) ``B = X_p · X_c⁻¹`` and the
    result is ``T · X_c``.

    Args:
        pose_w: ``(..., 7)`` target world pose of the root body origin.
        x_p: ``(..., 7)`` current ``joint_X_p``.
        x_c: ``(..., 7)`` ``joint_X_c``.
        body_w: ``(..., 7)`` current world pose of the root body, or ``None`` for FIXED roots.

    Returns:
        ``(..., 7)`` new ``joint_X_p``.
    """
    if body_w is None:
        return transform_mul(pose_w, x_c)
    return transform_mul(pose_w, transform_mul(transform_inverse(body_w), x_p))


class RootAccessMixin:
    """Root transform/twist getters and setters of :class:`~jaxart.selection.ArticulationView`.

    Expects ``self._layout`` (:class:`~jaxart.selection.layout.ViewLayout`), ``self.model``, ``self._read``,
    ``self.is_floating_base`` and ``self.root_joint_type``.
    """

    def get_root_transforms(self, source, *, frame: str = "joint", model: Model | None = None) -> jax.Array:
        """Root transforms ``(world_count, count, 7)``.

        Args:
            source: ``State`` or ``Model``.
            frame: ``"joint"`` (Newton): FREE/DISTANCE root coordinates from ``source.joint_q``, or for
                other roots ``joint_X_p`` of the root joint (read from ``source`` if it is a Model, else
                from ``model``, else from the view's model). ``"body"``: world pose of the root link
                (``source.body_q``; FK-consistent after ``eval_fk``).
            model: Model holding ``joint_X_p`` when ``source`` is a State (non-floating, ``"joint"``).
        """
        check_frame(frame, "get_root_transforms")
        lay = self._layout
        if frame == "body":
            return gather(self._read("body_q", source, "get_root_transforms"), lay.root_link, 1, "body_q")
        if self.is_floating_base:
            return gather(self._read("joint_q", source, "get_root_transforms"), lay.root_coord, 0, "joint_q")
        m = source if isinstance(source, Model) else (model if model is not None else self.model)
        return gather(m.joint_X_p, lay.root_joint, 1, "joint_X_p")

    def set_root_transforms(self, target, values, mask=None, *, frame: str = "joint", model: Model | None = None,
                            state=None) -> Any:
        """Move the selected articulations; returns a new ``target``. Call ``eval_fk`` afterwards.

        Floating bases (FREE/DISTANCE roots) write ``joint_q`` of ``target`` (a State or Model). Other
        bases have no root pose in the state: ``target`` must be the ``Model`` and its ``joint_X_p`` is
        written (``model = view.set_root_transforms(model, tf)``).

        Args:
            target: State or Model (floating base); Model (otherwise).
            values: ``(world_count, count, 7)`` transforms.
            mask: Optional Boolean ``(world_count,)`` / ``(world_count, count)`` selection.
            frame: ``"joint"`` (values are root joint data, Newton) or ``"body"`` (values are world
                poses of the root links, converted with ``joint_X_p``/``joint_X_c``; roots must hang
                from the world).
            model: Model whose ``joint_X_p``/``joint_X_c`` convert ``"body"`` poses of a floating base
                (default: ``target`` if it is a Model, else the view's model).
            state: FK-consistent State giving the current root-link poses, required with
                ``frame="body"`` for non-floating roots that have coordinates (e.g. a REVOLUTE root).

        Raises:
            ValueError: On a bad ``values``/``mask`` shape, a State target for a non-floating base, or
                ``frame="body"`` with a body-parented root.
        """
        check_frame(frame, "set_root_transforms")
        lay = self._layout
        what = "set_root_transforms"
        if frame == "body" and np.any(lay.root_parent >= 0):
            raise ValueError(f"ArticulationView.{what}: frame='body' needs world-parented root joints")
        if self.is_floating_base:
            leaf = self._read("joint_q", target, what)
            if frame == "body":
                m = target if isinstance(target, Model) else (model if model is not None else self.model)
                values = cast_values(leaf, lay.root_coord, 0, "joint_q", values, what)
                values = body_to_free_coords(values, m.joint_X_p[..., lay.root_joint, :],
                                             m.joint_X_c[..., lay.root_joint, :])
            return target.replace(joint_q=scatter(leaf, lay.root_coord, 0, "joint_q", values, mask, what=what))
        if not isinstance(target, Model):
            raise ValueError(f"ArticulationView.{what}: root joints are {self.root_joint_type.name} (not floating); "
                             "their pose lives in Model.joint_X_p, so pass the Model as target: "
                             "model = view.set_root_transforms(model, values)")
        leaf = target.joint_X_p
        if frame == "body":
            values = cast_values(leaf, lay.root_joint, 1, "joint_X_p", values, what)
            body_w = None
            if lay.root_coord_count > 0:
                if state is None:
                    raise ValueError(f"ArticulationView.{what}: frame='body' with {self.root_joint_type.name} roots "
                                     "needs state= (the current, FK-consistent root-link poses)")
                body_w = gather(state.body_q, lay.root_link, 1, "body_q")
            values = moved_parent_anchor(values, x_p=gather(leaf, lay.root_joint, 1, "joint_X_p"),
                                         x_c=target.joint_X_c[..., lay.root_joint, :], body_w=body_w)
        return target.replace(joint_X_p=scatter(leaf, lay.root_joint, 1, "joint_X_p", values, mask, what=what))

    def get_root_velocities(self, source, *, frame: str = "joint") -> jax.Array | None:
        """Root twists ``(world_count, count, 6)``; ``None`` for non-floating bases with ``frame="joint"``.

        ``"joint"``: FREE/DISTANCE ``joint_qd`` ``(v_com, ω)`` in the parent-anchor frame (Newton).
        ``"body"``: the root link's ``body_qd`` ``(v_com_world, ω_world)``.
        """
        check_frame(frame, "get_root_velocities")
        if frame == "body":
            return gather(self._read("body_qd", source, "get_root_velocities"), self._layout.root_link, 1, "body_qd")
        if not self.is_floating_base:
            return None
        return gather(self._read("joint_qd", source, "get_root_velocities"), self._layout.root_dof, 0, "joint_qd")

    def set_root_velocities(self, target, values, mask=None, *, frame: str = "joint",
                            model: Model | None = None) -> Any:
        """Return ``target`` with the root twists of floating bases replaced (no-op otherwise, like Newton).

        Args:
            target: State or Model.
            values: ``(world_count, count, 6)``.
            mask: Optional Boolean selection.
            frame: ``"joint"`` (parent-anchor-frame ``joint_qd``) or ``"body"`` (world COM twist ``(v, ω)``,
                rotated into the parent-anchor frame with ``joint_X_p`` of ``model``/``target``/the view's model).
            model: Model used for the ``"body"`` conversion.
        """
        check_frame(frame, "set_root_velocities")
        if not self.is_floating_base:
            return target
        lay, what = self._layout, "set_root_velocities"
        leaf = self._read("joint_qd", target, what)
        if frame == "body":
            if np.any(lay.root_parent >= 0):
                raise ValueError(f"ArticulationView.{what}: frame='body' needs world-parented root joints")
            m = target if isinstance(target, Model) else (model if model is not None else self.model)
            values = cast_values(leaf, lay.root_dof, 0, "joint_qd", values, what)
            values = body_to_free_velocity(values, m.joint_X_p[..., lay.root_joint, :])
        return target.replace(joint_qd=scatter(leaf, lay.root_dof, 0, "joint_qd", values, mask, what=what))
