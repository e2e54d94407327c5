"""Tendons of the MuJoCo bridge: jaxart FIXED/SPATIAL tendons → MuJoCo ``<fixed>``/``<spatial>`` tendons.

* FIXED → ``wrap_joint(joint, coef)`` per entry (the bridge's hinge/slide ``qpos0`` is 0, so
  MuJoCo's ``Σ coef·qpos`` equals jaxart's ``Σ c q``).
* SPATIAL → one new site per attachment point (``<tendon label>__p<i>``, on the point's MuJoCo body, at
  the point re-expressed in that body's MuJoCo frame) and ``wrap_site`` through them in order; a pulley →
  ``wrap_pulley(divisor)``; a wrapping sphere / cylinder → a new massless, non-colliding geom ``<label>__g<i>`` of
  the same radius and axis on that body and ``wrap_geom`` (with a new side site ``<label>__s<i>`` on the side
  point's own body; inside the geom it selects MuJoCo's inside wrapping, as in jaxart).
* ``stiffness``, ``damping``, ``springlength`` (already resolved by ``finalize``) are copied; a finite
  length range becomes ``limited`` with ``range``, and ``limit_ke > 0`` gives ``solref_limit = (−ke, −kd)``
  (direct stiffness/damping, as the bridge maps joint limits). MuJoCo's limit is a soft constraint
  (scaled by ``solimp``), jaxart's a penalty force: the two agree only approximately at a limit.
* ``frictionloss``, ``armature`` and ``margin`` are copied. Armature and margin have the same meaning in both
  (``a JᵀJ`` in the inertia plus ``a Jᵀ J̇q̇``; a limit active within ``margin`` of the range, acting on
  ``dist − margin``). Friction is MuJoCo's dry-friction constraint (force in ``[−μ, μ]``) and jaxart's smooth
  ``−μ tanh(L̇/ε)``: they agree while the tendon slips (``|L̇| ≫ ε``), and both hold a load below ``μ`` (MuJoCo
  to its soft-constraint creep, jaxart creeping at ``L̇ ≈ ε F/μ``).
* Tendon actuators: every tendon gets a motor ``<label>__f`` (gain 1, ``ctrl = Control.tendon_f``); a tendon
  with ``target_ke > 0`` a position servo ``<label>__pos`` (gain ``ke``, bias ``(0, −ke, 0)``, ``ctrl =
  tendon_target_length``) and with ``target_kd > 0`` a velocity servo ``<label>__vel`` (gain ``kd``, bias
  ``(0, 0, −kd)``, ``ctrl = tendon_target_velocity``): together ``tendon_f + ke (L* − L) + kd (L̇* − L̇)``.
  A tendon with a finite ``tendon_effort_limit`` instead gets one actuator ``<label>__act`` (gain 1, bias
  ``(0, −ke, −kd)``, ``ctrl = tendon_f + ke L* + kd L̇*``, ``forcerange = ±effort_limit``), so MuJoCo clamps the
  same total force as jaxart.
* DISTANCE joints (tree or loop) with a finite ``min_distance`` / ``max_distance`` (the first DOF's
  ``joint_limit_lower`` / ``joint_limit_upper``; negative = that side unlimited, Newton's rule): MuJoCo has no
  distance equality, so a spatial tendon ``<joint>__distance`` through a site ``<joint>__dist_parent`` at the parent
  anchor and a site ``<joint>__dist_child`` at the child anchor (its length is the anchor distance) gets
  ``range = [min, max]`` (``0`` / ``1e10`` for an unlimited side). ``limit_ke = limit_kd = 0`` (jaxart's hard limit)
  keeps MuJoCo's default ``solref``: a stiff soft constraint (a 1 kg mass swinging on a 1 m rope stretches it by
  1.6 mm; a strut stopping a 1.8 m/s approach is overrun by 12 mm). Otherwise ``solref_limit = (−ke, −kd)``,
  MuJoCo's direct stiffness / damping as for joint and tendon limits, an approximation: along a limit row of
  effective mass ``m`` MuJoCo's acceleration is ``(1 − d) a₀ − ke r − kd ṙ`` at full impedance (``d`` = solimp's
  ``dmax``, ``a₀`` the unconstrained acceleration, ``r`` the violation) where jaxart's penalty gives
  ``a₀ − (ke r + kd ṙ)/m``: equal rates for ``m = 1``, but MuJoCo also cancels most of the load, so a loaded soft
  limit sags less.
"""

