"""Layouts of batch-minor spatial algebra: program size, compile time and run time of one kernel in three forms.

Usage: ``python benchmarks/spatial_layout.py [--lanes 1024] [--bodies 16] [--levels 4]``.

The kernel is the core of the articulated-body backward pass: ``levels`` times, every body's 6×6 inertia ``I`` is
replaced by ``X I Xᵀ + I`` (``X`` a 6×6 matrix per body), for ``bodies`` bodies and ``lanes`` worlds (float32, the
world axis last as in jaxart's lane kernels). Three ways to write it:

* ``components``: every matrix entry its own ``(bodies, lanes)`` array and every product written out per entry
  (the structure-of-arrays form of jaxart's lane kernels today);
* ``blocks``: matrices as ``(bodies, 6, 6, lanes)`` arrays, each product a sum over the contracted index unrolled
  in Python (six broadcast multiply-adds of whole blocks);
* ``einsum``: ``jnp.einsum`` of the blocks (XLA's dot/reduce).

Printed per form: StableHLO operations, compile time (trace + XLA) and run time per world. The three compute the
same values (checked to float32 rounding).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np


def components(x, i, levels: int):
    xs = [[x[:, r, c] for c in range(6)] for r in range(6)]
    cur = [[i[:, r, c] for c in range(6)] for r in range(6)]
    for _ in range(levels):
        xi = [[sum(xs[r][k] * cur[k][c] for k in range(6)) for c in range(6)] for r in range(6)]
        cur = [[sum(xi[r][k] * xs[c][k] for k in range(6)) + cur[r][c] for c in range(6)] for r in range(6)]
    return jnp.stack([jnp.stack(row, 1) for row in cur], 1)


def blocks(x, i, levels: int):
    xt = x.transpose(0, 2, 1, 3)
    for _ in range(levels):
        xi = sum(x[:, :, k, None, :] * i[:, None, k, :, :] for k in range(6))
        i = sum(xi[:, :, k, None, :] * xt[:, None, k, :, :] for k in range(6)) + i
    return i


def einsum(x, i, levels: int):
    for _ in range(levels):
        i = jnp.einsum("nikl,nkjl,nmjl->niml", x, i, x) + i
    return i


def measure(fn, args, calls: int = 30) -> tuple[int, float, float, jnp.ndarray]:
    """``(StableHLO ops, compile s, run s, output)`` of ``jax.jit(fn)``."""
    t0 = time.perf_counter()
    lowered = jax.jit(fn).lower(*args)
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t0
    ops = sum(1 for line in lowered.as_text().splitlines() if " = " in line)
    out = jax.block_until_ready(compiled(*args))
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t)
    return ops, compile_s, float(np.median(times)), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lanes", type=int, default=1024)
    ap.add_argument("--bodies", type=int, default=16)
    ap.add_argument("--levels", type=int, default=4)
    a = ap.parse_args()
    from common import print_table

    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    x = 0.3 * jax.random.normal(k1, (a.bodies, 6, 6, a.lanes), jnp.float32)
    i = jax.random.normal(k2, (a.bodies, 6, 6, a.lanes), jnp.float32)
    rows, ref = [], None
    for name, fn in (("components", components), ("blocks", blocks), ("einsum", einsum)):
        ops, c, r, out = measure(lambda x, i, fn=fn: fn(x, i, a.levels), (x, i))
        ref = out if ref is None else ref
        err = float(jnp.max(jnp.abs(out - ref)) / jnp.max(jnp.abs(ref)))
        rows.append([name, ops, c, 1e6 * r / a.lanes, err])
    print_table(f"X I Xᵀ + I over {a.levels} levels, {a.bodies} bodies, {a.lanes} lanes (float32)",
                ["form", "StableHLO ops", "compile s", "run µs/world", "max rel. diff"], rows)


if __name__ == "__main__":
    main()
