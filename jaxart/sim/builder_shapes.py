"""Shape-adding methods of ``ModelBuilder`` (mixin) and mass accumulation from densities."""

from __future__ import annotations

import numpy as np

from jaxart.sim.configs import ShapeConfig
from jaxart.sim.contact_pairs import ContactPairConfig
from jaxart.sim.enums import GeoType
from jaxart.sim.heightfield import Heightfield, check_heightfield_shape
from jaxart.sim.inertia import combine_mass, shape_mass_properties
from jaxart.sim.mesh_hull import HullTables, convex_hull_tables
from jaxart.sim.validate import (
    as_array,
    as_float,
    as_transform,
    as_vec3,
    np_quat_between,
    np_quat_to_matrix,
)

SHAPE_FLAG_VISIBLE = 1
SHAPE_FLAG_COLLIDE_SHAPES = 2
SHAPE_FLAG_SITE = 4


class Mesh:
    """A triangle mesh for ``add_shape_mesh`` (Newton's ``newton.Mesh``, host data).

    Args:
        vertices: ``(v, 3)`` vertex positions [m] in the shape frame.
        indices: ``(t, 3)`` or flat ``(3t,)`` triangle indices, outward winding.
        is_solid: Whether mass is computed for a solid.
        maxhullvert: Vertex cap of the convex hull collision uses: ``n > 3`` with MuJoCo's
            ``<mesh maxhullvert>`` semantics, −1 = no cap, ``None`` (default) = at most
            :data:`~jaxart.sim.mesh_hull.DEFAULT_MAXHULLVERT` vertices chosen greedily (see
            :mod:`jaxart.sim.mesh_hull`).
    """

    def __init__(self, vertices, indices, *, is_solid: bool = True, maxhullvert: int | None = None) -> None:
        v = np.asarray(vertices, dtype=np.float64)
        i = np.asarray(indices, dtype=np.int64).reshape(-1, 3) if np.size(indices) else np.zeros((0, 3), int)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) < 4:
            raise ValueError(f"Mesh: vertices must have shape (v >= 4, 3), got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError("Mesh: vertices must be finite")
        if i.size and (i.min() < 0 or i.max() >= len(v)):
            raise ValueError(f"Mesh: indices must lie in [0, {len(v)}), got range [{i.min()}, {i.max()}]")
        self.vertices = v
        self.indices = i
        self.is_solid = bool(is_solid)
        if maxhullvert is not None and (isinstance(maxhullvert, bool) or not isinstance(
                maxhullvert, (int, np.integer)) or (maxhullvert != -1 and maxhullvert < 4)):
            raise ValueError(f"Mesh: maxhullvert must be None, -1 (no limit) or an int > 3, got {maxhullvert!r}")
        self.maxhullvert = None if maxhullvert is None else int(maxhullvert)
        self._hull: HullTables | None = None

    @property
    def hull(self) -> HullTables:
        """Convex hull tables collision uses (computed on first access, then cached on this mesh)."""
        if self._hull is None:
            self._hull = convex_hull_tables(self.vertices, self.indices, self.maxhullvert)
        return self._hull


class ShapeBuilderMixin:
    """Shape methods; expects the body lists of :class:`~jaxart.sim.builder.ModelBuilder`."""

    def _init_shapes(self) -> None:
        self.shape_type: list[int] = []
        self.shape_body: list[int] = []
        self.shape_transform: list[np.ndarray] = []
        self.shape_scale: list[np.ndarray] = []
        self.shape_cfg: list[ShapeConfig] = []
        self.shape_label: list[str] = []
        self.shape_source: list[Mesh | Heightfield | None] = []
        self.shape_collision_filter_pairs: list[tuple[int, int]] = []
        self.shape_explicit_contact_pairs: list[tuple[int, int]] = []
        self.shape_explicit_contact_pair_cfg: list[ContactPairConfig] = []

    @property
    def shape_count(self) -> int:
        """Number of shapes added so far."""
        return len(self.shape_type)

    def add_shape(self, *, body: int, type: int, xform=None, cfg: ShapeConfig | None = None, scale=None,
                  src: Mesh | Heightfield | None = None, is_static: bool = False, color=None, opacity=None,
                  label: str | None = None, custom_attributes: dict | None = None) -> int:
        """Add a shape of any :class:`GeoType` to ``body`` (−1 = static world shape).

        Args:
            body: Owning body index, or −1.
            type: :class:`GeoType`.
            xform: Shape pose in the body frame (world frame for ``body=-1``).
            cfg: :class:`ShapeConfig`; defaults to ``default_shape_cfg``.
            scale: Geometry parameters (see ``Model.shape_scale``).
            src: :class:`Mesh` for MESH/CONVEX_MESH shapes, :class:`Heightfield` for HFIELD (``body=-1``).
            is_static: Static shapes add no mass.
            color, opacity: Accepted for API compatibility (no renderer).
            label: Unique name (defaults to ``shape_<index>``).
            custom_attributes: Must be empty.

        Returns:
            The shape index.
        """
        idx = self.shape_count
        name = self._check_label(label, f"shape_{idx}", self.shape_label, "shape")
        try:
            geo = GeoType(int(type))
        except (TypeError, ValueError):
            raise ValueError(f"add_shape(label={name!r}): unknown geometry type {type!r}; use jaxart.GeoType") from None
        what = f"add_shape_{geo.name.lower()}(label={name!r}, body={body})"
        self._no_custom(custom_attributes, what)
        self._check_body(body, f"{what}: body", allow_world=True)
        cfg = (self.default_shape_cfg if cfg is None else cfg)
        if not isinstance(cfg, ShapeConfig):
            raise TypeError(f"{what}: cfg must be a ModelBuilder.ShapeConfig, got {type(cfg).__name__}")
        cfg = cfg.copy()
        cfg.validate(what)
        s = np.zeros(3) if scale is None else as_vec3(scale, f"{what}: scale")
        if geo in (GeoType.MESH, GeoType.CONVEX_MESH) and not isinstance(src, Mesh):
            raise TypeError(f"{what}: mesh shapes need src=jaxart.Mesh(vertices, indices)")
        check_heightfield_shape(geo, body, src, what)
        self._check_scale(geo, s, what)
        x = as_transform(xform, f"{what}: xform")
        self.shape_type.append(int(geo))
        self.shape_body.append(int(body))
        self.shape_transform.append(x)
        self.shape_scale.append(s)
        self.shape_cfg.append(cfg)
        self.shape_label.append(name)
        self.shape_source.append(src)
        self.body_shapes.setdefault(int(body), []).append(idx)
        if body >= 0 and not is_static and not cfg.is_site:
            self._accumulate_mass(body, geo, s, x, cfg, src)
        return idx

    @staticmethod
    def _check_scale(geo: GeoType, s: np.ndarray, what: str) -> None:
        need = {GeoType.SPHERE: 1, GeoType.CAPSULE: 2, GeoType.CYLINDER: 2, GeoType.CONE: 2,
                GeoType.BOX: 3, GeoType.ELLIPSOID: 3, GeoType.MESH: 3, GeoType.CONVEX_MESH: 3, GeoType.HFIELD: 3}
        k = need.get(geo, 0)
        if np.any(s[:k] <= 0.0):
            raise ValueError(f"{what}: size parameters must be > 0, got {s[:k].tolist()}")
        if geo == GeoType.PLANE and np.any(s[:2] < 0.0):
            raise ValueError(f"{what}: plane width/length must be >= 0 (0 = infinite), got {s[:2].tolist()}")

    def _accumulate_mass(self, body, geo, s, x, cfg: ShapeConfig, src) -> None:
        if self.body_lock_inertia[body] or cfg.density <= 0.0:
            return
        verts = None if src is None else src.vertices * s
        m, c, inertia = shape_mass_properties(geo, s, cfg.density, is_solid=cfg.is_solid,
                                              vertices=verts, indices=None if src is None else src.indices)
        if m <= 0.0:
            return
        rot = np_quat_to_matrix(x[3:])
        c_body = x[:3] + rot @ c
        i_body = rot @ inertia @ rot.T
        m0, c0, i0 = self.body_mass[body], self.body_com[body], self.body_inertia[body]
        self.body_mass[body], self.body_com[body], self.body_inertia[body] = combine_mass(m0, c0, i0, m, c_body, i_body)

    # ---------------------------------------------------------------- helpers
    def _prim(self, body, geo, xform, scale, cfg, as_site, label, **kw) -> int:
        if as_site:
            cfg = ShapeConfig(density=0.0, has_shape_collision=False, is_visible=False, is_site=True,
                              collision_group=0)
        return self.add_shape(body=body, type=geo, xform=xform, cfg=cfg, scale=scale, label=label, **kw)

    def add_shape_sphere(self, body: int, *, xform=None, radius: float = 1.0, cfg=None, as_site: bool = False,
                         color=None, opacity=None, label: str | None = None, custom_attributes=None) -> int:
        """Sphere of ``radius`` [m]."""
        return self._prim(body, GeoType.SPHERE, xform, (radius, 0.0, 0.0), cfg, as_site, label,
                          custom_attributes=custom_attributes)

    def add_shape_ellipsoid(self, body: int, *, xform=None, rx: float = 1.0, ry: float = 0.75, rz: float = 0.5,
                            cfg=None, as_site: bool = False, color=None, opacity=None, label: str | None = None,
                            custom_attributes=None) -> int:
        """Ellipsoid with semi-axes ``rx, ry, rz`` [m]."""
        return self._prim(body, GeoType.ELLIPSOID, xform, (rx, ry, rz), cfg, as_site, label,
                          custom_attributes=custom_attributes)

    def add_shape_box(self, body: int, *, xform=None, hx: float = 0.5, hy: float = 0.5, hz: float = 0.5, cfg=None,
                      as_site: bool = False, color=None, opacity=None, label: str | None = None,
                      custom_attributes=None) -> int:
        """Box with half extents ``hx, hy, hz`` [m]."""
        return self._prim(body, GeoType.BOX, xform, (hx, hy, hz), cfg, as_site, label,
                          custom_attributes=custom_attributes)

    def add_shape_capsule(self, body: int, *, xform=None, radius: float = 1.0, half_height: float = 0.5, cfg=None,
                          as_site: bool = False, color=None, opacity=None, label: str | None = None,
                          custom_attributes=None) -> int:
        """Capsule along local Z: cylinder of ``half_height`` plus hemispherical caps of ``radius``."""
        return self._prim(body, GeoType.CAPSULE, xform, (radius, half_height, 0.0), cfg, as_site, label,
                          custom_attributes=custom_attributes)

    def add_shape_cylinder(self, body: int, *, xform=None, radius: float = 1.0, half_height: float = 0.5,
                           barrel_radius: float = 0.0, cfg=None, as_site: bool = False, color=None, opacity=None,
                           label: str | None = None, custom_attributes=None) -> int:
        """Cylinder along local Z; ``barrel_radius`` other than 0 is not supported."""
        if barrel_radius:
            raise NotImplementedError("add_shape_cylinder: barrel_radius (rounded cylinders) is not supported")
        return self._prim(body, GeoType.CYLINDER, xform, (radius, half_height, 0.0), cfg, as_site, label,
                          custom_attributes=custom_attributes)

    def add_shape_cone(self, body: int, *, xform=None, radius: float = 1.0, half_height: float = 0.5, cfg=None,
                       as_site: bool = False, color=None, opacity=None, label: str | None = None,
                       custom_attributes=None) -> int:
        """Cone along local Z: base of ``radius`` at ``-half_height``, apex at ``+half_height``."""
        return self._prim(body, GeoType.CONE, xform, (radius, half_height, 0.0), cfg, as_site, label,
                          custom_attributes=custom_attributes)

    def add_shape_mesh(self, body: int, *, xform=None, mesh: Mesh | None = None, scale=None, cfg=None, color=None,
                       opacity=None, label: str | None = None, custom_attributes=None) -> int:
        """Triangle mesh (collision uses its vertices' convex hull)."""
        s = (1.0, 1.0, 1.0) if scale is None else scale
        return self.add_shape(body=body, type=GeoType.MESH, xform=xform, cfg=cfg, scale=s, src=mesh, label=label,
                              custom_attributes=custom_attributes)

    def add_shape_heightfield(self, *, body: int = -1, xform=None, heightfield: Heightfield | None = None,
                              scale=None, cfg=None, color=None, opacity=None, label: str | None = None,
                              custom_attributes=None) -> int:
        """Static heightfield (2D elevation grid, :class:`~jaxart.sim.heightfield.Heightfield`); massless.

        ``scale`` multiplies ``(hx, hy)`` and ``(min_z, max_z)`` (Newton's per-instance scale); ``body``
        must be −1 (heightfields are static). ``xform`` places the grid frame in the world.
        """
        s = (1.0, 1.0, 1.0) if scale is None else scale
        return self.add_shape(body=body, type=GeoType.HFIELD, xform=xform, cfg=cfg, scale=s, src=heightfield,
                              is_static=True, label=label, custom_attributes=custom_attributes)

    def add_shape_plane(self, plane=(0.0, 0.0, 1.0, 0.0), *, xform=None, width: float = 10.0,
                        length: float = 10.0, body: int = -1, cfg=None, color=None, opacity=None,
                        label: str | None = None, custom_attributes=None) -> int:
        """Plane ``a x + b y + c z + d = 0`` (normal = local +Z of ``xform``); static, massless.

        ``width``/``length`` of 0 make the plane infinite for collision.
        """
        if xform is None:
            p = as_array(plane, (4,), f"add_shape_plane(label={label!r}): plane")
            n = np.linalg.norm(p[:3])
            if n < 1e-12:
                raise ValueError(f"add_shape_plane(label={label!r}): plane normal (a, b, c) must be non-zero")
            normal = p[:3] / n
            xform = np.concatenate([-(p[3] / n) * normal, np_quat_between(np.array([0.0, 0.0, 1.0]), normal)])
        w = as_float(width, f"add_shape_plane(label={label!r}): width", nonneg=True)
        ln = as_float(length, f"add_shape_plane(label={label!r}): length", nonneg=True)
        return self.add_shape(body=body, type=GeoType.PLANE, xform=xform, cfg=cfg, scale=(w, ln, 0.0),
                              is_static=True, label=label, custom_attributes=custom_attributes)

    def add_ground_plane(self, *, height: float = 0.0, cfg=None, color=None, opacity=None,
                         label: str | None = None) -> int:
        """Infinite static ground plane at ``height`` along the up axis."""
        h = as_float(height, "add_ground_plane: height")
        return self.add_shape_plane(plane=(*self.up_vector, -h), width=0.0, length=0.0, cfg=cfg,
                                    label=label or "ground_plane")

    def add_site(self, body: int, *, xform=None, type: int = GeoType.SPHERE, scale=(0.01, 0.01, 0.01),
                 label: str | None = None, visible: bool = False, custom_attributes=None) -> int:
        """Add a site: a massless, non-colliding reference frame on ``body``."""
        cfg = ShapeConfig(density=0.0, has_shape_collision=False, is_visible=bool(visible), is_site=True,
                          collision_group=0)
        return self.add_shape(body=body, type=type, xform=xform, cfg=cfg, scale=scale, label=label,
                              custom_attributes=custom_attributes)

    def add_shape_collision_filter_pair(self, shape_a: int, shape_b: int) -> None:
        """Never generate contacts between these two shapes."""
        for s in (shape_a, shape_b):
            if not 0 <= int(s) < self.shape_count:
                raise ValueError(f"add_shape_collision_filter_pair: shape index {s} does not exist")
        self.shape_collision_filter_pairs.append((min(shape_a, shape_b), max(shape_a, shape_b)))

    def add_shape_contact_pair(self, shape_a: int, shape_b: int, cfg: ContactPairConfig | None = None) -> None:
        """Always test ``shape_a`` against ``shape_b`` for contact (jaxart extension; MJCF ``<contact><pair>``).

        An explicit pair bypasses every broad-phase filter: collision groups (including group 0),
        ``has_shape_collision``, same-body/parent–child filtering and
        ``add_shape_collision_filter_pair``, like MuJoCo's explicit pairs bypass ``contype``/
        ``conaffinity`` and ``<exclude>``. A pair that the group rules already generate is still
        tested once. The pair's contacts use ``cfg``'s parameters (stiffness, damping, friction, margin,
        gap; :mod:`jaxart.sim.contact_pairs`) in every solver; parameters left ``None`` are those of the two
        shapes (averaged as for any contact), resolved at ``finalize``.

        Args:
            shape_a: First shape index.
            shape_b: Second shape index (order is irrelevant; stored as ``(min, max)``).
            cfg: The pair's :class:`~jaxart.sim.contact_pairs.ContactPairConfig` (``None``: all from the shapes).

        Raises:
            ValueError: A shape index does not exist or is a site, both indices are the same shape, or the
                pair was already added.
            TypeError: ``cfg`` is not a ``ContactPairConfig``.
        """
        what = "add_shape_contact_pair"
        idx = []
        for s in (shape_a, shape_b):
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
                raise ValueError(f"{what}: shape index must be an int, got {s!r}")
            if not 0 <= int(s) < self.shape_count:
                raise ValueError(f"{what}: shape index {s} does not exist ({self.shape_count} shapes)")
            if self.shape_cfg[int(s)].is_site:
                raise ValueError(f"{what}: shape {self.shape_label[int(s)]!r} is a site; sites never collide")
            idx.append(int(s))
        a, b = min(idx), max(idx)
        if a == b:
            raise ValueError(f"{what}: a shape cannot be paired with itself (shape {self.shape_label[a]!r})")
        if (a, b) in self.shape_explicit_contact_pairs:
            raise ValueError(f"{what}: shapes {self.shape_label[a]!r} and {self.shape_label[b]!r} are already an "
                             "explicit contact pair")
        if cfg is not None and not isinstance(cfg, ContactPairConfig):
            raise TypeError(f"{what}: cfg must be a ContactPairConfig or None, got {type(cfg).__name__}")
        self.shape_explicit_contact_pairs.append((a, b))
        self.shape_explicit_contact_pair_cfg.append(ContactPairConfig() if cfg is None else cfg)