from __future__ import annotations

import jax.numpy as jnp
import mujoco
import numpy as np

from jaxart.sim.enums import JointType
from jaxart.sim.tendons import TendonPathKind, TendonType
from jaxart.sim.validate import np_quat_between, np_quat_rotate, np_transform_inverse
from jaxart.solvers.mujoco.equality import EqualityFrames, mj_joint
from jaxart.solvers.mujoco.joints import DEFAULT_SOLREF, mj_joint_names
from jaxart.solvers.mujoco.loops import anchor_site
from jaxart.solvers.mujoco.shapes import wxyz

_UNLIMITED = 1e10


def add_tendons(spec: mujoco.MjSpec, h, body_joint: dict, rec) -> None:
    """Add the model's tendons (and the sites of spatial tendons) to ``spec``.

    Args:
        spec: The spec being built (bodies and joints already added).
        h: The converter's host copy of the model.
        body_joint: ``{body: tree joint}``.
        rec: The layout recorder (``rec.body`` filled).

    Raises:
        NotImplementedError: Attachments on massless links folded into another MuJoCo body, or fixed
            tendons on joints outside every articulation.
    """
    model = h.model
    t = model.tendon
    if not t.tendon_count:
        return
    fr = EqualityFrames(h, body_joint, rec)
    jstart, astart = np.asarray(t.tendon_joint_start), np.asarray(t.tendon_attachment_start)
    joints, dofs = np.asarray(t.tendon_joint), np.asarray(t.tendon_joint_dof)
    coef = np.asarray(model.tendon_joint_coef, np.float64)
    p = {f: np.asarray(getattr(model, f"tendon_{f}"), np.float64)
         for f in ("stiffness", "damping", "springlength", "limit_lower", "limit_upper", "limit_ke", "limit_kd",
                   "target_ke", "target_kd", "target_length", "target_velocity", "effort_limit", "frictionloss",
                   "armature", "margin")}
    # rows 0-2: defaults of (tendon_f, target length, target velocity); rows 3-4: (ke, kd) of combined actuators
    rec.ten_default = np.stack([np.zeros(t.tendon_count), p["target_length"], p["target_velocity"],
                                p["target_ke"], p["target_kd"]])
    for k in range(t.tendon_count):
        label = t.tendon_label[k]
        what = f"SolverMuJoCo: tendon {label!r}"
        ten = spec.add_tendon(name=label)
        ten.stiffness = [p["stiffness"][k], 0.0, 0.0]
        ten.damping = [p["damping"][k], 0.0, 0.0]
        ten.springlength = p["springlength"][k].tolist()
        ten.frictionloss = p["frictionloss"][k]
        ten.armature = p["armature"][k]
        ten.margin = p["margin"][k]
        lo, hi = p["limit_lower"][k], p["limit_upper"][k]
        limited = lo > -_UNLIMITED or hi < _UNLIMITED
        ten.limited = mujoco.mjtLimited.mjLIMITED_TRUE if limited else mujoco.mjtLimited.mjLIMITED_FALSE
        if limited:
            ten.range = [max(lo, -_UNLIMITED), min(hi, _UNLIMITED)]
            ke, kd = p["limit_ke"][k], p["limit_kd"][k]
            ten.solref_limit = [-ke, -kd] if ke > 0.0 else list(DEFAULT_SOLREF)
        _add_actuators(spec, rec, label, k, p["target_ke"][k], p["target_kd"][k], p["effort_limit"][k])
        if int(t.tendon_type[k]) == TendonType.FIXED:
            for e in range(jstart[k], jstart[k + 1]):
                mj_joint(h, int(joints[e]), what)  # raises for loop joints without a MuJoCo joint
                ten.wrap_joint(mj_joint_names(h, int(joints[e]))[int(dofs[e])], float(coef[e]))
            continue
        _add_path(spec, ten, h, fr, label, range(astart[k], astart[k + 1]), what)


