"""A 7-DoF arm with mesh collision geometry (the Panda from ``example-robot-data``) falling onto an obstacle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_hulls import robot_urdf

import jaxart
from jaxart import collision as col
from jaxart.math.quat import quat_rotate

jax.config.update("jax_enable_x64", True)
DT = 0.002
STEPS = 500  # 1 s
ENERGY_TOL = 1e-6  # [J]


def _energy(model, s):
    """Kinetic plus gravitational potential energy [J] (gravity along −Z)."""
    mass_matrix = jaxart.eval_mass_matrix(model, s)[0]
    com = s.body_q[:, :3] + jax.vmap(quat_rotate)(s.body_q[:, 3:], model.body_com)
    return 0.5 * s.joint_qd @ mass_matrix @ s.joint_qd - model.gravity[2] * jnp.sum(model.body_mass * com[:, 2])


@pytest.mark.slow
def test_panda_falls_onto_box_through_mesh_hulls():
    """Unactuated, the arm swings down onto a static box: 1 s at 2 ms stays finite and gains no energy."""
    b, _ = robot_urdf("panda_description/urdf/panda.urdf", enable_self_collisions=False)
    b.add_shape_box(-1, xform=((0.45, 0.0, 0.35), (0, 0, 0, 1)), hx=0.1, hy=0.3, hz=0.05, label="obstacle")
    model = b.finalize(dtype=jnp.float64)
    solver = jaxart.solvers.SolverFeatherstone(model)
    st = model.state()
    st = jaxart.eval_fk(model, st.joint_q, st.joint_qd, st)

    @jax.jit
    def run(s):
        def step(s, _):
            c = col.collide(model, s)
            s = solver.step(s, None, c, DT)
            return s, (_energy(model, s), jnp.min(jnp.where(c.active, c.separation, 1.0)))
        return jax.lax.scan(step, s, None, length=STEPS)

    final, (energy, deepest) = run(st)
    energy, deepest = np.asarray(energy), np.asarray(deepest)
    e0 = float(_energy(model, st))
    assert np.all(np.isfinite(np.asarray(final.body_q))) and np.all(np.isfinite(energy))
    assert deepest.min() < 0.0 and deepest.min() > -0.1  # it hit the box (soft default ke), and contact held it
    assert energy.max() <= e0 + ENERGY_TOL
