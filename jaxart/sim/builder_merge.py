"""``ModelBuilder.add_builder``: copy one builder's content into another with index offsets."""

from __future__ import annotations

import copy

import numpy as np

from jaxart.sim.enums import JointType
from jaxart.sim.validate import np_quat_rotate, np_transform_inverse, np_transform_mul


def merge_builder(dst, src, xform: np.ndarray, prefix: str | None) -> None:
    """Append ``src``'s bodies, joints, shapes and articulations to ``dst``.

    Args:
        dst: Destination builder (mutated).
        src: Source builder (read only).
        xform: Transform applied to world-attached content. As in Newton, world-attached FREE roots
            keep their ``joint_X_p`` and move through their coordinates (``joint_q`` becomes
            ``(X_p⁻¹ · xform · X_p) · joint_q``, ``joint_qd`` rotated alike); every other
            world-attached joint gets ``joint_X_p ← xform · joint_X_p``.
        prefix: Optional label prefix (``"<prefix>/<label>"``).
    """
    b0, j0, s0 = dst.body_count, dst.joint_count, dst.shape_count
    a0, q0, d0 = dst.articulation_count, dst.joint_coord_count, dst.joint_dof_count

    def lab(name: str, existing: list[str], kind: str) -> str:
        new = f"{prefix}/{name}" if prefix else name
        if new in existing:
            raise ValueError(f"add_builder: {kind} label {new!r} already exists; pass a distinct label_prefix")
        return new

    def shift(i: int, off: int) -> int:
        return i + off if i >= 0 else i

    for b in range(src.body_count):
        dst.body_q.append(np_transform_mul(xform, src.body_q[b]))
        dst.body_qd.append(src.body_qd[b].copy())
        dst.body_com.append(src.body_com[b].copy())
        dst.body_mass.append(src.body_mass[b])
        dst.body_inertia.append(src.body_inertia[b].copy())
        dst.body_gravcomp.append(src.body_gravcomp[b])
        dst.body_flags.append(src.body_flags[b])
        dst.body_label.append(lab(src.body_label[b], dst.body_label, "body"))
        dst.body_lock_inertia.append(src.body_lock_inertia[b])
        dst.body_shapes[b0 + b] = [s + s0 for s in src.body_shapes.get(b, [])]
    for j in range(src.joint_count):
        parent = src.joint_parent[j]
        dst.joint_type.append(src.joint_type[j])
        dst.joint_parent.append(shift(parent, b0))
        dst.joint_child.append(src.joint_child[j] + b0)
        x_p = src.joint_X_p[j]
        free_root = parent < 0 and int(src.joint_type[j]) == int(JointType.FREE)
        dst.joint_X_p.append(np_transform_mul(xform, x_p) if parent < 0 and not free_root else x_p.copy())
        dst.joint_X_c.append(src.joint_X_c[j].copy())
        dst.joint_dof_dim.append(src.joint_dof_dim[j])
        dst.joint_q_start.append(src.joint_q_start[j] + q0)
        dst.joint_qd_start.append(src.joint_qd_start[j] + d0)
        dst.joint_label.append(lab(src.joint_label[j], dst.joint_label, "joint"))
        dst.joint_enabled.append(src.joint_enabled[j])
        dst.joint_collision_filter_parent.append(src.joint_collision_filter_parent[j])
        dst.joint_articulation.append(shift(src.joint_articulation[j], a0))
    joint_q, joint_qd = _move_free_roots(src, xform)
    dst.joint_q.extend(joint_q)
    dst.joint_qd.extend(joint_qd)
    dst.joint_target_q.extend(src.joint_target_q)
    dst.joint_axis.extend(a.copy() for a in src.joint_axis)
    dst.joint_target_mode.extend(src.joint_target_mode)
    dst.joint_drive_type.extend(src.joint_drive_type)
    for k, v in src.joint_dof.items():
        dst.joint_dof[k].extend(v)
    for a in range(src.articulation_count):
        dst.articulation_start.append(src.articulation_start[a] + j0)
        dst.articulation_end.append(src.articulation_end[a] + j0)
        dst.articulation_label.append(lab(src.articulation_label[a], dst.articulation_label, "articulation"))
    for s in range(src.shape_count):
        body = src.shape_body[s]
        dst.shape_type.append(src.shape_type[s])
        dst.shape_body.append(shift(body, b0))
        x = src.shape_transform[s]
        dst.shape_transform.append(np_transform_mul(xform, x) if body < 0 else x.copy())
        dst.shape_scale.append(src.shape_scale[s].copy())
        dst.shape_cfg.append(copy.copy(src.shape_cfg[s]))
        dst.shape_label.append(lab(src.shape_label[s], dst.shape_label, "shape"))
        dst.shape_source.append(src.shape_source[s])
        if body < 0:
            dst.body_shapes.setdefault(-1, []).append(s + s0)
    dst.shape_collision_filter_pairs.extend((a + s0, b + s0) for a, b in src.shape_collision_filter_pairs)
    dst.shape_explicit_contact_pairs.extend((a + s0, b + s0) for a, b in src.shape_explicit_contact_pairs)
    dst.shape_explicit_contact_pair_cfg.extend(src.shape_explicit_contact_pair_cfg)  # frozen: shared safely


def _move_free_roots(src, xform: np.ndarray) -> tuple[list[float], list[float]]:
    """``src``'s joint_q/joint_qd with world-attached FREE roots moved by ``xform`` (Newton's rule)."""
    joint_q, joint_qd = list(src.joint_q), list(src.joint_qd)
    if np.array_equal(np.asarray(xform, dtype=float), [0, 0, 0, 0, 0, 0, 1]):
        return joint_q, joint_qd
    for j in range(src.joint_count):
        if src.joint_parent[j] >= 0 or int(src.joint_type[j]) != int(JointType.FREE):
            continue
        x_p = np.asarray(src.joint_X_p[j], dtype=float)
        local = np_transform_mul(np_transform_mul(np_transform_inverse(x_p), xform), x_p)
        q0, d0 = src.joint_q_start[j], src.joint_qd_start[j]
        joint_q[q0:q0 + 7] = np_transform_mul(local, np.asarray(joint_q[q0:q0 + 7], dtype=float)).tolist()
        qd = np.asarray(joint_qd[d0:d0 + 6], dtype=float)
        joint_qd[d0:d0 + 6] = [*np_quat_rotate(local[3:], qd[:3]), *np_quat_rotate(local[3:], qd[3:])]
    return joint_q, joint_qd
