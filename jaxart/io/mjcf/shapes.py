"""MuJoCo geoms and sites → jaxart shapes, contact materials and collision filtering.

Contact material per geom:

* ``friction[0] → mu``, ``friction[1] → mu_torsional``, ``friction[2] → mu_rolling`` (MuJoCo uses
  the last two only for ``condim`` 4/6), ``margin → margin``, ``gap → gap`` (MuJoCo ≥ 3.9 semantics,
  as Newton imports them; a zero gap leaves ``None`` = the builder's ``rigid_gap``), restitution 0.
* ``solref → (ke, kd)`` with :func:`~jaxart.io.mjcf.convert.solref_gains`, using as effective mass
  the mass of the kinematic tree the geom belongs to (``body_subtreemass`` of its root body; for
  world geoms the heaviest tree). A tree resting on its contacts then penetrates by ``g (τ ζ)²``,
  MuJoCo's steady-state penetration.
* Shapes are massless (``density = 0``): bodies get MuJoCo's compiled mass properties directly.

Collision filtering reproduces MuJoCo's rules exactly with jaxart's data: a geom with
``contype = conaffinity = 0`` gets ``has_shape_collision = False`` and ``collision_group = 0``;
every other geom gets group 1, and a filter pair is added for every pair of colliding shapes that
MuJoCo would not test: incompatible masks (``!(ct_a & ca_b || ct_b & ca_a)``), bodies welded
together (same ``body_weldid``, which includes bodies welded to the world vs. world geoms),
parent–child bodies (``filterparent``, world excluded) and ``<contact><exclude>`` body pairs.
"""

from __future__ import annotations

import itertools

import mujoco
import numpy as np

from jaxart.io.mesh_report import hull_notes
from jaxart.io.mjcf.convert import pose, solref_gains
from jaxart.sim.builder_shapes import Mesh
from jaxart.sim.configs import ShapeConfig
from jaxart.sim.enums import GeoType
from jaxart.sim.heightfield import Heightfield

GEOM_TYPES = {
    int(mujoco.mjtGeom.mjGEOM_PLANE): GeoType.PLANE,
    int(mujoco.mjtGeom.mjGEOM_SPHERE): GeoType.SPHERE,
    int(mujoco.mjtGeom.mjGEOM_CAPSULE): GeoType.CAPSULE,
    int(mujoco.mjtGeom.mjGEOM_ELLIPSOID): GeoType.ELLIPSOID,
    int(mujoco.mjtGeom.mjGEOM_CYLINDER): GeoType.CYLINDER,
    int(mujoco.mjtGeom.mjGEOM_BOX): GeoType.BOX,
    int(mujoco.mjtGeom.mjGEOM_MESH): GeoType.MESH,
    int(mujoco.mjtGeom.mjGEOM_HFIELD): GeoType.HFIELD,
}


def _scale(s: np.ndarray, geo: GeoType) -> tuple[float, float, float]:
    """MuJoCo size vector → jaxart ``scale`` (same radius / half-length / half-extent conventions)."""
    if geo == GeoType.PLANE:
        return (0.0, 0.0, 0.0)  # MuJoCo planes are infinite for collision
    if geo == GeoType.SPHERE:
        return (float(s[0]), 0.0, 0.0)
    if geo in (GeoType.CAPSULE, GeoType.CYLINDER):
        return (float(s[0]), float(s[1]), 0.0)
    if geo in (GeoType.MESH, GeoType.HFIELD):
        return (1.0, 1.0, 1.0)
    return (float(s[0]), float(s[1]), float(s[2]))


def _mesh(m, k: int, maxhullvert: int) -> Mesh:
    v0, nv = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
    f0, nf = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
    cap = None if maxhullvert == -1 else maxhullvert  # MuJoCo's default (no cap): jaxart's default cap
    return Mesh(m.mesh_vert[v0:v0 + nv].astype(np.float64), m.mesh_face[f0:f0 + nf].astype(np.int64), maxhullvert=cap)


