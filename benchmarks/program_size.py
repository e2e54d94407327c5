"""Where a compiled program's size comes from: jaxpr equations per jaxart function.

Usage: ``python benchmarks/program_size.py [--program step|fk|grad|ball_step|ball_fk|ball_grad] [--batch 64]
[--depth 1] [--top 30]``.

XLA:CPU's compile time grows with the program it is given (a profile of the compilation is flat:
allocation, MLIR and LLVM passes, no single hot pass), so shrinking a program means finding which code emits
its operations. The programs are those of ``benchmarks/compile.py`` (the MJX test humanoid or a single ball
with ground contact). Every equation of the program's jaxpr (nested jaxprs of scans, loops, checkpoints and
custom rules included) is attributed to the innermost frame of jaxart's source that created it, and the
functions are listed by equation count. ``--depth 1`` attributes to the function; ``--depth 0`` to the line.

Lane kernels are traced here with one lane (the ``custom_vmap`` of :func:`jaxart.math.lanes.lanes` replaced by a
direct call of its batching rule before jaxart is imported): under ``vmap`` JAX traces a ``custom_vmap`` rule with
the call site's location only, which would hide everything inside the kernels. The kernel's equations are the same
at any lane count, so the counts are those of the batched program (plus ``vmap``'s few moves of the batch axis,
minus the discarded per-world trace).
"""

from __future__ import annotations

import argparse
import collections
import os
import warnings

import jax
import jax.custom_batching

_CUSTOM_VMAP = jax.custom_batching.custom_vmap


class _DirectLanes:
    """``custom_vmap`` that calls the batching rule of :func:`jaxart.math.lanes.lanes` directly, with one lane
    (other ``custom_vmap`` functions are left to JAX): the kernel's equations then keep their locations."""

    def __init__(self, fun):
        self.real, self.rule = _CUSTOM_VMAP(fun), None

    def def_vmap(self, rule):
        if rule.__module__ == "jaxart.math.lanes":
            self.rule = rule
        return self.real.def_vmap(rule)

    def __call__(self, *args):
        if self.rule is None:
            return self.real(*args)
        unbatched = jax.tree_util.tree_map(lambda _: False, args)
        out, _ = self.rule(2, unbatched, *args)  # two "worlds" of one lane each: the kernel path, not the per-world one
        return jax.tree_util.tree_map(lambda y: y[0], out)


def _where(eqn, depth: int) -> str:
    """Innermost jaxart frame of an equation's traceback (outside the lane and checkpoint wrappers)."""
    tb = eqn.source_info.traceback
    for frame in (tb.frames if tb is not None else ()):
        name = frame.file_name.replace(os.sep, "/")
        if "/jaxart/" not in name or name.endswith(("math/lanes.py", "math/checkpoint.py")):
            continue
        where = f"{name.split('/jaxart/')[-1]}:{frame.function_name}"
        return where if depth else f"{where}:{frame.line_num}"
    return "(outside jaxart: JAX's own rules, the benchmark's loss)"


def _subjaxprs(eqn):
    for value in eqn.params.values():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if hasattr(v, "jaxpr") and hasattr(v.jaxpr, "eqns"):
                yield v.jaxpr
            elif hasattr(v, "eqns"):
                yield v


def count(jaxpr, depth: int, counts: collections.Counter) -> collections.Counter:
    """Add the equations of ``jaxpr`` and of its nested jaxprs to ``counts`` by :func:`_where`."""
    for eqn in jaxpr.eqns:
        for sub in _subjaxprs(eqn):
            count(sub, depth, counts)
        counts[_where(eqn, depth)] += 1
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", default="step",
                    choices=("step", "fk", "grad", "ball_step", "ball_fk", "ball_grad"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=3, help="rollout length of the grad programs (a scan: size-neutral)")
    ap.add_argument("--depth", type=int, default=1, choices=(0, 1))
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    jax.custom_batching.custom_vmap = _DirectLanes  # before jaxart is imported (its kernels are built at import)
    from compile import _jaxart_program, _xml

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn, args = _jaxart_program(a.program.removeprefix("ball_"), _xml(a.program), a.batch, a.steps)
        closed = jax.make_jaxpr(fn)(*args)
    counts = count(closed.jaxpr, a.depth, collections.Counter())
    total = sum(counts.values())
    print(f"{a.program}, batch {a.batch}: {total} jaxpr equations (lane kernels traced directly)")
    for where, n in counts.most_common(a.top):
        print(f"{n:7d}  {100 * n / total:5.1f} %  {where}")


if __name__ == "__main__":
    main()
