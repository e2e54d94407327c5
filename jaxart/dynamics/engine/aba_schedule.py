"""Static DOF-tree schedule of the articulated-body algorithm (numpy, derived once per topology).

The articulated-body algorithm (:mod:`jaxart.dynamics.aba`) runs on the *DOF tree*: every DOF is a
node whose parent is the previous DOF of the same joint, or, for a joint's first DOF, the last DOF
of the nearest ancestor joint that has DOFs (FIXED joints weld their child to it). A multi-DOF
joint is thereby a chain of one-DOF joints through massless virtual links, which is exact for the
joint equations (every DOF of the chain transmits the same spatial force) and keeps every pivot of
the algorithm a scalar. Each body is *attached* to the last DOF of its joint (FIXED: to its parent's
attachment); bodies attached to no DOF (welded to the world or to static bodies) do not move.

The nodes are grouped by depth; every level is padded to the widest one so the two passes run as
``lax.scan`` loops over depth.

*Root blocks*: a multi-DOF joint hanging from the world (a floating base's FREE joint, a BALL or D6
root) is not expanded into a chain of levels. Its DOFs are solved together from the articulated
inertia of its body by one small dense factorisation (:func:`jaxart.dynamics.aba.aba_kernel`), the
usual multi-DOF form of the algorithm; the chain would add one sequential level per DOF to both
passes (six for a floating base, measured: a third of the humanoid step at batch 1024).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from jaxart.dynamics.layout import dynamics_layout


@dataclasses.dataclass(frozen=True, eq=False)
class AbaRun:
    """A run of consecutive levels padded to one width ``W`` (``V`` levels, root side first).

    Attributes:
        level_dof: ``(V, W)`` DOF in each level slot (padding ``nd``).
        child_pos: ``(V, W, C)`` row of each child in the previous (deeper) level's padded values
            (``W`` = the zero padding row). For the run's deepest level the rows refer to the run's
            entry values (the children sums gathered with ``entry_child``).
        parent_pos: ``(V, W)`` row of the parent in the previous (shallower) level's padded values
            (``W`` for roots and padding); for the run's first level, rows of the entry values.
        kinematic: ``(V, W)`` slot holds a DOF of a kinematic body (prescribed ``q̈ = 0``).
        entry_child: ``(W, C)`` rows, in the first level of the next (deeper) run, of the children of
            this run's deepest level (``None`` for the deepest run).
        entry_parent: ``(W,)`` rows, in the last level of the previous run, of the parents of this
            run's first level (``None`` for the first run).
    """

    level_dof: np.ndarray
    child_pos: np.ndarray
    parent_pos: np.ndarray
    kinematic: np.ndarray
    entry_child: np.ndarray | None
    entry_parent: np.ndarray | None

    @property
    def width(self) -> int:
        return int(self.level_dof.shape[1])


@dataclasses.dataclass(frozen=True, eq=False)
class AbaBlocks:
    """Root blocks: multi-DOF joints whose parent is the world (``R`` blocks of up to ``M`` DOFs).

    Attributes:
        dof: ``(R, M)`` DOFs of each block in joint order (padding ``nd``).
        last: ``(R,)`` last DOF of each block (the bodies of the joint are attached to it).
        children: ``(R, C)`` rows, in the padded values of the first level, of the DOFs whose parent
            is the block (padding: the level's zero row).
        slot_block: ``(W,)`` block that is the parent of each first-level slot (``R``: none).
        kinematic: ``(R,)`` block of a kinematic body (prescribed ``q̈ = 0``).
    """

    dof: np.ndarray
    last: np.ndarray
    children: np.ndarray
    slot_block: np.ndarray
    kinematic: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class AbaSchedule:
    """Index tables of the DOF tree (``nd`` DOFs, ``n`` bodies).

    Attributes:
        attach: ``(nd + 1, K)`` bodies attached to each DOF (padding ``n``; last row all padding).
        runs: The level runs, root side first (see :class:`AbaRun`).
        blocks: The root blocks (:class:`AbaBlocks`), or ``None``.
        dof_pos: ``(nd,)`` position of each DOF in the concatenation of the runs' flattened
            ``(V, W)`` slots followed by the blocks' flattened ``(R, M)`` DOFs (one past the end for
            non-tree DOFs).
    """

    attach: np.ndarray
    runs: tuple
    blocks: AbaBlocks | None
    dof_pos: np.ndarray


#: Levels are grouped into at most this many runs of their own width (each run is one ``lax.scan``
#: per pass): a floating base's six one-wide levels are not padded to the width of the limbs.
MAX_RUNS = 1


def aba_schedule(model) -> AbaSchedule:
    """The (cached) :class:`AbaSchedule` of ``model``'s static topology."""
    return _schedule(model.topology, model.schedule, dynamics_layout(model))


