"""Static index bookkeeping for :class:`jaxart.selection.ArticulationView` (numpy only).

Everything here runs once at view construction: matching articulation labels, applying the
joint/link filters to a template articulation, checking that every selected articulation has
the same structure, and producing ``(articulation_count, k)`` absolute index arrays into the
model's per-joint / per-coordinate / per-DOF / per-body / per-shape arrays.
"""

from __future__ import annotations

import dataclasses
import re
from fnmatch import fnmatch

import numpy as np

from jaxart.sim.enums import JointType

Selector = str | list | re.Pattern | None


def leaf_name(label: str) -> str:
    """Last ``/``-separated component of a hierarchical label (Newton's ``get_name_from_label``)."""
    return label.rsplit("/", maxsplit=1)[-1]


def match_labels(labels: list[str], pattern: Selector, what: str) -> list[int]:
    """Indices of ``labels`` matching a glob, a list of globs, a compiled regex or a list of indices.

    Args:
        labels: Candidate labels.
        pattern: Glob string (``fnmatch``), list of glob strings (any matches), compiled regular
            expression (full match) or list of integer indices (returned as given).
        what: Argument name used in error messages.

    Returns:
        Matching indices in label order (or the given integer indices).

    Raises:
        TypeError: If ``pattern`` has an unsupported type or mixes element types.
        ValueError: If integer indices are out of range.
    """
    if isinstance(pattern, str):
        return [i for i, lab in enumerate(labels) if fnmatch(lab, pattern)]
    if isinstance(pattern, re.Pattern):
        return [i for i, lab in enumerate(labels) if pattern.fullmatch(lab) is not None]
    if not isinstance(pattern, list | tuple):
        raise TypeError(f"{what}: expected a glob string, a list of glob strings, a compiled regular expression "
                        f"or a list of int indices, got {type(pattern).__name__}")
    items = list(pattern)
    if all(isinstance(p, int | np.integer) and not isinstance(p, bool) for p in items):
        idx = [int(p) for p in items]
        bad = [i for i in idx if not 0 <= i < len(labels)]
        if bad:
            raise ValueError(f"{what}: indices {bad} are out of range [0, {len(labels)})")
        return idx
    if all(isinstance(p, str) for p in items):
        return [i for i, lab in enumerate(labels) if any(fnmatch(lab, p) for p in items)]
    kinds = sorted({type(p).__name__ for p in items})
    raise TypeError(f"{what}: expected a list of str patterns or a list of int indices, got {', '.join(kinds)}")


@dataclasses.dataclass(frozen=True)
class ViewLayout:
    """Static index tables of a view (``A`` = selected articulations, all numpy ``int64``).

    Attributes:
        articulation_ids: ``(A,)`` selected model articulations, ascending.
        joint: ``(A, nj)`` selected joints.
        coord: ``(A, nc)`` their ``joint_q`` coordinates.
        dof: ``(A, nd)`` their DOFs.
        link: ``(A, nl)`` selected links (bodies).
        shape: ``(A, ns)`` shapes of the selected links.
        root_joint: ``(A,)`` root joint of each articulation (first joint whose parent is outside it).
        root_link: ``(A,)`` child body of the root joint.
        root_coord: ``(A, 7)`` FREE/DISTANCE root coordinates (empty ``(A, 0)`` otherwise).
        root_dof: ``(A, 6)`` FREE/DISTANCE root DOFs (empty ``(A, 0)`` otherwise).
        root_parent: ``(A,)`` parent body of the root joint (−1 = world).
        root_coord_count: Coordinates of the root joint.
        root_type: :class:`JointType` of the root joints.
        names: Dict of name lists (joint_names, joint_labels, joint_dof_names, joint_coord_names,
            link_names, link_labels, shape_names, shape_labels) and count lists (joint_dof_counts,
            joint_coord_counts, link_shapes).
    """

    articulation_ids: np.ndarray
    joint: np.ndarray
    coord: np.ndarray
    dof: np.ndarray
    link: np.ndarray
    shape: np.ndarray
    root_joint: np.ndarray
    root_link: np.ndarray
    root_coord: np.ndarray
    root_dof: np.ndarray
    root_parent: np.ndarray
    root_coord_count: int
    root_type: JointType
    names: dict


