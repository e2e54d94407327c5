"""``collide(model, state)``: world shape poses → candidate pairs → narrow phase → ``Contacts``.

Semantics (Newton 1.8):

* **margin** (``Model.shape_margin``) inflates a shape's surface outward; the reported
  ``separation`` is the geometric surface distance minus ``margin_a + margin_b``.
* **gap** (``Model.shape_gap``) is the detection distance: a contact is ``active`` when
  ``separation < gap_a + gap_b`` (Newton writes a contact when ``d < gap_a + gap_b``). Passing
  ``gap=`` to :func:`collide` replaces that per-pair sum by one scalar for all pairs.
* **explicit pairs** (``ModelBuilder.add_shape_contact_pair``) use their own total margin and gap
  (``Model.contact_pair_margin`` / ``contact_pair_gap``) instead of the two shapes' sums; each row
  records its explicit pair in ``Contacts.pair`` (−1 for none).
* **pair capacity** (broad phase, :mod:`jaxart.collision.broad`): per ``(type_a, type_b)`` group at
  most ``pair_capacity`` pairs run the narrow phase each step, the ones whose bounding volumes are
  closest; by default small groups run in full and groups of many candidate pairs are culled.
* **capacity** defaults to the total number of narrow-phase slots of the evaluated pairs (static,
  every contact of the evaluated pairs fits). A smaller capacity keeps the deepest active contacts
  (smallest separation, ``lax.top_k``); a larger one pads with inactive rows.
* **overflow**: overlapping pairs beyond a group's pair capacity and active contacts beyond
  ``capacity`` are counted (:func:`collide_with_stats`) and reported by a run-time
  :class:`~jaxart.collision.CollisionOverflowWarning`.

Differentiability: distances and points are smooth functions of the body poses within each
contact configuration (which face, which vertex, which SAT axis); the discrete choices are made
by ``argmax``/``where`` and carry no gradient. Normals are differentiated as computed: the unit
centre-to-centre / closest-point direction for sphere and capsule pairs (smooth away from
coincident points), the owning shape's face axis for plane and box pairs (rotates with that
shape). At degenerate configurations (coincident centres, an upright cylinder on a plane) a
fixed fallback direction is used and the normal's gradient there is zero; distances and their
gradients stay finite everywhere. Capsule–box/cylinder/mesh search the deepest point of the
capsule's core segment with a fixed-iteration golden-section search whose parameter is under
``stop_gradient``; the distance's gradient is still exact (envelope theorem: at the minimiser the
distance is stationary in the parameter). Ellipsoid pairs use the generic convex solver
(:mod:`jaxart.collision.epa`): its search carries no gradient, the distance is recomputed from witness
points held in each shape's frame (first-order exact) and the normal is held. Height fields against
spheres and capsules are closed forms per prism (:mod:`jaxart.collision.prism`), against cylinders and
ellipsoids an exact separating-axis maximum (:mod:`jaxart.collision.prism_cylinder`,
:mod:`jaxart.collision.prism_ellipsoid`; axis held like the generic solver's normal), against boxes and
meshes the polytope separating-axis test.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxart.collision import (
    broad,
    narrow_box,
    narrow_convex,
    narrow_convex_generic,
    narrow_cylinder,
    narrow_hfield,
    narrow_mesh,
    narrow_plane,
)
from jaxart.collision.bounds import shape_bounding_radius, shape_bounding_radius_host
from jaxart.collision.broad import pair_capacities
from jaxart.collision.contacts import Contacts, pair_row_values
from jaxart.collision.hull_geometry import stack_hulls
from jaxart.collision.pairs import PairGroup, pair_groups
from jaxart.collision.stats import CollideStats, report_overflow
from jaxart.math.static_index import take_rows
from jaxart.math.transform import transform_mul
from jaxart.sim.enums import GeoType
from jaxart.sim.heightfield import DEFAULT_HFIELD_BASE, Heightfield

G = GeoType

#: Narrow-phase function for each supported ``(type_a, type_b)`` (A = lower GeoType).
NARROW_PHASE = {
    (G.PLANE, G.SPHERE): narrow_plane.plane_sphere,
    (G.PLANE, G.CAPSULE): narrow_plane.plane_capsule,
    (G.PLANE, G.ELLIPSOID): narrow_plane.plane_ellipsoid,
    (G.PLANE, G.CYLINDER): narrow_plane.plane_cylinder,
    (G.PLANE, G.BOX): narrow_plane.plane_box,
    (G.PLANE, G.MESH): narrow_plane.plane_mesh,
    (G.PLANE, G.CONVEX_MESH): narrow_plane.plane_mesh,
    (G.SPHERE, G.SPHERE): narrow_convex.sphere_sphere,
    (G.SPHERE, G.CAPSULE): narrow_convex.sphere_capsule,
    (G.SPHERE, G.CYLINDER): narrow_convex.sphere_cylinder,
    (G.SPHERE, G.BOX): narrow_convex.sphere_box,
    (G.CAPSULE, G.CYLINDER): narrow_convex.capsule_cylinder,
    (G.CAPSULE, G.CAPSULE): narrow_convex.capsule_capsule,
    (G.CAPSULE, G.BOX): narrow_convex.capsule_box,
    (G.BOX, G.BOX): narrow_box.box_box,
    (G.SPHERE, G.MESH): narrow_mesh.sphere_mesh,
    (G.SPHERE, G.CONVEX_MESH): narrow_mesh.sphere_mesh,
    (G.CAPSULE, G.MESH): narrow_mesh.capsule_mesh,
    (G.CAPSULE, G.CONVEX_MESH): narrow_mesh.capsule_mesh,
    (G.BOX, G.MESH): narrow_mesh.box_mesh,
    (G.BOX, G.CONVEX_MESH): narrow_mesh.box_mesh,
    (G.CYLINDER, G.CYLINDER): narrow_cylinder.cylinder_cylinder,
    (G.CYLINDER, G.BOX): narrow_cylinder.cylinder_box,
    (G.CYLINDER, G.MESH): narrow_cylinder.cylinder_mesh,
    (G.CYLINDER, G.CONVEX_MESH): narrow_cylinder.cylinder_mesh,
    (G.MESH, G.MESH): narrow_mesh.mesh_mesh,
    (G.MESH, G.CONVEX_MESH): narrow_mesh.mesh_mesh,
    (G.CONVEX_MESH, G.CONVEX_MESH): narrow_mesh.mesh_mesh,
    (G.SPHERE, G.ELLIPSOID): narrow_convex_generic.sphere_ellipsoid,
    (G.CAPSULE, G.ELLIPSOID): narrow_convex_generic.capsule_ellipsoid,
    (G.ELLIPSOID, G.ELLIPSOID): narrow_convex_generic.ellipsoid_ellipsoid,
    (G.ELLIPSOID, G.CYLINDER): narrow_convex_generic.ellipsoid_cylinder,
    (G.ELLIPSOID, G.BOX): narrow_convex_generic.ellipsoid_box,
    (G.ELLIPSOID, G.MESH): narrow_convex_generic.ellipsoid_mesh,
    (G.ELLIPSOID, G.CONVEX_MESH): narrow_convex_generic.ellipsoid_mesh,
    (G.HFIELD, G.SPHERE): narrow_hfield.hfield_sphere,
    (G.HFIELD, G.CAPSULE): narrow_hfield.hfield_capsule,
    (G.HFIELD, G.ELLIPSOID): narrow_hfield.hfield_ellipsoid,
    (G.HFIELD, G.CYLINDER): narrow_hfield.hfield_cylinder,
    (G.HFIELD, G.BOX): narrow_hfield.hfield_box,
    (G.HFIELD, G.MESH): narrow_hfield.hfield_mesh,
    (G.HFIELD, G.CONVEX_MESH): narrow_hfield.hfield_mesh,
}

#: Pairs that never produce contacts by design (two planes: both are usually static; MuJoCo does not
#: collide planes with height fields either).
NEVER_COLLIDE = {(G.PLANE, G.PLANE), (G.PLANE, G.HFIELD), (G.HFIELD, G.HFIELD)}

_MESH_TYPES = (G.MESH, G.CONVEX_MESH)


def shape_world_transforms(model, body_q: jnp.ndarray) -> jnp.ndarray:
    """World transforms ``(shape_count, 7)`` of all shapes (static shapes: ``shape_transform``)."""
    body = np.asarray(model.topology.shape_body)
    ident = jnp.zeros((1, 7), body_q.dtype).at[0, 6].set(1.0)
    ext = jnp.concatenate([body_q, ident], axis=0)
    idx = np.where(body >= 0, body, body_q.shape[0])
    return transform_mul(take_rows(ext, idx), model.shape_transform.astype(body_q.dtype))


def _check_supported(model, groups: tuple[PairGroup, ...]) -> None:
    missing = [g for g in groups if (g.type_a, g.type_b) not in NARROW_PHASE and (g.type_a, g.type_b) not in
               NEVER_COLLIDE]
    if missing:
        labels = model.topology.shape_label
        parts = [f"{G(g.type_a).name}-{G(g.type_b).name} (e.g. shapes {labels[g.shape_a[0]]!r} and "
                 f"{labels[g.shape_b[0]]!r})" for g in missing]
        raise NotImplementedError(
            "collide: no narrow phase for shape pairs " + "; ".join(parts)
            + ". Exclude them with collision groups, ShapeConfig(has_shape_collision=False) or "
            "add_shape_collision_filter_pair."
        )


def _hfield_inputs(model, g: PairGroup, dtype):
    """Static height-field data of a HFIELD group: ``(heights (P, R, C), info (P, 5))`` and the cell window.

    The window (rows, cols of cells, the same for the group) covers the other shape's bounding
    sphere plus its margin and gap on the finest grid; it needs concrete shape parameters (a model
    traced as a ``jit`` argument falls back to the whole grid).
    """
    srcs = []
    for s in g.shape_a:
        src = model.meshes[int(s)] if int(s) < len(model.meshes) else None
        if not isinstance(src, Heightfield):
            raise ValueError(f"collide: heightfield shape {model.topology.shape_label[int(s)]!r} has no Heightfield")
        srcs.append(src)
    nr, nc = max(h.nrow for h in srcs), max(h.ncol for h in srcs)
    heights = np.zeros((len(srcs), nr, nc))
    info = np.zeros((len(srcs), 5))
    for i, h in enumerate(srcs):
        heights[i, : h.nrow, : h.ncol] = h.heights
        base = DEFAULT_HFIELD_BASE if h.base is None else h.base
        info[i] = (h.hx, h.hy, h.nrow, h.ncol, h.min_z - base)
    try:
        scale = np.asarray(model.shape_scale, np.float64)
        extra = np.asarray(model.shape_margin, np.float64) + np.asarray(model.shape_gap, np.float64)
        radii = shape_bounding_radius_host(model)
    except jax.errors.TracerArrayConversionError:
        return (jnp.asarray(heights, dtype), jnp.asarray(info, dtype)), (nr - 1, nc - 1)
    reach = radii[g.shape_b] + extra[g.shape_b] + extra[g.shape_a]
    cell_x = min(2.0 * h.hx * scale[int(s), 0] / (h.ncol - 1) for h, s in zip(srcs, g.shape_a, strict=True))
    cell_y = min(2.0 * h.hy * scale[int(s), 1] / (h.nrow - 1) for h, s in zip(srcs, g.shape_a, strict=True))
    # an interval of length L overlaps at most floor(L / cell) + 2 cells (see narrow_hfield's window origin)
    wr = min(nr - 1, int(np.floor(2.0 * reach.max() / cell_y)) + 2)
    wc = min(nc - 1, int(np.floor(2.0 * reach.max() / cell_x)) + 2)
    return (jnp.asarray(heights, dtype), jnp.asarray(info, dtype)), (wr, wc)


def _mesh_arrays(model, shapes: np.ndarray, dtype):
    """Convex-hull tables ``(verts, vmask, planes, faces, edges)`` of the meshes of ``shapes``, padded per group.

    Each table is padded to the largest hull among ``shapes`` (not the raw meshes; see
    :func:`~jaxart.collision.hull_geometry.stack_hulls`). The hulls are computed once per mesh
    (cached on the :class:`~jaxart.sim.builder_shapes.Mesh`), not per call.
    """
    hulls = []
    for s in shapes:
        mesh = model.meshes[int(s)] if int(s) < len(model.meshes) else None
        if mesh is None or not hasattr(mesh, "hull"):
            raise ValueError(f"collide: mesh shape {model.topology.shape_label[int(s)]!r} has no vertex data")
        hulls.append(mesh.hull)
    return stack_hulls(hulls, dtype)


def _narrow(model, xw: jnp.ndarray, groups: tuple[PairGroup, ...], caps: tuple[int, ...] | None = None, gap=None):
    """Run every group's narrow phase; return flat results, the shape and explicit-pair indices and the selections.

    A group whose pair capacity (``caps``, :mod:`jaxart.collision.broad`) is below its pair count runs
    on its selected pairs only; its shape indices are then traced instead of static numpy arrays.
    """
    scale = model.shape_scale.astype(xw.dtype)
    culled = caps is not None and any(c < len(g.shape_a) for c, g in zip(caps, groups, strict=True))
    radius = shape_bounding_radius(model, xw.dtype) if culled else None
    parts, sa_all, sb_all, pr_all, sels = [], [], [], [], []
    for i, g in enumerate(groups):
        key = (g.type_a, g.type_b)
        if key in NEVER_COLLIDE:
            continue
        fn = NARROW_PHASE[key]
        sel = _select(model, xw, radius, g, None if caps is None else caps[i], gap)
        if sel is not None:
            sels.append(sel)
            if sel.index.shape[0] == 0:
                continue
        args = [take_rows(x, shapes) for shapes in (g.shape_a, g.shape_b) for x in (xw, scale)]
        for t, shapes in ((g.type_a, g.shape_a), (g.type_b, g.shape_b)):
            if t in _MESH_TYPES:
                args.extend(_mesh_arrays(model, shapes, xw.dtype))
            elif t == G.HFIELD:
                hf_arrays, window = _hfield_inputs(model, g, xw.dtype)
                args.extend(hf_arrays)
                fn = functools.partial(fn, window=window)
        if sel is not None:
            args = broad.take_selected(args, sel)
        with jax.named_scope(f"narrow_{G(g.type_a).name.lower()}_{G(g.type_b).name.lower()}"):
            res = jax.vmap(fn)(*args)
        if sel is not None:
            res = res._replace(valid=res.valid & sel.keep[:, None])
        k = res.dist.shape[1]
        parts.append(tuple(jnp.reshape(r, (-1, *r.shape[2:])) for r in res))
        sa_all.append(_slot_shapes(g.shape_a, k, sel))
        sb_all.append(_slot_shapes(g.shape_b, k, sel))
        pr_all.append(_slot_shapes(g.pair, k, sel))
    if not parts:
        empty = np.zeros(0, np.int32)
        return None, empty, empty, empty, sels
    flat = tuple(jnp.concatenate(p, axis=0) for p in zip(*parts, strict=True))
    cat = np.concatenate if all(isinstance(x, np.ndarray) for x in sa_all) else jnp.concatenate
    return flat, cat(sa_all).astype(np.int32), cat(sb_all).astype(np.int32), cat(pr_all).astype(np.int32), sels


def _select(model, xw, radius, g: PairGroup, cap: int | None, gap):
    """The group's broad-phase selection, or ``None`` when all its pairs are evaluated."""
    if cap is None or cap >= len(g.shape_a):
        return None
    thresh = broad.pair_threshold(model, g, xw.dtype, gap)
    with jax.named_scope(f"broad_{G(g.type_a).name.lower()}_{G(g.type_b).name.lower()}"):
        return broad.select_pairs(model, xw, radius, g, cap, thresh)


