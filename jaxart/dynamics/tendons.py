"""Tendon lengths, velocities and forces (MuJoCo's definitions; pure, ``jit``/``vmap``/``grad`` safe).

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

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.dynamics.tendon_path import path_layout, spatial_gradients
from jaxart.math.quat import quat_rotate
from jaxart.sim.model import Model, State
from jaxart.sim.tendons import TendonType


def _fixed_entries(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Static (coordinate index, DOF index, tendon) of every fixed-tendon entry."""
    t, topo = model.tendon, model.topology
    start = np.asarray(t.tendon_joint_start)
    joints = np.asarray(t.tendon_joint)
    ten = np.repeat(np.arange(t.tendon_count, dtype=np.int32), np.diff(start))
    return (np.asarray(topo.joint_q_start)[joints].astype(np.int32),
            np.asarray(topo.joint_qd_start)[joints].astype(np.int32), ten)


def _points(model: Model, body_q, body_qd):
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


def _kinematics(model: Model, joint_q, joint_qd, body_q, body_qd):
    """``(L, L̇)`` of every tendon and the spatial entries' gradients (``None`` without spatial tendons)."""
    n = model.tendon.tendon_count
    dtype = model.tendon_stiffness.dtype
    length = jnp.zeros((n,), dtype)
    speed = jnp.zeros((n,), dtype)
    qi, di, ten = _fixed_entries(model)
    if ten.size:
        c = model.tendon_joint_coef
        length = length.at[ten].add(c * joint_q[qi])
        speed = speed.at[ten].add(c * joint_qd[di])
    spatial = None
    if np.asarray(model.tendon.tendon_attachment_body).size:
        p, v, arm, axis, omega = _points(model, body_q, body_qd)
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
    below, above = length < lo, length > hi
    target = jnp.where(below, lo, jnp.where(above, hi, length))
    active = below | above
    limit = jnp.where(active, model.tendon_limit_ke * (target - length) - model.tendon_limit_kd * speed, 0.0)
    return spring - d * speed + limit


def tendon_limit_bounds(model: Model):
    """``(lower + margin, upper − margin)`` ``(nten,)`` ×2: where each length limit acts (module docstring)."""
    return model.tendon_limit_lower + model.tendon_margin, model.tendon_limit_upper - model.tendon_margin


def tendon_friction(model: Model, speed, friction_eps: float):
    """Smooth Coulomb friction ``−μ tanh(L̇/ε)`` [N] of every tendon and its slope ``μ/ε (1 − tanh²)`` [N·s/m]
    (the damping of its linearly implicit form), as joint friction in :mod:`jaxart.dynamics.joint_forces`."""
    th = jnp.tanh(speed / friction_eps)
    mu = model.tendon_frictionloss
    return -mu * th, mu / friction_eps * (1.0 - th * th)


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
    ke, kd = model.tendon_target_ke, model.tendon_target_kd
    drive = f + ke * (target - length - look * speed) + kd * (target_vel - speed)
    limit = model.tendon_effort_limit
    return jnp.clip(drive, -limit, limit), jnp.abs(drive) > limit


def _tendon_gains(model: Model, length, saturated):
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


def tendon_step_loads(model: Model, control, joint_q, joint_qd, body_q, body_qd, dt, *, implicit: bool,
                      friction_eps: float = 1e-2):
    """Tendon loads of one :class:`~jaxart.solvers.SolverFeatherstone` step (passive forces, friction, armature
    and actuators).

    Args:
        model: The model.
        control: Control (``tendon_f`` and drive targets) or ``None``.
        joint_q, joint_qd, body_q, body_qd: The step's starting state.
        dt: Time step [s].
        implicit: Linearise the forces at the end of the step (:mod:`jaxart.dynamics.engine.tendon_terms`).
        friction_eps: Velocity scale ``ε`` [m/s] of the smooth Coulomb friction (the solver's
            ``friction_smoothing``).

    Returns:
        ``(joint_f (nd,), body_f (nb, 6), lowrank)``: loads of the forces ``f + f_fric − a J̇q̇ − K dt L̇``
        (explicit: without ``K dt L̇``) and the rank-one rows ``(J (nten, nd), w (nten,))`` of the joint-space
        matrix with ``w = a + C dt + D dt + K dt²`` (explicit: ``w = a + C dt``; ``a`` the armature, ``C`` the
        friction's slope). The actuator force is clamped by ``tendon_effort_limit`` (implicit: with its
        look-ahead, and a saturated actuator leaves ``K``, ``D``; module docstring).
    """
    from jaxart.dynamics.engine.tendon_terms import tendon_jacobian_rate

    length, speed, spatial = _kinematics(model, joint_q, joint_qd, body_q, body_qd)
    passive = tendon_scalar_forces(model, length, speed)
    act, saturated = tendon_actuator_forces(model, control, length, speed, look=dt if implicit else 0.0)
    fric, c_fric = tendon_friction(model, speed, friction_eps)
    jac, bias = tendon_jacobian_rate(model, joint_q, joint_qd, body_q)
    armature = model.tendon_armature
    f = passive + act + fric - armature * bias
    w = armature + c_fric * dt
    if implicit:
        k, d = _tendon_gains(model, length, saturated)
        k_passive = k - jnp.where(saturated, 0.0, model.tendon_target_ke)  # the actuator's look-ahead is in ``act``
        f = f - k_passive * dt * speed
        w = w + d * dt + k * dt * dt
    joint_f, body_f = _loads(model, f, spatial)
    return joint_f, body_f, (jac, w)


