"""Overhead of SolverMuJoCo's step over a raw ``mjx.step`` on the same MjModel, plus compile times.

Measures, for batch sizes 1 and 256 (``vmap``):

* trace+compile time of a jitted ``K``-step ``lax.scan`` of the bridge step and of raw ``mjx.step``;
* run time per step (min and median over interleaved repeats) and the bridge overhead in percent
  from the minima (with and without the FK pass, ``update_body_state=False``). The bridge maps
  joint_q/joint_qd/control into ``mjx.Data``, steps, maps back and runs ``eval_fk`` for body poses;
  the raw loops only call ``mjx.step`` (see :func:`bench_bridge_vs_raw`);
* optionally SolverFeatherstone throughput on the same jaxart model (contact-free, for reference).

Batched runs use ``solver="cg"``, ``integrator="euler"`` and ``jacobian="sparse"`` by default:
XLA's batched CPU Cholesky (used by MJX's dense mass-matrix factorisation, its Newton solver and
its implicit integrators under ``vmap``) deadlocked on the 2-core development machine.

Usage::

    python benchmarks/mjx_bridge.py [--model humanoid|pendulum] [--batches 1 256] [--steps 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

import jaxart
from jaxart.solvers.mujoco import mjx


def build_model(name: str, dtype):
    """The jaxart model for ``name``: the MJX test-data humanoid (via add_mjcf) or a pendulum."""
    b = jaxart.ModelBuilder()
    if name == "humanoid":
        path = os.path.join(os.path.dirname(mjx.__file__), "test_data", "humanoid", "humanoid.xml")
        b.add_mjcf(path)
    elif name == "pendulum":
        link = b.add_link(mass=1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
        b.add_articulation([b.add_joint_revolute(-1, link, axis=(1, 0, 0))])
        b.joint_q[0] = 0.3
    else:
        raise ValueError(f"unknown model {name!r}")
    return b.finalize(dtype=dtype)


def _batched(tree, n: int):
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *x.shape)), tree)


def _time_interleaved(fns: dict, args: dict, repeats: int) -> dict:
    """Compile every function, then time them in interleaved rounds (robust on a shared machine).

    Returns ``{name: (compile_s, min_s, median_s)}``.
    """
    out, runs = {}, {k: [] for k in fns}
    for k, fn in fns.items():
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args[k]))
        out[k] = time.perf_counter() - t0
    for _ in range(repeats):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            jax.block_until_ready(fn(*args[k]))
            runs[k].append(time.perf_counter() - t0)
    return {k: (out[k], min(runs[k]), statistics.median(runs[k])) for k in fns}


def bench_bridge_vs_raw(model, solver, batch: int, steps: int, dt: float, repeats: int) -> dict:
    """Bridge scan vs raw ``mjx.step`` scans on the same mjx_model (optionally vmapped).

    Two raw baselines: ``raw`` carries only ``(qpos, qvel)`` and rebuilds the ``mjx.Data`` from the
    same template each step, exactly like the bridge minus its state mapping and FK (the overhead
    is measured against it); ``raw_data`` carries the whole ``mjx.Data`` (MJX's usual loop, with
    solver warm start).
    """
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    ctrl = model.control()
    data = solver.to_mjx_data(st, ctrl)
    m = solver.mjx_model.replace(opt=solver.mjx_model.opt.replace(timestep=jnp.asarray(dt)))

    def bridge(s, c):
        return jax.lax.scan(lambda x, _: (solver.step(x, c, None, dt), None), s, None, length=steps)[0]

    def bridge_nofk(s, c):
        return jax.lax.scan(lambda x, _: (nofk.step(x, c, None, dt), None), s, None, length=steps)[0]

    def raw(d):
        def body(x, _):
            out = mjx.step(m, d.replace(qpos=x[0], qvel=x[1]))
            return (out.qpos, out.qvel), None
        return jax.lax.scan(body, (d.qpos, d.qvel), None, length=steps)[0]

    def raw_data(d):
        return jax.lax.scan(lambda x, _: (mjx.step(m, x), None), d, None, length=steps)[0]

    nofk = jaxart.solvers.SolverMuJoCo(model, update_body_state=False, **solver.options)
    fns = {"bridge": bridge, "bridge_nofk": bridge_nofk, "raw": raw, "raw_data": raw_data}
    if batch > 1:
        fns = {k: jax.vmap(f) for k, f in fns.items()}
        st, ctrl, data = _batched(st, batch), _batched(ctrl, batch), _batched(data, batch)
    args = {"bridge": (st, ctrl), "bridge_nofk": (st, ctrl), "raw": (data,), "raw_data": (data,)}
    out = {"batch": batch, "steps": steps}
    timings = _time_interleaved({k: jax.jit(f) for k, f in fns.items()}, args, repeats)
    for k, (c, t_min, t_med) in timings.items():
        out[f"{k}_compile_s"] = c
        out[f"{k}_step_ms_min"] = 1e3 * t_min / steps
        out[f"{k}_step_ms_median"] = 1e3 * t_med / steps
        out[f"{k}_steps_per_s"] = batch * steps / t_min
    for k in ("bridge", "bridge_nofk"):
        out[f"overhead_{k}_pct"] = 100.0 * (out[f"{k}_step_ms_min"] / out["raw_step_ms_min"] - 1.0)
    return out


def bench_featherstone(model, batch: int, steps: int, dt: float, repeats: int) -> dict | None:
    """SolverFeatherstone throughput (contact-free) on the same model, if available."""
    try:
        solver = jaxart.solvers.SolverFeatherstone(model)
    except (ImportError, AttributeError, NotImplementedError, ValueError) as e:
        return {"skipped": str(e)}
    st = jaxart.eval_fk(model, model.joint_q, model.joint_qd, model.state())
    ctrl = model.control()

    def run(s, c):
        return jax.lax.scan(lambda x, _: (solver.step(x, c, None, dt), None), s, None, length=steps)[0]

    fn = jax.jit(jax.vmap(run)) if batch > 1 else jax.jit(run)
    if batch > 1:
        st, ctrl = _batched(st, batch), _batched(ctrl, batch)
    c, t_min, _ = _time_interleaved({"f": fn}, {"f": (st, ctrl)}, repeats)["f"]
    return {"batch": batch, "compile_s": c, "step_ms_min": 1e3 * t_min / steps, "steps_per_s": batch * steps / t_min}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="humanoid", choices=["humanoid", "pendulum"])
    p.add_argument("--batches", type=int, nargs="+", default=[1, 256])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dt", type=float, default=0.002)
    p.add_argument("--batched-solver", default="cg", help="MuJoCo solver for batch > 1 (newton may hang on CPU)")
    p.add_argument("--featherstone", action="store_true", help="also time SolverFeatherstone (contact-free)")
    args = p.parse_args()
    jax.config.update("jax_enable_x64", False)
    model = build_model(args.model, jnp.float32)
    results = {"model": args.model, "device": str(jax.devices()[0]), "mujoco": mujoco.__version__, "runs": []}
    for batch in args.batches:
        kind = "newton" if batch == 1 else args.batched_solver
        t0 = time.perf_counter()
        extra = {} if batch == 1 else {"integrator": "euler", "jacobian": "sparse"}
        solver = jaxart.solvers.SolverMuJoCo(model, solver=kind, **extra)
        entry = {"solver": kind, **extra, "convert_s": time.perf_counter() - t0}
        entry.update(bench_bridge_vs_raw(model, solver, batch, args.steps, args.dt, args.repeats))
        if args.featherstone:
            entry["featherstone"] = bench_featherstone(model, batch, args.steps, args.dt, args.repeats)
        results["runs"].append(entry)
        print(json.dumps(entry), flush=True)
    print(json.dumps(results, indent=2))
    _print_summary(results["runs"])


def _print_summary(runs: list[dict]) -> None:
    """The table: per-world step times, overheads and ratios (> 1 means the first is faster)."""
    from common import print_table

    rows = []
    for r in runs:
        b = r["batch"]
        fs = r.get("featherstone") or {}
        t_fs = fs.get("step_ms_min", float("nan")) * 1e3 / b
        rows.append([b, r["solver"], r["raw_step_ms_min"] * 1e3 / b, r["bridge_step_ms_min"] * 1e3 / b,
                     r["bridge_nofk_step_ms_min"] * 1e3 / b, r["overhead_bridge_pct"], r["overhead_bridge_nofk_pct"],
                     t_fs, r["bridge_step_ms_min"] * 1e3 / b / t_fs, r["raw_compile_s"], r["bridge_compile_s"]])
    header = ["batch", "mjx solver", "raw mjx µs", "bridge µs", "bridge no-FK µs", "overhead %", "no-FK overhead %",
              "featherstone µs", "bridge/featherstone", "compile raw s", "compile bridge s"]
    print_table("SolverMuJoCo bridge vs raw mjx.step, per world and step", header, rows)


if __name__ == "__main__":
    main()
