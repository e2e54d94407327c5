"""Writing jaxart shapes as UsdGeom prims (shared by the model and trajectory exporters).

==============  ==========================================================================
jaxart          UsdGeom
==============  ==========================================================================
BOX             Cube (``size`` 2) scaled by the half extents
SPHERE          Sphere
CAPSULE         Capsule (``height`` = 2·half_height, axis Z)
CYLINDER        Cylinder (axis Z)
CONE            Cone (axis Z)
ELLIPSOID       Sphere of radius 1 scaled by the semi-axes (UsdPhysics reads it as a sphere)
PLANE           Plane (axis Z; width/length 0 → 100 m for viewers, collision is infinite)
MESH            Mesh (triangles, ``scale`` as ``xformOp:scale``)
HFIELD, sites   not written (reported by the caller)
==============  ==========================================================================
"""

from __future__ import annotations

import os
import re

import numpy as np

from jaxart.sim.enums import GeoType

WRITABLE = {GeoType.BOX, GeoType.SPHERE, GeoType.CAPSULE, GeoType.CYLINDER, GeoType.CONE, GeoType.ELLIPSOID,
            GeoType.PLANE, GeoType.MESH}


class Names:
    """Unique, valid USD prim names derived from jaxart labels (per parent path)."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def child(self, parent: str, label: str) -> str:
        """A path ``parent/<name>`` not yet used, ``name`` sanitised from ``label``'s last component."""
        base = re.sub(r"[^A-Za-z0-9_]", "_", label.rstrip("/").rsplit("/", 1)[-1]) or "prim"
        if base[0].isdigit():
            base = "_" + base
        name, k = base, 1
        while f"{parent}/{name}" in self.used:
            name, k = f"{base}_{k}", k + 1
        path = f"{parent}/{name}"
        self.used.add(path)
        return path


def set_pose(xformable, x, *, time=None, scale=None) -> None:
    """Author ``translate`` + ``orient`` (+ ``scale``) ops from a 7-float pose (optionally at ``time``)."""
    from pxr import Gf, Usd, UsdGeom

    x = np.asarray(x, dtype=np.float64)
    ops = {op.GetOpName(): op for op in xformable.GetOrderedXformOps()}
    t = Usd.TimeCode.Default() if time is None else Usd.TimeCode(time)
    if not ops:
        tr = xformable.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble)
        orient = xformable.AddOrientOp(UsdGeom.XformOp.PrecisionDouble)
        ops = {tr.GetOpName(): tr, orient.GetOpName(): orient}
        if scale is not None:
            sc = xformable.AddScaleOp(UsdGeom.XformOp.PrecisionDouble)
            sc.Set(Gf.Vec3d(*[float(v) for v in scale]))
    ops["xformOp:translate"].Set(Gf.Vec3d(*[float(v) for v in x[:3]]), t)
    ops["xformOp:orient"].Set(Gf.Quatd(float(x[6]), float(x[3]), float(x[4]), float(x[5])), t)


def write_shape(stage, path: str, geo: GeoType, scale, x, mesh=None):
    """Define the UsdGeom prim of one shape at ``path`` with local pose ``x``; returns the prim."""
    from pxr import UsdGeom, Vt

    s = np.asarray(scale, dtype=np.float64)
    extra = None
    if geo == GeoType.BOX:
        g = UsdGeom.Cube.Define(stage, path)
        g.CreateSizeAttr(2.0)
        extra = s
    elif geo == GeoType.SPHERE:
        g = UsdGeom.Sphere.Define(stage, path)
        g.CreateRadiusAttr(float(s[0]))
    elif geo == GeoType.ELLIPSOID:
        g = UsdGeom.Sphere.Define(stage, path)
        g.CreateRadiusAttr(1.0)
        extra = s
    elif geo in (GeoType.CAPSULE, GeoType.CYLINDER, GeoType.CONE):
        cls = {GeoType.CAPSULE: UsdGeom.Capsule, GeoType.CYLINDER: UsdGeom.Cylinder, GeoType.CONE: UsdGeom.Cone}[geo]
        g = cls.Define(stage, path)
        g.CreateRadiusAttr(float(s[0]))
        g.CreateHeightAttr(2.0 * float(s[1]))
        g.CreateAxisAttr("Z")
    elif geo == GeoType.PLANE:
        g = UsdGeom.Plane.Define(stage, path)
        g.CreateWidthAttr(float(s[0]) or 100.0)
        g.CreateLengthAttr(float(s[1]) or 100.0)
        g.CreateAxisAttr("Z")
    elif geo == GeoType.MESH:
        g = UsdGeom.Mesh.Define(stage, path)
        g.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(np.asarray(mesh.vertices, dtype=np.float32)))
        g.CreateFaceVertexCountsAttr(Vt.IntArray([3] * len(mesh.indices)))
        g.CreateFaceVertexIndicesAttr(Vt.IntArray([int(i) for i in np.asarray(mesh.indices).reshape(-1)]))
        g.CreateSubdivisionSchemeAttr("none")
        extra = s
    else:
        raise ValueError(f"write_shape: geometry {geo!r} cannot be written as UsdGeom")
    set_pose(g, x, scale=extra)
    return g.GetPrim()


def check_path(path, what: str) -> str:
    """Validate an output path (``str``/``os.PathLike`` ending in .usd/.usda/.usdc)."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path:
        raise TypeError(f"{what}: path must be a file path (str or os.PathLike), got {path!r}")
    if not path.endswith((".usd", ".usda", ".usdc")):
        raise ValueError(f"{what}: path {path!r} must end in .usd, .usda or .usdc")
    return path


def new_stage(path: str, up_axis: int):
    """A new stage at ``path`` in SI units with ``/World`` as default prim."""
    from pxr import Usd, UsdGeom, UsdPhysics

    stage = Usd.Stage.CreateNew(path)
    UsdGeom.SetStageUpAxis(stage, "XYZ"[up_axis])
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    world = UsdGeom.Xform.Define(stage, "/World")
    stage.SetDefaultPrim(world.GetPrim())
    return stage
