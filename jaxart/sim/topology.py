"""Static model topology and the index schedules derived from it at ``finalize``.

Everything here is hashable Python/numpy data that becomes part of a jitted function's cache
key: changing it recompiles, changing a traced ``Model`` leaf does not.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxart.sim.enums import JointType
from jaxart.sim.static import StaticArray, StaticRecord


@dataclasses.dataclass(frozen=True, eq=False)
class Topology(StaticRecord):
    """Integer/label structure of a model (static under ``jit``).

    Attributes:
        body_count: Number of bodies ``n``.
        joint_count: Number of joints.
        joint_coord_count: Length of ``joint_q``.
        joint_dof_count: Length of ``joint_qd``.
        shape_count: Number of shapes.
        articulation_count: Number of articulations.
        joint_type: ``(joint_count,)`` :class:`JointType` values.
        joint_parent: ``(joint_count,)`` parent body index, −1 for the world.
        joint_child: ``(joint_count,)`` child body index.
        joint_q_start: ``(joint_count + 1,)`` first coordinate of each joint (with sentinel).
        joint_qd_start: ``(joint_count + 1,)`` first DOF of each joint (with sentinel).
        joint_dof_dim: ``(joint_count, 2)`` numbers of (linear, angular) DOFs.
        joint_articulation: ``(joint_count,)`` articulation index, −1 for joints outside any
            articulation (loop-closing or orphan joints).
        joint_target_mode: ``(joint_dof_count,)`` :class:`JointTargetMode` per DOF.
        joint_enabled: ``(joint_count,)`` whether the joint is active in solvers.
        articulation_start: ``(articulation_count,)`` first joint of each articulation.
        articulation_end: ``(articulation_count,)`` one past the last joint of each articulation.
        body_flags: ``(body_count,)`` :class:`BodyFlags` values.
        shape_type: ``(shape_count,)`` :class:`GeoType` values.
        shape_body: ``(shape_count,)`` owning body, −1 for static world shapes.
        shape_flags: ``(shape_count,)`` bit 0 visible, bit 1 collide shapes, bit 2 site.
        shape_collision_group: ``(shape_count,)`` collision groups (0 = none, −1 = all except other −1
            shapes).
        shape_collision_filter_pairs: ``(k, 2)`` explicit shape pairs that never collide.
        up_axis: Index of the up axis (0, 1, 2).
        body_label, joint_label, shape_label, articulation_label: Names.
        joint_collision_filter_parent: ``(joint_count,)`` bool; filter contacts between the shapes of
            each joint's parent and child bodies.
        shape_explicit_contact_pairs: ``(k, 2)`` int32 shape pairs ``(a < b)`` that are always tested for
            contact, bypassing groups and filters (``add_shape_contact_pair``, MJCF ``<pair>``; a jaxart
            extension, not Newton's ``shape_contact_pairs``, which is the derived candidate list).
            ``None`` = no explicit pairs.
        joint_drive_type: ``(joint_dof_count,)`` :class:`JointDriveType` per DOF (``FORCE`` or
            ``ACCELERATION``); ``None`` = all ``FORCE``.
    """

    body_count: int
    joint_count: int
    joint_coord_count: int
    joint_dof_count: int
    shape_count: int
    articulation_count: int
    joint_type: StaticArray
    joint_parent: StaticArray
    joint_child: StaticArray
    joint_q_start: StaticArray
    joint_qd_start: StaticArray
    joint_dof_dim: StaticArray
    joint_articulation: StaticArray
    joint_target_mode: StaticArray
    joint_enabled: StaticArray
    articulation_start: StaticArray
    articulation_end: StaticArray
    body_flags: StaticArray
    shape_type: StaticArray
    shape_body: StaticArray
    shape_flags: StaticArray
    shape_collision_group: StaticArray
    shape_collision_filter_pairs: StaticArray
    up_axis: int
    body_label: tuple[str, ...]
    joint_label: tuple[str, ...]
    shape_label: tuple[str, ...]
    articulation_label: tuple[str, ...]
    joint_collision_filter_parent: StaticArray | None = None
    shape_explicit_contact_pairs: StaticArray | None = None
    joint_drive_type: StaticArray | None = None

    def __repr__(self) -> str:
        return (
            f"Topology(bodies={self.body_count}, joints={self.joint_count}, "
            f"coords={self.joint_coord_count}, dofs={self.joint_dof_count}, "
            f"shapes={self.shape_count}, articulations={self.articulation_count})"
        )

    @property
    def tree_joints(self) -> np.ndarray:
        """Indices of joints that belong to an articulation (the kinematic tree)."""
        return np.nonzero(self.joint_articulation.array >= 0)[0]


@dataclasses.dataclass(frozen=True, eq=False)
class KinematicSchedule(StaticRecord):
    """Index schedule for vectorised FK/IK, derived from a :class:`Topology` at ``finalize``.

    Body arrays are extended by one sentinel slot ``n`` (the world: identity pose, zero twist).

    Attributes:
        body_parent: ``(n,)`` parent body through the body's tree joint; ``n`` (world) for roots
            and for bodies without a tree joint.
        body_joint: ``(n,)`` tree joint whose child is the body, −1 if none.
        tree_joint: ``(t,)`` tree joint indices, ordered by depth (parents first).
        doubling: Pointer-doubling rounds: each a ``(n + 1,)`` ancestor array at distance
            ``2**r`` (``n`` past the root). ``len(doubling) = ceil(log2(depth))``.
        lin_q, ang_q: ``(t, 3)`` gathers into ``joint_q`` extended by ``[0, 1]`` for the
            linear/angular scalar coordinates (index ``nq`` reads 0).
        lin_qd, ang_qd: ``(t, 3)`` gathers into ``joint_qd`` extended by ``[0]``.
        quat_q: ``(t, 4)`` gathers of the quaternion coordinates (identity padding).
        is_quat: ``(t,)`` joint stores a quaternion (BALL/FREE/DISTANCE).
        is_com_ref: ``(t,)`` joint's linear velocity is referenced at the child COM (FREE/DISTANCE).
        n_ang: ``(t,)`` number of angular axes (Euler chain length for D6/REVOLUTE).
        body_articulation: ``(n,)`` articulation of each body's tree joint, −1 if none.
    """

    body_parent: StaticArray
    body_joint: StaticArray
    tree_joint: StaticArray
    doubling: tuple[StaticArray, ...]
    lin_q: StaticArray
    ang_q: StaticArray
    lin_qd: StaticArray
    ang_qd: StaticArray
    quat_q: StaticArray
    is_quat: StaticArray
    is_com_ref: StaticArray
    n_lin: StaticArray
    n_ang: StaticArray
    body_articulation: StaticArray
    depth: int

    def __repr__(self) -> str:
        return f"KinematicSchedule(depth={self.depth}, rounds={len(self.doubling)})"


def build_kinematic_schedule(topo: Topology) -> KinematicSchedule:
    """Derive the FK/IK gather indices and the pointer-doubling rounds from the topology.

    Args:
        topo: The model topology.

    Returns:
        The schedule (all numpy, hashable).
    """
    n = topo.body_count
    nq, nd = topo.joint_coord_count, topo.joint_dof_count
    jtype = topo.joint_type.array
    parent, child = topo.joint_parent.array, topo.joint_child.array
    q_start, qd_start = topo.joint_q_start.array, topo.joint_qd_start.array
    dof_dim = topo.joint_dof_dim.array
    art = topo.joint_articulation.array

    body_parent = np.full(n, n, dtype=np.int32)
    body_joint = np.full(n, -1, dtype=np.int32)
    body_art = np.full(n, -1, dtype=np.int32)
    tree = [j for j in range(topo.joint_count) if art[j] >= 0]
    for j in tree:
        body_joint[child[j]] = j
        body_parent[child[j]] = parent[j] if parent[j] >= 0 else n
        body_art[child[j]] = art[j]

    depth_of = np.zeros(n + 1, dtype=np.int64)

    def depth(b: int) -> int:
        d, seen = 0, set()
        while b != n and body_joint[b] >= 0:
            if b in seen:
                raise ValueError(f"kinematic tree has a cycle through body {b}")
            seen.add(b)
            d += 1
            b = body_parent[b]
        return d

    for b in range(n):
        depth_of[b] = depth(b)
    tree = sorted(tree, key=lambda j: depth_of[child[j]])
    max_depth = int(depth_of[:n].max()) if n else 0

    ptr = np.concatenate([body_parent, [n]]).astype(np.int32)
    rounds = []
    # a body whose parent chain has length d needs ceil(log2(d)) rounds after the local step
    hops = 1
    while hops < max_depth + 1 and np.any(ptr[:n] != n):
        rounds.append(StaticArray(ptr.copy()))
        ptr = ptr[ptr]
        hops *= 2

    t = len(tree)
    lin_q = np.full((t, 3), nq, np.int32)
    ang_q = np.full((t, 3), nq, np.int32)
    lin_qd = np.full((t, 3), nd, np.int32)
    ang_qd = np.full((t, 3), nd, np.int32)
    quat_q = np.tile(np.array([nq, nq, nq, nq + 1], np.int32), (t, 1))
    is_quat = np.zeros(t, bool)
    is_com = np.zeros(t, bool)
    n_lin = np.zeros(t, np.int32)
    n_ang = np.zeros(t, np.int32)
    for k, j in enumerate(tree):
        nl, na = int(dof_dim[j, 0]), int(dof_dim[j, 1])
        n_lin[k], n_ang[k] = nl, na
        lin_qd[k, :nl] = qd_start[j] + np.arange(nl)
        ang_qd[k, :na] = qd_start[j] + nl + np.arange(na)
        jt = JointType(int(jtype[j]))
        if jt in (JointType.FREE, JointType.DISTANCE):
            lin_q[k] = q_start[j] + np.arange(3)
            quat_q[k] = q_start[j] + 3 + np.arange(4)
            is_quat[k] = True
            is_com[k] = True
        elif jt == JointType.BALL:
            quat_q[k] = q_start[j] + np.arange(4)
            is_quat[k] = True
        else:
            lin_q[k, :nl] = q_start[j] + np.arange(nl)
            ang_q[k, :na] = q_start[j] + nl + np.arange(na)

    return KinematicSchedule(
        body_parent=StaticArray(body_parent),
        body_joint=StaticArray(body_joint),
        tree_joint=StaticArray(np.array(tree, dtype=np.int32)),
        doubling=tuple(rounds),
        lin_q=StaticArray(lin_q),
        ang_q=StaticArray(ang_q),
        lin_qd=StaticArray(lin_qd),
        ang_qd=StaticArray(ang_qd),
        quat_q=StaticArray(quat_q),
        is_quat=StaticArray(is_quat),
        is_com_ref=StaticArray(is_com),
        n_lin=StaticArray(n_lin),
        n_ang=StaticArray(n_ang),
        body_articulation=StaticArray(body_art),
        depth=max_depth,
    )
