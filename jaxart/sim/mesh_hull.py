"""Convex hulls of collision meshes, computed once per :class:`~jaxart.sim.builder_shapes.Mesh` (host numpy).

Every MESH / CONVEX_MESH shape collides through the convex hull of its vertices, as in MuJoCo.
The hull is computed with Qhull (``scipy.spatial.ConvexHull``). Vertex caps (``maxhullvert``):

* ``n > 3`` (MJCF ``<mesh maxhullvert>``, URDF ``mesh_maxhullvert``, ``Mesh(maxhullvert=n)``):
  MuJoCo's semantics and options: Qhull stops after adding ``n`` vertices (option ``TA<n-4>``),
  so the hull is the same inner approximation MuJoCo collides.
* ``-1``: no cap (the full hull).
* ``None`` (the default when nothing is authored): at most :data:`DEFAULT_MAXHULLVERT` vertices
  chosen greedily: the six axis-extreme vertices, then repeatedly the mesh vertex farthest outside
  the current hull. Qhull's early stop follows its own point order and leaves large regions out
  (on the Panda's and UR5's collision meshes, 32 vertices leave mesh vertices up to 47 mm outside
  the hull; the greedy choice of 32 leaves at most 6.7 mm, less than Qhull's 64 at 20 mm).

Why 32 by default: a hull of ``V`` vertices has at most ``3V − 6`` edges and the polytope narrow
phase tests every edge pair of two hulls (``narrow_hull``), so 32 vertices bound a mesh–mesh pair
at 8,100 edge pairs (64 vertices: 34,596) — MJX likewise recommends small hulls — while the
greedy 32-vertex hull stays within a few millimetres of robot link meshes (above).

Coplanar hull triangles are merged into convex polygons.

Tables (all in the mesh frame, before ``shape_scale``):

* ``vertices`` ``(H, 3)`` [m]: hull vertices.
* ``planes`` ``(F, 4)``: outward unit face normal and offset ``d`` [m] (``n · x <= d`` inside).
* ``faces`` ``(F, P)`` int: vertex indices of each face polygon, counter-clockwise about its
  normal; shorter polygons repeat their last vertex.
* ``edges`` ``(E, 4)`` int: the two vertex indices of each hull edge and its two adjacent faces.

A mesh is reported **non-convex** when its enclosed volume is below ``CONVEX_VOLUME_RATIO`` of the
hull's (closed meshes) or a vertex lies inside the hull by more than ``CONVEX_TOL`` of the hull's
size: collision then uses the hull, which fills the mesh's cavities.
"""

from __future__ import annotations

import dataclasses

import numpy as np

#: Hull vertex cap when none is authored (``maxhullvert=None``; greedy choice, see the module docstring).
DEFAULT_MAXHULLVERT = 32
#: Volume ratio (mesh / hull) below which a closed mesh is reported non-convex.
CONVEX_VOLUME_RATIO = 0.98
#: Tolerance under which two hull triangles count as coplanar (merged into one face polygon).
COPLANAR_TOL = 1e-6
#: Relative depth (of the hull's bounding-box diagonal) of a vertex inside the hull that marks a mesh non-convex.
CONVEX_TOL = 1e-4


@dataclasses.dataclass(frozen=True, eq=False)
class HullTables:
    """Convex hull of a mesh as static tables (see the module docstring for shapes and frames).

    Attributes:
        vertices: ``(H, 3)`` hull vertices [m], mesh frame.
        planes: ``(F, 4)`` outward unit normals and offsets [m] of the face planes.
        faces: ``(F, P)`` int32 counter-clockwise vertex indices of each face polygon (padded by
            repeating the last vertex).
        edges: ``(E, 4)`` int32 ``(vertex 0, vertex 1, face 0, face 1)`` of each hull edge.
        convex: Whether the mesh itself is convex (its hull adds no volume and hides no vertex).
        volume_ratio: Mesh volume / uncapped hull volume (``nan`` when the mesh is not closed).
        capped: Whether ``maxhullvert`` removed hull vertices.
    """

    vertices: np.ndarray
    planes: np.ndarray
    faces: np.ndarray
    edges: np.ndarray
    convex: bool
    volume_ratio: float
    capped: bool

    def describe(self) -> str:
        """A short human-readable summary (for import reports)."""
        vol = "" if not np.isfinite(self.volume_ratio) else f", mesh/hull volume {self.volume_ratio:.2f}"
        return f"{len(self.vertices)} hull vertices, {len(self.planes)} faces{vol}"


