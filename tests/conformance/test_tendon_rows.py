"""Fixed and spatial tendons (springs, limits, actuators) in every solver that claims them.

Parametrised by the README's feature table (:mod:`claims`, row "fixed and spatial tendons"): SolverXPBD (compliant
rows, hard limits) and SolverSemiImplicit (explicit forces, penalty limits) run the scenarios here; SolverFeatherstone
and SolverMuJoCo are checked against MuJoCo C by their own tests (:data:`CASES`).

Oracles: the reduced-coordinate tendon functions of :mod:`jaxart.dynamics.tendon_forces` (lengths, rates, joint
forces), the spring law at static equilibrium (joint-space force balance ``Jᵀ f = joint springs − joint_f``
with ``J`` from :func:`~jaxart.dynamics.tendon_jacobian.tendon_jacobian`), MuJoCo C (``mj_step``) over a short
horizon, central finite differences of the same compiled step (:mod:`fd_check`) for the derivatives of two steps
with respect to the initial state and the tendons' stiffness and rest length (a fixed and a spatial tendon in one
model), and SolverFeatherstone's clamped implicit tendon actuator for SolverXPBD's effort limit: on two sliders
pulled along their axes by a fixed and a spatial tendon actuator, both solvers' steps are the same law (the slide
is linear in the tendon length), so both follow the clamped actuator's closed-form recursion to round-off through
the saturated phase (a constant force at the effort limit) and the unsaturated approach to the target. All
float64 (conftest). The rollouts are jitted once per solver and model structure (the scenarios differ only in
traced values), to keep the compile count low; still, every rollout test compiles a solver step (about a minute
each on the shared 2-core machine), so they are in the slow tier and the default run checks the shared
maximal-coordinate tendon module and SolverSemiImplicit's step derivatives only.
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from claims import Elsewhere, solver_params
from fd_check import assert_jacobian_matches_fd

import jaxart
from jaxart.dynamics.tendon_jacobian import tendon_jacobian
from jaxart.dynamics.tendons import (
    eval_tendon_actuator_forces,
    eval_tendon_forces,
    eval_tendon_joint_forces,
    eval_tendon_lengths,
    eval_tendon_velocities,
)
from jaxart.sim.builder_tendons import TendonWrapSite
from jaxart.solvers.maximal.tendons import tendon_body_wrenches, tendon_entries, tendon_speeds

_INERTIA = np.diag([0.02, 0.03, 0.01])


class Case(NamedTuple):
    """One solver's settings in the tendon scenarios.

    Attributes:
        solver: The solver of a model.
        hard_limit: The length limit is a hard row (held exactly), else a penalty spring (``limit_ke``).
        mujoco_atol: Tolerance of the joint angles against MuJoCo C's Euler steps [rad].
        derivative_dt: Step of the finite-difference derivative check [s].
    """

    solver: object
    hard_limit: bool
    mujoco_atol: float
    derivative_dt: float


# XPBD's implicit tendon rows differ from MuJoCo's explicit Euler tendon forces by O(dt): on the spatial case
# XPBD ends 4e-3 rad from MuJoCo (SolverFeatherstone's implicit tendons, 3e-3 rad, measured while writing the
# test); SemiImplicit's penalty joints add their own compliance.
CASES = {
    "xpbd": Case(lambda m: jaxart.solvers.SolverXPBD(m, iterations=4), True, 6e-3, 1e-2),
    "semi_implicit": Case(lambda m: jaxart.solvers.SolverSemiImplicit(m, angular_damping=0.0), False, 1e-2, 1e-3),
    "featherstone": Elsewhere((
        "tests/dynamics/test_tendons.py::test_featherstone_rollout_matches_mujoco_c_step",
        "tests/dynamics/test_tendons.py::test_implicit_tendon_limit_holds_a_pushed_slider",
        "tests/dynamics/test_tendons.py::test_rollout_gradient_matches_finite_differences",
        "tests/dynamics/test_tendon_actuators.py::test_implicit_tendon_damping_and_drive_match_mujoco_implicitfast")),
    "mujoco": Elsewhere((
        "tests/dynamics/test_tendon_actuators.py::test_solver_mujoco_maps_tendon_actuators",
        "tests/dynamics/test_tendon_effort_limits.py::test_solver_mujoco_clamps_the_total_tendon_actuator_force",
    )),
}
#: Every tendon scenario runs each of these solvers; SolverXPBD's step compiles for minutes (slow tier).
SOLVERS = solver_params("tendons", CASES, slow=("xpbd",))


def _sites(b, links, offsets):
    return [TendonWrapSite(b.add_site(link, xform=(*off, 0.0, 0.0, 0.0, 1.0), label=f"s{i}"))
            for i, (link, off) in enumerate(zip(links, offsets, strict=True))]


def _hinged_pair(b) -> tuple[list[int], list[int]]:
    """Two pendulums hinged to the world (axes Y and oblique): their links and joints."""
    links, joints = [], []
    for i in range(2):
        x = (0.6 * i, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        link = b.add_link(xform=x, mass=1.0 + 0.5 * i, inertia=_INERTIA, com=(0.0, 0.0, -0.3), label=f"l{i}")
        j = b.add_joint_revolute(-1, link, axis=((0.0, 1.0, 0.0), (0.0, 0.8, 0.6))[i], parent_xform=x, label=f"j{i}")
        b.add_articulation([j])
        links.append(link)
        joints.append(j)
    return links, joints


def _pendulums(kind: str, *, gravity: float = -9.81, stiffness: float = 50.0) -> jaxart.Model:
    """Two pendulums hinged to the world (axes Y and oblique), coupled by a fixed tendon ``q0 − 0.5 q1`` or a
    spatial tendon between points on the two links."""
    b = jaxart.ModelBuilder(gravity=gravity)
    links, joints = _hinged_pair(b)
    if kind == "fixed":
        b.add_tendon_fixed([(joints[0], 1.0), (joints[1], -0.5)], stiffness=stiffness, damping=0.5,
                           springlength=0.2, label="t")
    else:
        b.add_tendon_spatial(_sites(b, links, [(0.05, 0.0, -0.4), (-0.05, 0.02, -0.35)]), stiffness=stiffness,
                             damping=0.5, springlength=0.5, label="t")
    b.joint_q[:] = [0.3, -0.2]
    return b.finalize(dtype=jnp.float64)


def _sliders(kind: str) -> jaxart.Model:
    """Two sliders along X (no gravity), each on a joint spring (k = 40, d = 8) toward 0, coupled by a fixed tendon
    ``q1 − q0`` or a spatial tendon between offset points (not along the axis). Every gain is present (values
    replaced per scenario), so all scenarios share one compiled rollout per solver."""
    b = jaxart.ModelBuilder(gravity=0.0)
    links, joints = [], []
    for i in range(2):
        link = b.add_link(xform=(1.0 * i, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=10.0 * _INERTIA,
                          label=f"l{i}")
        j = b.add_joint_prismatic(-1, link, axis=(1.0, 0.0, 0.0), parent_xform=(1.0 * i, 0, 0, 0, 0, 0, 1),
                                  label=f"j{i}")
        b.add_articulation([j])
        links.append(link)
        joints.append(j)
    gains = dict(stiffness=50.0, damping=10.0, springlength=1.0, limited=False,
                 limit_ke=1e3, limit_kd=20.0, target_ke=1.0, target_kd=0.0, label="t")
    if kind == "fixed":
        b.add_tendon_fixed([(joints[0], -1.0), (joints[1], 1.0)], **gains)
    else:
        b.add_tendon_spatial(_sites(b, links, [(0.0, 0.2, 0.0), (0.0, -0.1, 0.05)]), **gains)
    model = b.finalize(dtype=jnp.float64)
    n = model.joint_dof_count
    return model.replace(joint_stiffness=jnp.full((n,), 40.0), joint_damping=jnp.full((n,), 8.0),
                         tendon_target_ke=jnp.zeros(1))


@functools.partial(jax.jit, static_argnames="steps")
def _rollout(solver, state, control, dt, steps):
    return jax.lax.fori_loop(0, steps, lambda _, s: solver.step(s, control, None, dt), state)


@jax.jit
def _start(model):
    return jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())


@pytest.mark.parametrize("kind", ["fixed", "spatial"])
def test_lengths_rates_and_loads_match_reduced_coordinates(kind):
    """Lengths and rates from the body poses/twists equal the reduced-coordinate ones; the body wrenches of the
    tendon forces are the generalized forces ``Jᵀ f`` (MuJoCo's passive tendon forces, tested there), also for a
    hinge angle past π (unwrapped to the step-start ``joint_q``)."""
    model = _pendulums(kind)

    @jax.jit
    def both(q, qd):
        s = jaxart.eval_fk(model, q, qd, model.state())
        ent = tendon_entries(model, s.body_q, s.joint_q)
        wrench = tendon_body_wrenches(model, s, model.control())
        tau = -jaxart.eval_generalized_external_force(model, s, body_f=wrench)
        return (ent.length, tendon_speeds(ent, s.body_qd), tau, eval_tendon_lengths(model, s),
                eval_tendon_velocities(model, s), eval_tendon_joint_forces(model, s))

    rng = np.random.default_rng(3)
    for q in (rng.uniform(-1.0, 1.0, 2), np.array([3.6, -4.0])):
        out = both(jnp.asarray(q), jnp.asarray(rng.uniform(-2.0, 2.0, 2)))
        for mine, ref in zip(out[:3], out[3:], strict=True):
            np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)
        assert np.abs(np.asarray(out[5])).max() > 0.05


@jax.jit
def _balance(model, state, control):
    """Joint-space residual of the static equilibrium: ``Jᵀ (f_passive + f_act) + joint springs + joint_f``."""
    jac = tendon_jacobian(model, state.joint_q, state.body_q)[0]
    f = eval_tendon_forces(model, state)[0] + eval_tendon_actuator_forces(model, state, control)[0]
    return jac * f - model.joint_stiffness * state.joint_q + control.joint_f, f


_SCENARIOS = {  # (tendon replacements, joint_f, tendon_f)
    "spring": (dict(), (0.0, 6.0), 0.0),
    "actuator": (dict(tendon_stiffness=jnp.zeros(1), tendon_target_ke=jnp.full((1,), 30.0),
                      tendon_target_length=jnp.full((1,), 1.2)), (0.0, 0.0), 4.0),
}


@pytest.mark.slow
@pytest.mark.parametrize("key, case", SOLVERS)
@pytest.mark.parametrize("kind", ["fixed", "spatial"])
def test_static_equilibrium_spring_law_and_actuator(kind, key, case):
    """Settled sliders satisfy the spring law: a push ``joint_f`` against the tendon spring, and an actuator
    (``tendon_f`` plus a drive toward a target length) against the joint springs, balance in joint space with the
    tendon force of :mod:`jaxart.dynamics.tendon_forces` (so the actuator force maps to the joint torque ``Jᵀ f``)."""
    base = _sliders(kind)
    for name, (repl, joint_f, tendon_f) in _SCENARIOS.items():
        model = base.replace(**repl)
        control = model.control().replace(joint_f=jnp.asarray(joint_f), tendon_f=jnp.full((1,), tendon_f))
        out = _rollout(case.solver(model), _start(model), control, 2e-3, 1500)
        res, f = _balance(model, out, control)
        assert abs(float(f)) > 2.0, name  # the tendon carries load
        np.testing.assert_allclose(res, 0.0, atol=2e-3 * abs(float(f)), err_msg=f"{name} {kind} {key}")
        assert np.abs(np.asarray(out.joint_qd)).max() < 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("key, case", SOLVERS)
@pytest.mark.parametrize("kind", ["fixed", "spatial"])
def test_limit_holds(kind, key, case):
    """A push shortens the tendon into its lower limit: a hard row holds it there, a penalty limit settles at its
    equilibrium (``limit_ke`` balancing the push); without the limit the tendon gets far shorter."""
    base = _sliders(kind)
    lower = 0.9
    control = base.control().replace(joint_f=jnp.asarray([0.0, -30.0]), tendon_f=jnp.zeros(1))
    lengths = {}
    for lim in ("on", "off"):
        model = base.replace(tendon_stiffness=jnp.zeros(1),
                             tendon_limit_lower=jnp.full((1,), lower if lim == "on" else -1e10))
        out = _rollout(case.solver(model), _start(model), control, 2e-3, 1500)
        lengths[lim] = float(eval_tendon_lengths(model, out)[0])
        if lim == "on" and not case.hard_limit:
            res, f = _balance(model, out, control)
            np.testing.assert_allclose(res, 0.0, atol=2e-3 * abs(float(f)))
    if case.hard_limit:
        assert abs(lengths["on"] - lower) < 1e-6
    else:
        assert lower - 0.05 < lengths["on"] < lower - 0.005  # penalty: L ≈ lower − f / ke
    assert lengths["off"] < lower - 0.3


def _mujoco_rollout(model, steps, dt, *, tendon: bool):
    mj = jaxart.solvers.SolverMuJoCo(model, integrator="euler")
    mj.mj_model.opt.timestep = dt
    if not tendon:
        mj.mj_model.tendon_stiffness[:] = 0.0
        mj.mj_model.tendon_damping[:] = 0.0
    d = mj.to_mj_data(_start(model))
    for _ in range(steps):
        mujoco.mj_step(mj.mj_model, d)
    return np.asarray(d.qpos)[mj.layout.q_dst[np.argsort(mj.layout.q_src)]]


@pytest.mark.slow
@pytest.mark.parametrize("key, case", SOLVERS)
@pytest.mark.parametrize("kind", ["fixed", "spatial"])
def test_short_horizon_matches_mujoco_c(kind, key, case):
    """Two pendulums under gravity coupled by the tendon, 0.3 s at dt = 1 ms: the solver follows MuJoCo C's
    Euler step to discretisation tolerance (:data:`CASES`), while the tendon moves the pendulums by far more
    (> 0.1 rad)."""
    model = _pendulums(kind)
    steps, dt = 300, 1e-3
    ref = _mujoco_rollout(model, steps, dt, tendon=True)
    free = _mujoco_rollout(model, steps, dt, tendon=False)
    assert np.abs(ref - free).max() > 0.1
    out = _rollout(case.solver(model), _start(model), model.control(), dt, steps)
    np.testing.assert_allclose(out.joint_q, ref, atol=case.mujoco_atol, err_msg=key)


@pytest.mark.slow
def test_stiff_tendon_is_stable_in_xpbd():
    """``k = 1e6`` on the fixed pendulums at dt = 5 ms (explicit stable step ~1 ms): XPBD's compliant row stays
    bounded and holds the rest length."""
    model = _pendulums("fixed", gravity=-9.81, stiffness=1e6)
    out = _rollout(CASES["xpbd"].solver(model), _start(model), model.control(), 5e-3, 300)
    assert np.all(np.isfinite(np.asarray(out.joint_q))) and np.abs(np.asarray(out.joint_qd)).max() < 10.0
    length = float(eval_tendon_lengths(model, out)[0])
    assert abs(length - 0.2) < 1e-3  # held near its rest length


@pytest.mark.slow
@pytest.mark.parametrize("key, case", SOLVERS)
def test_vmap_over_the_tendon_stiffness_matches_single_worlds(key, case):
    """A ``vmap`` over the tendon stiffness equals the single-world rollouts. The comparison runs 50 steps: the XPBD
    pendulums (with or without the tendon) amplify a 1e-14 m perturbation of the start poses to ~1e-6 rad within
    0.15 s (measured; XLA's test flags), so the vmapped and the single-world programs, compiled differently, part
    after that."""
    model = _pendulums("fixed", gravity=-9.81, stiffness=1e6)
    steps = 50
    solvers = [case.solver(model.replace(tendon_stiffness=jnp.full((1,), k))) for k in (5.0, 50.0)]
    batch = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *solvers)
    out = jax.jit(jax.vmap(lambda s: _rollout(s, _start(s.model), s.model.control(), 1e-3, steps).joint_q))(batch)
    for i, s in enumerate(solvers):
        one = _rollout(s, _start(s.model), s.model.control(), 1e-3, steps).joint_q
        np.testing.assert_allclose(out[i], one, atol=1e-10, err_msg=key)
    assert np.abs(np.asarray(out[1] - out[0])).max() > 1e-5


# ------------------------------------------------------------------ step derivatives


@functools.lru_cache(maxsize=1)
def _coupled_pendulums():
    """Two pendulums hinged to the world (axes y and oblique) coupled by a fixed tendon ``q0 − 0.5 q1`` and a
    spatial tendon between points on the links, each with a spring (active: the lengths are outside their rest
    lengths), damping and an actuator drive."""
    b = jaxart.ModelBuilder()
    links, joints = _hinged_pair(b)
    b.joint_q[:] = [0.3, -0.2]  # fixed length 0.4
    b.add_tendon_fixed([(joints[0], 1.0), (joints[1], -0.5)], stiffness=30.0, damping=0.5, springlength=0.2,
                       target_ke=5.0, target_length=0.3, label="fixed")
    b.add_tendon_spatial([(links[0], (0.05, 0.0, -0.4)), (links[1], (-0.05, 0.02, -0.35))], stiffness=80.0,
                         damping=0.5, springlength=0.45, target_ke=3.0, target_kd=0.2, label="spatial")
    return b.finalize(dtype=jnp.float64)


@pytest.mark.parametrize("key, case", SOLVERS)
def test_tendon_step_derivatives_match_finite_differences(key, case):
    """d(body poses and twists after 2 steps) / d(tendon stiffnesses, rest lengths, initial joint rates)."""
    model = _coupled_pendulums()
    make, dt = case.solver, case.derivative_dt

    def fn(p):
        m = model.replace(tendon_stiffness=p[0:2], tendon_springlength=jnp.stack([p[2:4], p[2:4]], 1))
        s = make(m)
        st = jaxart.eval_fk(m, m.joint_q, p[4:6], m.state())
        st = jax.lax.fori_loop(0, 2, lambda _, x: s.step(x, None, None, dt), st)
        return jnp.concatenate([st.body_q.reshape(-1), st.body_qd.reshape(-1)])

    length0 = jaxart.dynamics.eval_tendon_lengths(model, jaxart.eval_fk(model, model.joint_q, model.joint_qd,
                                                                       model.state()))
    p0 = jnp.array([30.0, 80.0, 0.2, 0.45, 0.7, -0.4])
    assert np.all(np.abs(np.asarray(length0) - np.asarray(p0[2:4])) > 0.02)  # both springs stretched
    jac = assert_jacobian_matches_fd(fn, p0, [1e-4, 1e-4, 1e-6, 1e-6, 1e-6, 1e-6], rtol=1e-5)
    assert np.all(np.abs(jac).max(0) > 1e-6)  # every input acts


# ------------------------------------------------------------------ SolverXPBD's tendon effort limits
LIMIT, KE, KD, DT, STEPS = 5.0, 50.0, 15.0, 5e-3, 200


@functools.lru_cache(maxsize=1)
def _effort_sliders():
    """Two 1 kg sliders along x (no gravity): slider 0 on a fixed tendon ``L = x0``, slider 1 on a spatial tendon
    from a world point 2 m ahead on its axis (``L = 2 − x1``); both actuators pull toward ``L* = 1`` with gains
    far above the effort limit (saturated until close to the target)."""
    b = jaxart.ModelBuilder(gravity=0.0)
    links, joints = [], []
    for i in range(2):
        x = (0.0, float(i), 0.0, 0.0, 0.0, 0.0, 1.0)
        links.append(b.add_link(xform=x, mass=1.0, inertia=_INERTIA, label=f"s{i}"))
        joints.append(b.add_joint_prismatic(-1, links[i], axis=(1.0, 0.0, 0.0), parent_xform=x, label=f"j{i}"))
        b.add_articulation([joints[i]])
    gains = dict(target_ke=KE, target_kd=KD, target_length=1.0, effort_limit=LIMIT)
    b.add_tendon_fixed([(joints[0], 1.0)], **gains, label="fixed")
    b.add_tendon_spatial([(-1, (2.0, 1.0, 0.0)), (links[1], (0.0, 0.0, 0.0))], **gains, label="spatial")
    return b.finalize(dtype=jnp.float64)


@functools.partial(jax.jit, static_argnames="xpbd")
def _slide(model, xpbd: bool):
    solver = (jaxart.solvers.SolverXPBD(model, iterations=2) if xpbd
              else jaxart.solvers.SolverFeatherstone(model, angular_damping=0.0))
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())

    def body(s, _):
        s = solver.step(s, None, None, DT)
        return s, jnp.stack([s.body_q[0, 0], s.body_q[1, 0]])

    return jax.lax.scan(body, st, None, length=STEPS)[1]


def _clamped_drive() -> tuple[np.ndarray, np.ndarray]:
    """SolverFeatherstone's clamped implicit actuator on a 1 kg slide ``x`` (``L* − L = 1 − x``), semi-implicit
    Euler: saturated (look-ahead force beyond the limit) the force is ``clip(·, ±LIMIT)``, else the implicit PD law.
    Returns the positions and the saturation flags per step."""
    x = v = 0.0
    xs, sat = [], []
    for _ in range(STEPS):
        ahead = KE * (1.0 - x - DT * v) - KD * v
        sat.append(abs(ahead) > LIMIT)
        a = np.clip(ahead, -LIMIT, LIMIT) if sat[-1] else ahead / (1.0 + KD * DT + KE * DT * DT)
        v += DT * a
        x += DT * v
        xs.append(x)
    return np.array(xs), np.array(sat)


@pytest.mark.slow  # suite budget: the default run stays under 20 min on 2 cores
def test_xpbd_tendon_effort_limit_matches_featherstone_clamped_actuator():
    """Both solvers follow the clamped actuator's recursion to round-off: a constant force at the effort limit while
    saturated (the first 70 steps), then the implicit drive; without the limit XPBD's first step is the stiff
    drive's."""
    model = _effort_sliders()
    ref, sat = _clamped_drive()
    assert sat[:70].all() and (~sat).sum() > 100  # both regimes
    xp, fs = np.asarray(_slide(model, True)), np.asarray(_slide(model, False))
    np.testing.assert_allclose(fs, ref[:, None] * [1, 1], atol=1e-9)
    np.testing.assert_allclose(xp, ref[:, None] * [1, 1], atol=1e-9)
    unlimited = np.asarray(_slide(model.replace(tendon_effort_limit=jnp.full(2, jnp.inf)), True))
    assert unlimited[0, 0] > 5 * xp[0, 0]
