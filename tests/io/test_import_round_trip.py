"""URDF → ModelBuilder → USD (``export_model``) → ``add_usd``: the re-imported model is the same robot.

Oracle: the URDF import itself. Bodies and joints are matched through the label → prim path map that
``export_model`` returns; masses, COMs, inertias, joint types, axes and limits must survive, and link
world poses and the joint-space mass matrix must agree at random joint values. (The gripper's URDF mimic
constraints are not written to USD; ``export_model`` reports them.)
"""

from __future__ import annotations

import importlib.metadata
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import TEST_ASSETS

import jaxart
from jaxart.io.usd import export_model

pytest.importorskip("pxr", reason="usd-core (pxr) is needed for USD export and import")
jax.config.update("jax_enable_x64", True)

ASSETS = os.path.join(TEST_ASSETS, "urdf")
JT = jaxart.JointType


@jax.jit
def _fk_and_mass(model, q):
    st = jaxart.eval_fk(model, q, jnp.zeros(model.joint_dof_count, q.dtype))
    return st.body_q, jaxart.eval_mass_matrix(model, st.replace(joint_q=q))[0]


def _urdf_model(path, **kw):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # dropped URDF extras are reported, not our subject here
        b.add_urdf(path, **kw)
    return b.finalize(dtype=jnp.float64)


