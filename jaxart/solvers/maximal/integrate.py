"""Newton's rigid-body integrator in maximal coordinates (shared by SemiImplicit and XPBD)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxart.math import inv3, quat_exp, quat_integrate, quat_mul, quat_rotate, quat_rotate_inv
from jaxart.math.small import dot_last, matvec
from jaxart.sim.enums import BodyFlags
from jaxart.sim.gravity import gravity_mass


def inverse_mass_properties(model, dtype):
    """``(inv_mass (n,), inv_inertia (n, 3, 3))`` with zeros for massless/kinematic bodies.

    Written with a closed-form 3×3 inverse (no LAPACK call, safe under ``vmap``). Kinematic bodies
    get zero inverse mass so constraints and contacts treat them as infinitely heavy.
    """
    m = model.body_mass.astype(dtype)
    inertia = model.body_inertia.astype(dtype)
    det = _det3(inertia)
    dyn = jnp.asarray((np.asarray(model.topology.body_flags.array) & int(BodyFlags.KINEMATIC)) == 0)
    ok_m = (m > 0.0) & dyn
    inv_m = jnp.where(ok_m, 1.0 / jnp.where(ok_m, m, 1.0), 0.0)
    ok_i = (jnp.abs(det) > 0.0) & dyn
    eye = jnp.eye(3, dtype=dtype)
    inv_i = jnp.where(ok_i[:, None, None], inv3(jnp.where(ok_i[:, None, None], inertia, eye)), 0.0)
    return inv_m, inv_i


def _det3(a):
    return dot_last(a[..., 0, :], jnp.cross(a[..., 1, :], a[..., 2, :]))


def kinematic_mask(model) -> np.ndarray:
    """Static ``(n,)`` bool: bodies flagged ``BodyFlags.KINEMATIC``."""
    return (np.asarray(model.topology.body_flags.array) & int(BodyFlags.KINEMATIC)) != 0


def integrate_bodies(model, body_q, body_qd, body_f, dt, *, angular_damping: float, exact_rotation: bool = False):
    """Newton's ``integrate_rigid_body`` for all bodies (semi-implicit Euler at the COM).

    ``v ← v + (f/m + (1 − gravcomp) g)·dt`` (gravity only for bodies with mass), angular velocity in the body
    frame with the explicit gyroscopic term ``−ω × Iω``, ``q ← normalize(q + ½ [ω,0] ⊗ q dt)``,
    then ``ω ← ω (1 − angular_damping·dt)`` (after the rotation update, as Newton). Kinematic
    bodies are returned unchanged. ``exact_rotation`` replaces the quaternion update by the exponential
    map ``q ← exp(½ ω dt) ⊗ q`` (a body spinning freely turns by exactly ``|ω| dt``).

    Returns:
        ``(body_q, body_qd)``.
    """
    dtype = body_q.dtype
    inv_m, inv_i = inverse_mass_properties(model, dtype)
    com = model.body_com.astype(dtype)
    inertia = model.body_inertia.astype(dtype)
    x0, r0 = body_q[:, :3], body_q[:, 3:]
    v0, w0 = body_qd[:, :3], body_qd[:, 3:]
    g = model.gravity.astype(dtype)
    x_com = x0 + quat_rotate(r0, com)
    grav = gravity_mass((inv_m > 0.0).astype(dtype), model.body_gravcomp.astype(dtype))
    v1 = v0 + (body_f[:, :3] * inv_m[:, None] + g * grav[:, None]) * dt
    x1 = x_com + v1 * dt
    wb = quat_rotate_inv(r0, w0)
    tb = quat_rotate_inv(r0, body_f[:, 3:]) - jnp.cross(wb, matvec(inertia, wb))
    w1 = quat_rotate(r0, wb + matvec(inv_i, tb) * dt)
    r1 = quat_mul(quat_exp(w1 * dt), r0) if exact_rotation else quat_integrate(r0, w1, dt)
    w1 = w1 * (1.0 - angular_damping * dt)
    q_new = jnp.concatenate([x1 - quat_rotate(r1, com), r1], -1)
    qd_new = jnp.concatenate([v1, w1], -1)
    kin = jnp.asarray(kinematic_mask(model))[:, None]
    return jnp.where(kin, body_q, q_new), jnp.where(kin, body_qd, qd_new)
