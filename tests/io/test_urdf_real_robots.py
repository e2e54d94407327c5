"""URDF import of real robot description packages, checked against Pinocchio and MuJoCo.

The robots ship inside the ``example-robot-data`` wheel (installed by ``pip install -e .[test]``; its
URDFs and DAE/STL meshes live under ``<site-packages>/cmeel.prefix/share/example-robot-data/robots``),
so nothing is copied into this repository. For each robot — a quadruped, a humanoid, an arm and a
hand — link world poses at random joint values and the joint-space mass matrix must agree with
Pinocchio (``pin``, which reads the URDF itself) and with MuJoCo's URDF compiler to 1e-6 in float64.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from test_urdf_import import MJ_COMPILER, _mj_to_jaxart_velocity

import jaxart
from jaxart.sim.validate import np_quat_to_matrix

jax.config.update("jax_enable_x64", True)

try:
    import pinocchio as pin
except ImportError:  # the MuJoCo checks still run
    pin = None

TOL = 1e-6
# name → (URDF path inside the package's robots folder, floating base)
ROBOTS = {
    "solo12 (quadruped, STL)": ("solo_description/robots/solo12.urdf", True),
    "talos_reduced (humanoid, STL)": ("talos_data/robots/talos_reduced.urdf", True),
    "ur5 (arm, DAE + STL)": ("ur_description/urdf/ur5_robot.urdf", False),
    "allegro_right_hand (hand, STL)": ("allegro_hand_description/urdf/allegro_right_hand.urdf", False),
}


def _share_dir() -> str:
    """``.../share``: holds the ``example-robot-data`` package that ``package://`` URIs name."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data (part of the test extra) is not installed")
    share = os.path.abspath(str(dist.locate_file("cmeel.prefix/share")))
    if not os.path.isdir(os.path.join(share, "example-robot-data", "robots")):
        pytest.skip(f"example-robot-data is installed but its robots folder is not under {share}")
    return share


def _load(robot: str):
    """(URDF path, floating, jaxart builder, import result, float64 model)."""
    share = _share_dir()
    return _import(robot, share)


@functools.cache
def _import(robot: str, share: str):
    """Import once per robot (meshes included): both oracles' tests reuse it."""
    rel, floating = ROBOTS[robot]
    path = os.path.join(share, "example-robot-data", "robots", rel)
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # transmissions, gazebo blocks, ... are reported
        res = b.add_urdf(path, floating=floating or None, package_dirs=[share])
    return path, floating, b, res, b.finalize(dtype=jnp.float64)


@jax.jit
def _fk_and_mass(model, q):
    st = jaxart.eval_fk(model, q, jnp.zeros(model.joint_dof_count, q.dtype))
    return st.body_q, jaxart.eval_mass_matrix(model, st.replace(joint_q=q))[0]


def _random_q(b, res, rng, floating):
    """jaxart ``joint_q`` and ``{joint name: value}`` for the 1-DOF joints, within limits (±3 when unlimited)."""
    q = np.asarray(b.joint_q, dtype=np.float64).copy()
    values = {}
    lower, upper = (np.asarray(b.joint_dof[k]) for k in ("limit_lower", "limit_upper"))
    for name, j in res["joints"].items():
        if b.joint_type[j] not in (int(jaxart.JointType.REVOLUTE), int(jaxart.JointType.PRISMATIC)):
            continue
        d = b.joint_qd_start[j]
        values[name] = q[b.joint_q_start[j]] = rng.uniform(max(lower[d], -3.0), min(upper[d], 3.0))
    if floating:
        quat = rng.normal(size=4)
        q[:7] = np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat)])  # (x, y, z, qx, qy, qz, qw)
    return q, values


def _skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def _pin_q_and_velocity_map(pm, b, res, q, values):
    """Pinocchio's ``q`` and the matrix ``J`` with ``v_pin = J qd_jaxart``."""
    q_pin = pin.neutral(pm)
    jac = np.zeros((pm.nv, b.joint_dof_count))
    for i in range(1, pm.njoints):
        jm, name = pm.joints[i], pm.names[i]
        if name == "root_joint":
            q_pin[:7] = q[:7]  # both (position, quaternion x y z w) of the root link frame
            r = np_quat_to_matrix(q[3:7])
            # jaxart: (v of the COM, ω) in the world; Pinocchio: (v of the origin, ω) in the root frame
            jac[0:3, 0:3] = r.T
            jac[0:3, 3:6] = r.T @ _skew(r @ b.body_com[res["bodies"][_root_link(b, res)]])
            jac[3:6, 3:6] = r.T
            continue
        assert jm.nv == 1, f"unexpected Pinocchio joint {jm.shortname()} for {name!r}"
        theta = values[name]
        if jm.nq == 2:  # continuous: (cos, sin)
            q_pin[jm.idx_q:jm.idx_q + 2] = np.cos(theta), np.sin(theta)
        else:
            q_pin[jm.idx_q] = theta
        jac[jm.idx_v, b.joint_qd_start[res["joints"][name]]] = 1.0
    return q_pin, jac


