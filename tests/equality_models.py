"""Models shared by the equality-constraint tests (bridge and native solvers)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import jaxart
from jaxart.sim.enums import EqType
from jaxart.sim.validate import np_quat_mul, np_transform_inverse, np_transform_mul

F64 = jnp.float64
INERTIA = [0.01, 0.012, 0.008]


def point(x, p) -> np.ndarray:
    return np_transform_mul(np.asarray(x, np.float64), np.concatenate([p, [0.0, 0.0, 0.0, 1.0]]))[:3]

def chain_builder(box_on_l1=None) -> tuple[jaxart.ModelBuilder, dict]:
    """Two articulations with non-identity joint anchors (MuJoCo frames differ from body frames).

    ``box_on_l1`` (a transform ``l1 → box``) attaches the weld tests' box to ``l1`` by a FIXED tree joint.
    """
    b = jaxart.ModelBuilder()
    l1 = b.add_link(xform=((0, 0, 1.5), (0, 0, 0, 1)), mass=1.0, com=(0, 0, -0.25), inertia=INERTIA, label="l1")
    j1 = b.add_joint_revolute(-1, l1, axis=(1, 0, 0), parent_xform=((0, 0, 2), (0, 0, 0, 1)),
                              child_xform=((0, 0, 0.5), (0, 0, 0, 1)), label="j1")
    q = np.array([0.0, np.sin(0.2), 0.0, np.cos(0.2)])
    l2 = b.add_link(xform=((0, 0, 1.0), (0, 0, 0, 1)), mass=1.0, com=(0, 0, -0.25), inertia=INERTIA, label="l2")
    j2 = b.add_joint_revolute(l1, l2, axis=(0, 1, 0), child_xform=((0.1, 0, 0.5), q), parent_xform=((0.1, 0, 0), q),
                              label="j2")
    joints = [j1, j2]
    if box_on_l1 is not None:
        box = b.add_link(mass=0.5, com=(0.0, 0.05, 0.0), inertia=INERTIA, label="box")
        joints.append(b.add_joint_fixed(l1, box, parent_xform=box_on_l1, label="fix"))
    b.add_articulation(joints)
    l3 = b.add_link(xform=((0.5, 0, 1.0), (0, 0, 0, 1)), mass=1.0, com=(0, 0, -0.25), inertia=INERTIA, label="l3")
    j3 = b.add_joint_prismatic(-1, l3, axis=(0, 0, 1), parent_xform=((0.5, 0, 1.2), (0, 0, 0, 1)),
                               child_xform=((0, 0, 0.2), (0, 0, 0, 1)), label="j3")
    b.add_articulation([j3])
    return b, dict(l1=l1, l2=l2, l3=l3, j1=j1, j2=j2, j3=j3)

def all_types_builder() -> tuple[jaxart.ModelBuilder, dict]:
    b, ix = chain_builder()
    b.joint_q[:] = [0.3, -0.2, 0.05]  # CONNECT's body2 point is taken at this initial configuration
    ix["con"] = b.add_equality_constraint_connect(ix["l2"], -1, anchor=(0.05, 0.02, -0.5), label="con")
    ix["weld"] = b.add_equality_constraint_weld(
        ix["l1"], ix["l3"], anchor=(0.1, 0.0, 0.05), torquescale=0.5, label="weld",
        relpose=((0.4, 0.1, -0.3), (0.1, 0.2, 0.0, 0.97)))
    ix["joint"] = b.add_equality_constraint_joint(ix["j2"], ix["j1"], polycoef=[0.1, -1.0, 0.3], label="joint")
    ix["mimic"] = b.add_constraint_mimic(ix["j3"], ix["j1"], coef0=0.2, coef1=0.5, label="mimic")
    return b, ix

def residual_norms(model, body_q, joint_q) -> list[float]:
    """|residual| of every equality then mimic constraint from jaxart's documented semantics."""
    bq0 = np.asarray(jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state()).body_q)
    qs = model.joint_q_start

    def pose(b, bq):
        return np.array([0, 0, 0, 0, 0, 0, 1.0]) if b < 0 else np.asarray(bq[b])

    out = []
    for k in range(model.equality_constraint_count):
        t, b1, b2 = (int(model.equality_constraint_type[k]), int(model.equality_constraint_body1[k]),
                     int(model.equality_constraint_body2[k]))
        a = np.asarray(model.equality_constraint_anchor[k])
        if t == EqType.CONNECT:
            p2 = point(np_transform_inverse(pose(b2, bq0)), point(pose(b1, bq0), a))
            out.append(np.linalg.norm(point(pose(b1, body_q), a) - point(pose(b2, body_q), p2)))
        elif t == EqType.WELD:
            rp = np.asarray(model.equality_constraint_relpose[k])
            out.append(np.linalg.norm(point(pose(b1, body_q), rp[:3]) - point(pose(b2, body_q), a)))
            q1r = np_quat_mul(pose(b1, body_q)[3:], rp[3:])
            err = np_quat_mul(np.array([-q1r[0], -q1r[1], -q1r[2], q1r[3]]), pose(b2, body_q)[3:])
            out.append(float(model.equality_constraint_torquescale[k]) * np.linalg.norm(err[:3]))
        else:
            j1, j2 = int(model.equality_constraint_joint1[k]), int(model.equality_constraint_joint2[k])
            x = joint_q[qs[j2]] if j2 >= 0 else 0.0
            y = np.polynomial.polynomial.polyval(x, np.asarray(model.equality_constraint_polycoef[k]))
            out.append(abs(joint_q[qs[j1]] - y))
    for k in range(model.constraint_mimic_count):
        j0, j1 = int(model.constraint_mimic_joint0[k]), int(model.constraint_mimic_joint1[k])
        out.append(abs(joint_q[qs[j0]] - float(model.constraint_mimic_coef0[k])
                       - float(model.constraint_mimic_coef1[k]) * joint_q[qs[j1]]))
    return out