def _articulation_parts(model, a: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Tree joints (model order), links (model order) and the shapes of each link of articulation ``a``."""
    topo = model.topology
    joints = np.nonzero(topo.joint_articulation.array == a)[0]
    links = np.unique(topo.joint_child.array[joints])
    shape_body = topo.shape_body.array
    shapes = [np.nonzero(shape_body == b)[0] for b in links]
    return joints, links, shapes


def _signature(model, joints: np.ndarray, links: np.ndarray, shapes: list[np.ndarray]) -> dict:
    """Structure of one articulation, comparable between articulations."""
    topo = model.topology
    local = {int(b): k for k, b in enumerate(links)}
    parents = [local.get(int(p), -1) for p in topo.joint_parent.array[joints]]
    children = [local[int(c)] for c in topo.joint_child.array[joints]]
    return {
        "joint count": len(joints),
        "joint types": [JointType(int(t)).name for t in topo.joint_type.array[joints]],
        "joint DOF dims": [tuple(int(x) for x in d) for d in topo.joint_dof_dim.array[joints]],
        "link count": len(links),
        "joint parents/children": list(zip(parents, children, strict=True)),
        "shapes per link": [len(s) for s in shapes],
    }


def _check_structure(model, art_ids: list[int], pattern) -> list:
    """Parts of every selected articulation; ValueError naming the first one that differs from the template."""
    labels = model.articulation_label
    parts = [_articulation_parts(model, a) for a in art_ids]
    ref = _signature(model, *parts[0])
    for a, p in zip(art_ids[1:], parts[1:], strict=True):
        sig = _signature(model, *p)
        for key, val in ref.items():
            if sig[key] != val:
                raise ValueError(
                    f"ArticulationView(pattern={pattern!r}): articulation {labels[a]!r} is not structurally identical "
                    f"to {labels[art_ids[0]]!r}: {key} {sig[key]} != {val}; select articulations with the same "
                    "joint types, DOF counts, links and shapes")
    return parts


def _select(names: list[str], include: Selector, exclude: Selector, what: str,
            extra_include: set[int] | None = None, extra_exclude: set[int] | None = None) -> list[int]:
    """Template positions kept by an include/exclude filter pair."""
    if include is None and extra_include is None:
        keep = set(range(len(names)))
    else:
        keep = set(match_labels(names, include, f"include_{what}")) if include is not None else set()
        keep |= extra_include or set()
    drop = set(match_labels(names, exclude, f"exclude_{what}")) if exclude is not None else set()
    drop |= extra_exclude or set()
    return sorted(keep - drop)


def _ranges(starts: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """Concatenated ``[starts[j], starts[j + 1])`` ranges of the given joints."""
    parts = [np.arange(starts[j], starts[j + 1]) for j in joints]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


def _types(types, what: str) -> set[int]:
    if types is None:
        return set()
    if isinstance(types, int | JointType):
        types = [types]
    out = set()
    for t in types:
        try:
            out.add(int(JointType(int(t))))
        except (ValueError, TypeError) as err:
            raise ValueError(f"{what}: {t!r} is not a JointType") from err
    return out


def build_layout(model, pattern, *, include_joints=None, exclude_joints=None, include_links=None,
                 exclude_links=None, include_joint_types=None, exclude_joint_types=None) -> ViewLayout:
    """Resolve a view's selection into static index tables (see :class:`ViewLayout`).

    Raises:
        ValueError: If nothing matches (the message lists the available labels), if the selected
            articulations differ in structure (naming the first that differs), or on bad filters.
    """
    labels = list(model.articulation_label)
    art_ids = sorted(set(match_labels(labels, pattern, "pattern")))
    if not art_ids:
        raise ValueError(f"ArticulationView: no articulation label matches pattern {pattern!r}; "
                         f"available labels: {labels}")
    topo = model.topology
    parts = _check_structure(model, art_ids, pattern)
    joints0, links0, _ = parts[0]
    jtype = topo.joint_type.array
    jnames = [leaf_name(topo.joint_label[j]) for j in joints0]
    inc_t = _types(include_joint_types, "include_joint_types")
    exc_t = _types(exclude_joint_types, "exclude_joint_types")
    jsel = _select(jnames, include_joints, exclude_joints, "joints",
                   extra_include={k for k, j in enumerate(joints0) if int(jtype[j]) in inc_t}
                   if include_joint_types is not None else None,
                   extra_exclude={k for k, j in enumerate(joints0) if int(jtype[j]) in exc_t})
    lnames = [leaf_name(topo.body_label[b]) for b in links0]
    lsel = _select(lnames, include_links, exclude_links, "links")

    q_start, qd_start = topo.joint_q_start.array, topo.joint_qd_start.array
    joint = np.stack([p[0][jsel] for p in parts]).astype(np.int64).reshape(len(parts), len(jsel))
    link = np.stack([p[1][lsel] for p in parts]).astype(np.int64).reshape(len(parts), len(lsel))
    coord = np.stack([_ranges(q_start, j) for j in joint])
    dof = np.stack([_ranges(qd_start, j) for j in joint])
    shape = np.stack([np.concatenate([p[2][k] for k in lsel] + [np.zeros(0, np.int64)]) for p in parts])
    shape = np.sort(shape.astype(np.int64), axis=1)

    r = _root_position(model, joints0, links0)
    roots = np.array([p[0][r] for p in parts], np.int64)
    root_type = JointType(int(jtype[roots[0]]))
    floating = root_type in (JointType.FREE, JointType.DISTANCE)
    root_coord = np.stack([np.arange(q_start[r], q_start[r] + 7) for r in roots]) if floating \
        else np.zeros((len(roots), 0), np.int64)
    root_dof = np.stack([np.arange(qd_start[r], qd_start[r] + 6) for r in roots]) if floating \
        else np.zeros((len(roots), 0), np.int64)
    names = _names(model, joints0[jsel], links0[lsel], shape[0])
    return ViewLayout(
        articulation_ids=np.asarray(art_ids, np.int64), joint=joint, coord=coord.reshape(len(parts), -1),
        dof=dof.reshape(len(parts), -1), link=link, shape=shape, root_joint=roots,
        root_link=topo.joint_child.array[roots].astype(np.int64),
        root_coord=root_coord.astype(np.int64), root_dof=root_dof.astype(np.int64),
        root_parent=topo.joint_parent.array[roots].astype(np.int64),
        root_coord_count=int(q_start[roots[0] + 1] - q_start[roots[0]]), root_type=root_type, names=names)


def _root_position(model, joints: np.ndarray, links: np.ndarray) -> int:
    """Position (within the articulation) of the first joint whose parent is outside the articulation."""
    parents = model.topology.joint_parent.array[joints]
    outside = ~np.isin(parents, links)
    return int(np.argmax(outside)) if outside.any() else 0


def _names(model, joints: np.ndarray, links: np.ndarray, shapes: np.ndarray) -> dict:
    """Name/label lists of the template articulation's selected elements (Newton's naming)."""
    topo = model.topology
    q_start, qd_start = topo.joint_q_start.array, topo.joint_qd_start.array
    out = {k: [] for k in ("joint_names", "joint_labels", "joint_dof_names", "joint_dof_counts",
                           "joint_coord_names", "joint_coord_counts", "link_names", "link_labels",
                           "shape_names", "shape_labels", "link_shapes")}
    for j in joints:
        name = leaf_name(topo.joint_label[j])
        out["joint_names"].append(name)
        out["joint_labels"].append(topo.joint_label[j])
        for key, starts in (("dof", qd_start), ("coord", q_start)):
            n = int(starts[j + 1] - starts[j])
            out[f"joint_{key}_counts"].append(n)
            out[f"joint_{key}_names"].extend([name] if n == 1 else [f"{name}:{k}" for k in range(n)])
    shape_body = topo.shape_body.array
    for b in links:
        out["link_names"].append(leaf_name(topo.body_label[b]))
        out["link_labels"].append(topo.body_label[b])
        out["link_shapes"].append([k for k, s in enumerate(shapes) if shape_body[s] == b])
    for s in shapes:
        out["shape_names"].append(leaf_name(topo.shape_label[s]))
        out["shape_labels"].append(topo.shape_label[s])
    return out
