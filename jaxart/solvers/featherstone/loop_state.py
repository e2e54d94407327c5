"""SolverFeatherstone's loop-closing joints in the state: their measured coordinates and the step's loop bias.

A loop-closing joint has no coordinates of the reduced system; its locked directions are hard rows of the
dense solve and its free axes carry the tree joint's terms (:mod:`jaxart.dynamics.engine.loop_axes`). After
each step :func:`loop_joint_state` writes the coordinates and rates measured from the anchor frames of every
enabled loop joint (:func:`loop_state_plan`, FREE joints included) into the state's ``joint_q``/``joint_qd``,
so they read as the equivalent tree joint's. Before the solve :func:`loop_coordinates_from_base` measures them
from the step's base-body poses and :func:`fold_loop_bias` takes the implicit terms' ``e·J̇q̇`` off the loop
DOFs' forces.
"""

from __future__ import annotations

import functools

import numpy as np

from jaxart.dynamics.aba import body_q_from_base
from jaxart.dynamics.engine.loop_axes import LoopAxes, loop_coordinates, loop_rates_and_coordinates
from jaxart.sim.enums import JointType

__all__ = ["fold_loop_bias", "loop_coordinates_from_base", "loop_joint_state", "loop_state_plan"]


def loop_coordinates_from_base(model, joint_q, joint_qd, base_q, axes: LoopAxes):
    """:func:`~jaxart.dynamics.engine.loop_axes.loop_coordinates` from the ``(k, 7)`` poses of the
    :func:`~jaxart.kinematics.fk.base_bodies`."""
    return loop_coordinates(model, joint_q, joint_qd, body_q_from_base(model, base_q), axes)


def loop_state_plan(model, *, ignore_loop_joints: bool = False) -> LoopAxes:
    """Every enabled loop-closing joint with coordinates (all but FIXED), whatever its terms: the joints whose
    ``joint_q``/``joint_qd`` entries :func:`loop_joint_state` measures.

    Args:
        model: The model.
        ignore_loop_joints: The solver ignores loop joints (empty plan: their entries are left alone).
    """
    topo = model.topology
    if ignore_loop_joints or not np.any(topo.joint_articulation.array < 0):
        return LoopAxes(())
    return _state_plan(topo)


@functools.lru_cache(maxsize=64)
def _state_plan(topo) -> LoopAxes:
    art, qs, qst = topo.joint_articulation.array, topo.joint_qd_start.array, topo.joint_q_start.array
    out = []
    for j in np.flatnonzero(art < 0):
        jt = JointType(int(topo.joint_type.array[j]))
        if not topo.joint_enabled.array[j] or qs[j + 1] == qs[j] or jt == JointType.FIXED:
            continue
        nl, na = (int(x) for x in topo.joint_dof_dim.array[j])
        out.append((int(j), int(topo.joint_parent.array[j]), int(topo.joint_child.array[j]), int(jt), nl, na,
                    int(qs[j]), int(qst[j]), int(qst[j + 1] - qst[j])))
    return LoopAxes(tuple(out))


def loop_joint_state(model, joint_q, joint_qd, body_q, axes: LoopAxes):
    """``(joint_q, joint_qd)`` with the loop joints' entries set to their coordinates and rates measured from the
    anchor frames (the tree joint's convention: REVOLUTE angle, PRISMATIC slide, BALL ``q_P⁻¹ q_C``, D6 per axis,
    FREE/DISTANCE anchor pose with the child-COM twist in the parent-anchor frame).

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates (tree entries define the configuration).
        joint_qd: ``(joint_dof_count,)`` velocities (tree entries).
        body_q: ``(body_count, 7)`` poses (only bodies without a tree joint are read).
        axes: :func:`loop_state_plan` of the model.
    """
    if not axes.joints:
        return joint_q, joint_qd
    rate, coords = loop_rates_and_coordinates(model, joint_q, joint_qd, body_q, axes)
    return joint_q.at[axes.coords].set(coords), joint_qd.at[axes.dofs].set(rate)


def fold_loop_bias(axes: LoopAxes, f0, d_extra, dyad, bias):
    """``f0`` with ``e·J̇q̇`` (and the DISTANCE dyads' ``w (w·J̇q̇)``) taken off the loop DOFs' entries.

    Args:
        axes: The loop axes.
        f0: ``(nd,)`` joint forces at the step's start (loop entries from :func:`loop_coordinates_from_base`).
        d_extra: ``(nd,)`` diagonal ``armature + k dt² + c dt``.
        dyad: ``(nd,)`` DISTANCE-limit rows or ``None``.
        bias: ``(n_L,)`` ``J̇_L q̇``.
    """
    dofs = axes.dofs
    f_loop = f0[dofs] - d_extra[dofs] * bias
    if dyad is not None:
        w = dyad[dofs]
        for a, b in axes.distance_groups:
            f_loop = f_loop.at[a:b].add(-w[a:b] * (w[a:b] @ bias[a:b]))
    return f0.at[dofs].set(f_loop)
