"""Tendon kinematics and force laws (MuJoCo's definitions; pure, ``jit``/``vmap``/``grad`` safe).

* FIXED: ``L = Σ_k c_k q(j_k)`` (absolute joint coordinates, as MuJoCo's ``ten_length``),
  ``L̇ = Σ_k c_k q̇(j_k)``; the force acts on the joints as ``τ_k = c_k f``.
* SPATIAL: ``L = Σ_i |p_{i+1} − p_i|`` over the attachment points in world coordinates, with segments wrapped
  around spheres / cylinders and branches divided by pulley divisors (:mod:`jaxart.dynamics.tendon_path`, one
  length function for every solver); ``L̇ = Σ_e g_e · v_e + r_e · ω_e`` with the gradients ``g_e = ∂L/∂p_e`` of the
  path entries (for a straight segment the unit direction ``u_i``), ``v_e`` their world velocities and ``r_e`` the
  angular gradient of a cylinder's axis; the force acts as point forces ``f g_e`` and torques ``f r_e`` on the
  entries' bodies (wrenches about the COMs), i.e. ``τ = Jᵀ f``.

The scalar tendon force (positive lengthens the tendon) is

``f = −k (L − high)⁺ + k (low − L)⁺ − d L̇ + f_limit``

with the spring dead band ``(low, high) = tendon_springlength`` (MuJoCo's ``springlength``) and the
one-sided penalty limit ``f_limit = ke (lower' − L) − kd L̇`` while ``L < lower'`` (and
``ke (upper' − L) − kd L̇`` while ``L > upper'``), the form of jaxart's joint limits, on the range shrunk by
the margin: ``lower' = lower + margin``, ``upper' = upper − margin`` (``tendon_margin``; MuJoCo activates a
limit when its distance ``dist = L − lower`` drops below ``margin`` and its reference acceleration acts on
``dist − margin``, so both push toward ``lower + margin``). MuJoCo enforces
tendon ranges as soft constraints instead (``SolverMuJoCo`` maps ``ke``/``kd`` to ``solref_limit =
(−ke, −kd)`` as for joints; the two agree only approximately, through MuJoCo's impedance).

Dry friction (``tendon_frictionloss`` ``μ``, MuJoCo's ``frictionloss``) is the smooth Coulomb law of joint
friction, ``f_fric = −μ tanh(L̇/ε)`` (``ε``: ``SolverFeatherstone``'s ``friction_smoothing``), linearly
implicit in the step (its slope ``μ/ε (1 − tanh²)`` joins the tendon's damping rows, in both drive modes, as
joint friction does). It is not part of :func:`tendon_scalar_forces` (MuJoCo's ``qfrc_passive`` has no
friction either: there it is a constraint force). Armature ``a`` (``tendon_armature``, MuJoCo's ``armature``) is
an inertia of the length, kinetic energy ``½ a L̇²``: the step adds ``a JᵀJ`` to the joint-space inertia and the
force ``−a J̇q̇`` along the tendon (``J = ∂L̇/∂q̇``; together ``−a Jᵀ L̈``, MuJoCo's ``mj_tendonArmature`` and
``mj_tendonBias``); ``J̇q̇`` vanishes for fixed tendons.

A tendon's actuator adds ``f_act = tendon_f + ke_t (L* − L) + kd_t (L̇* − L̇)`` (``Control.tendon_f``,
``tendon_target_length``/``velocity``; gains ``Model.tendon_target_ke/kd``), clamped to ``±tendon_effort_limit``
(MuJoCo's ``forcerange``). ``SolverFeatherstone`` applies all of it implicitly by default (the stiffness and
damping at the end-of-step length and rate, :mod:`jaxart.dynamics.engine.tendon_terms`), explicitly with
``drive="explicit"``; an implicit actuator is clamped like a joint drive with an effort limit: the force with the
look-ahead ``tendon_f + ke_t (L* − L − dt L̇) + kd_t (L̇* − L̇)`` is clamped, and a saturated actuator drops its
gains from the implicit rows (a constant force).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.tendon_path import path_layout, spatial_gradients
from jaxart.laws.joint import drive, penalty_limit, smooth_friction
from jaxart.math.quat import quat_rotate
from jaxart.sim.model import Model


def fixed_entries(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Static (coordinate index, DOF index, tendon) of every fixed-tendon entry."""
    t, topo = model.tendon, model.topology
    start = np.asarray(t.tendon_joint_start)
    joints = np.asarray(t.tendon_joint, np.int64)
    dof = np.asarray(t.tendon_joint_dof, np.int64)
    ten = np.repeat(np.arange(t.tendon_count, dtype=np.int32), np.diff(start))
    return ((np.asarray(topo.joint_q_start)[joints] + dof).astype(np.int32),
            (np.asarray(topo.joint_qd_start)[joints] + dof).astype(np.int32), ten)


