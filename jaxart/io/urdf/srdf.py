"""Allowed-collision lists of SRDF files (MoveIt's semantic robot description) for the URDF importer.

An SRDF's ``<disable_collisions link1="..." link2="..." reason="..."/>`` elements name link pairs that
never need contact checks (adjacent links, pairs that cannot touch, pairs in contact at the default
pose). :func:`add_urdf`'s ``srdf=`` argument reads them with :func:`read_disabled_pairs` and filters
every pair of colliding shapes of the two links with
:meth:`~jaxart.ModelBuilder.add_shape_collision_filter_pair` (:func:`filter_link_pairs`). Other SRDF
elements (groups, group states, end effectors, virtual joints, passive joints) are not read.

``srdf=True`` looks the file up next to the URDF, where ROS description packages and
``example-robot-data`` keep it: ``<urdf folder>/../srdf/<urdf stem>.srdf``, then
``<urdf folder>/<urdf stem>.srdf``.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence


def resolve_srdf(srdf, urdf_dir: str | None, urdf_name: str) -> str | None:
    """The SRDF path ``add_urdf(srdf=...)`` asks for, or ``None`` for none.

    Args:
        srdf: ``None`` / ``False`` (none), ``True`` (look next to the URDF, see the module docstring) or a path.
        urdf_dir: Folder of the URDF file (``None`` when it was given as an XML string).
        urdf_name: The URDF's file name or URI (its stem names the SRDF).

    Raises:
        TypeError: ``srdf`` is not a bool, ``None``, str or path.
        ValueError: ``srdf=True`` for a URDF string, or no SRDF in the places searched (the message lists them).
    """
    if srdf is None or srdf is False:
        return None
    if srdf is not True:
        if not isinstance(srdf, (str, os.PathLike)):
            raise TypeError(f"add_urdf: srdf must be None, a bool or a file path, got {type(srdf).__name__}")
        return os.fspath(srdf)
    if urdf_dir is None:
        raise ValueError("add_urdf: srdf=True needs a URDF file (the source is an XML string); pass srdf=<path>")
    stem = os.path.splitext(os.path.basename(urdf_name))[0]
    tried = [os.path.join(os.path.dirname(urdf_dir), "srdf", stem + ".srdf"), os.path.join(urdf_dir, stem + ".srdf")]
    for path in tried:
        if os.path.isfile(path):
            return path
    raise ValueError(f"add_urdf: srdf=True found no SRDF for {urdf_name!r}; looked for " + ", ".join(tried))


def read_disabled_pairs(path: str) -> list[tuple[str, str]]:
    """The ``(link1, link2)`` pairs of an SRDF file's ``<disable_collisions>`` elements, in file order.

    Args:
        path: SRDF file path.

    Raises:
        ValueError: The file is missing or is not XML with a ``<robot>`` root, or an element lacks
            ``link1`` or ``link2``.
    """
    if not os.path.isfile(path):
        raise ValueError(f"add_urdf: srdf file {path!r} does not exist")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ValueError(f"add_urdf: srdf file {path!r} is not valid XML: {e}") from e
    if root.tag != "robot":
        raise ValueError(f"add_urdf: srdf file {path!r} has root <{root.tag}>, expected <robot>")
    pairs = []
    for el in root.iter("disable_collisions"):
        a, b = el.get("link1"), el.get("link2")
        if not a or not b:
            raise ValueError(f"add_urdf: srdf file {path!r}: <disable_collisions> needs link1 and link2, got "
                             f"{dict(el.attrib)}")
        pairs.append((a, b))
    return pairs


def check_links(pairs: Sequence[tuple[str, str]], links, where: str) -> None:
    """Raise ``ValueError`` naming the first link of ``pairs`` that is not among the URDF's ``links``."""
    for pair in pairs:
        for link in pair:
            if link not in links:
                raise ValueError(f"add_urdf: srdf {where!r} disables collisions of link {link!r}, which the URDF "
                                 f"does not have (links: {sorted(links)})")


def filter_link_pairs(builder, pairs: Sequence[tuple[str, str]], link_bodies: dict[str, int], shapes: Sequence[int],
                      where: str) -> int:
    """Filter every pair of colliding ``shapes`` between the bodies of each link pair.

    Args:
        builder: The :class:`~jaxart.ModelBuilder` the robot was imported into.
        pairs: ``(link1, link2)`` URDF link names.
        link_bodies: URDF link name → body index (merged links map to the body they merged into).
        shapes: The robot's imported shape indices.
        where: The SRDF's path (for error messages).

    Returns:
        The number of shape pairs added to the builder's collision filter.

    Raises:
        ValueError: A pair names a link the URDF does not have (the message names the link).
    """
    check_links(pairs, link_bodies, where)
    by_body: dict[int, list[int]] = {}
    for s in shapes:
        if builder.shape_cfg[s].has_shape_collision:
            by_body.setdefault(int(builder.shape_body[s]), []).append(int(s))
    have = set(builder.shape_collision_filter_pairs)
    count = 0
    for a, b in pairs:
        ba, bb = link_bodies[a], link_bodies[b]
        if ba == bb:
            continue
        for sa in by_body.get(ba, []):
            for sb in by_body.get(bb, []):
                key = (min(sa, sb), max(sa, sb))
                if key not in have:
                    builder.add_shape_collision_filter_pair(sa, sb)
                    have.add(key)
                    count += 1
    return count
