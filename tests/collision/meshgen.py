"""Generated triangle meshes for the collision tests (tessellated sphere, finely split box, L-shape)."""

from __future__ import annotations

import numpy as np


def icosphere(radius: float = 1.0, subdivisions: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Geodesic sphere: ``(vertices (v, 3), triangles (t, 3))`` with outward winding."""
    t = (1.0 + 5.0 ** 0.5) / 2.0
    v = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t], [0, -1, -t], [0, 1, -t],
         [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]
    f = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4], [11, 10, 2],
         [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11],
         [6, 2, 10], [8, 6, 7], [9, 8, 1]]
    verts = [np.array(p, float) / np.linalg.norm(p) for p in v]
    for _ in range(subdivisions):
        f = _subdivide(verts, f)
    return radius * np.array(verts), np.array(f, np.int64)


def _subdivide(verts: list, faces: list) -> list:
    """Split each triangle in four, appending the normalised edge midpoints to ``verts``."""
    cache, out = {}, []

    def mid(i, j):
        key = (min(i, j), max(i, j))
        if key not in cache:
            m = verts[i] + verts[j]
            verts.append(m / np.linalg.norm(m))
            cache[key] = len(verts) - 1
        return cache[key]

    for a, b, c in faces:
        ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
        out += [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
    return out


def grid_box(half, n: int = 13) -> tuple[np.ndarray, np.ndarray]:
    """Box of half extents ``half`` with each face split into an ``n × n`` grid (``12 n²`` triangles)."""
    half = np.asarray(half, float)
    verts, tris, index = [], [], {}

    def vid(p):
        key = tuple(np.round(p, 12))
        if key not in index:
            index[key] = len(verts)
            verts.append(p)
        return index[key]

    s = np.linspace(-1.0, 1.0, n + 1)
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u, w = (axis + 1) % 3, (axis + 2) % 3
            for i in range(n):
                for j in range(n):
                    corners = []
                    for di, dj in ((0, 0), (1, 0), (1, 1), (0, 1)):
                        p = np.zeros(3)
                        p[axis], p[u], p[w] = sign, s[i + di], s[j + dj]
                        corners.append(vid(p * half))
                    a, b, c, d = corners if sign > 0 else corners[::-1]
                    tris += [[a, b, c], [a, c, d]]
    return np.array(verts), np.array(tris, np.int64)


def l_shape(size: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A closed, non-convex L-shaped prism (extruded along Z, thickness ``size``)."""
    prof = size * np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]], float)
    n = len(prof)
    verts = np.concatenate([np.c_[prof, np.zeros(n)], np.c_[prof, np.full(n, size)]])
    # bottom and top as fans of the L split into two convex quads: (0,1,2,3) and (0,3,4,5)
    tris = [[0, 2, 1], [0, 3, 2], [0, 4, 3], [0, 5, 4]]
    tris += [[n + 0, n + 1, n + 2], [n + 0, n + 2, n + 3], [n + 0, n + 3, n + 4], [n + 0, n + 4, n + 5]]
    for k in range(n):
        a, b = k, (k + 1) % n
        tris += [[a, b, n + b], [a, n + b, n + a]]
    return verts, np.array(tris, np.int64)
