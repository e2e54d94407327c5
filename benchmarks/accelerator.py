"""Batched throughput on whatever device JAX finds (CPU, GPU or TPU): jaxart vs ``mjx.step`` in one run.

Usage: ``python benchmarks/accelerator.py [--batches 1024 8192 32768 65536] [--models mjx_humanoid quadruped]
[--steps 50] [--no-mjx] [--quick] [--float64]``.

For the humanoid of MuJoCo's MJX test data and the bundled quadruped, each with its ground plane, at
the model's own time step (MJCF ``<option timestep>``), and for every batch size:

* ``SolverFeatherstone`` (``model.collide`` + ``solver.step`` under ``vmap``, ``--steps`` steps per
  jitted ``lax.scan`` call) and ``mjx.step`` (MuJoCo's MJX, the same model file, CG solver, the same
  scan) from the same initial pose: steps per second summed over the worlds, simulated seconds per
  wall second summed over the worlds, compile time (trace + XLA), peak device memory (the device's
  ``peak_bytes_in_use`` where the backend reports it, else XLA's ``memory_analysis`` of the compiled
  program: arguments + outputs + temporaries), and whether the run stayed physical: every value finite
  and the deepest contact penetration after the timed steps (jaxart's ``Contacts.separation``; MJX's
  ``contact.dist``);
* ``jaxart.eval_fk`` on the same batch (per call and per world).

A batch that fails to compile or run (out of device memory) prints its error and the script goes on.
``--quick`` runs batches 16 and 64 with 10 steps: the form the test suite runs on CPU.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from common import compile_timed, mjx_humanoid_path, print_table

import jaxart


def _path(name: str) -> str:
    return mjx_humanoid_path() if name == "mjx_humanoid" else jaxart.assets.asset_path(name)


def _load(name: str, dtype):
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_mjcf(_path(name))
    return mujoco.MjModel.from_xml_path(_path(name)), b.finalize(dtype=dtype)


def _batched(tree, batch: int):
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), tree)


def _peak_bytes(compiled) -> tuple[float, str]:
    """Peak device memory [bytes] and where the figure comes from."""
    stats = jax.devices()[0].memory_stats() or {}
    if "peak_bytes_in_use" in stats:
        return float(stats["peak_bytes_in_use"]), "device"
    m = compiled.memory_analysis()
    if m is None:
        return math.nan, "n/a"
    return float(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes), "xla"


def _timed_runs(compiled, carry, reps: int = 3) -> float:
    """Median wall time [s] of one call of ``compiled`` (after a warm-up call)."""
    carry = jax.block_until_ready(compiled(carry))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        carry = jax.block_until_ready(compiled(carry))
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), carry


def jaxart_run(model, batch: int, steps: int, dt: float) -> dict:
    """Featherstone with ground contact at step ``dt`` [s]: throughput, compile time, memory, physical check."""
    solver = jaxart.solvers.SolverFeatherstone(model)

    def world(s):
        def body(st, _):
            return solver.step(st, None, model.collide(st), dt), None

        return jax.lax.scan(body, s, None, length=steps)[0]

    fn = jax.jit(jax.vmap(world))
    states = _batched(model.state(), batch)
    compile_s, compiled = compile_timed(fn, states)
    t, final = _timed_runs(compiled, states)
    pen = jax.jit(jax.vmap(lambda s: -jnp.min(jnp.where((c := model.collide(s)).active, c.separation, 0.0))))(final)
    finite = bool(jnp.all(jnp.isfinite(final.body_q)) & jnp.all(jnp.isfinite(final.body_qd)))
    mem, src = _peak_bytes(compiled)
    return dict(dt=dt, t=t, compile=compile_s, mem=mem, mem_src=src, finite=finite, pen=float(jnp.max(pen)))


def mjx_run(mj, batch: int, steps: int) -> dict:
    """``mjx.step`` (CG solver) on the same model file: the same figures as :func:`jaxart_run`."""
    from jaxart.solvers.mujoco import mjx

    mj.opt.solver = mujoco.mjtSolver.mjSOL_CG
    mx = mjx.put_model(mj)

    def world(d):
        return jax.lax.scan(lambda x, _: (mjx.step(mx, x), None), d, None, length=steps)[0]

    fn = jax.jit(jax.vmap(world))
    data = jax.vmap(lambda _: mjx.make_data(mx))(jnp.arange(batch))
    compile_s, compiled = compile_timed(fn, data)
    t, final = _timed_runs(compiled, data)
    contact = final._impl.contact if hasattr(final, "_impl") else final.contact  # MJX >= 3.3 keeps it in _impl
    dist = jnp.minimum(contact.dist, 0.0)
    finite = bool(jnp.all(jnp.isfinite(final.qpos)) & jnp.all(jnp.isfinite(final.qvel)))
    mem, src = _peak_bytes(compiled)
    return dict(dt=float(mj.opt.timestep), t=t, compile=compile_s, mem=mem, mem_src=src, finite=finite,
                pen=float(-jnp.min(dist)) if dist.size else 0.0)


def fk_run(model, batch: int) -> dict:
    """``eval_fk`` on ``batch`` worlds: seconds per call and compile time."""
    fn = jax.jit(jax.vmap(lambda q, qd: jaxart.eval_fk(model, q, qd).body_q))
    q = _batched(model.joint_q, batch)
    qd = _batched(model.joint_qd, batch)
    compile_s, compiled = compile_timed(fn, q, qd)
    jax.block_until_ready(compiled(q, qd))
    t0 = time.perf_counter()
    for _ in range(5):
        jax.block_until_ready(compiled(q, qd))
    return dict(t=(time.perf_counter() - t0) / 5, compile=compile_s)


def _guard(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # out of device memory, a compile failure: report and go on
        print(f"  failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
        return None


def bench(name: str, batches, steps: int, use_mjx: bool, dtype) -> tuple[list, list]:
    mj, model = _load(name, dtype)
    dt = float(mj.opt.timestep)
    rows, fk_rows = [], []
    for batch in batches:
        print(f"{name}: batch {batch}", flush=True)
        runs = [("jaxart", _guard(jaxart_run, model, batch, steps, dt))]
        if use_mjx:
            runs.append(("mjx", _guard(mjx_run, mujoco.MjModel.from_xml_path(_path(name)), batch, steps)))
        ref = None
        for who, r in runs:
            if r is None:
                continue
            steps_per_s = batch * steps / r["t"]
            sim_rate = steps_per_s * r["dt"]
            ref = sim_rate if who == "jaxart" else ref
            ratio = ref / sim_rate if (who == "mjx" and ref) else math.nan
            rows.append([name, who, batch, r["dt"] * 1e3, steps_per_s, sim_rate, ratio, r["compile"],
                         r["mem"] / 2**20, r["mem_src"], r["finite"], r["pen"] * 100])
        f = _guard(fk_run, model, batch)
        if f is not None:
            fk_rows.append([name, batch, f["t"] * 1e3, f["t"] / batch * 1e6, f["compile"]])
    return rows, fk_rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", nargs="+", type=int, default=[1024, 8192, 32768, 65536])
    ap.add_argument("--models", nargs="+", default=["mjx_humanoid", "quadruped"])
    ap.add_argument("--steps", type=int, default=50, help="steps per timed call (one lax.scan)")
    ap.add_argument("--no-mjx", action="store_true", help="skip mjx.step")
    ap.add_argument("--float64", action="store_true", help="simulate in float64 (default float32)")
    ap.add_argument("--quick", action="store_true", help="batches 16 and 64, 10 steps (CPU smoke test)")
    args = ap.parse_args(argv)
    if args.quick:
        args.batches, args.steps = [16, 64], 10
    if args.float64:
        jax.config.update("jax_enable_x64", True)
    dtype = jnp.float64 if args.float64 else jnp.float32
    dev = jax.devices()[0]
    print(f"device: {dev.platform} {getattr(dev, 'device_kind', '')} ({jax.device_count()} device(s)), "
          f"jax {jax.__version__}, mujoco {mujoco.__version__}, {jnp.dtype(dtype).name}")
    rows, fk_rows = [], []
    for name in args.models:
        r, f = bench(name, args.batches, args.steps, not args.no_mjx, dtype)
        rows += r
        fk_rows += f
    print_table(f"collide + step with ground contact at the model's step ({args.steps} steps per call), summed over "
                "the worlds; 'jaxart/mjx' = ratio of simulated seconds per wall second",
                ["model", "system", "batch", "dt ms", "steps/s", "sim s/wall s", "jaxart/mjx", "compile s",
                 "peak MiB", "mem from", "finite", "max pen cm"], rows)
    print_table("eval_fk", ["model", "batch", "ms/call", "µs/world", "compile s"], fk_rows)


if __name__ == "__main__":
    main()
