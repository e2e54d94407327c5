"""``finalize``: validate a builder and turn it into the immutable ``Model`` pytree."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.sim.actuators import actuator_fields
from jaxart.sim.builder_shapes import SHAPE_FLAG_COLLIDE_SHAPES, SHAPE_FLAG_SITE, SHAPE_FLAG_VISIBLE
from jaxart.sim.contact_pairs import contact_pair_fields
from jaxart.sim.enums import BodyFlags, GeoType, JointType
from jaxart.sim.equality import equality_fields
from jaxart.sim.model import Model
from jaxart.sim.sensors import sensor_fields
from jaxart.sim.static import StaticArray
from jaxart.sim.tendons import tendon_fields
from jaxart.sim.topology import Topology, build_kinematic_schedule
from jaxart.sim.validate import as_float, as_vec3


def orphan_joints(builder) -> list[int]:
    """Joints outside every articulation whose child has no articulated path (Newton's orphans)."""
    tree_children = {builder.joint_child[j] for j in range(builder.joint_count) if builder.joint_articulation[j] >= 0}
    return [j for j in range(builder.joint_count)
            if builder.joint_articulation[j] < 0 and builder.joint_child[j] not in tree_children]


def finalize(builder, *, skip_validation_joints: bool = False, dtype=None) -> Model:
    """Validate ``builder`` and build the :class:`Model`.

    Args:
        builder: A :class:`~jaxart.ModelBuilder`.
        skip_validation_joints: Accept orphan joints.
        dtype: Floating dtype (default ``float32``).

    Returns:
        The model.
    """
    dtype = jnp.float32 if dtype is None else jnp.dtype(dtype)
    if not skip_validation_joints:
        orphans = orphan_joints(builder)
        if orphans:
            names = ", ".join(repr(builder.joint_label[j]) for j in orphans)
            raise ValueError(
                f"finalize: orphan joints {names} belong to no articulation and their child bodies are not "
                "reachable through articulated joints; add them with add_articulation([...]) or pass "
                "finalize(skip_validation_joints=True) (only maximal-coordinate solvers simulate them)"
            )
    topo = _topology(builder)
    schedule = build_kinematic_schedule(topo)

    def arr(x, shape):
        a = np.asarray(x, dtype=np.float64)
        return jnp.asarray(a.reshape(shape) if a.size else np.zeros(shape), dtype=dtype)

    nb, nj, nd, ns = builder.body_count, builder.joint_count, builder.joint_dof_count, builder.shape_count
    dof = builder.joint_dof
    cfg = builder.shape_cfg
    gravity = np.zeros(3)
    gravity[int(builder.up_axis)] = builder.gravity
    model = Model(
        gravity=arr(gravity, (3,)),
        body_q=arr(builder.body_q, (nb, 7)),
        body_qd=arr(builder.body_qd, (nb, 6)),
        body_com=arr(builder.body_com, (nb, 3)),
        body_mass=arr(builder.body_mass, (nb,)),
        body_inertia=arr(builder.body_inertia, (nb, 3, 3)),
        body_gravcomp=arr(builder.body_gravcomp, (nb,)),
        joint_q=arr(builder.joint_q, (builder.joint_coord_count,)),
        joint_qd=arr(builder.joint_qd, (nd,)),
        joint_X_p=arr(builder.joint_X_p, (nj, 7)),
        joint_X_c=arr(builder.joint_X_c, (nj, 7)),
        joint_axis=arr(builder.joint_axis, (nd, 3)),
        joint_limit_lower=arr(dof["limit_lower"], (nd,)),
        joint_limit_upper=arr(dof["limit_upper"], (nd,)),
        joint_limit_ke=arr(dof["limit_ke"], (nd,)),
        joint_limit_kd=arr(dof["limit_kd"], (nd,)),
        joint_target_ke=arr(dof["target_ke"], (nd,)),
        joint_target_kd=arr(dof["target_kd"], (nd,)),
        joint_target_q=arr(builder.joint_target_q, (builder.joint_coord_count,)),
        joint_target_qd=arr(dof["target_qd"], (nd,)),
        joint_stiffness=arr(dof["stiffness"], (nd,)),
        joint_rest_q=arr(dof["rest_q"], (nd,)),
        joint_damping=arr(dof["damping"], (nd,)),
        joint_armature=arr(dof["armature"], (nd,)),
        joint_friction=arr(dof["friction"], (nd,)),
        joint_effort_limit=arr(dof["effort_limit"], (nd,)),
        joint_velocity_limit=arr(dof["velocity_limit"], (nd,)),
        shape_transform=arr(builder.shape_transform, (ns, 7)),
        shape_scale=arr(builder.shape_scale, (ns, 3)),
        shape_material_ke=arr([c.ke for c in cfg], (ns,)),
        shape_material_kd=arr([c.kd for c in cfg], (ns,)),
        shape_material_kf=arr([c.kf for c in cfg], (ns,)),
        shape_material_ka=arr([c.ka for c in cfg], (ns,)),
        shape_material_mu=arr([c.mu for c in cfg], (ns,)),
        shape_material_restitution=arr([c.restitution for c in cfg], (ns,)),
        shape_material_mu_torsional=arr([c.mu_torsional for c in cfg], (ns,)),
        shape_material_mu_rolling=arr([c.mu_rolling for c in cfg], (ns,)),
        shape_margin=arr([c.margin for c in cfg], (ns,)),
        shape_gap=arr([builder.rigid_gap if c.gap is None else c.gap for c in cfg], (ns,)),
        **contact_pair_fields(builder, arr),
        **equality_fields(builder, arr),
        **tendon_fields(builder, arr),
        **sensor_fields(builder, arr),
        **actuator_fields(builder, arr),
        **_fluid_fields(builder, arr),
        shape_ray_extent=arr(_ray_extent(builder), (builder.shape_count, 2)),
        topology=topo,
        schedule=schedule,
        meshes=tuple(builder.shape_source),
        mocap_joint=_mocap_joints(builder),
        fluid_enabled=bool(builder.fluid_density or builder.fluid_viscosity),
    )
    if model.tendon.tendon_count:
        from jaxart.dynamics.tendons import resolve_springlength

        model = resolve_springlength(model)
    return model


def _fluid_fields(b, arr) -> dict:
    """``Model.fluid_*`` from the builder's medium (validated: density and viscosity ≥ 0, finite wind)."""
    density = as_float(b.fluid_density, "finalize: builder.fluid_density", nonneg=True)
    viscosity = as_float(b.fluid_viscosity, "finalize: builder.fluid_viscosity", nonneg=True)
    wind = as_vec3(b.fluid_wind, "finalize: builder.fluid_wind")
    fluid = np.zeros((b.shape_count, 15))
    for shape, row in b.shape_fluid.items():
        fluid[shape] = row
    return dict(shape_fluid=arr(fluid, (b.shape_count, 15)), fluid_density=arr(density, ()),
                fluid_viscosity=arr(viscosity, ()), fluid_wind=arr(wind, (3,)))


def _ray_extent(b) -> np.ndarray:
    """``Model.shape_ray_extent``: the planes' ``scale[:2]``, or the builder's ``shape_ray_extent`` (validated)."""
    out = np.asarray(b.shape_scale, np.float64).reshape(-1, 3)[:, :2].copy()
    for shape, ext in b.shape_ray_extent.items():
        if not 0 <= int(shape) < b.shape_count or GeoType(int(b.shape_type[shape])) != GeoType.PLANE:
            raise ValueError(f"finalize: builder.shape_ray_extent has shape {shape!r}, which is not a PLANE shape")
        e = np.asarray(ext, np.float64)
        if e.shape != (2,) or not np.all(np.isfinite(e)) or np.any(e < 0.0):
            raise ValueError(f"finalize: builder.shape_ray_extent[{shape}] must be 2 finite half extents >= 0 [m], "
                             f"got {ext!r}")
        out[shape] = e
    return out


def _mocap_joints(b) -> tuple[int, ...]:
    """``Model.mocap_joint``: each must be a kinematic FREE joint (its child's pose is set from ``Control``)."""
    for j in b.mocap_joint:
        if not 0 <= j < b.joint_count or JointType(b.joint_type[j]) != JointType.FREE:
            raise ValueError(f"finalize: builder.mocap_joint entry {j} is not a FREE joint")
        if not b.body_flags[b.joint_child[j]] & int(BodyFlags.KINEMATIC):
            raise ValueError(f"finalize: mocap joint {b.joint_label[j]!r} must move a kinematic body "
                             "(add_link(is_kinematic=True))")
    return tuple(int(j) for j in b.mocap_joint)


def _topology(b) -> Topology:
    def ints(x, shape=None):
        a = np.asarray(x, dtype=np.int32)
        return StaticArray(a.reshape(shape) if shape is not None else a)

    flags = []
    for c in b.shape_cfg:
        f = (SHAPE_FLAG_VISIBLE if c.is_visible else 0) | (SHAPE_FLAG_SITE if c.is_site else 0)
        if c.has_shape_collision and not c.is_site:
            f |= SHAPE_FLAG_COLLIDE_SHAPES
        flags.append(f)
    return Topology(
        body_count=b.body_count,
        joint_count=b.joint_count,
        joint_coord_count=b.joint_coord_count,
        joint_dof_count=b.joint_dof_count,
        shape_count=b.shape_count,
        articulation_count=b.articulation_count,
        joint_type=ints(b.joint_type),
        joint_parent=ints(b.joint_parent),
        joint_child=ints(b.joint_child),
        joint_q_start=ints([*b.joint_q_start, b.joint_coord_count]),
        joint_qd_start=ints([*b.joint_qd_start, b.joint_dof_count]),
        joint_dof_dim=ints(b.joint_dof_dim, (b.joint_count, 2)),
        joint_articulation=ints(b.joint_articulation),
        joint_target_mode=ints(b.joint_target_mode),
        joint_drive_type=ints(b.joint_drive_type, (b.joint_dof_count,)),
        joint_enabled=StaticArray(np.asarray(b.joint_enabled, dtype=bool)),
        articulation_start=ints(b.articulation_start),
        articulation_end=ints(b.articulation_end),
        body_flags=ints(b.body_flags),
        shape_type=ints(b.shape_type),
        shape_body=ints(b.shape_body),
        shape_flags=ints(flags),
        shape_collision_group=ints([c.collision_group for c in b.shape_cfg]),
        shape_collision_filter_pairs=ints(b.shape_collision_filter_pairs, (len(b.shape_collision_filter_pairs), 2)),
        shape_explicit_contact_pairs=ints(b.shape_explicit_contact_pairs, (len(b.shape_explicit_contact_pairs), 2)),
        up_axis=int(b.up_axis),
        body_label=tuple(b.body_label),
        joint_label=tuple(b.joint_label),
        shape_label=tuple(b.shape_label),
        articulation_label=tuple(b.articulation_label),
        joint_collision_filter_parent=StaticArray(
            np.asarray(b.joint_collision_filter_parent, dtype=bool).reshape(b.joint_count)),
    )