def _qhull(points: np.ndarray, maxhullvert: int):
    from scipy.spatial import ConvexHull

    opts = "Qt" if maxhullvert < 0 else f"Qt TA{maxhullvert - 4}"
    try:
        return ConvexHull(points, qhull_options=opts)
    except Exception as e:  # noqa: BLE001 - scipy raises QhullError (flat or degenerate point sets)
        raise ValueError(f"convex hull: Qhull failed ({type(e).__name__}: {str(e).splitlines()[0]}); the mesh "
                         "vertices must span a volume") from None


def _merge_coplanar(eq: np.ndarray, size: float) -> np.ndarray:
    """Face-group label of each hull triangle (triangles on one plane share a label).

    Planes agreeing to ``COPLANAR_TOL`` (normals: ``1 − n·m``; offsets: relative to the hull size)
    are one face, so a mesh read from float32 data (STL) still gets its flat faces as polygons.
    """
    labels = -np.ones(len(eq), np.int64)
    reps: list[int] = []
    for t in range(len(eq)):
        for g, r in enumerate(reps):
            if np.dot(eq[t, :3], eq[r, :3]) > 1.0 - COPLANAR_TOL and abs(eq[t, 3] - eq[r, 3]) < COPLANAR_TOL * size:
                labels[t] = g
                break
        else:
            labels[t] = len(reps)
            reps.append(t)
    return labels


