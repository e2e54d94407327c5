"""MuJoCo keyframes (``<keyframe><key>``) → :class:`Keyframe` records in jaxart's coordinates.

A keyframe's ``qpos``/``qvel`` become the imported ``joint_q``/``joint_qd`` slices (quaternions ``wxyz`` → ``xyzw``;
BALL angular velocities from the child frame to the parent-anchor frame; FREE velocities ``(v_origin, ω_child)`` to
``(v_com, ω)`` in the MJCF world frame, the parent-anchor frame of imported roots), ``act`` the activations of the
imported stateful actuators, ``ctrl`` both MuJoCo's raw vector and the stateful actuators' inputs, ``mpos``/``mquat``
the mocap poses (``Control.mocap_pos``/``mocap_quat``, ``xyzw``). :meth:`Keyframe.state` / :meth:`Keyframe.control`
build a :class:`~jaxart.State` / :class:`~jaxart.Control` of a model holding this import alone.

``ctrl`` of actuators without activation dynamics becomes the ``Control`` input the importer's drive mapping reads
(:mod:`jaxart.io.mjcf.actuators`): a motor (fixed gain, no bias) adds ``gain·gear·ctrl`` to ``joint_act`` /
``tendon_f``; a position servo (bias ``(0, −kp, ·)``) sets the position target ``ctrl/gear`` (``ctrl`` clamped to
``ctrlrange``), a velocity servo (bias ``(0, 0, −kv)``) the velocity target; other actuators keep only the raw
``ctrl``.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
import mujoco
import numpy as np


@dataclass(frozen=True)
class Keyframe:
    """One MuJoCo keyframe in the imported model's layout.

    Attributes:
        time: Keyframe time [s] (MuJoCo's ``key_time``).
        coord_start: First imported coordinate index in the builder (``add_mjcf``'s ``"coord_start"``).
        dof_start: First imported DOF index in the builder.
        joint_q: ``(n_coords,)`` imported ``joint_q`` slice [m, rad; quaternions ``xyzw``]; added FREE joints keep
            their initial pose.
        joint_qd: ``(n_dofs,)`` imported ``joint_qd`` slice [m/s, rad/s] (see the module docstring for frames; zero
            on added joints).
        actuator_act: ``(n_stateful,)`` activation of each imported stateful actuator (``add_mjcf``'s
            ``"actuators"`` order; ``State.actuator_act``).
        actuator_ctrl: ``(n_stateful,)`` MuJoCo ``ctrl`` of those actuators (``Control.actuator_ctrl``).
        ctrl: ``(nu,)`` MuJoCo's raw ``ctrl`` in MuJoCo actuator order.
        mocap_pos: ``(nmocap,)`` × 3 mocap positions [m] in the MJCF world frame (``Control.mocap_pos``).
        mocap_quat: ``(nmocap, 4)`` mocap orientations, ``xyzw`` (``Control.mocap_quat``).
        inputs: ``{Control field: (indices, values)}`` of the drives' inputs from ``ctrl`` (module docstring):
            ``joint_act`` / ``tendon_f`` values are added, target values set (builder-wide indices).
    """

    time: float
    coord_start: int
    dof_start: int
    joint_q: np.ndarray
    joint_qd: np.ndarray
    actuator_act: np.ndarray
    actuator_ctrl: np.ndarray
    ctrl: np.ndarray
    mocap_pos: np.ndarray
    mocap_quat: np.ndarray
    inputs: dict

    def state(self, model):
        """``model.state()`` with this keyframe's coordinates, velocities and activations (body poses by FK).

        Args:
            model: The finalized model the MJCF was imported into (its stateful actuators and mocap bodies
                all from this import).

        Raises:
            ValueError: The model's sizes do not hold this import.
        """
        from jaxart.kinematics import eval_fk

        c0, d0 = self.coord_start, self.dof_start
        if model.joint_coord_count < c0 + self.joint_q.size or model.joint_dof_count < d0 + self.joint_qd.size:
            raise ValueError("Keyframe.state: model has fewer coordinates/DOFs than the import "
                             f"({model.joint_coord_count} < {c0 + self.joint_q.size} or "
                             f"{model.joint_dof_count} < {d0 + self.joint_qd.size})")
        state = model.state()
        dtype = state.joint_q.dtype
        q = state.joint_q.at[c0:c0 + self.joint_q.size].set(jnp.asarray(self.joint_q, dtype))
        qd = state.joint_qd.at[d0:d0 + self.joint_qd.size].set(jnp.asarray(self.joint_qd, dtype))
        state = eval_fk(model, q, qd, state)
        if self.actuator_act.size:
            if state.actuator_act is None or state.actuator_act.shape != self.actuator_act.shape:
                raise ValueError(f"Keyframe.state: model.actuator_count must be {self.actuator_act.size}")
            state = state.replace(actuator_act=jnp.asarray(self.actuator_act, dtype))
        return state

    def control(self, model):
        """``model.control()`` with this keyframe's drive inputs, stateful-actuator inputs and mocap poses.

        Raises:
            ValueError: The model's stateful actuators or mocap bodies are not this import's.
        """
        control = model.control()
        dtype = model.joint_q.dtype
        if self.actuator_ctrl.size:
            if model.actuator.actuator_count != self.actuator_ctrl.size:
                raise ValueError(f"Keyframe.control: model.actuator_count must be {self.actuator_ctrl.size}")
            control = control.replace(actuator_ctrl=jnp.asarray(self.actuator_ctrl, dtype))
        if self.mocap_pos.shape[0]:
            if len(model.mocap_joint) != self.mocap_pos.shape[0]:
                raise ValueError(f"Keyframe.control: the model must have {self.mocap_pos.shape[0]} mocap bodies")
            control = control.replace(mocap_pos=jnp.asarray(self.mocap_pos, dtype),
                                      mocap_quat=jnp.asarray(self.mocap_quat, dtype))
        for field, (index, value) in self.inputs.items():
            current = getattr(control, field)
            if current is None:  # tendon fields: zero forces, the model's default targets
                current = jnp.zeros(model.tendon.tendon_count, dtype) if field == "tendon_f" else getattr(model, field)
            current = jnp.asarray(current, dtype)
            value = jnp.asarray(value, dtype)
            new = current.at[index].add(value) if field in _ADDED else current.at[index].set(value)
            control = control.replace(**{field: new})
        return control


_ADDED = ("joint_act", "tendon_f")
_JOINT_TRN = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
_SCALAR = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


def _servo_kind(m, a: int) -> str | None:
    """``"motor"``, ``"position"``, ``"velocity"`` or ``None`` (another gain/bias, or activation dynamics)."""
    gear = m.actuator_gear[a]
    if (int(m.actuator_dyntype[a]) != int(mujoco.mjtDyn.mjDYN_NONE) or np.any(gear[1:] != 0.0) or gear[0] == 0.0
            or int(m.actuator_gaintype[a]) != int(mujoco.mjtGain.mjGAIN_FIXED)):
        return None
    gain, bias, btype = float(m.actuator_gainprm[a, 0]), m.actuator_biasprm[a], int(m.actuator_biastype[a])
    if btype == int(mujoco.mjtBias.mjBIAS_NONE):
        return "motor"
    if btype != int(mujoco.mjtBias.mjBIAS_AFFINE) or bias[0] != 0.0 or gain == 0.0:
        return None
    if bias[1] == -gain:
        return "position"
    return "velocity" if bias[1] == 0.0 and bias[2] == -gain else None


def _drive_inputs(m, out: dict, ctrl: np.ndarray) -> dict:
    """``{Control field: (indices, values)}`` of ``ctrl`` for the imported drives (module docstring)."""
    dof_of = {int(v): int(out["dof_start"]) + i for i, v in enumerate(out["dof_map"]) if v >= 0}
    coord_of = {int(v): int(out["coord_start"]) + i for i, v in enumerate(out["coord_map"]) if v >= 0}
    rows: dict[str, list] = {}
    for a in range(m.nu):
        kind, trn, target = _servo_kind(m, a), int(m.actuator_trntype[a]), int(m.actuator_trnid[a, 0])
        if kind is None:
            continue
        u = float(ctrl[a])
        if m.actuator_ctrllimited[a] and kind != "motor":
            u = float(np.clip(u, *m.actuator_ctrlrange[a]))
        value = float(m.actuator_gainprm[a, 0]) * float(m.actuator_gear[a, 0]) * u if kind == "motor" \
            else u / float(m.actuator_gear[a, 0])
        if trn in _JOINT_TRN and int(m.jnt_type[target]) in _SCALAR and int(m.jnt_dofadr[target]) in dof_of:
            dof = dof_of[int(m.jnt_dofadr[target])]
            field, index = {"motor": ("joint_act", dof), "velocity": ("joint_target_qd", dof),
                            "position": ("joint_target_q", coord_of.get(int(m.jnt_qposadr[target]), -1))}[kind]
        elif trn == int(mujoco.mjtTrn.mjTRN_TENDON) and (m.tendon(target).name or f"#{target}") in out["tendons"]:
            index = out["tendons"][m.tendon(target).name or f"#{target}"]
            field = {"motor": "tendon_f", "position": "tendon_target_length",
                     "velocity": "tendon_target_velocity"}[kind]
        else:
            continue
        if index >= 0:
            rows.setdefault(field, []).append((index, value))
    return {f: (np.asarray([i for i, _ in r], np.int64), np.asarray([v for _, v in r], np.float64))
            for f, r in rows.items()}


def _rot(q_wxyz: np.ndarray) -> np.ndarray:
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(q_wxyz, np.float64))
    return mat.reshape(3, 3)


def _joint_qd(m, k: int, dof_map: np.ndarray) -> np.ndarray:
    """Keyframe ``k``'s ``qvel`` as imported ``joint_qd`` (BALL / FREE frames converted)."""
    qpos, qvel = m.key_qpos[k], m.key_qvel[k]
    qd = np.where(dof_map >= 0, qvel[np.maximum(dof_map, 0)], 0.0)
    where = {int(v): i for i, v in enumerate(dof_map) if v >= 0}
    for j in range(m.njnt):
        a, v, t = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j]), int(m.jnt_type[j])
        if v not in where:
            continue
        i = where[v]
        if t == mujoco.mjtJoint.mjJNT_BALL:
            qd[i:i + 3] = _rot(qpos[a:a + 4]) @ qvel[v:v + 3]
        elif t == mujoco.mjtJoint.mjJNT_FREE:
            r = _rot(qpos[a + 3:a + 7])
            w = r @ qvel[v + 3:v + 6]
            qd[i:i + 3] = qvel[v:v + 3] + np.cross(w, r @ m.body_ipos[m.jnt_bodyid[j]])
            qd[i + 3:i + 6] = w
    return qd


