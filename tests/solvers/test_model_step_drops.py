"""Robots dropped at their own MJCF time step stay physical with SolverFeatherstone's implicit contact.

The MJX test-data humanoid (5 ms), our bundled humanoid and quadruped (2 ms, and 5 ms) fall uncontrolled
from their initial pose for one second: every value stays finite, the kinetic + gravitational energy
never exceeds its initial value and contact penetration stays below 2 cm. (``SolverSemiImplicit`` is
explicit and warns at these steps: tests/solvers/test_stability.py; XPBD: tests/solvers/test_xpbd_model_step.py.)
"""

import functools

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from helpers import MJX_HUMANOID, mjcf_model

import jaxart


def _energy(model, body_q, body_qd):
    com = jaxart.math.transform_point(body_q, model.body_com)
    rot = jaxart.math.quat_to_matrix(body_q[:, 3:])
    inertia = rot @ model.body_inertia @ jnp.swapaxes(rot, -1, -2)
    v, w = body_qd[:, :3], body_qd[:, 3:]
    kin = 0.5 * jnp.sum(model.body_mass * jnp.sum(v * v, -1)) + 0.5 * jnp.einsum("bi,bij,bj->", w, inertia, w)
    return kin - jnp.sum(model.body_mass * (com @ model.gravity))


@functools.partial(jax.jit, static_argnames=("steps", "dt"))
def _drop(model, steps: int, dt: float):
    solver = jaxart.solvers.SolverFeatherstone(model)

    def step(s, _):
        c = model.collide(s)
        s = solver.step(s, None, c, dt)
        pen = -jnp.min(jnp.where(c.active, c.separation, 0.0))
        return s, (_energy(model, s.body_q, s.body_qd), pen, jnp.all(jnp.isfinite(s.body_q)))

    return jax.lax.scan(step, model.state(), None, length=steps)[1]


@pytest.mark.parametrize("name, dt", [("mjx_humanoid", None), ("humanoid", None), ("quadruped", None),
                                      ("quadruped", 5e-3)])
def test_uncontrolled_drop_at_the_model_step_stays_physical(name, dt):
    path = MJX_HUMANOID if name == "mjx_humanoid" else jaxart.assets.asset_path(name)
    dt = float(mujoco.MjModel.from_xml_path(path).opt.timestep) if dt is None else dt
    model = mjcf_model(path, jnp.float32)
    s0 = model.state()
    e0 = float(_energy(model, s0.body_q, s0.body_qd))
    energy, pen, finite = (np.asarray(x) for x in _drop(model, int(round(1.0 / dt)), dt))
    assert finite.all()
    assert energy.max() <= e0 + 1e-3 * abs(e0)
    assert pen.max() < 0.02
