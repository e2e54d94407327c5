"""Link sensors and solver forces: joint wrenches, solver joint forces, contact wrenches.

Oracles: statics by hand (a cantilevered two-link arm), a pendulum's Newton–Euler closed form, MuJoCo C's
``cfrc_int`` (twin models and the bundled double pendulum, swinging), MuJoCo C's ``qfrc_constraint`` at
a static joint limit, the step's own equation of motion (inverse dynamics of the step's accelerations),
and finite differences.
"""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from dyn_models import mixed_tree_spec, mj_to_jaxart, to_builder, to_mjcf
from helpers import mjcf_model, quat_from_axis_angle_np
from jax.test_util import check_grads

import jaxart
from jaxart.dynamics import eval_generalized_external_force, eval_inverse_dynamics_force
from jaxart.dynamics.joint_wrenches import (
    eval_body_contact_wrenches,
    eval_joint_solver_forces,
    eval_joint_wrenches,
)
from jaxart.sim.configs import ShapeConfig

G = 9.81
F64 = jnp.float64


def _rot(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _cantilever(m1=2.0, m2=1.5, l1=0.8, l2=0.6):
    """Two links along +X at q = 0, hinges about world Y; the root's anchors are rotated 90° about Z."""
    b = jaxart.ModelBuilder()
    inertia = np.diag([0.01, 0.02, 0.03])
    a = b.add_link(com=(l1 / 2, 0.0, 0.0), mass=m1, inertia=inertia, lock_inertia=True)
    c = b.add_link(xform=((l1, 0.0, 0.0), (0, 0, 0, 1)), com=(l2 / 2, 0.0, 0.0), mass=m2, inertia=inertia,
                   lock_inertia=True)
    rz = tuple(quat_from_axis_angle_np([0, 0, 1], np.pi / 2))
    j0 = b.add_joint_revolute(-1, a, axis=(1.0, 0.0, 0.0), parent_xform=((0, 0, 0), rz), child_xform=((0, 0, 0), rz))
    j1 = b.add_joint_revolute(a, c, axis=(0.0, 1.0, 0.0), parent_xform=((l1, 0, 0), (0, 0, 0, 1)))
    b.add_articulation([j0, j1])
    return b.finalize(dtype=F64), rz


def test_cantilever_root_wrench_by_hand():
    """Static arm held horizontally under gravity and a tip force: wrenches from force and moment balance."""
    m1, m2, l1, l2 = 2.0, 1.5, 0.8, 0.6
    model, rz = _cantilever(m1, m2, l1, l2)
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    f_tip = np.array([1.0, 2.0, -3.0])
    body_f = np.zeros((2, 6))
    body_f[1, :3] = f_tip
    g = np.array([0.0, 0.0, -G])
    c1, c2, p2 = np.array([l1 / 2, 0, 0]), np.array([l1 + l2 / 2, 0, 0]), np.array([l1, 0, 0])
    load2 = m2 * g + f_tip  # everything acting on link 2 (at its COM)
    f_root = -(m1 * g + load2)
    tau_root_anchor = -(np.cross(c1, m1 * g) + np.cross(c2, load2))  # about the root anchor (origin)
    w = np.asarray(eval_joint_wrenches(model, st, jnp.zeros(2), body_f=body_f))
    np.testing.assert_allclose(w[0, :3], f_root, atol=1e-12)
    np.testing.assert_allclose(w[0, 3:], tau_root_anchor - np.cross(c1, f_root), atol=1e-12)  # about c1
    np.testing.assert_allclose(w[1], np.r_[-load2, 0, 0, 0], atol=1e-12)  # elbow: all loads act at c2
    wj = np.asarray(eval_joint_wrenches(model, st, jnp.zeros(2), body_f=body_f, frame="joint"))
    r = _rot(rz)  # the root's child anchor frame (world pose of body 0 is the identity)
    np.testing.assert_allclose(wj[0], np.r_[r.T @ f_root, r.T @ tau_root_anchor], atol=1e-12)
    np.testing.assert_allclose(wj[1], np.r_[-load2, -np.cross(c2 - p2, load2)], atol=1e-12)
    # the torque about each hinge axis is what a motor must supply: inverse dynamics
    tau = np.asarray(eval_inverse_dynamics_force(model, st, jnp.zeros(2))
                     + eval_generalized_external_force(model, st, jnp.asarray(body_f)))
    np.testing.assert_allclose([tau_root_anchor[1], wj[1, 4]], tau, atol=1e-12)


def test_pendulum_wrench_closed_form():
    """Pendulum swinging under gravity and a motor torque u: Newton–Euler for the COM and the pivot moment."""
    m, lc, iyy, u = 1.7, 0.45, 0.03, 0.8
    b = jaxart.ModelBuilder()
    link = b.add_link(com=(0.0, 0.0, -lc), mass=m, inertia=np.diag([0.02, iyy, 0.01]), lock_inertia=True)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0.0, 1.0, 0.0))])
    model = b.finalize(dtype=F64)
    for theta, omega in ((0.0, 2.0), (0.7, -1.3), (-2.4, 3.1)):
        st = jaxart.eval_fk(model, jnp.array([theta]), jnp.array([omega]), model.state())
        c = np.array([-lc * np.sin(theta), 0.0, -lc * np.cos(theta)])
        alpha = (u - m * G * lc * np.sin(theta)) / (iyy + m * lc * lc)
        w_vec, a_vec = np.array([0, omega, 0]), np.array([0, alpha, 0])
        acc = np.cross(a_vec, c) + np.cross(w_vec, np.cross(w_vec, c))
        f = m * acc - m * np.array([0, 0, -G])
        wj = np.asarray(eval_joint_wrenches(model, st, jnp.array([alpha]), frame="joint"))[0]
        r = _rot(quat_from_axis_angle_np([0, 1, 0], theta))  # the child anchor frame turns with the link
        np.testing.assert_allclose(wj[:3], r.T @ f, atol=1e-12)
        np.testing.assert_allclose(wj[4], u, atol=1e-12)  # about the hinge: the motor torque
        np.testing.assert_allclose(wj[[3, 5]], 0.0, atol=1e-12)  # planar motion, principal axes
        ww = np.asarray(eval_joint_wrenches(model, st, jnp.array([alpha])))[0]
        np.testing.assert_allclose(ww, np.r_[f, r @ wj[3:] - np.cross(c, f)], atol=1e-12)


