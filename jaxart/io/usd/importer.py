"""USD import through usd-core's UsdPhysics parser (``ModelBuilder.add_usd``).

The stage is parsed by ``UsdPhysics.LoadUsdPhysicsFromRange`` (:mod:`jaxart.io.usd.stage`); the
importer reads only its descriptors, and mass properties come from
``UsdPhysics.RigidBodyAPI.ComputeMassProperties`` (the MassAPI precedence of the UsdPhysics spec:
body ``mass``/``density``/``centerOfMass``/``diagonalInertia``/``principalAxes`` over collider and
material densities over 1000 kg/m³). Labels are prim paths.

Units and axes: lengths × ``metersPerUnit``, masses × ``kilogramsPerUnit``, angles degrees → radians.
The stage's ``upAxis`` is rotated onto the builder's up axis, then ``xform`` places the stage in the
builder's world. Scene gravity becomes ``builder.gravity`` when it is along the up axis.

Topology: :mod:`jaxart.io.usd.topology` (articulation roots, fixed vs floating bases,
``physics:excludeFromArticulation`` loop joints, orphan joints). Joints: :mod:`jaxart.io.usd.joints`.
Hierarchical composition (Newton's ``parent_body`` / ``base_joint`` / ``floating``, shared with
``add_urdf`` through :mod:`jaxart.io.entry`): the stage's world becomes ``parent_body``'s frame at ``xform``,
so joints to the world, floating roots and static colliders attach to that body.
Colliders, materials, collision groups and filtered pairs: :mod:`jaxart.io.usd.shapes`.

Everything dropped or approximated is listed, with prim paths, in ONE ``UserWarning`` at the end
(``strict=True``: ``ValueError`` before the builder is touched).
"""

from __future__ import annotations

import types
import warnings

import numpy as np

from jaxart.io.entry import add_base_joint, check_base_args, filter_self_collisions
from jaxart.io.mjcf.report import gravity_along_up
from jaxart.io.usd.joints import JOINT_KINDS, Units, joint_spec
from jaxart.io.usd.shapes import (
    add_collision_filters,
    collider_descs,
    geometry,
    local_pose,
    mass_callback,
    material_cfg,
)
from jaxart.io.usd.stage import ParsedStage, parse_stage, quat_xyzw, up_rotation, vec
from jaxart.io.usd.topology import plan_topology
from jaxart.sim.enums import GeoType, JointType
from jaxart.sim.validate import as_transform, np_quat_rotate, np_quat_to_matrix, np_transform_mul

_IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def add_usd(builder, source, *, xform=None, floating: bool | None = None, base_joint: dict | None = None,
            parent_body: int = -1, enable_self_collisions: bool = True, strict: bool = False,
            label_prefix: str | None = None) -> dict:
    """Import the rigid-body physics of a USD stage into ``builder``.

    Args:
        builder: Target :class:`~jaxart.ModelBuilder` (mutated).
        source: USD file path, USDA text (starting with ``#usda``) or a ``pxr.Usd.Stage``.
        xform: Pose of the (unit-converted, up-axis-rotated) stage world in ``parent_body``'s frame (the
            builder's world when −1).
        floating: ``None`` keeps the stage's bases (floating roots get a FREE joint, or a FIXED joint to
            ``parent_body``); ``True`` turns FIXED joints to the world at articulation roots into FREE joints
            (``parent_body=-1`` only); ``False`` gives floating roots a FIXED joint at their pose.
        base_joint: ``add_joint`` keyword arguments (``joint_type`` defaults to D6) for the joint that
            connects every articulation root to ``parent_body`` / the world, replacing the stage's root
            joint to the world (Newton's frames, as :func:`jaxart.io.urdf.add_urdf`). Exclusive with ``floating``.
        parent_body: Existing body the stage's world is attached to (Newton's hierarchical composition):
            joints to the world, floating roots (FIXED joint unless ``base_joint``) and static colliders
            attach to it; −1 = the world.
        enable_self_collisions: ``False`` filters contacts between shapes of different bodies of the same
            imported articulation; an authored ``physxArticulation:enabledSelfCollisions`` or
            ``newton:selfCollisionEnabled`` on the articulation root prim wins (as in Newton).
        strict: Raise ``ValueError`` instead of warning about anything dropped or approximated.
        label_prefix: Prefix prepended to every label (prim path), e.g. to import a stage twice.

    Returns:
        dict with ``"bodies"`` / ``"joints"`` / ``"shapes"`` (prim path → index; added root joints are
        ``"<root body path>/root_joint"``), ``"articulations"`` (indices), ``"articulation"`` (first or
        ``None``), ``"loop_joints"`` and ``"orphan_joints"`` (prim paths), ``"coord_start"`` /
        ``"dof_start"``, ``"meters_per_unit"``, ``"up_axis"`` and ``"unsupported"`` (the reported issues).

    Raises:
        ValueError: Missing file, malformed USD, unknown joint types, joints whose bodies do not exist,
            label clashes, invalid values (each naming the prim), bad ``floating`` / ``base_joint`` /
            ``parent_body`` combinations, or any issue with ``strict``.
        TypeError: Wrong argument types.
    """
    check_base_args(builder, "add_usd", floating=floating, base_joint=base_joint, parent_body=parent_body)
    if label_prefix is not None and not isinstance(label_prefix, str):
        raise TypeError(f"add_usd: label_prefix must be a str, got {type(label_prefix).__name__}")
    if base_joint is not None and "label" in base_joint:
        raise ValueError("add_usd: base_joint must not set 'label'; root joints are labelled "
                         "'<root body path>/root_joint' (a stage can have several roots)")
    base = as_transform(xform, "add_usd: xform")
    parsed = parse_stage(source)
    imp = _UsdImporter(builder, parsed, base=base, floating=floating, prefix=label_prefix or "",
                       base_joint=base_joint, parent_body=int(parent_body))
    imp.prepare()
    issues = imp.issues
    if issues and strict:
        raise ValueError(f"add_usd({parsed.what}): strict=True and the stage uses features jaxart cannot "
                         "represent: " + "; ".join(issues))
    result = imp.run(self_collisions=bool(enable_self_collisions))
    result["unsupported"] = list(imp.issues)
    if imp.issues:
        warnings.warn(f"add_usd({parsed.what}): {len(imp.issues)} USD feature(s) not imported or approximated:\n"
                      "  - " + "\n  - ".join(imp.issues), UserWarning, stacklevel=3)
    return result


