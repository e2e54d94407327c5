"""UsdPhysics collider descriptors → jaxart shapes, materials, collision filters and mass callbacks.

===================  ==================================================================================
UsdPhysics           jaxart
===================  ==================================================================================
Cube                 BOX (half extents; the parser has applied the prim and body scales)
Sphere               SPHERE (non-uniform scale: the parser's largest radius, reported)
Capsule / Cylinder   CAPSULE / CYLINDER / CONE along local Z (``axis`` X/Y rotates the shape frame);
/ Cone               unequal radial scale is reported
Plane                PLANE (normal = ``axis``), infinite
Mesh                 MESH from ``points``/``faceVertexIndices`` (polygons fanned into triangles) ×
                     ``meshScale``; collision uses the convex hull (reported unless ``convexHull``)
materials            ``mu`` = dynamicFriction (a different staticFriction is reported), restitution
collision groups     filter pairs between shapes whose groups do not collide (``CollisionGroupTable``:
                     ``filteredGroups``, ``invertFilteredGroups``, ``mergeGroupName``)
filteredPairs        filter pairs between the shapes of the two prims (bodies or colliders)
===================  ==================================================================================

Shapes are massless in jaxart: body mass properties come from ``RigidBodyAPI.ComputeMassProperties``
(the MassAPI precedence of the UsdPhysics spec), fed by :func:`mass_callback`.
"""

from __future__ import annotations

import itertools

import numpy as np

from jaxart.io.usd.stage import ParsedStage, quat_xyzw, vec
from jaxart.sim.builder_shapes import Mesh
from jaxart.sim.configs import ShapeConfig
from jaxart.sim.enums import GeoType
from jaxart.sim.inertia import shape_mass_properties
from jaxart.sim.validate import np_quat_between, np_quat_mul

SHAPE_KINDS = ("CubeShape", "SphereShape", "CapsuleShape", "CylinderShape", "ConeShape", "PlaneShape", "MeshShape")
_UNSUPPORTED = ("Capsule1Shape", "Cylinder1Shape", "SpherePointsShape", "CustomShape")
_Z = np.array([0.0, 0.0, 1.0])


def collider_descs(parsed: ParsedStage, issues: list[str]) -> dict:
    """``{collider path: (kind, desc)}`` of the supported colliders; unsupported ones are reported."""
    out = {}
    for kind in SHAPE_KINDS:
        for path, d in parsed.of(kind).items():
            out[path] = (kind, d)
    for kind in _UNSUPPORTED:
        for path in parsed.of(kind):
            issues.append(f"collider {path!r}: {kind} not supported (skipped)")
    return dict(sorted(out.items()))


def geometry(kind: str, d, parsed: ParsedStage, length: float, issues: list[str], body_scale=None):
    """``(GeoType, scale (3,), local rotation (xyzw), Mesh | None)`` of one collider in SI units."""
    path = str(d.primPath)
    total = vec(d.localScale) * (np.ones(3) if body_scale is None else np.abs(body_scale))
    axis_rot = np.array([0.0, 0.0, 0.0, 1.0])
    if kind == "CubeShape":
        return GeoType.BOX, vec(d.halfExtents, length), axis_rot, None
    if kind == "SphereShape":
        if np.ptp(np.abs(total)) > 1e-6 * np.max(np.abs(total)):
            issues.append(f"collider {path!r}: sphere under non-uniform scale {total.tolist()} approximated by "
                          f"radius {d.radius * length:g}")
        return GeoType.SPHERE, np.array([d.radius * length, 0.0, 0.0]), axis_rot, None
    if kind == "MeshShape":
        return GeoType.MESH, vec(d.meshScale), axis_rot, _mesh(parsed, d, issues)  # vertices carry the units
    k = "XYZ".index(str(d.axis.name))
    axis_rot = np_quat_between(_Z, np.eye(3)[k])
    if kind == "PlaneShape":
        return GeoType.PLANE, np.zeros(3), axis_rot, None
    radial = np.abs(np.delete(total, k))
    if np.ptp(radial) > 1e-6 * np.max(radial):
        issues.append(f"collider {path!r}: {kind[:-5].lower()} under non-uniform radial scale {total.tolist()} "
                      f"approximated by radius {d.radius * length:g}")
    geo = {"CapsuleShape": GeoType.CAPSULE, "CylinderShape": GeoType.CYLINDER, "ConeShape": GeoType.CONE}[kind]
    return geo, np.array([d.radius * length, d.halfHeight * length, 0.0]), axis_rot, None


def _mesh(parsed: ParsedStage, d, issues: list[str]) -> Mesh:
    from pxr import UsdGeom

    path = str(d.primPath)
    m = UsdGeom.Mesh(parsed.stage.GetPrimAtPath(path))
    pts = np.asarray(m.GetPointsAttr().Get() or [], dtype=np.float64).reshape(-1, 3)
    counts = list(m.GetFaceVertexCountsAttr().Get() or [])
    idx = list(m.GetFaceVertexIndicesAttr().Get() or [])
    tris, k = [], 0
    for c in counts:
        tris += [(idx[k], idx[k + i], idx[k + i + 1]) for i in range(1, c - 1)]
        k += c
    if len(pts) < 4 or not tris:
        raise ValueError(f"add_usd({parsed.what}): mesh collider {path!r} has {len(pts)} points and "
                         f"{len(tris)} triangles (needs >= 4 points and >= 1 face)")
    if str(d.approximation) not in ("convexHull",):
        issues.append(f"collider {path!r}: mesh approximation {str(d.approximation)!r} → convex hull "
                      "(jaxart meshes collide through their convex hull)")
    if str(UsdGeom.Mesh(m).GetOrientationAttr().Get()) == "leftHanded":
        tris = [(a, c, b) for a, b, c in tris]
    return Mesh(pts * parsed.meters_per_unit, np.asarray(tris, dtype=np.int64))