def import_meshes(m, maxhullvert: list[int]) -> dict[int, Mesh]:
    """One :class:`Mesh` per MuJoCo mesh asset used by a geom (shared by its geoms: one hull each).

    Args:
        m: Compiled model.
        maxhullvert: ``<mesh maxhullvert>`` of every MuJoCo mesh (−1 = MuJoCo's default, no cap;
            jaxart then applies its default cap, ``Mesh(maxhullvert=None)``).
    """
    ids = {int(m.geom_dataid[g]) for g in range(m.ngeom) if int(m.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_MESH)}
    return {k: _mesh(m, k, maxhullvert[k]) for k in sorted(ids)}


def mesh_notes(m, meshes: dict[int, Mesh], maxhullvert: list[int]) -> list[str]:
    """Report lines for colliding mesh geoms: non-convex meshes and hulls capped where MuJoCo's is not."""
    out, seen = [], set()
    for g in range(m.ngeom):
        k = int(m.geom_dataid[g])
        collides = bool(m.geom_contype[g] or m.geom_conaffinity[g])
        if int(m.geom_type[g]) != int(mujoco.mjtGeom.mjGEOM_MESH) or not collides or k in seen:
            continue
        seen.add(k)
        what = f"geom {m.geom(g).name or g!r} (mesh {m.mesh(k).name or k!r})"
        out += hull_notes(what, meshes[k], mujoco_uncapped=maxhullvert[k] == -1)
    return out


def _hfield(m, g: int) -> Heightfield:
    """Compiled ``<hfield>`` of geom ``g`` → :class:`Heightfield` (inverse of SolverMuJoCo's normalisation).

    MuJoCo's surface is ``z = data · size_z`` above the geom origin (row 0 at ``-size_y``), so the
    elevations ``data · size_z`` give ``min_z``/``max_z`` directly; ``size_base`` becomes ``base``.
    """
    k = int(m.geom_dataid[g])
    nrow, ncol, adr = int(m.hfield_nrow[k]), int(m.hfield_ncol[k]), int(m.hfield_adr[k])
    size = np.asarray(m.hfield_size[k], np.float64)
    data = np.asarray(m.hfield_data[adr:adr + nrow * ncol], np.float64).reshape(nrow, ncol)
    return Heightfield(data * size[2], hx=float(size[0]), hy=float(size[1]), base=float(size[3]))


def tree_mass(m, b: int) -> float:
    if b == 0:
        roots = [c for c in range(1, m.nbody) if m.body_parentid[c] == 0]
        mass = max((float(m.body_subtreemass[c]) for c in roots), default=0.0)
    else:
        mass = float(m.body_subtreemass[m.body_rootid[b]])
    return mass if mass > 0.0 else 1.0


def geom_config(m, g: int, *, min_timeconst: float) -> ShapeConfig:
    """The :class:`ShapeConfig` of MuJoCo geom ``g`` (see the module docstring)."""
    collide = bool(m.geom_contype[g] or m.geom_conaffinity[g])
    ke, kd = solref_gains(m.geom_solref[g], tree_mass(m, int(m.geom_bodyid[g])), min_timeconst=min_timeconst)
    fr = m.geom_friction[g]
    return ShapeConfig(density=0.0, ke=ke, kd=kd, mu=float(fr[0]), mu_torsional=float(fr[1]),
                       mu_rolling=float(fr[2]), restitution=0.0, margin=float(m.geom_margin[g]),
                       gap=float(m.geom_gap[g]) or None, collision_group=1 if collide else 0,
                       has_shape_collision=collide)


