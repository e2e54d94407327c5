"""``ModelBuilder.add_builder``: copy one builder's content into another with index offsets."""

from __future__ import annotations

import copy

import numpy as np

from jaxart.sim.validate import np_transform_mul


def merge_builder(dst, src, xform: np.ndarray, prefix: str | None) -> None:
    """Append ``src``'s bodies, joints, shapes and articulations to ``dst``.

    Args:
        dst: Destination builder (mutated).
        src: Source builder (read only).
        xform: Transform applied to world-attached content.
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
        dst.joint_X_p.append(np_transform_mul(xform, x_p) if parent < 0 else x_p.copy())
        dst.joint_X_c.append(src.joint_X_c[j].copy())
        dst.joint_dof_dim.append(src.joint_dof_dim[j])
        dst.joint_q_start.append(src.joint_q_start[j] + q0)
        dst.joint_qd_start.append(src.joint_qd_start[j] + d0)
        dst.joint_label.append(lab(src.joint_label[j], dst.joint_label, "joint"))
        dst.joint_enabled.append(src.joint_enabled[j])
        dst.joint_collision_filter_parent.append(src.joint_collision_filter_parent[j])
        dst.joint_articulation.append(shift(src.joint_articulation[j], a0))
    dst.joint_q.extend(src.joint_q)
    dst.joint_qd.extend(src.joint_qd)
    dst.joint_target_q.extend(src.joint_target_q)
    dst.joint_axis.extend(a.copy() for a in src.joint_axis)
    dst.joint_target_mode.extend(src.joint_target_mode)
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
