"""URDF import (``ModelBuilder.add_urdf``), with Newton's keywords and semantics.

Mapping (URDF → jaxart):

=================================  ===================================================================
URDF                               jaxart
=================================  ===================================================================
link (name)                        link with label = name (``label_prefix`` adds ``"<prefix>/"``)
inertial (mass, origin xyz/rpy,    ``mass``, ``com``, full inertia tensor rotated into link axes,
full tensor)                       ``lock_inertia=True``; a link without one gets its mass from its
                                   collision shapes (``default_shape_cfg.density``, as Newton)
root link                          FIXED joint ``fixed_base`` to the world / ``parent_body`` (default),
                                   FREE ``floating_base`` (``floating=True``) or ``base_joint`` (dict of
                                   :meth:`~jaxart.ModelBuilder.add_joint` arguments)
revolute / continuous              REVOLUTE (continuous: unlimited)
prismatic                          PRISMATIC (limits and velocity limit times ``scale``)
fixed / floating                   FIXED / FREE
planar                             D6 with two linear axes spanning the plane normal to ``axis``
                                   (Newton's choice; MuJoCo adds a rotation about the normal)
joint origin, axis                 ``joint_X_p`` = origin, ``joint_X_c`` = identity, axis (normalised)
limit lower/upper/effort/velocity  ``limit_lower/upper``, ``effort_limit``, ``velocity_limit``
dynamics damping / friction        ``damping`` (``joint_damping_mode="drive"``: ``target_kd``), ``friction``
mimic                              :meth:`~jaxart.ModelBuilder.add_constraint_mimic` (chains of mimics are
                                   composed into the first non-mimic joint); a mimic whose follower or
                                   leader is not revolute/continuous/prismatic is dropped and reported
collision / visual                 shapes: box, sphere, cylinder, capsule, mesh (STL, OBJ, DAE, ... via
                                   trimesh); visuals are non-colliding, massless shapes (skipped, files
                                   unread, with ``hide_visuals``)
=================================  ===================================================================

Contact stiffness: collision shapes use ``builder.default_shape_cfg`` (Newton's ``ke`` = 2.5e3 N/m by
default). A floating robot whose weight would sink it more than 1 cm into the ground with those
stiffnesses gets a separate ``UserWarning`` naming ``default_shape_cfg.ke``
(:mod:`jaxart.io.contact_hint`).

Drives: like Newton, every revolute/prismatic/planar DOF gets ``actuator_mode`` POSITION (or
POSITION_VELOCITY with ``force_position_velocity_actuation``) with the builder's default gains.

Elements that cannot be represented (transmissions, Gazebo / ros2_control / MuJoCo extension
blocks, joint calibration and safety controllers, unknown geometry, dropped mimics, limits on
continuous/floating joints, faulty visuals) are listed in ONE ``UserWarning`` at the end of the import
(``strict=True``: ``ValueError`` before the builder is touched).

Faults: a malformed ``<collision>`` (missing or non-positive size, missing or unreadable mesh, no single
shape in ``<geometry>``) raises ``ValueError`` naming the link and element. The same fault in a
``<visual>`` only leaves that visual out (reported); a stray ``<material>`` inside a visual's
``<geometry>`` is ignored (reported) and the shape kept.
"""

from __future__ import annotations

import numbers
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from jaxart.io.contact_hint import sinking_hint
from jaxart.io.entry import add_base_joint, check_base_args, filter_self_collisions, text_source
from jaxart.io.mesh_report import hull_notes
from jaxart.io.urdf.geometry import add_link_shapes, check_primitive, load_mesh, resolve_uri
from jaxart.io.urdf.parse import UrdfJoint, UrdfRobot, parse_robot
from jaxart.io.urdf.srdf import check_links, filter_link_pairs, read_disabled_pairs, resolve_srdf
from jaxart.io.urdf.tree import IDENTITY, check_tree, collapse_fixed, order_joints
from jaxart.sim.enums import Axis, JointTargetMode, JointType
from jaxart.sim.validate import as_transform, np_quat_between, np_quat_to_matrix, np_transform_mul

_ONE_DOF = ("revolute", "continuous", "prismatic")
_UNSUPPORTED_KW = {"collapse_massless_fixed_root": False}
_UNSUPPORTED_KW_WHY = {"collapse_massless_fixed_root": "use collapse_fixed_joints=True (merges every fixed joint)"}


