"""Generalized coordinates of the XPBD step's end poses inside its lane kernel.

The same maths as :func:`jaxart.eval_ik` (``ik_all`` plus its default write masks) in SoA lane form
(:mod:`maximal_xpbd_soa`), so the step does not leave the batch-minor layout for IK: joint frames
and angular coordinates come from the kernel's own joint code (same formulas as ``ik_all``'s),
and the coordinate write-back is a static gather instead of ``.at[].set`` scatters.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxart.math import inv3
from jaxart.math.small import matmul
from jaxart.sim.enums import BodyFlags
from jaxart.solvers import maximal_xpbd_soa as s
from jaxart.solvers.maximal_xpbd_joint_soa import angular_coordinates


class IKStatic(NamedTuple):
    """Static (numpy) data of the tree joints (ordered as ``schedule.tree_joint``)."""

    tj: np.ndarray  # (T,) joint index
    is_com: np.ndarray  # (T,) velocity reference at the child COM (FREE/DISTANCE)
    is_quat: np.ndarray  # (T,)
    n_ang: np.ndarray  # (T,)
    q_src: np.ndarray  # (nq,) row of the candidate stack written to each coordinate
    qd_src: np.ndarray  # (nd,)
    q_upd: np.ndarray  # (nq,) bool write mask
    qd_upd: np.ndarray  # (nd,)


def ik_static(model) -> IKStatic:
    """Static tables of :func:`ik_lanes` (candidate stacks: ``[lin 3T, ang 3T, quat 4T, input]``)."""
    sch = model.schedule
    t = len(sch.tree_joint.array)
    nq, nd = model.joint_coord_count, model.joint_dof_count
    q_src = 10 * t + np.arange(nq)
    for k, idx in enumerate([sch.lin_q.array, sch.ang_q.array, sch.quat_q.array]):
        base = (0, 3 * t, 6 * t)[k]
        width = idx.shape[1]
        for j in range(t):
            for c in range(width):
                if idx[j, c] < nq:
                    q_src[idx[j, c]] = base + c * t + j
    qd_src = 6 * t + np.arange(nd)
    for k, idx in enumerate([sch.lin_qd.array, sch.ang_qd.array]):
        for j in range(t):
            for c in range(3):
                if idx[j, c] < nd:
                    qd_src[idx[j, c]] = 3 * k * t + c * t + j
    topo = model.topology  # eval_ik's default write masks: joints of an articulation (any body flags)
    ok = (topo.joint_articulation.array >= 0) & (
        (topo.body_flags.array[topo.joint_child.array] & int(BodyFlags.ALL)) != 0)
    q_upd = ok[np.repeat(np.arange(topo.joint_count), np.diff(topo.joint_q_start.array))]
    qd_upd = ok[np.repeat(np.arange(topo.joint_count), np.diff(topo.joint_qd_start.array))]
    return IKStatic(sch.tree_joint.array.astype(np.int32), sch.is_com_ref.array.astype(bool),
                    sch.is_quat.array.astype(bool), sch.n_ang.array.astype(np.int32), q_src.astype(np.int32),
                    qd_src.astype(np.int32), np.asarray(q_upd), np.asarray(qd_upd))


def ik_inputs(model, dtype) -> dict:
    """Model-only IK constants: tree-joint frames, axes and the inverse Gram matrix of the linear axes."""
    sch = model.schedule
    tj = sch.tree_joint.array
    ax = jnp.concatenate([model.joint_axis, jnp.zeros((1, 3), model.joint_axis.dtype)], 0).astype(dtype)
    lin_axes, ang_axes = ax[sch.lin_qd.array], ax[sch.ang_qd.array]
    pad = jnp.asarray(np.arange(3)[None, :] >= sch.n_lin.array[:, None], dtype)
    gram = matmul(lin_axes, jnp.swapaxes(lin_axes, -1, -2)) + pad[:, :, None] * jnp.eye(3, dtype=dtype)
    return {"X_p": model.joint_X_p[tj].astype(dtype), "X_c": model.joint_X_c[tj].astype(dtype),
            "lin_axes": lin_axes, "ang_axes": ang_axes, "g_inv": inv3(gram)}


def _tinv(t):
    qi = s.qconj(t[1])
    return s.neg(s.qrot(qi, t[0])), qi


def _ik_frames(ik: IKStatic, par, chi, c, pose, twist, com):
    """Tree-joint transforms ``x_j`` and parent-anchor velocities ``(v_p, w_p)`` (``ik_all``)."""
    com_w = s.add(pose[0], s.qrot(pose[1], com))
    w = twist[3:]
    origin = (*s.sub(twist[:3], s.cross(w, com_w)), *w)
    bp = (s.take(pose[0], par), s.take(pose[1], par))
    bc = (s.take(pose[0], chi), s.take(pose[1], chi))
    x_wpa = s.tmul(bp, c["X_p"])
    x_wca = s.tmul(bc, c["X_c"])
    x_j = s.tmul(_tinv(x_wpa), x_wca)
    rel = s.sub(s.take(origin, chi), s.take(origin, par))
    w_rel = rel[3:]
    ref = s.where(jnp.asarray(ik.is_com)[:, None], s.take(com_w, chi), x_wca[0])
    qc = s.qconj(x_wpa[1])
    return x_j, s.qrot(qc, s.add(rel[:3], s.cross(w_rel, ref))), s.qrot(qc, w_rel)


def _ik_coordinates(ik: IKStatic, c, x_j, v_p, w_p, joint_q, joint_qd):
    lin, g_inv = c["lin_axes"], c["g_inv"]
    t_x = [s.dot(lin[k], x_j[0]) for k in range(3)]
    t_v = [s.dot(lin[k], v_p) for k in range(3)]
    q_lin = [s.dot(g_inv[r], t_x) for r in range(3)]
    qd_lin = [s.dot(g_inv[r], t_v) for r in range(3)]
    angles, cov = angular_coordinates(ik.n_ang, c["ang_axes"], x_j[1])
    is_quat = jnp.asarray(ik.is_quat)[:, None]
    qd_ang = [jnp.where(is_quat, w_p[k], s.dot(cov[k], w_p)) for k in range(3)]
    lanes_ = max(x.shape[-1] for x in (*q_lin, *angles, *x_j[1], joint_q, *qd_lin, *qd_ang, joint_qd))
    full = lambda xs: [jnp.broadcast_to(x, (x.shape[0], lanes_)) for x in xs]  # noqa: E731
    q_stack = jnp.concatenate(full([*q_lin, *angles, *x_j[1], joint_q]), 0)
    qd_stack = jnp.concatenate(full([*qd_lin, *qd_ang, joint_qd]), 0)
    return (jnp.where(jnp.asarray(ik.q_upd)[:, None], q_stack[ik.q_src], joint_q),
            jnp.where(jnp.asarray(ik.qd_upd)[:, None], qd_stack[ik.qd_src], joint_qd))


def ik_lanes(ik: IKStatic, par: np.ndarray, chi: np.ndarray, c, pose, twist, com, joint_q, joint_qd, *, stage):
    """``eval_ik`` (default masks) of lane poses/twists (``nb + 1`` rows, world last).

    Args:
        ik: :func:`ik_static`.
        par, chi: ``(T,)`` static parent (world = nb) and child bodies of the tree joints.
        c: :func:`ik_inputs` in SoA lane form (``X_p``/``X_c`` poses, axes and ``g_inv`` as 3 SoA rows).
        pose, twist, com: SoA body poses, COM twists and body-frame COMs.
        joint_q, joint_qd: ``(nq, L)`` / ``(nd, L)`` values kept where IK does not write.
        stage: The kernel's materialisation helper (``stage(fn, *args)``).

    Returns:
        ``(joint_q, joint_qd)`` lane arrays.
    """
    x_j, v_p, w_p = stage(lambda *a: _ik_frames(ik, par, chi, *a), c, pose, twist, com)
    return stage(lambda *a: _ik_coordinates(ik, *a), c, x_j, v_p, w_p, joint_q, joint_qd)
