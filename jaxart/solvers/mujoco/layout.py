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
        pos_act, pos_src: position actuators: ``ctrl[pos_act] = joint_target_q[pos_src]``.
        vel_act, vel_src: velocity actuators: ``ctrl[vel_act] = joint_target_qd[vel_src]``.
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
        loop_axes: :class:`~jaxart.dynamics.loop_axes.LoopAxes` entries of the loop joints with an auxiliary
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
    eq_row: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    eq_kind: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    eq_src: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))
    loop_axes: tuple = ()


class LayoutRecorder:
    """Collects index entries while the spec is built, resolved against the compiled ``MjModel``."""

    def __init__(self) -> None:
        self.scalar: list[tuple[str, int, int]] = []  # (mj joint name, jaxart coord, jaxart dof)
        self.ball: list[tuple[str, int, int]] = []  # (mj joint name, q_start, qd_start)
        self.free: list[tuple[str, int, int, np.ndarray, np.ndarray, str]] = []
        self.pos_act: list[tuple[str, int]] = []  # (actuator name, coord index)
        self.vel_act: list[tuple[str, int]] = []  # (actuator name, dof index)
        self.ball_act: list[tuple[str, int, int]] = []  # (actuator name, quaternion coord start, axis)
        self.ten_act: list[tuple[str, int, int]] = []  # (actuator name, tendon, kind: 0 force, 1 length, 2 rate)
        self.ten_default = np.zeros((5, 0))
        self.body: dict[int, str] = {}
        self.eq_anchor2: list[tuple[str, np.ndarray]] = []  # (equality name, CONNECT body2 point): mujoco_equality
        self.aux: list[tuple[str, str]] = []  # (auxiliary body, child body) of loop joints: mujoco_loops
        self.loop_rates: list[tuple] = []  # sites / angular gears of loop rate actuators: mujoco.loop_rates
        self.loop_axes: list[tuple] = []  # LoopAxes entries of the loop joints with an auxiliary body
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
            loop_axes=tuple(self.loop_axes),
        )
