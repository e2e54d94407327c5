"""USD export of a model as a UsdPhysics stage (:func:`export_model`; trajectories:
:mod:`jaxart.io.usd.trajectory`).

``export_model`` writes SI units (``metersPerUnit = kilogramsPerUnit = 1``) with the model's up axis:

* one ``Xform`` per articulation with ``PhysicsArticulationRootAPI`` holding its bodies and joints;
  bodies outside every articulation and joints outside every articulation (marked
  ``physics:excludeFromArticulation``) sit under ``/World``; static shapes under ``/World/static``;
* bodies: ``RigidBodyAPI`` + ``MassAPI`` (``mass``, ``centerOfMass``, ``diagonalInertia`` and
  ``principalAxes`` from the inertia's eigen-decomposition), posed by ``eval_fk`` at ``model.joint_q``
  (bodies outside every articulation keep ``model.body_q``), so poses and joint frames agree;
* joints: FIXED/REVOLUTE/PRISMATIC/BALL/DISTANCE as the typed UsdPhysics joints (1-DOF axes become the
  frames' X axis), D6 as a generic ``PhysicsJoint`` with ``LimitAPI`` locking the missing axes, both
  joint frames rotated so that its axes are coordinate axes in X, Y, Z order (:mod:`jaxart.io.usd.d6`;
  a D6 no rotation fits raises); FREE roots are left floating;
  limits/drives/``joint_q`` in USD's degrees; drives as ``DriveAPI`` with ``maxForce`` = effort limit;
* shapes: :mod:`jaxart.io.usd.geom` with ``CollisionAPI``, a ``PhysicsMaterialAPI`` material (mu,
  restitution) and ``FilteredPairsAPI`` for the model's filter pairs.

Anything that cannot be written (heightfields, sites, tendons, equality and mimic constraints, explicit
contact pairs, joint and shape parameters UsdPhysics has no attribute for, collision groups that keep
colliders apart, BALL coordinates, …; :mod:`jaxart.io.usd.export_report`) is listed, with element names,
in ONE ``UserWarning``.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxart.io.usd.d6 import d6_frame
from jaxart.io.usd.export_report import unwritten
from jaxart.io.usd.geom import WRITABLE, Names, check_path, new_stage, set_pose, write_shape
from jaxart.sim.enums import GeoType, JointTargetMode, JointType
from jaxart.sim.validate import np_quat_between, np_quat_mul

DEG = np.pi / 180.0
_E = np.eye(3)
_D6_NAMES = (("transX", "transY", "transZ"), ("rotX", "rotY", "rotZ"))


def _np(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def export_model(model, path, *, shape_materials: bool = True) -> dict:
    """Write ``model`` as a UsdPhysics stage that :meth:`ModelBuilder.add_usd` re-imports.

    Args:
        model: A finalized :class:`~jaxart.Model` (one world, no leading batch axis).
        path: Output file (``.usd``, ``.usda`` or ``.usdc``).
        shape_materials: Write a physics material (friction, restitution) per distinct shape material.

    Returns:
        dict ``"bodies"`` / ``"joints"`` / ``"shapes"``: jaxart label → written prim path (a FREE root
        maps to ``<body path>/root_joint``, the label ``add_usd`` gives the FREE joint it re-creates), and
        ``"unsupported"`` (what was not written).

    Raises:
        TypeError / ValueError: Bad ``model`` or ``path``.
        NotImplementedError: FREE joints that are not articulation roots, D6 joints whose axes no rotation
            of the joint frame maps onto coordinate axes in X, Y, Z order (:mod:`jaxart.io.usd.d6`).
    """
    from jaxart.sim.model import Model

    if not isinstance(model, Model):
        raise TypeError(f"export_model: model must be a jaxart.Model, got {type(model).__name__}")
    if np.ndim(model.body_mass) != 1:
        raise ValueError(f"export_model: model has a leading batch axis (body_mass shape {np.shape(model.body_mass)});"
                         " export one world")
    path = check_path(path, "export_model")
    w = _ModelWriter(model, new_stage(path, int(model.up_axis)), shape_materials)
    w.run()
    w.stage.GetRootLayer().Save()
    if w.issues:
        warnings.warn(f"export_model({path!r}): {len(w.issues)} model feature(s) not written:\n  - "
                      + "\n  - ".join(w.issues), UserWarning, stacklevel=2)
    return {"bodies": w.body_paths, "joints": w.joint_paths, "shapes": w.shape_paths, "unsupported": w.issues}


class _ModelWriter:
    def __init__(self, model, stage, shape_materials: bool) -> None:
        self.m, self.stage, self.materials = model, stage, shape_materials
        self.names = Names()
        self.issues: list[str] = []
        self.body_paths: dict[str, str] = {}
        self.joint_paths: dict[str, str] = {}
        self.shape_paths: dict[str, str] = {}
        self._mats: dict[tuple, object] = {}
        self.written: dict[int, str] = {}     # shape index → prim path
        self.driven: set[int] = set()         # DOFs written with a DriveAPI

    def run(self) -> None:
        from pxr import UsdGeom, UsdPhysics

        m = self.m
        scene = UsdPhysics.Scene.Define(self.stage, "/World/PhysicsScene")
        g = _np(m.gravity)
        mag = float(np.linalg.norm(g))
        scene.CreateGravityMagnitudeAttr(mag)
        if mag > 0:
            scene.CreateGravityDirectionAttr(tuple(float(v) for v in g / mag))
        jart = np.asarray(m.joint_articulation)
        self.poses = _posed_bodies(m)
        groups = {}
        for a, label in enumerate(m.articulation_label):
            p = self.names.child("/World", label)
            UsdGeom.Xform.Define(self.stage, p)
            UsdPhysics.ArticulationRootAPI.Apply(self.stage.GetPrimAtPath(p))
            groups[a] = p
        owner = {int(c): int(jart[j]) for j, c in enumerate(np.asarray(m.joint_child)) if jart[j] >= 0}
        for b, label in enumerate(m.body_label):
            parent = groups.get(owner.get(b, -1), "/World")
            self._body(b, self.names.child(parent, label))
        for j, label in enumerate(m.joint_label):
            parent = groups.get(int(jart[j]), "/World")
            self._joint(j, self.names.child(parent + "/joints" if jart[j] >= 0 else "/World/joints", label))
        self._shapes()
        self._report()

    def _report(self) -> None:
        self.issues += unwritten(self.m, shapes=sorted(self.written), driven=self.driven)

    def _body(self, b: int, path: str) -> None:
        from pxr import Gf, UsdGeom, UsdPhysics

        m = self.m
        x = UsdGeom.Xform.Define(self.stage, path)
        set_pose(x, self.poses[b])
        prim = x.GetPrim()
        UsdPhysics.RigidBodyAPI.Apply(prim)
        if int(np.asarray(m.body_flags)[b]) & 2:
            UsdPhysics.RigidBodyAPI(prim).CreateKinematicEnabledAttr(True)
        mass = float(m.body_mass[b])
        api = UsdPhysics.MassAPI.Apply(prim)
        if mass > 0.0:
            api.CreateMassAttr(mass)
            api.CreateCenterOfMassAttr(Gf.Vec3f(*[float(v) for v in _np(m.body_com[b])]))
            diag, q = _principal(_np(m.body_inertia[b]))
            api.CreateDiagonalInertiaAttr(Gf.Vec3f(*[float(v) for v in diag]))
            api.CreatePrincipalAxesAttr(Gf.Quatf(float(q[3]), float(q[0]), float(q[1]), float(q[2])))
        elif len(m.body_label) and any(int(s) == b for s in np.asarray(m.shape_body)):
            self.issues.append(f"massless body {m.body_label[b]!r} has shapes: USD gives it their mass "
                               "(density 1000) on re-import")
        self.body_paths[m.body_label[b]] = path

    def _joint(self, j: int, path: str) -> None:
        from pxr import Sdf, UsdPhysics

        m = self.m
        jt = JointType(int(np.asarray(m.joint_type)[j]))
        parent, child = int(np.asarray(m.joint_parent)[j]), int(np.asarray(m.joint_child)[j])
        label = m.joint_label[j]
        if jt == JointType.FREE:
            if parent >= 0 or int(np.asarray(m.joint_articulation)[j]) < 0:
                raise NotImplementedError(f"export_model: FREE joint {label!r} is not a floating articulation root")
            self.joint_paths[label] = self.body_paths[m.body_label[child]] + "/root_joint"  # add_usd's name for it
            return  # a floating root: no joint prim
        x_p, x_c = _np(m.joint_X_p[j]), _np(m.joint_X_c[j])
        d0 = int(np.asarray(m.joint_qd_start)[j])
        lin, ang = (int(v) for v in np.asarray(m.joint_dof_dim)[j])
        cls = {JointType.FIXED: UsdPhysics.FixedJoint, JointType.REVOLUTE: UsdPhysics.RevoluteJoint,
               JointType.PRISMATIC: UsdPhysics.PrismaticJoint, JointType.BALL: UsdPhysics.SphericalJoint,
               JointType.DISTANCE: UsdPhysics.DistanceJoint, JointType.D6: UsdPhysics.Joint}[jt]
        align, d6_axes = np.array([0.0, 0.0, 0.0, 1.0]), None
        if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
            align = np_quat_between(_E[0], _np(m.joint_axis[d0]))
        elif jt == JointType.D6:
            r, *d6_axes = self._d6_frame(d0, lin, ang, label)
            align = _matrix_to_quat(r)
        joint = cls.Define(self.stage, path)
        if parent >= 0:
            joint.CreateBody0Rel().SetTargets([Sdf.Path(self.body_paths[m.body_label[parent]])])
        joint.CreateBody1Rel().SetTargets([Sdf.Path(self.body_paths[m.body_label[child]])])
        for k, x in ((0, x_p), (1, x_c)):
            q = np_quat_mul(x[3:], align)
            getattr(joint, f"CreateLocalPos{k}Attr")(_vec3f(x[:3]))
            getattr(joint, f"CreateLocalRot{k}Attr")(_quatf(q))
        joint.CreateJointEnabledAttr(bool(np.asarray(m.joint_enabled)[j]))
        cfp = m.topology.joint_collision_filter_parent
        joint.CreateCollisionEnabledAttr(bool(parent >= 0 and cfp is not None and not cfp[j]))
        if int(np.asarray(m.joint_articulation)[j]) < 0:
            joint.CreateExcludeFromArticulationAttr(True)
        self._joint_dofs(jt, joint, j, d0, lin, d6_axes)
        self.joint_paths[label] = path

    def _d6_frame(self, d0: int, lin: int, ang: int, label: str) -> tuple:
        axes = _np(self.m.joint_axis[d0:d0 + lin + ang]).reshape(-1, 3)
        found = d6_frame(axes[:lin], axes[lin:])
        if found is None:
            raise NotImplementedError(
                f"export_model: D6 joint {label!r} (linear axes {axes[:lin].tolist()}, angular axes "
                f"{axes[lin:].tolist()}): a UsdPhysics generic joint needs one joint-frame rotation that maps the "
                "linear axes and the angular axes onto coordinate axes in X, Y, Z order (unit, orthogonal within "
                "each group, right-handed)")
        return found

    def _joint_dofs(self, jt, joint, j: int, d0: int, lin: int, d6_axes) -> None:
        """Limits, drives and initial state; ``d6_axes``: coordinate axis of each linear / angular D6 axis."""
        from pxr import UsdPhysics

        m, prim = self.m, joint.GetPrim()
        q0 = int(np.asarray(m.joint_q_start)[j])
        if jt == JointType.DISTANCE:
            joint.CreateMinDistanceAttr(float(m.joint_limit_lower[d0]))
            joint.CreateMaxDistanceAttr(float(m.joint_limit_upper[d0]))
            return
        if jt == JointType.BALL:
            if not np.allclose(_np(m.joint_q[q0:q0 + 4]), [0, 0, 0, 1]):
                self.issues.append(f"BALL joint {m.joint_label[j]!r}: joint_q (no USD spherical-joint state)")
            return
        if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
            name = "angular" if jt == JointType.REVOLUTE else "linear"
            scale = 1.0 / DEG if name == "angular" else 1.0
            lo, hi = float(m.joint_limit_lower[d0]), float(m.joint_limit_upper[d0])
            if lo > -1e10:
                joint.CreateLowerLimitAttr(lo * scale)
            if hi < 1e10:
                joint.CreateUpperLimitAttr(hi * scale)
            self._drive(prim, name, d0, q0, angular=name == "angular")
            return
        if jt != JointType.D6:
            return
        for group, start, idx in ((0, d0, d6_axes[0]), (1, d0 + lin, d6_axes[1])):
            for k in range(3):  # D6: every axis of the rotated frame, locked unless present
                name = _D6_NAMES[group][k]
                dof = start + idx.index(k) if k in idx else None
                if dof is None:
                    lim = UsdPhysics.LimitAPI.Apply(prim, name)
                    lim.CreateLowAttr(1.0)
                    lim.CreateHighAttr(-1.0)
                    continue
                scale = 1.0 / DEG if group else 1.0
                if self._limited(dof):
                    lim = UsdPhysics.LimitAPI.Apply(prim, name)
                    lim.CreateLowAttr(float(m.joint_limit_lower[dof]) * scale)
                    lim.CreateHighAttr(float(m.joint_limit_upper[dof]) * scale)
                self._drive(prim, name, dof, q0 + dof - d0, angular=bool(group))

    def _limited(self, dof: int) -> bool:
        return float(self.m.joint_limit_lower[dof]) > -1e10 or float(self.m.joint_limit_upper[dof]) < 1e10

    def _drive(self, prim, name: str, dof: int, coord: int, *, angular: bool) -> None:
        from pxr import Sdf, UsdPhysics

        m = self.m
        scale = 1.0 / DEG if angular else 1.0
        mode = int(np.asarray(m.joint_target_mode)[dof])
        ke, kd = float(m.joint_target_ke[dof]), float(m.joint_target_kd[dof])
        if mode != int(JointTargetMode.NONE) or ke > 0.0 or kd > 0.0:
            drv = UsdPhysics.DriveAPI.Apply(prim, name)
            self.driven.add(dof)
            drv.CreateTypeAttr("force")
            drv.CreateStiffnessAttr(ke / scale)
            drv.CreateDampingAttr(kd / scale)
            drv.CreateTargetPositionAttr(float(m.joint_target_q[coord]) * scale)
            drv.CreateTargetVelocityAttr(float(m.joint_target_qd[dof]) * scale)
            drv.CreateMaxForceAttr(float(m.joint_effort_limit[dof]))
        for what, value in (("position", float(m.joint_q[coord])), ("velocity", float(m.joint_qd[dof]))):
            if value != 0.0:
                prim.CreateAttribute(f"state:{name}:physics:{what}", Sdf.ValueTypeNames.Float).Set(value * scale)

    def _shapes(self) -> None:
        from pxr import Sdf, UsdGeom, UsdPhysics

        m = self.m
        flags, groups = np.asarray(m.shape_flags), np.asarray(m.shape_collision_group)
        written = self.written
        for s in range(m.shape_count):
            geo = GeoType(int(np.asarray(m.shape_type)[s]))
            body = int(np.asarray(m.shape_body)[s])
            label = m.shape_label[s]
            if flags[s] & 4:
                self.issues.append(f"site {label!r}")
                continue
            if geo not in WRITABLE:
                self.issues.append(f"shape {label!r}: {geo.name} cannot be written as UsdGeom")
                continue
            parent = self.body_paths[m.body_label[body]] if body >= 0 else "/World/static"
            if body < 0 and not self.stage.GetPrimAtPath(parent):
                UsdGeom.Scope.Define(self.stage, parent)
            path = self.names.child(parent, label)
            prim = write_shape(self.stage, path, geo, _np(m.shape_scale[s]), _np(m.shape_transform[s]),
                               mesh=m.meshes[s] if geo == GeoType.MESH else None)
            if geo == GeoType.ELLIPSOID:
                self.issues.append(f"shape {label!r}: ellipsoid written as a scaled sphere (imports as a sphere)")
            col = UsdPhysics.CollisionAPI.Apply(prim)
            col.CreateCollisionEnabledAttr(bool(flags[s] & 2) and int(groups[s]) != 0)  # group 0: no contacts
            if geo == GeoType.MESH:
                UsdPhysics.MeshCollisionAPI.Apply(prim).CreateApproximationAttr("convexHull")
            if self.materials:
                self._bind_material(prim, float(m.shape_material_mu[s]), float(m.shape_material_restitution[s]))
            written[s] = path
            self.shape_paths[label] = path
        for a, b in np.asarray(m.topology.shape_collision_filter_pairs).reshape(-1, 2):
            if int(a) in written and int(b) in written:
                api = UsdPhysics.FilteredPairsAPI.Apply(self.stage.GetPrimAtPath(written[int(a)]))
                api.CreateFilteredPairsRel().AddTarget(Sdf.Path(written[int(b)]))

    def _bind_material(self, prim, mu: float, restitution: float) -> None:
        from pxr import UsdPhysics, UsdShade

        key = (round(mu, 12), round(restitution, 12))
        if key not in self._mats:
            path = self.names.child("/World/PhysicsMaterials", f"material_{len(self._mats)}")
            mat = UsdShade.Material.Define(self.stage, path)
            api = UsdPhysics.MaterialAPI.Apply(mat.GetPrim())
            api.CreateStaticFrictionAttr(mu)
            api.CreateDynamicFrictionAttr(mu)
            api.CreateRestitutionAttr(restitution)
            self._mats[key] = mat
        UsdShade.MaterialBindingAPI.Apply(prim).Bind(self._mats[key], UsdShade.Tokens.weakerThanDescendants,
                                                     "physics")


def _posed_bodies(model) -> np.ndarray:
    """Body poses at the model's default ``joint_q`` (numpy FK over the tree joints; others keep ``body_q``)."""
    from jaxart.sim.validate import np_transform_inverse, np_transform_mul

    poses = _np(model.body_q).copy()
    jt, parent, child = (np.asarray(getattr(model, k)) for k in ("joint_type", "joint_parent", "joint_child"))
    tree = [j for j in range(model.joint_count) if int(np.asarray(model.joint_articulation)[j]) >= 0]
    done = {-1}
    for _ in range(len(tree) + 1):  # parents first, whatever the joint order
        for j in tree:
            if int(child[j]) in done or int(parent[j]) not in done:
                continue
            x_wp = poses[parent[j]] if parent[j] >= 0 else np.array([0, 0, 0, 0, 0, 0, 1.0])
            x = np_transform_mul(np_transform_mul(x_wp, _np(model.joint_X_p[j])), _joint_motion(model, j, int(jt[j])))
            poses[child[j]] = np_transform_mul(x, np_transform_inverse(_np(model.joint_X_c[j])))
            done.add(int(child[j]))
    return poses