def load_urdf(source, *, package_dirs: list[str] | None = None) -> tuple[str, ET.Element, str | None]:
    """Read a URDF file path, ``package://`` / ``model://`` / ``file:`` URI, or XML string.

    Returns:
        ``(description for messages, <robot> element, folder of the file or None for a string)``.

    Raises:
        TypeError: ``source`` is not a string / path.
        ValueError: Missing file or malformed XML (the parser's message included).
    """
    source, is_xml, what = text_source(source, "add_urdf")
    if not is_xml and source.lower().startswith(("package://", "model://", "file:")):
        source = resolve_uri(source, urdf_dir=None, package_dirs=list(package_dirs or []), what="add_urdf: source")
    if not is_xml and not os.path.isfile(source):
        raise ValueError(f"add_urdf: URDF file {source!r} does not exist")
    try:
        root = ET.fromstring(source) if is_xml else ET.parse(source).getroot()
    except ET.ParseError as e:
        raise ValueError(f"add_urdf: malformed XML in {what}: {e}") from None
    if any(isinstance(el.tag, str) and el.tag.startswith("{http://www.ros.org/wiki/xacro}") for el in root.iter()):
        raise ValueError(f"add_urdf: {what} holds unexpanded xacro macros; run `xacro` on it first")
    return what, root, None if is_xml else os.path.dirname(os.path.abspath(source))


def _as_axis(value, what: str) -> Axis:
    if isinstance(value, str) and value.upper() in ("X", "Y", "Z"):
        return Axis[value.upper()]
    try:
        return Axis(int(value))
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be jaxart.Axis or 'X'/'Y'/'Z', got {value!r}") from None


def _check_args(builder, *, floating, base_joint, parent_body, scale, joint_ordering, joint_damping_mode,
                override_root_xform, xform, label_prefix, mesh_maxhullvert, unsupported) -> None:
    check_base_args(builder, "add_urdf", floating=floating, base_joint=base_joint, parent_body=parent_body)
    if not isinstance(scale, numbers.Real) or isinstance(scale, bool) or not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"add_urdf: scale must be a positive number, got {scale!r}")
    if joint_ordering not in ("dfs", "bfs", None):
        raise ValueError(f"add_urdf: joint_ordering must be 'dfs', 'bfs' or None, got {joint_ordering!r}")
    if joint_damping_mode not in ("passive", "drive"):
        raise ValueError(f"add_urdf: joint_damping_mode must be 'passive' or 'drive', got {joint_damping_mode!r}")
    if override_root_xform and xform is None:
        raise ValueError("add_urdf: override_root_xform=True requires xform")
    if mesh_maxhullvert is not None and (not isinstance(mesh_maxhullvert, numbers.Integral) or isinstance(
            mesh_maxhullvert, bool) or (mesh_maxhullvert != -1 and mesh_maxhullvert < 4)):
        raise ValueError("add_urdf: mesh_maxhullvert must be None, -1 (no cap) or an int > 3, "
                         f"got {mesh_maxhullvert!r}")
    unknown = sorted(set(unsupported) - set(_UNSUPPORTED_KW))
    if unknown:
        raise TypeError(f"add_urdf() got unexpected keyword argument(s) {unknown}")
    if label_prefix is not None and not isinstance(label_prefix, str):
        raise TypeError(f"add_urdf: label_prefix must be a str, got {type(label_prefix).__name__}")
    for key, default in _UNSUPPORTED_KW.items():
        if unsupported.get(key, default) != default:
            raise NotImplementedError(f"add_urdf: {key}={unsupported[key]!r} is not supported: "
                                      f"{_UNSUPPORTED_KW_WHY[key]}")


