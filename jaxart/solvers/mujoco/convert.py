"""Convert a jaxart ``Model`` into a ``mujoco.MjSpec`` following Newton's MuJoCo-integration mapping tables.

Bodies, frames, inertia and options live here; joints/actuators in
:mod:`~jaxart.solvers.mujoco.joints`, geoms in :mod:`~jaxart.solvers.mujoco.shapes`, collision
filtering in :mod:`~jaxart.solvers.mujoco.filter`, index bookkeeping in
:mod:`~jaxart.solvers.mujoco.layout`. Mapping summary:

* Joints: REVOLUTE → hinge, PRISMATIC → slide, BALL → ball, FREE → free (world parent, no per-DOF terms),
  D6 → one slide per linear and one hinge per angular axis, named ``<joint>_lin[i]`` /
  ``<joint>_ang[i]`` (suffix only for multi-axis joints, index only when that kind has > 1 axis),
  FIXED → nested body without a joint (a *mocap* body when the parent is the world). Mocap bodies
  (``Model.mocap_joint``: kinematic FREE joints with the world as parent) → MuJoCo mocap bodies without a joint,
  whose ``mocap_pos``/``mocap_quat`` are set from the joint's coordinates in every step (``joint_X_p · joint_q``).
  FREE joints below a body or with any per-DOF term (damping, armature, friction, stiffness, limits, drives) →
  three slides ``<joint>_lin0..2`` along the parent-anchor axes and a ball ``<joint>_ang`` centred on the child
  COM (:func:`~jaxart.solvers.mujoco.joints.free_as_slides`): the slides move the COM, so their velocities are
  jaxart's COM velocity and damping/armature/friction/velocity drives map exactly for any COM; stiffness, limits
  and position drives of the linear DOFs act on the child-anchor position and need the COM at the child anchor
  (else ``NotImplementedError``); the angular DOFs take the BALL rules.
  DISTANCE → like FREE (its coordinates are a FREE joint's) plus, for finite distance limits, a limited spatial
  tendon between its anchors
  (:func:`~jaxart.solvers.mujoco.tendons.add_distance_tendons`). Loop-closing joints and equality/mimic
  constraints become MuJoCo equality constraints (:mod:`~jaxart.solvers.mujoco.equality`; loop PRISMATIC/D6 joints,
  loop joints with limits or passive terms and loop-joint drives: :mod:`~jaxart.solvers.mujoco.loops`); tendons
  become MuJoCo tendons (:mod:`~jaxart.solvers.mujoco.tendons`).
* Frames: the MuJoCo frame of a jointed body is its joint's child anchor
  (``body · joint_X_c``), placed at its ``joint_q = 0`` pose, so hinge/slide/ball ``qpos`` equal
  ``joint_q`` (quaternions xyzw → wxyz) and joint ``pos`` is zero, ``axis`` = ``joint_axis``
  (inside a folded multi-joint body: the joint anchor and axis at ``joint_q = 0``).
  A MuJoCo free joint's ``qpos`` is ``joint_X_p · joint_q`` (equal to ``joint_q`` for identity anchors); slide +
  ball FREE joints sit at their parent anchor at ``qpos = 0`` (slides ``p + R(q) c − c``, :mod:`~.state`).
  Massless, shapeless links with a single child (e.g. the intermediate links of an MJCF import)
  are folded into their child's body as a MuJoCo multi-joint body (exact; MuJoCo rejects moving
  massless bodies). Bodies without a tree joint become static children of the world.
* Geoms: SPHERE, CAPSULE, CYLINDER, BOX, ELLIPSOID, PLANE (world body only; infinite planes are
  rendered 5 × 5), MESH / CONVEX_MESH → ``mjGEOM_MESH`` (non-convex meshes are convex-hulled by
  MuJoCo; a warning says so), HFIELD → ``mjGEOM_HFIELD`` (:mod:`~jaxart.solvers.mujoco.hfield`: data
  normalised to [0, 1], origin shifted by ``min_z``). CONE raises ``NotImplementedError``. Sites → MuJoCo sites.
* Contact: ``friction = (mu, mu_torsional, mu_rolling)``; ``solref = (2/kd, kd / (2 √ke))`` —
  MuJoCo's stiffness/damping ↔ (timeconst, dampratio) relation ``b = 2/(d·τ)``,
  ``k = d(r)/(d² τ² ζ²)`` with impedance ``d = 1`` — or MuJoCo's default ``(0.02, 1)`` when ke or
  kd ≤ 0; ``margin = shape_margin``; ``gap = 0`` always; filtering via
  :mod:`jaxart.solvers.mujoco.filter`; explicit contact pairs → ``<contact><pair>`` with the pair's own
  ``contact_pair_*`` friction, solref (same mapping) and margin.
* Joint limits ``solref_limit = (−ke, −kd)`` (direct stiffness/damping) when ke > 0; passive
  ``damping``, ``stiffness``/``springref`` (= ``joint_rest_q``), ``armature``, ``frictionloss``; BALL (and the
  angular DOFs of slide + ball FREE joints): one armature / frictionloss per joint (the three axes must
  agree), uniform damping and uniform springs with a zero rest rotation on the joint (``qpos_spring`` =
  identity), per-axis damping and springs with per-axis stiffness or a rest rotation (MuJoCo's joint spring
  would be ``k log(q_s q⁻¹)``, not jaxart's ``k (rest − log q)``) as ``mjTRN_JOINTINPARENT`` actuators
  ``<joint>_{x,y,z}_spring`` / ``_damp`` (gain 0, bias ``(k·rest, −k, 0)`` / ``(0, 0, −c)``), no limits
  (MuJoCo's ball limit is one cone angle) — else ``NotImplementedError``;
  ``joint_effort_limit`` → ``actfrcrange`` (hinge/slide); ``joint_velocity_limit`` is ignored with
  a warning when set below its default.
* Mass: positive-mass bodies get explicit ``mass``, ``ipos`` and ``diaginertia`` or
  ``fullinertia`` (off-diagonal terms) and ``gravcomp = body_gravcomp`` (one jaxart body per MuJoCo body: the
  links folded into a multi-joint body are massless, so their compensation has no force to act on); zero-mass
  bodies are left to MuJoCo.
* Actuators per ``joint_target_mode``: POSITION ``gainprm=[kp]``, ``biasprm=[0,−kp,−kd]`` with
  ``ctrl = q* + (kd/kp) q̇*`` (jaxart's ``kp (q* − q) + kd (q̇* − q̇)``; ``kp = 0``: a velocity actuator);
  VELOCITY ``gainprm=[kd]``, ``biasprm=[0,0,−kd]``; POSITION_VELOCITY two actuators
  (``[kp]``/``[0,−kp,0]`` and ``[kd]``/``[0,0,−kd]``); NONE and EFFORT none. BALL joints get one
  ``mjTRN_JOINTINPARENT`` actuator per axis with ``gear`` = that axis (length: the rotation vector
  of ``qpos`` projected on ``gear``; force and velocity along the parent-anchor axis, so velocity
  targets are exact; position ``ctrl`` = ``log(q_t q⁻¹) + log q`` at the step's state, so the force
  is jaxart's ``kp log(q_t q⁻¹)``, :func:`~jaxart.solvers.mujoco.state.control_to_ctrl`) and
  ``joint_effort_limit`` → actuator ``forcerange``. Drives of slide + ball FREE/DISTANCE joints
  → slide actuators and ball actuators as above (MuJoCo's free-joint transmission has no length, so no
  position servo on a free joint).
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np

from jaxart.sim.enums import GeoType as G
from jaxart.sim.enums import JointType
from jaxart.sim.validate import np_quat_to_matrix, np_transform_inverse, np_transform_mul
from jaxart.solvers.mujoco.equality import EqualityFrames, add_equalities, loop_joints
from jaxart.solvers.mujoco.filter import add_contact_pairs, collision_masks
from jaxart.solvers.mujoco.joints import add_actuators, add_joints, free_as_slides
from jaxart.solvers.mujoco.layout import LayoutRecorder
from jaxart.solvers.mujoco.loops import add_aux_bodies
from jaxart.solvers.mujoco.sensors import add_sensors
from jaxart.solvers.mujoco.shapes import add_shapes, wxyz
from jaxart.solvers.mujoco.tendons import add_distance_tendons, add_tendons

DEFAULT_OPTIONS = {"solver": "newton", "integrator": "implicitfast", "cone": "pyramidal", "iterations": 100,
                   "ls_iterations": 50, "impratio": None, "tolerance": None, "jacobian": "auto"}
_SOLVERS = {"newton": mujoco.mjtSolver.mjSOL_NEWTON, "cg": mujoco.mjtSolver.mjSOL_CG,
            "pgs": mujoco.mjtSolver.mjSOL_PGS}
_INTEGRATORS = {"euler": mujoco.mjtIntegrator.mjINT_EULER, "rk4": mujoco.mjtIntegrator.mjINT_RK4,
                "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
                "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}
_CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
_JACOBIANS = {"auto": mujoco.mjtJacobian.mjJAC_AUTO, "dense": mujoco.mjtJacobian.mjJAC_DENSE,
              "sparse": mujoco.mjtJacobian.mjJAC_SPARSE}
_IDENT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def resolve_options(**overrides) -> dict:
    """Solver options by priority: constructor argument, then Newton's defaults.

    ``jacobian`` ("auto", "dense", "sparse") is MuJoCo's option (not in Newton's table); MJX
    factors a sparse mass matrix with its own jnp LDL instead of LAPACK.

    jaxart models carry no ``model.mujoco`` custom attributes, so Newton's middle priority level
    (per-model custom attributes) is empty.

    Raises:
        ValueError: Unknown option name or value.
    """
    opts = dict(DEFAULT_OPTIONS)
    for k, v in overrides.items():
        if k not in opts:
            raise ValueError(f"SolverMuJoCo: unknown option {k!r}")
        if v is not None:
            opts[k] = v
    for key, table in (("solver", _SOLVERS), ("integrator", _INTEGRATORS), ("cone", _CONES),
                       ("jacobian", _JACOBIANS)):
        val = str(opts[key]).lower()
        if val not in table:
            raise ValueError(f"SolverMuJoCo: {key}={opts[key]!r} is not one of {sorted(table)}")
        opts[key] = val
    for key in ("iterations", "ls_iterations"):
        if int(opts[key]) < 1:
            raise ValueError(f"SolverMuJoCo: {key} must be >= 1, got {opts[key]}")
    return opts


class _Host:
    """Float64 numpy copies of the model's arrays plus its topology (host-side conversion only)."""

    def __init__(self, model) -> None:
        self.model = model
        self.topo = model.topology
        for f in ("gravity", "body_q", "body_com", "body_mass", "body_inertia", "body_gravcomp", "joint_q", "joint_X_p",
                  "joint_X_c", "joint_axis", "joint_limit_lower", "joint_limit_upper", "joint_limit_ke",
                  "joint_limit_kd", "joint_target_ke", "joint_target_kd", "joint_stiffness", "joint_rest_q",
                  "joint_damping", "joint_armature", "joint_friction", "joint_effort_limit", "joint_velocity_limit",
                  "shape_transform", "shape_scale", "shape_material_ke", "shape_material_kd", "shape_material_mu",
                  "shape_material_mu_torsional", "shape_material_mu_rolling", "shape_margin", "contact_pair_ke",
                  "contact_pair_kd", "contact_pair_mu", "contact_pair_mu_torsional", "contact_pair_mu_rolling",
                  "contact_pair_margin"):
            setattr(self, f, np.asarray(getattr(model, f), dtype=np.float64))
        t = self.topo
        self.jtype, self.parent, self.child = t.joint_type.array, t.joint_parent.array, t.joint_child.array
        self.q_start, self.qd_start, self.dof_dim = t.joint_q_start.array, t.joint_qd_start.array, t.joint_dof_dim.array
        self.mode = t.joint_target_mode.array
        self.shape_body, self.shape_type, self.shape_flags = t.shape_body.array, t.shape_type.array, t.shape_flags.array
        self.body_label, self.joint_label, self.shape_label = t.body_label, t.joint_label, t.shape_label
        self.mocap = frozenset(int(j) for j in model.mocap_joint)


