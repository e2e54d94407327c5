"""Quaternions ``(x, y, z, w)``, transforms ``(p, q)`` and spatial algebra ``(linear, angular)``.

Every function is pure ``jax.numpy``, works on leading batch dimensions by broadcasting over the
last axis, and is safe to differentiate at identity rotations and zero velocities (no NaN
gradients): divisions, square roots and ``atan2`` follow the double-``where`` rule.
"""

from jaxart.math import soa
from jaxart.math.quat import (
    matrix_to_euler_xyz,
    quat_conjugate,
    quat_exp,
    quat_from_axis_angle,
    quat_from_matrix,
    quat_identity,
    quat_integrate,
    quat_inverse,
    quat_mul,
    quat_normalize,
    quat_rotate,
    quat_rotate_inv,
    quat_to_euler_xyz,
    quat_to_matrix,
    quat_twist_angle,
)
from jaxart.math.safe import inv3, safe_atan2, safe_norm, safe_normalize
from jaxart.math.spatial import (
    cross_force,
    cross_motion,
    shift_twist,
    spatial_inertia_world,
    twist_point_velocity,
)
from jaxart.math.transform import (
    make_transform,
    transform_identity,
    transform_inverse,
    transform_mul,
    transform_point,
    transform_rotation,
    transform_translation,
    transform_vector,
)

__all__ = [
    "soa",
    "inv3",
    "matrix_to_euler_xyz",
    "cross_force",
    "cross_motion",
    "make_transform",
    "quat_conjugate",
    "quat_exp",
    "quat_from_axis_angle",
    "quat_from_matrix",
    "quat_identity",
    "quat_integrate",
    "quat_inverse",
    "quat_mul",
    "quat_normalize",
    "quat_rotate",
    "quat_rotate_inv",
    "quat_to_euler_xyz",
    "quat_to_matrix",
    "quat_twist_angle",
    "safe_atan2",
    "safe_norm",
    "safe_normalize",
    "shift_twist",
    "spatial_inertia_world",
    "transform_identity",
    "transform_inverse",
    "transform_mul",
    "transform_point",
    "transform_rotation",
    "transform_translation",
    "transform_vector",
    "twist_point_velocity",
]
