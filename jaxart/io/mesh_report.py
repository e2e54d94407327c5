"""Import-report lines for collision meshes: non-convex meshes and capped hulls (shared by MJCF and URDF)."""

from __future__ import annotations

from jaxart.sim.builder_shapes import Mesh


def hull_notes(what: str, mesh: Mesh, *, mujoco_uncapped: bool = False) -> list[str]:
    """Approximation notes for a colliding mesh (computes and caches ``mesh.hull``).

    Args:
        what: Names the mesh in the message (e.g. ``"geom 'link1' (mesh 'link1')"``).
        mesh: The imported mesh.
        mujoco_uncapped: The source model leaves the hull uncapped (MJCF ``maxhullvert = -1``), so a
            cap applied here differs from MuJoCo's hull and is reported.

    Returns:
        Zero, one or two report lines.
    """
    h = mesh.hull
    out = []
    if not h.convex:
        out.append(f"{what}: mesh is not convex ({h.describe()}); it collides through its convex hull "
                   "(split it into convex parts for concave contact)")
    if mujoco_uncapped and h.capped:
        out.append(f"{what}: convex hull capped at {len(h.vertices)} vertices (MuJoCo: no cap; set "
                   "<mesh maxhullvert> to choose)")
    return out