def _slot_shapes(shapes: np.ndarray, k: int, sel):
    """Per-pair index (shape or explicit pair) of every slot: static when the group is evaluated in full."""
    if sel is None:
        return np.repeat(shapes, k)
    return jnp.repeat(jnp.asarray(shapes)[sel.index], k)


def default_capacity(model, *, pair_capacity=None) -> int:
    """Contact rows ``collide`` returns by default: the narrow-phase slots of all evaluated pairs.

    A group evaluated in full contributes all its pairs' slots, a culled group its pair capacity's
    (see :mod:`jaxart.collision.broad`). Static (computed from the topology and mesh sizes without
    running anything); use it to preallocate solver buffers. Raises like :func:`collide`.
    """
    groups = pair_groups(model.topology)
    _check_supported(model, groups)
    caps = pair_capacities(groups, pair_capacity)
    body_q = jax.ShapeDtypeStruct((model.body_count, 7), model.shape_scale.dtype)
    out = jax.eval_shape(lambda q: _narrow(model, shape_world_transforms(model, q), groups, caps)[0], body_q)
    return 0 if out is None else int(out[0].shape[0])


def collide(model, state, *, capacity: int | None = None, gap: float | None = None, pair_capacity=None,
            overflow_warning: bool = True) -> Contacts:
    """Detect rigid contacts between the model's shapes at ``state.body_q``.

    Jittable (the model's topology is static), ``vmap``-able over a batch of states and
    differentiable with respect to body poses and shape parameters (see the module docstring for
    the gradient semantics and the margin/gap rules). :func:`collide_with_stats` also returns the
    overflow counts.

    Args:
        model: The :class:`~jaxart.Model`.
        state: A :class:`~jaxart.State` (only ``body_q`` is read).
        capacity: Number of contact rows (Newton's ``rigid_contact_max``, per world); default = all
            narrow-phase slots of the evaluated pairs. Smaller keeps the deepest active contacts.
        gap: Detection threshold [m] replacing ``shape_gap[a] + shape_gap[b]`` for every pair.
        pair_capacity: Broad-phase pairs evaluated per ``(type_a, type_b)`` group and step: ``None``
            (defaults of :mod:`jaxart.collision.broad`: small groups in full, large ones culled), an
            int for every group (a large int turns culling off), or a mapping ``{(GeoType, GeoType): int}``.
        overflow_warning: Emit a :class:`~jaxart.collision.CollisionOverflowWarning` at run time when
            overlapping pairs or active contacts are dropped (only compiled in when a group is culled or
            ``capacity`` is below the slot count; under ``vmap`` one host callback per batch).

    Returns:
        A :class:`Contacts` with ``capacity`` rows (``slot_bodies`` is ``None`` when pairs are culled or
        rows cut: the rows' bodies then change from step to step).

    Raises:
        NotImplementedError: A candidate pair has no narrow-phase function (e.g. cone–box).
        ValueError: ``capacity`` or a pair capacity is negative.
        TypeError: ``pair_capacity`` has the wrong type.
    """
    return collide_with_stats(model, state, capacity=capacity, gap=gap, pair_capacity=pair_capacity,
                              overflow_warning=overflow_warning)[0]