def _add_path(spec: mujoco.MjSpec, ten, h, fr, label: str, entries: range, what: str) -> None:
    """The wrap objects of a spatial tendon (module docstring): sites, pulleys and massless non-colliding geoms."""
    t, model = h.model.tendon, h.model
    bodies, kinds = np.asarray(t.tendon_attachment_body), np.asarray(t.tendon_attachment_kind)
    points = np.asarray(model.tendon_attachment_point, np.float64)
    axes = np.asarray(model.tendon_attachment_axis, np.float64)
    params = np.asarray(model.tendon_attachment_param, np.float64)

    def site(e: int, name: str) -> str:
        b = int(bodies[e])
        body = spec.worldbody if b < 0 else spec.body(fr.name(b, what))
        body.add_site(name=name, pos=fr.point(b, points[e]), size=[0.005, 0.0, 0.0])
        return name

    for i, e in enumerate(entries):
        kind = int(kinds[e])
        if kind == TendonPathKind.SITE:
            ten.wrap_site(site(e, f"{label}__p{i}"))
        elif kind == TendonPathKind.PULLEY:
            ten.wrap_pulley(float(params[e]))
        elif kind in (TendonPathKind.SPHERE, TendonPathKind.CYLINDER):
            b = int(bodies[e])
            body = spec.worldbody if b < 0 else spec.body(fr.name(b, what))
            off = fr.offset(b)
            axis = np_quat_rotate(np_transform_inverse(off)[3:], axes[e]) if kind == TendonPathKind.CYLINDER else None
            quat = [1.0, 0.0, 0.0, 0.0] if axis is None else wxyz(np_quat_between(np.array([0.0, 0.0, 1.0]), axis))
            r = float(params[e])
            geom = body.add_geom(name=f"{label}__g{i}", pos=fr.point(b, points[e]), quat=quat, size=[r, r, 0.0],
                                 type=mujoco.mjtGeom.mjGEOM_SPHERE if axis is None else mujoco.mjtGeom.mjGEOM_CYLINDER)
            geom.contype, geom.conaffinity, geom.density = 0, 0, 0.0
            has_side = e + 1 < len(kinds) and int(kinds[e + 1]) == TendonPathKind.SIDE
            ten.wrap_geom(geom.name, site(e + 1, f"{label}__s{i}") if has_side else "")


def add_distance_tendons(spec: mujoco.MjSpec, h, fr) -> None:
    """One limited spatial tendon ``<joint>__distance`` per enabled DISTANCE joint (tree or loop) with a finite
    distance limit (module docstring).

    Args:
        spec: The spec (bodies added; after the model's own tendons, so MuJoCo's tendon ``k`` is jaxart's).
        h: The converter's host copy of the model.
        fr: The equality module's ``EqualityFrames``.
    """
    for j in np.flatnonzero(h.jtype == int(JointType.DISTANCE)):
        if not h.topo.joint_enabled.array[j]:
            continue
        d = int(h.qd_start[j])
        lo, hi = float(h.joint_limit_lower[d]), float(h.joint_limit_upper[d])
        has_lo, has_hi = 0.0 <= lo < _UNLIMITED, 0.0 <= hi < _UNLIMITED  # Newton: negative = that side unlimited
        if not (has_lo or has_hi):
            continue
        label = h.joint_label[j]
        what = f"SolverMuJoCo: DISTANCE joint {label!r}"
        ref = anchor_site(spec, fr, int(h.parent[j]), h.joint_X_p[j], f"{label}__dist_parent", what)
        site = anchor_site(spec, fr, int(h.child[j]), h.joint_X_c[j], f"{label}__dist_child", what)
        ten = spec.add_tendon(name=f"{label}__distance")
        ten.wrap_site(ref)
        ten.wrap_site(site)
        ten.limited = mujoco.mjtLimited.mjLIMITED_TRUE
        ten.range = [lo if has_lo else 0.0, hi if has_hi else _UNLIMITED]
        ke, kd = float(h.joint_limit_ke[d]), float(h.joint_limit_kd[d])
        ten.solref_limit = [-ke, -kd] if ke > 0.0 or kd > 0.0 else list(DEFAULT_SOLREF)