def add_urdf(builder, source, *, xform=None, floating: bool | None = None, base_joint: dict | None = None,
             parent_body: int = -1, scale: float = 1.0, hide_visuals: bool = False,
             parse_visuals_as_colliders: bool = False, up_axis=Axis.Z, force_show_colliders: bool = False,
             enable_self_collisions: bool = True, ignore_inertial_definitions: bool = False,
             joint_ordering: str | None = "dfs", bodies_follow_joint_ordering: bool = True,
             collapse_fixed_joints: bool = False, force_position_velocity_actuation: bool = False,
             override_root_xform: bool = False, joint_damping_mode: str = "passive",
             package_dirs: list | None = None, strict: bool = False, label_prefix: str | None = None,
             mesh_maxhullvert: int | None = None, srdf=None, **unsupported) -> dict:
    """Import a URDF robot into ``builder`` (see the module docstring for the mapping).

    Args:
        builder: Target :class:`~jaxart.ModelBuilder` (mutated).
        source: URDF file path, ``package://`` / ``model://`` / ``file:`` URI (resolved like meshes) or XML string.
        xform: Pose of the root link relative to ``parent_body`` (the world when −1).
        floating: ``None``/``False``: FIXED root joint; ``True``: FREE root joint (``parent_body=-1`` only).
        base_joint: ``add_joint`` keyword arguments (``joint_type``, ``linear_axes``, ``angular_axes``, ...)
            for a custom root joint; ``xform``'s translation goes to ``parent_xform`` and its inverse
            rotation to ``child_xform`` (Newton), or all of ``xform`` to ``parent_xform`` with
            ``override_root_xform``. Exclusive with ``floating``.
        parent_body: Body the root attaches to (−1 = world).
        scale: Length scale: positions, sizes, prismatic limits ×scale, inertia ×scale² (mass unchanged, as Newton).
        hide_visuals: Skip ``<visual>`` geometry: no visual shapes, and their mesh files are not read (Newton
            adds hidden visual shapes; they would neither render, collide nor add mass).
        parse_visuals_as_colliders: Use ``<visual>`` geometry as collision geometry (``<collision>`` ignored).
        up_axis: Up axis of the URDF; the model is rotated onto the builder's up axis, and cylinders and
            capsules are turned from Z onto ``up_axis`` in their link frames (Newton's behaviour).
        force_show_colliders: Collision shapes are rendered even when the model has visual shapes.
        enable_self_collisions: ``False`` filters every pair of the imported colliding shapes.
        ignore_inertial_definitions: Mass properties from the collision shapes' density instead of ``<inertial>``.
        joint_ordering: ``"dfs"`` (default), ``"bfs"`` or ``None`` (file order; parents first).
        bodies_follow_joint_ordering: Add links in joint order (root first); ``False``: file order.
        collapse_fixed_joints: Merge links attached by fixed joints into their parents.
        force_position_velocity_actuation: POSITION_VELOCITY instead of POSITION drive mode.
        override_root_xform: With ``base_joint``: put all of ``xform`` in the base joint's ``parent_xform``.
        joint_damping_mode: ``"passive"`` (``<dynamics damping>`` → ``damping``) or ``"drive"`` (→ ``target_kd``).
        package_dirs: Folders searched for ``package://`` / ``model://`` packages and relative paths.
        strict: Raise ``ValueError`` instead of warning about elements that cannot be represented.
        label_prefix: Prefix ``"<prefix>/"`` for every created label (import a robot twice).
        mesh_maxhullvert: Vertex cap of the convex hull every mesh collides through (MuJoCo's
            ``maxhullvert`` semantics; −1 = no cap; ``None`` = jaxart's default, see :mod:`jaxart.sim.mesh_hull`).
        srdf: Allowed-collision list (:mod:`jaxart.io.urdf.srdf`): an SRDF file path whose
            ``<disable_collisions>`` link pairs are added to the collision filter (every colliding shape
            pair of the two links), ``True`` to use the SRDF next to the URDF (``../srdf/<name>.srdf`` or
            ``<name>.srdf``, as ROS packages and ``example-robot-data`` ship them), ``None``/``False``: none.
        **unsupported: Newton keywords jaxart does not implement (``collapse_massless_fixed_root``):
            ``NotImplementedError`` unless left at their defaults.

    Returns:
        dict with ``"bodies"`` (link name → body index; collapsed links → the body they merged into),
        ``"joints"`` (URDF joint name and base joint label → joint index), ``"shapes"`` (link name →
        shape indices), ``"mimics"`` (follower joint name → mimic-constraint index), ``"articulation"``,
        ``"coord_start"`` / ``"dof_start"`` (first imported coordinate / DOF), ``"unsupported"`` (reported
        issues), ``"approximated"`` (non-convex collision meshes, which collide through their convex
        hull: reported, never an error under ``strict``) and ``"name"`` (the robot's name).

    Raises:
        ValueError: Missing file, malformed XML, unknown joint types, links that do not exist, a
            link graph that is not a tree, missing meshes, label clashes, unsupported elements with ``strict``,
            a missing or malformed SRDF or one naming a link the URDF lacks (checked before anything is added).
        TypeError: Wrong argument types.
        NotImplementedError: Unsupported Newton keywords.
    """
    _check_args(builder, floating=floating, base_joint=base_joint, parent_body=parent_body, scale=scale,
                joint_ordering=joint_ordering, joint_damping_mode=joint_damping_mode,
                override_root_xform=override_root_xform, xform=xform, label_prefix=label_prefix,
                mesh_maxhullvert=mesh_maxhullvert, unsupported=unsupported)
    base = as_transform(xform, "add_urdf: xform")
    up = _as_axis(up_axis, "add_urdf: up_axis")
    opts = dict(hide_visuals=bool(hide_visuals), visuals_collide=bool(parse_visuals_as_colliders),
                show_colliders=bool(force_show_colliders), ignore_inertial=bool(ignore_inertial_definitions),
                drive_damping=joint_damping_mode == "drive", pos_vel=bool(force_position_velocity_actuation), up=up,
                maxhullvert=mesh_maxhullvert)
    dirs = [os.fspath(d) for d in (package_dirs or [])]
    what, urdf_dir, imp = _read(builder, source, ordering=joint_ordering, collapse=bool(collapse_fixed_joints),
                                scale=float(scale), prefix=label_prefix, opts=opts, package_dirs=dirs)
    robot = imp.robot
    srdf_path = resolve_srdf(srdf, urdf_dir, os.fspath(source) if isinstance(source, (str, os.PathLike)) else "")
    srdf_pairs = read_disabled_pairs(srdf_path) if srdf_path else []
    check_links(srdf_pairs, robot.links, srdf_path)
    issues = robot.issues + imp.plan_geometry(urdf_dir, dirs) + imp.joint_issues() + imp.plan_mimics()
    notes = imp.mesh_notes()
    if issues and strict:
        raise ValueError(f"add_urdf({what}): strict=True and the robot uses elements jaxart cannot represent: "
                         + "; ".join(issues))
    imp.check_labels(base_joint=base_joint, floating=floating)
    axis_rot = np.concatenate([np.zeros(3), np_quat_between(np.asarray(up.to_vector()),
                                                              np.asarray(builder.up_vector))])
    result = imp.run(x_root=np_transform_mul(base, axis_rot), parent_body=int(parent_body), floating=bool(floating),
                     base_joint=base_joint, override=bool(override_root_xform),
                     link_order=None if bodies_follow_joint_ordering else list(robot.links))
    if not enable_self_collisions:
        imp.filter_self_collisions()
    if srdf_path:
        shapes = [s for ss in result["shapes"].values() for s in ss]
        n = filter_link_pairs(builder, srdf_pairs, result["bodies"], shapes, srdf_path)
        result["srdf"] = {"path": srdf_path, "disabled_links": srdf_pairs, "filtered_shape_pairs": n}
    result.update(unsupported=issues, approximated=notes, name=robot.name)
    if issues or notes:
        warnings.warn(f"add_urdf({what}): {len(issues) + len(notes)} URDF element(s) not imported or approximated:"
                      "\n  - " + "\n  - ".join(issues + notes), UserWarning, stacklevel=3)
    hint = imp.contact_hint()
    if hint:
        warnings.warn(hint, UserWarning, stacklevel=3)
    return result