def _round_trip(model, path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        written = export_model(model, path)
    lost = [str(w.message) for w in caught if "massless body" in str(w.message)]
    assert not lost, lost  # such a body would come back with its shapes' mass
    b2 = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        b2.add_usd(str(path))
    model2 = b2.finalize(dtype=jnp.float64)
    body = {lab: model2.body_label.index(p) for lab, p in written["bodies"].items()}
    joint = {lab: model2.joint_label.index(p) for lab, p in written["joints"].items()}
    return model2, body, joint


def _check_inertial_and_joints(model, model2, body, joint):
    assert model2.body_count == model.body_count and model2.joint_count == model.joint_count
    assert sorted(body) == sorted(model.body_label) and sorted(joint) == sorted(model.joint_label)
    for i, lab in enumerate(model.body_label):
        k = body[lab]
        assert float(model2.body_mass[k]) == pytest.approx(float(model.body_mass[i]), rel=1e-6), lab
        np.testing.assert_allclose(model2.body_com[k], model.body_com[i], atol=1e-7, err_msg=lab)
        np.testing.assert_allclose(model2.body_inertia[k], model.body_inertia[i], rtol=1e-5, atol=1e-8, err_msg=lab)
    for j, lab in enumerate(model.joint_label):
        k = joint[lab]
        assert model2.joint_type[k] == model.joint_type[j], lab
        d, d2, n = int(model.joint_qd_start[j]), int(model2.joint_qd_start[k]), int(sum(model.joint_dof_dim[j]))
        if model.joint_type[j] in (JT.REVOLUTE, JT.PRISMATIC):
            lo, hi = (np.asarray(getattr(model, f"joint_limit_{s}"))[d] for s in ("lower", "upper"))
            lo2, hi2 = (np.asarray(getattr(model2, f"joint_limit_{s}"))[d2] for s in ("lower", "upper"))
            if abs(lo) < 1e6:  # finite limits (continuous joints are unlimited in both)
                assert (lo2, hi2) == pytest.approx((lo, hi), rel=1e-6, abs=1e-9), lab
            else:
                assert lo2 <= -1e6 and hi2 >= 1e6, lab
        assert n == int(sum(model2.joint_dof_dim[k])), lab


def _check_fk_and_mass(model, model2, body, joint, *, seed=0, tol=1e-6):
    """Link poses and the mass matrix agree at random coordinates (FREE roots: random pose)."""
    rng = np.random.default_rng(seed)
    qs, qs2 = np.asarray(model.joint_q_start), np.asarray(model2.joint_q_start)
    ds, ds2 = np.asarray(model.joint_qd_start), np.asarray(model2.joint_qd_start)
    perm = np.zeros(model.joint_dof_count, dtype=int)  # jaxart dof → re-imported dof
    for j, lab in enumerate(model.joint_label):
        perm[ds[j]:ds[j + 1]] = np.arange(ds2[joint[lab]], ds2[joint[lab] + 1])
    for _ in range(2):
        q = np.asarray(model.joint_q, dtype=np.float64).copy()
        for j in range(model.joint_count):
            if model.joint_type[j] == JT.FREE:
                quat = rng.normal(size=4)
                q[qs[j]:qs[j + 1]] = np.concatenate([rng.uniform(-1, 1, 3), quat / np.linalg.norm(quat)])
            elif model.joint_type[j] in (JT.REVOLUTE, JT.PRISMATIC):
                lo, hi = float(model.joint_limit_lower[ds[j]]), float(model.joint_limit_upper[ds[j]])
                q[qs[j]] = rng.uniform(max(lo, -3.0), min(hi, 3.0))
        q2 = np.asarray(model2.joint_q, dtype=np.float64).copy()
        for j, lab in enumerate(model.joint_label):
            q2[qs2[joint[lab]]:qs2[joint[lab] + 1]] = q[qs[j]:qs[j + 1]]
        (x1, h1), (x2, h2) = ((np.asarray(a) for a in _fk_and_mass(m, jnp.asarray(v)))
                              for m, v in ((model, q), (model2, q2)))
        for i, lab in enumerate(model.body_label):
            a, c = x1[i], x2[body[lab]]
            np.testing.assert_allclose(c[:3], a[:3], atol=tol, err_msg=lab)
            assert abs(abs(a[3:] @ c[3:]) - 1.0) < tol, lab
        n = model.joint_dof_count
        np.testing.assert_allclose(h2[np.ix_(perm, perm)], h1[:n, :n], atol=tol, rtol=1e-5)


@pytest.mark.parametrize("case", ["arm fixed", "arm floating", "gripper (OBJ/STL/DAE meshes)"])
def test_urdf_usd_round_trip_own_robots(case, tmp_path):
    if case.startswith("arm"):
        model = _urdf_model(os.path.join(ASSETS, "arm.urdf"), floating=case == "arm floating" or None)
    else:
        model = _urdf_model(os.path.join(ASSETS, "jaxart_test_description", "urdf", "gripper.urdf"),
                            package_dirs=[ASSETS])
    model2, body, joint = _round_trip(model, tmp_path / "robot.usda")
    _check_inertial_and_joints(model, model2, body, joint)
    _check_fk_and_mass(model, model2, body, joint)
    # collision shapes keep their types (meshes stay meshes)
    assert sorted(np.asarray(model2.shape_type).tolist()) == sorted(np.asarray(model.shape_type).tolist())


def test_urdf_usd_round_trip_real_arm(tmp_path):
    """UR5 from ``example-robot-data`` (DAE and STL meshes), when the package is installed.

    Fixed joints are collapsed: the URDF's ``ee_link`` is massless (``<mass value="0"/>``) yet has a
    collision box, which USD cannot express (MassAPI ``mass = 0`` means "unset", so the box's density
    mass returns on re-import; ``export_model`` reports it). Merged into ``wrist_3_link`` it round-trips.
    """
    try:
        share = str(importlib.metadata.distribution("example-robot-data").locate_file("cmeel.prefix/share"))
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data (part of the test extra) is not installed")
    model = _urdf_model(os.path.join(share, "example-robot-data", "robots", "ur_description", "urdf",
                                     "ur5_robot.urdf"), package_dirs=[share], collapse_fixed_joints=True)
    model2, body, joint = _round_trip(model, tmp_path / "ur5.usda")
    _check_inertial_and_joints(model, model2, body, joint)
    _check_fk_and_mass(model, model2, body, joint, seed=3)


def test_add_usd_keeps_small_authored_inertia():
    """usd-core's ComputeMassProperties drops authored diagonal inertias of about 1e-6 and below (a
    fingertip's); add_usd must keep the body's authored MassAPI ``diagonalInertia``/``principalAxes``."""
    from pxr import Gf, Usd, UsdGeom, UsdPhysics

    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdGeom.Xform.Define(stage, "/World")
    prim = UsdGeom.Xform.Define(stage, "/World/tip").GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    mass_api = UsdPhysics.MassAPI.Apply(prim)
    mass_api.CreateMassAttr(0.01)
    mass_api.CreateDiagonalInertiaAttr(Gf.Vec3f(1e-7, 2e-7, 3e-7))
    axes = Gf.Quatf(0.8, 0.0, 0.6, 0.0)  # 73.7° about y
    mass_api.CreatePrincipalAxesAttr(axes)
    cube = UsdGeom.Cube.Define(stage, "/World/tip/box")
    cube.CreateSizeAttr(0.02)
    UsdPhysics.CollisionAPI.Apply(cube.GetPrim())
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = b.add_usd(stage)
    k = out["bodies"]["/World/tip"]
    c, s = 0.8 ** 2 - 0.6 ** 2, 2 * 0.8 * 0.6
    rot = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    assert b.body_mass[k] == pytest.approx(0.01, rel=1e-6)
    np.testing.assert_allclose(b.body_inertia[k], rot @ np.diag([1e-7, 2e-7, 3e-7]) @ rot.T, rtol=1e-5, atol=1e-13)
