"""Entry-point helpers shared by the importers (``add_urdf``, ``add_mjcf``, ``add_usd``).

* :func:`text_source`: the ``source`` argument of the XML importers (path, ``os.PathLike``, bytes or text);
* :func:`check_base_args` / :func:`add_base_joint`: Newton's ``floating`` / ``base_joint`` /
  ``parent_body`` rules and the root joint they create;
* :func:`filter_self_collisions`: ``enable_self_collisions=False`` as collision filter pairs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from jaxart.sim.enums import JointType

_IDENTITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def text_source(source, fn: str) -> tuple[str, bool, str]:
    """Normalise an importer's ``source`` argument.

    Args:
        source: File path (``str`` / ``os.PathLike``), or XML text (``str`` / ``bytes``, starting with ``<``).
        fn: Importer name for messages (``"add_urdf"``).

    Returns:
        ``(source as str, whether it is XML text, description for messages)``.

    Raises:
        TypeError: ``source`` is neither a string nor a path.
    """
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, bytes):
        source = source.decode()
    if not isinstance(source, str):
        raise TypeError(f"{fn}: source must be a file path or an XML string, got {type(source).__name__}")
    is_xml = source.lstrip().startswith("<")
    return source, is_xml, "<XML string>" if is_xml else repr(source)


def check_base_args(builder, fn: str, *, floating, base_joint, parent_body) -> None:
    """Validate Newton's ``floating`` / ``base_joint`` / ``parent_body`` combination.

    Raises:
        TypeError: Wrong argument types.
        ValueError: ``floating`` with ``base_joint``, ``floating=True`` with a ``parent_body``, a body
            index that does not exist, or a ``base_joint`` that sets the bodies or frames.
    """
    if floating is not None and not isinstance(floating, bool):
        raise TypeError(f"{fn}: floating must be None, True or False, got {floating!r}")
    if floating is not None and base_joint is not None:
        raise ValueError(f"{fn}: floating and base_joint are mutually exclusive; pass one of them")
    if base_joint is not None and not isinstance(base_joint, dict):
        raise TypeError(f"{fn}: base_joint must be a dict of add_joint arguments, got {type(base_joint).__name__}")
    builder._check_body(parent_body, f"{fn}: parent_body", allow_world=True)
    if floating and parent_body != -1:
        raise ValueError(f"{fn}: floating=True needs parent_body=-1 (a FREE joint connects to the world), "
                         f"got parent_body={parent_body}; use base_joint for a mobile connection to a body")
    bad = sorted(set(base_joint or {}) & {"parent", "child", "parent_xform", "child_xform"})
    if bad:
        raise ValueError(f"{fn}: base_joint must not set {bad}; they come from parent_body and xform")


def add_base_joint(builder, child: int, *, parent_body: int, x_root: np.ndarray, floating: bool | None,
                   base_joint: dict | None, label: str, override: bool = False) -> int:
    """Connect an imported root body to ``parent_body`` (−1 = the world); returns the joint index.

    Args:
        builder: Target builder.
        child: The root body.
        parent_body: Body the root attaches to (−1 = world).
        x_root: Pose of the root body in ``parent_body``'s frame (the world's when −1).
        floating: ``True``: FREE joint (world only); otherwise FIXED at ``x_root`` unless ``base_joint``.
        base_joint: ``add_joint`` keyword arguments (``joint_type`` defaults to D6; a ``"label"`` is
            ignored here). Newton's frames: ``x_root``'s translation goes to ``parent_xform`` and its
            inverse rotation to ``child_xform``, so the joint axes are those of ``parent_body``;
            ``override=True`` puts all of ``x_root`` in ``parent_xform`` (axes in the root's frame).
        label: Joint label.
        override: See ``base_joint``.
    """
    if base_joint is not None:
        x_p, x_c = (x_root, _IDENTITY) if override else (
            np.concatenate([x_root[:3], _IDENTITY[3:]]),
            np.concatenate([np.zeros(3), np.asarray(x_root[3:]) * [-1, -1, -1, 1]]))
        kw = {"joint_type": JointType.D6, **{k: v for k, v in base_joint.items() if k != "label"}}
        return builder.add_joint(parent=parent_body, child=child, parent_xform=x_p, child_xform=x_c, label=label,
                                 **kw)
    if floating:
        return builder.add_joint_free(child, parent=-1, label=label)
    return builder.add_joint_fixed(parent_body, child, parent_xform=x_root, label=label)


def filter_self_collisions(builder, shapes: Sequence[int]) -> int:
    """Filter every pair of colliding ``shapes`` on different bodies (Newton's ``enable_self_collisions=False``).

    Pairs already filtered are not added twice. Returns the number of pairs added.
    """
    have = set(builder.shape_collision_filter_pairs)
    live = [int(s) for s in shapes if builder.shape_cfg[s].has_shape_collision]
    count = 0
    for k, a in enumerate(live):
        for c in live[k + 1:]:
            pair = (min(a, c), max(a, c))
            if builder.shape_body[a] != builder.shape_body[c] and pair not in have:
                builder.add_shape_collision_filter_pair(a, c)
                have.add(pair)
                count += 1
    return count
