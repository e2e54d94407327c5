"""Model-level MuJoCo features jaxart cannot represent (collected for the importer's one warning).

Purely visual elements (lights, cameras, materials, textures, geom colours/groups) and MuJoCo
solver settings (integrator, iterations, ``solimp``, ``condim``, ``solmix``, ``priority``) have no
jaxart counterpart by design and are not reported. The medium (``density``, ``viscosity``, ``wind``) is imported
(``Model.fluid_*``) with both fluid models; ``fluidshape="ellipsoid"`` on geoms without semi-axes (meshes, planes,
height fields) is reported.
"""

from __future__ import annotations

import mujoco
import numpy as np


def _names(m, kind: str, n: int) -> str:
    names = [getattr(m, kind)(i).name or f"#{i}" for i in range(n)]
    shown = ", ".join(repr(x) for x in names[:6])
    return shown + (f", … ({n} total)" if n > 6 else "")


def gravity_along_up(m, up_vector) -> tuple[float | None, str | None]:
    """``opt.gravity`` as a signed magnitude along ``up_vector``, or an issue when it is not along it."""
    g = np.asarray(m.opt.gravity, dtype=np.float64)
    up = np.asarray(up_vector, dtype=np.float64)
    along = float(g @ up)
    if np.linalg.norm(g - along * up) > 1e-9 * max(1.0, np.linalg.norm(g)):
        return None, f"gravity {g.tolist()} is not along the builder's up axis {up.tolist()} (builder gravity kept)"
    return along, None


def model_issues(m) -> list[str]:
    """Counted model elements without a jaxart equivalent."""
    out = []
    # equalities: jaxart.io.mjcf.equality.equality_issues; tendons: jaxart.io.mjcf.tendons.tendon_issues;
    # sensors: jaxart.io.mjcf.sensors.sensor_issues
    counts = (("flex", m.nflex, "flex(es)"), ("skin", m.nskin, "skin(s)"))
    for kind, n, what in counts:  # keyframes are returned by add_mjcf (jaxart.io.mjcf.keyframes)
        if n:
            out.append(f"{n} {what}: {_names(m, kind, n)}")
    if m.nplugin:
        out.append(f"{m.nplugin} plugin instance(s)")
    act_gc = np.flatnonzero(np.asarray(getattr(m, "jnt_actgravcomp", np.zeros(0)), bool))
    if act_gc.size and np.any(m.body_gravcomp != 0.0):
        joints = ", ".join(repr(m.joint(int(j)).name or f"#{int(j)}") for j in act_gc[:6])
        out.append(f"actuatorgravcomp on {act_gc.size} joint(s) ({joints}): gravity compensation is applied as a "
                   "passive body force (not through actuators, not clamped by actuatorfrcrange)")
    ellipsoid = [g for g in range(m.ngeom) if float(m.geom_fluid[g, 0]) > 0.0 and fluid_semiaxes(m, g) is None]
    if (m.opt.density or m.opt.viscosity) and ellipsoid:
        names = [m.geom(g).name or f"#{g}" for g in ellipsoid]
        out.append(f"fluidshape=\"ellipsoid\" on {len(ellipsoid)} mesh/plane/hfield geom(s) {names[:6]}: no fluid "
                   "force on them")
    return out


def fluid_semiaxes(m, g: int) -> np.ndarray | None:
    """Semi-axes [m] of geom ``g``'s fluid ellipsoid (MuJoCo's), or ``None`` for types jaxart does not give one."""
    t, size = int(m.geom_type[g]), np.asarray(m.geom_size[g], np.float64)
    gt = mujoco.mjtGeom
    if t == gt.mjGEOM_SPHERE:
        return np.full(3, size[0])
    if t == gt.mjGEOM_CAPSULE:
        return np.array([size[0], size[0], size[1] + size[0]])
    if t == gt.mjGEOM_CYLINDER:
        return np.array([size[0], size[0], size[1]])
    if t in (gt.mjGEOM_ELLIPSOID, gt.mjGEOM_BOX):
        return size.copy()
    return None
