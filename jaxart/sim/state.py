"""Immutable ``State`` and ``Control`` pytrees (Newton 1.8 conventions, see :mod:`jaxart.sim.model`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

__all__ = ["Control", "State"]


@struct.dataclass
class State:
    """Time-varying simulation state of one world (add a leading axis and ``vmap`` for batches).

    Attributes:
        body_q: ``(body_count, 7)`` world pose ``(p [m], q_xyzw)`` of each body's origin.
        body_qd: ``(body_count, 6)`` world twist ``(v [m/s], ω [rad/s])``; ``v`` is the world
            velocity of the body's centre of mass, ``ω`` the world angular velocity.
        body_f: ``(body_count, 6)`` external wrench ``(f [N], τ [N·m])`` in world axes, ``τ`` about
            the body's centre of mass. Consumed by solvers; not cleared automatically.
        joint_q: ``(joint_coord_count,)`` generalized coordinates [m or rad; quaternions xyzw for
            BALL/FREE/DISTANCE, FREE/DISTANCE position of the child anchor in the parent-anchor
            frame].
        joint_qd: ``(joint_dof_count,)`` generalized velocities [m/s or rad/s]; FREE/DISTANCE hold
            ``(v_child_com, ω)`` expressed in the parent-anchor frame.
        actuator_act: ``(actuator_count,)`` activation of each stateful actuator (:mod:`jaxart.sim.actuators`;
            units of ``Control.actuator_ctrl`` for filters, of its time integral [input·s] for integrators);
            advanced by every solver's ``step`` (:mod:`jaxart.laws.activation`). ``None`` for models without
            stateful actuators.
    """

    body_q: jax.Array
    body_qd: jax.Array
    body_f: jax.Array
    joint_q: jax.Array
    joint_qd: jax.Array
    actuator_act: jax.Array | None = None

    @property
    def body_count(self) -> int:
        """Number of bodies (last-but-one axis of ``body_q``)."""
        return self.body_q.shape[-2]

    def clear_forces(self) -> State:
        """Return a copy with ``body_f`` zeroed (Newton's ``State.clear_forces``, functional)."""
        return self.replace(body_f=jnp.zeros_like(self.body_f))


@struct.dataclass
class Control:
    """Actuation inputs of one world.

    Attributes:
        joint_f: ``(joint_dof_count,)`` generalized forces [N or N·m]; for FREE/DISTANCE joints a
            world-frame wrench ``(f, τ)`` applied at the child COM (like ``body_f``).
        joint_target_q: ``(joint_coord_count,)`` position targets in coordinate layout
            (quaternions for BALL/FREE), indexed by ``joint_q_start``.
        joint_target_qd: ``(joint_dof_count,)`` velocity targets [m/s or rad/s].
        joint_act: ``(joint_dof_count,)`` feed-forward actuation added to the drive [N or N·m].
        tendon_f: ``(tendon_count,)`` feed-forward tendon actuator force [N; N·m for a fixed tendon whose
            coefficients are 1 on revolute joints], positive lengthens the tendon; it acts on the joints
            as ``Jₜᵀ f`` (MuJoCo's ``<motor tendon=…>`` with gear 1).
        tendon_target_length: ``(tendon_count,)`` target length [m] of the tendon drive
            (``Model.tendon_target_ke``).
        tendon_target_velocity: ``(tendon_count,)`` target length rate [m/s] of the tendon drive
            (``Model.tendon_target_kd``).

        actuator_ctrl: ``(actuator_count,)`` input ``u`` of each stateful actuator (MuJoCo's ``ctrl`` of an
            actuator with activation dynamics; :mod:`jaxart.sim.actuators`), clamped to ``actuator_ctrlrange``
            where limited.
        mocap_pos: ``(mocap_count, 3)`` position [m] of each mocap body's frame in its parent anchor's frame (the
            MJCF world frame for imported models; MuJoCo's ``mocap_pos``), set before every step.
        mocap_quat: ``(mocap_count, 4)`` orientation ``xyzw`` of each mocap body's frame in the same frame
            (MuJoCo's ``mocap_quat``, which is ``wxyz``; normalised before use).

        The three tendon fields are ``None`` for models without tendons (``control()``), so per-step controls
        built field by field need not carry them; ``None`` on a model with tendons reads as zero force and the
        model's default targets. Likewise ``actuator_ctrl`` (``None``: zero input) and the mocap fields
        (``None``: the mocap bodies keep their current pose).
    """

    joint_f: jax.Array
    joint_target_q: jax.Array
    joint_target_qd: jax.Array
    joint_act: jax.Array
    tendon_f: jax.Array | None = None
    tendon_target_length: jax.Array | None = None
    tendon_target_velocity: jax.Array | None = None
    actuator_ctrl: jax.Array | None = None
    mocap_pos: jax.Array | None = None
    mocap_quat: jax.Array | None = None

    def clear(self) -> Control:
        """Return a copy with ``joint_f``, ``joint_act`` and ``tendon_f`` zeroed."""
        tendon_f = None if self.tendon_f is None else jnp.zeros_like(self.tendon_f)
        return self.replace(joint_f=jnp.zeros_like(self.joint_f), joint_act=jnp.zeros_like(self.joint_act),
                            tendon_f=tendon_f)
