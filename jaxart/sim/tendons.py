"""Static structure of tendons and their ``finalize`` wiring.

A tendon is a scalar length ``L(q)`` with a spring–damper, a penalty limit (with a margin), dry friction and an
armature (an inertia of the length, MuJoCo's semantics):

* FIXED (MuJoCo ``<fixed>``, PhysX fixed tendon): ``L = Σ_k c_k q_k`` over DOF coordinates ``q_k`` (the
  coordinate of a REVOLUTE/PRISMATIC joint, or of one DOF of a D6 joint), so ``∂L/∂q`` is the constant
  coefficient vector.
* SPATIAL (MuJoCo ``<spatial>``, PhysX spatial tendon): ``L = Σ_i |p_{i+1} − p_i|`` over attachment points
  ``p_i`` fixed on bodies (or the world), in world coordinates; a segment between two points may wrap around a
  sphere or cylinder (:mod:`jaxart.dynamics.tendon_wrap`), and a pulley starts a branch whose segment lengths are
  divided by its divisor (MuJoCo's ``<pulley divisor=…>``). Each path entry has a :class:`TendonPathKind`.

The integer/boolean/label fields are static (:class:`TendonTopology`, part of ``Model``'s aux data);
coefficients, attachment points, gains, spring lengths and limits are traced ``Model`` leaves (see
:class:`~jaxart.sim.model.Model`). The forces are in :mod:`jaxart.dynamics.tendon_forces`.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

from jaxart.sim.static import StaticArray, StaticRecord, static_ints


class TendonType(enum.IntEnum):
    """Tendon kinds (values match MuJoCo's ``mjtWrap`` usage: fixed = joint wraps, spatial = site wraps)."""

    FIXED = 0
    SPATIAL = 1


class TendonPathKind(enum.IntEnum):
    """Kinds of the entries of a spatial tendon's path (``tendon_attachment_kind``).

    SITE: a point on the path. SPHERE / CYLINDER: a wrapping geometry between two SITE entries (point = centre,
    ``tendon_attachment_axis`` = cylinder axis, ``tendon_attachment_param`` = radius). SIDE: the side point of the
    geometry entry before it (on any body; inside the geometry: MuJoCo's inside wrapping). PULLEY: starts a
    branch (``tendon_attachment_param`` = divisor).
    """

    SITE = 0
    SPHERE = 1
    CYLINDER = 2
    SIDE = 3
    PULLEY = 4


#: Static per-tendon fields exposed on ``Model`` as numpy arrays (labels as lists).
TENDON_STATIC_FIELDS = (
    "tendon_type",
    "tendon_joint_start",
    "tendon_joint",
    "tendon_joint_dof",
    "tendon_attachment_start",
    "tendon_attachment_body",
    "tendon_attachment_kind",
    "tendon_label",
    "tendon_count",
)


@dataclasses.dataclass(frozen=True, eq=False)
class TendonTopology(StaticRecord):
    """Static structure of a model's tendons (hashable; part of ``Model``'s static data).

    Attributes:
        tendon_type: ``(nten,)`` :class:`TendonType` values.
        tendon_joint_start: ``(nten + 1,)`` start of each tendon's entries in ``tendon_joint``
            (empty ranges for SPATIAL tendons).
        tendon_joint: ``(ntenjoint,)`` joint of each FIXED-tendon entry (REVOLUTE, PRISMATIC or D6).
        tendon_joint_dof: ``(ntenjoint,)`` DOF of each entry within its joint (0 for scalar joints; a D6's
            linear DOFs first, then its angular ones), so the entry's coordinate is
            ``joint_q[joint_q_start[j] + k]`` and its velocity ``joint_qd[joint_qd_start[j] + k]``.
        tendon_attachment_start: ``(nten + 1,)`` start of each tendon's points in
            ``tendon_attachment_body`` (empty ranges for FIXED tendons).
        tendon_attachment_body: ``(nattach,)`` body of each SPATIAL attachment point, −1 = world.
        tendon_attachment_kind: ``(nattach,)`` :class:`TendonPathKind` of each entry.
        tendon_label: ``nten`` names.
    """

    tendon_type: StaticArray
    tendon_joint_start: StaticArray
    tendon_joint: StaticArray
    tendon_joint_dof: StaticArray
    tendon_attachment_start: StaticArray
    tendon_attachment_body: StaticArray
    tendon_attachment_kind: StaticArray
    tendon_label: tuple[str, ...]

    @property
    def tendon_count(self) -> int:
        """Number of tendons."""
        return len(self.tendon_label)


def _starts(counts: list[int]) -> StaticArray:
    return StaticArray(np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int32))


def tendon_fields(builder, arr) -> dict:
    """``Model`` constructor arguments for the builder's tendons.

    Args:
        builder: The :class:`~jaxart.ModelBuilder`.
        arr: ``arr(values, shape)`` → traced array of the model's dtype (from ``finalize``).

    Returns:
        Keyword arguments: the traced float fields and ``tendon`` (:class:`TendonTopology`).
    """
    b = builder
    nt = b.tendon_count
    joints = [j for js in b.tendon_joints for j in js]
    bodies = [a for bs in b.tendon_attachment_bodies for a in bs]

    topo = TendonTopology(
        tendon_type=static_ints(b.tendon_type),
        tendon_joint_start=_starts([len(js) for js in b.tendon_joints]),
        tendon_joint=static_ints(joints),
        tendon_joint_dof=static_ints([k for ks in b.tendon_joint_dofs for k in ks]),
        tendon_attachment_start=_starts([len(bs) for bs in b.tendon_attachment_bodies]),
        tendon_attachment_body=static_ints(bodies),
        tendon_attachment_kind=static_ints([k for ks in b.tendon_attachment_kinds for k in ks]),
        tendon_label=tuple(b.tendon_label),
    )
    return dict(
        tendon_joint_coef=arr([c for cs in b.tendon_joint_coefs for c in cs], (len(joints),)),
        tendon_attachment_point=arr([p for ps in b.tendon_attachment_points for p in ps], (len(bodies), 3)),
        tendon_attachment_axis=arr([a for xs in b.tendon_attachment_axes for a in xs], (len(bodies), 3)),
        tendon_attachment_param=arr([v for vs in b.tendon_attachment_params for v in vs], (len(bodies),)),
        tendon_stiffness=arr(b.tendon_stiffness, (nt,)),
        tendon_damping=arr(b.tendon_damping, (nt,)),
        tendon_springlength=arr(b.tendon_springlength, (nt, 2)),
        tendon_limit_lower=arr(b.tendon_limit_lower, (nt,)),
        tendon_limit_upper=arr(b.tendon_limit_upper, (nt,)),
        tendon_limit_ke=arr(b.tendon_limit_ke, (nt,)),
        tendon_limit_kd=arr(b.tendon_limit_kd, (nt,)),
        tendon_target_ke=arr(b.tendon_target_ke, (nt,)),
        tendon_target_kd=arr(b.tendon_target_kd, (nt,)),
        tendon_target_length=arr(b.tendon_target_length, (nt,)),
        tendon_target_velocity=arr(b.tendon_target_velocity, (nt,)),
        tendon_effort_limit=arr(b.tendon_effort_limit, (nt,)),
        tendon_frictionloss=arr(b.tendon_frictionloss, (nt,)),
        tendon_armature=arr(b.tendon_armature, (nt,)),
        tendon_margin=arr(b.tendon_margin, (nt,)),
        tendon=topo,
    )
