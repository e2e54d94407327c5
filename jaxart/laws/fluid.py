"""Fluid forces on bodies: MuJoCo's inertia-box model (``<option density viscosity wind>``).

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

from jaxart.math import quat_rotate, quat_rotate_inv

__all__ = ["fluid_body_wrenches"]


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
    has_mass = (model.body_mass > 0.0)[:, None]
    return jnp.where(has_mass, jnp.concatenate([f_world, tau_world], axis=-1), 0.0)
