"""Swing-up demo: optimise an open-loop torque trajectory for the bundled pendulum with
``jax.grad`` through a ``SolverFeatherstone`` rollout (``lax.scan``, checkpointed steps)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

import jaxart
from jaxart.assets import asset_path
from jaxart.compile_options import fast_compile_options
from jaxart.solvers import SolverFeatherstone


def load_pendulum() -> jaxart.Model:
    """The bundled pendulum (hinge about Y, hanging at q = 0, upright at q = π)."""
    b = jaxart.ModelBuilder()
    b.add_mjcf(asset_path("pendulum"))
    return b.finalize()


def run(*, iters: int = 150, steps: int = 200, dt: float = 0.01, lr: float = 0.3, u_max: float = 4.0) -> dict:
    """Optimise torques ``u_t`` (|u| ≤ ``u_max`` N·m via tanh) so the pendulum ends upright and still."""
    model = load_pendulum()
    solver = SolverFeatherstone(model, angular_damping=0.0)
    state0 = jaxart.eval_fk(model, model.joint_q, model.joint_qd)
    control0 = model.control()

    def trajectory(params):
        dtype = control0.joint_f.dtype
        torques = (u_max * jnp.tanh(params)).astype(dtype)
        controls = control0.replace(joint_f=torques[:, None],
                                    joint_target_q=jnp.broadcast_to(control0.joint_target_q, (steps, 1)),
                                    joint_target_qd=jnp.broadcast_to(control0.joint_target_qd, (steps, 1)),
                                    joint_act=jnp.zeros((steps, 1), dtype))
        out = lambda s: (s.joint_q[0], s.joint_qd[0])  # noqa: E731
        _, (q, qd) = jaxart.rollout(solver, state0, controls, dt=dt, remat="step", output_fn=out)
        return q, qd, torques

    def cost(params):
        q, qd, torques = trajectory(params)
        return (q[-1] - np.pi) ** 2 + 0.1 * qd[-1] ** 2 + 1e-4 * jnp.mean(torques**2)

    @functools.partial(jax.jit, compiler_options=fast_compile_options())  # same run time, shorter compile
    def update(p, m, v, t):
        value, g = jax.value_and_grad(cost)(p)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        return p - lr * (m / (1 - 0.9**t)) / (jnp.sqrt(v / (1 - 0.999**t)) + 1e-8), m, v, value

    params = jnp.zeros(steps, model.joint_q.dtype)
    m = v = jnp.zeros_like(params)
    hist = []
    print(f"swing-up: pendulum, {steps} Featherstone steps of {dt} s, |u| <= {u_max} N·m")
    bar = tqdm(range(iters), desc="swing-up", mininterval=0.5)
    for i in bar:
        params, m, v, value = update(params, m, v, jnp.asarray(i + 1, params.dtype))
        hist.append(float(value))
        if i % 5 == 0 or i + 1 == iters:
            bar.set_postfix(cost=f"{hist[-1]:.2e}", refresh=False)
    q, qd, torques = trajectory(params)
    print(f"swing-up: final angle {float(q[-1]):.3f} rad (target {np.pi:.3f}), final velocity {float(qd[-1]):.3f}")
    return {"cost": hist, "q": np.asarray(q), "qd": np.asarray(qd), "u": np.asarray(torques), "dt": dt}