def _polygon(points: np.ndarray, ids: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """Vertex ids of a convex planar polygon sorted counter-clockwise about ``normal``."""
    p = points[ids]
    c = p.mean(axis=0)
    u = p[0] - c
    u = u / max(np.linalg.norm(u), 1e-300)
    v = np.cross(normal, u)
    ang = np.arctan2((p - c) @ v, (p - c) @ u)
    return ids[np.argsort(ang)]


def _tables(points: np.ndarray, hull) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hull vertices, merged face planes, face polygons and edges (indices into the hull vertices)."""
    size = float(np.linalg.norm(np.ptp(points[hull.vertices], axis=0)))
    labels = _merge_coplanar(hull.equations, size)
    nf = int(labels.max()) + 1
    remap = -np.ones(len(points), np.int64)
    remap[hull.vertices] = np.arange(len(hull.vertices))
    verts = points[hull.vertices]
    planes = np.zeros((nf, 4))
    polys = []
    for g in range(nf):
        tri = np.nonzero(labels == g)[0]
        n = hull.equations[tri].mean(axis=0)[:3]
        n = n / np.linalg.norm(n)
        ids = np.unique(remap[hull.simplices[tri]].ravel())
        planes[g] = np.concatenate([n, [np.max(verts[ids] @ n)]])
        polys.append(_polygon(verts, ids, n))
    p_max = max(len(p) for p in polys)
    faces = np.array([np.concatenate([p, np.full(p_max - len(p), p[-1])]) for p in polys], np.int32)
    edges = {}
    for t, simplex in enumerate(hull.simplices):
        for k in range(3):
            other = hull.neighbors[t][(k + 2) % 3]  # neighbour opposite vertex (k+2) shares edge (k, k+1)
            a, b = sorted((int(remap[simplex[k]]), int(remap[simplex[(k + 1) % 3]])))
            fa, fb = int(labels[t]), int(labels[other])
            if fa != fb and (a, b) not in edges:
                edges[(a, b)] = (a, b, fa, fb)
    return verts, planes, faces, np.array(list(edges.values()), np.int32).reshape(-1, 4)


def _mesh_volume(vertices: np.ndarray, indices: np.ndarray) -> float:
    """Enclosed volume of a closed triangle mesh (``nan`` when open or without triangles).

    Coincident vertices are merged first (STL files store every triangle's corners separately).
    """
    if len(indices) == 0:
        return float("nan")
    vertices, inverse = np.unique(vertices, axis=0, return_inverse=True)
    indices = inverse.reshape(-1)[indices]
    e = np.sort(np.concatenate([indices[:, [0, 1]], indices[:, [1, 2]], indices[:, [2, 0]]]), axis=1)
    _, counts = np.unique(e, axis=0, return_counts=True)
    if np.any(counts != 2):
        return float("nan")
    a, b, c = (vertices[indices[:, k]] for k in range(3))
    return abs(float(np.sum(np.einsum("ij,ij->i", a, np.cross(b, c)))) / 6.0)


def _greedy_vertices(pts: np.ndarray, full, cap: int) -> np.ndarray:
    """Indices into ``pts`` of at most ``cap`` hull vertices chosen farthest-outside first."""
    cand = full.vertices
    p = pts[cand]
    sel = list(dict.fromkeys(np.concatenate([np.argmax(p, axis=0), np.argmin(p, axis=0)]).tolist()))
    while len(sel) < 4:  # a flat extreme set: add the vertex farthest from the chosen ones
        sel.append(int(np.argmax(np.min(np.linalg.norm(p[:, None] - p[sel][None], axis=-1), axis=1))))
    while len(sel) < cap:
        h = _qhull(p[sel], -1)
        out = np.max(p @ h.equations[:, :3].T + h.equations[:, 3], axis=1)
        k = int(np.argmax(out))
        if out[k] <= 0.0:
            break
        sel.append(k)
    return cand[np.asarray(sel)]


def convex_hull_tables(vertices: np.ndarray, indices: np.ndarray, maxhullvert: int | None) -> HullTables:
    """Hull tables of a mesh (see the module docstring).

    Args:
        vertices: ``(v, 3)`` mesh vertices [m].
        indices: ``(t, 3)`` triangle indices (used only for the volume in the convexity report).
        maxhullvert: Hull vertex cap with MuJoCo's semantics (> 3), −1 for no cap, or ``None`` for
            :data:`DEFAULT_MAXHULLVERT` vertices chosen greedily.

    Returns:
        The :class:`HullTables`.

    Raises:
        ValueError: ``maxhullvert`` is not −1 or > 3, or the vertices are flat / degenerate.
    """
    if maxhullvert is not None and maxhullvert != -1 and int(maxhullvert) < 4:
        raise ValueError(f"convex hull: maxhullvert must be None, -1 (no limit) or > 3, got {maxhullvert}")
    pts = np.asarray(vertices, np.float64)
    full = _qhull(pts, -1)
    size = float(np.linalg.norm(np.ptp(pts, axis=0)))
    depth = np.max(pts @ full.equations[:, :3].T + full.equations[:, 3], axis=1)  # ≤ 0 inside
    ratio = _mesh_volume(pts, np.asarray(indices).reshape(-1, 3)) / full.volume
    convex = bool(np.all(depth > -CONVEX_TOL * size) and not (ratio < CONVEX_VOLUME_RATIO))
    cap = DEFAULT_MAXHULLVERT if maxhullvert is None else int(maxhullvert)
    capped = cap != -1 and len(full.vertices) > cap
    if not capped:
        hull = full
    elif maxhullvert is None:
        sub = pts[_greedy_vertices(pts, full, cap)]
        hull, pts = _qhull(sub, -1), sub
    else:
        hull = _qhull(pts, cap)
    verts, planes, faces, edges = _tables(pts, hull)
    return HullTables(verts, planes, faces, edges, convex, float(ratio), bool(capped))
