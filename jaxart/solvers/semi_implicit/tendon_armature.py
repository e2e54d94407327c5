"""Tendon armature in ``SolverSemiImplicit``: the small system that couples the bodies along their tendons.

A tendon's armature ``a`` (``tendon_armature``, MuJoCo's ``armature``) is an inertia of its length, kinetic
energy ``½ a L̇²``: it pushes along the tendon with the force ``f_a = −a L̈`` (positive lengthens), the force
``SolverFeatherstone`` applies as ``a JᵀJ`` in its joint-space matrix and ``−a J̇q̇`` in its loads
(:mod:`jaxart.dynamics.tendon_forces`, checked against MuJoCo C's ``qacc``). In maximal coordinates the bodies are
independent between their penalty joint springs, so only the bodies that the tendons' gradient entries touch
are coupled (:mod:`jaxart.solvers.maximal.tendons`: ``L̇ = J v`` with ``J`` the ``(T, 6B)`` body-space length
Jacobian, ``v`` the COM twists). With the block-diagonal body inertia ``M`` and all explicit loads of the step
``f`` (wrenches about the COMs), the step's free accelerations are ``u = M⁻¹ f`` (plus gravity and the
gyroscopic term, exactly as :func:`~jaxart.solvers.maximal.integrate.integrate_bodies` integrates them) and
the accelerations with the armature forces are ``v̇ = u + M⁻¹ Jᵀ f_a``. With ``L̈ = J v̇ + J̇ v`` and
``f_a = −A L̈`` (``A = diag(a)``) the armature force ``λ = −f_a`` solves

``(I + A W) λ = A (J u + J̇ v)``,  ``W = J M⁻¹ Jᵀ`` ``(T, T)``,

and the step adds the wrenches ``−Jᵀ λ`` (:func:`~jaxart.solvers.maximal.tendons.tendon_wrenches`) to ``f``
before integrating, so that ``v̇ = M⁻¹ (f − Jᵀ λ)``. ``J̇ v`` is ``L̈`` at ``v̇ = 0``: one forward-mode derivative
of the gradient entries along the pose rates of the COM twists (COM velocity ``v``, ``q̇ = ½ [ω, 0] ⊗ q``).
For a single tendon ``λ = a (J u + J̇ v) / (1 + a W)``: a slider of mass ``m`` pushed by ``F`` through a fixed
tendon ``L = q`` accelerates at ``F / (m + a)``.

The system is solved by Gauss–Jordan elimination without pivoting, unrolled over the (few) tendons with
armature: ``jit``/``vmap``/forward- and reverse-mode safe without LAPACK. Its pivots are at least 1 (``I + A W``
is similar to the SPD ``I + A^½ W A^½``, whose Schur complements are ``≥ I``), so no pivoting is needed.

Which tendons take part is static (:func:`armature_tendons`): the solver reads ``tendon_armature`` at
construction, and a model whose armature is zero everywhere compiles to the step without any of this.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_mul, quat_rotate, quat_rotate_inv
from jaxart.math.small import matvec
from jaxart.sim.gravity import gravity_mass
from jaxart.solvers.maximal.integrate import inverse_mass_properties
from jaxart.solvers.maximal.tendons import TendonEntries, tendon_entries, tendon_layout, tendon_speeds, tendon_wrenches

__all__ = ["armature_tendons", "free_accelerations", "tendon_armature_wrenches"]


def armature_tendons(model) -> tuple[int, ...] | None:
    """Static indices of the tendons with a non-zero ``tendon_armature``.

    Returns:
        The indices (``()`` without tendons or armature), or ``None`` (all tendons) when the armature is traced
        (a model seen under ``jit``/``vmap``) and cannot be read.
    """
    if not model.tendon.tendon_count:
        return ()
    try:
        armature = np.asarray(model.tendon_armature)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None
    on = np.any(armature.reshape(-1, model.tendon.tendon_count) != 0.0, axis=0)  # any world of a batched model
    return tuple(int(k) for k in np.flatnonzero(on))


def free_accelerations(model, body_q: jnp.ndarray, body_qd: jnp.ndarray, body_f: jnp.ndarray) -> jnp.ndarray:
    """``(body_count, 6)`` world COM accelerations ``(v̇, ω̇)`` of the loads ``body_f`` as
    :func:`~jaxart.solvers.maximal.integrate.integrate_bodies` applies them: ``f/m + (1 − gravcomp) g`` (gravity
    on bodies with mass) and ``R I⁻¹ (Rᵀτ − ω_b × I ω_b)``; zero for kinematic and massless bodies."""
    dtype = body_q.dtype
    inv_m, inv_i = inverse_mass_properties(model, dtype)
    r = body_q[:, 3:]
    wb = quat_rotate_inv(r, body_qd[:, 3:])
    tb = quat_rotate_inv(r, body_f[:, 3:]) - jnp.cross(wb, matvec(model.body_inertia.astype(dtype), wb))
    grav = gravity_mass((inv_m > 0.0).astype(dtype), model.body_gravcomp.astype(dtype))
    lin = body_f[:, :3] * inv_m[:, None] + model.gravity.astype(dtype) * grav[:, None]
    return jnp.concatenate([lin, quat_rotate(r, matvec(inv_i, tb))], -1)


def _entries_and_bias(model, state) -> tuple[TendonEntries, jnp.ndarray]:
    """The gradient entries at ``state`` and ``J̇ v (T,)``: their derivative along the COM twists' pose rates."""
    body_q, body_qd = state.body_q, state.body_qd
    r = body_q[:, 3:]
    w = body_qd[:, 3:]
    origin_rate = body_qd[:, :3] - jnp.cross(w, quat_rotate(r, model.body_com.astype(body_q.dtype)))
    quat_rate = 0.5 * quat_mul(jnp.concatenate([w, jnp.zeros_like(w[:, :1])], -1), r)

    def gradients(bq):
        ent = tendon_entries(model, bq, state.joint_q)
        return ent.length, ent.lin, ent.ang, ent.fixed_q

    (length, lin, ang, fixed_q), (_, lin_dot, ang_dot, _) = jax.jvp(
        gradients, (body_q,), (jnp.concatenate([origin_rate, quat_rate], -1),))
    bodies = tendon_layout(model).bodies
    ent = TendonEntries(length, bodies, lin, ang, fixed_q)
    return ent, tendon_speeds(TendonEntries(length, bodies, lin_dot, ang_dot, fixed_q), body_qd)


