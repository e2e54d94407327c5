"""Equality constraints of the MuJoCo bridge.

The "Equality constraints" table of Newton's MuJoCo-integration mapping tables.

Mapping (jaxart → MuJoCo ``mjEQ_*``; anchors and poses are re-expressed in MuJoCo body frames,
which for a body with a tree joint is its child anchor ``body · joint_X_c``):

* ``EqType.CONNECT`` → ``mjEQ_CONNECT``: ``data[0:3]`` = anchor in body1. MuJoCo's compiler puts
  the body2 point (``data[3:6]``) where the anchor lies at ``qpos0``; the bridge's ``qpos0`` is the
  ``joint_q = 0`` pose, so after compiling ``data[3:6]`` is overwritten with the body2 point at the
  model's initial configuration (FK of ``Model.joint_q``) — jaxart's CONNECT rule. (A saved MJCF
  re-derives it from ``qpos0``.)
* ``EqType.WELD`` → ``mjEQ_WELD``: ``data[0:3]`` anchor in body2, ``data[3:6]``/``data[6:10]``
  relpose position / quaternion (wxyz), ``data[10]`` torquescale.
* ``EqType.JOINT`` → ``mjEQ_JOINT``: ``data[0:5]`` = polycoef (the bridge's hinge/slide ``qpos0``
  is 0, so MuJoCo's offsets from ``qpos0`` equal jaxart's absolute coordinates); a D6 DOF names the DOF's own
  MuJoCo joint.
* ``EqType.TENDON`` → ``mjEQ_TENDON`` on the tendons of the same labels: MuJoCo's polynomial acts on the
  offsets from ``tendon_length0`` (the lengths at the bridge's ``qpos0``), so after compiling ``data[0:5]`` is
  set to jaxart's polycoef re-expanded about those lengths (:func:`~jaxart.laws.equality.offset_polycoef`).
* Mimic → ``mjEQ_JOINT`` (follower = joint1, leader = joint2) with ``data[0:2] = (coef0, coef1)``.
* ``enabled`` → ``eq_active0`` at conversion time, and at run time ``d.eq_active`` is set from the traced
  ``Model.equality_constraint_enabled`` / ``Model.constraint_mimic_enabled`` in every step
  (:func:`eq_active`; the layout records which MuJoCo row comes from which constraint), so
  :func:`jaxart.sim.equality.set_constraints_enabled` switches rows under ``jit`` without retracing. A
  constraint disabled at conversion is still emitted (inactive) so it can be enabled later. Names are
  the constraint labels.
* Loop-closing joints (outside every articulation, child reachable through the tree; Newton's
  mapping): FIXED → one WELD, REVOLUTE-like (0 linear + 1 angular DOF) → two CONNECTs 0.05 m either
  side of the anchor along the hinge axis, BALL-like (0 + 3) → one CONNECT; ``joint_enabled`` →
  ``eq_active0`` (static: loop rows ignore the run-time flags). Both points of each row are set exactly
  from ``joint_X_p``/``joint_X_c``. Drives on one-DOF and BALL loop joints become site-transmission actuators
  (:mod:`jaxart.solvers.mujoco.loops`); loop PRISMATIC / D6 joints, REVOLUTE / BALL-like ones with limits or
  passive terms and driven BALL-like ones get an auxiliary body welded to the child (same module). A loop FREE
  joint constrains nothing and maps to nothing; a loop DISTANCE joint maps to its distance-limit tendon
  (:func:`jaxart.solvers.mujoco.tendons.add_distance_tendons`); their damping maps to rate actuators
  (:mod:`jaxart.solvers.mujoco.loop_rates`), drives, per-DOF limits, armature, springs or friction on either
  raise ``NotImplementedError`` (:func:`~jaxart.solvers.mujoco.loops.check_loop_drive`). ``Control.joint_f`` on
  loop joints without MuJoCo DOFs is applied as body wrenches (:mod:`jaxart.solvers.mujoco.loop_forces`).
  Other loop-joint shapes (e.g. a D6 with no DOF) raise ``NotImplementedError`` (Newton warns and skips them). The
  coordinates of loop joints without an auxiliary body are not MuJoCo coordinates: ``step`` leaves them unchanged.
  JOINT equalities, mimics and fixed tendons may name a loop joint with an auxiliary body (they act on its first
  auxiliary joint).
"""

