"""MJCF import through MuJoCo's own compiler (``ModelBuilder.add_mjcf``).

The XML is parsed and compiled by ``mujoco.MjSpec`` and the importer reads the **compiled**
``MjModel``, so defaults, classes, ``childclass``, ``fromto``, degrees, includes and
inertia-from-geoms are resolved exactly as MuJoCo resolves them.

Mapping (MuJoCo → jaxart):

============================  ==========================================================================
MuJoCo                        jaxart
============================  ==========================================================================
body (name)                   link with label = name (unnamed: ``body_<id>``); explicit mass, COM
                              (``body_ipos``) and inertia (``body_inertia`` rotated by ``body_iquat``)
                              with ``lock_inertia=True``; shapes are massless
body without joints           FIXED joint to its parent (world: parent −1 / ``parent_body``)
hinge / slide / ball / free   REVOLUTE / PRISMATIC / BALL / FREE (``floating`` overrides roots)
several joints in a body      one D6 or a chain through massless links ``<body>__<joint>``
                              (see :mod:`jaxart.io.mjcf.joints`)
joint ``ref`` (qpos0)         ``joint_q == qpos`` numerically; offset absorbed in ``joint_X_c``/``X_p``
range (limited), solreflimit  ``limit_lower/upper``; ``limit_ke/kd`` (:func:`~jaxart.io.mjcf.convert.solref_gains`)
damping, stiffness, springref ``damping``, ``stiffness``, ``rest_q``
armature, frictionloss        ``armature``, ``friction``
actuatorfrcrange              ``effort_limit``
position / velocity / motor   POSITION(_VELOCITY) / VELOCITY / EFFORT drives
                              (:mod:`jaxart.io.mjcf.actuators`)
geoms, sites                  shapes, sites (:mod:`jaxart.io.mjcf.shapes`)
plane ``size``                 infinite for collision; the half extents rays see (``shape_ray_extent``)
hfield assets                 ``Heightfield`` shapes for world-body hfield geoms (compiled data)
contact pair / exclude        explicit contact pairs with their own friction/solref/margin/gap
                              (:mod:`jaxart.io.mjcf.pairs`) / filter pairs
equality connect/weld/joint/ CONNECT / WELD / JOINT (D6 DOFs too) / TENDON equality constraints
tendon                        (:mod:`jaxart.io.mjcf.equality`)
tendon fixed / spatial        FIXED / SPATIAL tendons (sites, sphere/cylinder wrapping, pulleys;
                              :mod:`jaxart.io.mjcf.tendons`); servos on
                              tendons → tendon drives (``target_ke/kd``), motors → ``Control.tendon_f``
``opt.gravity``               ``builder.gravity`` when along the builder's up axis
density, viscosity, wind      ``builder.fluid_density/viscosity/wind`` (inertia-box model, or the
                              ellipsoid model of ``fluidshape="ellipsoid"`` geoms: ``shape_fluid``;
                              :mod:`jaxart.laws.fluid`)
actuator ``dyntype``          integrator / filter / filterexact → stateful actuators
                              (``Control.actuator_ctrl``, ``State.actuator_act``)
mocap body                    kinematic body on a FREE joint listed in ``Model.mocap_joint``
                              (``Control.mocap_pos/mocap_quat``)
body gravcomp                 ``body_gravcomp`` (``add_link(gravcomp=...)``)
``<option><flag>``            what a disabled flag switches off is not imported (gravity, contacts,
                              limits, equalities, springs, dampers, actuation, ...;
                              :mod:`jaxart.io.mjcf.flags`); flags not honoured are reported
qpos0                         initial ``joint_q`` (quaternions ``wxyz`` → ``xyzw``)
sensors                       the model's sensor table (:mod:`jaxart.io.mjcf.sensors`)
keyframes                     ``qpos``, ``qvel``, ``act``, ``ctrl``, ``mpos``/``mquat``, ``time``
                              (:mod:`jaxart.io.mjcf.keyframes`)
============================  ==========================================================================

Unsupported features (flex/site equalities, most non-articulation sensors, per-pair
contact parameters, heightfields on moving bodies, flexes, other actuators, ball cone limits, off-axis
gravity, …) are collected and reported in ONE ``UserWarning`` (``strict=True``: ``ValueError`` before the builder
is touched).
"""

