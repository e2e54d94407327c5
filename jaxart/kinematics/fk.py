"""Forward kinematics: generalized coordinates → world body poses and COM twists."""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.joints import joint_motion_soa
from jaxart.kinematics.masks import articulation_mask, body_update_mask
from jaxart.kinematics.tree import accumulate_down, compose_down
from jaxart.math import soa
from jaxart.math.lanes import col, expand, lanes, materialize, squeeze
from jaxart.math.static_index import item, take_rows
from jaxart.sim import checks
from jaxart.sim.enums import BodyFlags
from jaxart.sim.model import State


class FrameTerms(NamedTuple):
    """Pose-level FK quantities, all SoA (component tuples, body/joint axis first, lanes last).

    Attributes:
        motion: :class:`~jaxart.kinematics.joints.JointMotionSoA` of the tree joints.
        world: ``(n + 1)`` world transforms of the bodies (last = world identity).
        com_w: ``(n)`` world COM positions.
        x_wpa: ``(t)`` world transforms of each tree joint's parent anchor frame.
        ref: ``(t)`` world reference point of each joint's linear velocity (child anchor, or
            child COM for FREE/DISTANCE).
    """

    motion: tuple
    world: tuple
    com_w: tuple
    x_wpa: tuple
    ref: tuple


def eval_fk(model, joint_q, joint_qd, state: State | None = None, mask=None, indices=None,
            body_flag_filter: int = BodyFlags.ALL) -> State:
    """Evaluate forward kinematics (Newton's ``eval_fk``, functional).

    ``x_wc = x_wp · X_p · X_j(q) · X_c⁻¹``; ``body_qd = (v_com_world, ω_world)``. Bodies outside
    the selected articulations, bodies with no tree joint, and bodies whose flags do not match
    ``body_flag_filter`` keep their values from ``state``. (Newton reads a filtered parent's stale
    pose for its children; jaxart always propagates the freshly computed parent pose.)

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities.
        state: State to update (a new one is returned); ``model.state()`` when ``None``.
        mask: Optional ``(articulation_count,)`` booleans selecting articulations.
        indices: Optional articulation indices (exclusive with ``mask``).
        body_flag_filter: :class:`BodyFlags` of bodies to write.

    Returns:
        The updated :class:`State` (``joint_q``/``joint_qd`` set to the inputs).
    """
    checks.check_fk(model, joint_q, joint_qd, state)
    with jax.named_scope("jaxart.eval_fk"):
        if state is None:
            state = model.state()
        art = articulation_mask(model, mask, indices)
        joint_q = jnp.asarray(joint_q, dtype=state.body_q.dtype)
        joint_qd = jnp.asarray(joint_qd, dtype=state.body_q.dtype)
        body_q, body_qd = fk_bodies(model, joint_q, joint_qd, state.body_q, state.body_qd)
        upd = body_update_mask(model, art, body_flag_filter)
        if not (isinstance(upd, np.ndarray) and upd.all()):
            upd = jnp.asarray(upd)[:, None]
            body_q = jnp.where(upd, body_q, state.body_q)
            body_qd = jnp.where(upd, body_qd, state.body_qd)
        return state.replace(body_q=body_q, body_qd=body_qd, joint_q=joint_q, joint_qd=joint_qd)


def base_bodies(schedule) -> np.ndarray:
    """Static indices of the bodies without a tree joint (their poses come from the caller)."""
    return np.flatnonzero(schedule.body_joint.array < 0)


def body_slots(schedule) -> np.ndarray:
    """Static ``(n + 1,)`` index into ``concat([tree-joint values, base body values, world])``."""
    t = len(schedule.tree_joint.array)
    pos = {int(j): k for k, j in enumerate(schedule.tree_joint.array)}
    base = {int(b): k for k, b in enumerate(base_bodies(schedule))}
    slots = [pos[int(j)] if j >= 0 else t + base[b] for b, j in enumerate(schedule.body_joint.array)]
    return np.asarray([*slots, t + len(base)], dtype=np.int32)