def collide_with_stats(model, state, *, capacity: int | None = None, gap: float | None = None, pair_capacity=None,
                       overflow_warning: bool = True) -> tuple[Contacts, CollideStats]:
    """:func:`collide` plus the :class:`~jaxart.collision.CollideStats` of the call (same arguments).

    Returns:
        ``(contacts, stats)``: ``stats.overflow > 0`` means pairs or contacts were dropped.
    """
    if capacity is not None and int(capacity) < 0:
        raise ValueError(f"collide: capacity must be >= 0, got {capacity}")
    groups = pair_groups(model.topology)
    _check_supported(model, groups)
    caps = pair_capacities(groups, pair_capacity)
    body_q = state.body_q
    dtype = body_q.dtype
    with jax.named_scope("collide"):
        xw = shape_world_transforms(model, body_q)
        flat, sa, sb, pr, sels = _narrow(model, xw, groups, caps, gap)
        n = len(sa)
        cap = n if capacity is None else int(capacity)
        if n == 0:
            return Contacts.empty(cap, dtype), _stats(sels, jnp.zeros((), jnp.int32), cap, overflow_warning, False)
        dist, point, normal, valid = flat
        pair = jnp.asarray(pr)
        margin = model.shape_margin.astype(dtype)
        sep = dist - pair_row_values(pair, model.contact_pair_margin, margin[sa] + margin[sb])
        shape_gap = model.shape_gap.astype(dtype)
        thresh = pair_row_values(pair, model.contact_pair_gap, shape_gap[sa] + shape_gap[sb]) if gap is None else gap
        active = valid & (sep < thresh)
        shape_body = np.asarray(model.topology.shape_body)
        static_rows = isinstance(sa, np.ndarray)
        body_of = (lambda s: shape_body[s]) if static_rows else (lambda s: jnp.asarray(shape_body, jnp.int32)[s])
        out = Contacts(
            point=point,
            point_a=point - 0.5 * dist[:, None] * normal,
            point_b=point + 0.5 * dist[:, None] * normal,
            normal=normal,
            separation=sep,
            shape_a=jnp.asarray(sa),
            shape_b=jnp.asarray(sb),
            body_a=jnp.asarray(body_of(sa), jnp.int32),
            body_b=jnp.asarray(body_of(sb), jnp.int32),
            pair=pair,
            active=active,
        )
        out = _fit_capacity(out, cap)
        if cap >= n and static_rows:  # every row keeps its static shape pair
            pad = (-1,) * (cap - n)
            out = out.replace(slot_bodies=(tuple(int(b) for b in shape_body[sa]) + pad,
                                           tuple(int(b) for b in shape_body[sb]) + pad))
        return out, _stats(sels, jnp.sum(active, dtype=jnp.int32), cap, overflow_warning, cap < n)


def _stats(sels, n_active, cap: int, warn: bool, cut: bool) -> CollideStats:
    """Overflow counts; the run-time warning is compiled in only when something can overflow."""
    zero = jnp.zeros((), jnp.int32)
    stats = CollideStats(
        pairs_overlapping=sum((s.overlapping for s in sels), zero),
        pair_overflow=sum((s.overflow for s in sels), zero),
        contacts_active=n_active,
        contact_overflow=jnp.maximum(n_active - cap, 0) if cut else zero,
    )
    if warn and (sels or cut):
        report_overflow(stats)
    return stats


def _fit_capacity(c: Contacts, cap: int) -> Contacts:
    n = c.capacity
    if cap == n:
        return c
    if cap > n:
        pad = Contacts.empty(cap - n, c.separation.dtype)
        return jax.tree_util.tree_map(lambda x, y: jnp.concatenate([x, y], axis=0), c, pad)
    big = jnp.asarray(jnp.finfo(c.separation.dtype).max, c.separation.dtype)
    _, idx = lax.top_k(jnp.where(c.active, -c.separation, -big), cap)
    return jax.tree_util.tree_map(lambda x: x[idx], c)