@functools.lru_cache(maxsize=64)
def _schedule(topo, sch, lay) -> AbaSchedule:
    n, nd = topo.body_count, topo.joint_dof_count
    att = _body_attachment(topo, sch, lay)
    parent = _dof_parents(topo, lay, att)
    attach = _attach_table(att, n, nd)
    block_dofs = _root_blocks(topo, lay, parent)
    in_block = np.zeros(nd + 1, bool)
    for dofs in block_dofs:
        in_block[dofs] = True
    block_of_last = {int(dofs[-1]): r for r, dofs in enumerate(block_dofs)}
    block_parent = np.array([block_of_last.get(int(p), -1) for p in parent], np.int64)
    parent = np.where(block_parent >= 0, nd, parent)  # children of a block are roots of the levels
    depth = np.full(nd, -1, np.int64)
    tree = np.flatnonzero(lay.in_tree_dof & ~in_block[:nd])
    for d in tree:
        chain = []
        c = int(d)
        while c != nd and depth[c] < 0:
            chain.append(c)
            c = int(parent[c])
        base = -1 if c == nd else int(depth[c])
        for k, node in enumerate(reversed(chain)):
            depth[node] = base + 1 + k
    sched = _level_tables(parent, depth, attach, lay.is_kinematic_dof, nd)
    if not block_dofs:
        return sched
    return _with_blocks(sched, block_dofs, block_parent, lay.is_kinematic_dof, nd)


def _root_blocks(topo, lay, parent: np.ndarray) -> list[np.ndarray]:
    """DOF ranges of the tree joints with at least two DOFs whose first DOF has no parent DOF."""
    nd, qs = topo.joint_dof_count, topo.joint_qd_start.array
    blocks = []
    for j in range(topo.joint_count):
        d0, d1 = int(qs[j]), int(qs[j + 1])
        if d1 - d0 >= 2 and lay.in_tree_dof[d0] and parent[d0] == nd:
            blocks.append(np.arange(d0, d1))
    return blocks


def _with_blocks(sched: AbaSchedule, block_dofs: list, block_parent: np.ndarray, kinematic, nd: int) -> AbaSchedule:
    """Add the root-block tables; the first level's parents of block children become entry rows."""
    run0 = sched.runs[0]
    w0 = run0.width
    r_count, m = len(block_dofs), max(len(d) for d in block_dofs)
    dof = np.full((r_count, m), nd, np.int64)
    for r, d in enumerate(block_dofs):
        dof[r, :len(d)] = d
    slot_block = np.full(w0, r_count, np.int64)
    kids = [[] for _ in range(r_count)]
    parent_pos = run0.parent_pos.copy()
    for w, d in enumerate(run0.level_dof[0]):
        if d < nd and block_parent[d] >= 0:
            slot_block[w] = block_parent[d]
            kids[block_parent[d]].append(w)
            parent_pos[0, w] = w
    children = np.full((r_count, max([len(k) for k in kids] + [1])), w0, np.int64)
    for r, k in enumerate(kids):
        children[r, :len(k)] = k
    runs = (dataclasses.replace(run0, parent_pos=parent_pos), *sched.runs[1:])
    offset = sum(run.level_dof.size for run in sched.runs)
    dof_pos = sched.dof_pos.copy()
    dof_pos[dof_pos == offset] = offset + dof.size
    for r, d in enumerate(block_dofs):
        dof_pos[d] = offset + r * m + np.arange(len(d))
    blocks = AbaBlocks(dof=dof, last=np.asarray([d[-1] for d in block_dofs], np.int64), children=children,
                       slot_block=slot_block, kinematic=np.asarray([kinematic[d[0]] for d in block_dofs], bool))
    return AbaSchedule(attach=sched.attach, runs=runs, blocks=blocks, dof_pos=dof_pos)


def _body_attachment(topo, sch, lay) -> np.ndarray:
    """``(n + 1,)`` DOF each body moves with (``nd`` if none; last entry the world)."""
    n, nd = topo.body_count, topo.joint_dof_count
    qs = topo.joint_qd_start.array
    att = np.full(n + 1, nd, np.int64)
    body_parent = sch.body_parent.array
    for j in sch.tree_joint.array:  # parents first
        b = int(topo.joint_child.array[j])
        d0, d1 = int(qs[j]), int(qs[j + 1])
        if d1 > d0 and lay.in_tree_dof[d0]:
            att[b] = d1 - 1
        elif topo.joint_articulation.array[j] >= 0:
            att[b] = att[body_parent[b]]
    return att