def model_to_spec(model, options: dict) -> tuple[mujoco.MjSpec, LayoutRecorder]:
    """Build the ``MjSpec`` of ``model`` (see the module docstring for the mapping).

    Args:
        model: A jaxart :class:`~jaxart.Model`.
        options: Resolved options (:func:`resolve_options`).

    Returns:
        ``(spec, recorder)``; compile the spec and ``recorder.resolve`` the layout.

    Raises:
        NotImplementedError: Orphan or disabled tree joints, unsupported loop-closing joints or terms (see
            :mod:`~jaxart.solvers.mujoco.equality`), CONE shapes, BALL(-like) limits, per-axis armature or
            friction, FREE/DISTANCE linear stiffness, limits or position drives with the COM off the child anchor.
        ValueError: A plane on a moving body.
    """
    h = _Host(model)
    _check_joints(h)
    loops = loop_joints(h)
    spec = mujoco.MjSpec()
    spec.compiler.degree = False
    spec.modelname = "jaxart"
    _set_options(spec, h, options)
    rec = LayoutRecorder()
    order, children, body_joint = _tree_order(h)
    masks = _masks(h, body_joint)
    _warn_unmapped(h)
    frames = _mj_frames(h, order, body_joint)
    tops = [b for b in order if b not in body_joint or h.parent[body_joint[b]] < 0]
    builder = _BodyBuilder(spec, h, body_joint, children, frames, masks, rec)
    for b in tops:
        builder.visit(b, spec.worldbody, _IDENT)
    add_shapes(spec, spec.worldbody, h, -1, _IDENT, masks)
    for a, bb in masks.exclude_bodies:
        spec.add_exclude(bodyname1="world" if a < 0 else h.body_label[a], bodyname2=h.body_label[bb])
    add_contact_pairs(spec, h)
    if masks.uncovered_pairs:
        warnings.warn(f"SolverMuJoCo: {masks.uncovered_pairs} filtered shape pairs cannot be expressed with "
                      "contype/conaffinity/exclude and will collide in MuJoCo", stacklevel=3)
    h.aux_loops = add_aux_bodies(spec, h, EqualityFrames(h, body_joint, rec), loops, rec, options["integrator"])
    add_actuators(spec, h, rec)
    add_equalities(spec, h, body_joint, rec, loops)
    add_tendons(spec, h, body_joint, rec)
    add_distance_tendons(spec, h, EqualityFrames(h, body_joint, rec))
    add_sensors(spec, h, body_joint, rec)
    return spec, rec