from __future__ import annotations

import jax
import mujoco
import numpy as np

from jaxart.laws.equality import offset_polycoef
from jaxart.sim.enums import EqType, JointType
from jaxart.sim.validate import np_quat_mul, np_quat_rotate, np_transform_inverse, np_transform_mul
from jaxart.solvers.mujoco.joints import mj_joint_names, model_initial_body_q
from jaxart.solvers.mujoco.loops import add_loop_drives, check_loop_drive, needs_aux

HINGE_CONNECT_HALF_SPAN = 0.05  # [m] Newton's distance of a revolute loop joint's CONNECT points from the anchor
_IDENT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def loop_joints(h) -> list[int]:
    """Loop-closing joints: outside every articulation, child body reachable through tree joints.

    Raises:
        NotImplementedError: Orphan joints (child not in the tree), unsupported loop-joint types,
            drives or other terms on loop joints that have no MuJoCo coordinates (FREE, DISTANCE).
    """
    art = h.topo.joint_articulation.array
    tree_children = {int(h.child[j]) for j in range(h.topo.joint_count) if art[j] >= 0}
    out = []
    for j in np.flatnonzero(art < 0):
        what = f"SolverMuJoCo: joint {h.joint_label[j]!r}"
        if int(h.child[j]) not in tree_children:
            raise NotImplementedError(f"{what} is an orphan (outside every articulation, child not reachable "
                                      "through articulated joints); add it to an articulation")
        nl, na = (int(x) for x in h.dof_dim[j])
        jt = int(h.jtype[j])
        no_dof_rule = jt in (JointType.FIXED, JointType.FREE, JointType.DISTANCE)
        if not (no_dof_rule or (nl, na) in ((0, 1), (0, 3)) or needs_aux(h, int(j))):
            raise NotImplementedError(f"{what}: loop-closing {JointType(jt).name} joints with {nl} linear + {na} "
                                      "angular DOFs have no MuJoCo mapping (FIXED → WELD, revolute → 2 CONNECT, "
                                      "ball → CONNECT, prismatic / D6 → auxiliary body + WELD)")
        check_loop_drive(h, int(j))
        out.append(int(j))
    return out


class EqualityFrames:
    """MuJoCo body name and frame offset (jaxart body frame → MuJoCo frame) of every jaxart body."""

    def __init__(self, h, body_joint: dict, rec) -> None:
        self.h, self.body_joint, self.rec = h, body_joint, rec

    def name(self, b: int, what: str) -> str:
        if b < 0:
            return "world"
        name = self.rec.body[b]
        if name != self.h.body_label[b]:
            raise NotImplementedError(f"{what}: body {self.h.body_label[b]!r} is a massless link folded into MuJoCo "
                                      f"body {name!r}; constraints on folded links are not mapped")
        return name

    def offset(self, b: int) -> np.ndarray:
        j = self.body_joint.get(b) if b >= 0 else None
        return _IDENT if j is None else self.h.joint_X_c[j]

    def point(self, b: int, p: np.ndarray) -> np.ndarray:
        """A point given in jaxart body ``b``'s frame, in ``b``'s MuJoCo frame."""
        return _apply(np_transform_inverse(self.offset(b)), p)


