"""ACCELERATION drives (PhysX ``eACCELERATION``) in every solver that claims them.

Parametrised by the README's feature table (:mod:`claims`, row "ACCELERATION drives"): each claimant's case names
the PD recursion its integrator follows and the tolerance.

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
from claims import solver_params

import jaxart
from jaxart import JointDriveType
from jaxart.dynamics.engine.drive_inertia import drive_inertia
from jaxart.solvers.maximal.drive_inertia import joint_drive_inertia
from jaxart.solvers.maximal.integrate import inverse_mass_properties

F64 = jnp.float64
OMEGA, TARGET = 12.0, 0.5  # critically damped: ke = ω², kd = 2ω
ACCEL = dict(target_q=TARGET, target_ke=OMEGA ** 2, target_kd=2 * OMEGA, drive_type=JointDriveType.ACCELERATION)


def _initial(model, q=None):
    q = model.joint_q if q is None else jnp.asarray(q, F64)
    return jaxart.eval_fk(model, q, model.joint_qd, model.state())


DT, STEPS = 1e-3, 300


@functools.partial(jax.jit, static_argnums=(1,))
def _rollout(solver, steps: int = STEPS):
    """``(steps, joint_coord_count)`` coordinates of a rollout from the model's initial state (solver: a pytree)."""

    def body(s, _):
        s = solver.step(s, None, None, DT)
        return s, s.joint_q

    return jax.lax.scan(body, _initial(solver.model), None, length=steps)[1]


def _recursion(kind: str) -> np.ndarray:
    """``q̈ = ke (q* − q) − kd q̇`` from rest, as each solver integrates it: ``implicit`` (SolverFeatherstone's
    implicit PD, XPBD's compliant row), ``explicit`` (SemiImplicit: symplectic Euler), ``damping`` (MuJoCo's
    implicit-fast integrator: the velocity term implicit, the position term explicit)."""
    ke, kd = OMEGA ** 2, 2 * OMEGA
    q = v = 0.0
    out = []
    for _ in range(STEPS):
        if kind == "implicit":
            a = (ke * (TARGET - q - DT * v) - kd * v) / (1.0 + kd * DT + ke * DT * DT)
        elif kind == "explicit":
            a = ke * (TARGET - q) - kd * v
        else:
            a = (ke * (TARGET - q) - kd * v) / (1.0 + kd * DT)
        v += DT * a
        q += DT * v
        out.append(q)
    return np.asarray(out)


@functools.cache
def _model():
    """Three bodies on joints from the world, under gravity: a hinge about Y through its COM and a horizontal slider
    through its COM (the drive is their only generalized force and strains no joint row), and a hinge about Y with
    the COM 0.3 m off the axis (gravity torque depends on the angle; effective inertia ``I_yy + m d²``)."""
    b = jaxart.ModelBuilder()
    hinge = b.add_link(mass=2.0, inertia=np.diag([0.02, 0.05, 0.03]), lock_inertia=True)
    slider = b.add_link(mass=3.0, inertia=np.diag([0.02, 0.05, 0.03]), lock_inertia=True)
    offset = b.add_link(com=(0.3, 0.0, 0.05), mass=2.0, inertia=np.diag([0.01, 0.02, 0.015]), lock_inertia=True)
    b.add_articulation([b.add_joint_revolute(-1, hinge, axis=(0, 1, 0), **ACCEL)])
    b.add_articulation([b.add_joint_prismatic(-1, slider, axis=(0.6, 0.8, 0.0), **ACCEL)])
    b.add_articulation([b.add_joint_revolute(-1, offset, axis=(0, 1, 0), **ACCEL)])
    return b.finalize(dtype=F64)


def _heavier(model):
    """The centred hinge 20× heavier with other inertia ratios, the slider 15× heavier (same topology)."""
    return model.replace(body_mass=model.body_mass.at[:2].set(jnp.array([40.0, 45.0], F64)),
                         body_inertia=model.body_inertia.at[0].set(jnp.diag(jnp.array([3.0, 0.4, 1.0], F64))))


@functools.cache
def _featherstone() -> np.ndarray:
    return np.asarray(_rollout(jaxart.solvers.SolverFeatherstone(_model())))


def _maximal_inertia(model, state):
    inv_m, inv_i = inverse_mass_properties(model, F64)
    return joint_drive_inertia(model, state.body_q, inv_m, inv_i)


@jax.jit
def _both_inertias(model, q):
    st = _initial(model, q)
    return drive_inertia(model, st.joint_q, st.body_q), _maximal_inertia(model, st)


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
    ref, got = (np.asarray(x) for x in _both_inertias(model, q))
    driven = np.ones(model.joint_dof_count, bool)
    ds = np.asarray(topo.joint_qd_start.array)
    for j in np.nonzero(jt == jaxart.JointType.FREE)[0]:
        driven[ds[j]:ds[j + 1]] = False  # a FREE joint's rows see its two bodies only (here the world and the base)
    np.testing.assert_allclose(got[driven], ref[driven], rtol=1e-9)
    assert np.ptp(ref[driven]) > 0.1  # distinct inertias (not a constant that any scaling would match)


