"""MJCF ``<equality>`` import: connect / weld / joint / tendon → jaxart equality constraints.

Reads the compiled ``MjModel`` (so ``relpose`` inferred from ``qpos0`` and classes are resolved):

* ``connect`` (body1/body2): ``EqType.CONNECT`` with ``anchor = eq_data[0:3]`` (body1 frame). MuJoCo
  holds the anchor at the body2 point where it lies at ``qpos0``, which is the imported initial
  configuration — jaxart's CONNECT rule.
* ``weld`` (body1/body2): ``EqType.WELD`` with ``anchor = eq_data[0:3]`` (body2 frame),
  ``relpose = (eq_data[3:6], eq_data[6:10] wxyz → xyzw)``, ``torquescale = eq_data[10]``.
* ``joint`` (hinge/slide): ``EqType.JOINT``. MuJoCo's polynomial acts on offsets from ``qpos0``
  (``y − y0 = Σ a_k (x − x0)^k``); jaxart's on ``joint_q`` (equal to ``qpos``), so the polynomial
  is re-expanded about zero: ``y = y0 + Σ a_k (x − x0)^k`` (:func:`~jaxart.laws.equality.offset_polycoef`). A
  joint that a multi-joint body turned into a D6 DOF is referenced as ``(joint, dof)``.
* ``tendon``: ``EqType.TENDON`` on the imported tendons, re-expanded the same way about MuJoCo's
  ``tendon_length0`` (the lengths at ``qpos0``): ``L1 = L1_0 + Σ a_k (L2 − L2_0)^k``.
* ``active`` (``eq_active0``) → ``enabled``; the name → label (with the import's prefix).

World references become ``parent_body`` (or −1) with the import's ``xform`` applied. Site-based
connect/weld and flex equalities are reported as unsupported (``solref``/``solimp`` have no jaxart counterpart
and are not reported, like the other solver settings).
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.io.mjcf.convert import IDENTITY, xyzw
from jaxart.io.mjcf.refs import MjcfRefs, element_key, is_d6_dof
from jaxart.laws.equality import offset_polycoef
from jaxart.sim.enums import EqType
from jaxart.sim.validate import np_transform_mul

_CONNECT, _WELD, _JOINT, _TENDON = (int(mujoco.mjtEq.mjEQ_CONNECT), int(mujoco.mjtEq.mjEQ_WELD),
                                    int(mujoco.mjtEq.mjEQ_JOINT), int(mujoco.mjtEq.mjEQ_TENDON))
_SCALAR_JOINTS = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


def equality_issues(m) -> list[str]:
    """Equality constraints the importer cannot represent (one line each)."""
    return [issue for i in range(m.neq) if (issue := _issue(m, i))]


def _issue(m, i: int) -> str | None:
    t = int(m.eq_type[i])
    what = f"equality {element_key(m.eq(i), i)!r}"
    if t in (_CONNECT, _WELD):
        if int(m.eq_objtype[i]) != int(mujoco.mjtObj.mjOBJ_BODY):
            return f"{what}: site-based {mujoco.mjtEq(t).name[5:].lower()} (only body-based connect/weld are imported)"
        return None
    if t == _TENDON:
        return None
    if t != _JOINT:
        return f"{what}: {mujoco.mjtEq(t).name[5:].lower()} equality constraint"
    for j in (int(m.eq_obj1id[i]), int(m.eq_obj2id[i])):
        if j >= 0 and int(m.jnt_type[j]) not in _SCALAR_JOINTS:
            return f"{what}: joint equality on the non-hinge/slide joint {m.joint(j).name or j!r}"
    return None


def add_equalities(builder, m, refs: MjcfRefs, tendons: dict[str, int]) -> dict[str, int]:
    """Add the model's supported equality constraints to ``builder`` (after bodies, joints and tendons).

    Args:
        builder: Target builder.
        m: The compiled ``MjModel``.
        refs: The import's references.
        tendons: The imported tendons (MuJoCo name or ``"#<id>"`` → tendon index).

    Returns:
        ``{MuJoCo name or "#<id>": constraint index}`` of the imported constraints.
    """
    out: dict[str, int] = {}
    for i in range(m.neq):
        if _issue(m, i):
            continue
        t, data = int(m.eq_type[i]), np.asarray(m.eq_data[i], dtype=np.float64)
        kw = dict(label=refs.label_of(m.eq(i)), enabled=bool(m.eq_active0[i]))
        what = f"equality {element_key(m.eq(i), i)!r}"
        id1, id2 = int(m.eq_obj1id[i]), int(m.eq_obj2id[i])
        if id2 < 0:  # y - y0 = a0 only
            data[1:5] = 0.0
        if t == _JOINT:
            joint1, ref1 = _coordinate(builder, m, refs, id1, what)
            joint2, ref2 = _coordinate(builder, m, refs, id2, what) if id2 >= 0 else (-1, 0.0)
            k = builder.add_equality_constraint(EqType.JOINT, joint1=joint1, joint2=joint2,
                                                polycoef=offset_polycoef(data[:5], ref1, ref2), **kw)
        elif t == _TENDON:
            ten1 = tendons[element_key(m.tendon(id1), id1)]
            ten2 = tendons[element_key(m.tendon(id2), id2)] if id2 >= 0 else -1
            ref2 = float(m.tendon_length0[id2]) if id2 >= 0 else 0.0
            k = builder.add_equality_constraint(EqType.TENDON, tendon1=ten1, tendon2=ten2,
                                                polycoef=offset_polycoef(data[:5], float(m.tendon_length0[id1]),
                                                                         ref2), **kw)
        else:
            k = _add_body_constraint(builder, t, data, refs, id1, id2, kw)
        out[element_key(m.eq(i), i)] = k
    return out


def _coordinate(builder, m, refs: MjcfRefs, mj_joint: int, what: str):
    """``(joint reference, qpos0)`` of a hinge/slide: the joint index, or ``(joint, dof)`` for a D6 DOF."""
    joint, dof = refs.joint_dof(builder, m, mj_joint, what)
    ref = (joint, dof) if is_d6_dof(m, mj_joint) else joint
    return ref, float(m.qpos0[int(m.jnt_qposadr[mj_joint])])


def _add_body_constraint(builder, t: int, data: np.ndarray, refs: MjcfRefs, id1: int, id2: int, kw: dict) -> int:
    """A body-based CONNECT or WELD."""
    b1, x1 = refs.body_of(id1, IDENTITY)
    b2, x2 = refs.body_of(id2, IDENTITY)
    if t == _CONNECT:
        return builder.add_equality_constraint(EqType.CONNECT, body1=b1, body2=b2, anchor=_point(x1, data[0:3]), **kw)
    relpose = np_transform_mul(x1, np.concatenate([data[3:6], xyzw(data[6:10])]))
    relpose = np_transform_mul(relpose, _inverse_rotation(x2))
    return builder.add_equality_constraint(EqType.WELD, body1=b1, body2=b2, anchor=_point(x2, data[0:3]),
                                           relpose=relpose, torquescale=float(data[10]), **kw)


def _point(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np_transform_mul(x, np.concatenate([p, IDENTITY[3:]]))[:3]


def _inverse_rotation(x: np.ndarray) -> np.ndarray:
    """Rotation part of ``x`` only: a weld's relpose maps body2's frame, whose origin is not moved."""
    return np.concatenate([np.zeros(3), x[3:6] * -1.0, x[6:7]])