def add_equalities(spec: mujoco.MjSpec, h, body_joint: dict, rec, loops: list[int]) -> None:
    """Add equality, mimic and loop-joint constraints to ``spec``; record post-compile ``data[3:6]`` values.

    Args:
        spec: The spec (bodies and joints already added).
        h: The converter's host copy of the model (``mujoco_convert._Host``).
        body_joint: ``{body: tree joint}``.
        rec: The layout recorder (``rec.body`` filled); ``rec.eq_anchor2`` receives
            ``(equality name, body2 point)`` pairs for :func:`apply_equality_data`.
        loops: Loop-closing joints (:func:`loop_joints`).
    """
    fr = EqualityFrames(h, body_joint, rec)
    eq = h.model.equality
    names: set[str] = set()
    body_q = model_initial_body_q(h.model) if np.any(eq.equality_constraint_type.array == EqType.CONNECT) else None
    for k in range(eq.equality_constraint_count):
        name = _unique(eq.equality_constraint_label[k], names)
        _add_constraint(spec, h, fr, k, name, body_q, rec)
        rec.eq_src.append((name, 0, k))
    for k in range(eq.constraint_mimic_count):
        name = _unique(eq.constraint_mimic_label[k], names)
        rec.eq_src.append((name, 1, k))
        e = spec.add_equality(name=name, type=mujoco.mjtEq.mjEQ_JOINT)
        e.objtype = mujoco.mjtObj.mjOBJ_JOINT
        what = f"SolverMuJoCo: mimic constraint {eq.constraint_mimic_label[k]!r}"
        e.name1 = mj_joint(h, int(eq.constraint_mimic_joint0.array[k]), what)
        e.name2 = mj_joint(h, int(eq.constraint_mimic_joint1.array[k]), what)
        e.data = _data(e, [float(h.model.constraint_mimic_coef0[k]), float(h.model.constraint_mimic_coef1[k])])
        e.active = bool(enabled_flags(h.model, "constraint_mimic_enabled")[k])
    for j in loops:
        _add_loop_joint(spec, h, fr, j, names, rec)
    add_loop_drives(spec, h, fr, loops, rec)


def enabled_flags(model, name: str) -> np.ndarray:
    """The model's ``enabled`` flags ``name`` as a numpy bool array (read at conversion time: ``eq_active0``).

    Raises:
        TypeError: The flags are traced (the bridge builds its ``MjModel`` from concrete values).
    """
    try:
        return np.asarray(jax.device_get(getattr(model, name))) > 0.5
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError) as err:
        raise TypeError(f"SolverMuJoCo: {name} is traced; build the solver from a concrete model (the flags become "
                        "MuJoCo's eq_active0 at conversion time)") from err


def eq_active(layout, model, base):
    """MJX's ``eq_active`` from the model's traced ``enabled`` flags (jittable; no retrace when they change).

    Args:
        layout: The bridge's :class:`~jaxart.solvers.mujoco.layout.MjLayout` (``eq_row``/``eq_kind``/``eq_src``).
        model: The jaxart model (``equality_constraint_enabled``, ``constraint_mimic_enabled``).
        base: ``(neq,)`` ``eq_active`` of the MuJoCo model (``eq_active0``; loop-joint rows keep it).

    Returns:
        ``(neq,)`` flags in ``base``'s dtype.
    """
    import jax.numpy as jnp

    if not layout.eq_row.size:
        return base
    flags = [jnp.asarray(getattr(model, f)).reshape(-1) > 0.5
             for f in ("equality_constraint_enabled", "constraint_mimic_enabled")]
    both = jnp.concatenate([flags[0], flags[1]])
    offset = np.where(layout.eq_kind == 0, 0, flags[0].shape[0])
    return base.at[layout.eq_row].set(both[layout.eq_src + offset].astype(base.dtype))


def apply_equality_data(mj_model: mujoco.MjModel, rec) -> None:
    """Overwrite the compiler's CONNECT body2 points (``eq_data[3:6]``) with the recorded ones, and write the
    TENDON polynomials as offsets from the compiled ``tendon_length0``."""
    for name, p2 in getattr(rec, "eq_anchor2", []):
        i = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_EQUALITY, name)
        mj_model.eq_data[i, 3:6] = p2
    for name, coef in getattr(rec, "eq_tendon", []):
        i = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_EQUALITY, name)
        t1, t2 = int(mj_model.eq_obj1id[i]), int(mj_model.eq_obj2id[i])
        l2 = float(mj_model.tendon_length0[t2]) if t2 >= 0 else 0.0
        mj_model.eq_data[i, 0:5] = offset_polycoef(coef, -float(mj_model.tendon_length0[t1]), -l2)


