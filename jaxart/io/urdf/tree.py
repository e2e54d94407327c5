"""URDF kinematic tree: validation, joint ordering and collapsing fixed joints (on the parsed records).

A URDF must be a single tree: every joint's parent and child links exist, each link has at most
one parent joint, exactly one link (the root) has none, and no joint chain loops back. Each
violation raises a ``ValueError`` naming the joints and links involved.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from jaxart.io.urdf.parse import UrdfInertial, UrdfJoint, UrdfRobot
from jaxart.sim.inertia import combine_mass
from jaxart.sim.validate import np_quat_to_matrix, np_transform_mul

IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def check_tree(robot: UrdfRobot) -> str:
    """Validate the link/joint graph; returns the root link's name.

    Raises:
        ValueError: Unknown parent/child links, a link with two parents, a joint whose parent and
            child coincide, no root or several roots, or a cycle.
    """
    links = robot.links
    if not links:
        raise ValueError(f"URDF robot {robot.name!r} has no <link>")
    parent_of: dict[str, str] = {}
    for j in robot.joints:
        for end in ("parent", "child"):
            if getattr(j, end) not in links:
                raise ValueError(f"joint {j.name!r}: {end} link {getattr(j, end)!r} does not exist")
        if j.parent == j.child:
            raise ValueError(f"joint {j.name!r}: parent and child are the same link {j.child!r}")
        if j.child in parent_of:
            raise ValueError(f"link {j.child!r} is the child of two joints, {parent_of[j.child]!r} and {j.name!r}; "
                             "URDF describes a tree (close loops with equality constraints after import)")
        parent_of[j.child] = j.name
    roots = [n for n in links if n not in parent_of]
    if len(roots) != 1:
        raise ValueError(f"URDF robot {robot.name!r} must have exactly one root link (a link that is no joint's "
                         f"child), got {roots if roots else 'none (the joints form a cycle)'}")
    reached = {roots[0]}
    for j in order_joints(robot, roots[0], "bfs"):
        reached.add(j.child)
    if len(reached) != len(links):
        raise ValueError(f"URDF joints form a cycle through links {sorted(set(links) - reached)}")
    return roots[0]


def order_joints(robot: UrdfRobot, root: str, ordering: str | None) -> list[UrdfJoint]:
    """Joints reachable from ``root`` in ``"dfs"`` / ``"bfs"`` order (children in file order), or file order.

    Raises:
        ValueError: ``ordering=None`` and a joint appears in the file before its parent link's joint.
    """
    children: dict[str, list[UrdfJoint]] = {}
    for j in robot.joints:
        children.setdefault(j.parent, []).append(j)
    if ordering is None:
        seen = {root}
        for j in robot.joints:
            if j.parent not in seen:
                raise ValueError(f"joint_ordering=None: joint {j.name!r} appears before the joint of its parent "
                                 f"link {j.parent!r}; use joint_ordering='dfs' or 'bfs'")
            seen.add(j.child)
        return list(robot.joints)
    out: list[UrdfJoint] = []
    if ordering == "bfs":
        queue = deque([root])
        while queue:
            for j in children.get(queue.popleft(), []):
                out.append(j)
                queue.append(j.child)
        return out
    stack = list(reversed(children.get(root, [])))
    while stack:
        j = stack.pop()
        out.append(j)
        stack.extend(reversed(children.get(j.child, [])))
    return out


def _inertial_in(x: np.ndarray, inertial: UrdfInertial) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, COM, inertia about COM in link axes) of ``inertial`` expressed in a frame where the link is at ``x``."""
    frame = np_transform_mul(x, inertial.origin)
    r = np_quat_to_matrix(frame[3:])
    return inertial.mass, frame[:3], r @ inertial.inertia @ r.T


def _merge_inertial(a: UrdfInertial | None, b: UrdfInertial | None, x_ab: np.ndarray) -> UrdfInertial | None:
    if b is None:
        return a
    mb, cb, ib = _inertial_in(x_ab, b)
    ma, ca, ia = _inertial_in(IDENTITY, a) if a is not None else (0.0, np.zeros(3), np.zeros((3, 3)))
    m, c, i = combine_mass(ma, ca, ia, mb, cb, ib)
    if m <= 0.0:
        c = ca if a is not None else cb
    return UrdfInertial(mass=m, origin=np.concatenate([c, IDENTITY[3:]]), inertia=i)


def collapse_fixed(robot: UrdfRobot, root: str, joints: list[UrdfJoint]) -> tuple[list[UrdfJoint], dict[str, str]]:
    """Merge every link attached by a FIXED joint into its parent (Newton's ``collapse_fixed_joints``).

    The child's inertial is combined with the parent's (parallel-axis theorem), its collision and
    visual geometry move to the parent with composed origins, and the joints below it are
    re-parented with composed origins. Mutates the link records.

    Args:
        robot: Parsed robot.
        root: Root link name.
        joints: Joints in build order (parents before children).

    Returns:
        ``(remaining joints, {link name: surviving link name})`` (every link, surviving ones map to themselves).
    """
    into: dict[str, tuple[str, np.ndarray]] = {root: (root, IDENTITY)}
    kept: list[UrdfJoint] = []
    for j in joints:
        keep_link, x_keep_parent = into[j.parent]
        x = np_transform_mul(x_keep_parent, j.origin)
        if j.type != "fixed":
            j.parent, j.origin = keep_link, x
            kept.append(j)
            into[j.child] = (j.child, IDENTITY)
            continue
        target, child = robot.links[keep_link], robot.links[j.child]
        target.inertial = _merge_inertial(target.inertial, child.inertial, x)
        for g in child.geoms:
            g.origin = np_transform_mul(x, g.origin)
        target.geoms += child.geoms
        child.geoms, child.inertial = [], None
        into[j.child] = (keep_link, x)
    return kept, {name: keep for name, (keep, _) in into.items()}
