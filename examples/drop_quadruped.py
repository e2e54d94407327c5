"""Drop the bundled 12-DoF quadruped on its floor with each maximal-coordinate solver.

Usage: ``python examples/drop_quadruped.py [--quick] [--seconds 2.0]``.

The quadruped (``jaxart/assets/quadruped.xml``) starts 2.5 cm above the floor with its 12 position
servos (kp = 60) holding the stance ``q = 0``. Each solver runs a jitted ``lax.scan`` rollout
(collision → step) and the script prints the torso height over time, the final foot penetration and
the wall time. ``SolverSemiImplicit`` needs a small step: its explicit joint attachment
springs (``joint_attach_ke = 1e4``) on the calves (inertia 5.5e-5 kg·m² about the long axis) ring at
~1.4e4 rad/s, so dt = 50 µs; ``SolverXPBD`` runs at the model's 2 ms. ``--quick`` simulates 0.5 s in float32 (< 30 s).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxart


def load(dtype):
    """The bundled quadruped with its MJCF floor, finalized in ``dtype``."""
    b = jaxart.ModelBuilder()
    b.add_mjcf(jaxart.assets.asset_path("quadruped"))
    return b.finalize(dtype=dtype)


def simulate(model, solver, dt: float, steps: int, record_every: int):
    """Roll out ``steps`` steps; return final state, torso heights and minimum contact separations."""

    def step(state, _):
        contacts = model.collide(state)
        new = solver.step(state, None, contacts, dt)
        sep = jnp.min(jnp.where(contacts.active, contacts.separation, jnp.inf))
        return new, (new.body_q[0, 2], sep)

    def chunk(state, _):
        state, (z, sep) = jax.lax.scan(step, state, None, length=record_every)
        return state, (z[-1], jnp.min(sep))

    run = jax.jit(lambda s: jax.lax.scan(chunk, s, None, length=steps // record_every))
    t0 = time.perf_counter()
    final, (heights, seps) = jax.block_until_ready(run(model.state()))
    return final, np.asarray(heights), np.asarray(seps), time.perf_counter() - t0


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.5 s of simulation in float32 (< 30 s total)")
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated time [s]")
    args = parser.parse_args(argv)
    jaxart.enable_compilation_cache()  # a second run reuses the compiled programs
    seconds = 0.5 if args.quick else args.seconds
    dtype = jnp.float32 if args.quick else jnp.float64
    if dtype == jnp.float64:
        jax.config.update("jax_enable_x64", True)
    model = load(dtype)
    runs = [
        ("SolverXPBD", jaxart.solvers.SolverXPBD(model, iterations=4), 2e-3),
        ("SolverSemiImplicit", jaxart.solvers.SolverSemiImplicit(model), 5e-5),
    ]
    print(f"quadruped: {model.body_count} bodies, {model.joint_dof_count} DOFs, {model.shape_count} shapes; "
          f"{seconds} s simulated ({np.dtype(dtype).name})")
    for name, solver, dt in runs:
        steps = int(round(seconds / dt))
        every = max(steps // 10, 1)
        final, heights, seps, wall = simulate(model, solver, dt, steps - steps % every, every)
        ok = bool(np.all(np.isfinite(np.asarray(final.body_q))))
        print(f"\n{name} (dt = {dt * 1e3:.2f} ms, {steps} steps, {wall:.1f} s wall incl. compile)")
        print("  torso z [m] every", f"{every * dt:.2f} s:", " ".join(f"{z:.3f}" for z in heights))
        print(f"  deepest contact separation: {seps.min() * 1e3:.2f} mm; finite state: {ok}")


if __name__ == "__main__":
    main()
