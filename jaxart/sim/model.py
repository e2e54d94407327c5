"""The immutable ``Model`` pytree (``State`` and ``Control`` are in :mod:`jaxart.sim.state`).

Numeric fields are traced leaves (``jit``/``vmap``/``grad`` see them); integer structure lives in
the static :class:`~jaxart.sim.topology.Topology` (changing it recompiles). Conventions (Newton
1.8): transforms are ``(p, q_xyzw)``; spatial vectors are ``(linear, angular)``; body twists are
``(v_com_world, ω_world)``; per-DOF arrays list linear DOFs before angular ones.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxart.sim.actuators import ACTUATOR_STATIC_FIELDS, ActuatorTopology
from jaxart.sim.checks import check_state
from jaxart.sim.equality import EQUALITY_STATIC_FIELDS, EqualityTopology
from jaxart.sim.sensors import SENSOR_STATIC_FIELDS, SensorTopology
from jaxart.sim.state import Control, State
from jaxart.sim.tendons import TENDON_STATIC_FIELDS, TendonTopology
from jaxart.sim.topology import KinematicSchedule, Topology


@struct.dataclass
class Model:
    """Static description of one simulated world, as a pytree.

    Every floating field is a traced leaf: ``jax.grad`` with respect to a link mass or a joint
    offset works, and ``jax.vmap`` over a leading axis of any leaf randomises worlds. Integer
    structure (joint types, parents, starts, labels, flags) lives in ``topology`` and the derived
    FK/IK index schedule in ``schedule``; both are static (changing them recompiles).

    Attributes:
        gravity: ``(3,)`` gravitational acceleration in world axes [m/s²].
        body_q: ``(body_count, 7)`` initial world poses of body origins (used by ``state()``).
        body_qd: ``(body_count, 6)`` initial body twists ``(v_com, ω)`` in world axes.
        body_com: ``(body_count, 3)`` centre of mass in the body frame [m].
        body_mass: ``(body_count,)`` mass [kg]; 0 for static/massless bodies.
        body_inertia: ``(body_count, 3, 3)`` inertia tensor about the COM in body axes [kg·m²].
        body_gravcomp: ``(body_count,)`` gravity compensation [-] (MuJoCo's ``body_gravcomp``): an upward
            force ``gravcomp · m · (−gravity)`` at the COM, so gravity acts on the body with ``(1 − gravcomp) · m``
            (:func:`jaxart.sim.gravity.gravity_mass`); 0 (default) = full gravity, 1 = weightless, may exceed 1.
        joint_q: ``(joint_coord_count,)`` initial generalized coordinates.
        joint_qd: ``(joint_dof_count,)`` initial generalized velocities.
        joint_X_p: ``(joint_count, 7)`` parent body frame → joint parent anchor transform.
        joint_X_c: ``(joint_count, 7)`` child body frame → joint child anchor transform.
        joint_axis: ``(joint_dof_count, 3)`` unit DOF axes in the parent-anchor frame (identity
            axes for BALL/FREE/DISTANCE DOFs).
        joint_limit_lower: ``(joint_dof_count,)`` lower position limit [m or rad]; −1e10 = none.
        joint_limit_upper: ``(joint_dof_count,)`` upper position limit; 1e10 = none.
        joint_limit_ke: ``(joint_dof_count,)`` limit stiffness [N/m or N·m/rad].
        joint_limit_kd: ``(joint_dof_count,)`` limit damping [N·s/m or N·m·s/rad].
        joint_target_ke: ``(joint_dof_count,)`` drive stiffness [N/m or N·m/rad; 1/s² for DOFs whose
            ``joint_drive_type`` (static, :class:`~jaxart.JointDriveType` per DOF) is ``ACCELERATION``].
        joint_target_kd: ``(joint_dof_count,)`` drive damping [N·s/m or N·m·s/rad; 1/s for
            ``ACCELERATION`` drives].
        joint_target_q: ``(joint_coord_count,)`` default position targets (coordinate layout).
        joint_target_qd: ``(joint_dof_count,)`` default velocity targets.
        joint_stiffness: ``(joint_dof_count,)`` passive spring stiffness toward ``joint_rest_q``.
        joint_rest_q: ``(joint_dof_count,)`` passive spring rest position.
        joint_damping: ``(joint_dof_count,)`` passive viscous damping.
        joint_armature: ``(joint_dof_count,)`` armature added to the mass-matrix diagonal
            [kg or kg·m²].
        joint_friction: ``(joint_dof_count,)`` Coulomb friction force/torque [N or N·m].
        joint_effort_limit: ``(joint_dof_count,)`` actuator force/torque limit [N or N·m] (an impulse
            per step [N·s or N·m·s] under ``SolverFeatherstone(drive_limits_are_forces=False)``).
        joint_velocity_limit: ``(joint_dof_count,)`` velocity limit [m/s or rad/s].
        shape_transform: ``(shape_count, 7)`` shape pose in its body frame (world for static).
        shape_scale: ``(shape_count, 3)`` geometry parameters [m]: sphere (r,·,·), box half
            extents, capsule/cylinder/cone (r, half_height, ·) along local Z, ellipsoid radii,
            plane (half width, half length, ·) with normal +Z (0 = infinite), mesh scale.
        shape_material_ke, shape_material_kd, shape_material_kf, shape_material_ka,
        shape_material_mu, shape_material_restitution, shape_material_mu_torsional,
        shape_material_mu_rolling: ``(shape_count,)`` contact material (Newton's meaning).
        shape_margin, shape_gap: ``(shape_count,)`` contact margin / detection gap [m].
        contact_pair_ke, contact_pair_kd, contact_pair_kf, contact_pair_ka, contact_pair_mu,
        contact_pair_mu_torsional, contact_pair_mu_rolling: ``(k,)`` contact material of each explicit
            contact pair (``k`` rows of ``topology.shape_explicit_contact_pairs``, same order), used by
            every contact row of the pair instead of the shapes' mean: ke [N/m], kd [N·s/m], kf [N·s/m],
            ka [m], mu [-], mu_torsional [m], mu_rolling [m] (:mod:`jaxart.sim.contact_pairs`).
        contact_pair_margin: ``(k,)`` total contact margin of each explicit pair [m] (replaces
            ``shape_margin[a] + shape_margin[b]`` in the pair's ``separation``).
        contact_pair_gap: ``(k,)`` detection gap of each explicit pair [m] (replaces
            ``shape_gap[a] + shape_gap[b]``).
        equality_constraint_anchor: ``(neq, 3)`` anchor point [m]: on body1 (body1 frame) for
            CONNECT, on body2 (body2 frame) for WELD; zeros for JOINT.
        equality_constraint_torquescale: ``(neq,)`` WELD angular-residual scale [m]; 0 otherwise.
        equality_constraint_relpose: ``(neq, 7)`` WELD pose ``(p [m], q_xyzw)`` of body2 relative to
            body1: ``p`` is where the anchor is held in body1's frame; identity otherwise.
        equality_constraint_polycoef: ``(neq, 5)`` JOINT coefficients (``q1 = Σ c_k q2^k``, units of
            the joints) or TENDON coefficients (``L1 = Σ c_k L2^k``, lengths [m]); zeros otherwise.
        constraint_mimic_coef0: ``(nmimic,)`` mimic offset [m or rad] (``q0 = coef0 + coef1 q1``).
        constraint_mimic_coef1: ``(nmimic,)`` mimic scale.
        equality_constraint_enabled: ``(neq,)`` 1.0 = enforced, 0.0 = ignored (model dtype; a traced
            leaf: switching it under ``jit`` does not recompile, see
            :func:`~jaxart.sim.equality.set_constraints_enabled`; values other than 0/1 are not meaningful).
        constraint_mimic_enabled: ``(nmimic,)`` the same for mimic constraints.
        tendon_joint_coef: ``(ntenjoint,)`` FIXED-tendon coefficients [m/rad or 1] (``L = Σ c q``).
        tendon_attachment_point: ``(nattach, 3)`` SPATIAL attachment points [m] in their body's frame
            (world frame for body −1); the centre of a wrapping geometry, the side point, or zero for a pulley.
        tendon_attachment_axis: ``(nattach, 3)`` cylinder axis of a CYLINDER path entry in its body's frame
            (zeros for other entries).
        tendon_attachment_param: ``(nattach,)`` radius [m] of a SPHERE/CYLINDER entry, divisor of a PULLEY
            entry, 0 otherwise (:class:`~jaxart.sim.tendons.TendonPathKind`).
        tendon_stiffness: ``(nten,)`` spring stiffness [N/m of tendon length].
        tendon_damping: ``(nten,)`` damping [N·s/m].
        tendon_springlength: ``(nten, 2)`` spring dead band ``(low, high)`` [m] (equal: a rest length;
            the builder's ``-1`` is resolved to the initial length by ``finalize``).
        tendon_limit_lower, tendon_limit_upper: ``(nten,)`` length limits [m]; ∓1e10 = none.
        tendon_limit_ke, tendon_limit_kd: ``(nten,)`` limit penalty gains [N/m, N·s/m].
        tendon_target_ke, tendon_target_kd: ``(nten,)`` tendon drive (actuator) gains [N/m, N·s/m]: the drive
            force is ``Control.tendon_f + ke (L* − L) + kd (L̇* − L̇)``.
        tendon_target_length, tendon_target_velocity: ``(nten,)`` default drive targets [m, m/s] (read by
            ``control()``; the builder's ``target_length=None`` is resolved to the initial length).
        tendon_effort_limit: ``(nten,)`` bound [N] on the magnitude of the tendon actuator force (``inf``: none).
        tendon_frictionloss: ``(nten,)`` dry friction [N] on the tendon length rate (MuJoCo ``frictionloss``;
            ``SolverFeatherstone``: the smooth Coulomb law ``−μ tanh(L̇/ε)`` of joint friction).
        tendon_armature: ``(nten,)`` inertia [kg] of the tendon length (MuJoCo ``armature``): adds
            ``a Jᵀ J`` to the joint-space inertia (kinetic energy ``½ a L̇²``).
        tendon_margin: ``(nten,)`` limit margin [m] (MuJoCo ``margin``, ≥ 0): each length limit acts from
            ``margin`` inside the range, i.e. on ``[lower + margin, upper − margin]``.
        sensor_cutoff: ``(nsensor,)`` output bound of each sensor (MuJoCo's ``cutoff``; 0 = none), in the
            sensor's units (see :class:`~jaxart.sim.sensor_types.SensorDataType` for how it applies).
        sensor_obj_xform: ``(nsensor, 7)`` pose ``(p [m], q_xyzw)`` of the sensed frame in its object's frame
            (body or shape frame; identity for most sensors, MuJoCo's inertial frame for a ``body`` object).
        sensor_ref_xform: ``(nsensor, 7)`` the same for the reference frame.
        sensor_magnetic_field: ``(3,)`` world magnetic field read by magnetometers (MuJoCo's ``opt.magnetic``).
        actuator_timeconst: ``(nact,)`` activation filter time constant [s] of each stateful actuator
            (:mod:`jaxart.sim.actuators`; unused by INTEGRATOR actuators).
        actuator_gain: ``(nact,)`` output per unit activation (force [N or N·m] or target, per
            ``actuator_output``).
        actuator_ctrlrange: ``(nact, 2)`` input clamp ``(lower, upper)`` where ``actuator_ctrllimited``.
        actuator_actrange: ``(nact, 2)`` activation clamp ``(lower, upper)`` where ``actuator_actlimited``.
        actuator_act0: ``(nact,)`` initial activation (read by ``state()``).
        actuator_muscle: ``(nact, 13)`` muscle parameters of MUSCLE actuators (columns
            :data:`jaxart.laws.muscle.MUSCLE_COLUMNS`: time constants [s], ranges, peak force [N], curve shapes,
            actuator-length range); zeros for the others.
        shape_fluid: ``(shape_count, 15)`` ellipsoid fluid model of each shape (MuJoCo's ``geom_fluid`` and the
            ellipsoid's semi-axes [m]; columns :data:`jaxart.laws.fluid.SHAPE_FLUID_COLUMNS`); zeros (interaction
            coefficient 0) for shapes without it.
        shape_ray_extent: ``(shape_count, 2)`` half width / half length [m] of each PLANE as rays (rangefinders) see
            it, along its local X / Y; 0 = unbounded along that axis (MuJoCo's ``mj_ray`` rule). The builder's
            ``shape_scale[:2]`` unless ``ModelBuilder.shape_ray_extent`` sets it (MJCF planes: MuJoCo's ``size``,
            while their collision stays infinite); unused for other shapes.
        fluid_density: ``()`` density of the surrounding medium [kg/m³] (MuJoCo's ``opt.density``; 0 = none).
        fluid_viscosity: ``()`` dynamic viscosity of the medium [Pa·s] (MuJoCo's ``opt.viscosity``; 0 = none).
        fluid_wind: ``(3,)`` velocity of the medium in world axes [m/s] (MuJoCo's ``opt.wind``). The forces are
            :func:`jaxart.laws.fluid.fluid_body_wrenches`.
        topology: static structure (:class:`Topology`).
        schedule: static FK/IK index schedule (:class:`KinematicSchedule`).
        equality: static constraint structure (:class:`~jaxart.sim.equality.EqualityTopology`);
            its fields (``equality_constraint_type/body1/body2/joint1/joint2/dof1/dof2/tendon1/tendon2/label``,
            ``constraint_mimic_joint0/joint1/label`` and the counts) read as ``model.<name>``.
        tendon: static tendon structure (:class:`~jaxart.sim.tendons.TendonTopology`); its fields
            (``tendon_type/joint_start/joint/attachment_start/attachment_body/attachment_kind/label/count``) read as
            ``model.<name>``.
        sensor: static sensor table (:class:`~jaxart.sim.sensors.SensorTopology`); its fields
            (``sensor_type/objtype/objid/reftype/refid/dim/adr/datatype/label/count/data_count``) read as
            ``model.<name>``.
        actuator: static stateful-actuator table (:class:`~jaxart.sim.actuators.ActuatorTopology`); its fields
            (``actuator_dyntype/output/target/coord/actlimited/ctrllimited/actearly/label/count``) read as
            ``model.<name>``.
        meshes: static tuple of mesh vertex/index data referenced by MESH shapes.
        mocap_joint: static tuple of the kinematic FREE joints whose coordinates are set from
            ``Control.mocap_pos``/``mocap_quat`` before every step (MuJoCo's mocap bodies, in this order).
        fluid_enabled: static switch of the fluid forces (``True`` when the builder's density or viscosity is
            nonzero; the traced ``fluid_*`` values may then change without recompiling).
    """

    gravity: jax.Array
    body_q: jax.Array
    body_qd: jax.Array
    body_com: jax.Array
    body_mass: jax.Array
    body_inertia: jax.Array
    body_gravcomp: jax.Array
    joint_q: jax.Array
    joint_qd: jax.Array
    joint_X_p: jax.Array
    joint_X_c: jax.Array
    joint_axis: jax.Array
    joint_limit_lower: jax.Array
    joint_limit_upper: jax.Array
    joint_limit_ke: jax.Array
    joint_limit_kd: jax.Array
    joint_target_ke: jax.Array
    joint_target_kd: jax.Array
    joint_target_q: jax.Array
    joint_target_qd: jax.Array
    joint_stiffness: jax.Array
    joint_rest_q: jax.Array
    joint_damping: jax.Array
    joint_armature: jax.Array
    joint_friction: jax.Array
    joint_effort_limit: jax.Array
    joint_velocity_limit: jax.Array
    shape_transform: jax.Array
    shape_scale: jax.Array
    shape_material_ke: jax.Array
    shape_material_kd: jax.Array
    shape_material_kf: jax.Array
    shape_material_ka: jax.Array
    shape_material_mu: jax.Array
    shape_material_restitution: jax.Array
    shape_material_mu_torsional: jax.Array
    shape_material_mu_rolling: jax.Array
    shape_margin: jax.Array
    shape_gap: jax.Array
    contact_pair_ke: jax.Array
    contact_pair_kd: jax.Array
    contact_pair_kf: jax.Array
    contact_pair_ka: jax.Array
    contact_pair_mu: jax.Array
    contact_pair_mu_torsional: jax.Array
    contact_pair_mu_rolling: jax.Array
    contact_pair_margin: jax.Array
    contact_pair_gap: jax.Array
    equality_constraint_anchor: jax.Array
    equality_constraint_torquescale: jax.Array
    equality_constraint_relpose: jax.Array
    equality_constraint_polycoef: jax.Array
    constraint_mimic_coef0: jax.Array
    constraint_mimic_coef1: jax.Array
    equality_constraint_enabled: jax.Array
    constraint_mimic_enabled: jax.Array
    tendon_joint_coef: jax.Array
    tendon_attachment_point: jax.Array
    tendon_attachment_axis: jax.Array
    tendon_attachment_param: jax.Array
    tendon_stiffness: jax.Array
    tendon_damping: jax.Array
    tendon_springlength: jax.Array
    tendon_limit_lower: jax.Array
    tendon_limit_upper: jax.Array
    tendon_limit_ke: jax.Array
    tendon_limit_kd: jax.Array
    tendon_target_ke: jax.Array
    tendon_target_kd: jax.Array
    tendon_target_length: jax.Array
    tendon_target_velocity: jax.Array
    tendon_effort_limit: jax.Array
    tendon_frictionloss: jax.Array
    tendon_armature: jax.Array
    tendon_margin: jax.Array
    sensor_cutoff: jax.Array
    sensor_obj_xform: jax.Array
    sensor_ref_xform: jax.Array
    sensor_magnetic_field: jax.Array
    actuator_timeconst: jax.Array
    actuator_gain: jax.Array
    actuator_ctrlrange: jax.Array
    actuator_actrange: jax.Array
    actuator_act0: jax.Array
    actuator_muscle: jax.Array
    shape_fluid: jax.Array
    shape_ray_extent: jax.Array
    fluid_density: jax.Array
    fluid_viscosity: jax.Array
    fluid_wind: jax.Array
    topology: Topology = struct.field(pytree_node=False)
    schedule: KinematicSchedule = struct.field(pytree_node=False)
    equality: EqualityTopology = struct.field(pytree_node=False)
    tendon: TendonTopology = struct.field(pytree_node=False)
    sensor: SensorTopology = struct.field(pytree_node=False)
    actuator: ActuatorTopology = struct.field(pytree_node=False)
    meshes: tuple = struct.field(pytree_node=False, default=())
    mocap_joint: tuple = struct.field(pytree_node=False, default=())
    fluid_enabled: bool = struct.field(pytree_node=False, default=False)

    # ----- counts and static structure (numpy views of the topology) -----
    @property
    def body_count(self) -> int:
        """Number of bodies."""
        return self.topology.body_count

    @property
    def joint_count(self) -> int:
        """Number of joints."""
        return self.topology.joint_count

    @property
    def joint_coord_count(self) -> int:
        """Length of ``joint_q``."""
        return self.topology.joint_coord_count

    @property
    def joint_dof_count(self) -> int:
        """Length of ``joint_qd``."""
        return self.topology.joint_dof_count

    @property
    def shape_count(self) -> int:
        """Number of shapes."""
        return self.topology.shape_count

    @property
    def articulation_count(self) -> int:
        """Number of articulations."""
        return self.topology.articulation_count

    @property
    def up_axis(self) -> int:
        """Index of the up axis (0=X, 1=Y, 2=Z)."""
        return self.topology.up_axis

    def __getattr__(self, name: str) -> Any:
        # Static per-element arrays are exposed with Newton's names as read-only numpy arrays.
        if name.startswith("_") or name in ("topology", "schedule", "meshes", "equality", "tendon", "sensor",
                                            "actuator", "mocap_joint", "fluid_enabled"):
            raise AttributeError(name)
        if name in EQUALITY_STATIC_FIELDS:
            return self.equality.get(name)
        if name in TENDON_STATIC_FIELDS:
            return self.tendon.get(name)
        if name in SENSOR_STATIC_FIELDS:
            return self.sensor.get(name)
        if name in ACTUATOR_STATIC_FIELDS:
            return self.actuator.get(name)
        if name in _TOPOLOGY_ARRAYS:
            return np.asarray(getattr(self.topology, name))
        if name in ("body_label", "joint_label", "shape_label", "articulation_label"):
            return list(getattr(self.topology, name))
        raise AttributeError(f"'Model' object has no attribute '{name}'")

    @property
    def body_inv_mass(self) -> jax.Array:
        """``(body_count,)`` inverse mass [1/kg]; 0 for zero-mass bodies (derived, traced)."""
        m = self.body_mass
        return jnp.where(m > 0.0, 1.0 / jnp.where(m > 0.0, m, 1.0), 0.0)

    @property
    def body_inv_inertia(self) -> jax.Array:
        """``(body_count, 3, 3)`` inverse inertia about the COM in body axes (derived, traced)."""
        inertia = self.body_inertia
        ok = jnp.abs(jnp.linalg.det(inertia)) > 0.0
        eye = jnp.broadcast_to(jnp.eye(3, dtype=inertia.dtype), inertia.shape)
        inv = jnp.linalg.inv(jnp.where(ok[..., None, None], inertia, eye))
        return jnp.where(ok[..., None, None], inv, 0.0)

    def state(self) -> State:
        """A fresh :class:`State` initialised from the model's default poses and coordinates."""
        return State(
            body_q=self.body_q,
            body_qd=self.body_qd,
            body_f=jnp.zeros_like(self.body_qd),
            joint_q=self.joint_q,
            joint_qd=self.joint_qd,
            actuator_act=self.actuator_act0 if self.actuator.actuator_count else None,
        )

    def collide(self, state: State, **kwargs):
        """Detect contacts for the current body poses (see :func:`jaxart.collision.collide`)."""
        from jaxart.collision import collide

        check_state(self, state, "Model.collide: state")
        return collide(self, state, **kwargs)

    def control(self) -> Control:
        """A fresh :class:`Control` with zero forces and the model's default targets."""
        return Control(
            joint_f=jnp.zeros_like(self.joint_qd),
            joint_target_q=self.joint_target_q,
            joint_target_qd=self.joint_target_qd,
            joint_act=jnp.zeros_like(self.joint_qd),
            **({} if not self.tendon.tendon_count else dict(
                tendon_f=jnp.zeros_like(self.tendon_stiffness), tendon_target_length=self.tendon_target_length,
                tendon_target_velocity=self.tendon_target_velocity)),
            **({} if not self.actuator.actuator_count else dict(actuator_ctrl=jnp.zeros_like(self.actuator_act0))),
            **({} if not self.mocap_joint else dict(mocap_pos=self.joint_q[self.mocap_coords[:, :3]],
                                                    mocap_quat=self.joint_q[self.mocap_coords[:, 3:]])),
        )

    @property
    def mocap_coords(self) -> np.ndarray:
        """``(mocap_count, 7)`` coordinate indices of each mocap joint's ``(p, q_xyzw)`` in ``joint_q``."""
        starts = np.asarray(self.topology.joint_q_start)[np.asarray(self.mocap_joint, dtype=np.int64)]
        return (starts[:, None] + np.arange(7)).reshape(-1, 7)


_TOPOLOGY_ARRAYS = (
    "joint_type",
    "joint_parent",
    "joint_child",
    "joint_q_start",
    "joint_qd_start",
    "joint_dof_dim",
    "joint_articulation",
    "joint_target_mode",
    "joint_drive_type",
    "joint_enabled",
    "articulation_start",
    "articulation_end",
    "body_flags",
    "shape_type",
    "shape_body",
    "shape_flags",
    "shape_collision_group",
)