def _joint_motion(model, j: int, jt: int) -> np.ndarray:
    """``X_j(q)`` of one joint at the model's default coordinates (jaxart's conventions)."""
    q0, d0 = int(np.asarray(model.joint_q_start)[j]), int(np.asarray(model.joint_qd_start)[j])
    q = _np(model.joint_q[q0:int(np.asarray(model.joint_q_start)[j + 1])])
    lin, ang = (int(v) for v in np.asarray(model.joint_dof_dim)[j])
    if jt in (JointType.FREE, JointType.DISTANCE):
        return np.concatenate([q[:3], q[3:7] / np.linalg.norm(q[3:7])])
    if jt == JointType.BALL:
        return np.concatenate([np.zeros(3), q / np.linalg.norm(q)])
    axes = _np(model.joint_axis[d0:d0 + lin + ang]).reshape(-1, 3)
    p = sum((axes[k] * q[k] for k in range(lin)), np.zeros(3))
    rot = np.array([0.0, 0.0, 0.0, 1.0])
    for k in range(lin, lin + ang):
        a = axes[k] / np.linalg.norm(axes[k])
        rot = np_quat_mul(rot, np.concatenate([a * np.sin(0.5 * q[k]), [np.cos(0.5 * q[k])]]))
    return np.concatenate([p, rot])


def _principal(inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments and the rotation (xyzw) whose columns are the principal axes."""
    w, v = np.linalg.eigh(0.5 * (inertia + inertia.T))
    if np.linalg.det(v) < 0:
        v[:, 2] = -v[:, 2]
    return np.maximum(w, 0.0), _matrix_to_quat(v)


def _matrix_to_quat(r: np.ndarray) -> np.ndarray:
    """Rotation matrix → unit quaternion ``(x, y, z, w)`` (Shepperd's method)."""
    t = np.trace(r)
    if t > 0:
        s = 2.0 * np.sqrt(t + 1.0)
        q = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s]
    else:
        i = int(np.argmax(np.diag(r)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k])
        q = [0.0, 0.0, 0.0, (r[k, j] - r[j, k]) / s]
        q[i] = 0.25 * s
        q[j] = (r[j, i] + r[i, j]) / s
        q[k] = (r[k, i] + r[i, k]) / s
    q = np.asarray(q)
    return q / np.linalg.norm(q)


def _vec3f(v):
    from pxr import Gf

    return Gf.Vec3f(*[float(x) for x in v])


def _quatf(q):
    from pxr import Gf

    return Gf.Quatf(float(q[3]), float(q[0]), float(q[1]), float(q[2]))
