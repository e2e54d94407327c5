"""Mass properties of primitive shapes and their accumulation into bodies (numpy)."""

from __future__ import annotations

import numpy as np

from jaxart.sim.enums import GeoType


def shape_mass_properties(
    geo: GeoType, scale: np.ndarray, density: float, *, is_solid: bool = True, thickness: float = 0.0,
    vertices: np.ndarray | None = None, indices: np.ndarray | None = None,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, COM and inertia of a shape in its own frame.

    Args:
        geo: Geometry type.
        scale: Shape parameters (see ``Model.shape_scale``).
        density: Density [kg/m³].
        is_solid: Solid body (hollow shells are approximated by the solid difference).
        thickness: Shell thickness [m] for hollow shapes.
        vertices: Mesh vertices ``(v, 3)`` in the shape frame (already scaled), for meshes.
        indices: Mesh triangle indices ``(t, 3)``, for meshes.

    Returns:
        ``(mass, com (3,), inertia about the COM (3, 3))``.
    """
    if geo in (GeoType.PLANE, GeoType.HFIELD, GeoType.NONE) or density <= 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    if geo in (GeoType.MESH, GeoType.CONVEX_MESH):
        return mesh_mass_properties(vertices, indices, density)
    m, com, inertia = _solid(geo, np.asarray(scale, float), density)
    if not is_solid and thickness > 0.0:
        inner = np.maximum(np.asarray(scale, float) - thickness, 0.0)
        mi, _, ii = _solid(geo, inner, density)
        m, inertia = m - mi, inertia - ii
    return m, com, inertia


def _solid(geo: GeoType, s: np.ndarray, rho: float) -> tuple[float, np.ndarray, np.ndarray]:
    com = np.zeros(3)
    if geo == GeoType.SPHERE:
        r = s[0]
        m = rho * 4.0 / 3.0 * np.pi * r**3
        return m, com, np.eye(3) * 0.4 * m * r * r
    if geo == GeoType.BOX:
        hx, hy, hz = s
        m = rho * 8.0 * hx * hy * hz
        return m, com, np.diag([(hy**2 + hz**2), (hx**2 + hz**2), (hx**2 + hy**2)]) * m / 3.0
    if geo == GeoType.ELLIPSOID:
        a, b, c = s
        m = rho * 4.0 / 3.0 * np.pi * a * b * c
        return m, com, np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * m / 5.0
    if geo == GeoType.CYLINDER:
        r, h = s[0], s[1]
        m = rho * np.pi * r * r * 2.0 * h
        ixx = m * (3.0 * r * r + 4.0 * h * h) / 12.0
        return m, com, np.diag([ixx, ixx, 0.5 * m * r * r])
    if geo == GeoType.CONE:
        r, h = s[0], s[1]
        m = rho * np.pi * r * r * 2.0 * h / 3.0
        # apex at +h, base at -h: the COM is a quarter of the height above the base
        com = np.array([0.0, 0.0, -0.5 * h])
        ixx = m * (3.0 * r * r / 20.0 + 3.0 * (2.0 * h) ** 2 / 80.0)
        return m, com, np.diag([ixx, ixx, 0.3 * m * r * r])
    if geo == GeoType.CAPSULE:
        r, h = s[0], s[1]
        mc = rho * np.pi * r * r * 2.0 * h
        ms = rho * 4.0 / 3.0 * np.pi * r**3
        ixx_c = mc * (3.0 * r * r + 4.0 * h * h) / 12.0
        # two hemispheres: inertia about own COM plus shift to the capsule centre
        ixx_s = ms * (0.4 * r * r + h * h + 0.75 * h * r)
        izz = 0.5 * mc * r * r + 0.4 * ms * r * r
        return mc + ms, com, np.diag([ixx_c + ixx_s, ixx_c + ixx_s, izz])
    raise ValueError(f"no mass properties for geometry type {GeoType(geo).name}")


def mesh_mass_properties(
    vertices: np.ndarray, indices: np.ndarray, density: float
) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass properties of a closed triangle mesh by signed tetrahedron integration.

    Args:
        vertices: ``(v, 3)`` vertex positions [m].
        indices: ``(t, 3)`` outward-wound triangles.
        density: Density [kg/m³].

    Returns:
        ``(mass, com, inertia about the COM)``.
    """
    v = np.asarray(vertices, float)
    tri = v[np.asarray(indices, int)]
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    vol6 = np.einsum("ij,ij->i", a, np.cross(b, c))
    vol = vol6.sum() / 6.0
    if abs(vol) < 1e-15:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = (vol6[:, None] * (a + b + c)).sum(0) / (24.0 * vol)
    # second moments of each tetrahedron (origin, a, b, c)
    cov = np.zeros((3, 3))
    canon = np.array([[2, 1, 1], [1, 2, 1], [1, 1, 2]]) / 120.0
    for k in range(len(tri)):
        basis = np.stack([a[k], b[k], c[k]], axis=1)
        cov += vol6[k] * basis @ canon @ basis.T
    m = density * vol
    cov = density * cov
    inertia_origin = np.trace(cov) * np.eye(3) - cov
    inertia = inertia_origin - m * (np.dot(com, com) * np.eye(3) - np.outer(com, com))
    return m, com, inertia


def combine_mass(
    m1: float, c1: np.ndarray, i1: np.ndarray, m2: float, c2: np.ndarray, i2: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """Combine two rigid mass distributions (all in one frame) with the parallel-axis theorem.

    Returns:
        ``(mass, com, inertia about the combined COM)``.
    """
    m = m1 + m2
    if m <= 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    c = (m1 * c1 + m2 * c2) / m

    def shift(mass: float, d: np.ndarray) -> np.ndarray:
        return mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))

    return m, c, i1 + shift(m1, c1 - c) + i2 + shift(m2, c2 - c)
