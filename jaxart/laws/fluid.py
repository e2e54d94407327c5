"""Fluid forces on bodies: MuJoCo's inertia-box and ellipsoid models (``<option density viscosity wind>``).

A body with a shape whose ``Model.shape_fluid`` interaction coefficient is nonzero (MuJoCo's
``fluidshape="ellipsoid"``) takes the ellipsoid model of those shapes (:func:`ellipsoid_shape_wrenches`); every
other body with mass takes the inertia-box model below.

Each body with mass is replaced by the uniform box with its mass and principal moments: side lengths
``b_i = sqrt(6 (I_j + I_k − I_i) / m)`` along its principal axes. With ``v`` and ``ω`` the COM velocity relative
to the wind and the angular velocity, both in principal axes, and ``d = (b_0 + b_1 + b_2)/3``:

* viscous (Stokes) drag: ``f = −3π d μ v``, ``τ = −π d³ μ ω``;
* quadratic drag: ``f_i −= ½ ρ b_j b_k |v_i| v_i``, ``τ_i −= ρ b_i (b_j⁴ + b_k⁴)/64 · |ω_i| ω_i``;

applied at the COM. ``ρ`` is ``Model.fluid_density``, ``μ`` ``Model.fluid_viscosity`` and the wind
``Model.fluid_wind``. The principal axes come from ``eigh`` of ``body_inertia``; for a body with two equal
principal moments the quadratic terms depend on which axes ``eigh`` picks in that plane (MuJoCo uses the
compiler's ``body_iquat``), so such bodies may differ from MuJoCo in those terms. The axes carry no derivative
(the moments do: ``∂λ_i = v_iᵀ ∂I v_i``), so gradients stay finite for symmetric bodies.

Pure and ``jit``/``vmap``/``grad`` compatible.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_mul, quat_rotate, quat_rotate_inv

__all__ = ["SHAPE_FLUID_COLUMNS", "ellipsoid_shape_wrenches", "fluid_body_wrenches"]

#: Columns of ``Model.shape_fluid``: MuJoCo's ``geom_fluid`` (interaction coefficient, blunt/slender/angular drag,
#: Kutta and Magnus lift coefficients, virtual mass and inertia [m³, m⁵]) and the ellipsoid's semi-axes [m].
SHAPE_FLUID_COLUMNS = ("interaction", "blunt", "slender", "angular", "kutta", "magnus", "mass_x", "mass_y", "mass_z",
                       "inertia_x", "inertia_y", "inertia_z", "semiaxis_x", "semiaxis_y", "semiaxis_z")
_TINY = 1e-15


def _box_sides(mass: jax.Array, moments: jax.Array) -> jax.Array:
    """Side lengths [m] of the equivalent box, ``(nb, 3)``, from masses ``(nb,)`` and principal moments."""
    tiny = jnp.finfo(moments.dtype).eps
    other = jnp.stack([moments[:, 1] + moments[:, 2] - moments[:, 0],
                       moments[:, 0] + moments[:, 2] - moments[:, 1],
                       moments[:, 0] + moments[:, 1] - moments[:, 2]], axis=-1)
    safe_m = jnp.where(mass > 0.0, mass, 1.0)[:, None]
    return jnp.sqrt(jnp.maximum(other, tiny) / safe_m * 6.0)


def _local_wrench(box: jax.Array, v: jax.Array, w: jax.Array, density, viscosity) -> tuple[jax.Array, jax.Array]:
    """Force and torque in principal axes for velocities ``v``, ``w`` (``(nb, 3)`` each)."""
    diam = jnp.mean(box, axis=-1, keepdims=True)
    f = -3.0 * jnp.pi * diam * viscosity * v
    tau = -jnp.pi * diam**3 * viscosity * w
    jk = jnp.roll(box, -1, axis=-1) * jnp.roll(box, -2, axis=-1)
    f = f - 0.5 * density * jk * jnp.abs(v) * v
    quart = jnp.roll(box, -1, axis=-1) ** 4 + jnp.roll(box, -2, axis=-1) ** 4
    tau = tau - density * box * quart / 64.0 * jnp.abs(w) * w
    return f, tau


def fluid_body_wrenches(model, body_q: jax.Array, body_qd: jax.Array) -> jax.Array:
    """World wrenches of the medium on every body (inertia-box model).

    Args:
        model: A :class:`~jaxart.Model` (``fluid_density``, ``fluid_viscosity``, ``fluid_wind``, masses, inertias).
        body_q: ``(body_count, 7)`` body poses ``(p, q_xyzw)``.
        body_qd: ``(body_count, 6)`` body twists ``(v_com, ω)`` in world axes.

    Returns:
        ``(body_count, 6)`` wrenches ``(f [N], τ [N·m])`` in world axes about each COM (zero for massless bodies).
    """
    # principal axes without eigh's derivative (undefined for equal moments); the moments keep their derivative
    axes = jnp.linalg.eigh(jax.lax.stop_gradient(model.body_inertia))[1]
    moments = jnp.einsum("bji,bjk,bki->bi", axes, model.body_inertia, axes)
    box = _box_sides(model.body_mass, moments)
    q = body_q[:, 3:7]
    v_body = quat_rotate_inv(q, body_qd[:, :3] - model.fluid_wind)
    w_body = quat_rotate_inv(q, body_qd[:, 3:6])
    v = jnp.einsum("bji,bj->bi", axes, v_body)
    w = jnp.einsum("bji,bj->bi", axes, w_body)
    f, tau = _local_wrench(box, v, w, model.fluid_density, model.fluid_viscosity)
    f_world = quat_rotate(q, jnp.einsum("bij,bj->bi", axes, f))
    tau_world = quat_rotate(q, jnp.einsum("bij,bj->bi", axes, tau))
    box_wrench = jnp.concatenate([f_world, tau_world], axis=-1)
    has_mass = (model.body_mass > 0.0)[:, None]
    if not model.shape_count:
        return jnp.where(has_mass, box_wrench, 0.0)
    body = np.asarray(model.topology.shape_body)
    on = (model.shape_fluid[:, 0] != 0.0) & jnp.asarray(body >= 0)
    ellipsoid = jax.ops.segment_max(on.astype(jnp.int32), jnp.asarray(np.maximum(body, 0)),
                                    num_segments=model.body_count) > 0
    out = jnp.where(ellipsoid[:, None], ellipsoid_shape_wrenches(model, body_q, body_qd), box_wrench)
    return jnp.where(has_mass, out, 0.0)


def _ellipsoid_local(prm: jax.Array, v: jax.Array, w: jax.Array, density, viscosity) -> tuple[jax.Array, jax.Array]:
    """Force and torque in shape axes (``(n, 3)`` each) of the ellipsoid model at local velocities ``v``, ``w``."""
    size = prm[:, 12:15]
    blunt, slender, ang, kutta, magnus = (prm[:, k:k + 1] for k in range(1, 6))
    # added mass (potential flow; the acceleration term is omitted, as in MuJoCo)
    p_lin, p_ang = density * prm[:, 6:9] * v, density * prm[:, 9:12] * w
    tau = jnp.cross(p_lin, v) + jnp.cross(p_ang, w)
    f = jnp.cross(p_lin, w)
    volume = 4.0 / 3.0 * jnp.pi * jnp.prod(size, axis=-1, keepdims=True)
    d_max, d_min = jnp.max(size, -1, keepdims=True), jnp.min(size, -1, keepdims=True)
    d_mid = jnp.sum(size, -1, keepdims=True) - d_max - d_min
    pair = jnp.roll(size, -1, axis=-1) * jnp.roll(size, -2, axis=-1)  # (s1 s2, s2 s0, s0 s1)
    proj_den = jnp.sum(pair**4 * v**2, -1, keepdims=True)
    proj_num = jnp.sum((pair * v) ** 2, -1, keepdims=True)
    a_proj = jnp.pi * jnp.sqrt(proj_den / jnp.maximum(_TINY, proj_num))
    speed = jnp.linalg.norm(v, axis=-1, keepdims=True)
    cos_alpha = proj_num / jnp.maximum(_TINY, speed * proj_den)
    circ = jnp.cross(pair**2 * v, v) * kutta * density * cos_alpha * a_proj
    f = f + magnus * density * volume * jnp.cross(w, v) + jnp.cross(circ, v)
    eq_d = 2.0 / 3.0 * jnp.sum(size, -1, keepdims=True)
    i_max = 8.0 / 15.0 * jnp.pi * d_mid * d_max**4
    ii = 8.0 / 15.0 * jnp.pi * size * jnp.maximum(jnp.roll(size, -1, -1), jnp.roll(size, -2, -1)) ** 4
    mom = w * (ang * ii + slender * (i_max - ii))
    drag_lin = viscosity * 3.0 * jnp.pi * eq_d + density * speed * (a_proj * blunt + slender * (jnp.pi * d_max * d_mid
                                                                                                 - a_proj))
    drag_ang = viscosity * jnp.pi * eq_d**3 + density * jnp.linalg.norm(mom, axis=-1, keepdims=True)
    scale = prm[:, :1]
    return scale * (f - drag_lin * v), scale * (tau - drag_ang * w)


def ellipsoid_shape_wrenches(model, body_q: jax.Array, body_qd: jax.Array) -> jax.Array:
    """World wrenches about each body's COM from its ellipsoid-model shapes (MuJoCo's ``fluidshape="ellipsoid"``).

    Args:
        model: A :class:`~jaxart.Model` with ``shape_fluid``.
        body_q: ``(body_count, 7)`` body poses.
        body_qd: ``(body_count, 6)`` body twists ``(v_com, ω)`` in world axes.

    Returns:
        ``(body_count, 6)`` wrenches ``(f, τ)`` in world axes about each COM (shapes with a zero interaction
        coefficient and world shapes contribute nothing).
    """
    body = np.asarray(model.topology.shape_body)
    b = np.maximum(body, 0)
    xb = body_q[b]
    q_shape = quat_mul(xb[:, 3:7], model.shape_transform[:, 3:7])
    p_shape = xb[:, :3] + quat_rotate(xb[:, 3:7], model.shape_transform[:, :3])
    com = xb[:, :3] + quat_rotate(xb[:, 3:7], model.body_com[b])
    w_world = body_qd[b, 3:6]
    v_world = body_qd[b, :3] + jnp.cross(w_world, p_shape - com) - model.fluid_wind
    f, tau = _ellipsoid_local(model.shape_fluid, quat_rotate_inv(q_shape, v_world), quat_rotate_inv(q_shape, w_world),
                              model.fluid_density, model.fluid_viscosity)
    f, tau = quat_rotate(q_shape, f), quat_rotate(q_shape, tau)
    wrench = jnp.concatenate([f, tau + jnp.cross(p_shape - com, f)], axis=-1)
    wrench = jnp.where(jnp.asarray(body >= 0)[:, None], wrench, 0.0)
    return jax.ops.segment_sum(wrench, jnp.asarray(b), num_segments=model.body_count)
