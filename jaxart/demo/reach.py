"""Reaching demo: move the bundled 7-DoF arm's end effector to a target by gradient descent
through ``eval_fk`` (``jax.jit`` + ``jax.grad``)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

import jaxart
from jaxart.assets import asset_path
from jaxart.compile_options import fast_compile_options
from jaxart.math import transform_mul


def load_arm() -> tuple[jaxart.Model, int]:
    """The bundled arm and the index of its ``ee`` site."""
    b = jaxart.ModelBuilder()
    b.add_mjcf(asset_path("arm7"))
    model = b.finalize()
    return model, model.shape_label.index("ee")


def end_effector(model: jaxart.Model, site: int, q: jax.Array) -> jax.Array:
    """World position of the ``ee`` site for joint coordinates ``q``."""
    state = jaxart.eval_fk(model, q, jnp.zeros(model.joint_dof_count, q.dtype))
    body = int(model.shape_body[site])
    return transform_mul(state.body_q[body], model.shape_transform[site])[:3]


def run(*, steps: int = 200, lr: float = 0.2, target=(0.45, 0.35, 0.55)) -> dict:
    """Optimise joint angles so the end effector reaches ``target``; returns the history."""
    model, site = load_arm()
    target = jnp.asarray(target, jnp.float32)
    lo = jnp.maximum(model.joint_limit_lower, -np.pi)
    hi = jnp.minimum(model.joint_limit_upper, np.pi)

    def loss(q):
        err = end_effector(model, site, q) - target
        return jnp.sum(err**2) + 1e-4 * jnp.sum(q**2)

    @functools.partial(jax.jit, compiler_options=fast_compile_options())  # same run time, shorter compile
    def update(q, m, v, t):
        value, g = jax.value_and_grad(loss)(q)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        step = lr * (m / (1 - 0.9**t)) / (jnp.sqrt(v / (1 - 0.999**t)) + 1e-8)
        return jnp.clip(q - step, lo, hi), m, v, value

    q = model.joint_q
    m = v = jnp.zeros_like(q)
    hist = []
    print(f"reach: 7-DoF arm, target {np.round(np.asarray(target, np.float64), 3).tolist()} m")
    bar = tqdm(range(steps), desc="reach", mininterval=0.5)
    for i in bar:
        q, m, v, value = update(q, m, v, jnp.float32(i + 1))
        hist.append(float(value))
        if i % 10 == 0 or i + 1 == steps:
            bar.set_postfix(loss=f"{hist[-1]:.2e}", refresh=False)
    dist = float(jnp.linalg.norm(end_effector(model, site, q) - target))
    print(f"reach: final distance to target {dist * 1000:.2f} mm")
    return {"loss": hist, "q": np.asarray(q), "distance": dist, "target": np.asarray(target)}
