"""URDF geometry: resolving mesh URIs, loading meshes with trimesh, adding shapes to the builder.

URI resolution (``resolve_uri``):

* ``package://<pkg>/<rest>``: ``<dir>/<pkg>/<rest>`` for each directory in ``package_dirs``, then
  in ``ROS_PACKAGE_PATH``, then the nearest ancestor folder of the URDF file named ``<pkg>``
  (a description package's usual layout ``<pkg>/urdf/robot.urdf``), then ``<dir>/<rest>`` for each
  of those directories when one is itself the package root.
* ``model://<model>/<rest>``: as ``package://``.
* ``file://<absolute path>``: that path.
* A relative path: against the URDF file's folder, then each of ``package_dirs``.
* ``http(s)://``: rejected (the importer never downloads).

Meshes (STL, OBJ, DAE, PLY, ... — whatever ``trimesh`` reads; DAE through ``pycollada``) are
loaded with ``trimesh.load(..., force="mesh")``: a multi-part file becomes one triangle mesh with
its scene-graph transforms applied. The URDF ``scale`` (times the import ``scale``) is baked into
the vertices; a mirroring scale flips the triangle winding back to outward.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

import numpy as np

from jaxart.sim.builder_shapes import Mesh
from jaxart.sim.validate import np_quat_between, np_transform_mul


def _package_candidates(pkg: str, rest: str, urdf_dir: str | None, package_dirs: list[str]) -> list[str]:
    roots = list(package_dirs) + [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    out = [os.path.join(r, pkg, rest) for r in roots]
    if urdf_dir is not None:
        parts = os.path.abspath(urdf_dir).split(os.sep)
        for k in range(len(parts), 0, -1):
            if parts[k - 1] == pkg:
                out.append(os.path.join(os.sep.join(parts[:k]) or os.sep, rest))
                break
    out += [os.path.join(r, rest) for r in package_dirs if os.path.basename(os.path.normpath(r)) == pkg]
    return out


def resolve_uri(uri: str, *, urdf_dir: str | None, package_dirs: list[str], what: str) -> str:
    """Local path of a URDF resource URI (see the module docstring).

    Raises:
        ValueError: The file cannot be found (all tried locations listed) or the URI is remote.
    """
    low = uri.lower()
    if low.startswith(("http://", "https://")):
        raise ValueError(f"{what}: remote URI {uri!r} is not supported (download it and use a local path)")
    if low.startswith(("package://", "model://")):
        body = uri.split("://", 1)[1]
        pkg, _, rest = body.partition("/")
        tried = _package_candidates(pkg, rest, urdf_dir, package_dirs)
        hint = "; pass package_dirs=[<folder containing the package>]"
    elif low.startswith("file:"):
        tried = [unquote(urlsplit(uri).path)]
        hint = ""
    elif os.path.isabs(uri):
        tried, hint = [uri], ""
    else:
        bases = ([urdf_dir] if urdf_dir is not None else []) + list(package_dirs)
        tried = [os.path.join(b, uri) for b in bases]
        hint = "" if bases else "; a URDF given as an XML string resolves relative paths only against package_dirs"
    for path in tried:
        if os.path.isfile(path):
            return path
    raise ValueError(f"{what}: file {uri!r} not found (tried {tried}){hint}")


def load_mesh(path: str, scale: np.ndarray, *, what: str, maxhullvert: int | None = None) -> Mesh:
    """Load a mesh file with trimesh and bake ``scale`` (3,) into its vertices (``maxhullvert``: hull cap).

    Raises:
        ValueError: trimesh cannot read the file, or it holds no triangles.
    """
    import trimesh

    try:
        tm = trimesh.load(path, force="mesh", process=False)
    except Exception as e:  # noqa: BLE001 - trimesh/pycollada raise many types
        raise ValueError(f"{what}: cannot load mesh {path!r}: {type(e).__name__}: {e}") from None
    v = np.asarray(getattr(tm, "vertices", np.zeros((0, 3))), dtype=np.float64)
    f = np.asarray(getattr(tm, "faces", np.zeros((0, 3))), dtype=np.int64)
    if len(f) == 0 or len(v) < 4:
        raise ValueError(f"{what}: mesh {path!r} holds no triangles (or fewer than 4 vertices)")
    s = np.asarray(scale, dtype=np.float64)
    if np.any(s == 0.0):
        raise ValueError(f"{what}: mesh scale must be non-zero, got {s.tolist()}")
    if np.prod(s) < 0.0:
        f = f[:, ::-1]
    return Mesh(v * s, f, maxhullvert=maxhullvert)


def shape_args(geom, scale: float) -> tuple[str, dict]:
    """Builder method name and keyword arguments for a primitive URDF geometry (meshes excluded).

    URDF cylinders are along the link's local Z like jaxart's; ``length`` is the full length.
    ``<capsule length|height>`` is the cylindrical part's full length (Newton's convention).
    """
    p = geom.params
    if geom.kind == "box":
        hx, hy, hz = (0.5 * scale * float(x) for x in p["size"])
        return "add_shape_box", {"hx": hx, "hy": hy, "hz": hz}
    if geom.kind == "sphere":
        return "add_shape_sphere", {"radius": scale * p["radius"]}
    return f"add_shape_{geom.kind}", {"radius": scale * p["radius"], "half_height": 0.5 * scale * p["length"]}


def check_primitive(geom, what: str) -> None:
    """Raise ``ValueError`` naming ``what`` when a primitive's size is not positive."""
    if geom.kind != "mesh":
        vals = np.concatenate([np.atleast_1d(v) for v in geom.params.values()])
        if np.any(vals <= 0.0):
            raise ValueError(f"{what}: <{geom.kind}> sizes must be > 0, got "
                             f"{ {k: np.atleast_1d(v).tolist() for k, v in geom.params.items()} }")


def add_link_shapes(imp, body: int, link) -> list[int]:
    """Add a link's collision (and visual) geometry as shapes of ``body``; returns the shape indices.

    Collision shapes use ``default_shape_cfg`` (their density gives the mass of links without an
    ``<inertial>``); they are rendered when the model has no visual geometry or with
    ``force_show_colliders``. Visual shapes are massless and never collide (``hide_visuals``: not added).

    Args:
        imp: The importer (builder ``b``, ``scale``, options ``opts``, preloaded ``meshes``).
        body: Builder body index.
        link: The parsed link.
    """
    b, opts, s = imp.b, imp.opts, imp.scale
    has_visuals = any(g.visual for lk in imp.robot.links.values() for g in lk.geoms)
    turn = np.concatenate([np.zeros(3), np_quat_between(np.array([0.0, 0.0, 1.0]),
                                                        np.asarray(opts["up"].to_vector()))])
    out = []
    for g, collides in imp.geoms(link):
        cfg = b.default_shape_cfg.copy()
        if collides:
            cfg.is_visible = opts["show_colliders"] or not has_visuals or opts["visuals_collide"]
        else:
            cfg.density, cfg.has_shape_collision, cfg.has_particle_collision = 0.0, False, False
            cfg.collision_group = 0   # visible (hide_visuals skips visual geometry altogether)
        x = np.concatenate([g.origin[:3] * s, g.origin[3:]])
        if g.kind == "mesh":
            out.append(b.add_shape_mesh(body, xform=x, mesh=imp.meshes[id(g)], cfg=cfg))
            continue
        if g.kind in ("cylinder", "capsule"):
            x = np_transform_mul(x, turn)
        method, kw = shape_args(g, s)
        out.append(getattr(b, method)(body, xform=x, cfg=cfg, **kw))
    return out
