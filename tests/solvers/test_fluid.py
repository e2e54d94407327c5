"""MuJoCo's inertia-box fluid model (``<option density viscosity wind>``) vs MuJoCo C."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

import jaxart
from jaxart.laws.fluid import fluid_body_wrenches
from jaxart.solvers.featherstone import SolverFeatherstone

_XML = """<mujoco><option timestep="0.002" integrator="Euler" density="1.2" viscosity="0.02" wind="0.5 -1 0.3"
  gravity="0 0 0"/>
<worldbody>
  <body name="a" pos="0 0 1"><freejoint/>
    <geom type="box" size="0.2 0.1 0.05" pos="0.02 0 0" euler="10 20 30" mass="1"/>
    <body name="b" pos="0.3 0 0"><joint type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 -0.1" size="0.04" mass="0.4"/></body></body>
</worldbody></mujoco>"""


_ELLIPSOID = _XML.replace('mass="1"/>', 'mass="1" fluidshape="ellipsoid"/><geom type="sphere" size="0.05" '
                          'pos="0 0.1 0" mass="0.1" fluidshape="ellipsoid" fluidcoef="0.5 0.3 1.2 1.1 0.9"/>')
_ELLIPSOID = _ELLIPSOID.replace('size="0.04" mass="0.4"/>', 'size="0.04" mass="0.4" fluidshape="ellipsoid"/>')


def _setup(xml=_XML):
    b = jaxart.ModelBuilder(gravity=0.0)
    info = b.add_mjcf(xml)
    assert info["unsupported"] == []
    return b.finalize(dtype=jnp.float64), info


@pytest.mark.parametrize("xml", [_XML, _ELLIPSOID], ids=["inertia_box", "ellipsoid"])
def test_body_wrenches_match_qfrc_passive(xml):
    """The wrenches at MuJoCo's body velocities, mapped by MuJoCo's COM Jacobians, are its ``qfrc_passive``."""
    model, info = _setup(xml)
    assert int(np.sum(np.asarray(model.shape_fluid)[:, 0] > 0.0)) == (3 if xml is _ELLIPSOID else 0)
    m = info["mj_model"]
    d = mujoco.MjData(m)
    d.qvel[:] = [0.7, -0.4, 1.1, 2.0, -1.5, 0.8, 3.0]
    mujoco.mj_forward(m, d)
    names = ("a", "b")
    qd = np.zeros((model.body_count, 6))
    for name in names:
        vel = np.zeros(6)  # (ω, v) at the COM, world axes
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, m.body(name).id, vel, 0)
        qd[info["bodies"][name]] = np.concatenate([vel[3:], vel[:3]])
    wrench = np.asarray(fluid_body_wrenches(model, model.state().body_q, jnp.asarray(qd)))
    qfrc = np.zeros(m.nv)
    for name in names:
        jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jacBodyCom(m, d, jacp, jacr, m.body(name).id)
        w = wrench[info["bodies"][name]]
        qfrc += jacp.T @ w[:3] + jacr.T @ w[3:]
    assert np.abs(d.qfrc_passive).max() > 1e-2
    np.testing.assert_allclose(qfrc, d.qfrc_passive, rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_featherstone_trajectory_matches_mj_step():
    """Wind pushes the bodies from rest; the hinge spins against the drag: qpos follows ``mj_step``.

    The remaining difference is the integrators' first-order one (FREE joints integrated at the COM here, at the
    body origin in MuJoCo): 6.8e-5 at 2 ms, 1.7e-5 at 0.5 ms (2.6e-6 without the fluid).
    """
    model, info = _setup()
    m = info["mj_model"]
    d = mujoco.MjData(m)
    d.qvel[6] = 3.0
    state = model.state().replace(joint_qd=model.joint_qd.at[6].set(3.0))
    solver = SolverFeatherstone(model, angular_damping=0.0)
    step = jax.jit(lambda s: solver.step(s, None, None, m.opt.timestep))
    for _ in range(200):
        state = step(state)
        mujoco.mj_step(m, d)
    cmap = np.asarray(info["coord_map"])
    assert np.linalg.norm(d.qpos[:3] - [0.0, 0.0, 1.0]) > 1e-2 and d.qpos[6] < 1.0  # wind moved, drag slowed
    np.testing.assert_allclose(np.asarray(state.joint_q), d.qpos[cmap], atol=1e-4)


def test_gradient_finite_for_symmetric_bodies():
    """A sphere's equal principal moments: the wrench's gradient with respect to the inertia stays finite."""
    b = jaxart.ModelBuilder(gravity=0.0)
    b.fluid_density, b.fluid_viscosity = 1000.0, 1e-3
    link = b.add_link(mass=2.0, inertia=np.eye(3) * 0.02)
    b.add_articulation([b.add_joint_free(link)])
    model = b.finalize(dtype=jnp.float64)
    assert model.fluid_enabled
    qd = jnp.asarray([[0.3, -0.2, 0.5, 1.0, 2.0, -0.5]])

    def loss(inertia):
        return jnp.sum(fluid_body_wrenches(model.replace(body_inertia=inertia), model.body_q, qd) ** 2)

    g = jax.grad(loss)(model.body_inertia)
    assert np.all(np.isfinite(np.asarray(g))) and np.abs(np.asarray(g)).max() > 0.0
