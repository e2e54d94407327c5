"""ACCELERATION drives (PhysX ``eACCELERATION``) in SolverXPBD, SolverSemiImplicit and SolverMuJoCo (issue 19 item 5).

Oracles: SolverFeatherstone's effective inertia ``1 / (H⁻¹)_ii`` (for a joint whose parent is the world or a
floating base it equals the joint's two-body inertia of :mod:`jaxart.solvers.maximal.drive_inertia`); the
closed-form PD recursions in acceleration units (implicit for XPBD, symplectic Euler for SemiImplicit) on a hinge
about a principal axis through its COM and a slider through its COM, where the drive is the only force and no
joint row is strained, so the trajectory is the recursion's whatever the masses; SolverFeatherstone's trajectory
of the same drive on a hinge with an offset COM under gravity; central finite differences.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart import JointDriveType
from jaxart.dynamics.drive_inertia import drive_inertia
from jaxart.solvers.maximal.drive_inertia import joint_drive_inertia
from jaxart.solvers.maximal.integrate import inverse_mass_properties

F64 = jnp.float64
OMEGA, TARGET = 12.0, 0.5  # critically damped: ke = ω², kd = 2ω
ACCEL = dict(target_q=TARGET, target_ke=OMEGA ** 2, target_kd=2 * OMEGA, drive_type=JointDriveType.ACCELERATION)


def _initial(model, q=None):
    q = model.joint_q if q is None else jnp.asarray(q, F64)
    return jaxart.eval_fk(model, q, model.joint_qd, model.state())


@functools.partial(jax.jit, static_argnums=(1, 2))
def _rollout(solver, steps: int, dt: float):
    """``(steps, joint_coord_count)`` coordinates of a rollout from the model's initial state (solver: a pytree)."""

    def body(s, _):
        s = solver.step(s, None, None, dt)
        return s, s.joint_q

    return jax.lax.scan(body, _initial(solver.model), None, length=steps)[1]


def _recursion(steps: int, dt: float, *, implicit: bool) -> np.ndarray:
    """``q̈ = ke (q* − q) − kd q̇`` from rest: implicit Euler (XPBD's compliant row) or symplectic Euler (explicit)."""
    ke, kd = OMEGA ** 2, 2 * OMEGA
    q = v = 0.0
    out = []
    for _ in range(steps):
        if implicit:
            a = (ke * (TARGET - q - dt * v) - kd * v) / (1.0 + kd * dt + ke * dt * dt)
        else:
            a = ke * (TARGET - q) - kd * v
        v += dt * a
        q += dt * v
        out.append(q)
    return np.asarray(out)


@functools.lru_cache(maxsize=None)
def _centred_pair():
    """A hinge about Y through its COM and a slider along an oblique axis through its COM, both from the world."""
    b = jaxart.ModelBuilder(gravity=0.0)
    hinge = b.add_link(mass=1.0, inertia=np.diag([0.02, 0.05, 0.03]), lock_inertia=True)
    slider = b.add_link(mass=1.0, inertia=np.diag([0.02, 0.05, 0.03]), lock_inertia=True)
    b.add_articulation([b.add_joint_revolute(-1, hinge, axis=(0, 1, 0), **ACCEL)])
    b.add_articulation([b.add_joint_prismatic(-1, slider, axis=(0.6, 0.0, 0.8), **ACCEL)])
    return b.finalize(dtype=F64)


def _scaled(model, mass, inertia):
    """The model with every body's mass and inertia set (same topology: compiled rollouts are reused)."""
    n = model.body_count
    return model.replace(body_mass=jnp.full((n,), mass, F64),
                         body_inertia=jnp.broadcast_to(jnp.diag(jnp.asarray(inertia, F64)), (n, 3, 3)))


@functools.lru_cache(maxsize=None)
def _offset_hinge():
    """A hinge about Y with the COM 0.3 m off the axis, under gravity (its torque depends on the angle)."""
    b = jaxart.ModelBuilder()
    link = b.add_link(com=(0.3, 0.0, 0.05), mass=2.0, inertia=np.diag([0.01, 0.02, 0.015]), lock_inertia=True)
    b.add_articulation([b.add_joint_revolute(-1, link, axis=(0, 1, 0), **ACCEL)])
    return b.finalize(dtype=F64)


