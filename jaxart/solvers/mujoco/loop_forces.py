"""``Control.joint_f`` on loop-closing joints without MuJoCo coordinates, as body wrenches (``xfrc_applied``).

A loop joint realised by CONNECT / WELD rows (REVOLUTE-like, BALL-like and D6 ones without an auxiliary body) or by
nothing (FREE, DISTANCE) has no MuJoCo DOF for its ``joint_f`` (and ``joint_act``) entries; a loop joint with an
auxiliary body takes them on its auxiliary joints. SolverFeatherstone applies a loop joint's generalized force
``f`` as ``J_Lᵀ f`` with the rows of :mod:`jaxart.dynamics.engine.loop_axes`; the same load as
world wrenches at the COMs:

* angular axes: the torque ``τ = R_P covᵀ f_ang`` (``cov`` the axes' covectors: the axis for one angular DOF, the
  identity for BALL, the Euler-chain covectors for a D6) on the child and ``−τ`` on the parent;
* FREE / DISTANCE linear DOFs: the force ``F = R_P f_lin`` at the child COM ``c`` on the child and ``−F`` at ``c`` on
  the parent (at its COM: ``−F`` and the torque ``−(c − x_P) × F``).

``R_P`` is the parent-anchor orientation at the step's body poses. Disabled loop joints apply nothing (as in
SolverFeatherstone, whose loop axes skip them).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_conjugate, quat_mul, quat_rotate, transform_mul, transform_point
from jaxart.sim.enums import JointType


@functools.lru_cache(maxsize=64)
def _plan(topo, mapped: tuple) -> tuple:
    """``(joint, parent, child, type, n_linear, n_angular, first DOF)`` of the enabled loop joints with DOFs that
    have no MuJoCo DOF (``mapped``: the DOFs that have one)."""
    art, ds = topo.joint_articulation.array, topo.joint_qd_start.array
    out = []
    for j in np.flatnonzero(art < 0):
        d0, d1 = int(ds[j]), int(ds[j + 1])
        if d1 == d0 or not topo.joint_enabled.array[j] or d0 in mapped:
            continue
        nl, na = (int(x) for x in topo.joint_dof_dim.array[j])
        out.append((int(j), int(topo.joint_parent.array[j]), int(topo.joint_child.array[j]),
                    int(topo.joint_type.array[j]), nl, na, d0))
    return tuple(out)


def loop_joint_wrenches(layout, model, body_q: jnp.ndarray, joint_f: jnp.ndarray) -> jnp.ndarray | None:
    """``(body_count, 6)`` world wrenches (force, torque at the COMs) of ``joint_f`` on the loop joints without
    MuJoCo DOFs (module docstring), or ``None`` when the model has none (static).

    Args:
        layout: The bridge's :class:`~jaxart.solvers.mujoco.layout.MjLayout` (which DOFs MuJoCo has).
        model: The jaxart model.
        body_q: ``(body_count, 7)`` body poses of the step.
        joint_f: ``(joint_dof_count,)`` generalized forces.
    """
    mapped = tuple(int(d) for a in (layout.v_src, layout.ball_v_src) for d in np.asarray(a).reshape(-1))
    plan = _plan(model.topology, mapped)
    if not plan:
        return None
    from jaxart.dynamics.engine.loop_axes import loop_angles

    dtype = body_q.dtype
    ident = jnp.asarray([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], dtype)
    out = jnp.zeros((model.body_count, 6), dtype)
    for j, p, c, jt, nl, na, d0 in plan:
        xp = transform_mul(ident if p < 0 else body_q[p], model.joint_X_p[j].astype(dtype))
        f = joint_f[d0:d0 + (6 if jt in (JointType.FREE, JointType.DISTANCE) else nl + na)].astype(dtype)
        wrench_c = jnp.zeros(6, dtype)
        wrench_p = jnp.zeros(6, dtype)
        if jt in (JointType.FREE, JointType.DISTANCE):
            com_c = transform_point(body_q[c], model.body_com[c].astype(dtype))
            force = quat_rotate(xp[3:], f[:3])
            torque = quat_rotate(xp[3:], f[3:])
            wrench_c = jnp.concatenate([force, torque])
            arm = com_c - (transform_point(body_q[p], model.body_com[p].astype(dtype)) if p >= 0 else com_c)
            wrench_p = -jnp.concatenate([force, torque + jnp.cross(arm, force)])
        else:
            if jt == JointType.BALL:
                cov = jnp.eye(3, dtype=dtype)
            else:
                xc = transform_mul(body_q[c], model.joint_X_c[j].astype(dtype))
                axes = model.joint_axis[d0 + nl:d0 + nl + na].astype(dtype)
                cov = loop_angles(axes, quat_mul(quat_conjugate(xp[3:]), xc[3:]))[1]
            torque = quat_rotate(xp[3:], cov.T @ f[nl:])
            wrench_c = wrench_c.at[3:].set(torque)
            wrench_p = wrench_p.at[3:].set(-torque)
        out = out.at[c].add(wrench_c)
        if p >= 0:
            out = out.at[p].add(wrench_p)
    return out