def tendon_forces(model: Model, joint_q, joint_qd, body_q, body_qd):
    """Passive tendon loads: ``(joint_f (nd,), body_f (nb, 6))`` to add to the controls / wrenches.

    ``joint_f`` holds the FIXED tendons' generalized forces (scalar joints, so it is also the
    ``Control.joint_f`` convention); ``body_f`` the SPATIAL tendons' world wrenches ``(f, τ about COM)``.
    """
    length, speed, spatial = _kinematics(model, joint_q, joint_qd, body_q, body_qd)
    return _loads(model, tendon_scalar_forces(model, length, speed), spatial)


def _loads(model: Model, f, spatial: _Spatial | None):
    """Joint forces and body wrenches of the scalar tendon forces ``f`` (see :func:`tendon_forces`): each spatial
    entry carries the force ``f ∂L/∂p`` at its point and the torque ``f g_rot``."""
    dtype = f.dtype
    joint_f = jnp.zeros((model.joint_dof_count,), dtype)
    _, di, ten = _fixed_entries(model)
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


def _check(fn: str, model: Model, state: State) -> None:
    from jaxart.sim.checks import check_dynamics

    if not isinstance(model, Model):
        raise TypeError(f"{fn}: model must be a jaxart Model, got {type(model).__name__}")
    check_dynamics(fn, model, state)


def eval_tendon_lengths(model: Model, state: State) -> jax.Array:
    """``(tendon_count,)`` tendon lengths [m] (MuJoCo's ``ten_length``); spatial tendons use ``state.body_q``."""
    _check("eval_tendon_lengths", model, state)
    return _kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)[0]


def eval_tendon_velocities(model: Model, state: State) -> jax.Array:
    """``(tendon_count,)`` tendon length rates [m/s] (MuJoCo's ``ten_velocity``) from ``joint_qd`` / ``body_qd``."""
    _check("eval_tendon_velocities", model, state)
    return _kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)[1]


def eval_tendon_forces(model: Model, state: State) -> jax.Array:
    """``(tendon_count,)`` scalar tendon forces [N] (spring, damping and limit; positive lengthens)."""
    _check("eval_tendon_forces", model, state)
    length, speed, _ = _kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    return tendon_scalar_forces(model, length, speed)


