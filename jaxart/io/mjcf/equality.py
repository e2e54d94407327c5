"""MJCF ``<equality>`` import: connect / weld / joint → jaxart equality constraints.

Reads the compiled ``MjModel`` (so ``relpose`` inferred from ``qpos0`` and classes are resolved):

* ``connect`` (body1/body2): ``EqType.CONNECT`` with ``anchor = eq_data[0:3]`` (body1 frame). MuJoCo
  holds the anchor at the body2 point where it lies at ``qpos0``, which is the imported initial
  configuration — jaxart's CONNECT rule.
* ``weld`` (body1/body2): ``EqType.WELD`` with ``anchor = eq_data[0:3]`` (body2 frame),
  ``relpose = (eq_data[3:6], eq_data[6:10] wxyz → xyzw)``, ``torquescale = eq_data[10]``.
* ``joint`` (hinge/slide): ``EqType.JOINT``. MuJoCo's polynomial acts on offsets from ``qpos0``
  (``y − y0 = Σ a_k (x − x0)^k``); jaxart's on ``joint_q`` (equal to ``qpos``), so the polynomial
  is re-expanded about zero: ``y = y0 + Σ a_k (x − x0)^k``.
* ``active`` (``eq_active0``) → ``enabled``; the name → label (with the import's prefix).

World references become ``parent_body`` (or −1) with the import's ``xform`` applied. Site-based
connect/weld, tendon/flex/distance equalities, and joint equalities on joints that a
multi-joint body turned into a D6 DOF are reported as unsupported (``solref``/``solimp`` have no
jaxart counterpart and are not reported, like the other solver settings).
"""

from __future__ import annotations

import mujoco
import numpy as np

from jaxart.io.mjcf.convert import IDENTITY, xyzw
from jaxart.io.mjcf.refs import MjcfRefs, element_key, is_d6_dof
from jaxart.sim.enums import EqType
from jaxart.sim.validate import np_transform_mul

_CONNECT, _WELD, _JOINT = (int(mujoco.mjtEq.mjEQ_CONNECT), int(mujoco.mjtEq.mjEQ_WELD),
                           int(mujoco.mjtEq.mjEQ_JOINT))
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
    if t != _JOINT:
        return f"{what}: {mujoco.mjtEq(t).name[5:].lower()} equality constraint"
    for j in (int(m.eq_obj1id[i]), int(m.eq_obj2id[i])):
        if j < 0:
            continue
        if int(m.jnt_type[j]) not in _SCALAR_JOINTS:
            return f"{what}: joint equality on the non-hinge/slide joint {m.joint(j).name or j!r}"
        if is_d6_dof(m, j):
            return (f"{what}: joint {m.joint(j).name or j!r} is imported as one DOF of a D6 joint (jaxart joint "
                    "equalities need scalar joints)")
    return None


def add_equalities(builder, m, refs: MjcfRefs) -> dict[str, int]:
    """Add the model's supported equality constraints to ``builder`` (after bodies and joints).

    Args:
        builder: Target builder.
        m: The compiled ``MjModel``.
        refs: The import's references.

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
        if t == _JOINT:
            joint1, ref1 = refs.scalar_joint(builder, m, int(m.eq_obj1id[i]), what)
            joint2, ref2 = (-1, 0.0)
            if m.eq_obj2id[i] >= 0:
                joint2, ref2 = refs.scalar_joint(builder, m, int(m.eq_obj2id[i]), what)
            else:  # y - y0 = a0 only
                data[1:5] = 0.0
            k = builder.add_equality_constraint(EqType.JOINT, joint1=joint1, joint2=joint2,
                                                polycoef=_absolute_polycoef(data[:5], ref1, ref2), **kw)
        else:
            b1, x1 = refs.body_of(int(m.eq_obj1id[i]), IDENTITY)
            b2, x2 = refs.body_of(int(m.eq_obj2id[i]), IDENTITY)
            if t == _CONNECT:
                k = builder.add_equality_constraint(EqType.CONNECT, body1=b1, body2=b2,
                                                    anchor=_point(x1, data[0:3]), **kw)
            else:
                relpose = np_transform_mul(x1, np.concatenate([data[3:6], xyzw(data[6:10])]))
                relpose = np_transform_mul(relpose, _inverse_rotation(x2))
                k = builder.add_equality_constraint(EqType.WELD, body1=b1, body2=b2, anchor=_point(x2, data[0:3]),
                                                    relpose=relpose, torquescale=float(data[10]), **kw)
        out[element_key(m.eq(i), i)] = k
    return out


def _point(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np_transform_mul(x, np.concatenate([p, IDENTITY[3:]]))[:3]


def _inverse_rotation(x: np.ndarray) -> np.ndarray:
    """Rotation part of ``x`` only: a weld's relpose maps body2's frame, whose origin is not moved."""
    return np.concatenate([np.zeros(3), x[3:6] * -1.0, x[6:7]])


def _absolute_polycoef(coef: np.ndarray, ref1: float, ref2: float) -> np.ndarray:
    """Coefficients of ``y = ref1 + Σ coef_k (x − ref2)^k`` as a polynomial in ``x`` (5 terms)."""
    poly = np.polynomial.Polynomial(coef)(np.polynomial.Polynomial([-ref2, 1.0]))
    out = np.zeros(5)
    out[: len(poly.coef)] = poly.coef[:5]
    out[0] += ref1
    return out
