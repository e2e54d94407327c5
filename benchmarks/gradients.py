"""Cost of rollout gradients with contact: forward rollout, gradient, their ratio, compile times and memory.

Usage: ``python benchmarks/gradients.py [--steps 100] [--batch 64] [--iterations 1 2] [--quick]``.

For the MJX test-data humanoid dropped on the ground (``SolverFeatherstone``, implicit contact, float32, the
model's 5 ms step, ``jaxart.rollout`` with collision): the loss is the sum of the final joint coordinates
and velocities, differentiated with respect to the initial joint velocities and a constant joint force.
One world and ``--batch`` worlds (``vmap``, ``remat="step"``), for each ``contact_iterations`` asked for. Per
row: the forward rollout's time per step, the gradient's, their ratio, compile times (trace + XLA) of both
programs, XLA's temporary memory of the gradient program, and whether the gradient is finite. Measure on a
quiet machine.
"""

from __future__ import annotations

import argparse
import time
import warnings

import jax
import jax.numpy as jnp
from common import compile_timed, mjx_humanoid_path, print_table, time_call

import jaxart


def _model(path: str):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_mjcf(path)
    return b.finalize()


def _programs(model, iterations: int, steps: int, batch: int | None):
    """``(forward, gradient, args)`` jitted programs and their arguments (batched when ``batch``)."""
    solver = jaxart.solvers.SolverFeatherstone(model, contact_iterations=iterations)
    remat = "step" if batch else "light"

    def loss(qd0, tau):
        s = model.state()
        s = s.replace(joint_qd=qd0)
        controls = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps, *jnp.shape(x))),
                                          model.control().replace(joint_f=tau))
        final = jaxart.rollout(solver, s, controls, dt=5e-3, remat=remat, output_fn=lambda x: None)[0]
        return jnp.sum(final.joint_q) + jnp.sum(final.joint_qd)

    qd0 = jnp.zeros(model.joint_dof_count, model.joint_q.dtype)
    tau = jnp.zeros(model.joint_dof_count, model.joint_q.dtype)
    grad = jax.grad(loss, argnums=(0, 1))
    if batch:
        loss, grad = jax.vmap(loss), jax.vmap(grad)
        qd0, tau = jnp.broadcast_to(qd0, (batch, *qd0.shape)), jnp.broadcast_to(tau, (batch, *tau.shape))
    return jax.jit(loss), jax.jit(grad), (qd0, tau)


def _row(model, iterations: int, steps: int, batch: int | None) -> list:
    fwd, grad, args = _programs(model, iterations, steps, batch)
    c_fwd, fwd_exe = compile_timed(fwd, *args)
    c_grad, grad_exe = compile_timed(grad, *args)
    mem = grad_exe.memory_analysis()
    temp_mb = getattr(mem, "temp_size_in_bytes", float("nan")) / 2 ** 20
    t_fwd = time_call(fwd_exe, *args)
    t_grad = time_call(grad_exe, *args)
    finite = bool(all(jnp.all(jnp.isfinite(g)) for g in jax.tree_util.tree_leaves(grad_exe(*args))))
    worlds = batch or 1
    per_step = lambda t: 1e6 * t / steps / worlds  # noqa: E731
    return [worlds, iterations, per_step(t_fwd), per_step(t_grad), t_grad / t_fwd, c_fwd, c_grad, temp_mb, finite]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--iterations", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--quick", action="store_true", help="10 steps, batch 4, 2 iterations only")
    args = ap.parse_args()
    if args.quick:
        args.steps, args.batch, args.iterations = 10, 4, [2]
    model = _model(mjx_humanoid_path())
    rows = []
    t0 = time.perf_counter()
    for batch in (None, args.batch):
        for it in args.iterations:
            rows.append(_row(model, it, args.steps, batch))
            print("  done:", rows[-1], flush=True)
    print_table(f"rollout gradient with contact, MJX humanoid, {args.steps} steps of 5 ms, float32 "
                f"({time.perf_counter() - t0:.0f} s in all)",
                ["worlds", "contact iterations", "forward µs/step/world", "gradient µs/step/world", "gradient/forward",
                 "compile fwd s", "compile grad s", "grad temp MiB", "finite"], rows)


if __name__ == "__main__":
    main()