# XPBD: the recursion up to the first-order quaternion updates of the prediction and the projection and the velocity
# from the quaternion difference (exact to O((ω dt)³) per step, ω ≤ 2.3 rad/s here); the slider is exact.
CASES = {"featherstone": ("implicit", jaxart.solvers.SolverFeatherstone, {}, 1e-10),
         "xpbd": ("implicit", jaxart.solvers.SolverXPBD, {"iterations": 8}, 2e-5),
         "semi_implicit": ("explicit", jaxart.solvers.SolverSemiImplicit, {"angular_damping": 0.0}, 1e-6),
         "mujoco": ("damping", jaxart.solvers.SolverMuJoCo, {}, 1e-12)}


@pytest.mark.parametrize("key, case", solver_params("acceleration_drives", CASES))
def test_acceleration_drive_closed_form_and_featherstone(key, case):
    """Centred hinge and slider: each solver's own PD recursion in acceleration units, for light and heavy bodies
    (a force drive, or a gain scaled by the wrong inertia, would change with the masses). Offset hinge under gravity:
    SolverFeatherstone's trajectory, within the tolerance justified below."""
    kind, cls, kwargs, tol = case
    ref = _recursion(kind)
    model = _model()
    if key == "mujoco":  # the MuJoCo model is built from the masses: one model (m_eff = 0.05 and 3, not 1)
        solver = cls(model)
        runs = [np.asarray(jax.jit(lambda: _mujoco_rollout(solver))())]
    else:
        runs = [np.asarray(_rollout(cls(m, **kwargs))) for m in (model, _heavier(model))]
        np.testing.assert_allclose(runs[1][:, :2], runs[0][:, :2], atol=1e-12)
    q = runs[0]
    np.testing.assert_allclose(q[:, 0], ref, atol=tol)
    np.testing.assert_allclose(q[:, 1], ref, atol=1e-12)
    # Offset hinge vs SolverFeatherstone (implicit PD). SemiImplicit / MuJoCo integrate the PD law by their own
    # scheme: their gap to Featherstone is bounded by 3× the gap between their recursion and the implicit one over
    # the same horizon (gravity adds a torque of the same order as the drive's). XPBD integrates the same implicit
    # law; 8 Jacobi rounds leave the offset hinge's drive and joint rows slightly unconverged (2e-4 to 8e-4 rad
    # measured at 8 rounds, half that at 32), so 2e-3 rad (0.3 % of the 0.6 rad swing); scaling by the COM inertia
    # instead of the hinge inertia (10× smaller here) would miss by more than 0.1 rad.
    gap = 2e-3 if kind == "implicit" else 3.0 * np.abs(ref - _recursion("implicit")).max()
    fs = _featherstone()
    np.testing.assert_allclose(fs[:, 0], _recursion("implicit"), atol=1e-10)
    err = np.abs(q[:, 2] - fs[:, 2]).max()
    assert err < gap, (key, err, gap)
    assert np.abs(fs[:, 2]).max() > 0.3


def _mujoco_rollout(solver):
    def body(s, _):
        s = solver.step(s, None, None, DT)
        return s, s.joint_q

    return jax.lax.scan(body, _initial(solver.model), None, length=STEPS)[1]


@pytest.mark.slow  # 5 min of XLA compilation on the loaded 2-core machine (forward mode through 3 XPBD steps)
def test_xpbd_acceleration_drive_derivative_fd():
    """d(offset hinge angle after 3 XPBD steps)/d(its target) (forward mode: one compilation gives the values and the
    derivative) against central differences; its effective inertia depends on the pose through the COM lever."""
    model = _model()
    solver = jaxart.solvers.SolverXPBD(model)
    st0 = _initial(model, [0.0, 0.0, 0.2])

    def final(target):
        control = model.control().replace(joint_target_q=model.joint_target_q.at[2].set(target))

        def body(s, _):
            return solver.step(s, control, None, 5e-3), None

        return jax.lax.scan(body, st0, None, length=3)[0].joint_q[2]

    value_and_derivative = jax.jit(lambda t: jax.jvp(final, (t,), (jnp.ones_like(t),)))
    t, h = jnp.asarray(0.7, F64), 1e-5
    fd = (value_and_derivative(t + h)[0] - value_and_derivative(t - h)[0]) / (2 * h)
    derivative = value_and_derivative(t)[1]
    assert abs(float(fd)) > 1e-3
    np.testing.assert_allclose(float(derivative), float(fd), rtol=1e-6)