def _dof_parents(topo, lay, att: np.ndarray) -> np.ndarray:
    nd = topo.joint_dof_count
    qs = topo.joint_qd_start.array
    parent = np.full(nd, nd, np.int64)
    for j in range(topo.joint_count):
        d0, d1 = int(qs[j]), int(qs[j + 1])
        if d1 == d0 or not lay.in_tree_dof[d0]:
            continue
        pb = int(topo.joint_parent.array[j])
        parent[d0] = att[pb] if pb >= 0 else nd
        parent[d0 + 1:d1] = np.arange(d0, d1 - 1)
    return parent


def _attach_table(att: np.ndarray, n: int, nd: int) -> np.ndarray:
    bodies = [np.flatnonzero(att[:n] == d) for d in range(nd)]
    table = np.full((nd + 1, max([len(b) for b in bodies] + [1])), n, np.int64)
    for d, b in enumerate(bodies):
        table[d, :len(b)] = b
    return table


def _split_runs(widths: list[int], max_runs: int) -> list[tuple[int, int]]:
    """Contiguous level ranges minimising the padded slot count ``Σ V_r · max width``."""
    n = len(widths)
    cost = lambda a, b: (b - a) * max(widths[a:b])  # noqa: E731
    best = {(0, 0): (0, [])}
    for r in range(1, max_runs + 1):
        for b in range(1, n + 1):
            cands = [(best[(a, r - 1)][0] + cost(a, b), best[(a, r - 1)][1] + [(a, b)])
                     for a in range(b) if (a, r - 1) in best]
            if cands:
                best[(b, r)] = min(cands, key=lambda t: t[0])
    return min((best[(n, r)] for r in range(1, max_runs + 1) if (n, r) in best), key=lambda t: (t[0], len(t[1])))[1]


def _level_tables(parent, depth, attach, kinematic, nd: int) -> AbaSchedule:
    levels = [np.flatnonzero(depth == v) for v in range(int(depth.max(initial=-1)) + 1)] or [np.zeros(0, np.int64)]
    pos = np.zeros(nd + 1, np.int64)
    for lv in levels:
        pos[lv] = np.arange(len(lv))
    children = [[] for _ in range(nd)]
    for d in np.flatnonzero(depth >= 0):
        if parent[d] != nd:
            children[parent[d]].append(int(d))
    c_max = max([len(c) for c in children] + [1])
    ranges = _split_runs([max(len(lv), 1) for lv in levels], MAX_RUNS)
    widths = [max(max(len(lv) for lv in levels[a:b]), 1) for a, b in ranges]
    runs, dof_pos, offset = [], np.full(nd, -1, np.int64), 0
    for r, (a, b) in enumerate(ranges):
        w_r = widths[r]
        t = dict(level_dof=np.full((b - a, w_r), nd, np.int64), child_pos=np.full((b - a, w_r, c_max), w_r, np.int64),
                 parent_pos=np.full((b - a, w_r), w_r, np.int64), entry_child=None, entry_parent=None)
        if r + 1 < len(ranges):
            t["entry_child"] = np.full((w_r, c_max), widths[r + 1], np.int64)
        if r > 0:
            t["entry_parent"] = np.full(w_r, widths[r - 1], np.int64)
        for v in range(a, b):
            for w, d in enumerate(levels[v]):
                t["level_dof"][v - a, w] = d
                kids = pos[children[d]]
                if v == b - 1 and r + 1 < len(ranges):
                    t["entry_child"][w, :len(kids)] = kids
                    t["child_pos"][v - a, w, 0] = w
                else:
                    t["child_pos"][v - a, w, :len(kids)] = kids
                if v > 0 and v == a:
                    t["entry_parent"][w] = pos[parent[d]]
                    t["parent_pos"][v - a, w] = w
                elif v > 0:
                    t["parent_pos"][v - a, w] = pos[parent[d]]
            dof_pos[levels[v]] = offset + (v - a) * w_r + np.arange(len(levels[v]))
        offset += (b - a) * w_r
        runs.append(AbaRun(kinematic=np.append(kinematic, False)[t["level_dof"]], **t))
    dof_pos[dof_pos < 0] = offset
    return AbaSchedule(attach=attach, runs=tuple(runs), blocks=None, dof_pos=dof_pos)
