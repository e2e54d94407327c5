"""XLA compiler options that shorten the compilation of jaxart programs on CPU (opt-in, per compiled function).

Most of the wait before a jaxart program's first step is XLA:CPU compiling it, and most of that is code
generation for the many small fusions of rigid-body code. Two of XLA's options trade little or nothing
at run time for less compilation (measured with ``benchmarks/compile.py``, see the README's CPU
performance tips):

* ``xla_cpu_use_fusion_emitters=False``: XLA:CPU's older loop-fusion emitter. It computes the same
  values (up to floating-point rounding) with the same run time; batched FK compiles in half the time,
  rollout gradients in a sixth to a third less, the batched humanoid contact step at 1024 worlds 17–21 s → 12–14 s
  (nothing at 64 worlds);
* ``xla_backend_optimization_level=0`` (only with ``optimize_code=False``): LLVM's lowest optimisation
  level. Compilation roughly halves again, but the compiled code runs slower: for programs that run
  briefly (one-off evaluations, tests, short scripts), not for training loops.

Pass the options to ``jax.jit`` (or to ``.lower(...).compile(...)``); they affect only that function and
change nothing on other backends (the options are XLA:CPU's)::

    step = jax.jit(step_fn, compiler_options=jaxart.fast_compile_options())

Importing jaxart never sets them; to apply them to every program of a process instead, put them in
``XLA_FLAGS`` before JAX starts (``XLA_FLAGS=--xla_cpu_use_fusion_emitters=false``).
"""

from __future__ import annotations


def fast_compile_options(*, optimize_code: bool = True) -> dict[str, bool | int]:
    """XLA compiler options that shorten compilation on CPU, for ``jax.jit(..., compiler_options=...)``.

    Args:
        optimize_code: Keep LLVM's default optimisation of the generated code (``True``: run time
            unchanged). ``False`` also sets ``xla_backend_optimization_level=0``: faster to compile,
            slower to run.

    Returns:
        A new dict of option names and values.

    Raises:
        TypeError: ``optimize_code`` is not a bool.
    """
    if not isinstance(optimize_code, bool):
        raise TypeError(f"fast_compile_options: optimize_code must be a bool, got {type(optimize_code).__name__}")
    options: dict[str, bool | int] = {"xla_cpu_use_fusion_emitters": False}
    if not optimize_code:
        options["xla_backend_optimization_level"] = 0
    return options
