"""Static per-articulation index blocks for the dynamics (numpy, derived once per topology).

Every articulation is a block of ``max_links`` links and ``max_dofs`` DOFs (padded); link ``k``
of articulation ``a`` is the child of joint ``articulation_start[a] + k`` and DOF ``d`` is
``joint_qd_start[articulation_start[a]] + d`` (Newton's ``eval_jacobian`` layout). Padding
slots point at sentinel rows (body ``n``, DOF ``nd``) that read zero. The ancestor masks replace
sequential tree passes by dense block products (CRBA as ``mask ∘ (Sᵀ Ic S)``).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from jaxart.sim.enums import BodyFlags, JointType


@dataclasses.dataclass(frozen=True, eq=False)
class DynamicsLayout:
    """Index bookkeeping of the articulation blocks (all numpy, static under ``jit``).

    Attributes:
        max_links: Links per block (``max_joints_per_articulation``).
        max_dofs: DOFs per block (``max_dofs_per_articulation``).
        link_body: ``(A, L)`` body of each link slot (``n`` for padding).
        dof_index: ``(A, D)`` global DOF of each DOF slot (``nd`` for padding).
        dof_valid: ``(A, D)`` slot holds a DOF.
        dof_body: ``(nd,)`` child body of each DOF's joint (``n`` for non-tree joints).
        link_dof: ``(A, L, D)`` DOF slot ``d`` moves link ``l`` (its body is an ancestor-or-self).
        subtree: ``(A, L, L)`` ``subtree[a, i, k]``: link ``k`` is in the subtree of link ``i``.
        dof_anc: ``(A, D, D)`` body of DOF ``i`` is an ancestor-or-self of the body of DOF ``j``.
        dof_desc: ``(A, D, D)`` body of DOF ``j`` is a strict ancestor of the body of DOF ``i``.
        dof_link: ``(A, D)`` link slot of each DOF's child body (0 for padding).
        is_free_dof: ``(nd,)`` DOF of a FREE/DISTANCE joint (world-wrench ``joint_f`` convention).
        is_kinematic_dof: ``(nd,)`` DOF whose child body is kinematic.
        in_tree_dof: ``(nd,)`` DOF of an articulated (tree) joint.
        is_lin_dof: ``(nd,)`` linear DOF.
        free_joint_dofs: ``(nd, 6)`` for FREE/DISTANCE DOFs the six DOFs of their joint (``nd`` else).
        sdot_rest: ``(nd, 6)`` DOFs of the same joint whose motion does *not* carry DOF ``d``'s column
            (``nd`` padding): ``Ṡ_d = (V_child − Σ_rest S_m q̇_m) ×ₘ S_d``. Earlier D6/REVOLUTE/PRISMATIC
            DOFs carry later axes (Euler chain, translation before rotation); quaternion joints' angular
            axes are fixed in the parent anchor frame, only their linear DOFs carry them.
    """

    max_links: int
    max_dofs: int
    link_body: np.ndarray
    dof_index: np.ndarray
    dof_valid: np.ndarray
    dof_body: np.ndarray
    link_dof: np.ndarray
    subtree: np.ndarray
    dof_anc: np.ndarray
    dof_desc: np.ndarray
    dof_link: np.ndarray
    is_free_dof: np.ndarray
    is_kinematic_dof: np.ndarray
    in_tree_dof: np.ndarray
    is_lin_dof: np.ndarray
    free_joint_dofs: np.ndarray
    sdot_rest: np.ndarray


def dynamics_layout(model) -> DynamicsLayout:
    """The (cached) :class:`DynamicsLayout` of ``model``'s static topology."""
    return _layout(model.topology, model.schedule)


@functools.lru_cache(maxsize=64)
def _layout(topo, sch) -> DynamicsLayout:
    dof = _dof_tables(topo)
    blocks = _block_tables(topo, sch, dof["dof_body"])
    flags = topo.body_flags.array
    in_tree = dof["in_tree_dof"]
    is_kin = np.zeros(topo.joint_dof_count, bool)
    is_kin[in_tree] = (flags[dof["dof_body"][in_tree]] & int(BodyFlags.KINEMATIC)) != 0
    return DynamicsLayout(**blocks, **dof, is_kinematic_dof=is_kin)


