"""What reverse mode through MJX's constraint solver costs: raw ``mjx`` with ``iterations=1`` vs the default.

A free box (half extent 0.1 m, mass ``m``) rests on a plane (MuJoCo's default contact: friction 1, solref
(0.02, 1), pyramidal cone, Newton solver). A horizontal force ``F`` pushes it at its centre of mass for
``--push`` seconds, then it slides freely. Per ``(m, F)`` and solver setting the script prints the box's
largest rise of the centre above its resting height, its largest upward speed and its final slide
distance, and for each setting whether ``jax.grad`` of the final position with respect to ``F`` is finite,
NaN, or fails (MJX's solver runs a ``while_loop`` unless ``iterations=1``: reverse mode raises).

Usage::

    python benchmarks/mjx_pushed_box.py [--masses 0.25 1 4] [--forces 8 15 25 50] [--push 0.1] [--steps 300]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import mujoco
from mujoco import mjx

HALF = 0.1


def box_xml(mass: float, friction: float = 1.0, timestep: float = 0.002) -> str:
    """The pushed-box model: a plane and a free box resting on it."""
    return f"""<mujoco><option timestep="{timestep}"/><worldbody>
      <geom type="plane" size="5 5 .1" friction="{friction} .005 .0001"/>
      <body pos="0 0 {HALF}"><freejoint/><geom type="box" size="{HALF} {HALF} {HALF}" mass="{mass}"/></body>
    </worldbody></mujoco>"""


def pushed_box_rollout(mass: float, iterations: int | None, *, steps: int = 300, push: float = 0.1,
                       friction: float = 1.0, ls_iterations: int | None = None):
    """A jitted ``F ↦ (z, clearance, x)`` rollout of the pushed box with raw ``mjx.step`` (``(steps,)`` each).

    ``z`` is the centre's height, ``clearance`` the lowest corner's height above the plane (> 0: airborne),
    ``x`` the centre's position along the push [m].

    Args:
        mass: Box mass [kg].
        iterations: ``opt.iterations`` of the MJX model (``None``: MuJoCo's default, 100).
        steps: Number of steps of ``timestep`` 2 ms.
        push: Duration of the push [s].
        friction: Sliding friction of the plane (the pair's friction: MuJoCo takes the larger, box 1).
        ls_iterations: ``opt.ls_iterations`` (``None``: MuJoCo's default, 50).
    """
    mj = mujoco.MjModel.from_xml_string(box_xml(mass, friction))
    mj.geom_friction[1, 0] = friction
    if iterations is not None:
        mj.opt.iterations = iterations
    if ls_iterations is not None:
        mj.opt.ls_iterations = ls_iterations
    m = mjx.put_model(mj)
    d0 = mjx.make_data(m)
    n_push = round(push / mj.opt.timestep)
    corners = HALF * jnp.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], d0.qpos.dtype)

    def run(force):
        def step(d, k):
            xfrc = jnp.zeros_like(d.xfrc_applied).at[1, 0].set(jnp.where(k < n_push, force, 0.0))
            d = mjx.step(m, d.replace(xfrc_applied=xfrc))
            clearance = jnp.min(d.xpos[1, 2] + corners @ d.xmat[1, 2])
            return d, (d.qpos[2], clearance, d.qpos[0])

        return jax.lax.scan(step, d0, jnp.arange(steps))[1]

    return jax.jit(run)


def gradient_status(mass: float, iterations: int | None, force: float, **kw) -> str:
    """``"finite"``, ``"nan"`` or ``"error: …"`` for ``d x_final / d F`` through the rollout."""
    run = pushed_box_rollout(mass, iterations, **kw)
    try:
        g = jax.jit(jax.grad(lambda f: run(f)[2][-1]))(jnp.asarray(force, jnp.asarray(0.0).dtype))
    except Exception as e:  # noqa: BLE001 - the failure is the measurement
        return f"error: {type(e).__name__}"
    return "finite" if bool(jnp.isfinite(g)) else "nan"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--masses", type=float, nargs="+", default=[0.25, 1.0, 4.0])
    ap.add_argument("--forces", type=float, nargs="+", default=[8.0, 15.0, 25.0, 50.0])
    ap.add_argument("--push", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--friction", type=float, default=1.0)
    ap.add_argument("--no-grad", action="store_true")
    ap.add_argument("--x64", action="store_true")
    args = ap.parse_args()
    if args.x64:
        jax.config.update("jax_enable_x64", True)
    print(f"dtype {jnp.asarray(0.0).dtype}, friction {args.friction}, push {args.push} s, {args.steps} steps of 2 ms")
    print(f"{'mass':>5} {'F':>5} {'iters':>6} {'max rise [mm]':>14} {'max clearance [mm]':>19} {'max vz [m/s]':>13} "
          f"{'slide [m]':>10}")
    for mass in args.masses:
        for iters in (None, 1):
            run = pushed_box_rollout(mass, iters, steps=args.steps, push=args.push, friction=args.friction)
            for f in args.forces:
                z, clear, x = run(jnp.asarray(f))
                rise, gap = 1e3 * float(jnp.max(z) - HALF), 1e3 * float(jnp.max(clear))
                vz = float(jnp.max(jnp.diff(z)) / 0.002)
                print(f"{mass:5.2f} {f:5.1f} {iters or 100:6d} {rise:14.2f} {gap:19.2f} {vz:13.3f} "
                      f"{float(x[-1]):10.3f}", flush=True)
    if args.no_grad:
        return
    for iters in (None, 1):
        status = gradient_status(1.0, iters, 25.0, steps=args.steps, push=args.push, friction=args.friction)
        print(f"grad d x_final / dF (m=1, F=25): iterations={iters or 100}: {status}", flush=True)


if __name__ == "__main__":
    main()
