"""Tree traversal: the one place that walks the kinematic tree in traced code.

Two static schedules, chosen by tree depth (both index arrays are computed from the static
:class:`~jaxart.sim.topology.KinematicSchedule`, never from traced data):

* **Levels** (depth ≤ :data:`LEVELS_MAX_DEPTH`, e.g. humanoids, quadrupeds, arms): bodies are
  grouped by depth and level ``d`` composes its parents' values from level ``d − 1`` with its
  own, so every body is composed exactly once. By default the levels run as a ``lax.scan`` over
  depth (each level padded to the widest); ``unroll=True`` (used by the batch-minor FK kernel under
  ``vmap``, never differentiated) unrolls them, 1.55 vs 1.84 µs per humanoid world at batch 4096.
  Unrolled levels must not reach reverse-mode code: there XLA re-evaluates chains of levels per
  element (a checkpointed arm7 rollout gradient took 216 ms instead of 19 ms).
* **Pointer doubling** (deeper trees, e.g. long chains): in round ``r`` every body composes the
  accumulated value of its ancestor ``2**r`` levels up with its own, so a tree of depth ``d``
  costs ``ceil(log2(d + 1))`` fully vectorised rounds and compile time stays flat with depth. The
  rounds run inside ``lax.fori_loop`` (static trip count, so reverse mode works). The loop is a
  performance necessity, not style: unrolled, XLA fuses the chain of per-round gathers into every
  consumer and re-evaluates each round's producers once per use, so a body's value is recomputed
  ``2**rounds`` times (measured on a 128-link chain: 1.8 ms → 56 µs per world). XLA:CPU drops
  ``optimization_barrier``; a loop boundary is what forces materialisation.

**Ancestor matrix** (trees of up to :data:`ANCESTOR_MAX_SLOTS` slots, outside unrolled lane code): a sum
over ancestors (:func:`accumulate_down`) is one product with the static 0/1 ancestor matrix, and
:func:`compose_down` is differentiated in closed form by two such products (:func:`_compose_tangent`), so no
derivative runs or transposes a loop (XLA:CPU emits the transposed level loop as hundreds of small copies,
slices and scatters per step).

Measured per humanoid world at batch 4096 (batch-major FK incl. twists): unrolled
doubling 8 µs, looped doubling 5 µs, unrolled levels 2.7 µs. Unrolled levels' compile time grows
with depth, hence the cut-over.

Values are pytrees of arrays with the body axis first (SoA components in the lane layout of
:mod:`jaxart.math.lanes`); ``n + 1`` entries, the last one is the world.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.kinematics.joints import append_rows
from jaxart.math import soa
from jaxart.math.static_index import take_rows

#: Trees up to this depth use the level schedule; deeper ones use looped pointer doubling.
LEVELS_MAX_DEPTH = 8
#: Trees with up to this many slots (bodies + world) sum over ancestors with one product by their
#: static ancestor matrix (and differentiate :func:`compose_down` that way) outside unrolled lane code.
ANCESTOR_MAX_SLOTS = 256


@functools.lru_cache(maxsize=64)
def _levels(schedule) -> tuple[tuple[np.ndarray, np.ndarray], ...] | None:
    """Per depth ``d ≥ 1``: ``(slots at depth d, their parents' positions within level d − 1)``;
    level 0 (slots listed first) holds the world and bodies without a tree joint. ``None`` when
    the tree is deeper than :data:`LEVELS_MAX_DEPTH`."""
    parent = np.append(schedule.body_parent.array, len(schedule.body_parent.array))
    depth = np.zeros(len(parent), dtype=np.int64)  # 0: world and bodies without a tree joint
    for body in _tree_children(schedule):  # parents before children
        depth[body] = depth[parent[body]] + 1
    if depth.max(initial=0) > LEVELS_MAX_DEPTH:
        return None
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)) + 1)]
    pos = np.zeros(len(parent), dtype=np.int64)
    for lv in levels:
        pos[lv] = np.arange(len(lv))
    return tuple((lv, pos[parent[lv]]) for lv in levels)


def _tree_children(schedule) -> np.ndarray:
    """Bodies with a tree joint in schedule order (``tree_joint`` is depth-ordered)."""
    body_of_joint = {int(j): b for b, j in enumerate(schedule.body_joint.array) if j >= 0}
    return np.asarray([body_of_joint[int(j)] for j in schedule.tree_joint.array], dtype=np.int64)


def _rows(x, idx):
    return take_rows(x, idx) if isinstance(idx, np.ndarray) else x[idx]  # traced: the scan's parent positions


def _take(values, idx):
    return jax.tree_util.tree_map(lambda x: _rows(x, idx), values)


def _stack_leaves(leaves: list) -> jnp.ndarray:
    """``(N, len(leaves), ...)``: the leaves (broadcast to one shape) stacked on axis 1."""
    return jnp.stack(jnp.broadcast_arrays(*leaves), axis=1)


def _concat(parts: list):
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs, axis=0), *parts)


def _run_levels(levels, combine, values):
    """Level schedule: level 0 as given, level ``d`` = ``combine(parents in d − 1, own)``."""
    outs = [_take(values, levels[0][0])]
    for slots, par_pos in levels[1:]:
        outs.append(combine(_take(outs[-1], par_pos), _take(values, slots)))
    order = np.concatenate([lv for lv, _ in levels])
    return _take(_concat(outs), np.argsort(order))


def _run_levels_scan(levels, combine, values):
    """Level schedule as a ``lax.scan`` over depth, every level padded to the widest one.

    The loop boundary materialises each level once; unrolled, XLA fuses a level into each consumer
    and, inside reverse-mode code (e.g. a checkpointed rollout step), re-evaluates whole chains of
    levels per element (measured: arm7 100-step gradient with per-step remat 216 ms unrolled, 19 ms
    looped). The carry (the previous level's values) is one array with the leaves stacked on axis 1,
    so each level gathers its parents and stores its result once instead of once per component (one
    humanoid world, 100-step contact rollout pinned to one core: forward 56 → 51 µs per step, gradient
    unchanged; packing the per-level inputs as well fused the whole joint-transform stage into one
    gather that XLA:CPU evaluated per element, forward 74 µs).
    """
    width = max(len(lv) for lv, _ in levels)
    pad = lambda a, fill: np.concatenate([a, np.full(width - len(a), fill, a.dtype)])  # noqa: E731
    world_slot = int(levels[0][0][np.argmax(levels[0][0])])
    slots = np.stack([pad(lv, world_slot) for lv, _ in levels[1:]])
    parents = jnp.asarray(np.stack([pad(pp, 0) for _, pp in levels[1:]]).astype(np.int32))
    first = _take(values, pad(levels[0][0], world_slot))
    leaves, tree = jax.tree_util.tree_flatten(values)

    def pack(parts):
        return _stack_leaves(jax.tree_util.tree_leaves(parts))

    def unpack(a):
        return jax.tree_util.tree_unflatten(tree, [a[:, i] for i in range(len(leaves))])

    def body(prev, xs):
        own, par = xs
        new = pack(combine(unpack(prev[par]), own))
        return new, new

    _, rest = jax.lax.scan(body, pack(first), (_take(values, slots), parents))
    rest = unpack(rest.reshape(-1, *rest.shape[2:]))
    flat = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b], axis=0), first, rest)
    position = np.zeros(sum(len(lv) for lv, _ in levels), dtype=np.int64)
    for d, (lv, _) in enumerate(levels):
        position[lv] = d * width + np.arange(len(lv))
    return _take(flat, position)


def _run_doubling(schedule, combine, values):
    """Looped pointer doubling: ``v ← combine(v[ancestor 2**r up], v)`` per round."""
    if not schedule.doubling:
        return values
    ptrs = jnp.asarray(np.stack([p.array for p in schedule.doubling]))

    def step(ptr, v):
        return combine(_take(v, ptr), v)

    if ptrs.shape[0] == 1:
        return step(ptrs[0], values)
    return jax.lax.fori_loop(0, ptrs.shape[0], lambda r, v: step(ptrs[r], v), values)


def _traverse(schedule, combine, values, unroll: bool):
    levels = _levels(schedule)
    if levels is None:
        return _run_doubling(schedule, combine, values)
    if unroll:
        return _run_levels(levels, combine, values)
    return _run_levels_scan(levels, combine, values)


@functools.lru_cache(maxsize=64)
def _ancestry(schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(ancestors, parent)``: the ``(N, N)`` 0/1 matrix with ``ancestors[b, a] = 1`` when slot ``a`` is
    ``b`` or one of its tree ancestors (``N = n + 1`` slots, the last one the world), and each slot's
    tree parent (``N`` for the world and bodies without a tree joint)."""
    count = len(schedule.body_parent.array) + 1
    parent = np.full(count, count, dtype=np.int32)
    ancestors = np.eye(count)
    for body in _tree_children(schedule):  # parents before children
        parent[body] = schedule.body_parent.array[body]
        ancestors[body] += ancestors[parent[body]]
    return ancestors, parent


def _ancestor_sums(schedule, leaves: list) -> list:
    """Sums of each ``(N, ...)`` array over every slot's ancestors-or-self: one product for all leaves.

    The static 0/1 matrix is multiplied at full precision (no reduced-precision passes on any backend).
    """
    ancestors, _ = _ancestry(schedule)
    stacked = _stack_leaves(leaves)
    summed = jnp.tensordot(jnp.asarray(ancestors, stacked.dtype), stacked, axes=(1, 0),
                           precision=jax.lax.Precision.HIGHEST)
    return [summed[:, i] for i in range(len(leaves))]


def _use_ancestors(schedule, unroll: bool) -> bool:
    return not unroll and len(schedule.body_parent.array) + 1 <= ANCESTOR_MAX_SLOTS


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _compose_linear(schedule, local: tuple) -> tuple:
    """:func:`compose_down` by the traversal, differentiated by :func:`_compose_tangent` (no loop)."""
    return _traverse(schedule, soa.tmul, local, False)


@_compose_linear.defjvp
def _compose_linear_jvp(schedule, primals, tangents):
    (local,), (d_local,) = primals, tangents
    world = _traverse(schedule, soa.tmul, local, False)
    return world, _compose_tangent(schedule, local, world, d_local)


def _compose_tangent(schedule, local: tuple, world: tuple, d_local: tuple) -> tuple:
    """Tangent of the world transforms as sums over ancestors (exact for unit quaternions).

    A local rotation change ``δq_a`` is the quaternion ``ξ_a = δq_a ⊗ q_a⁻¹``: its vector part is half
    a rotation (in the world: ``θ_a = R_parent ⋅ 2 vec ξ_a``, turning every descendant about the
    slot's origin ``P_a``), its scalar part ``s_a`` a scaling (which scales the quaternion of every
    descendant and, through the non-unit rotation formula, moves its children by ``2 s (R p − p)``).
    Summed over ancestors-or-self: ``δQ_b = (Θ_b / 2, S_b) ⊗ Q_b`` and
    ``δP_b = Σ_a (R_parent δp_a + 2 S_parent(a) (P_a − P_parent(a) − p_a) − θ_a × P_a) + Θ_b × P_b``.
    """
    _, parent = _ancestry(schedule)
    (p, q), (dp, dq), (pw, qw) = local, d_local, world
    # slot N: the identity, parent of the world and of bodies without a tree joint
    p_par = soa.rows(tuple(append_rows(x, [0.0]) for x in pw), parent)
    q_par = soa.rows(tuple(append_rows(x, [float(i == 3)]) for i, x in enumerate(qw)), parent)
    xi = soa.scale(soa.qmul(dq, soa.qconj(q)), 1.0 / (soa.dot(q[:3], q[:3]) + q[3] * q[3]))
    theta = soa.qrot(q_par, soa.scale(xi[:3], 2.0))
    first = _ancestor_sums(schedule, [*theta, xi[3]])
    big_theta, s_parent = tuple(first[:3]), first[3] - xi[3]
    extra = soa.scale(soa.sub(soa.sub(pw, p_par), p), 2.0 * s_parent)
    lin = soa.sub(soa.add(soa.qrot(q_par, dp), extra), soa.cross(theta, pw))
    d_pw = soa.add(tuple(_ancestor_sums(schedule, list(lin))), soa.cross(big_theta, pw))
    d_qw = soa.qmul((*soa.scale(big_theta, 0.5), first[3]), qw)
    return d_pw, d_qw


def compose_down(schedule, local: tuple, *, unroll: bool = False) -> tuple:
    """World transforms from per-body local SoA transforms.

    Args:
        schedule: The model's :class:`~jaxart.sim.topology.KinematicSchedule`.
        local: SoA transform ``(p, q)`` of each body relative to its tree parent (for roots and
            bodies without a tree joint: their world pose); the last entry is the world (identity).
            Body axis first (any trailing axes, e.g. lanes).
        unroll: Unroll the level schedule (see the module docstring).

    Returns:
        World transforms in the same form as ``local``.
    """
    if _use_ancestors(schedule, unroll):
        return _compose_linear(schedule, local)
    return _traverse(schedule, soa.tmul, local, unroll)


def accumulate_down(schedule, values, *, unroll: bool = False):
    """Sum ``values`` (a pytree of arrays, body axis first) over each body's ancestors-or-self.

    The last body entry (world) must be zero. ``unroll`` as in :func:`compose_down`.
    """
    if _use_ancestors(schedule, unroll):
        leaves, tree = jax.tree_util.tree_flatten(values)
        return jax.tree_util.tree_unflatten(tree, _ancestor_sums(schedule, leaves))
    return _traverse(schedule, lambda a, b: jax.tree_util.tree_map(jnp.add, a, b), values, unroll)
