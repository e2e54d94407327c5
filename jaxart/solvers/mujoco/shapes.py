"""Shapes of the MuJoCo bridge: jaxart geometry → MuJoCo geoms, sites and meshes.

As in Newton's MuJoCo-integration mapping tables.

See :mod:`jaxart.solvers.mujoco.convert` for the overall mapping.
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.sim.builder_shapes import SHAPE_FLAG_SITE
from jaxart.sim.enums import GeoType as G
from jaxart.sim.validate import np_transform_inverse, np_transform_mul
from jaxart.solvers.mujoco.hfield import add_hfield

DEFAULT_SOLREF = (0.02, 1.0)
_GEOMS = {G.SPHERE: mujoco.mjtGeom.mjGEOM_SPHERE, G.CAPSULE: mujoco.mjtGeom.mjGEOM_CAPSULE,
          G.CYLINDER: mujoco.mjtGeom.mjGEOM_CYLINDER, G.BOX: mujoco.mjtGeom.mjGEOM_BOX,
          G.ELLIPSOID: mujoco.mjtGeom.mjGEOM_ELLIPSOID, G.PLANE: mujoco.mjtGeom.mjGEOM_PLANE,
          G.MESH: mujoco.mjtGeom.mjGEOM_MESH, G.CONVEX_MESH: mujoco.mjtGeom.mjGEOM_MESH,
          G.HFIELD: mujoco.mjtGeom.mjGEOM_HFIELD}

def solref_from_ke_kd(ke: float, kd: float) -> tuple[float, float]:
    """Contact ``(timeconst, dampratio)`` from stiffness/damping; MuJoCo's default when either ≤ 0."""
    if ke > 0.0 and kd > 0.0:
        return 2.0 / kd, kd / (2.0 * np.sqrt(ke))
    return DEFAULT_SOLREF


def add_shapes(spec: mujoco.MjSpec, body, h, b: int, offset: np.ndarray, masks) -> None:
    """Geoms and sites of jaxart body ``b``; ``offset`` maps the jaxart body frame to the MuJoCo frame."""
    t_inv = np_transform_inverse(offset)
    for s in np.nonzero(h.shape_body == b)[0]:
        geo = G(int(h.shape_type[s]))
        label = h.shape_label[s]
        what = f"SolverMuJoCo: shape {label!r}"
        if geo not in _GEOMS:
            raise NotImplementedError(f"{what}: geometry {geo.name} has no MuJoCo mapping")
        x = np_transform_mul(t_inv, h.shape_transform[s])
        size = _geom_size(geo, h.shape_scale[s])
        if h.shape_flags[s] & SHAPE_FLAG_SITE:
            if geo in (G.PLANE, G.MESH, G.CONVEX_MESH, G.HFIELD):
                raise NotImplementedError(f"{what}: {geo.name} sites are not supported by MuJoCo")
            body.add_site(name=label, type=_GEOMS[geo], size=size, pos=x[:3], quat=wxyz(x[3:]))
            continue
        if geo == G.PLANE and b >= 0:
            raise ValueError(f"{what}: MuJoCo planes must be attached to the world body (body=-1), got body "
                             f"{h.body_label[b]!r}")
        if geo == G.HFIELD:
            x, hfield_name = add_hfield(spec, h, s, label, x)  # origin shifted by min_z (Newton's mapping)
        g = body.add_geom(name=label, type=_GEOMS[geo], size=size, pos=x[:3], quat=wxyz(x[3:]))
        if geo in (G.MESH, G.CONVEX_MESH):
            _add_mesh(spec, g, h, s, label)
        elif geo == G.HFIELD:
            g.hfieldname = hfield_name
        g.friction = [h.shape_material_mu[s], h.shape_material_mu_torsional[s], h.shape_material_mu_rolling[s]]
        g.solref = list(solref_from_ke_kd(float(h.shape_material_ke[s]), float(h.shape_material_kd[s])))
        g.margin = float(h.shape_margin[s])
        g.gap = 0.0
        g.contype = int(masks.contype[s])
        g.conaffinity = int(masks.conaffinity[s])


def _geom_size(geo, scale: np.ndarray) -> np.ndarray:
    if geo == G.PLANE:
        return np.array([scale[0] if scale[0] > 0 else 5.0, scale[1] if scale[1] > 0 else 5.0, 5.0])
    if geo in (G.MESH, G.CONVEX_MESH, G.HFIELD):
        return np.zeros(3)
    return np.asarray(scale, dtype=np.float64)


def _add_mesh(spec: mujoco.MjSpec, geom, h, s: int, label: str) -> None:
    src = h.model.meshes[s] if s < len(h.model.meshes) else None
    if src is None:
        raise ValueError(f"SolverMuJoCo: mesh shape {label!r} has no mesh data")
    mesh = spec.add_mesh(name=f"{label}_mesh")
    mesh.uservert = np.asarray(src.vertices, np.float64).reshape(-1).tolist()
    if np.size(src.indices):
        mesh.userface = np.asarray(src.indices, np.int64).reshape(-1).tolist()
    mesh.scale = np.asarray(h.shape_scale[s], np.float64)
    cap = getattr(src, "maxhullvert", None)
    mesh.maxhullvert = -1 if cap is None else int(cap)  # an explicit cap: MuJoCo collides jaxart's hull
    geom.meshname = mesh.name


def wxyz(q_xyzw: np.ndarray) -> np.ndarray:
    q = np.asarray(q_xyzw, dtype=np.float64)
    return np.array([q[3], q[0], q[1], q[2]])