from __future__ import annotations

import os
import warnings

import mujoco
import numpy as np

from jaxart.io.entry import text_source
from jaxart.io.mjcf.actuators import map_activations, map_actuators
from jaxart.io.mjcf.convert import IDENTITY, pose, rotated_inertia, xyzw
from jaxart.io.mjcf.equality import add_equalities, equality_issues
from jaxart.io.mjcf.flags import apply_option_flags
from jaxart.io.mjcf.joints import BALL, FREE, dof_configs, joint_issues, plan_body
from jaxart.io.mjcf.keyframes import import_keyframes
from jaxart.io.mjcf.pairs import add_contact_pairs, pair_issues
from jaxart.io.mjcf.refs import MjcfRefs
from jaxart.io.mjcf.report import fluid_semiaxes, gravity_along_up, model_issues
from jaxart.io.mjcf.sensors import SensorRefs, add_sensors, sensor_issues
from jaxart.io.mjcf.shapes import add_collision_filters, add_geoms, add_sites, import_meshes, mesh_notes
from jaxart.io.mjcf.tendons import add_tendons, tendon_issues
from jaxart.sim.actuators import TENDON_OUTPUTS
from jaxart.sim.enums import JointType
from jaxart.sim.validate import as_transform, np_quat_rotate, np_transform_mul


def load_mjcf(source, *, assets: dict | None = None) -> tuple[str, mujoco.MjModel]:
    """Compile an MJCF file path or XML string with MuJoCo.

    Args:
        source: Path (``str``/``os.PathLike``) or an XML string (starting with ``<``).
        assets: Optional ``{file name: bytes}`` for meshes/includes referenced by an XML string.

    Returns:
        ``(description, model)`` where description names the file (for messages).

    Raises:
        TypeError: ``source`` is not a string or path.
        ValueError: Missing file, invalid XML or a MuJoCo compile error (MuJoCo's message included).
    """
    what, _, model = compile_mjcf(source, assets=assets)
    return what, model


def compile_mjcf(source, *, assets: dict | None = None) -> tuple[str, mujoco.MjSpec, mujoco.MjModel]:
    """:func:`load_mjcf` that also returns the ``MjSpec`` (read for settings the compiled model drops)."""
    source, is_xml, what = text_source(source, "add_mjcf")
    if not is_xml and not os.path.isfile(source):
        raise ValueError(f"add_mjcf: MJCF file {source!r} does not exist")
    try:
        spec = (mujoco.MjSpec.from_string(source, assets=assets) if is_xml
                else mujoco.MjSpec.from_file(source, assets=assets))
        model = spec.compile()
    except ValueError as e:
        raise ValueError(f"add_mjcf: MuJoCo could not load {what}: {e}") from None
    if model is None:
        raise ValueError(f"add_mjcf: MuJoCo could not compile {what}")
    return what, spec, model


