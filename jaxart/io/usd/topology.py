"""Articulation trees of a USD stage: which joints form trees, which close loops, which are orphans.

Rules (Newton's USD semantics):

* Every ``ArticulationDesc`` (a ``PhysicsArticulationRootAPI``) lists its joints; those not marked
  ``physics:excludeFromArticulation`` are tree candidates. A breadth-first walk from the world (joints
  to the world make a fixed or jointed base) and then from a floating root (the root-API prim when it
  is a body, else a body that is never a joint's ``body1``, else the first by path) picks one tree
  joint per body; each connected tree becomes one jaxart articulation.
* Candidates that would close a cycle, and excluded joints whose two bodies are both in trees, are
  loop-closing joints: added outside every articulation (excluded ones silently, others reported).
* Other joints are orphans (no articulation covers them): added outside every articulation and
  reported; ``finalize(skip_validation_joints=True)`` and a maximal-coordinate solver are then needed.
* Bodies in no tree and not the child of an orphan joint are free bodies (FREE joint and their own
  articulation, as ``ModelBuilder.add_body``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TreeJoint:
    """A joint of a tree: ``path`` (``None`` for an added FREE/FIXED root), oriented parent → child."""

    path: str | None
    parent: str  # "" = world
    child: str
    swapped: bool = False


@dataclass
class Plan:
    """Trees (one list of :class:`TreeJoint` per articulation, with labels) and the remaining joints."""

    trees: list[tuple[str, list[TreeJoint]]] = field(default_factory=list)
    loops: list[str] = field(default_factory=list)
    unmarked_loops: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    body_order: list[str] = field(default_factory=list)


def plan_topology(bodies: dict, joints: dict, articulations: dict) -> Plan:
    """Plan trees over the stage.

    Args:
        bodies: ``{body path: RigidBodyDesc}``.
        joints: ``{joint path: (body0 path, body1 path, excludeFromArticulation)}``, "" = world.
        articulations: ``{articulation path: ArticulationDesc}``.

    Returns:
        The :class:`Plan`.
    """
    plan, in_tree, used = Plan(), set(), set()
    for art_path, art in sorted(articulations.items()):
        cands = sorted(str(j) for j in art.articulatedJoints if str(j) in joints and str(j) not in used)
        tree = [j for j in cands if not joints[j][2]]
        members = {str(b) for b in art.articulatedBodies if str(b) in bodies} - in_tree
        members |= {b for j in tree for b in joints[j][:2] if b} - in_tree
        hint = art_path if art_path in bodies else None
        for k, comp in enumerate(_grow(members, tree, joints, hint, used)):
            label = art_path if k == 0 else comp[0].child
            plan.trees.append((label, comp))
            in_tree |= {t.child for t in comp}
    rest = sorted(j for j in joints if j not in used)
    for j in rest:
        b0, b1, excluded = joints[j]
        if all(b in in_tree or b == "" for b in (b0, b1)):
            (plan.loops if excluded else plan.unmarked_loops).append(j)
        else:
            plan.orphans.append(j)
    orphan_children = {joints[j][1] or joints[j][0] for j in plan.orphans}
    for b in sorted(bodies):
        if b not in in_tree and b not in orphan_children:
            plan.trees.append((b, [TreeJoint(None, "", b)]))
            in_tree.add(b)
    plan.body_order = [t.child for _, comp in plan.trees for t in comp]
    plan.body_order += sorted(set(bodies) - set(plan.body_order))
    return plan


def _grow(members: set, tree: list, joints: dict, hint: str | None, used: set) -> list[list[TreeJoint]]:
    """Breadth-first trees over ``members``: first from the world, then from floating roots."""
    comps, seen = [], set()

    def walk(start: set, comp: list) -> None:
        frontier = list(start)
        while frontier:
            nxt = []
            for node in frontier:
                for j in tree:
                    if j in used:
                        continue
                    b0, b1, _ = joints[j]
                    if node not in (b0, b1) or (node == "" and "" not in (b0, b1)):
                        continue
                    other = b1 if b0 == node else b0
                    if other == "" or other in seen or other not in members:
                        continue
                    comp.append(TreeJoint(j, node, other, swapped=(other == b0)))
                    used.add(j)
                    seen.add(other)
                    nxt.append(other)
            frontier = nxt

    world: list[TreeJoint] = []
    walk({""}, world)
    # one articulation per world-rooted tree: split by the root joint's subtree
    comps += _split(world)
    while members - seen:
        left = sorted(members - seen)
        children = {joints[j][1] for j in tree if joints[j][0] in left and joints[j][1] in left}
        root = hint if hint in left else next((b for b in left if b not in children), left[0])
        seen.add(root)
        comp = [TreeJoint(None, "", root)]
        walk({root}, comp)
        comps.append(comp)
    return comps


def _split(joints: list[TreeJoint]) -> list[list[TreeJoint]]:
    """Split a world-rooted forest into trees (one per joint to the world), each in BFS order."""
    roots = [t for t in joints if t.parent == ""]
    owner = {t.child: t.child for t in roots}
    for t in joints:
        if t.parent:
            owner[t.child] = owner[t.parent]
    return [[t for t in joints if owner[t.child] == r.child] for r in roots]