def fk_bodies_kernel(model, joint_q, joint_qd, base_q, base_qd, *, store_frames: bool = False):
    """Lane kernel of :func:`fk_bodies`: ``(body_q (n, 7, L), body_qd (n, 6, L))``.

    Args:
        store_frames: Compute the pose stage (:func:`fk_frames_lanes`) under
            :func:`~jaxart.math.lanes.materialize`, i.e. store the world poses in the lane layout before
            the twists and the ``vmap`` rule's transpose read them. Used where FK is the whole lane
            program (:func:`eval_fk`): otherwise, when a caller uses only ``body_q``, XLA:CPU fuses the
            tree levels into that batch-major transpose (the twists no longer share them), where they run
            unvectorised, once per output component (measured: 2× the per-world cost of the whole
            State on the humanoid at 4096 worlds). Measured on the humanoid (float32, 2-core CPU, forms
            alternating in one process): ``body_q`` only 1.00 → 0.68 µs per world at 4096 worlds (0.90 →
            0.57 of the State form), a loss of ``body_q`` 0.81 → 0.63 µs; the whole State costs 7 % (4096)
            to 15 % (1024) more, because the stored poses are read back by the twists. The Featherstone
            step's kernel keeps the default (there FK is part of a larger program).
    """
    if store_frames:
        fr = materialize(fk_frames_lanes, model, joint_q, joint_qd, base_q)
        world, com_w = fr.world, fr.com_w
        twist = fk_twists_lanes(model, fr, base_qd, unroll=joint_q.shape[-1] > 1)
    else:
        world, twist, com_w = fk_soa(model, joint_q, joint_qd, base_q, base_qd)
    n = model.body_count
    omega = _head(twist[1], n)
    v_com = soa.add(_head(twist[0], n), soa.cross(omega, com_w))
    p, q = _head(world, n)
    return jnp.stack([*p, *q], axis=1), jnp.stack([*v_com, *omega], axis=1)


#: :func:`fk_bodies` from the ``(k, 7)``/``(k, 6)`` poses/twists of the :func:`base_bodies` only.
fk_from_base = lanes(fk_bodies_kernel)
#: :data:`fk_from_base` with the pose stage stored in the lane layout (used by :func:`eval_fk`).
fk_from_base_stored = lanes(functools.partial(fk_bodies_kernel, store_frames=True))


def fk_bodies(model, joint_q, joint_qd, body_q_base, body_qd_base):
    """World poses and COM twists of all bodies (no masking), batch-minor under ``vmap``.

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities.
        body_q_base: ``(n, 7)`` poses; only the rows of bodies without a tree joint are read.
        body_qd_base: ``(n, 6)`` COM twists; only the rows of bodies without a tree joint are read.

    Returns:
        ``(body_q (n, 7), body_qd (n, 6))``.
    """
    rows = base_bodies(model.schedule)  # only these rows enter the lane kernel (no transposes of the rest)
    return fk_from_base_stored(model, joint_q, joint_qd, body_q_base[rows], body_qd_base[rows])


def fk_frames_soa(model, joint_q, joint_qd, body_q_base) -> FrameTerms:
    """Per-world SoA pose part of FK (each component ``(items,)``), used by the dynamics.

    Args:
        model: The model.
        joint_q: ``(joint_coord_count,)`` coordinates.
        joint_qd: ``(joint_dof_count,)`` velocities (only ``motion.v``/``motion.w`` depend on them).
        body_q_base: ``(n, 7)`` poses used for bodies without a tree joint.

    Returns:
        A :class:`FrameTerms`.
    """
    base_q = body_q_base[base_bodies(model.schedule)]
    return squeeze(fk_frames_lanes(*expand((model, joint_q, joint_qd, base_q))))