def fourbar_builder(loop: str):
    """Parallelogram A(0,0,1)–B(0,0,.5)–C(0,.5,.5)–D(0,.5,1) in the y-z plane, closed at C by ``loop``."""
    b = jaxart.ModelBuilder()
    ax = (1.0, 0.0, 0.0)
    crank = b.add_link(xform=((0, 0, 1.0), (0, 0, 0, 1)), mass=1.0, com=(0, 0, -0.25), inertia=INERTIA, label="crank")
    j0 = b.add_joint_revolute(-1, crank, axis=ax, parent_xform=((0, 0, 1.0), (0, 0, 0, 1)), label="j0")
    coupler = b.add_link(xform=((0, 0, 0.5), (0, 0, 0, 1)), mass=1.0, com=(0, 0.25, 0), inertia=INERTIA,
                         label="coupler")
    j1 = b.add_joint_revolute(crank, coupler, axis=ax, parent_xform=((0, 0, -0.5), (0, 0, 0, 1)), label="j1")
    rocker = b.add_link(xform=((0, 0.5, 1.0), (0, 0, 0, 1)), mass=1.0, com=(0, 0, -0.25), inertia=INERTIA,
                        label="rocker")
    j2 = b.add_joint_revolute(-1, rocker, axis=ax, parent_xform=((0, 0.5, 1.0), (0, 0, 0, 1)), label="j2")
    b.add_articulation([j0, j1])
    b.add_articulation([j2])
    x_p, x_c = ((0, 0.5, 0), (0, 0, 0, 1)), ((0, 0, -0.5), (0, 0, 0, 1))
    if loop == "revolute":
        lj = b.add_joint_revolute(coupler, rocker, axis=ax, parent_xform=x_p, child_xform=x_c, label="loop")
    elif loop == "ball":
        lj = b.add_joint_ball(coupler, rocker, parent_xform=x_p, child_xform=x_c, label="loop")
    elif loop == "fixed":
        lj = b.add_joint_fixed(coupler, rocker, parent_xform=x_p, child_xform=x_c, label="loop")
    elif loop == "d6":  # one rotation about the hinge axis and one about y (a universal joint), one slide along z
        lj = b.add_joint_d6(coupler, rocker, linear_axes=[(0, 0, 1)], angular_axes=[ax, (0, 1, 0)], parent_xform=x_p,
                            child_xform=x_c, label="loop")
    else:
        lj = b.add_joint_prismatic(coupler, rocker, axis=(0, 0, 1), parent_xform=x_p, child_xform=x_c, label="loop")
    return b, lj