def _check_joints(h: _Host) -> None:
    art = h.topo.joint_articulation.array
    enabled = h.topo.joint_enabled.array
    for j in range(h.topo.joint_count):
        what = f"SolverMuJoCo: joint {h.joint_label[j]!r}"
        if j in h.mocap and (h.parent[j] >= 0 or art[j] < 0):
            raise NotImplementedError(f"{what}: a mocap joint below a body; MuJoCo's mocap bodies are children of "
                                      "the world")
        if art[j] < 0:
            continue  # loop-closing (or orphan) joints: mujoco_equality.loop_joints
        if not enabled[j]:
            raise NotImplementedError(f"{what} is disabled; MuJoCo has no disabled joints")


def _tree_order(h: _Host):
    """Depth-first body order (children in joint order); warns when joints are not depth-first."""
    tree = [j for j in range(h.topo.joint_count) if h.topo.joint_articulation.array[j] >= 0]
    body_joint = {int(h.child[j]): j for j in tree}
    children: dict[int, list[int]] = {}
    for j in tree:
        children.setdefault(int(h.parent[j]), []).append(int(h.child[j]))
    roots = [b for b in range(h.topo.body_count) if b not in body_joint]
    order: list[int] = []
    stack = list(reversed([*children.get(-1, []), *roots]))
    while stack:
        b = stack.pop()
        order.append(b)
        stack.extend(reversed(children.get(b, [])))
    joint_order = [body_joint[b] for b in order if b in body_joint]
    if joint_order != sorted(joint_order):
        warnings.warn("SolverMuJoCo: joints are not in depth-first order; MuJoCo bodies are created depth-first "
                      f"(joint order {joint_order}), so per-body arrays are permuted", stacklevel=3)
    return order, children, body_joint