class _UsdImporter:
    """Plans (without touching the builder) and then creates bodies, joints, shapes and articulations."""

    def __init__(self, builder, parsed: ParsedStage, *, base, floating, prefix: str, base_joint: dict | None,
                 parent_body: int) -> None:
        self.b, self.p, self.floating, self.prefix = builder, parsed, floating, prefix
        self.base_joint, self.anchor = base_joint, parent_body
        self.x_anchor = np.asarray(builder.body_q[parent_body], dtype=np.float64) if parent_body >= 0 else _IDENTITY
        self.units = Units(parsed.meters_per_unit, parsed.kilograms_per_unit)
        q_up = up_rotation(parsed.up_vector, builder.up_vector)
        self.base = np_transform_mul(base, np.concatenate([np.zeros(3), q_up]))
        self.issues: list[str] = []
        self.bodies = {p: d for p, d in parsed.of("RigidBody").items()}
        self.joints = {p: (k, d) for k in JOINT_KINDS for p, d in parsed.of(k).items()}
        self.out = {"bodies": {}, "joints": {}, "shapes": {}, "articulations": []}

    def lab(self, path: str) -> str:
        return f"{self.prefix}{path}"

    # ---------------------------------------------------------------- planning
    def prepare(self) -> None:
        """Validate references, plan the trees and collect issues; raises before any mutation."""
        ends = {p: self._ends(p, d) for p, (_, d) in self.joints.items()}
        self.plan = plan_topology(self.bodies, {p: (*e, self._excluded(p)) for p, e in ends.items()},
                                  self.p.of("Articulation"))
        self.colliders = collider_descs(self.p, self.issues)
        self._check_labels()
        self._report()
        swapped = {t.path: t.swapped for _, comp in self.plan.trees for t in comp if t.path}
        swapped.update({j: not str(self.joints[j][1].body1) for j in self.all_loose()})
        self.specs = {}
        for path, flip in sorted(swapped.items()):
            kind, d = self.joints[path]
            self.specs[path] = joint_spec(kind, d, self.p.stage.GetPrimAtPath(path), self.units, swapped=flip,
                                          default=self.b.default_joint_cfg, issues=self.issues)

    def all_loose(self) -> list[str]:
        """Joints outside every tree: loop-closing (marked, unmarked) and orphan joints."""
        return self.plan.loops + self.plan.unmarked_loops + self.plan.orphans

    def _excluded(self, path: str) -> bool:
        """``physics:excludeFromArticulation`` read through the schema (descriptor flags can be uninitialised)."""
        from pxr import UsdPhysics

        return bool(UsdPhysics.Joint(self.p.stage.GetPrimAtPath(path)).GetExcludeFromArticulationAttr().Get())

    def _ends(self, path: str, d) -> tuple[str, str]:
        out = []
        for k, (rel, body) in enumerate(((d.rel0, d.body0), (d.rel1, d.body1))):
            rel, body = str(rel), str(body)
            if body and body not in self.bodies:
                raise ValueError(f"add_usd({self.p.what}): joint {path!r}: body{k} {body!r} is not a rigid body")
            if rel and not body:
                prim = self.p.stage.GetPrimAtPath(rel)
                if not prim or not prim.IsValid():
                    raise ValueError(f"add_usd({self.p.what}): joint {path!r}: body{k} target {rel!r} does not exist")
            out.append(body)
        if not out[0] and not out[1]:
            raise ValueError(f"add_usd({self.p.what}): joint {path!r} connects no rigid body (body0 and body1 "
                             "are both the world or non-body prims)")
        if out[0] == out[1]:
            raise ValueError(f"add_usd({self.p.what}): joint {path!r} connects body {out[0]!r} to itself")
        return out[0], out[1]

    def _check_labels(self) -> None:
        b = self.b
        for kind, new, old in (("body", self.bodies, b.body_label), ("joint", self.joints, b.joint_label),
                               ("shape", self.colliders, b.shape_label)):
            clash = sorted({self.lab(p) for p in new} & set(old))
            if clash:
                raise ValueError(f"add_usd: {kind} label(s) {clash[:5]} already exist in the builder; "
                                 "pass label_prefix=... to import the stage again")

    def _report(self) -> None:
        p, iss = self.p, self.issues
        if self.plan.orphans:
            iss.append(f"{len(self.plan.orphans)} orphan joint(s) outside every articulation (no "
                       f"PhysicsArticulationRootAPI covers them; finalize(skip_validation_joints=True) and a "
                       f"maximal-coordinate solver are needed): {self.plan.orphans}")
        for j in self.plan.unmarked_loops:
            iss.append(f"joint {j!r} closes a loop but lacks physics:excludeFromArticulation: left out of the "
                       "articulation (loop-closing joint)")
        for path, d in self.bodies.items():
            if not d.rigidBodyEnabled:
                iss.append(f"body {path!r}: physics:rigidBodyEnabled = false imported as a kinematic body")
            if np.any(vec(d.linearVelocity) != 0.0) or np.any(vec(d.angularVelocity) != 0.0):
                iss.append(f"body {path!r}: initial velocity not imported")
        scenes = p.of("Scene")
        if len(scenes) > 1:
            iss.append(f"{len(scenes)} physics scenes: only the first ({sorted(scenes)[0]!r}) is used for gravity")
        for path, (_, d) in self.joints.items():
            if not d.jointEnabled:
                iss.append(f"joint {path!r}: disabled (physics:jointEnabled = false) imported with enabled=False")

    # ---------------------------------------------------------------- building
    def run(self, *, self_collisions: bool) -> dict:
        b = self.b
        self._gravity()
        self.out.update(coord_start=b.joint_coord_count, dof_start=b.joint_dof_count)
        for path in self.plan.body_order:
            self._add_body(path)
        for label, comp in self.plan.trees:
            start = b.joint_count
            for t in comp:
                self._add_tree_joint(t)
            self.out["articulations"].append(b.add_articulation(list(range(start, b.joint_count)),
                                                                label=self.lab(label)))
        for path in self.all_loose():
            kind, d = self.joints[path]
            b0, b1 = str(d.body0), str(d.body1)
            self._add_joint(path, parent=b0 if b1 else "", child=b1 or b0, swapped=not b1)
        self._check_poses()
        self._add_shapes()
        add_collision_filters(b, self.p, self.out["shapes"], self.out["bodies"], self.issues)
        self._filter_self_collisions(self_collisions)
        self.out["articulation"] = self.out["articulations"][0] if self.out["articulations"] else None
        self.out.update(loop_joints=self.plan.loops + self.plan.unmarked_loops, orphan_joints=list(self.plan.orphans),
                        meters_per_unit=self.units.length, up_axis=self.p.up_axis)
        return self.out

    def _gravity(self) -> None:
        scenes = self.p.of("Scene")
        if not scenes:
            return
        d = scenes[sorted(scenes)[0]]
        g = np_quat_rotate(self.base[3:], vec(d.gravityDirection) * float(d.gravityMagnitude) * self.units.length)
        mag, issue = gravity_along_up(types.SimpleNamespace(opt=types.SimpleNamespace(gravity=g)), self.b.up_vector)
        if issue:
            self.issues.append(issue)
        else:
            self.b.gravity = mag

    def _add_body(self, path: str) -> None:
        from pxr import Gf, UsdPhysics

        d = self.bodies[path]
        u = self.units
        x = np_transform_mul(self.x_anchor, self._root_pose(path))
        prim = self.p.stage.GetPrimAtPath(path)
        cb = mass_callback(self.p, self.colliders, self.bodies)
        mass, diag, com, axes = UsdPhysics.RigidBodyAPI(prim).ComputeMassProperties(cb)
        diag, axes = _authored_inertia(prim, diag, axes)
        rot = np_quat_to_matrix(quat_xyzw(axes))
        inertia = rot @ np.diag(vec(diag)) @ rot.T * u.mass * u.length ** 2
        mass = float(mass) * u.mass
        if mass <= 0.0:  # usd-core then returns a negative mass and a unit inertia
            self.issues.append(f"body {path!r}: no mass (no MassAPI mass/density and no colliders)")
            mass, inertia, com = 0.0, np.zeros((3, 3)), Gf.Vec3f(0.0)
        if np.any(np.abs(vec(d.scale) - 1.0) > 1e-6) and UsdPhysics.MassAPI(prim):
            self.issues.append(f"body {path!r}: scale {vec(d.scale).tolist()} not applied to authored "
                               "MassAPI centerOfMass/diagonalInertia")
        com = vec(com, u.length) if np.all(np.isfinite(vec(com))) else np.zeros(3)
        self.out["bodies"][path] = self.b.add_link(
            xform=x, mass=mass, com=com, inertia=0.5 * (inertia + inertia.T), label=self.lab(path),
            lock_inertia=True, is_kinematic=bool(d.kinematicBody) or not d.rigidBodyEnabled)

    def _root_pose(self, path: str) -> np.ndarray:
        """Pose of a body in the anchor's frame (``parent_body``'s, or the world's)."""
        d = self.bodies[path]
        return np_transform_mul(self.base, np.concatenate([vec(d.position, self.units.length),
                                                           quat_xyzw(d.rotation)]))

    def _add_tree_joint(self, t) -> None:
        if t.path is None or (t.parent == "" and self.base_joint is not None):  # floating root / replaced joint
            floating = self.floating if self.floating is not None else self.anchor < 0
            self.out["joints"][t.child + "/root_joint"] = add_base_joint(
                self.b, self.out["bodies"][t.child], parent_body=self.anchor, x_root=self._root_pose(t.child),
                floating=floating, base_joint=self.base_joint, label=self.lab(t.child) + "/root_joint")
            return
        kind, d = self.joints[t.path]
        promote = self.floating is True and t.parent == "" and kind == "FixedJoint"
        self._add_joint(t.path, parent=t.parent, child=t.child, swapped=t.swapped, free=promote)

    def _add_joint(self, path: str, *, parent: str, child: str, swapped: bool, free: bool = False) -> None:
        b, u = self.b, self.units
        kind, d = self.joints[path]
        sides = [(d.localPose0Position, d.localPose0Orientation), (d.localPose1Position, d.localPose1Orientation)]
        ps, cs = (sides[1], sides[0]) if swapped else (sides[0], sides[1])
        x_p = np.concatenate([vec(ps[0], u.length), quat_xyzw(ps[1])])
        x_c = np.concatenate([vec(cs[0], u.length), quat_xyzw(cs[1])])
        if not parent:  # the parser gives world-side frames in world space (non-body targets resolved)
            x_p = np_transform_mul(self.base, x_p)
        pi = self.out["bodies"][parent] if parent else self.anchor
        ci = self.out["bodies"][child]
        common = dict(label=self.lab(path), parent_xform=x_p, child_xform=x_c, enabled=bool(d.jointEnabled),
                      collision_filter_parent=pi >= 0 and not d.collisionEnabled)
        if free:
            j = b.add_joint(JointType.FREE, pi, ci, **common)
        else:
            spec = self.specs[path]
            if spec.jtype == JointType.DISTANCE:
                j = b.add_joint_distance(pi, ci, min_distance=spec.distance[0], max_distance=spec.distance[1],
                                         **common)
            else:
                j = b.add_joint(spec.jtype, pi, ci, linear_axes=spec.linear, angular_axes=spec.angular, **common)
                q0, d0 = b.joint_q_start[j], b.joint_qd_start[j]
                if spec.q0:
                    b.joint_q[q0:q0 + len(spec.q0)] = spec.q0
                    b.joint_qd[d0:d0 + len(spec.qd0)] = spec.qd0
        self.out["joints"][path] = j

    def _filter_self_collisions(self, default: bool) -> None:
        """Newton's ``enable_self_collisions`` per articulation (authored root-prim attributes win)."""
        shapes_of: dict[int, list[int]] = {}
        for s in self.out["shapes"].values():
            shapes_of.setdefault(self.b.shape_body[s], []).append(s)
        for label, comp in self.plan.trees:
            if _self_collisions(self.p.stage.GetPrimAtPath(label), default):
                continue
            filter_self_collisions(self.b, [s for t in comp for s in shapes_of.get(self.out["bodies"][t.child], [])])

    def _check_poses(self) -> None:
        """Report tree joints whose authored body poses disagree with the joint frames at zero coordinates."""
        b = self.b
        bad = []
        for _, comp in self.plan.trees:
            for t in comp:
                j = self.out["joints"].get(t.path) if t.path else None
                if j is None or b.joint_type[j] in (JointType.FREE, JointType.DISTANCE):
                    continue
                q = np.asarray(b.joint_q[b.joint_q_start[j]:b.joint_q_start[j] + _ncoord(b, j)])
                if b.joint_type[j] == JointType.BALL:
                    q = q[:3]
                if np.any(q != 0.0):
                    continue
                parent = b.joint_parent[j]
                x_wp = b.body_q[parent] if parent >= 0 else _IDENTITY
                a = np_transform_mul(x_wp, b.joint_X_p[j])
                c = np_transform_mul(b.body_q[b.joint_child[j]], b.joint_X_c[j])
                if np.linalg.norm(a[:3] - c[:3]) > 1e-4 or 1.0 - abs(float(a[3:] @ c[3:])) > 1e-8:
                    bad.append(t.path)
        if bad:
            self.issues.append(f"authored body poses disagree with the joint frames at joint_q = 0 for joint(s) "
                               f"{bad[:8]} (FK follows the joints; author state:<axis>:physics:position for a "
                               "posed asset)")

    def _add_shapes(self) -> None:
        b, u = self.b, self.units
        for path, (kind, d) in self.colliders.items():
            body_path = str(d.rigidBody)
            if body_path and body_path not in self.out["bodies"]:
                self.issues.append(f"collider {path!r}: its rigid body {body_path!r} was not imported (skipped)")
                continue
            body = self.out["bodies"][body_path] if body_path else self.anchor
            bscale = vec(self.bodies[body_path].scale) if body_path else None
            geo, scale, axis_rot, mesh = geometry(kind, d, self.p, u.length, self.issues, body_scale=bscale)
            x = local_pose(d, u.length, axis_rot)
            if not body_path:
                x = np_transform_mul(self.base, x)
            cfg = material_cfg(d, self.p, b.default_shape_cfg, self.issues)
            static = geo == GeoType.PLANE or not body_path
            self.out["shapes"][path] = b.add_shape(body=body, type=geo, xform=x, cfg=cfg, scale=scale, src=mesh,
                                                   is_static=static, label=self.lab(path))