def _maximal_inertia(model, state):
    inv_m, inv_i = inverse_mass_properties(model, F64)
    return np.asarray(joint_drive_inertia(model, state.body_q, inv_m, inv_i))


def test_joint_drive_inertia_equals_one_over_inverse_mass_matrix_diagonal():
    """Joints whose parent is the world or a floating base: the two-body inertia with the joint's locked rows held
    is exactly the articulation's ``1 / (H⁻¹)_ii`` (hinge with offset COM, oblique slider, 2-axis D6, 1+1 D6)."""
    cfg = jaxart.JointDofConfig
    b = jaxart.ModelBuilder()
    inertia = np.array([[0.05, 0.01, 0.0], [0.01, 0.03, 0.005], [0.0, 0.005, 0.04]])
    hinge = b.add_link(com=(0.3, 0.05, -0.1), mass=2.0, inertia=inertia, lock_inertia=True)
    b.add_articulation([b.add_joint_revolute(-1, hinge, axis=(0, 1, 0), parent_xform=((0, 0, 1), (0, 0, 0, 1)))])
    children = [
        lambda p, c, x: b.add_joint_revolute(p, c, axis=(0.0, 0.6, 0.8), parent_xform=x),
        lambda p, c, x: b.add_joint_prismatic(p, c, axis=(0.6, 0.0, 0.8), parent_xform=x),
        lambda p, c, x: b.add_joint_d6(p, c, angular_axes=[cfg(axis=(1, 0, 0)), cfg(axis=(0, 0, 1))], parent_xform=x),
        lambda p, c, x: b.add_joint_d6(p, c, linear_axes=[cfg(axis=(0, 0, 1))], angular_axes=[cfg(axis=(1, 0, 0))],
                                       parent_xform=x),
    ]
    for k, add in enumerate(children):
        base = b.add_link(com=(0.05, 0.0, 0.02), mass=3.0 + k, inertia=inertia * (1 + k), lock_inertia=True)
        child = b.add_link(com=(0.2, -0.1, 0.1), mass=0.7, inertia=inertia * 0.5, lock_inertia=True)
        b.add_articulation([b.add_joint_free(base), add(base, child, ((0.1, 0.2, 0.0), (0.0, 0.0, 0.0, 1.0)))])
    model = b.finalize(dtype=F64)
    rng = np.random.default_rng(4)
    q = np.array(model.joint_q)
    topo = model.topology
    jt, qs = np.asarray(topo.joint_type.array), np.asarray(topo.joint_q_start.array)
    for j in range(model.joint_count):
        if jt[j] == jaxart.JointType.FREE:
            q[qs[j]:qs[j] + 3] = rng.normal(size=3)
            rot = rng.normal(size=4)
            q[qs[j] + 3:qs[j] + 7] = rot / np.linalg.norm(rot)
        else:
            q[qs[j]:qs[j + 1]] = rng.uniform(-0.6, 0.6, size=qs[j + 1] - qs[j])
    st = _initial(model, q)
    ref = np.asarray(drive_inertia(model, st.joint_q, st.body_q))
    got = _maximal_inertia(model, st)
    driven = np.ones(model.joint_dof_count, bool)
    ds = np.asarray(topo.joint_qd_start.array)
    for j in np.nonzero(jt == jaxart.JointType.FREE)[0]:
        driven[ds[j]:ds[j + 1]] = False  # FREE DOFs have no drive row in the maximal solvers
    np.testing.assert_allclose(got[driven], ref[driven], rtol=1e-9)
    assert np.ptp(ref[driven]) > 0.1  # distinct inertias (not a constant that any scaling would match)


@pytest.mark.parametrize("solver_cls", ["SolverXPBD", "SolverSemiImplicit"])
def test_acceleration_drive_follows_closed_form_for_any_mass(solver_cls):
    """Light and 40× heavier bodies (other inertia ratios) follow the same PD recursion in acceleration units."""
    implicit = solver_cls == "SolverXPBD"
    dt, steps = (4e-3, 100) if implicit else (1e-3, 400)
    ref = _recursion(steps, dt, implicit=implicit)
    base = _centred_pair()
    cls = getattr(jaxart.solvers, solver_cls)
    for mass, inertia in ((1.0, (0.02, 0.05, 0.03)), (40.0, (3.0, 0.4, 1.0))):
        model = _scaled(base, mass, inertia)
        inv_m, inv_i = inverse_mass_properties(model, F64)
        m_eff = np.asarray(joint_drive_inertia(model, _initial(model).body_q, inv_m, inv_i))
        np.testing.assert_allclose(m_eff, [inertia[1], mass], rtol=1e-12)  # a force drive would differ 40×
        q = np.asarray(_rollout(cls(model), steps, dt))
        np.testing.assert_allclose(q[:, 0], ref, atol=1e-9)
        np.testing.assert_allclose(q[:, 1], ref, atol=1e-9)


