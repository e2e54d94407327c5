"""Trace-time argument checks of the public entry points, on a 2-body model."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart
from jaxart.dynamics import (
    eval_forward_dynamics,
    eval_generalized_external_force,
    eval_inverse_dynamics_force,
    eval_inverse_dynamics_passive,
    eval_jacobian,
    eval_mass_matrix,
)
from jaxart.selection import ArticulationView
from jaxart.solvers import SolverFeatherstone, SolverMuJoCo, SolverSemiImplicit, SolverXPBD

NB, NC, ND = 2, 8, 7  # free base + hinge


@pytest.fixture(scope="module")
def model():
    b = jaxart.ModelBuilder()
    base = b.add_link(xform=((0.0, 0.0, 1.0), (0, 0, 0, 1)), label="base", mass=1.0)
    b.add_shape_sphere(base, radius=0.1)
    arm = b.add_link(label="arm", mass=1.0)
    b.add_shape_sphere(arm, radius=0.05)
    js = [b.add_joint_free(base, label="root"),
          b.add_joint_revolute(base, arm, axis=(0, 1, 0), parent_xform=((0.2, 0, 0), (0, 0, 0, 1)), label="hinge")]
    b.add_articulation(js, label="robot")
    b.add_ground_plane()
    return b.finalize(dtype=jnp.float64)


def test_model_sizes(model):
    assert (model.body_count, model.joint_coord_count, model.joint_dof_count) == (NB, NC, ND)


# ---------------------------------------------------------------- kinematics


def test_eval_fk_shapes(model):
    with pytest.raises(ValueError, match=r"eval_fk: joint_q must have shape \(8,\), got shape \(7,\)"):
        jaxart.eval_fk(model, jnp.zeros(7), model.joint_qd)
    with pytest.raises(ValueError, match=r"eval_fk: joint_qd must have shape \(7,\), got shape \(8,\)"):
        jaxart.eval_fk(model, model.joint_q, jnp.zeros(8))
    with pytest.raises(ValueError, match=r"got shape \(3, 8\); for a batch of worlds map the call with jax.vmap"):
        jaxart.eval_fk(model, jnp.zeros((3, NC)), jnp.zeros((3, ND)))
    with pytest.raises(TypeError, match="eval_fk: joint_q must have a real"):
        jaxart.eval_fk(model, jnp.zeros(NC, bool), model.joint_qd)
    with pytest.raises(TypeError, match="eval_fk: joint_q must be an array"):
        jaxart.eval_fk(model, object(), model.joint_qd)
    bad_state = model.state().replace(body_q=jnp.zeros((NB + 1, 7)))
    with pytest.raises(ValueError, match=r"eval_fk: state.body_q must have shape \(2, 7\), got shape \(3, 7\)"):
        jaxart.eval_fk(model, model.joint_q, model.joint_qd, bad_state)
    # lists, jit and vmap (per-world shapes inside) pass
    jaxart.eval_fk(model, list(np.asarray(model.joint_q)), [0] * ND)
    qs = jnp.tile(model.joint_q, (3, 1))
    out = jax.eval_shape(jax.jit(jax.vmap(lambda q: jaxart.eval_fk(model, q, model.joint_qd).body_q)), qs)
    assert out.shape == (3, NB, 7)


def test_eval_ik_shapes(model):
    s = model.state()
    with pytest.raises(TypeError, match="eval_ik: state must be a jaxart.State"):
        jaxart.eval_ik(model, {"body_q": s.body_q})
    with pytest.raises(ValueError, match=r"eval_ik: state.body_qd must have shape \(2, 6\), got shape \(2, 7\)"):
        jaxart.eval_ik(model, s.replace(body_qd=jnp.zeros((NB, 7))))
    with pytest.raises(ValueError, match=r"eval_ik: joint_q must have shape \(8,\), got shape \(9,\)"):
        jaxart.eval_ik(model, s, jnp.zeros(9))
    with pytest.raises(TypeError, match="eval_ik: state.joint_q must have a floating dtype"):
        jaxart.eval_ik(model, s.replace(joint_q=jnp.zeros(NC, jnp.int32)))


# ---------------------------------------------------------------- dynamics

DYNAMICS = [eval_jacobian, eval_mass_matrix, eval_inverse_dynamics_passive, eval_forward_dynamics,
            eval_generalized_external_force, lambda m, s: eval_inverse_dynamics_force(m, s, jnp.zeros(ND))]


@pytest.mark.parametrize("fn", DYNAMICS)
def test_dynamics_state_checked(model, fn):
    bad = model.state().replace(joint_qd=jnp.zeros(ND + 1))
    with pytest.raises(ValueError, match=r"eval_\w+: state.joint_qd must have shape \(7,\), got shape \(8,\)"):
        fn(model, bad)
    batched = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), model.state())
    with pytest.raises(ValueError, match="jax.vmap"):
        fn(model, batched)
    with pytest.raises(TypeError, match=r"eval_\w+: state must be a jaxart.State"):
        fn(model, model)


def test_dynamics_extra_arguments(model):
    s = model.state()
    with pytest.raises(ValueError, match=r"eval_inverse_dynamics_force: joint_qdd must have shape \(7,\)"):
        eval_inverse_dynamics_force(model, s, jnp.zeros(NC))
    with pytest.raises(ValueError, match=r"eval_generalized_external_force: body_f must have shape \(2, 6\)"):
        eval_generalized_external_force(model, s, jnp.zeros((NB, 3)))
    with pytest.raises(ValueError, match=r"eval_forward_dynamics: control.joint_f must have shape \(7,\)"):
        eval_forward_dynamics(model, s, model.control().replace(joint_f=jnp.zeros(NC)))
    with pytest.raises(TypeError, match="eval_forward_dynamics: control must be None or a jaxart.Control"):
        eval_forward_dynamics(model, s, jnp.zeros(ND))


# ---------------------------------------------------------------- solvers


def _solvers(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [SolverFeatherstone(model), SolverSemiImplicit(model), SolverXPBD(model), SolverMuJoCo(model)]


def test_solver_step_checks(model):
    s, c = model.state(), model.control()
    for solver in _solvers(model):
        name = type(solver).__name__
        with pytest.raises(ValueError, match=rf"{name}.step: state.joint_q must have shape \(8,\), got shape \(6,\)"):
            solver.step(s.replace(joint_q=jnp.zeros(6)), c, None, 1e-3)
        with pytest.raises(ValueError, match=rf"{name}.step: control.joint_act must have shape \(7,\)"):
            solver.step(s, c.replace(joint_act=jnp.zeros((2, ND))), None, 1e-3)
        with pytest.raises(TypeError, match=rf"{name}.step: state must be a jaxart.State"):
            solver.step(c, c, None, 1e-3)
        for dt in (-1e-3, 0.0, float("nan"), float("inf"), np.float32(-1.0), jnp.asarray(-1.0)):
            with pytest.raises(ValueError, match=rf"{name}.step: dt must be a finite time step > 0"):
                solver.step(s, c, None, dt)
        with pytest.raises(ValueError, match=rf"{name}.step: dt must have shape \(\), got shape \(2,\)"):
            solver.step(s, c, None, jnp.ones(2) * 1e-3)
        with pytest.raises(TypeError, match=rf"{name}.step: dt must be a real number"):
            solver.step(s, c, None, True)
        with pytest.raises(ValueError, match=rf"{name}.step: dt is required"):
            solver.step(s, c, None, None)


def test_solver_contacts_type_and_traced_dt(model):
    s, c = model.state(), model.control()
    for solver in _solvers(model)[:3]:
        name = type(solver).__name__
        with pytest.raises(TypeError, match=rf"{name}.step: contacts must be None or a jaxart.Contacts"):
            solver.step(s, c, {"point": jnp.zeros((1, 3))}, 1e-3)
    contacts = model.collide(s)
    batched = jax.tree_util.tree_map(lambda x: jnp.stack([x, x]), contacts)
    with pytest.raises(ValueError, match=r"SolverFeatherstone.step: contacts.point must have shape \(capacity, 3\)"):
        SolverFeatherstone(model).step(s, c, batched, 1e-3)
    # a traced dt cannot be checked for its value: only shape and dtype (tracing, no compile)
    out = jax.eval_shape(lambda dt: SolverFeatherstone(model).step(s, c, None, dt), 1e-3)
    assert out.joint_q.shape == (NC,)


def test_nan_world_does_not_poison_vmapped_batch(model):
    solver = SolverFeatherstone(model)
    s = model.state()
    qs = jnp.tile(s.joint_q, (3, 1)).at[1, NC - 1].set(jnp.nan)
    states = jax.vmap(lambda q: s.replace(joint_q=q))(qs)
    step = jax.jit(jax.vmap(lambda st: solver.step(st, None, None, 1e-3)))
    out = step(states)
    finite = np.isfinite(np.asarray(out.joint_q)).all(axis=1)
    assert finite.tolist() == [True, False, True]
    assert np.isfinite(np.asarray(out.body_q)[[0, 2]]).all()
    clean = step(jax.vmap(lambda q: s.replace(joint_q=q))(jnp.tile(s.joint_q, (3, 1))))
    np.testing.assert_array_equal(np.asarray(out.joint_q)[[0, 2]], np.asarray(clean.joint_q)[[0, 2]])


# ---------------------------------------------------------------- collide, rollout, view


def test_collide_checks_state(model):
    with pytest.raises(ValueError, match=r"Model.collide: state.body_q must have shape \(2, 7\), got shape \(1, 7\)"):
        model.collide(model.state().replace(body_q=jnp.zeros((1, 7))))
    with pytest.raises(TypeError, match="Model.collide: state must be a jaxart.State"):
        model.collide(model.body_q)


def test_rollout_checks(model):
    solver = SolverFeatherstone(model)
    s, c = model.state(), model.control()
    controls = jax.tree_util.tree_map(lambda x: jnp.stack([x] * 4), c)
    with pytest.raises(ValueError, match="rollout: dt must be a finite time step > 0"):
        jaxart.rollout(solver, s, controls, dt=-0.01)
    with pytest.raises(ValueError, match=r"rollout: state.joint_q must have shape \(8,\)"):
        jaxart.rollout(solver, s.replace(joint_q=jnp.zeros(3)), controls, dt=0.01)
    with pytest.raises(ValueError, match=r"rollout: controls.joint_f must have shape \(4, 7\), got shape \(4, 8\)"):
        jaxart.rollout(solver, s, controls.replace(joint_f=jnp.zeros((4, NC))), dt=0.01)
    with pytest.raises(ValueError, match="rollout: controls' leaves disagree on the time axis"):
        jaxart.rollout(solver, s, controls.replace(joint_f=jnp.zeros((5, ND))), dt=0.01)
    with pytest.raises(TypeError, match="rollout: controls must be None or a jaxart.Control"):
        jaxart.rollout(solver, s, {"joint_f": jnp.zeros((4, ND))}, dt=0.01)


def test_view_getters_setters(model):
    view = ArticulationView(model, "robot")
    s = model.state()
    assert view.get_dof_positions(s).shape == (1, 1, NC)
    other = s.replace(joint_q=jnp.zeros(NC + 2))
    with pytest.raises(ValueError, match=r"get_attribute: State.joint_q must have shape \(\*batch, 8\) for this model"):
        view.get_dof_positions(other)
    with pytest.raises(ValueError, match=r"get_root_transforms: State.joint_q must have shape \(\*batch, 8\)"):
        view.get_root_transforms(other)
    with pytest.raises(ValueError, match=r"set_root_velocities: State.joint_qd must have shape \(\*batch, 7\)"):
        view.set_root_velocities(s.replace(joint_qd=jnp.zeros(3)), jnp.zeros((1, 1, 6)))
    with pytest.raises(ValueError, match=r"set_attribute: State.body_q must have shape \(\*batch, 2, \.\.\.\)"):
        view.set_attribute("body_q", s.replace(body_q=jnp.zeros((3, 7))), jnp.zeros((1, 1, 2, 7)))
    with pytest.raises(ValueError, match=r"values have shape \(1, 1, 6\), expected \(1, 1, 7\)"):
        view.set_dof_velocities(s, jnp.zeros((1, 1, 6)))
    with pytest.raises(ValueError, match="State has no attribute 'joint_f'"):
        view.get_dof_forces(s)
    with pytest.raises(ValueError, match=r"eval_fk: joint_q must have shape \(8,\)"):
        view.eval_fk(other)


# ---------------------------------------------------------------- builder


def test_body_with_two_parent_joints_names_both():
    b = jaxart.ModelBuilder()
    a, c = b.add_link(label="a"), b.add_link(label="c")
    j0 = b.add_joint_revolute(-1, a, label="j_root")
    j1 = b.add_joint_revolute(a, c, label="j_first")
    j2 = b.add_joint_prismatic(-1, c, label="j_second")
    with pytest.raises(ValueError, match="body 'c' is the child of two joints, 'j_first' and 'j_second'"):
        b.add_articulation([j0, j1, j2])