def tendon_points(model: Model, body_q, body_qd):
    """Path entries in world coordinates: positions, velocities, moment arms ``p − c`` about the COMs, world
    cylinder axes and the angular velocities of the entries' bodies."""
    bodies = np.asarray(model.tendon.tendon_attachment_body)
    local = model.tendon_attachment_point
    dtype = local.dtype
    ident = jnp.asarray([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], dtype)
    bq = jnp.concatenate([body_q.astype(dtype), ident[None]], axis=0)[bodies]  # body −1 → appended world row
    bqd = jnp.concatenate([body_qd.astype(dtype), jnp.zeros((1, 6), dtype)], axis=0)[bodies]
    com = jnp.concatenate([model.body_com, jnp.zeros((1, 3), dtype)], axis=0)[bodies]
    p = bq[:, :3] + quat_rotate(bq[:, 3:], local)
    arm = p - (bq[:, :3] + quat_rotate(bq[:, 3:], com))
    v = bqd[:, :3] + jnp.cross(bqd[:, 3:], arm)
    axis = quat_rotate(bq[:, 3:], model.tendon_attachment_axis.astype(dtype))
    return p, v, arm, axis, bqd[:, 3:]


class _Spatial(NamedTuple):
    """Per-entry length gradients of the spatial tendons (:func:`~jaxart.dynamics.tendon_path.spatial_gradients`)
    and moment arms about the entries' body COMs."""

    g_lin: jnp.ndarray
    g_rot: jnp.ndarray
    arm: jnp.ndarray


def tendon_kinematics(model: Model, joint_q, joint_qd, body_q, body_qd):
    """``(L, L̇)`` of every tendon and the spatial entries' gradients (``None`` without spatial tendons)."""
    n = model.tendon.tendon_count
    dtype = model.tendon_stiffness.dtype
    length = jnp.zeros((n,), dtype)
    speed = jnp.zeros((n,), dtype)
    qi, di, ten = fixed_entries(model)
    if ten.size:
        c = model.tendon_joint_coef
        length = length.at[ten].add(c * joint_q[qi])
        speed = speed.at[ten].add(c * joint_qd[di])
    spatial = None
    if np.asarray(model.tendon.tendon_attachment_body).size:
        p, v, arm, axis, omega = tendon_points(model, body_q, body_qd)
        seg_len, g_lin, g_rot = spatial_gradients(model, p, axis)
        length = length + seg_len
        rate = jnp.sum(g_lin * v + g_rot * omega, axis=-1)
        speed = speed.at[path_layout(model.tendon).entry_tendon].add(rate)
        spatial = _Spatial(g_lin, g_rot, arm)
    return length, speed, spatial


def tendon_scalar_forces(model: Model, length, speed):
    """Scalar tendon forces ``f`` (positive lengthens) from lengths and speeds (module docstring)."""
    low, high = model.tendon_springlength[:, 0], model.tendon_springlength[:, 1]
    k, d = model.tendon_stiffness, model.tendon_damping
    spring = -k * jnp.maximum(length - high, 0.0) + k * jnp.maximum(low - length, 0.0)
    lo, hi = tendon_limit_bounds(model)
    limit, _ = penalty_limit(length, speed, lo, hi, model.tendon_limit_ke, model.tendon_limit_kd)
    return spring - d * speed + limit.force


def tendon_limit_bounds(model: Model):
    """``(lower + margin, upper − margin)`` ``(nten,)`` ×2: where each length limit acts (module docstring)."""
    return model.tendon_limit_lower + model.tendon_margin, model.tendon_limit_upper - model.tendon_margin


