"""MJCF ``<option><flag>`` bits honoured by every native solver.

Oracle (MuJoCo's meaning of a disable flag): importing with ``<flag X="disable"/>`` steps exactly like importing the
same model with feature X removed from the file; and the feature changes the step (so the comparison is not
vacuous) wherever the solver models it. One step from a state that excites every feature (a joint past its limit,
moving, off its spring rest, a violated joint equality, servo and motor inputs beyond the motor's ``ctrlrange``).
Contact-related flags (``contact``, ``filterparent``, ``override``) and ``refsafe`` act on the collision pairs and
gains before any solver runs (``tests/io/test_import_flags.py``). Solvers are pytrees: one compiled step per solver
and topology.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxart

_XML = """
<mujoco>
  <option {option}><flag {flags}/></option>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="h" axis="0 1 0" {range} damping="{damping}" stiffness="{stiffness}" frictionloss="{friction}"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 -0.5" size="0.05"/>
      <body name="b" pos="0.1 0 -0.5">
        <joint name="h2" axis="0 1 0" {range}/>
        <geom type="sphere" size="0.1" pos="0 0 -0.3"/>
      </body>
    </body>
  </worldbody>
  {equality}
  {actuator}
</mujoco>
"""
_FULL = dict(option="", flags="", range='range="-30 30"', damping="2", stiffness="3", friction="0.5",
             equality='<equality><joint joint1="h" joint2="h2"/></equality>',
             actuator='<actuator><position joint="h" kp="10"/><motor joint="h2" gear="2" ctrlrange="-3 3" '
                      'ctrllimited="true"/></actuator>')
#: flag → the same file without the feature.
_REMOVED = {
    "gravity": dict(option='gravity="0 0 0"'),
    "limit": dict(range=""),
    "equality": dict(equality=""),
    "frictionloss": dict(friction="0"),
    "spring": dict(stiffness="0"),
    "damper": dict(damping="0"),
    "actuation": dict(actuator=""),
    "clampctrl": dict(actuator=_FULL["actuator"].replace('ctrllimited="true"', 'ctrllimited="false"')),
}
#: (solver, flag) pairs whose feature the solver does not model (the flag cannot change its step).
_NOT_MODELLED = {(s, f) for s in ("SolverSemiImplicit", "SolverXPBD") for f in ("frictionloss", "clampctrl")}
_SOLVERS = {"SolverFeatherstone": jaxart.solvers.SolverFeatherstone, "SolverXPBD": jaxart.solvers.SolverXPBD,
            "SolverSemiImplicit": jaxart.solvers.SolverSemiImplicit}


def _model(**changes):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every flag used here is honoured: nothing is reported
        b.add_mjcf(_XML.format(**{**_FULL, **changes}))
    return b.finalize(dtype=jnp.float64)


def _inputs(model):
    """The servo's joint off its target, spring rest and the other joint; the motor's joint past its upper limit
    (40° vs 30°); both moving; motor input 20 N·m beyond its 6 N·m."""
    state = jaxart.eval_fk(model, jnp.asarray([0.2, np.radians(40.0)]), jnp.asarray([0.8, -1.2]), model.state())
    c = model.control()
    return state, c.replace(joint_act=c.joint_act.at[1].set(20.0), joint_target_q=c.joint_target_q.at[0].set(0.4))


@jax.jit
def _step(solver):
    """Body poses and twists after one step (maximal solvers: gravity moves both links alike, joint rates not)."""
    out = solver.step(*_inputs(solver.model), None, 2e-3)
    return jnp.concatenate([out.body_q.ravel(), out.body_qd.ravel()])


_SLOW = pytest.mark.slow  # one step compile each (~30 s on 2 busy cores)


@pytest.mark.parametrize("name", [pytest.param("SolverFeatherstone", marks=_SLOW),
                                  pytest.param("SolverXPBD", marks=_SLOW), "SolverSemiImplicit"])
def test_disabled_flag_steps_like_the_feature_removed(name):
    full = np.asarray(_step(_SOLVERS[name](_model())))
    for flag, removed in _REMOVED.items():
        disabled = np.asarray(_step(_SOLVERS[name](_model(flags=f'{flag}="disable"'))))
        np.testing.assert_allclose(disabled, _step(_SOLVERS[name](_model(**removed))), rtol=1e-12, atol=1e-12,
                                   err_msg=flag)
        if (name, flag) not in _NOT_MODELLED:
            assert np.abs(disabled - full).max() > 1e-6, f"{name}: {flag} does not change the step"
