"""Drop the bundled humanoid (20 hinges + a free root: 26 DOFs) on its floor with every jaxart solver.

Usage: ``python examples/drop_humanoid.py [--quick] [--steps 250]``.

The humanoid (``jaxart/assets/humanoid.xml``) starts upright with its foot soles 5 mm above the
floor, no actuation (its motors are EFFORT drives left at zero), so it lands and collapses under
gravity. ``--steps N`` simulates N steps of the model's 2 ms time step; solvers that need a smaller
step take several substeps per model step:

* ``SolverFeatherstone`` solves its contacts implicitly (the default), so it runs at the model's 2 ms
  with the MJCF ``solref`` gains (ke ≈ 1.1e5 N/m, kd ≈ 4.4e3 N·s/m on 0.9 kg feet); its explicit
  penalty mode (``contact="explicit"``, Newton's law) would need ``dt ≈ 0.1 ms`` here;
* ``SolverSemiImplicit``: its explicit joint attachment springs ring fast on the light links
  (see ``drop_quadruped.py``), so dt = 50 µs;
* ``SolverXPBD`` and ``SolverMuJoCo`` (MuJoCo's own contacts, MJX step) run at the model's 2 ms.

Each solver runs a jitted ``lax.scan`` rollout (collision → step, helper ``simulate`` of
``drop_quadruped.py``); the script prints the torso (root) height over time, the final root height,
the deepest jaxart contact separation and whether the final state is finite (no NaN). ``--quick``
simulates 50 model steps (0.1 s) in float32.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import jaxart

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drop_quadruped import simulate  # noqa: E402  (shared rollout helper of the examples)

MODEL_DT = 2e-3  # the MJCF's <option timestep>


def load(dtype):
    """The bundled humanoid with its MJCF floor, finalized in ``dtype``."""
    b = jaxart.ModelBuilder()
    b.add_mjcf(jaxart.assets.asset_path("humanoid"))
    return b.finalize(dtype=dtype)


def solvers(model):
    """``(name, solver, substeps per model step)`` for every solver."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SolverMuJoCo notes unmapped defaults (e.g. velocity limits)
        mujoco_solver = jaxart.solvers.SolverMuJoCo(model, timestep=MODEL_DT)
    return [
        ("SolverFeatherstone", jaxart.solvers.SolverFeatherstone(model), 1),
        ("SolverSemiImplicit", jaxart.solvers.SolverSemiImplicit(model), 40),
        ("SolverXPBD", jaxart.solvers.SolverXPBD(model, iterations=4), 1),
        ("SolverMuJoCo", mujoco_solver, 1),
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 model steps (0.1 s) in float32")
    parser.add_argument("--steps", type=int, default=None,
                        help=f"model steps of {MODEL_DT * 1e3:g} ms to simulate (default 250, --quick 50)")
    args = parser.parse_args(argv)
    jaxart.enable_compilation_cache()  # a second run reuses the compiled programs
    steps = args.steps if args.steps is not None else (50 if args.quick else 250)
    if steps < 1:
        parser.error(f"--steps must be >= 1, got {steps}")
    dtype = jnp.float32 if args.quick else jnp.float64
    if dtype == jnp.float64:
        jax.config.update("jax_enable_x64", True)
    model = load(dtype)
    z0 = float(model.body_q[0, 2])
    print(f"humanoid: {model.body_count} bodies, {model.joint_dof_count} DOFs, {model.shape_count} shapes; "
          f"{steps} steps of {MODEL_DT * 1e3:g} ms = {steps * MODEL_DT:g} s simulated ({np.dtype(dtype).name}); "
          f"root starts at z = {z0:.3f} m")
    results = []
    for name, solver, sub in solvers(model):
        dt = MODEL_DT / sub
        n = steps * sub
        every = max(n // 10, 1)
        final, heights, seps, wall = simulate(model, solver, dt, n - n % every, every)
        finite = bool(np.all(np.isfinite(np.asarray(final.body_q))) and np.all(np.isfinite(np.asarray(final.joint_q))))
        z = float(final.body_q[0, 2])
        results.append((name, z, finite))
        print(f"\n{name} (dt = {dt * 1e3:.3g} ms, {n - n % every} steps, {wall:.1f} s wall incl. compile)")
        print("  root z [m] every", f"{every * dt:.3g} s:", " ".join(f"{h:.3f}" for h in heights))
        print(f"  final root z: {z:.4f} m; deepest jaxart contact separation: {seps.min() * 1e3:.2f} mm; "
              f"NaN-free: {finite}")
    print("\nsummary: " + "; ".join(f"{n} z={z:.3f} {'ok' if ok else 'NaN!'}" for n, z, ok in results))
    if not all(ok for _, _, ok in results):
        raise SystemExit("a solver produced a non-finite state")


if __name__ == "__main__":
    main()