def _dof_tables(topo) -> dict:
    """Per-DOF tables: child body, joint kind flags, FREE joint groups and the ``Ṡ`` carriers."""
    n, nd = topo.body_count, topo.joint_dof_count
    qd_start, dof_dim = topo.joint_qd_start.array, topo.joint_dof_dim.array
    child, jtype, art = topo.joint_child.array, topo.joint_type.array, topo.joint_articulation.array
    out = dict(dof_body=np.full(nd, n, np.int64), is_free_dof=np.zeros(nd, bool), in_tree_dof=np.zeros(nd, bool),
               is_lin_dof=np.zeros(nd, bool), free_joint_dofs=np.full((nd, 6), nd, np.int64),
               sdot_rest=np.full((nd, 6), nd, np.int64))
    for j in range(topo.joint_count):
        d0, nj = qd_start[j], qd_start[j + 1] - qd_start[j]
        jt = JointType(int(jtype[j]))
        out["is_lin_dof"][d0:d0 + dof_dim[j, 0]] = True
        if jt in (JointType.FREE, JointType.DISTANCE):
            out["is_free_dof"][d0:d0 + nj] = True
            out["free_joint_dofs"][d0:d0 + nj] = np.arange(d0, d0 + 6)
        quat = jt in (JointType.FREE, JointType.DISTANCE, JointType.BALL)
        for k in range(nj):
            carry = [m for m in range(k) if not (quat and m >= dof_dim[j, 0])]
            rest = [d0 + m for m in range(nj) if m not in carry]
            out["sdot_rest"][d0 + k, :len(rest)] = rest
        if art[j] >= 0:
            out["dof_body"][d0:d0 + nj] = child[j]
            out["in_tree_dof"][d0:d0 + nj] = True
    return out


def _block_tables(topo, sch, dof_body: np.ndarray) -> dict:
    """Per-articulation padded index blocks and ancestor masks."""
    n, nd = topo.body_count, topo.joint_dof_count
    starts, ends = topo.articulation_start.array, topo.articulation_end.array
    qd_start, child = topo.joint_qd_start.array, topo.joint_child.array
    body_parent = sch.body_parent.array
    a_count = topo.articulation_count
    L = max([e - s for s, e in zip(starts, ends, strict=True)] + [1])
    D = max([qd_start[e] - qd_start[s] for s, e in zip(starts, ends, strict=True)] + [1])
    t = dict(max_links=int(L), max_dofs=int(D), link_body=np.full((a_count, L), n, np.int64),
             dof_index=np.full((a_count, D), nd, np.int64), link_dof=np.zeros((a_count, L, D), bool),
             subtree=np.zeros((a_count, L, L), bool), dof_anc=np.zeros((a_count, D, D), bool),
             dof_link=np.zeros((a_count, D), np.int64))
    for a, (s, e) in enumerate(zip(starts, ends, strict=True)):
        bodies = child[s:e]
        t["link_body"][a, :e - s] = bodies
        dofs = np.arange(qd_start[s], qd_start[e])
        t["dof_index"][a, :len(dofs)] = dofs
        link_of_body = {int(b): k for k, b in enumerate(bodies)}
        _check_root(topo, sch, a, s, e, link_of_body)
        for k, b in enumerate(bodies):  # mark k in the subtree of each of its ancestors
            c = int(b)
            while c != n and c in link_of_body:
                t["subtree"][a, link_of_body[c], k] = True
                c = int(body_parent[c])
        links = np.array([link_of_body[int(dof_body[g])] for g in dofs], np.int64)
        t["dof_link"][a, :len(dofs)] = links
        t["link_dof"][a, :, :len(dofs)] = t["subtree"][a][links].T
        t["dof_anc"][a, :len(dofs), :len(dofs)] = t["subtree"][a][np.ix_(links, links)]
    t["dof_valid"] = t["dof_index"] < nd
    t["dof_desc"] = np.swapaxes(t["dof_anc"], -1, -2) & ~t["dof_anc"]
    return t


def _check_root(topo, sch, a: int, s: int, e: int, link_of_body: dict) -> None:
    for j in range(s, e):
        pb = int(topo.joint_parent.array[j])
        if pb >= 0 and pb not in link_of_body and sch.body_joint.array[pb] >= 0:
            raise ValueError(
                f"dynamics: articulation {topo.articulation_label[a]!r} hangs from body {topo.body_label[pb]!r} "
                f"of another articulation (joint {topo.joint_label[j]!r}); reduced-coordinate dynamics needs "
                "each articulation's root attached to the world or to a static body")


@functools.lru_cache(maxsize=64)
def body_slot_masks(lay: DynamicsLayout, body_count: int) -> np.ndarray:
    """``(n + 1, A·D)`` static masks: flat DOF slot ``k`` moves body ``b`` (last row: static, all zero)."""
    a_count, links = lay.link_body.shape
    masks = np.zeros((body_count + 1, a_count * lay.max_dofs), bool)
    for a in range(a_count):
        for lk in range(links):
            b = int(lay.link_body[a, lk])
            if b < body_count:
                masks[b, a * lay.max_dofs:(a + 1) * lay.max_dofs] = lay.link_dof[a, lk]
    return masks