def _read(builder, source, *, ordering, collapse: bool, scale: float, prefix, opts, package_dirs) -> tuple:
    """Load, parse and check the tree; returns ``(description, URDF folder or None, importer)``."""
    what, root_el, urdf_dir = load_urdf(source, package_dirs=package_dirs)
    robot = parse_robot(root_el)
    root = check_tree(robot)
    joints = order_joints(robot, root, ordering)
    merged = {n: n for n in robot.links}
    if collapse:
        joints, merged = collapse_fixed(robot, root, joints)
    imp = _Importer(builder, robot, root=root, joints=joints, merged=merged, scale=scale, prefix=prefix, opts=opts)
    return what, urdf_dir, imp


class _Importer:
    """Creates links, joints, shapes, mimic constraints and the articulation of one parsed robot."""

    def __init__(self, builder, robot: UrdfRobot, *, root: str, joints: list[UrdfJoint], merged: dict[str, str],
                 scale: float, prefix: str | None, opts: dict) -> None:
        self.b, self.robot, self.root, self.joints, self.merged = builder, robot, root, joints, merged
        self.scale, self.prefix, self.opts = scale, prefix, opts
        self.meshes: dict[int, object] = {}
        self.mimics: list[tuple[UrdfJoint, str, float, float]] = []
        self.out: dict = {"bodies": {}, "joints": {}, "shapes": {}, "mimics": {}}

    def pre(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def geoms(self, link):
        """(geometry, collides) pairs of a link, honouring ``parse_visuals_as_colliders`` and ``hide_visuals``."""
        if self.opts["visuals_collide"]:
            return [(g, True) for g in link.geoms if g.visual]
        return [(g, not g.visual) for g in link.geoms if not (g.visual and self.opts["hide_visuals"])]

    def plan_geometry(self, urdf_dir: str | None, package_dirs: list[str]) -> list[str]:
        """Check primitive sizes and load every mesh before the builder is touched.

        A faulty visual (non-positive size, missing or unreadable mesh, malformed element) is left out and
        reported; a faulty collision shape (or visual used as one) raises.

        Returns:
            The issues of the visuals left out or trimmed.

        Raises:
            ValueError: A collision shape's fault, naming the link and element.
        """
        cache: dict[tuple, object] = {}
        issues = self._visual_parse_faults()
        for link in self.robot.links.values():
            for k, (g, collides) in enumerate(self.geoms(link)):
                what = f"link {link.name!r} <{'visual' if g.visual else 'collision'}> {g.name or k!r}"
                try:
                    self._plan_geom(g, what, urdf_dir, package_dirs, cache)
                except ValueError as e:
                    if collides:
                        raise
                    issues.append(f"{e} (visual skipped)")
                    link.geoms.remove(g)
        return issues

    def _visual_parse_faults(self) -> list[str]:
        """Parse-time visual faults: raised when visuals are colliders, reported unless visuals are hidden."""
        links = self.robot.links.values()
        if self.opts["visuals_collide"]:
            for err in (e for lk in links for e in lk.visual_errors):
                raise ValueError(err)
        if self.opts["hide_visuals"] and not self.opts["visuals_collide"]:
            return []
        return [f for lk in links for f in lk.visual_faults] + [f"{e} (visual skipped)" for lk in links
                                                                for e in lk.visual_errors]

    def _plan_geom(self, g, what: str, urdf_dir, package_dirs, cache: dict) -> None:
        check_primitive(g, what)
        if g.kind != "mesh":
            return
        path = resolve_uri(g.filename, urdf_dir=urdf_dir, package_dirs=package_dirs, what=what)
        s = np.asarray(g.params["scale"]) * self.scale
        key = (os.path.abspath(path), tuple(s.tolist()))
        if key not in cache:
            cache[key] = load_mesh(path, s, what=what, maxhullvert=self.opts["maxhullvert"])
        self.meshes[id(g)] = cache[key]

    def mesh_notes(self) -> list[str]:
        """Report lines for non-convex collision meshes (computes their hulls, cached on the meshes)."""
        out = []
        for link in self.robot.links.values():
            for k, (g, collides) in enumerate(self.geoms(link)):
                if collides and g.kind == "mesh":
                    out += hull_notes(f"link {link.name!r} <collision> {g.name or k!r} ({g.filename})",
                                      self.meshes[id(g)])
        return out

    def joint_issues(self) -> list[str]:
        out = []
        for j in self.joints:
            if j.type == "continuous" and (j.lower is not None or j.upper is not None):
                out.append(f"joint {j.name!r}: continuous joint <limit lower/upper> ignored (unlimited)")
            if j.type in ("floating", "fixed") and (j.lower is not None or j.upper is not None or j.effort):
                out.append(f"joint {j.name!r}: <limit> on a {j.type} joint ignored")
            if j.type == "floating" and (j.damping or j.friction):
                out.append(f"joint {j.name!r}: <dynamics> on a floating joint ignored")
        return out

    def plan_mimics(self) -> list[str]:
        """Resolve mimic chains to their first non-mimic leader; returns the issues of dropped mimics.

        Raises:
            ValueError: A mimic names a joint that does not exist, or mimics form a cycle.
        """
        by_name = {j.name: j for j in self.robot.joints}
        issues = []
        for j in self.robot.joints:
            if j.mimic is None:
                continue
            leader, mult, off = j.mimic
            seen = [j.name]
            while True:
                if leader not in by_name:
                    raise ValueError(f"joint {j.name!r}: <mimic joint={leader!r}> names a joint that does not exist")
                if leader in seen:
                    raise ValueError(f"joint {j.name!r}: cyclic <mimic> chain {' -> '.join([*seen, leader])}")
                seen.append(leader)
                nxt = by_name[leader].mimic
                if nxt is None:
                    break
                leader, mult, off = nxt[0], mult * nxt[1], off + mult * nxt[2]
            lj = by_name[leader]
            if j.type not in _ONE_DOF or lj.type not in _ONE_DOF:
                issues.append(f"joint {j.name!r}: <mimic joint={j.mimic[0]!r}> dropped (follower is {j.type}, "
                              f"leader {leader!r} is {lj.type}; mimic constraints need revolute, continuous or "
                              "prismatic joints)")
                continue
            fs = self.scale if j.type == "prismatic" else 1.0
            ls = self.scale if lj.type == "prismatic" else 1.0
            self.mimics.append((j, leader, off * fs, mult * fs / ls))
        return issues

    def check_labels(self, *, base_joint, floating) -> None:
        """Raise before mutating the builder when a label to be created already exists."""
        b = self.b
        bodies = [self.pre(n) for n, keep in self.merged.items() if n == keep]
        joints = [self.pre(j.name) for j in self.joints] + [self.pre(self._base_label(base_joint, floating))]
        mimics = [self.pre(f"{j.name}_mimic") for j, *_ in self.mimics]
        for kind, new, old in (("body", bodies, b.body_label), ("joint", joints, b.joint_label),
                               ("articulation", [self.pre(self.robot.name)], b.articulation_label),
                               ("mimic constraint", mimics, b.constraint_mimic_label)):
            clash = sorted(set(new) & set(old)) or sorted({x for x in new if new.count(x) > 1})
            if clash:
                raise ValueError(f"add_urdf: {kind} label(s) {clash[:5]} already exist in the builder (or the URDF "
                                 "uses them twice); pass label_prefix=... to import the robot again")

    @staticmethod
    def _base_label(base_joint, floating) -> str:
        """Newton's base-joint labels; a ``"label"`` in ``base_joint`` wins."""
        if base_joint is not None:
            return str(base_joint.get("label", "base_joint"))
        return "floating_base" if floating else "fixed_base"

    def run(self, *, x_root: np.ndarray, parent_body: int, floating: bool, base_joint, override: bool,
            link_order) -> dict:
        b = self.b
        self.out.update(coord_start=b.joint_coord_count, dof_start=b.joint_dof_count)
        x_parent = b.body_q[parent_body] if parent_body >= 0 else IDENTITY
        poses = {self.root: np_transform_mul(x_parent, x_root)}
        for j in self.joints:
            poses[j.child] = np_transform_mul(poses[j.parent], self._scaled(j.origin))
        order = [self.root] + [j.child for j in self.joints]
        if link_order is not None:
            order = [n for n in link_order if n in poses]
        for name in order:
            self._add_link(name, poses[name])
        for name, keep in self.merged.items():
            self.out["bodies"][name] = self.out["bodies"][keep]
        start = b.joint_count
        self._add_base(x_root, parent_body, floating, base_joint, override)
        for j in self.joints:
            self._add_joint(j)
        self.out["articulation"] = b.add_articulation(list(range(start, b.joint_count)),
                                                      label=self.pre(self.robot.name))
        for j, leader, c0, c1 in self.mimics:
            self.out["mimics"][j.name] = b.add_constraint_mimic(
                self.out["joints"][j.name], self.out["joints"][leader], coef0=c0, coef1=c1,
                label=self.pre(f"{j.name}_mimic"))
        return self.out

    def _scaled(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[:3] * self.scale, x[3:]])

    def _add_link(self, name: str, x_world: np.ndarray) -> None:
        link, s = self.robot.links[name], self.scale
        inertial = None if self.opts["ignore_inertial"] else link.inertial
        kw = {}
        if inertial is not None:
            r = np_quat_to_matrix(inertial.origin[3:])
            kw = dict(mass=inertial.mass, com=inertial.origin[:3] * s,
                      inertia=r @ inertial.inertia @ r.T * s * s, lock_inertia=True)
        body = self.b.add_link(xform=x_world, label=self.pre(name), **kw)
        self.out["bodies"][name] = body
        self.out["shapes"][name] = add_link_shapes(self, body, link)

    def _add_base(self, x_root, parent_body, floating, base_joint, override) -> None:
        j = add_base_joint(self.b, self.out["bodies"][self.root], parent_body=parent_body, x_root=x_root,
                           floating=floating, base_joint=base_joint, override=override,
                           label=self.pre(self._base_label(base_joint, floating)))
        self.out["joints"][self._base_label(base_joint, floating)] = j
        self.base_joint = j

    def _dof(self, j: UrdfJoint, axis, *, linear: bool):
        d, s = self.b.default_joint_cfg, self.scale if linear else 1.0
        lo = None if j.type == "continuous" or j.lower is None else j.lower * s
        hi = None if j.type == "continuous" or j.upper is None else j.upper * s
        damp = j.damping if j.damping is not None else (d.target_kd if self.opts["drive_damping"] else d.damping)
        mode = JointTargetMode.POSITION_VELOCITY if self.opts["pos_vel"] else JointTargetMode.POSITION
        return self.b._dof_cfg(axis, f"joint {j.name!r}", limit_lower=lo, limit_upper=hi, effort_limit=j.effort,
                               velocity_limit=None if j.velocity is None else j.velocity * s,
                               damping=None if self.opts["drive_damping"] else damp,
                               target_kd=damp if self.opts["drive_damping"] else None,
                               friction=j.friction, actuator_mode=mode)

    def _add_joint(self, j: UrdfJoint) -> None:
        b = self.b
        parent, child = self.out["bodies"][j.parent], self.out["bodies"][j.child]
        kw = dict(parent_xform=self._scaled(j.origin), label=self.pre(j.name))
        if j.type in ("revolute", "continuous"):
            ang = [self._dof(j, j.axis, linear=False)]
            idx = b.add_joint(JointType.REVOLUTE, parent, child, angular_axes=ang, **kw)
        elif j.type == "prismatic":
            idx = b.add_joint(JointType.PRISMATIC, parent, child, linear_axes=[self._dof(j, j.axis, linear=True)], **kw)
        elif j.type == "fixed":
            idx = b.add_joint_fixed(parent, child, **kw)
        elif j.type == "floating":
            idx = b.add_joint_free(child, parent=parent, **kw)
        else:
            u, v = _plane_axes(j.axis)
            idx = b.add_joint_d6(parent, child, linear_axes=[self._dof(j, u, linear=True),
                                                             self._dof(j, v, linear=True)], **kw)
        self.out["joints"][j.name] = idx

    def contact_hint(self) -> str | None:
        """:func:`~jaxart.io.contact_hint.sinking_hint` for a FREE-based robot (a fixed base cannot sink)."""
        b = self.b
        if int(b.joint_type[self.base_joint]) != int(JointType.FREE):
            return None
        mass = sum(float(b.body_mass[k]) for k in set(self.out["bodies"].values()))
        return sinking_hint(b, [s for ss in self.out["shapes"].values() for s in ss], mass, importer="add_urdf")

    def filter_self_collisions(self) -> None:
        filter_self_collisions(self.b, [s for ss in self.out["shapes"].values() for s in ss])


def _plane_axes(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit axes spanning the plane normal to ``normal`` (Newton's construction)."""
    n = normal / np.linalg.norm(normal)
    helper = np.array([1.0, 0.0, 0.0]) if np.allclose(n, [0.0, 1.0, 0.0]) else np.array([0.0, 1.0, 0.0])
    u = np.cross(helper, n)
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    return u, v / np.linalg.norm(v)


__all__ = ["add_urdf", "load_urdf"]