def add_geoms(builder, m, body_of, label_of, *, min_timeconst: float, meshes: dict[int, Mesh] | None = None
              ) -> dict[int, int]:
    """Add every representable geom as a shape (SDFs and heightfields not on the world are skipped and reported).

    Args:
        builder: Target builder.
        m: Compiled model.
        body_of: ``(mj_body, pose) → (builder body, pose in that body)`` (handles the world / xform).
        label_of: ``name → unique shape label or None``.
        min_timeconst: ``solref`` time-constant clamp.
        meshes: :func:`import_meshes` (``None``: imported here with jaxart's default hull cap).

    Returns:
        Shape index per MuJoCo geom id.
    """
    shapes = {}
    meshes = import_meshes(m, [-1] * m.nmesh) if meshes is None else meshes
    for g in range(m.ngeom):
        geo = GEOM_TYPES.get(int(m.geom_type[g]))
        name = m.geom(g).name
        if geo is None:
            continue
        body, x = body_of(int(m.geom_bodyid[g]), pose(m.geom_pos[g], m.geom_quat[g]))
        if geo == GeoType.HFIELD and body != -1:
            continue  # jaxart heightfields are static world shapes
        src = None
        if geo == GeoType.MESH:
            src = meshes[int(m.geom_dataid[g])]
        elif geo == GeoType.HFIELD:
            src = _hfield(m, g)
        shapes[g] = builder.add_shape(body=body, type=geo, xform=x, cfg=geom_config(m, g, min_timeconst=min_timeconst),
                                      scale=_scale(m.geom_size[g], geo), src=src,
                                      is_static=geo in (GeoType.PLANE, GeoType.HFIELD), label=label_of(name))
    return shapes


def add_sites(builder, m, body_of, label_of) -> dict[int, int]:
    """Add MuJoCo sites as jaxart sites; returns the shape index per MuJoCo site id."""
    out = {}
    for s in range(m.nsite):
        geo = GEOM_TYPES.get(int(m.site_type[s]), GeoType.SPHERE)
        body, x = body_of(int(m.site_bodyid[s]), pose(m.site_pos[s], m.site_quat[s]))
        out[s] = builder.add_site(body, xform=x, type=geo, scale=_scale(np.maximum(m.site_size[s], 1e-9), geo),
                                  label=label_of(m.site(s).name))
    return out


def _body_pairs_filtered(m) -> set[tuple[int, int]]:
    """MuJoCo body pairs never tested for contact: welded together, parent–child, ``<exclude>``."""
    pairs = set()
    filterparent = not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    weld = m.body_weldid
    for a, b in itertools.combinations(range(m.nbody), 2):
        if weld[a] == weld[b]:
            pairs.add((a, b))
        elif filterparent and (weld[m.body_parentid[weld[b]]] == weld[a] or
                               weld[m.body_parentid[weld[a]]] == weld[b]) and weld[a] != 0 and weld[b] != 0:
            pairs.add((a, b))
    for sig in m.exclude_signature:
        a, b = int(sig) >> 16, int(sig) & 0xFFFF
        pairs.add((min(a, b), max(a, b)))
    return pairs


def add_collision_filters(builder, m, shapes: dict[int, int], *, self_collisions: bool = True) -> int:
    """Add filter pairs so jaxart tests exactly the geom pairs MuJoCo tests; returns the count added.

    ``self_collisions=False`` (Newton's ``enable_self_collisions``) also filters every pair of
    shapes whose bodies belong to the same kinematic tree (same ``body_rootid``).
    """
    geoms = [g for g in shapes if m.geom_contype[g] or m.geom_conaffinity[g]]
    body_pairs = _body_pairs_filtered(m)
    ct, ca, gb = m.geom_contype, m.geom_conaffinity, m.geom_bodyid
    count = 0
    for g1, g2 in itertools.combinations(geoms, 2):
        b1, b2 = int(gb[g1]), int(gb[g2])
        if b1 == b2:
            continue  # same body: never collides in either engine
        masks_ok = (ct[g1] & ca[g2]) or (ct[g2] & ca[g1])
        same_tree = not self_collisions and b1 and b2 and m.body_rootid[b1] == m.body_rootid[b2]
        if not masks_ok or same_tree or (min(b1, b2), max(b1, b2)) in body_pairs:
            builder.add_shape_collision_filter_pair(shapes[g1], shapes[g2])
            count += 1
    return count
