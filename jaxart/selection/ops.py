"""Gather/scatter kernels of :class:`jaxart.selection.ArticulationView` (static indices, pure jnp).

A source leaf has shape ``(*batch, N, *elem)``: ``N`` elements of one frequency (joints, coordinates,
DOFs, bodies or shapes), ``elem`` the per-element shape (``(7,)`` for a transform, ``()`` for a
scalar) and any number of leading batch axes. The batch axes are flattened into one
``world_count = prod(batch)`` axis (1 when there is none), so every getter returns
``(world_count, articulation_count, k, *elem)`` like Newton.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

JOINT, COORD, DOF, BODY, SHAPE = "joint", "coord", "dof", "body", "shape"

_DOF_SCALARS = (
    "joint_qd", "joint_limit_lower", "joint_limit_upper", "joint_limit_ke", "joint_limit_kd", "joint_target_ke",
    "joint_target_kd", "joint_target_qd", "joint_stiffness", "joint_rest_q", "joint_damping", "joint_armature",
    "joint_friction", "joint_effort_limit", "joint_velocity_limit", "joint_f", "joint_act",
)
_SHAPE_SCALARS = (
    "shape_material_ke", "shape_material_kd", "shape_material_kf", "shape_material_ka", "shape_material_mu",
    "shape_material_restitution", "shape_material_mu_torsional", "shape_material_mu_rolling", "shape_margin",
    "shape_gap",
)

#: Traced attributes reachable through ``get_attribute``/``set_attribute``: name → (frequency, element ndim).
ATTRIBUTES: dict[str, tuple[str, int]] = {
    "joint_X_p": (JOINT, 1), "joint_X_c": (JOINT, 1),
    "joint_q": (COORD, 0), "joint_target_q": (COORD, 0),
    "joint_axis": (DOF, 1), **{n: (DOF, 0) for n in _DOF_SCALARS},
    "body_q": (BODY, 1), "body_qd": (BODY, 1), "body_f": (BODY, 1), "body_com": (BODY, 1),
    "body_mass": (BODY, 0), "body_inertia": (BODY, 2), "body_gravcomp": (BODY, 0),
    "body_inv_mass": (BODY, 0), "body_inv_inertia": (BODY, 2),
    "shape_transform": (SHAPE, 1), "shape_scale": (SHAPE, 1), **{n: (SHAPE, 0) for n in _SHAPE_SCALARS},
}
#: Derived (read-only) traced attributes.
DERIVED = ("body_inv_mass", "body_inv_inertia")
#: Static integer structure (read-only, returned as numpy-derived arrays from ``model.topology``).
STATIC: dict[str, str] = {
    "joint_type": JOINT, "joint_enabled": JOINT, "joint_target_mode": DOF, "body_flags": BODY,
    "shape_type": SHAPE, "shape_flags": SHAPE, "shape_collision_group": SHAPE,
}


def attribute_info(name: str) -> tuple[str, int]:
    """Frequency and element ndim of attribute ``name``; ValueError listing the supported names."""
    if name in ATTRIBUTES:
        return ATTRIBUTES[name]
    if name in STATIC:
        return STATIC[name], 0
    raise ValueError(f"ArticulationView: unknown attribute {name!r}; supported: "
                     f"{sorted(ATTRIBUTES) + sorted(STATIC)}")


def read_leaf(name: str, source):
    """``getattr(source, name)`` with a clear error when the container has no such field."""
    try:
        return getattr(source, name)
    except AttributeError:
        raise ValueError(f"ArticulationView: {type(source).__name__} has no attribute {name!r}") from None


def batch_shape(arr, elem_ndim: int, name: str) -> tuple[int, ...]:
    """Leading batch axes of a leaf ``(*batch, N, *elem)``."""
    nb = np.ndim(arr) - 1 - elem_ndim
    if nb < 0:
        raise ValueError(f"ArticulationView: {name} has shape {np.shape(arr)}, expected (*batch, N"
                         f"{', ...' * elem_ndim})")
    return tuple(np.shape(arr)[:nb])


def _contiguous(idx: np.ndarray) -> slice | None:
    """``slice`` equivalent to the flattened index array when it is one ascending run."""
    flat = idx.ravel()
    if flat.size and np.array_equal(flat, np.arange(flat[0], flat[0] + flat.size)):
        return slice(int(flat[0]), int(flat[0]) + flat.size)
    return None


def gather(arr, idx: np.ndarray, elem_ndim: int, name: str) -> jnp.ndarray:
    """``arr[..., idx, *elem]`` with the batch axes flattened: ``(W, *idx.shape, *elem)``."""
    batch = batch_shape(arr, elem_ndim, name)
    arr = jnp.asarray(arr)
    flat = arr.reshape((math.prod(batch), *arr.shape[len(batch):]))
    elem = flat.shape[2:]
    sl = _contiguous(idx)
    if sl is not None:
        return flat[:, sl].reshape((flat.shape[0], *idx.shape, *elem))
    return flat.at[:, jnp.asarray(idx)].get(mode="promise_in_bounds", unique_indices=True)


def expected_shape(arr, idx: np.ndarray, elem_ndim: int, name: str) -> tuple[int, ...]:
    """Shape a setter's ``values`` must have for leaf ``arr`` and index table ``idx``."""
    batch = batch_shape(arr, elem_ndim, name)
    elem = tuple(np.shape(arr)[len(batch) + 1:])
    return (math.prod(batch), *idx.shape, *elem)