def _add_constraint(spec, h, fr: EqualityFrames, k: int, name: str, body_q, rec) -> None:
    eq, m = h.model.equality, h.model
    t = int(eq.equality_constraint_type.array[k])
    what = f"SolverMuJoCo: equality constraint {eq.equality_constraint_label[k]!r}"
    active = bool(enabled_flags(m, "equality_constraint_enabled")[k])
    if t == EqType.JOINT:
        e = spec.add_equality(name=name, type=mujoco.mjtEq.mjEQ_JOINT, objtype=mujoco.mjtObj.mjOBJ_JOINT)
        j1, j2 = int(eq.equality_constraint_joint1.array[k]), int(eq.equality_constraint_joint2.array[k])
        e.name1 = mj_joint(h, j1, what, int(eq.equality_constraint_dof1.array[k]))
        if j2 >= 0:
            e.name2 = mj_joint(h, j2, what, int(eq.equality_constraint_dof2.array[k]))
        e.data = _data(e, np.asarray(m.equality_constraint_polycoef[k], np.float64))
        e.active = active
        return
    if t == EqType.TENDON:
        e = spec.add_equality(name=name, type=mujoco.mjtEq.mjEQ_TENDON, objtype=mujoco.mjtObj.mjOBJ_TENDON)
        t1, t2 = int(eq.equality_constraint_tendon1.array[k]), int(eq.equality_constraint_tendon2.array[k])
        e.name1 = m.tendon.tendon_label[t1]
        if t2 >= 0:
            e.name2 = m.tendon.tendon_label[t2]
        rec.eq_tendon.append((name, np.asarray(m.equality_constraint_polycoef[k], np.float64)))
        e.active = active
        return
    b1, b2 = int(eq.equality_constraint_body1.array[k]), int(eq.equality_constraint_body2.array[k])
    anchor = np.asarray(m.equality_constraint_anchor[k], np.float64)
    data = np.zeros(11)
    if t == EqType.CONNECT:
        data[0:3] = fr.point(b1, anchor)
        x1 = _IDENT if b1 < 0 else body_q[b1]
        x2 = _IDENT if b2 < 0 else body_q[b2]
        p2 = _apply(np_transform_inverse(x2), _apply(x1, anchor))
        rec.eq_anchor2.append((name, fr.point(b2, p2)))
        kind = mujoco.mjtEq.mjEQ_CONNECT
    else:
        relpose = np.asarray(m.equality_constraint_relpose[k], np.float64)
        data[0:3] = fr.point(b2, anchor)
        data[3:6] = fr.point(b1, relpose[:3])
        o1, o2 = fr.offset(b1), fr.offset(b2)
        q = np_quat_mul(np_quat_mul(_conj(o1[3:]), relpose[3:] / np.linalg.norm(relpose[3:])), o2[3:])
        data[6:10] = [q[3], q[0], q[1], q[2]]
        data[10] = float(m.equality_constraint_torquescale[k])
        kind = mujoco.mjtEq.mjEQ_WELD
    e = spec.add_equality(name=name, type=kind, objtype=mujoco.mjtObj.mjOBJ_BODY)
    e.name1, e.name2 = fr.name(b1, what), fr.name(b2, what)
    e.data = _data(e, data)
    e.active = active