def _add_actuators(spec: mujoco.MjSpec, rec, label: str, k: int, ke: float, kd: float, limit: float) -> None:
    """The tendon's motor and (for non-zero gains) position / velocity servos, or one combined actuator when the
    effort is limited (module docstring)."""
    if np.isfinite(limit):
        acts = ((3, "act", 1.0, [0.0, -ke, -kd]),)
    else:
        acts = ((0, "f", 1.0, None), (1, "pos", ke, [0.0, -ke, 0.0]), (2, "vel", kd, [0.0, 0.0, -kd]))
    for kind, suffix, gain, bias in acts:
        if kind in (1, 2) and gain <= 0.0:
            continue
        name = f"{label}__{suffix}"
        act = spec.add_actuator(name=name, target=label, trntype=mujoco.mjtTrn.mjTRN_TENDON)
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.gainprm = np.concatenate([[gain], np.zeros(9)])
        if bias is not None:
            act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
            act.biasprm = np.concatenate([bias, np.zeros(7)])
        if np.isfinite(limit):
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.forcerange = [-limit, limit]
        rec.ten_act.append((name, k, kind))


def tendon_ctrl(layout, ctrl: jnp.ndarray, control) -> jnp.ndarray:
    """``ctrl`` with the tendon actuators' controls set from ``control`` (``None`` fields: the model defaults).

    Args:
        layout: The bridge's :class:`~jaxart.solvers.mujoco.layout.MjLayout`.
        ctrl: ``(nu,)`` controls of the joint actuators.
        control: The jaxart :class:`~jaxart.Control`.

    Returns:
        The ``(nu,)`` controls.
    """
    if not layout.ten_act.size:
        return ctrl
    fields = (control.tendon_f, control.tendon_target_length, control.tendon_target_velocity)
    rows = jnp.stack([jnp.asarray(layout.ten_default[i], ctrl.dtype) if f is None else f.astype(ctrl.dtype)
                      for i, f in enumerate(fields)])
    ke, kd = (jnp.asarray(layout.ten_default[i], ctrl.dtype) for i in (3, 4))
    rows = jnp.concatenate([rows, (rows[0] + ke * rows[1] + kd * rows[2])[None]])  # kind 3: combined actuator
    return ctrl.at[layout.ten_act].set(rows[layout.ten_kind, layout.ten_src])


def add_tendon_fixed(builder, joints, **kwargs) -> int:
    """Newton 1.8's ``newton.solvers.mujoco.add_tendon_fixed(builder, joints, ...)``: forwards to
    :meth:`jaxart.ModelBuilder.add_tendon_fixed` (``joints`` as ``(joint, coef)`` pairs)."""
    return builder.add_tendon_fixed(joints, **kwargs)


def add_tendon_spatial(builder, path, **kwargs) -> int:
    """Newton 1.8's ``newton.solvers.mujoco.add_tendon_spatial(builder, path, ...)``: forwards to
    :meth:`jaxart.ModelBuilder.add_tendon_spatial` (``path`` of ``TendonWrapSite`` / ``TendonWrapGeom`` /
    ``TendonWrapPulley`` entries)."""
    return builder.add_tendon_spatial(path, **kwargs)