def add_mjcf(builder, source, *, xform=None, floating: bool | None = None, parent_body: int = -1,
             strict: bool = False, label_prefix: str | None = None, assets: dict | None = None,
             enable_self_collisions: bool = True) -> dict:
    """Import an MJCF model into ``builder`` (see the module docstring for the mapping).

    Args:
        builder: Target :class:`~jaxart.ModelBuilder` (mutated).
        source: MJCF file path or XML string.
        xform: Pose of the MJCF world frame relative to ``parent_body`` (the world when −1); applied
            to root joints' ``parent_xform`` (FREE roots included, whose ``joint_q`` stays MuJoCo's
            ``qpos``), to initial body poses and to world geoms.
        floating: ``None`` keeps the MJCF's root joints; ``True`` gives jointless roots a FREE joint;
            ``False`` turns free roots into FIXED joints at their initial pose.
        parent_body: Existing body the roots (and world geoms/sites) attach to; −1 = world.
        strict: Raise ``ValueError`` instead of warning about unsupported features.
        label_prefix: Prefix ``"<prefix>/"`` for every created label (import a model twice).
        assets: ``{file name: bytes}`` for assets referenced by an XML string.
        enable_self_collisions: Newton's flag; ``False`` filters contacts between shapes of the
            same imported tree (on top of MuJoCo's own contype/conaffinity/parent/exclude rules).

    Returns:
        dict with ``"bodies"`` (label → body index, intermediate links included), ``"joints"``
        (jaxart joint label and every MuJoCo joint name → joint index), ``"shapes"`` / ``"sites"``
        (MuJoCo name → shape index, named ones), ``"articulations"`` (one per root tree),
        ``"articulation"`` (the first, or ``None``), ``"coord_start"`` / ``"dof_start"`` (first
        imported coordinate / DOF index in the builder), ``"coord_map"`` / ``"dof_map"`` (MuJoCo
        ``qpos`` / ``qvel`` index of each imported jaxart coordinate / DOF, −1 for added FREE joints;
        quaternions are reordered, and BALL/FREE velocities differ by frame: MuJoCo gives angular
        velocity in the child frame and free linear velocity of the body origin), ``"keyframes"``
        (keyframe name → imported ``joint_q`` slice), ``"keyframe_data"`` (keyframe name →
        :class:`~jaxart.io.mjcf.keyframes.Keyframe`: ``time``, ``joint_q``, ``joint_qd``, ``actuator_act``,
        ``actuator_ctrl``, raw ``ctrl``, ``mocap_pos``/``mocap_quat``; ``.state(model)`` / ``.control(model)``),
        ``"equalities"`` (MuJoCo equality name or ``"#<id>"`` → equality-constraint index),
        ``"tendons"`` (MuJoCo tendon name or ``"#<id>"`` → tendon index), ``"sensors"`` (MuJoCo sensor name
        or ``"#<id>"`` → sensor index), ``"actuators"`` (name of each MuJoCo actuator with activation dynamics,
        unnamed ``actuator_<id>`` → its index in ``Control.actuator_ctrl`` / ``State.actuator_act``: set
        ``actuator_ctrl`` to MuJoCo's ``ctrl`` of these), ``"mocap"`` (mocap body name → index in
        ``Control.mocap_pos``/``mocap_quat``, MuJoCo's ``body_mocapid``),
        ``"unsupported"`` (the reported issues), ``"approximated"`` (colliding meshes that are not
        convex or whose hull jaxart caps where MuJoCo does not: reported, never an error under
        ``strict``), ``"timestep"`` (``opt.timestep``) and
        ``"mj_model"`` (MuJoCo's compiled model, unchanged by the option flags the import applies).

    Raises:
        ValueError: Bad file/XML (MuJoCo's message), label clashes, or unsupported features with ``strict``.
        TypeError: Wrong argument types.
    """
    if floating is not None and not isinstance(floating, bool):
        raise TypeError(f"add_mjcf: floating must be None, True or False, got {floating!r}")
    if label_prefix is not None and not isinstance(label_prefix, str):
        raise TypeError(f"add_mjcf: label_prefix must be a str, got {type(label_prefix).__name__}")
    builder._check_body(parent_body, "add_mjcf: parent_body", allow_world=True)
    base = as_transform(xform, "add_mjcf: xform")
    what, spec, mj_model = compile_mjcf(source, assets=assets)
    hullvert = [int(x.maxhullvert) for x in spec.meshes]
    if len(hullvert) != mj_model.nmesh:
        hullvert = [-1] * mj_model.nmesh
    m, flag_iss = apply_option_flags(mj_model)
    drives, issues = map_actuators(m)
    gravity, g_issue = gravity_along_up(m, builder.up_vector)
    issues = flag_iss + model_issues(m) + joint_issues(m) + issues + ([g_issue] if g_issue else []) + equality_issues(m)
    issues += tendon_issues(m) + sensor_issues(m)
    issues += pair_issues(m)
    issues += [f"geom {m.geom(g).name or g!r}: SDF geometry" for g in range(m.ngeom)
               if int(m.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_SDF)]
    issues += [f"geom {m.geom(g).name or g!r}: heightfield not on the world (jaxart heightfields are static; "
               "skipped)" for g in range(m.ngeom) if int(m.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_HFIELD)
               and (int(m.geom_bodyid[g]) != 0 or int(parent_body) >= 0)]
    if issues and strict:
        raise ValueError(f"add_mjcf({what}): strict=True and the model uses features jaxart cannot represent: "
                         + "; ".join(issues))
    meshes = import_meshes(m, hullvert)
    notes = mesh_notes(m, meshes, hullvert)
    imp = _Importer(builder, m, base=base, parent_body=int(parent_body), floating=floating,
                    prefix=label_prefix, drives=drives, self_collisions=bool(enable_self_collisions))
    imp.meshes = meshes
    imp.check_labels()
    if gravity is not None:
        builder.gravity = gravity
    if m.opt.density or m.opt.viscosity:  # MuJoCo's medium, rotated into the builder's world
        builder.fluid_density, builder.fluid_viscosity = float(m.opt.density), float(m.opt.viscosity)
        builder.fluid_wind = np_quat_rotate(imp.world_base[3:], np.asarray(m.opt.wind, np.float64))
    result = imp.run()
    result.update(unsupported=issues, approximated=notes, timestep=float(m.opt.timestep), mj_model=mj_model)
    if issues or notes:
        warnings.warn(f"add_mjcf({what}): {len(issues) + len(notes)} MJCF feature(s) not imported or approximated:"
                      "\n  - " + "\n  - ".join(issues + notes), UserWarning, stacklevel=3)
    return result


