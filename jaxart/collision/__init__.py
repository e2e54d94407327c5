"""Collision detection: candidate pairs (static), narrow phase (pure ``jnp``) and ``Contacts``.

``collide(model, state)`` (also ``model.collide(state)``) returns a fixed-capacity
:class:`Contacts` pytree. Conventions: shape A is the pair member with the lower ``GeoType``;
normals point from A to B; ``point`` is midway between the surfaces, ``point_a``/``point_b`` lie
on each geometric surface; ``separation`` subtracts both shape margins (negative = penetration);
a contact is ``active`` when ``separation < gap_a + gap_b``.

Supported pairs (slots per pair): plane–sphere (1), plane–capsule (2), plane–ellipsoid (1),
plane–cylinder (4), plane–box (4), plane–mesh (≤16); sphere–sphere (1), sphere–capsule (1),
sphere–cylinder (1), sphere–box (1), sphere–mesh (1); capsule–capsule (2), capsule–cylinder (3),
capsule–box (3), capsule–mesh (3); box–box (8, SAT + clipping); box–mesh and mesh–mesh (8, SAT
over face normals and Gauss-map-pruned edge pairs + clipping: face–face, face–edge and edge–edge
contacts, :mod:`~jaxart.collision.narrow_hull`); cylinder–box, cylinder–cylinder, cylinder–mesh
(8, feature-based: oriented rim points, vertices and the deepest point of every box / hull edge
tested exactly; a rim arc crossing an edge between rim samples and barrel–barrel crossings are
missed); ellipsoid–{sphere, capsule, ellipsoid, cylinder, box, mesh} (1) and height
field–{sphere, capsule, ellipsoid, cylinder, box, mesh} (8, MuJoCo's prisms) through the generic
convex solver (:mod:`~jaxart.collision.epa` on the support functions of
:mod:`~jaxart.collision.support`). Meshes (MESH and CONVEX_MESH) collide through their convex hull,
computed once per mesh and capped at ``Mesh.maxhullvert`` vertices (:mod:`jaxart.sim.mesh_hull`): a
non-convex mesh is approximated by its hull. Any other combination (cones) raises
``NotImplementedError`` naming the shapes; plane–plane, plane–height field and height field–height
field never collide (MuJoCo does not collide them either).

Broad phase (:mod:`jaxart.collision.broad`): groups of many candidate pairs run the narrow phase only
on their ``pair_capacity`` closest pairs per step (bounding volumes of :mod:`jaxart.collision.bounds`);
dropped overlapping pairs and contacts are counted by :func:`collide_with_stats` and reported by a
:class:`CollisionOverflowWarning`.
"""

from jaxart.collision.bounds import shape_bounding_radius
from jaxart.collision.broad import default_pair_capacity, pair_capacities
from jaxart.collision.collide import (
    NARROW_PHASE,
    collide,
    collide_with_stats,
    default_capacity,
    shape_world_transforms,
)
from jaxart.collision.contacts import Contacts
from jaxart.collision.geometry import NarrowResult
from jaxart.collision.hull_geometry import stack_hulls
from jaxart.collision.narrow_box import box_box
from jaxart.collision.narrow_convex import (
    capsule_box,
    capsule_capsule,
    capsule_cylinder,
    sphere_box,
    sphere_capsule,
    sphere_cylinder,
    sphere_sphere,
)
from jaxart.collision.narrow_cylinder import cylinder_box, cylinder_cylinder, cylinder_mesh
from jaxart.collision.narrow_mesh import box_mesh, capsule_mesh, mesh_mesh, sphere_mesh
from jaxart.collision.narrow_plane import (
    plane_box,
    plane_capsule,
    plane_cylinder,
    plane_ellipsoid,
    plane_mesh,
    plane_sphere,
)
from jaxart.collision.pairs import PairGroup, candidate_pairs, group_pairs, groups_collide, pair_groups
from jaxart.collision.stats import CollideStats, CollisionOverflowWarning

__all__ = [
    "NARROW_PHASE",
    "CollideStats",
    "CollisionOverflowWarning",
    "Contacts",
    "NarrowResult",
    "PairGroup",
    "box_box",
    "box_mesh",
    "candidate_pairs",
    "capsule_box",
    "capsule_capsule",
    "capsule_cylinder",
    "capsule_mesh",
    "collide",
    "collide_with_stats",
    "cylinder_box",
    "cylinder_cylinder",
    "cylinder_mesh",
    "default_capacity",
    "default_pair_capacity",
    "group_pairs",
    "mesh_mesh",
    "groups_collide",
    "pair_capacities",
    "pair_groups",
    "plane_box",
    "plane_capsule",
    "plane_cylinder",
    "plane_ellipsoid",
    "plane_mesh",
    "plane_sphere",
    "shape_bounding_radius",
    "shape_world_transforms",
    "sphere_box",
    "sphere_capsule",
    "sphere_cylinder",
    "sphere_mesh",
    "sphere_sphere",
    "stack_hulls",
]
