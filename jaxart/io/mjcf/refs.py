"""What the MJCF equality and tendon importers share: how one ``add_mjcf`` maps MuJoCo bodies,
joints and names into the builder (:class:`MjcfRefs`), element keys, and the D6-DOF test for
scalar-joint references.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from jaxart.io.mjcf.joints import d6_ok


def element_key(element, i: int) -> str:
    """Key of a compiled-model element (``m.eq(i)``, ``m.tendon(i)``) in the importer's result: name or ``"#<id>"``."""
    return element.name or f"#{i}"


def is_d6_dof(m, mj_joint: int) -> bool:
    """Whether a MuJoCo joint becomes one DOF of a jaxart D6 joint (several joints in its body)."""
    body = int(m.jnt_bodyid[mj_joint])
    js = list(range(int(m.body_jntadr[body]), int(m.body_jntadr[body] + m.body_jntnum[body])))
    return len(js) > 1 and d6_ok(m, js)


@dataclass(frozen=True)
class MjcfRefs:
    """The import's map from MuJoCo references to the builder.

    Attributes:
        body_of: ``body_of(mj_body, x) -> (jaxart body, x in that body's frame)`` (the importer's).
        coord_start: First imported coordinate index in the builder.
        coord_map: MuJoCo ``qpos`` index of each imported jaxart coordinate.
        label: ``label(name) -> label`` applying the import's prefix.
        geom_shape: MuJoCo geom id → imported shape index.
        site_shape: MuJoCo site id → imported (site) shape index.
    """

    body_of: Callable
    coord_start: int
    coord_map: Sequence[int]
    label: Callable[[str], str]
    geom_shape: Mapping[int, int] = field(default_factory=dict)
    site_shape: Mapping[int, int] = field(default_factory=dict)

    def label_of(self, element) -> str | None:
        """Label of a named element (``None`` for an unnamed one: the builder's default)."""
        return self.label(element.name) if element.name else None

    def joint_dof(self, builder, m, mj_joint: int, what: str) -> tuple[int, int]:
        """``(jaxart joint, DOF within it)`` of the hinge/slide joint ``mj_joint`` that ``what`` references (DOF 0
        for a scalar joint, the joint's position among a D6's DOFs otherwise).

        Raises:
            ValueError: The joint was not imported.
        """
        adr = int(m.jnt_qposadr[mj_joint])
        hits = np.flatnonzero(np.asarray(self.coord_map) == adr)
        if hits.size != 1:
            raise ValueError(f"add_mjcf: joint {m.joint(mj_joint).name!r} of {what} was not imported")
        coord = self.coord_start + int(hits[0])
        starts = np.asarray(builder.joint_q_start)
        joint = int(np.searchsorted(starts, coord, side="right") - 1)
        return joint, coord - int(starts[joint])
