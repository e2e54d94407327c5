"""MJCF ``<tendon>`` import: ``<fixed>`` and ``<spatial>`` tendons (:mod:`jaxart.sim.tendons`).

Mapping (compiled ``MjModel`` → :meth:`~jaxart.ModelBuilder.add_tendon_fixed` /
:meth:`~jaxart.ModelBuilder.add_tendon_spatial`):

* ``<fixed>``: each ``<joint joint= coef=>`` entry → ``((joint, dof), coef)``: the hinge/slide's jaxart joint and
  its DOF there (0 for a scalar joint, its position in a D6 joint that a multi-joint body became); jaxart's
  coordinates are MuJoCo's ``qpos``, so the lengths agree.
* ``<spatial>``: ``<site>`` entries → the sites' positions on their (jaxart) bodies; ``<geom geom= sidesite=>`` →
  :class:`~jaxart.sim.builder_tendons.TendonWrapGeom` of the geom's imported shape (and the side site's shape, on
  any body; a side site inside the geom selects MuJoCo's inside wrapping, as in MuJoCo);
  ``<pulley divisor=>`` → :class:`~jaxart.sim.builder_tendons.TendonWrapPulley`.
* Actuators on the tendon (:func:`~jaxart.io.mjcf.actuators.map_tendon_actuators`): position / velocity servos
  → ``target_ke``/``target_kd``/``target_length``; a motor's force ``gain·gear·ctrl`` is ``Control.tendon_f``;
  ``forcerange`` (a motor's ``ctrlrange``) → ``effort_limit``.
* ``stiffness``, ``damping``, ``springlength`` (the compiled ``tendon_lengthspring``, so ``-1`` is
  already resolved at ``qpos0``), ``limited``/``range`` → length limits with ``solreflimit`` →
  ``limit_ke/kd`` by :func:`~jaxart.io.mjcf.convert.solref_gains` (effective mass ``1/tendon_invweight0``).
* ``frictionloss``, ``armature``, ``margin`` → the same builder arguments (MuJoCo's meaning; friction becomes
  jaxart's smooth Coulomb law, ``solreffriction``/``solimpfriction`` are not used).

Reported (and ignored): nonlinear stiffness/damping polynomials.
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.io.mjcf.actuators import map_tendon_actuators
from jaxart.io.mjcf.convert import pose, solref_gains
from jaxart.io.mjcf.refs import MjcfRefs, element_key
from jaxart.sim.builder_tendons import TendonWrapGeom, TendonWrapPulley
from jaxart.sim.enums import JointTargetMode

_JOINT, _SITE = int(mujoco.mjtWrap.mjWRAP_JOINT), int(mujoco.mjtWrap.mjWRAP_SITE)
_PULLEY = int(mujoco.mjtWrap.mjWRAP_PULLEY)
_GEOMS = (int(mujoco.mjtWrap.mjWRAP_SPHERE), int(mujoco.mjtWrap.mjWRAP_CYLINDER))


def _name(m, i: int) -> str:
    return element_key(m.tendon(i), i)


def _wraps(m, i: int) -> list[int]:
    adr = int(m.tendon_adr[i])
    return [int(m.wrap_type[adr + k]) for k in range(int(m.tendon_num[i]))]


def tendon_issues(m) -> list[str]:
    """Tendon features jaxart cannot represent (for the importer's warning)."""
    _, out = map_tendon_actuators(m)
    for i in range(m.ntendon):
        for what in ("tendon_stiffnesspoly", "tendon_dampingpoly"):
            if hasattr(m, what) and np.any(np.asarray(getattr(m, what)[i]) != 0.0):
                out.append(f"tendon {_name(m, i)!r}: nonlinear {what[7:]} (ignored)")
    return out


def add_tendons(builder, m, refs: MjcfRefs, *, min_timeconst: float) -> dict[str, int]:
    """Add the model's supported tendons to ``builder`` (after bodies and joints).

    Args:
        builder: Target builder.
        m: The compiled ``MjModel``.
        refs: The import's references.
        min_timeconst: Lower clamp of ``solreflimit`` time constants [s].

    Returns:
        ``{MuJoCo name or "#<id>": tendon index}`` of the imported tendons.
    """
    out: dict[str, int] = {}
    drives, _ = map_tendon_actuators(m)
    for i in range(m.ntendon):
        adr, num = int(m.tendon_adr[i]), int(m.tendon_num[i])
        inv_w = float(m.tendon_invweight0[i])
        limited = bool(m.tendon_limited[i])
        ke, kd = solref_gains(m.tendon_solref_lim[i], 1.0 / inv_w if inv_w > 0.0 else 1.0, min_timeconst=min_timeconst)
        kw = dict(label=refs.label_of(m.tendon(i)),
                  stiffness=float(np.ravel(m.tendon_stiffness[i])[0]), damping=float(np.ravel(m.tendon_damping[i])[0]),
                  springlength=np.asarray(m.tendon_lengthspring[i], np.float64), limited=limited,
                  limit_range=np.asarray(m.tendon_range[i], np.float64) if limited else (0.0, 0.0),
                  limit_ke=ke, limit_kd=kd, frictionloss=float(m.tendon_frictionloss[i]),
                  armature=float(m.tendon_armature[i]), margin=float(m.tendon_margin[i]),
                  **_drive_kwargs(drives.get(i)))
        if _wraps(m, i)[0] == _JOINT:
            pairs = [(refs.joint_dof(builder, m, int(m.wrap_objid[adr + k]), f"tendon {_name(m, i)!r}"),
                      float(m.wrap_prm[adr + k])) for k in range(num)]
            out[_name(m, i)] = builder.add_tendon_fixed(pairs, **kw)
        else:
            out[_name(m, i)] = builder.add_tendon_spatial(_spatial_path(m, refs, adr, num), **kw)
    return out


def _spatial_path(m, refs: MjcfRefs, adr: int, num: int) -> list:
    """Builder path of a spatial tendon's wrap objects (module docstring)."""
    path = []
    for k in range(num):
        w, obj = int(m.wrap_type[adr + k]), int(m.wrap_objid[adr + k])
        if w == _PULLEY:
            path.append(TendonWrapPulley(float(m.wrap_prm[adr + k])))
        elif w in _GEOMS:
            side = int(round(float(m.wrap_prm[adr + k])))
            path.append(TendonWrapGeom(refs.geom_shape[obj], refs.site_shape[side] if side >= 0 else None))
        else:
            b, x = refs.body_of(int(m.site_bodyid[obj]), pose(m.site_pos[obj], m.site_quat[obj]))
            path.append((b, x[:3]))
    return path


def _drive_kwargs(drive) -> dict:
    """Builder ``target_*``/``effort_limit`` arguments of a tendon's imported actuators (none without one)."""
    if drive is None:
        return {}
    pos = drive.mode in (JointTargetMode.POSITION, JointTargetMode.POSITION_VELOCITY)
    limit = drive.effort_limit if np.isfinite(drive.effort_limit) else None
    return dict(target_ke=drive.ke, target_kd=drive.kd, target_length=drive.target_q if pos else None,
                effort_limit=limit)