def check_values(values, shape: tuple[int, ...], batch: tuple[int, ...], dtype, what: str) -> jnp.ndarray:
    """Cast ``values`` to ``dtype`` and to ``shape`` (also accepting the unflattened ``(*batch, ...)`` form)."""
    values = jnp.asarray(values, dtype=dtype)
    alt = (*batch, *shape[1:])
    if values.shape != shape and not (len(batch) > 1 and values.shape == alt):
        raise ValueError(f"ArticulationView.{what}: values have shape {values.shape}, expected {shape} "
                         f"(world_count, articulation_count, ...)")
    return values.reshape(shape)


def resolve_mask(mask, world_count: int, count: int, batch: tuple[int, ...], what: str):
    """Mask as a ``(W, A)`` bool array, or ``None`` for all (per-world ``(W,)`` masks are broadcast)."""
    if mask is None:
        return None
    mask = jnp.asarray(mask)
    if mask.dtype != jnp.bool_:
        raise ValueError(f"ArticulationView.{what}: mask must be Boolean, got dtype {mask.dtype}")
    multi = len(batch) > 1
    if mask.shape == (world_count,) or (multi and mask.shape == tuple(batch)):
        return jnp.broadcast_to(mask.reshape(world_count, 1), (world_count, count))
    if mask.shape == (world_count, count) or (multi and mask.shape == (*batch, count)):
        return mask.reshape(world_count, count)
    raise ValueError(f"ArticulationView.{what}: mask has shape {mask.shape}, expected ({world_count}, {count}) "
                     f"or ({world_count},)")


def scatter(arr, idx: np.ndarray, elem_ndim: int, name: str, values, mask=None, *, what: str = "set"):
    """Return ``arr`` with ``arr[..., idx, *elem] = values`` (rows where ``mask`` is false keep their value).

    Args:
        arr: Leaf ``(*batch, N, *elem)``.
        idx: Static ``(A, ...)`` element indices (unique).
        elem_ndim: Per-element ndim.
        name: Attribute name (error messages).
        values: ``(W, *idx.shape, *elem)`` (or ``(*batch, *idx.shape, *elem)``).
        mask: Optional ``(W,)`` or ``(W, A)`` Boolean mask.
        what: Method name (error messages).

    Returns:
        The updated leaf, same shape and dtype as ``arr``.
    """
    arr = jnp.asarray(arr)
    batch = batch_shape(arr, elem_ndim, name)
    shape = expected_shape(arr, idx, elem_ndim, name)
    values = check_values(values, shape, batch, arr.dtype, what)
    flat = arr.reshape((shape[0], *arr.shape[len(batch):]))
    m = resolve_mask(mask, shape[0], idx.shape[0], batch, what)
    if m is not None:
        old = gather(flat, idx, elem_ndim, name)
        m = m.reshape(m.shape + (1,) * (values.ndim - 2))
        values = jnp.where(m, values, old)
    sl = _contiguous(idx)
    if sl is not None:
        out = flat.at[:, sl].set(values.reshape((shape[0], sl.stop - sl.start, *flat.shape[2:])))
    else:
        out = flat.at[:, jnp.asarray(idx)].set(values, mode="promise_in_bounds", unique_indices=True)
    return out.reshape(arr.shape)


def cast_values(leaf, idx: np.ndarray, elem_ndim: int, name: str, values, what: str) -> jnp.ndarray:
    """Validate/cast ``values`` to the ``(W, *idx.shape, *elem)`` shape a scatter into ``leaf`` expects."""
    shape = expected_shape(leaf, idx, elem_ndim, name)
    return check_values(values, shape, batch_shape(leaf, elem_ndim, name), leaf.dtype, what)