def _inverse_mass_rows(model, body_q: jnp.ndarray, ent: TendonEntries) -> jnp.ndarray:
    """``W = J M⁻¹ Jᵀ`` ``(T, T)``: the products of the entries that share a body (the world has none)."""
    dtype = ent.lin.dtype
    inv_m, inv_i = inverse_mass_properties(model, dtype)
    n = model.body_count
    inv_m = jnp.concatenate([inv_m, jnp.zeros((1,), dtype)])
    inv_i = jnp.concatenate([inv_i, jnp.zeros((1, 3, 3), dtype)])
    rot = jnp.concatenate([body_q[:, 3:].astype(dtype), jnp.asarray([[0.0, 0.0, 0.0, 1.0]], dtype)])
    b = ent.bodies  # (T, K) static
    r = rot[b]
    m_lin = ent.lin * inv_m[b][..., None]
    m_ang = quat_rotate(r, matvec(inv_i[b], quat_rotate_inv(r, ent.ang)))
    same = (b[:, :, None, None] == b[None, None, :, :]) & (b < n)[:, :, None, None]  # static (T, K, T, K)
    pair = jnp.einsum("tkd,sjd->tksj", ent.lin, m_lin) + jnp.einsum("tkd,sjd->tksj", ent.ang, m_ang)
    return jnp.sum(jnp.where(jnp.asarray(same), pair, 0.0), (1, 3))


def _solve_unpivoted(mat: jnp.ndarray, rhs: jnp.ndarray) -> jnp.ndarray:
    """``mat⁻¹ rhs`` by Gauss–Jordan elimination without pivoting, unrolled (pivots bounded away from zero)."""
    for k in range(mat.shape[0]):
        row, val = mat[k] / mat[k, k], rhs[k] / mat[k, k]
        col = mat[:, k].at[k].set(0.0)
        mat = (mat - col[:, None] * row[None, :]).at[k].set(row)
        rhs = (rhs - col * val).at[k].set(val)
    return rhs


def tendon_armature_wrenches(model, state, body_f: jnp.ndarray, tendons: tuple[int, ...] | None) -> jnp.ndarray:
    """``(body_count, 6)`` armature wrenches ``−Jᵀ λ`` of the step (module docstring).

    Args:
        model: The model.
        state: The step's starting state.
        body_f: ``(body_count, 6)`` all other loads of the step (world wrenches about the COMs).
        tendons: Static indices of the tendons with armature (:func:`armature_tendons`); ``None``: all.

    Returns:
        The wrenches to add to ``body_f`` (zeros, no program, when ``tendons`` is empty).
    """
    dtype = state.body_q.dtype
    idx = np.arange(model.tendon.tendon_count) if tendons is None else np.asarray(tendons, np.int64)
    if not idx.size:
        return jnp.zeros((model.body_count, 6), dtype)
    ent, bias = _entries_and_bias(model, state)
    ent = TendonEntries(ent.length[idx], ent.bodies[idx], ent.lin[idx], ent.ang[idx], ent.fixed_q)
    acc = free_accelerations(model, state.body_q, state.body_qd, body_f)
    rhs = tendon_speeds(ent, acc) + bias[idx]
    a = model.tendon_armature[idx].astype(ent.lin.dtype)
    mat = jnp.eye(idx.size, dtype=ent.lin.dtype) + a[:, None] * _inverse_mass_rows(model, state.body_q, ent)
    lam = _solve_unpivoted(mat, a * rhs)
    return tendon_wrenches(ent, -lam, model.body_count).astype(dtype)