def material_cfg(d, parsed: ParsedStage, default: ShapeConfig, issues: list[str]) -> ShapeConfig:
    """Shape config: massless, the first bound physics material's friction/restitution, collision flag."""
    cfg = default.copy()
    cfg.density = 0.0
    cfg.has_shape_collision = bool(d.collisionEnabled)
    mats = [str(p) for p in d.materials if str(p)]
    mat = parsed.of("RigidBodyMaterial").get(mats[0]) if mats else None
    if mat is not None:
        cfg.mu = float(mat.dynamicFriction)
        cfg.restitution = float(mat.restitution)
        if abs(mat.staticFriction - mat.dynamicFriction) > 1e-9:
            issues.append(f"collider {str(d.primPath)!r}: material {mats[0]!r} staticFriction "
                          f"{mat.staticFriction:g} ≠ dynamicFriction {mat.dynamicFriction:g} (mu = dynamic)")
    return cfg


def local_pose(d, length: float, axis_rot: np.ndarray) -> np.ndarray:
    """Collider pose in its body frame (world frame for static colliders), SI units."""
    return np.concatenate([vec(d.localPos, length), np_quat_mul(quat_xyzw(d.localRot), axis_rot)])


def mass_callback(parsed: ParsedStage, colliders: dict, bodies: dict):
    """``ComputeMassProperties`` callback: unit-density volume, COM and inertia of a collider (stage units)."""
    from pxr import Gf, UsdPhysics

    def info(prim):
        mi = UsdPhysics.RigidBodyAPI.MassInformation()
        mi.localRot = Gf.Quatf(1.0)
        path = str(prim.GetPath())
        item = colliders.get(path)
        if item is None:
            mi.volume = 0.0
            return mi
        kind, d = item
        body = bodies.get(str(d.rigidBody))
        geo, scale, rot, mesh = geometry(kind, d, parsed, 1.0, [], body_scale=None if body is None else
                                         vec(body.scale))
        verts = None if mesh is None else mesh.vertices / parsed.meters_per_unit * scale  # stage units
        vol, com, inertia = shape_mass_properties(geo, scale, 1.0, vertices=verts,
                                                  indices=None if mesh is None else mesh.indices)
        q = np_quat_mul(quat_xyzw(d.localRot), rot)
        mi.volume = float(vol)
        mi.centerOfMass = Gf.Vec3f(*[float(x) for x in com])
        mi.inertia = Gf.Matrix3f(*[float(x) for x in np.asarray(inertia).reshape(-1)])
        mi.localPos = Gf.Vec3f(*[float(x) for x in vec(d.localPos)])
        mi.localRot = Gf.Quatf(float(q[3]), float(q[0]), float(q[1]), float(q[2]))
        return mi

    return info


def add_collision_filters(builder, parsed: ParsedStage, shapes: dict, body_index: dict, issues: list[str]) -> None:
    """Lower collision groups and filtered pairs to ``add_shape_collision_filter_pair`` calls."""
    from pxr import Sdf, UsdPhysics

    pairs: set[tuple[int, int]] = set(builder.shape_collision_filter_pairs)

    def add(a: int, b: int) -> None:
        p = (min(a, b), max(a, b))
        if a != b and p not in pairs:
            pairs.add(p)
            builder.add_shape_collision_filter_pair(*p)

    colliders = {p: d for p, (_, d) in _descs_by_path(parsed).items()}
    groups = {p: tuple(sorted(str(g) for g in d.collisionGroups)) for p, d in colliders.items()}
    if any(groups.values()):
        table = UsdPhysics.CollisionGroup.ComputeCollisionGroupTable(parsed.stage)
        # the descriptor's invertFilteredGroups is uninitialised when unauthored (usd-core 26.11): read the schema
        inverted = {p for p in parsed.of("CollisionGroup")
                    if UsdPhysics.CollisionGroup(parsed.stage.GetPrimAtPath(p)).GetInvertFilteredGroupsAttr().Get()}
        classes: dict[tuple, list[int]] = {}
        for path, s in shapes.items():
            classes.setdefault(groups.get(path, ()), []).append(s)
        keys = sorted(classes)
        for i, ga in enumerate(keys):
            for gb in keys[i:]:
                if _groups_collide(table, ga, gb, inverted, Sdf):
                    continue
                a_s, b_s = classes[ga], classes[gb]
                prod = itertools.combinations(a_s, 2) if ga == gb else itertools.product(a_s, b_s)
                for a, b in prod:
                    add(a, b)

    def resolve(path: str) -> list[int]:
        if path in shapes:
            return [shapes[path]]
        if path in body_index:
            return list(builder.body_shapes.get(body_index[path], []))
        issues.append(f"filtered pair target {path!r} is neither an imported body nor a collider (ignored)")
        return []

    for src, d in [*parsed.of("RigidBody").items(), *colliders.items()]:
        for dst in d.filteredCollisions:
            for a in resolve(src):
                for b in resolve(str(dst)):
                    add(a, b)


def _descs_by_path(parsed: ParsedStage) -> dict:
    return {p: (k, d) for k in SHAPE_KINDS for p, d in parsed.of(k).items()}


def _groups_collide(table, ga: tuple, gb: tuple, inverted: set, Sdf) -> bool:
    if ga and gb:
        return all(table.IsCollisionEnabled(Sdf.Path(a), Sdf.Path(b)) for a in ga for b in gb)
    return not any(g in inverted for g in (ga or gb))
