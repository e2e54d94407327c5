"""Static index bookkeeping between a jaxart ``Model`` and its converted ``MjModel``.

Built once on the host after compiling the ``MjSpec`` (numpy only); the pure state-mapping
functions of :mod:`jaxart.solvers.mujoco.state` gather and scatter with these indices.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True, eq=False)
class MjLayout:
    """Where every jaxart coordinate, DOF, control and body lands in MuJoCo's arrays.

    Frame convention: the MuJoCo frame of a body with a tree joint is that joint's *child anchor*
    frame (jaxart body frame · ``joint_X_c``); bodies without a tree joint keep the jaxart body
    frame. Hence hinge/slide/ball ``qpos`` equal ``joint_q`` (quaternions reordered xyzw → wxyz).

    Attributes:
        nq, nv, nu, nbody: MuJoCo sizes (``nbody`` includes the world body 0).
        q_src, q_dst: scalar coordinates: ``qpos[q_dst] = joint_q[q_src]`` (hinge/slide/D6).
        v_src, v_dst: scalar DOFs: ``qvel[v_dst] = joint_qd[v_src]``.
        ball_q_src, ball_q_dst: ``(k, 4)`` ball quaternion coordinates (xyzw order in both).
        ball_v_src, ball_v_dst: ``(k, 3)`` ball DOFs.
        free_q_src, free_q_dst: ``(f, 7)`` free-joint coordinates.
        free_v_src, free_v_dst: ``(f, 6)`` free-joint DOFs.
        free_X_p: ``(f, 7)`` parent-anchor transform of each free joint (world parent).
        free_com: ``(f, 3)`` child COM in the MuJoCo body (child anchor) frame.
        free_body: ``(f,)`` MuJoCo body id of each free joint's child.
        sb_lin_q_src, sb_lin_q_dst: ``(s, 3)`` linear coordinates of the FREE/DISTANCE joints mapped as three
            slides and a ball about the child COM (:func:`jaxart.solvers.mujoco.joints.free_as_slides`); the
            slides and the ball are also listed as scalar and ball entries above. Slide ``qpos`` is
            ``p + R(q) c − c`` (``sb_com`` = ``c``), slide ``qvel`` the COM velocity (= ``joint_qd``).
        sb_quat_src, sb_quat_dst: ``(s, 4)`` their quaternion coordinates (jaxart xyzw; MuJoCo qpos).
        sb_v_src: ``(s, 6)`` their DOFs (``Control.joint_f`` world wrenches → parent-anchor generalized forces).
        sb_com: ``(s, 3)`` child COM in the child-anchor frame.
        sb_parent: ``(s,)`` jaxart parent body (−1: world); sb_X_p ``(s, 7)`` the parent-anchor transform.
        pos_act, pos_src: position actuators: ``ctrl[pos_act] = joint_target_q[pos_src]``.
        vel_act, vel_src: velocity actuators: ``ctrl[vel_act] = joint_target_qd[vel_src]``.
        pos_vel_act, pos_vel_src, pos_vel_ratio: POSITION-mode actuators (bias ``−kp q − kd q̇``) whose ``ctrl``
            also takes ``(kd / kp) · joint_target_qd[pos_vel_src]``, so they apply ``kp (q* − q) + kd (q̇* − q̇)``
            as jaxart's POSITION drives.
        ball_act, ball_src, ball_comp: BALL position actuators: ``ctrl[ball_act]`` = component
            ``ball_comp`` of the rotation vector of the quaternion ``joint_target_q[ball_src]``
            (``(k, 4)`` indices).
        body_mj: ``(body_count,)`` MuJoCo body id of each jaxart body.
        ten_act, ten_src, ten_kind: tendon actuators: ``ctrl[ten_act]`` = ``(tendon_f, tendon_target_length,
            tendon_target_velocity, combined)[ten_kind][ten_src]`` (:func:`jaxart.solvers.mujoco.tendons.tendon_ctrl`).
        ten_default: ``(5, tendon_count)`` host values of those three for ``Control`` fields that are ``None``,
            then the drive gains ``ke``, ``kd`` (weights of the combined control).
        eq_row, eq_kind, eq_src: MuJoCo equality rows switched at run time: ``eq_active[eq_row]`` =
            ``(equality_constraint_enabled, constraint_mimic_enabled)[eq_kind][eq_src]``
            (:func:`jaxart.solvers.mujoco.equality.eq_active`); loop-joint rows are not listed.
        act_motor, act_motor_src: unit motors of DOFs read by JOINTACTFRC sensors: ``ctrl[act_motor] =
            joint_act[act_motor_src]`` (those DOFs' ``joint_act`` then stays out of ``qfrc_applied``;
            :mod:`jaxart.solvers.mujoco.sensors`).
        mocap_id, mocap_q_src, mocap_X_p: mocap bodies: MuJoCo ``mocap_pos``/``mocap_quat`` row ``(m,)`` of each
            entry of ``Model.mocap_joint``, its ``(m, 7)`` coordinates and ``(m, 7)`` parent-anchor transform (the
            world pose is ``mocap_X_p · joint_q[mocap_q_src]``).
        loop_axes: :class:`~jaxart.dynamics.engine.loop_axes.LoopAxes` entries of the loop joints with an auxiliary
            body (their coordinates are re-measured from the tree before each step; ``()`` when none).
    """

    nq: int
    nv: int
    nu: int
    nbody: int
    q_src: np.ndarray
    q_dst: np.ndarray
    v_src: np.ndarray
    v_dst: np.ndarray
    ball_q_src: np.ndarray
    ball_q_dst: np.ndarray
    ball_v_src: np.ndarray
    ball_v_dst: np.ndarray
    free_q_src: np.ndarray
    free_q_dst: np.ndarray
    free_v_src: np.ndarray
    free_v_dst: np.ndarray
    free_X_p: np.ndarray
    free_com: np.ndarray
    free_body: np.ndarray
    pos_act: np.ndarray
    pos_src: np.ndarray
    vel_act: np.ndarray
    vel_src: np.ndarray
    ball_act: np.ndarray
    ball_src: np.ndarray
    ball_comp: np.ndarray
    body_mj: np.ndarray
    ten_act: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    ten_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    ten_kind: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    ten_default: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((5, 0)))
    pos_vel_act: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    pos_vel_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    pos_vel_ratio: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    eq_row: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    eq_kind: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    eq_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    act_motor: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    act_motor_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    mocap_id: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    mocap_q_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 7), np.int32))
    mocap_X_p: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 7)))
    loop_axes: tuple = ()
    sensors_skipped: tuple = ()
    sb_lin_q_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3), np.int32))
    sb_lin_q_dst: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3), np.int32))
    sb_quat_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 4), np.int32))
    sb_quat_dst: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 4), np.int32))
    sb_v_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 6), np.int32))
    sb_com: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 3)))
    sb_parent: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    sb_X_p: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 7)))


class LayoutRecorder:
    """Collects index entries while the spec is built, resolved against the compiled ``MjModel``."""

    def __init__(self) -> None:
        self.scalar: list[tuple[str, int, int]] = []  # (mj joint name, jaxart coord, jaxart dof)
        self.ball: list[tuple[str, int, int]] = []  # (mj joint name, q_start, qd_start)
        self.free: list[tuple[str, int, int, np.ndarray, np.ndarray, str]] = []
        self.free_sb: list[tuple] = []  # (slide names, ball name, q_start, qd_start, com, X_p, parent body)
        self.pos_act: list[tuple[str, int]] = []  # (actuator name, coord index)
        self.vel_act: list[tuple[str, int]] = []  # (actuator name, dof index)
        self.pos_vel: list[tuple[str, int, float]] = []  # (POSITION actuator name, dof index, kd / kp)
        self.ball_act: list[tuple[str, int, int]] = []  # (actuator name, quaternion coord start, axis)
        self.ten_act: list[tuple[str, int, int]] = []  # (actuator name, tendon, kind: 0 force, 1 length, 2 rate)
        self.ten_default = np.zeros((5, 0))
        self.body: dict[int, str] = {}
        self.eq_anchor2: list[tuple[str, np.ndarray]] = []  # (equality name, CONNECT body2 point): mujoco_equality
        self.eq_tendon: list[tuple[str, np.ndarray]] = []  # (equality name, TENDON polycoef in jaxart's form)
        self.aux: list[tuple[str, str]] = []  # (auxiliary body, child body) of loop joints: mujoco_loops
        self.loop_rates: list[tuple] = []  # sites / angular gears of loop rate actuators: mujoco.loop_rates
        self.loop_axes: list[tuple] = []  # LoopAxes entries of the loop joints with an auxiliary body
        self.act_motor: list[tuple[str, int]] = []  # (motor name, dof) of JOINTACTFRC sensors: mujoco.sensors
        self.sensors_skipped: list[str] = []  # why each sensor without a MuJoCo counterpart was left out
        self.mocap: list[tuple[str, int, np.ndarray]] = []  # (mocap body, q_start, joint_X_p) of Model.mocap_joint
        self.eq_src: list[tuple[str, int, int]] = []  # (equality name, 0 equality / 1 mimic, constraint index)

    def resolve(self, mj_model, body_count: int) -> MjLayout:
        """Turn names into MuJoCo indices."""
        import mujoco

        def jid(name):
            return mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_JOINT, name)

        def aid(name):
            return mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)

        def eid(name):
            return mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_EQUALITY, name)

        def bid(name):
            return mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, name)

        i32 = np.int32
        qadr, vadr = mj_model.jnt_qposadr, mj_model.jnt_dofadr
        sc = [(qadr[jid(n)], vadr[jid(n)], c, d) for n, c, d in self.scalar]
        ball = [(qadr[jid(n)], vadr[jid(n)], c, d) for n, c, d in self.ball]
        free = [(qadr[jid(n)], vadr[jid(n)], c, d, xp, com, bid(b)) for n, c, d, xp, com, b in self.free]
        sb = [([qadr[jid(n)] for n in sl], qadr[jid(bn)], qs, ds, com, xp, par)
              for sl, bn, qs, ds, com, xp, par in self.free_sb]
        body_mj = np.zeros(body_count, i32)
        for b, name in self.body.items():
            body_mj[b] = bid(name)

        def col(rows, k, width=None, dtype=i32):
            if width is None:
                return np.asarray([r[k] for r in rows], dtype).reshape(-1)
            return np.asarray([r[k] + np.arange(width) for r in rows], dtype).reshape(-1, width)

        return MjLayout(
            nq=int(mj_model.nq), nv=int(mj_model.nv), nu=int(mj_model.nu), nbody=int(mj_model.nbody),
            q_dst=col(sc, 0), v_dst=col(sc, 1), q_src=col(sc, 2), v_src=col(sc, 3),
            ball_q_dst=col(ball, 0, 4), ball_v_dst=col(ball, 1, 3),
            ball_q_src=col(ball, 2, 4), ball_v_src=col(ball, 3, 3),
            free_q_dst=col(free, 0, 7), free_v_dst=col(free, 1, 6),
            free_q_src=col(free, 2, 7), free_v_src=col(free, 3, 6),
            free_X_p=np.asarray([r[4] for r in free], np.float64).reshape(-1, 7),
            free_com=np.asarray([r[5] for r in free], np.float64).reshape(-1, 3),
            free_body=col(free, 6),
            pos_act=np.asarray([aid(n) for n, _ in self.pos_act], i32),
            pos_src=np.asarray([c for _, c in self.pos_act], i32),
            vel_act=np.asarray([aid(n) for n, _ in self.vel_act], i32),
            vel_src=np.asarray([d for _, d in self.vel_act], i32),
            pos_vel_act=np.asarray([aid(n) for n, _, _ in self.pos_vel], i32),
            pos_vel_src=np.asarray([d for _, d, _ in self.pos_vel], i32),
            pos_vel_ratio=np.asarray([r for _, _, r in self.pos_vel], np.float64),
            ball_act=np.asarray([aid(n) for n, _, _ in self.ball_act], i32),
            ball_src=np.asarray([c + np.arange(4) for _, c, _ in self.ball_act], i32).reshape(-1, 4),
            ball_comp=np.asarray([k for _, _, k in self.ball_act], i32),
            body_mj=body_mj,
            ten_act=np.asarray([aid(n) for n, _, _ in self.ten_act], i32),
            ten_src=np.asarray([t for _, t, _ in self.ten_act], i32),
            ten_kind=np.asarray([k for _, _, k in self.ten_act], i32),
            ten_default=self.ten_default,
            eq_row=np.asarray([eid(n) for n, _, _ in self.eq_src], i32),
            eq_kind=np.asarray([k for _, k, _ in self.eq_src], i32),
            eq_src=np.asarray([i for _, _, i in self.eq_src], i32),
            act_motor=np.asarray([aid(n) for n, _ in self.act_motor], i32),
            act_motor_src=np.asarray([d for _, d in self.act_motor], i32),
            mocap_id=np.asarray([mj_model.body_mocapid[bid(n)] for n, _, _ in self.mocap], i32),
            mocap_q_src=np.asarray([q + np.arange(7) for _, q, _ in self.mocap], i32).reshape(-1, 7),
            mocap_X_p=np.asarray([x for _, _, x in self.mocap], np.float64).reshape(-1, 7),
            loop_axes=tuple(self.loop_axes),
            sensors_skipped=tuple(self.sensors_skipped),
            sb_lin_q_src=np.asarray([r[2] + np.arange(3) for r in sb], i32).reshape(-1, 3),
            sb_lin_q_dst=np.asarray([r[0] for r in sb], i32).reshape(-1, 3),
            sb_quat_src=np.asarray([r[2] + 3 + np.arange(4) for r in sb], i32).reshape(-1, 4),
            sb_quat_dst=np.asarray([r[1] + np.arange(4) for r in sb], i32).reshape(-1, 4),
            sb_v_src=np.asarray([r[3] + np.arange(6) for r in sb], i32).reshape(-1, 6),
            sb_com=np.asarray([r[4] for r in sb], np.float64).reshape(-1, 3),
            sb_parent=np.asarray([r[6] for r in sb], i32),
            sb_X_p=np.asarray([r[5] for r in sb], np.float64).reshape(-1, 7),
        )
