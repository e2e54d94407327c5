"""Contact-rich demo scene: the bundled quadruped trotting open-loop on the floor, rendered to frames.

Uses :class:`jaxart.envs.QuadrupedWalk` (Featherstone + penalty ground contact, 1 ms physics step)
driven by a fixed sinusoidal trot, then :func:`jaxart.viewer.render` with a camera tracking the
torso.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxart.compile_options import fast_compile_options


def trot(t: jax.Array, *, freq: float = 2.0, amp: float = 0.6) -> jax.Array:
    """Open-loop trot: diagonal leg pairs swing in antiphase (hip pitch and knee), actions in [-1, 1]."""
    phase = 2.0 * jnp.pi * freq * t
    s = jnp.sin(phase)
    c = jnp.cos(phase)
    # legs fl, fr, rl, rr; per leg (abduction, hip pitch, knee); fl+rr and fr+rl move together
    sign = jnp.array([1.0, -1.0, -1.0, 1.0])
    hip = amp * sign * s
    knee = amp * jnp.maximum(sign * c, 0.0)
    return jnp.stack([jnp.zeros(4), hip, knee], axis=1).reshape(12)


def run(*, seconds: float = 1.5, fps: float = 30.0, width: int = 320, height: int = 240) -> dict:
    """Simulate the trot and render it.

    Returns:
        ``{"frames": (T, H, W, 3) uint8 or None, "height": torso heights, "x": torso x, "fps": fps,
        "render_error": message or None}``; frames are ``None`` when no OpenGL context could be made.
    """
    from jaxart import envs

    env = envs.QuadrupedWalk()
    n = int(round(seconds / env.control_dt))

    def rollout(state):
        def body(s, i):
            s = env.step(s, trot(i * env.control_dt))
            return s, s.pipeline_state.body_q

        return jax.lax.scan(body, state, jnp.arange(n))[1]

    body_q = np.asarray(jax.jit(rollout, compiler_options=fast_compile_options())(env.reset(jax.random.PRNGKey(0))))
    every = max(1, int(round(1.0 / (fps * env.control_dt))))
    out = {"height": body_q[:, 0, 2], "x": body_q[:, 0, 0], "fps": 1.0 / (every * env.control_dt),
           "frames": None, "render_error": None}
    try:
        from jaxart import viewer

        out["frames"] = viewer.render(env.model, body_q[::every], width=width, height=height, track_body=0,
                                      distance=1.6, azimuth=120.0, elevation=-15.0)
    except RuntimeError as e:  # no OpenGL: the message says how to set MUJOCO_GL
        out["render_error"] = str(e)
    return out
