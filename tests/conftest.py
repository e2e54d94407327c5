"""Shared test setup: float64 everywhere (oracle comparisons) and JAX's persistent compilation cache.

The cache keeps compiled XLA programs on disk between runs on one machine, under
``.pytest_cache/jax_compilation_cache/<worker>`` (one directory per xdist worker, ``main`` without
xdist): JAX writes cache entries without a lock unless the optional ``filelock`` package is
installed, so workers never share a directory. A cached program is the same executable the compiler
would produce for the same HLO, flags and JAX version (all part of the key), so results do not
change. It is opt-in (``JAXART_TEST_JAX_CACHE=1``): with JAX 0.10.2 a cache write
(``compilation_cache.put_executable_and_time``) crashed a worker with a segmentation fault once, and a
cold run (CI, a newcomer's first run) gains nothing from it.

Most of the suite's time is XLA compilation of small programs that then run for milliseconds, so the
tests ask XLA:CPU for its lowest LLVM optimisation level (``--xla_backend_optimization_level=0``) and its
older loop fusion emitter (``--xla_cpu_use_fusion_emitters=false``, the README's compile-time tip), both
appended to any ``XLA_FLAGS`` already set; ``JAXART_TEST_XLA_OPT=1`` keeps XLA's defaults. They change how
the machine code is generated, not what it computes (up to floating-point rounding): the first cut the
CPU time of ``tests/dynamics/test_dynamics.py`` by a quarter, the second a further 36-38 % of
``tests/dynamics/test_aba.py``, ``tests/kinematics/test_kinematics.py`` and ``tests/envs/test_envs.py``. Benchmarks
never use them.
"""

import os
import pathlib

# The demo, examples and notebooks turn on JAX's persistent cache (jaxart.enable_compilation_cache); the suite runs
# them in its own processes and keeps JAX's settings as they are (the opt-in cache below is separate).
os.environ.setdefault("JAXART_COMPILATION_CACHE", "0")

if os.environ.get("JAXART_TEST_XLA_OPT", "0") != "1":  # must precede the first XLA backend initialisation
    _fast_compile = " --xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + _fast_compile).strip()

import jax  # noqa: E402

# Offscreen rendering (jaxart.viewer) needs a headless GL backend chosen before mujoco is imported.
os.environ.setdefault("MUJOCO_GL", "egl")

jax.config.update("jax_enable_x64", True)

if os.environ.get("JAXART_TEST_JAX_CACHE", "0") == "1":
    _worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _cache = pathlib.Path(__file__).resolve().parents[1] / ".pytest_cache" / "jax_compilation_cache" / _worker
    _cache.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(_cache))
    # cache programs that took at least this long to compile (JAX's default, 1 s, skips most of ours)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.3)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