def _masks(h: _Host, body_joint: dict):
    cfp = h.topo.joint_collision_filter_parent
    keep = (lambda j: True) if cfp is None else (lambda j: bool(cfp.array[j]))
    parent_child = {(int(h.parent[j]), int(h.child[j])) for j in body_joint.values() if h.parent[j] >= 0 and keep(j)}
    return collision_masks(h.shape_body, h.shape_flags, h.topo.shape_collision_group.array,
                           h.topo.shape_collision_filter_pairs.array, parent_child)


def _warn_unmapped(h: _Host) -> None:
    vel = h.joint_velocity_limit
    if vel.size and np.any(vel < 1e6):
        warnings.warn("SolverMuJoCo: joint_velocity_limit has no MuJoCo equivalent and is ignored", stacklevel=3)
    meshes = [h.shape_label[s] for s in range(h.topo.shape_count) if int(h.shape_type[s]) == G.MESH]
    if meshes:
        warnings.warn(f"SolverMuJoCo: MuJoCo collides the convex hull of mesh shapes {meshes}", stacklevel=3)


def _set_options(spec: mujoco.MjSpec, h: _Host, o: dict) -> None:
    opt = spec.option
    opt.solver = _SOLVERS[o["solver"]]
    opt.integrator = _INTEGRATORS[o["integrator"]]
    opt.cone = _CONES[o["cone"]]
    opt.jacobian = _JACOBIANS[o["jacobian"]]
    opt.iterations = int(o["iterations"])
    opt.ls_iterations = int(o["ls_iterations"])
    if o["impratio"] is not None:
        opt.impratio = float(o["impratio"])
    if o["tolerance"] is not None:
        opt.tolerance = float(o["tolerance"])
    opt.gravity = h.gravity
    # jaxart computes parent/child filtering itself (mujoco_filter); MuJoCo's own would also filter
    # bodies welded to a parent through FIXED joints.
    opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)