def fk_frames_lanes(model, joint_q, joint_qd, base_q) -> FrameTerms:
    """Lane kernel of the pose part of FK (:mod:`jaxart.math.lanes`; components ``(items, L)``).

    ``base_q`` ``(k, 7, L)`` holds the poses of the :func:`base_bodies` (bodies without a tree joint).
    """
    sch = model.schedule
    n = model.body_count
    tj = sch.tree_joint.array
    child = model.topology.joint_child.array[tj]
    mo = joint_motion_soa(model, joint_q, joint_qd)
    x_p = _transform(model.joint_X_p[tj])
    x_c = _transform(model.joint_X_c[tj])
    local = soa.tmul(soa.tmul(x_p, mo.X_j), soa.tinv(x_c))
    base = _transform(base_q)
    one = jnp.ones((1, 1), base_q.dtype)
    ident = ((one * 0,) * 3, (one * 0,) * 3 + (one,))
    stacked = jax.tree_util.tree_map(lambda a, b, c: take_rows(_cat(a, b, c), body_slots(sch)), local, base, ident)
    world = compose_down(sch, stacked, unroll=joint_q.shape[-1] > 1)
    com_w = soa.tpoint(_head(world, n), _comps(model.body_com))
    x_wpa = soa.tmul(soa.rows(world, sch.body_parent.array[child]), x_p)
    anchor = soa.tpoint(x_wpa, mo.X_j[0])
    ref = soa.where(col(sch.is_com_ref.array), soa.rows(com_w, child), anchor)
    return FrameTerms(mo, world, com_w, x_wpa, ref)


def fk_soa(model, joint_q, joint_qd, base_q, base_qd):
    """Lane kernel of the FK core (``base_q``/``base_qd``: rows of the :func:`base_bodies`).

    Returns:
        ``(world, origin_twist, com_w)``: world transforms ``(n + 1)`` (last = world), twists
        ``(v_at_world_origin, ω)`` ``(n + 1)`` and world COM positions ``(n)``, SoA lanes.
    """
    fr = fk_frames_lanes(model, joint_q, joint_qd, base_q)
    return fr.world, fk_twists_lanes(model, fr, base_qd, unroll=joint_q.shape[-1] > 1), fr.com_w


def fk_twists_lanes(model, fr: FrameTerms, base_qd, *, unroll: bool = False) -> tuple:
    """World-origin twists ``(v_at_world_origin, ω)`` of the ``n + 1`` bodies (last = world), SoA lanes.

    Args:
        model: The model.
        fr: :func:`fk_frames_lanes` of the same coordinates and velocities.
        base_qd: ``(k, 6, L)`` COM twists of the :func:`base_bodies`.
        unroll: Unroll the tree levels (forward-only lane code, see :mod:`jaxart.kinematics.tree`).
    """
    sch = model.schedule
    # joint twists referenced at the world origin: (v_ref - w x r, w)
    w = soa.qrot(fr.x_wpa[1], fr.motion.w)
    v = soa.qrot(fr.x_wpa[1], fr.motion.v)
    twist_j = (soa.sub(v, soa.cross(w, fr.ref)), w)
    bv, bw = _comps(base_qd[:, :3]), _comps(base_qd[:, 3:])
    twist_b = (soa.sub(bv, soa.cross(bw, soa.rows(fr.com_w, base_bodies(sch)))), bw)
    zero = jnp.zeros((1, 1), base_qd.dtype)
    zeros = ((zero,) * 3, (zero,) * 3)
    twists = jax.tree_util.tree_map(lambda a, b, c: take_rows(_cat(a, b, c), body_slots(sch)), twist_j, twist_b, zeros)
    return accumulate_down(sch, twists, unroll=unroll)


def _comps(a: jnp.ndarray) -> tuple:
    """Components of a stacked lane array ``(items, c, L)``."""
    return tuple(item(a, i, 1) for i in range(a.shape[1]))


def _transform(a: jnp.ndarray) -> tuple:
    """``(items, 7, L)`` → SoA transform."""
    c = _comps(a)
    return c[:3], c[3:]


def _head(values, n: int):
    return jax.tree_util.tree_map(lambda x: x[:n], values)


def _cat(a, b, c):
    lanes_ = jnp.broadcast_shapes(a.shape[1:], b.shape[1:], c.shape[1:])
    return jnp.concatenate([jnp.broadcast_to(x, (x.shape[0], *lanes_)) for x in (a, b, c)], axis=0)