@pytest.mark.parametrize("solver_cls, dt, tol", [("SolverXPBD", 2e-3, 0.0), ("SolverSemiImplicit", 2e-4, 0.0),
                                                 ("SolverMuJoCo", 2e-3, 0.0)])
def test_acceleration_drive_matches_featherstone(solver_cls, dt, tol):
    """Offset COM under gravity: the same acceleration drive as SolverFeatherstone over 0.3 s (tolerances in the
    docstring of each case: first-order schemes that differ in how they treat the drive and gravity)."""
    model = _offset_hinge()
    steps = int(round(0.3 / dt))
    ref = np.asarray(_rollout(jaxart.solvers.SolverFeatherstone(model), steps, dt))[:, 0]
    if solver_cls == "SolverMuJoCo":
        solver = jaxart.solvers.SolverMuJoCo(model)
        q = np.asarray(jax.jit(lambda: _mujoco_rollout(solver, steps, dt))())[:, 0]
    else:
        kwargs = {"iterations": 8} if solver_cls == "SolverXPBD" else {}
        q = np.asarray(_rollout(getattr(jaxart.solvers, solver_cls)(model, **kwargs), steps, dt))[:, 0]
    print(solver_cls, np.abs(q - ref).max(), np.abs(ref).max(), ref[-1])
    np.testing.assert_allclose(q, ref, atol=tol)


def _mujoco_rollout(solver, steps, dt):
    def body(s, _):
        s = solver.step(s, None, None, dt)
        return s, s.joint_q

    return jax.lax.scan(body, _initial(solver.model), None, length=steps)[1]


def test_xpbd_acceleration_drive_gradient_fd():
    """d(angle after 5 XPBD steps)/d(target) against central differences (offset COM: the inertia is pose-dependent)."""
    model = _offset_hinge()
    solver = jaxart.solvers.SolverXPBD(model, iterations=4)
    st0 = _initial(model, [0.2])

    @jax.jit
    def final(target):
        control = model.control().replace(joint_target_q=jnp.reshape(target, (1,)))
        s = st0
        for _ in range(5):
            s = solver.step(s, control, None, 5e-3)
        return s.joint_q[0]

    t, h = 0.7, 1e-5
    fd = (final(t + h) - final(t - h)) / (2 * h)
    grad = jax.grad(final)(jnp.asarray(t, F64))
    assert abs(float(fd)) > 1e-3
    np.testing.assert_allclose(float(grad), float(fd), rtol=1e-6)


def test_unsupported_acceleration_drives_raise_precisely():
    """SolverMuJoCo: ACCELERATION drives on loop-closing joints; SolverXPBD: any drive on a FREE joint."""
    b = jaxart.ModelBuilder()
    body = b.add_link(com=(0.3, 0.0, 0.0), mass=1.0, inertia=np.eye(3) * 0.01, lock_inertia=True)
    b.add_articulation([b.add_joint_free(body)])
    b.add_joint_revolute(-1, body, axis=(0, 0, 1), label="loop_hinge", **ACCEL)
    with pytest.raises(NotImplementedError, match="SolverMuJoCo.*loop_hinge.*ACCELERATION.*loop-closing"):
        jaxart.solvers.SolverMuJoCo(b.finalize(dtype=F64))
    b = jaxart.ModelBuilder()
    body = b.add_link(mass=1.0, inertia=np.eye(3) * 0.01, lock_inertia=True)
    b.add_articulation([b.add_joint_free(body, label="floater")])
    b.joint_target_mode[0] = int(jaxart.JointTargetMode.POSITION)
    b.joint_dof["target_ke"][0] = 10.0
    model = b.finalize(dtype=F64)
    with pytest.raises(NotImplementedError, match="floater.*drive on FREE.*no scalar"):
        jaxart.solvers.SolverXPBD(model)