def _mj_cfrc_origin(m, d):
    """MuJoCo's ``cfrc_int`` per body as ``(f, τ about the world origin)``."""
    mujoco.mj_rnePostConstraint(m, d)
    root = d.subtree_com[m.body_rootid]
    tau, f = d.cfrc_int[:, :3], d.cfrc_int[:, 3:]
    return np.concatenate([f, tau + np.cross(root, f)], axis=1)


def _world_origin(w, com):
    return np.concatenate([w[:, :3], w[:, 3:] + np.cross(com, w[:, :3])], axis=1)


@pytest.mark.parametrize("floating", [False, True])
def test_joint_wrenches_vs_mujoco_cfrc_int(floating):
    """Mixed tree (hinge, slide, ball, D6, fixed; free root or not) in random motion vs MuJoCo C."""
    rng = np.random.default_rng(11 + floating)
    spec = mixed_tree_spec(rng, floating=floating)
    m = mujoco.MjModel.from_xml_string(to_mjcf(spec))
    d = mujoco.MjData(m)
    model = to_builder(spec).finalize(dtype=F64)
    fn = jax.jit(eval_joint_wrenches)
    for _ in range(2):
        d.qpos[:] = m.qpos0
        for jid in range(m.njnt):
            a = m.jnt_qposadr[jid]
            if m.jnt_type[jid] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
                d.qpos[a] = rng.uniform(-1.0, 1.0)
            elif m.jnt_type[jid] == mujoco.mjtJoint.mjJNT_BALL:
                d.qpos[a:a + 4] = rng.normal(size=4) / 2.0
                d.qpos[a:a + 4] /= np.linalg.norm(d.qpos[a:a + 4])
        d.qvel[:] = rng.normal(size=m.nv)
        d.xfrc_applied[1:] = rng.normal(size=(m.nbody - 1, 6))  # (f, τ about the COM), as body_f
        mujoco.mj_forward(m, d)
        q, qd, T, tdv = mj_to_jaxart(spec, d.qpos, d.qvel)
        st = jaxart.eval_fk(model, q, qd, model.state())
        w = np.asarray(fn(model, st, jnp.asarray(T @ d.qacc + tdv), body_f=jnp.asarray(d.xfrc_applied[1:])))
        ref = _mj_cfrc_origin(m, d)[1:]
        np.testing.assert_allclose(_world_origin(w, d.xipos[1:]), ref, atol=1e-9)