def import_keyframes(m, out: dict, q0: np.ndarray) -> dict[str, Keyframe]:
    """Every keyframe of ``m`` (name, or ``key_<k>`` when unnamed) as a :class:`Keyframe`.

    Args:
        m: The compiled ``MjModel``.
        out: ``add_mjcf``'s result so far (``coord_map``, ``dof_map``, ``coord_start``, ``dof_start``,
            ``actuators``, ``tendons``).
        q0: Imported initial ``joint_q`` slice (kept on coordinates without a MuJoCo ``qpos``).
    """
    cmap, dmap = np.asarray(out["coord_map"]), np.asarray(out["dof_map"])
    names = [m.actuator(a).name or f"actuator_{a}" for a in range(m.nu)]
    stateful = [names.index(label) for label in out.get("actuators", {})]
    keys = {}
    for k in range(m.nkey):
        q = np.asarray(q0, np.float64).copy()
        q[cmap >= 0] = m.key_qpos[k][cmap[cmap >= 0]]
        act = np.asarray([m.key_act[k][m.actuator_actadr[a]] if m.actuator_actadr[a] >= 0 else 0.0
                          for a in stateful], np.float64)
        keys[m.key(k).name or f"key_{k}"] = Keyframe(
            time=float(m.key_time[k]), coord_start=int(out["coord_start"]), dof_start=int(out["dof_start"]),
            joint_q=q, joint_qd=_joint_qd(m, k, dmap), actuator_act=act,
            actuator_ctrl=np.asarray(m.key_ctrl[k][stateful], np.float64).reshape(-1),
            ctrl=np.asarray(m.key_ctrl[k], np.float64).copy(),
            mocap_pos=np.asarray(m.key_mpos[k], np.float64).reshape(-1, 3),  # jaxart's mocap order is MuJoCo's
            mocap_quat=np.asarray(m.key_mquat[k], np.float64).reshape(-1, 4)[:, [1, 2, 3, 0]],
            inputs=_drive_inputs(m, out, m.key_ctrl[k]))
    return keys
