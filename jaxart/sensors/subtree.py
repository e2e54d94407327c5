"""Subtree sensors: SUBTREECOM, SUBTREELINVEL, SUBTREEANGMOM (a body and its descendants; the world: all bodies)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.math import quat_to_matrix
from jaxart.sensors.context import SensorContext
from jaxart.sensors.frames import body_coms


@functools.lru_cache(maxsize=32)
def _parents(topo) -> tuple[int, ...]:
    """Parent body of every body along its first articulated joint (−1 for roots)."""
    parent = [-1] * topo.body_count
    seen = [False] * topo.body_count
    for j in range(topo.joint_count):
        c = int(topo.joint_child.array[j])
        if topo.joint_articulation.array[j] >= 0 and not seen[c]:
            parent[c], seen[c] = int(topo.joint_parent.array[j]), True
    return tuple(parent)


def subtree_membership(model, bodies: np.ndarray) -> np.ndarray:
    """Static ``(k, body_count)`` 0/1 matrix: body ``b`` is ``bodies[k]`` or one of its descendants (all for −1)."""
    parent = _parents(model.topology)
    n = model.body_count
    out = np.zeros((len(bodies), n))
    for k, root in enumerate(bodies):
        for b in range(n):
            a = b
            while a != -1 and a != root:
                a = parent[a]
            out[k, b] = 1.0 if (a == root or root < 0) else 0.0
    return out


def _subtree_sums(ctx: SensorContext, rows: np.ndarray):
    model, state = ctx.model, ctx.state
    dtype = state.body_q.dtype
    member = jnp.asarray(subtree_membership(model, ctx.objid(rows)), dtype)
    mass = model.body_mass.astype(dtype)
    total = member @ mass
    safe = jnp.where(total > 0.0, total, 1.0)
    com = body_coms(model, state)
    vel = state.body_qd[:, :3]
    c = (member @ (mass[:, None] * com)) / safe[:, None]
    v = (member @ (mass[:, None] * vel)) / safe[:, None]
    return member, mass, total, com, c, v


def subtree_com(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Subtree centre of mass [m]."""
    return _subtree_sums(ctx, rows)[4]


def subtree_linvel(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Subtree centre-of-mass velocity [m/s]."""
    return _subtree_sums(ctx, rows)[5]


def subtree_angmom(ctx: SensorContext, rows: np.ndarray) -> jax.Array:
    """Subtree angular momentum about its centre of mass [kg·m²/s], world axes."""
    member, mass, total, com, c, v = _subtree_sums(ctx, rows)
    state = ctx.state
    rot = quat_to_matrix(state.body_q[:, 3:])
    inertia = rot @ ctx.model.body_inertia.astype(rot.dtype) @ jnp.swapaxes(rot, -1, -2)
    omega = state.body_qd[:, 3:]
    h = jnp.einsum("bij,bj->bi", inertia, omega) + mass[:, None] * jnp.cross(com, state.body_qd[:, :3])
    return member @ h - total[:, None] * jnp.cross(c, v)