def test_swinging_double_pendulum_vs_mujoco_cfrc_int():
    """The bundled double pendulum (MJCF import) swinging under MuJoCo's own integration."""
    path = jaxart.assets.asset_path("double_pendulum")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    model = mjcf_model(path)
    d.qpos[:] = [1.2, -0.7]
    fn = jax.jit(eval_joint_wrenches)
    for _ in range(3):
        for _ in range(150):
            mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)
        st = jaxart.eval_fk(model, jnp.asarray(d.qpos), jnp.asarray(d.qvel), model.state())
        w = np.asarray(fn(model, st, jnp.asarray(d.qacc)))
        assert np.abs(d.qvel).max() > 0.5  # swinging
        np.testing.assert_allclose(_world_origin(w, d.xipos[1:]), _mj_cfrc_origin(m, d)[1:], atol=1e-9)


@pytest.mark.slow
def test_joint_wrench_gradient_fd():
    """d(wrench)/d(q, qd, qdd) against finite differences (both modes), both frames."""
    rng = np.random.default_rng(5)
    model = to_builder(mixed_tree_spec(rng, floating=False)).finalize(dtype=F64)
    q0 = jnp.asarray(model.joint_q) + 0.1
    qd0 = jnp.asarray(rng.normal(size=model.joint_dof_count))
    qdd0 = jnp.asarray(rng.normal(size=model.joint_dof_count))
    base = model.state()

    for frame in ("world", "joint"):
        def wrench(q, qd, qdd, frame=frame):
            st = base.replace(joint_q=q, joint_qd=qd)
            return eval_joint_wrenches(model, st, qdd, frame=frame)[1:].sum(axis=0)

        check_grads(wrench, (q0, qd0, qdd0), order=1, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def _driven_chain():
    """Revolute–prismatic–revolute chain with PD drives, a spring, damping, friction and an active limit."""
    b = jaxart.ModelBuilder()
    inertia = np.diag([0.02, 0.03, 0.04])
    l0 = b.add_link(com=(0.1, 0.0, -0.2), mass=1.2, inertia=inertia, lock_inertia=True)
    l1 = b.add_link(com=(0.0, 0.05, -0.1), mass=0.8, inertia=inertia, lock_inertia=True)
    l2 = b.add_link(com=(0.0, 0.0, -0.15), mass=0.5, inertia=inertia, lock_inertia=True)
    js = [
        b.add_joint_revolute(-1, l0, axis=(0, 1, 0), target_ke=40.0, target_kd=2.0, friction=0.3, damping=0.1,
                             effort_limit=5.0),
        b.add_joint_prismatic(l0, l1, axis=(0, 0, 1), parent_xform=((0.2, 0, -0.4), (0, 0, 0, 1)), stiffness=30.0,
                              rest_q=0.05, limit_lower=-0.1, limit_upper=0.0, limit_ke=2e3, limit_kd=20.0),
        b.add_joint_revolute(l1, l2, axis=(1, 0, 0), parent_xform=((0, 0, -0.2), (0, 0, 0, 1)), target_kd=0.5),
    ]
    b.add_articulation(js)
    model = b.finalize(dtype=F64)
    ctrl = model.control().replace(joint_target_q=jnp.array([0.6, 0.0, 0.0]), joint_target_qd=jnp.array([0, 0, 1.0]),
                                   joint_f=jnp.array([0.2, -0.5, 0.1]))
    return model, ctrl


@pytest.mark.parametrize("drive", ["implicit", "explicit"])
def test_solver_forces_satisfy_the_step_equation(drive):
    """τ_solver + joint_f = M q̈ + C q̇ + g for the step's q̈ (the force the solve applied), with the prismatic
    limit active and the first drive saturated; the PD part equals the end-of-step closed form."""
    model, ctrl = _driven_chain()
    solver = jaxart.solvers.SolverFeatherstone(model, drive=drive)
    dt = 2e-3
    st = jaxart.eval_fk(model, jnp.array([-0.3, 0.02, 0.4]), jnp.array([0.5, 0.3, -0.2]), model.state())
    nxt = solver.step(st, ctrl, None, dt)
    tau = np.asarray(eval_joint_solver_forces(model, st, ctrl, nxt.joint_qd, dt, implicit=drive == "implicit"))
    qdd = (nxt.joint_qd - st.joint_qd) / dt
    inv = np.asarray(eval_inverse_dynamics_force(model, st, qdd))
    np.testing.assert_allclose(tau + np.asarray(ctrl.joint_f), inv, atol=1e-10)
    # revolute 3: velocity drive only, kd (q̇* − q̇') in implicit mode (q̇ in explicit mode)
    v = float(nxt.joint_qd[2] if drive == "implicit" else st.joint_qd[2])
    np.testing.assert_allclose(tau[2], 0.5 * (1.0 - v), atol=1e-12)
    # the saturated drive clamps to the effort limit: |drive| = 5 on top of friction and damping
    v0 = float(nxt.joint_qd[0] if drive == "implicit" else st.joint_qd[0])
    np.testing.assert_allclose(tau[0], 5.0 - 0.3 * np.tanh(v0 / 1e-2) - 0.1 * v0, atol=1e-10)


def test_limit_force_vs_mujoco_qfrc_constraint_at_rest():
    """An arm held horizontal by a joint limit: both simulators settle with the limit carrying the gravity
    torque. (The transients differ: MuJoCo's soft constraint vs jaxart's penalty limit.)"""
    m_, lc = 1.3, 0.35
    xml = f"""<mujoco><compiler angle="radian"/><option timestep="0.002"/><worldbody><body>
      <joint type="hinge" axis="0 1 0" range="-0.01 0.6" limited="true"/>
      <inertial pos="{lc} 0 0" mass="{m_}" diaginertia="0.01 0.02 0.02"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[0] = 0.3
    for _ in range(3000):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    b = jaxart.ModelBuilder()
    link = b.add_link(com=(lc, 0.0, 0.0), mass=m_, inertia=np.diag([0.01, 0.02, 0.02]), lock_inertia=True)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 1, 0), limit_lower=-0.01, limit_upper=0.6,
                                             limit_ke=1e4, limit_kd=50.0)])
    model = b.finalize(dtype=F64)
    solver = jaxart.solvers.SolverFeatherstone(model)
    step = jax.jit(lambda s: solver.step(s, None, None, 2e-3))
    st = jaxart.eval_fk(model, jnp.array([0.3]), jnp.zeros(1), model.state())
    for _ in range(1500):
        st = step(st)
    nxt = step(st)
    tau = float(eval_joint_solver_forces(model, st, None, nxt.joint_qd, 2e-3)[0])
    # gravity pulls the +X arm toward +θ about +Y (down): the limit at 0.6 holds it
    np.testing.assert_allclose(float(d.qpos[0]), 0.6, atol=5e-3)
    np.testing.assert_allclose(d.qfrc_constraint[0], -m_ * G * lc * np.cos(0.6), rtol=1e-3)
    np.testing.assert_allclose(tau, d.qfrc_constraint[0], rtol=1e-3)


def test_body_contact_wrenches_box_at_rest():
    """Box sticking on an incline: the contact wrench carries its weight with no moment about the COM, and
    with it as ``body_f`` the FREE joint transmits nothing (the step's own equation of motion)."""
    theta = 0.25
    cfg = ShapeConfig(ke=1e4, kd=280.0, kf=1e3, mu=0.8, density=1000.0)
    b = jaxart.ModelBuilder()
    q = (0.0, np.sin(theta / 2), 0.0, np.cos(theta / 2))
    b.add_shape_plane(xform=((0.0, 0.0, 0.0), q), width=0.0, length=0.0, cfg=cfg)
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    body = b.add_body(xform=(tuple(normal * 0.1), q))
    b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1, cfg=cfg)
    model = b.finalize(dtype=F64)
    dt = 4e-3
    solver = jaxart.solvers.SolverFeatherstone(model, angular_damping=0.0)
    step = jax.jit(lambda s: solver.step(s, None, model.collide(s), dt))
    st = model.state()
    for _ in range(300):
        st = step(st)
    contacts = model.collide(st)
    nxt = step(st)
    wc = np.asarray(eval_body_contact_wrenches(model, st, contacts, nxt.joint_qd, dt))
    mass = float(model.body_mass[0])
    np.testing.assert_allclose(wc[0, :3], [0.0, 0.0, mass * G], rtol=1e-3, atol=1e-3 * mass * G)
    np.testing.assert_allclose(wc[0, 3:], 0.0, atol=1e-3)
    qdd = (nxt.joint_qd - st.joint_qd) / dt
    wj = np.asarray(eval_joint_wrenches(model, st, qdd, body_f=st.body_f + wc))
    np.testing.assert_allclose(wj, 0.0, atol=1e-8 * mass * G)


def test_bad_inputs():
    model, _ = _cantilever()
    st = model.state()
    with pytest.raises(ValueError, match="frame"):
        eval_joint_wrenches(model, st, jnp.zeros(2), frame="body")
    with pytest.raises(ValueError, match="joint_qdd"):
        eval_joint_wrenches(model, st, jnp.zeros(3))
    with pytest.raises(ValueError, match="joint_qd_next"):
        eval_joint_solver_forces(model, st, None, jnp.zeros(1), 1e-3)
