"""Stable-step estimates of the explicitly integrated springs, and the warning when ``dt`` exceeds them.

A spring–damper ``m ẍ + c ẋ + k x = 0`` advanced by semi-implicit (symplectic) Euler is stable iff
``dt < (2/ω)(√(1 + ζ²) − ζ)`` with ``ω = √(k/m)``, ``ζ = c / (2 m ω)`` (Jury's conditions on the
step matrix: ``dt c/m < 2`` and ``dt² k/m + 2 dt c/m < 4``). The estimates apply it to the stiffest
spring of each kind against the lightest mass it moves:

* explicit penalty contact (``SolverSemiImplicit``, ``SolverFeatherstone(contact="explicit")``): every
  candidate shape pair with Newton's mean materials ``ke``, ``kd`` (and the viscous friction ``kf``:
  ``dt < 2m/kf``) on the mass of its dynamic body (the reduced mass when both move);
* explicit drives, limits and passive springs (``SolverFeatherstone(drive="explicit")``): per DOF, its
  stiffest gain on the joint-space inertia ``H_dd + armature`` at the model's initial configuration;
* the joint attachment springs of ``SolverSemiImplicit`` on the lightest moving body.

These are estimates for the warning (a point contact on a link moves an effective mass that depends on
the configuration), not guarantees; the implicit modes (``SolverFeatherstone``'s defaults) have no such
limit.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["StableStep", "attachment_stable_step", "contact_stable_step", "drive_stable_step",
           "oscillator_stable_step", "tendon_stable_step", "warn_if_unstable"]


@dataclasses.dataclass(frozen=True)
class StableStep:
    """The estimated largest stable step [s] and the element that sets it (for the message)."""

    dt: float
    reason: str


def oscillator_stable_step(k: float, c: float, m: float) -> float:
    """Largest stable semi-implicit Euler step [s] of ``m ẍ + c ẋ + k x = 0`` (``inf`` if unconstrained)."""
    if m <= 0.0 or (k <= 0.0 and c <= 0.0):
        return math.inf
    if k <= 0.0:
        return 2.0 * m / c
    omega = math.sqrt(k / m)
    zeta = c / (2.0 * m * omega)
    return (2.0 / omega) * (math.sqrt(1.0 + zeta * zeta) - zeta)


def _concrete(x) -> np.ndarray | None:
    try:
        return np.asarray(x, dtype=float)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError, TypeError):
        return None


def _smallest(candidates) -> StableStep | None:
    best = min(candidates, key=lambda s: s.dt, default=None)
    return None if best is None or not math.isfinite(best.dt) else best


def contact_stable_step(model) -> StableStep | None:
    """Stable step of the explicit penalty contact law over all candidate shape pairs (``None``: no pair)."""
    from jaxart.collision.pairs import candidate_pairs, explicit_pair_index

    topo = model.topology
    mats = [_concrete(getattr(model, f"shape_material_{k}")) for k in ("ke", "kd", "kf")]
    pair_mats = [_concrete(getattr(model, f"contact_pair_{k}")) for k in ("ke", "kd", "kf")]
    mass = _concrete(model.body_mass)
    if mass is None or any(m is None for m in mats + pair_mats):
        return None  # traced model (e.g. under vmap): estimated where it is built concretely
    ke, kd, kf = mats
    body = np.asarray(topo.shape_body.array)
    pairs = candidate_pairs(topo)
    out = []
    for (a, b), p in zip(pairs, explicit_pair_index(topo, pairs), strict=True):
        ma = mass[body[a]] if body[a] >= 0 else math.inf
        mb = mass[body[b]] if body[b] >= 0 else math.inf
        m = 1.0 / (1.0 / ma + 1.0 / mb) if math.isfinite(ma) or math.isfinite(mb) else math.inf
        if not (0.0 < m < math.inf):
            continue
        k, c, f = (float(x[p]) for x in pair_mats) if p >= 0 else (0.5 * (x[a] + x[b]) for x in (ke, kd, kf))
        dt = min(oscillator_stable_step(k, c, m), 2.0 * m / f if f > 0.0 else math.inf)
        out.append(StableStep(dt, f"contact of shapes {topo.shape_label[a]!r} and {topo.shape_label[b]!r} "
                                  f"(ke={k:.3g} N/m, kd={c:.3g} N·s/m, kf={f:.3g} N·s/m on {m:.3g} kg)"))
    return _smallest(out)


def drive_stable_step(model) -> StableStep | None:
    """Stable step of explicit drives, limits and passive springs on the joint-space inertia diagonal."""
    from jaxart.dynamics.mass_matrix import eval_mass_matrix

    gains = [_concrete(getattr(model, f)) for f in ("joint_target_ke", "joint_target_kd", "joint_limit_ke",
                                                     "joint_limit_kd", "joint_stiffness", "joint_damping",
                                                     "joint_armature")]
    if any(g is None for g in gains) or model.joint_dof_count == 0:
        return None
    tke, tkd, lke, lkd, stiff, damp, arm = gains
    from jaxart.dynamics.layout import dynamics_layout

    lay = dynamics_layout(model)
    try:  # evaluated eagerly even when the solver is built inside a traced function (concrete model)
        with jax.ensure_compile_time_eval():
            h = np.asarray(eval_mass_matrix(model, model.state(), include_armature=False))  # (A, D, D)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None
    diag = np.zeros(model.joint_dof_count + 1)
    np.add.at(diag, lay.dof_index, np.diagonal(h, axis1=-2, axis2=-1))  # blocks → global DOFs (padding last)
    diag = diag[:-1] + arm
    labels, starts = model.topology.joint_label, model.topology.joint_qd_start.array
    out = []
    for d in range(model.joint_dof_count):
        k, c = max(tke[d], lke[d], stiff[d]), max(tkd[d] + damp[d], lkd[d])
        dt = oscillator_stable_step(k, c, float(diag[d]))
        joint = int(np.searchsorted(starts, d, side="right") - 1)
        out.append(StableStep(dt, f"DOF {d - starts[joint]} of joint {labels[joint]!r} (stiffness {k:.3g}, "
                                  f"damping {c:.3g} on inertia {diag[d]:.3g})"))
    return _smallest(out)


def attachment_stable_step(model, ke: float, kd: float) -> StableStep | None:
    """Stable step of ``SolverSemiImplicit``'s joint attachment springs.

    Per joint, the linear spring acts at the child anchor on the effective mass
    ``1 / (1/m + |r|²/I_min)`` (``r``: anchor offset from the COM, ``I_min``: smallest principal moment)
    and the angular spring (damping ×0.01, Newton) on ``I_min``.
    """
    mass, inertia, com, x_c = (_concrete(getattr(model, f)) for f in ("body_mass", "body_inertia", "body_com",
                                                                         "joint_X_c"))
    if mass is None or inertia is None or com is None or x_c is None:
        return None
    topo = model.topology
    out = []
    for j, b in enumerate(np.asarray(topo.joint_child.array)):
        if mass[b] <= 0.0:
            continue
        i_min = float(np.linalg.eigvalsh(inertia[b])[0])
        r2 = float(np.sum((x_c[j, :3] - com[b]) ** 2))
        m_eff = 1.0 / (1.0 / mass[b] + (r2 / i_min if i_min > 0.0 else math.inf))
        dt = min(oscillator_stable_step(ke, kd, m_eff), oscillator_stable_step(ke, 0.01 * kd, i_min))
        out.append(StableStep(dt, f"joint attachment springs (ke={ke:.3g}, kd={kd:.3g}) of joint "
                                  f"{topo.joint_label[j]!r} on body {topo.body_label[b]!r} ({mass[b]:.3g} kg, "
                                  f"smallest principal inertia {i_min:.3g} kg·m²)"))
    return _smallest(out)


def warn_if_unstable(solver, dt, estimate: StableStep | None, what: str) -> None:
    """Warn once per solver when a concrete ``dt`` exceeds ``estimate`` (traced ``dt`` is not checked)."""
    step = _concrete(dt)
    if estimate is None or step is None or step.ndim or float(step) <= estimate.dt:
        return
    warned = solver.__dict__.setdefault("_stable_step_warned", set())
    if what in warned:
        return
    warned.add(what)
    # frames: warn_if_unstable ← _advance ← the step lambda ← step_with_inputs ← SolverBase.step ← caller
    warnings.warn(f"{type(solver).__name__}: dt = {float(step):.3g} s exceeds the estimated stable step "
                  f"{estimate.dt:.3g} s of its explicit {what}, set by the {estimate.reason}; expect energy gain "
                  "or NaN. Use a smaller dt, or SolverFeatherstone's implicit defaults "
                  "(contact='implicit', drive='implicit').", RuntimeWarning, stacklevel=6)


def tendon_stable_step(model):
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
    from jaxart.dynamics.tendon_forces import tendon_kinematics
    from jaxart.kinematics import eval_fk

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
                return tendon_kinematics(model, s.joint_q, s.joint_qd, s.body_q, s.body_qd)[1]

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
