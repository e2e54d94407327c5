"""Shared timing helpers and model sources for the benchmark scripts (not part of the package)."""

from __future__ import annotations

import os
import time

import jax
import numpy as np


def mjx_humanoid_path() -> str:
    """Path of the humanoid that ships with MuJoCo's MJX test data."""
    from jaxart.solvers.mujoco import mjx

    return os.path.join(os.path.dirname(mjx.__file__), "test_data", "humanoid", "humanoid.xml")


def chain_mjcf(n: int, *, joint: str = "hinge") -> str:
    """An n-link serial chain (hinges alternating about y and z) as an MJCF string."""
    body = ""
    for i in range(n):
        axis = "0 1 0" if i % 2 == 0 else "0 0 1"
        body += (f'<body name="l{i}" pos="{0.0 if i == 0 else 0.1} 0 0">'
                 f'<joint name="j{i}" type="{joint}" axis="{axis}"/>'
                 f'<geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.02"/>')
    body += "</body>" * n
    return f'<mujoco model="chain{n}"><option integrator="Euler"/><worldbody>{body}</worldbody></mujoco>'


def time_call(fn, *args, repeat: int = 5, min_time: float = 0.2) -> float:
    """Median wall time [s] of ``fn(*args)`` (blocking on JAX results), after one warm-up call."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeat):
        n, t0 = 0, time.perf_counter()
        while True:
            jax.block_until_ready(fn(*args))
            n += 1
            if time.perf_counter() - t0 >= min_time / repeat:
                break
        times.append((time.perf_counter() - t0) / n)
    return float(np.median(times))


def compile_time(jitted, *args) -> float:
    """Seconds to trace and compile ``jitted`` for these arguments (lower + compile, no execution)."""
    return compile_timed(jitted, *args)[0]


def compile_timed(jitted, *args):
    """``(seconds, compiled)``: trace + compile time and the compiled executable.

    Time the returned executable rather than calling ``jitted`` again: an ahead-of-time compile does
    not populate ``jitted``'s cache, so the next call would compile a second time.
    """
    t0 = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    return time.perf_counter() - t0, compiled


def print_table(title: str, header: list[str], rows: list[list]) -> None:
    """Print a fixed-width table."""
    cols = [header] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(str(r[i])) for r in cols) for i in range(len(header))]
    print(f"\n{title}")
    print("  ".join(str(h).rjust(w) for h, w in zip(header, widths, strict=True)))
    for r in cols[1:]:
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths, strict=True)))


def _fmt(x) -> str:
    if isinstance(x, float):
        if x == 0 or 1e-2 <= abs(x) < 1e5:
            return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"
        return f"{x:.2e}"
    return str(x)