def _root_link(b, res):
    return next(n for n, k in res["bodies"].items() if k == b.joint_child[res["joints"]["floating_base"]])


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_link_poses_and_mass_matrix_match_pinocchio(robot):
    if pin is None:
        pytest.skip("Pinocchio (`pip install pin`, part of the test extra) is not installed")
    path, floating, b, res, model = _load(robot)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    pd = pm.createData()
    assert np.isclose(sum(b.body_mass), sum(pm.inertias[i].mass for i in range(pm.njoints)), rtol=1e-12)
    assert b.joint_dof_count == pm.nv
    rng = np.random.default_rng(7)
    for _ in range(2):
        q, values = _random_q(b, res, rng, floating)
        q_pin, jac = _pin_q_and_velocity_map(pm, b, res, q, values)
        body_q, h = (np.asarray(x) for x in _fk_and_mass(model, jnp.asarray(q)))
        pin.framesForwardKinematics(pm, pd, q_pin)
        for link, k in res["bodies"].items():
            frame = pd.oMf[pm.getFrameId(link, pin.BODY)]
            np.testing.assert_allclose(body_q[k, :3], frame.translation, atol=TOL, err_msg=link)
            np.testing.assert_allclose(np_quat_to_matrix(body_q[k, 3:]), frame.rotation, atol=TOL, err_msg=link)
        m_pin = pin.crba(pm, pd, q_pin)
        m_pin = np.triu(m_pin) + np.triu(m_pin, 1).T
        n = b.joint_dof_count
        np.testing.assert_allclose(h[:n, :n], jac.T @ m_pin @ jac, atol=TOL)


def _mujoco(path: str, floating: bool):
    """MuJoCo's compile of the same URDF, geometry stripped, or None when MuJoCo rejects it.

    MuJoCo's URDF reader drops mesh folders (it looks every mesh up in one ``meshdir``), which these
    packages' nested ``meshes/...`` trees defeat; inertias come from ``<inertial>``, so the geometry is
    not needed for poses and the mass matrix.
    """
    xml = open(path).read()
    xml = re.sub(r"<(visual|collision)\b.*?</\1>", "", xml, flags=re.S)
    xml = re.sub(r"(<robot\b[^>]*>)", lambda mt: mt.group(1) + MJ_COMPILER, xml, count=1)
    try:
        spec = mujoco.MjSpec.from_string(xml)
        if floating:
            spec.worldbody.first_body().add_freejoint()
        return spec.compile()
    except ValueError as e:
        return str(e)


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_link_poses_and_mass_matrix_match_mujoco(robot):
    path, floating, b, res, model = _load(robot)
    m = _mujoco(path, floating)
    if isinstance(m, str):
        pytest.skip(f"MuJoCo rejects {robot}: {m}")
    # every link is a body in both (no static-body fusion); MuJoCo makes a link named "world" its world body
    assert {m.body(i).name for i in range(1, m.nbody)} == set(res["bodies"]) - {"world"}
    d = mujoco.MjData(m)
    rng = np.random.default_rng(11)
    for _ in range(2):
        q, values = _random_q(b, res, rng, floating)
        d.qpos[:] = 0.0
        if floating:
            d.qpos[:7] = np.concatenate([q[:3], q[[6, 3, 4, 5]]])
        for name, theta in values.items():
            d.qpos[m.joint(name).qposadr[0]] = theta
        mujoco.mj_forward(m, d)
        body_q, h = (np.asarray(x) for x in _fk_and_mass(model, jnp.asarray(q)))
        for i in range(1, m.nbody):
            k = res["bodies"][m.body(i).name]
            np.testing.assert_allclose(body_q[k, :3], d.xpos[i], atol=TOL, err_msg=m.body(i).name)
            np.testing.assert_allclose(np_quat_to_matrix(body_q[k, 3:]), d.xmat[i].reshape(3, 3), atol=TOL,
                                       err_msg=m.body(i).name)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        t = _mj_to_jaxart_velocity(m, d, res, b, floating)
        n = b.joint_dof_count
        np.testing.assert_allclose(t.T @ h[:n, :n] @ t, full, atol=TOL)