def _mj_frames(h: _Host, order: list[int], body_joint: dict) -> dict[int, np.ndarray]:
    """World pose of every body's MuJoCo frame at ``joint_q = 0`` (MuJoCo free joints at their initial pose).

    The MuJoCo frame of a jointed body is its joint's child anchor (``body · joint_X_c``); bodies
    without a tree joint keep their jaxart frame and pose.
    """
    body_world: dict[int, np.ndarray] = {}
    frames: dict[int, np.ndarray] = {}
    for b in order:
        j = body_joint.get(b)
        if j is None:
            body_world[b] = frames[b] = h.body_q[b]
            continue
        p = int(h.parent[j])
        anchor = np_transform_mul(_IDENT if p < 0 else body_world[p], h.joint_X_p[j])
        if int(h.jtype[j]) in (JointType.FREE, JointType.DISTANCE) and (j in h.mocap or not free_as_slides(h, j)):
            qs = int(h.q_start[j])
            anchor = np_transform_mul(anchor, h.joint_q[qs:qs + 7])
        frames[b] = anchor
        body_world[b] = np_transform_mul(anchor, np_transform_inverse(h.joint_X_c[j]))
    return frames


class _BodyBuilder:
    """Creates MuJoCo bodies depth-first.

    Massless, shapeless links with one child whose joint is REVOLUTE/PRISMATIC/D6/FIXED (the
    intermediate links an MJCF import creates for multi-joint bodies) are folded into their child's
    MuJoCo body as extra joints — MuJoCo's multi-joint body composes joints exactly like such a
    chain, and MuJoCo rejects moving bodies without mass.
    """

    def __init__(self, spec, h, body_joint, children, frames, masks, rec) -> None:
        self.spec, self.h, self.body_joint, self.children = spec, h, body_joint, children
        self.frames, self.masks, self.rec = frames, masks, rec

    def _foldable(self, b: int) -> bool:
        h, j = self.h, self.body_joint.get(b)
        if j is None or float(h.body_mass[b]) > 0.0 or np.any(h.shape_body == b) or len(self.children.get(b, [])) != 1:
            return False
        jt = int(h.jtype[j])
        return jt in (JointType.REVOLUTE, JointType.PRISMATIC, JointType.D6) or (
            jt == JointType.FIXED and h.parent[j] >= 0)

    def visit(self, b: int, mj_parent, parent_frame: np.ndarray) -> None:
        """Add body ``b`` (and any chain folded into it) under ``mj_parent``, then its subtree."""
        h = self.h
        chain = [b]
        while self._foldable(chain[-1]):
            chain.append(self.children[chain[-1]][0])
        last = chain[-1]
        j = self.body_joint.get(last)
        frame = self.frames[last]
        rel = np_transform_mul(np_transform_inverse(parent_frame), frame)
        first_joint = self.body_joint.get(b)
        mocap = first_joint is not None and int(h.jtype[first_joint]) == JointType.FIXED and h.parent[first_joint] < 0
        if first_joint in h.mocap:
            mocap = True
            self.rec.mocap.append((h.body_label[last], int(h.q_start[first_joint]), h.joint_X_p[first_joint].copy()))
        body = mj_parent.add_body(name=h.body_label[last], pos=rel[:3], quat=wxyz(rel[3:]), mocap=bool(mocap))
        for c in chain:
            self.rec.body[c] = h.body_label[last]
            jc = self.body_joint.get(c)
            if jc is not None and jc not in h.mocap:
                anchor = np_transform_mul(np_transform_inverse(frame), self.frames[c])
                add_joints(body, h, jc, self.rec, anchor)
        offset = _IDENT if j is None else h.joint_X_c[j]
        _set_inertial(body, h, last, offset)
        add_shapes(self.spec, body, h, last, offset, self.masks)
        for c in self.children.get(last, []):
            self.visit(c, body, frame)


def _set_inertial(body, h: _Host, b: int, t: np.ndarray) -> None:
    mass = float(h.body_mass[b])
    if mass <= 0.0:
        return
    t_inv = np_transform_inverse(t)
    rot = np_quat_to_matrix(t_inv[3:])
    com = t_inv[:3] + rot @ h.body_com[b]
    inertia = rot @ h.body_inertia[b] @ rot.T
    body.explicitinertial = True
    body.mass = mass
    body.gravcomp = float(h.body_gravcomp[b])
    body.ipos = com
    off = np.array([inertia[0, 1], inertia[0, 2], inertia[1, 2]])
    diag = np.diag(inertia)
    if np.all(np.abs(off) <= 1e-12 * max(float(np.abs(diag).max()), 1e-300)):
        body.inertia = diag
    else:
        body.fullinertia = np.array([diag[0], diag[1], diag[2], off[0], off[1], off[2]])