__all__ = ["add_usd"]


def _self_collisions(prim, default: bool) -> bool:
    """An authored self-collision flag on an articulation root prim, else ``default``."""
    for name in ("newton:selfCollisionEnabled", "physxArticulation:enabledSelfCollisions"):
        attr = prim.GetAttribute(name) if prim and prim.IsValid() else None
        if attr and attr.HasAuthoredValue():
            return bool(attr.Get())
    return default


def _ncoord(b, j: int) -> int:
    end = b.joint_q_start[j + 1] if j + 1 < b.joint_count else b.joint_coord_count
    return end - b.joint_q_start[j]


def _authored_inertia(prim, diag, axes):
    """The body's authored MassAPI ``diagonalInertia``/``principalAxes`` where usd-core dropped them.

    ``ComputeMassProperties`` treats a diagonal inertia with components of about 1e-6 or less as
    unauthored and substitutes the colliders' inertia; fingertips and sensors of real robots are that
    small. An authored, non-zero ``diagonalInertia`` on the body has the highest precedence in the
    UsdPhysics spec, so it is used as written (with ``principalAxes``, identity when unauthored).
    """
    from pxr import Gf, UsdPhysics

    api = UsdPhysics.MassAPI(prim)
    attr = api.GetDiagonalInertiaAttr() if api else None
    if attr is None or not attr.HasAuthoredValue() or not np.all(np.isfinite(vec(attr.Get()))) \
            or np.max(vec(attr.Get())) <= 0.0:
        return diag, axes
    q = api.GetPrincipalAxesAttr().Get() if api.GetPrincipalAxesAttr().HasAuthoredValue() else None
    if q is None or q.GetLength() < 0.5:
        q = Gf.Quatf(1.0)
    return attr.Get(), q
