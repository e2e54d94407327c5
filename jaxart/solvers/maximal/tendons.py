"""Tendons in maximal coordinates, shared by ``SolverSemiImplicit`` and ``SolverXPBD``.

Every tendon's length ``L`` is evaluated from the body poses, and its gradient is written as per-body
*entries* ``(body, g_lin, g_ang)``: ``L̇ = Σ_entries g_lin · v_com + g_ang · ω`` (COM velocity and angular
velocity, world frame), so a scalar tendon force ``f`` (positive lengthens, :mod:`jaxart.dynamics.tendon_forces`) is
the body wrenches ``(f g_lin, f g_ang)`` about the COMs, and an XPBD row moves the bodies along the same
entries.

* FIXED ``L = Σ_k c_k q_k``: each DOF coordinate (of a REVOLUTE/PRISMATIC joint or one DOF of a D6) comes from
  its joint's anchor frames (:func:`jaxart.solvers.maximal.joints.joint_frames`, the coordinates of the maximal
  solvers' drives and limits): a linear DOF ``q = a_w · (x_c − x_p)`` with the world axis ``a_w`` (entries
  ``±c a_w`` at the child anchor point), an angular DOF the angle of
  :func:`~jaxart.solvers.maximal.joints.angular_coordinates` (a REVOLUTE's twist angle about its axis, a D6's
  Euler-chain angle) with ``q̇ = g_w · ω_rel`` for its world covector ``g_w`` (entries ``±c g_w``, pure angular),
  unwrapped to the nearest copy of a reference coordinate (the step-start ``joint_q``) so that ``L`` stays
  continuous past ±π. The two entries are equal and opposite: a generalised joint force ``c f`` acting on the
  child and its reaction on the parent.
* SPATIAL (straight, wrapped and pulley segments, :mod:`jaxart.dynamics.tendon_path`): one entry per path
  entry, ``g_lin = ∂L/∂p`` (for a straight path ``u_{i−1} − u_i``, the unit segment directions before/after the
  point, zero at the ends) and ``g_ang = (p − c) × g_lin + a × ∂L/∂a`` (``a`` a wrapping cylinder's world axis):
  the point forces and torques of :func:`jaxart.dynamics.tendon_forces.tendon_forces`.

``SolverSemiImplicit`` applies the tendon forces explicitly (:func:`tendon_body_wrenches`): the limits with their
margin (:func:`~jaxart.dynamics.tendon_forces.tendon_limit_bounds`) and the friction ``tendon_frictionloss`` as the
smooth Coulomb law ``−μ tanh(L̇/ε)`` with ``ε = TENDON_FRICTION_EPS`` (explicit: an added damping ``μ/ε`` near rest,
stable for ``dt < 2 m ε/μ`` with ``m`` the effective mass along the tendon). Its tendon armature (a coupling of
the bodies' inertias along the tendon) is the small system of :mod:`jaxart.solvers.semi_implicit.tendon_armature`
over the same entries.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.tendon_forces import tendon_actuator_forces, tendon_friction, tendon_points, tendon_scalar_forces
from jaxart.dynamics.tendon_path import spatial_gradients
from jaxart.laws.angles import nearest_turn
from jaxart.math import quat_rotate
from jaxart.solvers.maximal.joints import (
    angular_coordinates,
    extend_world,
    gather_joint_axes,
    joint_frames,
    joint_static,
)
from jaxart.solvers.maximal.sums import segment_sum

__all__ = ["TENDON_FRICTION_EPS", "TendonEntries", "TendonLayout", "tendon_body_wrenches",
           "tendon_entries", "tendon_layout", "tendon_speeds", "tendon_wrenches"]

#: Velocity scale ``ε`` [m/s] of the smooth tendon friction in ``SolverSemiImplicit`` (``SolverFeatherstone``'s
#: default ``friction_smoothing``).
TENDON_FRICTION_EPS = 1e-2


class TendonLayout(NamedTuple):
    """Static (numpy) entry layout of a model's tendons (cached per topology).

    Attributes:
        bodies: ``(T, K)`` body of every entry (``body_count`` = world or padding).
        slot: ``(T, K)`` index of the entry in the concatenated (fixed, spatial) entry list; padding points at
            one zero row past the end.
        fixed_joint: ``(F,)`` joint of every fixed-tendon term; ``fixed_linear`` ``(F,)`` a linear DOF (else
            angular); ``fixed_axis`` ``(F,)`` the DOF's index among its joint's linear (or angular) DOFs.
        fixed_tendon: ``(F,)`` tendon of every term.
        fixed_coord: ``(F,)`` coordinate index of the DOF (unwrapping reference in ``joint_q``).
        point_body: ``(P,)`` body of every spatial attachment point (``body_count`` = world).
    """

    bodies: np.ndarray
    slot: np.ndarray
    fixed_joint: np.ndarray
    fixed_linear: np.ndarray
    fixed_axis: np.ndarray
    fixed_tendon: np.ndarray
    fixed_coord: np.ndarray
    point_body: np.ndarray


def tendon_layout(model) -> TendonLayout:
    """The :class:`TendonLayout` of ``model`` (static)."""
    return _layout(model.topology, model.tendon)


@functools.lru_cache(maxsize=64)
def _layout(topo, ten) -> TendonLayout:
    nb, st = topo.body_count, joint_static(topo)
    nt = ten.tendon_count
    jstart, astart = np.asarray(ten.tendon_joint_start), np.asarray(ten.tendon_attachment_start)
    joints = np.asarray(ten.tendon_joint, np.int32)
    fixed_tendon = np.repeat(np.arange(nt, dtype=np.int32), np.diff(jstart))
    nf = len(joints)
    # entries: fixed terms 2k (child), 2k+1 (parent); spatial points 2F + i
    ent_body = np.concatenate([np.stack([st.child[joints], st.parent[joints]], 1).reshape(-1),
                               np.where(np.asarray(ten.tendon_attachment_body) < 0, nb,
                                        np.asarray(ten.tendon_attachment_body))]).astype(np.int32)
    per = [list(range(2 * jstart[t], 2 * jstart[t + 1])) + [2 * nf + i for i in range(astart[t], astart[t + 1])]
           for t in range(nt)]
    k = max([len(p) for p in per], default=0)
    pad = len(ent_body)
    slot = np.array([p + [pad] * (k - len(p)) for p in per], np.int32).reshape(nt, k)
    bodies = np.append(ent_body, nb)[slot]
    dof = np.asarray(ten.tendon_joint_dof, np.int32)
    coord = (np.asarray(topo.joint_q_start.array)[joints] + dof).astype(np.int32)
    linear = dof < st.n_lin[joints]
    axis = np.where(linear, dof, dof - st.n_lin[joints]).astype(np.int32)
    return TendonLayout(bodies, slot, joints, linear, axis, fixed_tendon, coord, ent_body[2 * nf:])


class TendonEntries(NamedTuple):
    """Lengths and per-body gradient entries of all tendons at one configuration.

    Attributes:
        length: ``(T,)`` tendon lengths [m].
        bodies: ``(T, K)`` static body of every entry (``body_count`` = world / padding).
        lin: ``(T, K, 3)`` linear gradients ``∂L/∂x_com`` (world).
        ang: ``(T, K, 3)`` angular gradients ``∂L/∂θ`` (world, about the COM).
        fixed_q: ``(F,)`` the fixed tendons' joint coordinates (unwrapped).
    """

    length: jnp.ndarray
    bodies: np.ndarray
    lin: jnp.ndarray
    ang: jnp.ndarray
    fixed_q: jnp.ndarray


def tendon_entries(model, body_q: jnp.ndarray, q_ref: jnp.ndarray) -> TendonEntries:
    """Tendon lengths and gradient entries from the body poses (module docstring).

    Args:
        model: The model.
        body_q: ``(body_count, 7)`` poses.
        q_ref: ``(joint_coord_count,)`` coordinates whose nearest copy the REVOLUTE angles of fixed tendons take
            (e.g. the step-start ``joint_q``).

    Returns:
        The :class:`TendonEntries`.
    """
    lay = tendon_layout(model)
    dtype = model.tendon_stiffness.dtype
    body_q = body_q.astype(dtype)
    nt = model.tendon.tendon_count
    length = jnp.zeros((nt,), dtype)
    lin_parts, ang_parts = [], []
    fixed_q = jnp.zeros((0,), dtype)
    if len(lay.fixed_joint):
        fixed_q, lin_f, ang_f = _fixed_terms(model, lay, body_q, q_ref.astype(dtype))
        length = length.at[lay.fixed_tendon].add(model.tendon_joint_coef * fixed_q)
        lin_parts.append(lin_f)
        ang_parts.append(ang_f)
    if len(lay.point_body):
        p, _, arm, axis, _ = tendon_points(model, body_q, jnp.zeros_like(body_q[:, :6]))
        seg_len, g, g_rot = spatial_gradients(model, p, axis)
        length = length + seg_len
        lin_parts.append(g)
        ang_parts.append(jnp.cross(arm, g) + g_rot)
    zero = jnp.zeros((1, 3), dtype)
    lin = jnp.concatenate([*lin_parts, zero])[lay.slot]
    ang = jnp.concatenate([*ang_parts, zero])[lay.slot]
    return TendonEntries(length, lay.bodies, lin, ang, fixed_q)


def _fixed_terms(model, lay: TendonLayout, body_q, q_ref):
    """Coordinates ``(F,)`` and entries ``(2F, 3)`` ×2 (child, parent interleaved, scaled by the coefficients)."""
    st = joint_static(model.topology)
    j, k, rows = lay.fixed_joint, lay.fixed_axis, np.arange(len(lay.fixed_joint))
    fr = joint_frames(model, body_q, jnp.zeros_like(body_q[:, :6]), joints=j)
    lin_ax, ang_ax = gather_joint_axes(model, st)
    is_lin = jnp.asarray(lay.fixed_linear)
    a_lin = quat_rotate(fr.x_p[:, 3:], lin_ax[j, k].astype(body_q.dtype))
    angles, cov = angular_coordinates(st.n_ang[j], ang_ax[j].astype(body_q.dtype), fr.q_rel)
    a_ang = quat_rotate(fr.x_p[:, 3:], cov[rows, k])
    a_w = jnp.where(is_lin[:, None], a_lin, a_ang)
    q_lin = jnp.sum(a_w * fr.x_err, -1)
    angle = nearest_turn(angles[rows, k], q_ref[lay.fixed_coord])
    q = jnp.where(is_lin, q_lin, angle)
    lever_c = fr.r_c
    lever_p = fr.r_p + fr.x_err  # the child anchor point, seen from the parent COM
    c = model.tendon_joint_coef[:, None]
    zero = jnp.zeros_like(a_w)
    lin_c = jnp.where(is_lin[:, None], c * a_w, zero)
    ang_c = jnp.where(is_lin[:, None], jnp.cross(lever_c, lin_c), c * a_w)
    ang_p = jnp.where(is_lin[:, None], -jnp.cross(lever_p, lin_c), -c * a_w)
    lin = jnp.stack([lin_c, -lin_c], 1).reshape(-1, 3)
    ang = jnp.stack([ang_c, ang_p], 1).reshape(-1, 3)
    return q, lin, ang


def tendon_speeds(entries: TendonEntries, body_qd: jnp.ndarray) -> jnp.ndarray:
    """``(T,)`` length rates ``L̇ = Σ g_lin · v_com + g_ang · ω`` from ``(body_count, 6)`` COM twists."""
    _, bqd = extend_world(jnp.zeros((body_qd.shape[0], 7), body_qd.dtype), body_qd)
    t = bqd[entries.bodies].astype(entries.lin.dtype)
    return jnp.sum(entries.lin * t[..., :3] + entries.ang * t[..., 3:], (-2, -1))


def tendon_wrenches(entries: TendonEntries, force: jnp.ndarray, body_count: int) -> jnp.ndarray:
    """``(body_count, 6)`` world wrenches about the COMs of scalar tendon forces ``force (T,)`` (world dropped)."""
    f = force[:, None, None]
    w = jnp.concatenate([f * entries.lin, f * entries.ang], -1).reshape(-1, 6)
    return segment_sum(w, entries.bodies.reshape(-1), body_count)


def tendon_body_wrenches(model, state, control) -> jnp.ndarray:
    """Explicit tendon loads ``(body_count, 6)``: spring, damping and penalty limit
    (:func:`~jaxart.dynamics.tendon_forces.tendon_scalar_forces`), smooth friction
    (:func:`~jaxart.dynamics.tendon_forces.tendon_friction`, ``ε = TENDON_FRICTION_EPS``) plus the actuators
    (:func:`~jaxart.dynamics.tendon_forces.tendon_actuator_forces`) at ``state`` (``SolverSemiImplicit``).

    Zero (no program) for models without tendons.
    """
    dtype = state.body_q.dtype
    if not model.tendon.tendon_count:
        return jnp.zeros((model.body_count, 6), dtype)
    ent = tendon_entries(model, state.body_q, state.joint_q)
    speed = tendon_speeds(ent, state.body_qd)
    f = (tendon_scalar_forces(model, ent.length, speed) + tendon_friction(model, speed, TENDON_FRICTION_EPS)[0]
         + tendon_actuator_forces(model, control, ent.length, speed)[0])
    return tendon_wrenches(ent, f, model.body_count).astype(dtype)