def eval_tendon_joint_forces(model: Model, state: State) -> jax.Array:
    """``(joint_dof_count,)`` generalized force ``Σ_t J_tᵀ f_t`` of all tendons (MuJoCo's tendon part of
    ``qfrc_passive`` when no limit is active), in the ``Control.joint_f`` convention."""
    from jaxart.dynamics.inverse_dynamics import eval_generalized_external_force

    _check("eval_tendon_joint_forces", model, state)
    joint_f, body_f = tendon_forces(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    if not (np.asarray(model.tendon.tendon_type) == TendonType.SPATIAL).any():
        return joint_f
    return joint_f - eval_generalized_external_force(model, state, body_f=body_f)


def eval_tendon_actuator_forces(model: Model, state: State, control=None) -> jax.Array:
    """``(tendon_count,)`` tendon actuator forces [N] ``tendon_f + ke (L* − L) + kd (L̇* − L̇)`` (positive
    lengthens; MuJoCo's ``actuator_force`` of a gear-1 tendon actuator), clamped to ``±tendon_effort_limit``;
    ``control=None``: the model defaults."""
    _check("eval_tendon_actuator_forces", model, state)
    length, speed, _ = _kinematics(model, state.joint_q, state.joint_qd, state.body_q, state.body_qd)
    return tendon_actuator_forces(model, control, length, speed)[0]


def resolve_springlength(model: Model) -> Model:
    """Replace ``(-1, -1)`` spring lengths and NaN (``None``) drive target lengths by the tendon lengths in the
    model's initial configuration."""
    from jaxart.kinematics import eval_fk

    rest = np.asarray(model.tendon_springlength)
    target = np.asarray(model.tendon_target_length)
    unset, unset_target = (rest == -1.0).all(axis=-1), np.isnan(target)
    if not (unset.any() or unset_target.any()):
        return model
    def initial_lengths(m):
        state = eval_fk(m, m.joint_q, m.joint_qd, m.state())
        return _kinematics(m, state.joint_q, state.joint_qd, state.body_q, state.body_qd)[0]

    # one compiled program: op-by-op (eager) FK compiles every small op separately and took seconds
    length = np.asarray(jax.jit(initial_lengths)(model))
    rest = np.where(unset[:, None], length[:, None], rest)
    target = np.where(unset_target, length, target)
    return model.replace(tendon_springlength=jnp.asarray(rest, model.tendon_springlength.dtype),
                         tendon_target_length=jnp.asarray(target, model.tendon_target_length.dtype))


def tendon_stable_step(model: Model):
    """Stable step of the explicit tendon springs (``SolverFeatherstone(drive="explicit")``'s warning; ``None`` when
    unknown).

    Per tendon, its stiffest gain (``stiffness`` or, when limited, ``limit_ke``, plus the actuator's ``target_ke``;
    damping likewise) acts on the effective
    mass ``1 / (J H⁻¹ Jᵀ) + a`` along the tendon at the model's initial configuration (``J = ∂L̇/∂q̇``, ``H`` with
    joint armature, ``a`` the tendon's own armature: ``J (H + a JᵀJ)⁻¹ Jᵀ = s / (1 + a s)``), checked with
    :func:`~jaxart.solvers.stability.oscillator_stable_step`.
    """
    from jaxart.dynamics.layout import dynamics_layout
    from jaxart.dynamics.mass_matrix import eval_mass_matrix
    from jaxart.kinematics import eval_fk
    from jaxart.solvers.stability import StableStep, oscillator_stable_step

    t = model.tendon
    if not t.tendon_count or model.joint_dof_count == 0:
        return None
    try:
        with jax.ensure_compile_time_eval():
            gains = [np.asarray(getattr(model, f"tendon_{f}"), float)
                     for f in ("stiffness", "limit_ke", "damping", "limit_kd", "limit_lower", "limit_upper",
                               "target_ke", "target_kd", "armature")]
            state = eval_fk(model, model.joint_q, model.joint_qd, model.state())
            no_arm = model.replace(tendon_armature=jnp.zeros_like(model.tendon_armature))  # ``a`` enters below
            h = np.asarray(eval_mass_matrix(no_arm, state, include_armature=True))

            def speed(qd):
                s = eval_fk(model, state.joint_q, qd, state)
                return _kinematics(model, s.joint_q, s.joint_qd, s.body_q, s.body_qd)[1]

            jac = np.asarray(jax.jacfwd(speed)(jnp.zeros_like(model.joint_qd)))
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None
    nd = model.joint_dof_count
    full = np.eye(nd + 1)
    for a, idx in enumerate(np.asarray(dynamics_layout(model).dof_index)):
        keep = idx < nd
        full[np.ix_(idx[keep], idx[keep])] = h[a][np.ix_(keep, keep)]
    inv_m = np.einsum("ti,ti->t", jac, np.linalg.solve(full[:nd, :nd], jac.T).T)
    best = None
    for k in range(t.tendon_count):
        if inv_m[k] <= 0.0:
            continue
        limited = gains[4][k] > -1e10 or gains[5][k] < 1e10
        stiff = max(gains[0][k], gains[1][k] if limited else 0.0) + gains[6][k]
        damp = max(gains[2][k], gains[3][k] if limited else 0.0) + gains[7][k]
        mass = 1.0 / inv_m[k] + gains[8][k]
        step = StableStep(oscillator_stable_step(stiff, damp, mass),
                          f"tendon {t.tendon_label[k]!r} (stiffness {stiff:.3g}, damping {damp:.3g} on effective "
                          f"mass {mass:.3g})")
        if np.isfinite(step.dt) and (best is None or step.dt < best.dt):
            best = step
    return best