class _Importer:
    """Creates links, joints, shapes and articulations for one compiled model."""

    def __init__(self, builder, m, *, base, parent_body, floating, prefix, drives, self_collisions) -> None:
        self.b, self.m, self.self_collisions = builder, m, self_collisions
        self.meshes: dict | None = None  # MuJoCo mesh id → Mesh (set by add_mjcf; None: default hull caps)
        self.base, self.parent_body, self.prefix, self.drives = base, parent_body, prefix, drives
        x_parent = builder.body_q[parent_body] if parent_body >= 0 else IDENTITY
        self.world_base = np_transform_mul(x_parent, base)
        self.min_tc = _min_timeconst(m)
        self.filterparent = not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
        self.labels = [m.body(b).name or f"body_{b}" for b in range(m.nbody)]
        self.plans = {b: plan_body(m, b, self.labels[b], floating=floating) for b in range(1, m.nbody)}
        self.bodies: dict[int, int] = {}
        self.out = {"bodies": {}, "joints": {}, "shapes": {}, "sites": {}, "articulations": []}
        self.coord_map: list[int] = []
        self.dof_map: list[int] = []

    def pre(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def check_labels(self) -> None:
        """Raise before mutating the builder when a label to be created already exists."""
        m, b = self.m, self.b
        bodies, joints = [], []
        for body, segs in self.plans.items():
            bodies += [self.pre(f"{self.labels[body]}__{s.label}") for s in segs[:-1]] + [self.pre(self.labels[body])]
            joints += [self.pre(s.label) for s in segs]
        arts = [self.pre(self.labels[r]) for r in range(1, m.nbody) if m.body_parentid[r] == 0]
        shapes = [self.pre(m.geom(g).name) for g in range(m.ngeom) if m.geom(g).name]
        shapes += [self.pre(m.site(k).name) for k in range(m.nsite) if m.site(k).name]
        for kind, new, old in (("body", bodies, b.body_label), ("joint", joints, b.joint_label),
                               ("articulation", arts, b.articulation_label), ("shape", shapes, b.shape_label)):
            clash = sorted(set(new) & set(old))
            if kind != "shape":
                clash = clash or sorted({x for x in new if new.count(x) > 1})
            if clash:
                raise ValueError(f"add_mjcf: {kind} label(s) {clash[:5]} already exist in the builder; "
                                 "pass label_prefix=... to import the model again")

    def run(self) -> dict:
        m, b = self.m, self.b
        data = mujoco.MjData(m)
        mujoco.mj_kinematics(m, data)
        self.out.update(coord_start=b.joint_coord_count, dof_start=b.joint_dof_count)
        start, root = None, 0
        for body in range(1, m.nbody):
            if m.body_parentid[body] == 0:
                self._close(start, root)
                start, root = b.joint_count, body
            self._add_body(body, np_transform_mul(self.world_base, pose(data.xpos[body], data.xquat[body])))
        self._close(start, root)
        self._add_shapes()
        refs = MjcfRefs(body_of=self._body_of, coord_start=self.out["coord_start"], coord_map=self.coord_map,
                        label=self.pre, geom_shape=self.geom_shapes, site_shape=self.site_shapes)
        self.out["tendons"] = add_tendons(b, m, refs, min_timeconst=self.min_tc)
        self.out["equalities"] = add_equalities(b, m, refs, self.out["tendons"])
        self.out["sensors"] = add_sensors(b, m, SensorRefs(self._body_of, self.out["dof_start"], self.dof_map,
                                                           self.geom_shapes, self.site_shapes, self.out["tendons"],
                                                           self.pre))
        self.out["articulation"] = self.out["articulations"][0] if self.out["articulations"] else None
        self.out["coord_map"] = np.asarray(self.coord_map, dtype=np.int64)
        self.out["dof_map"] = np.asarray(self.dof_map, dtype=np.int64)
        self.out["actuators"] = self._add_activations()
        self.out["mocap"] = self._add_mocap()
        self.out["keyframe_data"] = import_keyframes(self.m, self.out, self._imported_q0())
        self.out["keyframes"] = {name: key.joint_q for name, key in self.out["keyframe_data"].items()}
        return self.out

    def _add_mocap(self) -> dict[str, int]:
        """Register the mocap bodies' FREE joints in ``mocap_id`` order (MuJoCo name → mocap index)."""
        m, out = self.m, {}
        bodies = sorted((int(m.body_mocapid[b]), b) for b in range(1, m.nbody) if m.body_mocapid[b] >= 0)
        for _, body in bodies:
            out[self.labels[body]] = len(out)
            self.b.mocap_joint.append(self.out["joints"][f"{self.labels[body]}_mocap"])
        return out

    def _add_activations(self) -> dict[str, int]:
        """Actuators with activation dynamics → stateful actuators (MuJoCo name → ``Control.actuator_ctrl`` index)."""
        dof_of = {int(mj): self.out["dof_start"] + k for k, mj in enumerate(self.out["dof_map"]) if mj >= 0}
        out = {}
        for act in map_activations(self.m):
            kw = dict(act.kwargs, label=self.pre(act.kwargs["label"]))
            if act.output in TENDON_OUTPUTS:
                target = self.out["tendons"].get(self.m.tendon(act.target).name or f"#{act.target}")
            else:
                target = dof_of.get(act.target)
            if target is not None:
                out[act.kwargs["label"]] = self.b.add_actuator(target, output=act.output, **kw)
        return out

    def _imported_q0(self) -> np.ndarray:
        """Initial ``joint_q`` of the imported coordinates (kept by keyframes where MuJoCo has no ``qpos``)."""
        return np.asarray(self.b.joint_q[self.out["coord_start"]:], dtype=np.float64)

    def _close(self, start: int | None, root: int) -> None:
        """One articulation per MuJoCo root tree (its joints are contiguous: bodies are in DFS order)."""
        if start is not None and self.b.joint_count > start:
            art = self.b.add_articulation(list(range(start, self.b.joint_count)), label=self.pre(self.labels[root]))
            self.out["articulations"].append(art)

    def _add_body(self, body: int, x_world: np.ndarray) -> None:
        m, b, segs = self.m, self.b, self.plans[body]
        label = self.labels[body]
        links = [b.add_link(xform=x_world, label=self.pre(f"{label}__{s.label}"), lock_inertia=True)
                 for s in segs[:-1]]
        links.append(b.add_link(xform=x_world, com=m.body_ipos[body], mass=float(m.body_mass[body]),
                                inertia=rotated_inertia(m.body_inertia[body], m.body_iquat[body]),
                                label=self.pre(label), lock_inertia=True, is_kinematic=m.body_mocapid[body] >= 0,
                                gravcomp=float(m.body_gravcomp[body])))
        for link in links:
            self.out["bodies"][b.body_label[link][len(self.pre("")):]] = link
        self.bodies[body] = links[-1]
        mj_parent = int(m.body_parentid[body])
        prev = self.bodies[mj_parent] if mj_parent > 0 else self.parent_body
        for k, (seg, child) in enumerate(zip(segs, links, strict=True)):
            x_p = np_transform_mul(self.base, seg.x_p) if (k == 0 and mj_parent == 0) else seg.x_p
            self._add_joint(seg, prev, child, x_p)
            prev = child

    def _add_joint(self, seg, parent: int, child: int, x_p: np.ndarray) -> None:
        m, b = self.m, self.b
        cfgs = [c for j in seg.joints for c in dof_configs(m, j, self.drives, min_timeconst=self.min_tc)]
        nlin = sum(1 for j in seg.joints if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE)
        if seg.jtype == JointType.FREE and seg.joints:
            nlin = 3
        lin, ang = (cfgs[:nlin], cfgs[nlin:]) if cfgs else (None, None)
        j = b.add_joint(seg.jtype, parent, child, linear_axes=lin, angular_axes=ang, label=self.pre(seg.label),
                        parent_xform=x_p, child_xform=seg.x_c,
                        collision_filter_parent=self.filterparent and parent >= 0)  # MuJoCo never filters world
        self.out["joints"][seg.label] = j
        q0 = b.joint_q_start[j]
        qmap = [idx for mj in seg.joints for idx in _qpos_indices(m, mj)]
        if seg.joints:
            b.joint_q[q0:q0 + len(qmap)] = [float(m.qpos0[i]) for i in qmap]
        ncoord = len(b.joint_q) - q0
        self.coord_map += qmap if seg.joints else [-1] * ncoord
        ndof = sum(b.joint_dof_dim[j])
        self.dof_map += [int(m.jnt_dofadr[mj]) + k for mj in seg.joints for k in range(_ndof(m, mj))] or [-1] * ndof
        for mj in seg.joints:
            self.out["joints"][m.joint(mj).name or seg.label] = j

    def _body_of(self, body: int, x: np.ndarray) -> tuple[int, np.ndarray]:
        if body == 0:
            return self.parent_body, np_transform_mul(self.base, x)
        return self.bodies[body], x

    def _add_shapes(self) -> None:
        m = self.m
        geom_names = {m.geom(g).name for g in range(m.ngeom)}

        def geom_label(name: str) -> str | None:
            return self.pre(name) if name else None

        def site_label(name: str) -> str | None:
            return (self.pre(name + "__site") if name in geom_names else self.pre(name)) if name else None

        shapes = add_geoms(self.b, m, self._body_of, geom_label, min_timeconst=self.min_tc,
                           meshes=self.meshes)
        sites = add_sites(self.b, m, self._body_of, site_label)
        add_collision_filters(self.b, m, shapes, self_collisions=self.self_collisions)
        add_contact_pairs(self.b, m, shapes, min_timeconst=self.min_tc)
        self.geom_shapes, self.site_shapes = shapes, sites
        for g, shape in shapes.items():  # MuJoCo's rays see a plane's size (its collision is infinite)
            if int(m.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_PLANE) and np.any(m.geom_size[g, :2] > 0.0):
                self.b.shape_ray_extent[shape] = np.maximum(np.asarray(m.geom_size[g, :2], np.float64), 0.0)
        if m.opt.density or m.opt.viscosity:  # ellipsoid fluid model (jaxart.laws.fluid)
            for g, shape in shapes.items():
                axes = fluid_semiaxes(m, g)
                if float(m.geom_fluid[g, 0]) > 0.0 and axes is not None:
                    self.b.shape_fluid[shape] = np.concatenate([m.geom_fluid[g, :12], axes])
        self.out["shapes"] = {m.geom(g).name: s for g, s in shapes.items() if m.geom(g).name}
        self.out["sites"] = {m.site(k).name: s for k, s in sites.items() if m.site(k).name}


def _min_timeconst(m) -> float:
    """``solref`` time-constant clamp: MuJoCo's ``refsafe`` (2·timestep) unless disabled."""
    refsafe = not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE)
    return 2.0 * float(m.opt.timestep) if refsafe else 0.0


def _ndof(m, j: int) -> int:
    return {FREE: 6, BALL: 3}.get(int(m.jnt_type[j]), 1)


def _qpos_indices(m, j: int) -> list[int]:
    """MuJoCo qpos indices in jaxart coordinate order (quaternions reordered ``wxyz`` → ``xyzw``)."""
    a = int(m.jnt_qposadr[j])
    jt = int(m.jnt_type[j])
    if jt == FREE:
        return [a, a + 1, a + 2, a + 4, a + 5, a + 6, a + 3]
    if jt == BALL:
        return [a + 1, a + 2, a + 3, a]
    return [a]


__all__ = ["add_mjcf", "load_mjcf", "xyzw"]