def _add_loop_joint(spec, h, fr: EqualityFrames, j: int, names: set[str], rec) -> None:
    what = f"SolverMuJoCo: loop-closing joint {h.joint_label[j]!r}"
    p, c = int(h.parent[j]), int(h.child[j])
    x_p, x_c = h.joint_X_p[j], h.joint_X_c[j]
    active = bool(h.topo.joint_enabled.array[j])
    aux = int(j) in set(getattr(h, "aux_loops", ()))
    if int(h.jtype[j]) in (JointType.FREE, JointType.DISTANCE):
        return  # FREE: no constraint; DISTANCE: its limits are a tendon (mujoco.tendons.add_distance_tendons)
    if int(h.jtype[j]) == JointType.FIXED or aux:
        e = spec.add_equality(name=_unique(f"{h.joint_label[j]}__weld", names), type=mujoco.mjtEq.mjEQ_WELD,
                              objtype=mujoco.mjtObj.mjOBJ_BODY)
        # anchors in the two MuJoCo frames; an auxiliary body's frame is the parent anchor itself
        a1 = _IDENT if aux else np_transform_mul(np_transform_inverse(fr.offset(p)), x_p)
        a2 = np_transform_mul(np_transform_inverse(fr.offset(c)), x_c)
        e.name1, e.name2 = (f"{h.joint_label[j]}__aux" if aux else fr.name(p, what)), fr.name(c, what)
        q = np_quat_mul(a1[3:], _conj(a2[3:]))
        e.data = _data(e, np.concatenate([a2[:3], a1[:3], [q[3], q[0], q[1], q[2]], [1.0]]))
        e.active = active
        return
    if int(h.dof_dim[j, 1]) == 1:
        axis = h.joint_axis[int(h.qd_start[j])]
        axis = axis / np.linalg.norm(axis)
        span = HINGE_CONNECT_HALF_SPAN
        pairs = [(x_p[:3] + s * span * np_quat_rotate(x_p[3:], axis),
                  x_c[:3] + s * span * np_quat_rotate(x_c[3:], axis)) for s in (-1.0, 1.0)]
    else:
        pairs = [(x_p[:3], x_c[:3])]
    for k, (a1, a2) in enumerate(pairs):
        name = _unique(f"{h.joint_label[j]}__connect{k if len(pairs) > 1 else ''}", names)
        e = spec.add_equality(name=name, type=mujoco.mjtEq.mjEQ_CONNECT, objtype=mujoco.mjtObj.mjOBJ_BODY)
        e.name1, e.name2 = fr.name(p, what), fr.name(c, what)
        e.data = _data(e, fr.point(p, a1))
        e.active = active
        rec.eq_anchor2.append((name, fr.point(c, a2)))


def mj_joint(h, j: int, what: str, dof: int = 0) -> str:
    """MuJoCo name of the MuJoCo joint of DOF ``dof`` (the first by default) of joint ``j``: a tree joint or a loop
    joint with an auxiliary body; other loop-closing joints have no MuJoCo joint."""
    if h.topo.joint_articulation.array[j] < 0 and int(j) not in set(getattr(h, "aux_loops", ())):
        raise NotImplementedError(f"{what}: joint {h.joint_label[j]!r} is a loop-closing joint without an auxiliary "
                                  "body and has no MuJoCo joint to constrain")
    return mj_joint_names(h, j)[dof]


def _data(e, values) -> np.ndarray:
    """``values`` padded with zeros to MuJoCo's ``eq_data`` length."""
    d = np.zeros(np.asarray(e.data).shape)
    d[: len(values)] = values
    return d


def _unique(name: str, names: set[str]) -> str:
    base, k = name, 1
    while name in names:
        name, k = f"{base}__{k}", k + 1
    names.add(name)
    return name


def _apply(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np_transform_mul(t, np.concatenate([p, _IDENT[3:]]))[:3]


def _conj(q: np.ndarray) -> np.ndarray:
    return np.array([-q[0], -q[1], -q[2], q[3]])


def keep_unmapped(layout, joint_q, joint_qd, state):
    """Coordinates/DOFs of loop-closing joints (no MuJoCo coordinates) keep their values from ``state``.

    Args:
        layout: The static :class:`~jaxart.solvers.mujoco.layout.MjLayout`.
        joint_q, joint_qd: Coordinates/DOFs mapped back from MuJoCo (zeros where unmapped).
        state: The state before the step.

    Returns:
        ``(joint_q, joint_qd)``.
    """
    import jax.numpy as jnp

    q_mapped = np.zeros(joint_q.shape[-1], bool)
    for idx in (layout.q_src, layout.ball_q_src, layout.free_q_src):
        q_mapped[np.asarray(idx, np.int64).reshape(-1)] = True
    d_mapped = np.zeros(joint_qd.shape[-1], bool)
    for idx in (layout.v_src, layout.ball_v_src, layout.free_v_src):
        d_mapped[np.asarray(idx, np.int64).reshape(-1)] = True
    if q_mapped.all() and d_mapped.all():
        return joint_q, joint_qd
    return (jnp.where(q_mapped, joint_q, state.joint_q.astype(joint_q.dtype)),
            jnp.where(d_mapped, joint_qd, state.joint_qd.astype(joint_qd.dtype)))