def tendon_friction(model: Model, speed, friction_eps: float):
    """Smooth Coulomb friction ``−μ tanh(L̇/ε)`` [N] of every tendon and its slope ``μ/ε (1 − tanh²)`` [N·s/m]
    (the damping of its linearly implicit form), as joint friction in :mod:`jaxart.dynamics.joint_forces`."""
    fric = smooth_friction(speed, model.tendon_frictionloss, friction_eps)
    return fric.force, fric.damping


def tendon_controls(model: Model, control) -> tuple:
    """``(tendon_f, target_length, target_velocity)`` of ``control`` (``None`` fields: zero / model defaults)."""
    f = None if control is None else control.tendon_f
    length = None if control is None else control.tendon_target_length
    vel = None if control is None else control.tendon_target_velocity
    return (jnp.zeros_like(model.tendon_stiffness) if f is None else f,
            model.tendon_target_length if length is None else length,
            model.tendon_target_velocity if vel is None else vel)


def tendon_actuator_forces(model: Model, control, length, speed, *, look: float = 0.0):
    """Scalar tendon actuator forces ``tendon_f + ke (L* − L − look L̇) + kd (L̇* − L̇)`` [N] (positive lengthens),
    clamped to ``±tendon_effort_limit``, and whether each is saturated."""
    f, target, target_vel = tendon_controls(model, control)
    term, saturated = drive(target - length, speed, target_vel, model.tendon_target_ke, model.tendon_target_kd,
                            act=f, effort_limit=model.tendon_effort_limit, look=look)
    return term.force, saturated


def tendon_gains(model: Model, length, saturated):
    """``(K, D)``: the active stiffness ``−∂f/∂L`` and damping ``−∂f/∂L̇`` of each tendon (spring outside its
    dead band, penalty limit while violated, actuator drive unless ``saturated``)."""
    low, high = model.tendon_springlength[:, 0], model.tendon_springlength[:, 1]
    spring = jnp.where((length > high) | (length < low), model.tendon_stiffness, 0.0)
    lo, hi = tendon_limit_bounds(model)
    active = (length < lo) | (length > hi)
    k = spring + jnp.where(active, model.tendon_limit_ke, 0.0) + jnp.where(saturated, 0.0, model.tendon_target_ke)
    d = (model.tendon_damping + jnp.where(active, model.tendon_limit_kd, 0.0)
         + jnp.where(saturated, 0.0, model.tendon_target_kd))
    return k, d


def tendon_forces(model: Model, joint_q, joint_qd, body_q, body_qd):
    """Passive tendon loads: ``(joint_f (nd,), body_f (nb, 6))`` to add to the controls / wrenches.

    ``joint_f`` holds the FIXED tendons' generalized forces (scalar joints, so it is also the
    ``Control.joint_f`` convention); ``body_f`` the SPATIAL tendons' world wrenches ``(f, τ about COM)``.
    """
    length, speed, spatial = tendon_kinematics(model, joint_q, joint_qd, body_q, body_qd)
    return tendon_loads(model, tendon_scalar_forces(model, length, speed), spatial)


def tendon_loads(model: Model, f, spatial: _Spatial | None):
    """Joint forces and body wrenches of the scalar tendon forces ``f`` (see :func:`tendon_forces`): each spatial
    entry carries the force ``f ∂L/∂p`` at its point and the torque ``f g_rot``."""
    dtype = f.dtype
    joint_f = jnp.zeros((model.joint_dof_count,), dtype)
    _, di, ten = fixed_entries(model)
    if ten.size:
        joint_f = joint_f.at[di].add(model.tendon_joint_coef * f[ten])
    nb = model.body_count
    body_f = jnp.zeros((nb + 1, 6), dtype)
    if spatial is not None:
        bodies = np.asarray(model.tendon.tendon_attachment_body)
        fe = f[path_layout(model.tendon).entry_tendon][:, None]
        force = fe * spatial.g_lin
        w = jnp.concatenate([force, jnp.cross(spatial.arm, force) + fe * spatial.g_rot], axis=-1)
        body_f = body_f.at[np.where(bodies < 0, nb, bodies)].add(w)
    return joint_f, body_f[:nb]
