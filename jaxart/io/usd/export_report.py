"""What :func:`jaxart.io.usd.export_model` cannot write, for its one summary warning.

UsdPhysics has no schema for tendons, equality or mimic constraints, explicit contact pairs, joint
armature / friction / passive damping and stiffness / velocity limits / limit stiffness, or per-shape
contact stiffness, damping, torsional and rolling friction, margin and gap. A model feature is listed
only when it differs from what :meth:`~jaxart.ModelBuilder.add_usd` would give on re-import (a default
:class:`~jaxart.ModelBuilder`'s configs), so a model built with default settings exports silently.
Collision groups are listed only when they keep two written colliders apart that neither the filter
pairs nor parent/child filtering already keep apart.
"""

from __future__ import annotations

import numpy as np

from jaxart.collision.pairs import groups_collide, joint_filter_flags
from jaxart.sim.builder_shapes import SHAPE_FLAG_COLLIDE_SHAPES
from jaxart.sim.enums import JointType

_DOF_PARAMS = (("armature", "armature"), ("friction", "friction"), ("damping", "passive damping"),
               ("stiffness", "passive stiffness"), ("velocity_limit", "velocity limit"))
_LIMIT_PARAMS = (("limit_ke", "limit stiffness"), ("limit_kd", "limit damping"))
_SHAPE_PARAMS = (("ke", "contact stiffness ke"), ("kd", "contact damping kd"), ("kf", "friction stiffness kf"),
                 ("ka", "adhesion distance ka"), ("mu_torsional", "torsional friction"),
                 ("mu_rolling", "rolling friction"), ("margin", "margin"))


def unwritten(model, *, shapes: list[int], driven: set[int]) -> list[str]:
    """Model features ``export_model`` drops, each with the names of the elements that use them.

    Args:
        model: The exported :class:`~jaxart.Model`.
        shapes: Indices of the shapes that were written.
        driven: DOF indices written with a ``DriveAPI`` (their effort limit is its ``maxForce``).
    """
    m = model
    out = []
    for count, labels, what in ((m.equality_constraint_count, m.equality_constraint_label, "equality constraint"),
                                (m.constraint_mimic_count, m.constraint_mimic_label, "mimic constraint"),
                                (m.tendon.tendon_count, list(m.tendon.tendon_label), "tendon")):
        if count:
            out.append(f"{count} {what}(s): {_short(list(labels))}")
    pairs = np.asarray(m.topology.shape_explicit_contact_pairs).reshape(-1, 2)
    if len(pairs):
        out.append(f"{len(pairs)} explicit contact pair(s): "
                   f"{_short([(m.shape_label[a], m.shape_label[b]) for a, b in pairs])}")
    return out + _joint_params(m, driven) + _shape_params(m, shapes) + _groups(m, shapes)


def _short(items: list, n: int = 8) -> str:
    return str(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def _dof_owner(m) -> np.ndarray:
    starts = np.asarray(m.joint_qd_start)
    return np.searchsorted(starts, np.arange(m.joint_dof_count), side="right") - 1


def _joint_params(m, driven: set[int]) -> list[str]:
    from jaxart.sim.builder import ModelBuilder

    ref = ModelBuilder().default_joint_cfg
    owner = _dof_owner(m)
    jt = np.asarray(m.joint_type)
    skip = jt[owner] == int(JointType.DISTANCE)        # add_joint_distance sets its own DOF configs
    limited = (np.asarray(m.joint_limit_lower) > -1e10) | (np.asarray(m.joint_limit_upper) < 1e10)
    checks = [(name, label, ~skip) for name, label in _DOF_PARAMS]
    checks += [(name, label, ~skip & limited) for name, label in _LIMIT_PARAMS]
    undriven = np.array([d not in driven for d in range(m.joint_dof_count)], dtype=bool)
    checks.append(("effort_limit", "effort limit without a drive", ~skip & undriven))
    out = []
    for name, label, mask in checks:
        value = np.asarray(getattr(m, f"joint_{name}"), dtype=np.float64)
        bad = mask & ~np.isclose(value, float(getattr(ref, name)), rtol=1e-6, atol=0.0)  # float32 models
        if np.any(bad):
            joints = sorted({m.joint_label[j] for j in owner[bad]})
            out.append(f"joint {label} (no UsdPhysics attribute; re-imports as {float(getattr(ref, name))}) on "
                       f"joint(s) {_short(joints)}")
    return out


def _shape_params(m, shapes: list[int]) -> list[str]:
    from jaxart.sim.builder import ModelBuilder

    fresh = ModelBuilder()
    ref = fresh.default_shape_cfg
    idx = np.asarray(shapes, dtype=np.int64)
    checks = [(f"shape_material_{n}" if n not in ("margin",) else "shape_margin", label, float(getattr(ref, n)))
              for n, label in _SHAPE_PARAMS]
    checks.append(("shape_gap", "contact gap", float(fresh.rigid_gap if ref.gap is None else ref.gap)))
    out = []
    for field, label, want in checks:
        value = np.asarray(getattr(m, field), dtype=np.float64)[idx]
        bad = idx[~np.isclose(value, want, rtol=1e-6, atol=0.0)]  # float32 models
        if len(bad):
            out.append(f"shape {label} (not written; re-imports as {want}) on shape(s) "
                       f"{_short([m.shape_label[s] for s in bad])}")
    return out


def _groups(m, shapes: list[int]) -> list[str]:
    """Written colliders that collision groups (not filter pairs) keep apart."""
    idx = np.asarray(shapes, dtype=np.int64)
    group = np.asarray(m.shape_collision_group)[idx]
    live = ((np.asarray(m.shape_flags)[idx] & SHAPE_FLAG_COLLIDE_SHAPES) != 0) & (group != 0)
    idx, group = idx[live], group[live]        # group-0 colliders are written with collisions disabled
    if len(np.unique(group)) <= 1 and (len(group) == 0 or group[0] > 0):
        return []
    body = np.asarray(m.shape_body)[idx]
    ia, ib = np.triu_indices(len(idx), k=1)
    apart = ~(groups_collide(group[ia], group[ib]) | groups_collide(group[ib], group[ia]))
    apart &= (body[ia] != body[ib]) & ((body[ia] >= 0) | (body[ib] >= 0))
    filtered = {(int(a), int(b)) for a, b in np.asarray(m.topology.shape_collision_filter_pairs).reshape(-1, 2)}
    topo = m.topology
    parent, child = np.asarray(topo.joint_parent), np.asarray(topo.joint_child)
    family = {frozenset((int(parent[j]), int(child[j]))) for j in np.nonzero(joint_filter_flags(topo))[0]}
    lost = [(int(idx[a]), int(idx[b])) for a, b in zip(ia[apart], ib[apart], strict=True)
            if (min(idx[a], idx[b]), max(idx[a], idx[b])) not in filtered
            and frozenset((int(body[a]), int(body[b]))) not in family]
    if not lost:
        return []
    return [f"collision groups (not written as USD collision groups) keep {len(lost)} collider pair(s) apart: "
            f"{_short([(m.shape_label[a], m.shape_label[b]) for a, b in lost], 4)}"]
