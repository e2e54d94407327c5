"""Opt-in use of JAX's persistent compilation cache for scripts, examples and notebooks.

Most of the wait before a jaxart program's first step is XLA compilation. JAX can keep compiled
programs on disk and reuse them when the same program (same HLO, compiler flags, JAX version and
device) is compiled again, so a second run of a script starts in seconds. Importing jaxart never turns
this on; a script calls :func:`enable_compilation_cache` once, before its first compilation::

    import jaxart
    jaxart.enable_compilation_cache()          # ~/.cache/jaxart/jax, or $JAXART_CACHE_DIR

The demo (``python -m jaxart.demo``), the examples and the notebooks do so. Delete the folder to
clear the cache; cached programs are the executables XLA would build again, so results are unchanged.
"""

from __future__ import annotations

import os

import jax

#: Environment variable that overrides the default cache folder.
CACHE_DIR_ENV = "JAXART_CACHE_DIR"
#: Environment variable that, set to ``0``, makes :func:`enable_compilation_cache` do nothing (the test
#: suite sets it: it runs the examples in its own process and keeps JAX's settings as they are).
CACHE_SWITCH_ENV = "JAXART_COMPILATION_CACHE"


def default_cache_dir() -> str:
    """The cache folder used when none is given: ``$JAXART_CACHE_DIR`` or ``~/.cache/jaxart/jax``."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxart", "jax")


def enable_compilation_cache(cache_dir: str | os.PathLike | None = None, *,
                             min_compile_time_s: float = 0.5) -> str | None:
    """Turn on JAX's persistent compilation cache (a global JAX setting: call it from scripts, not libraries).

    Args:
        cache_dir: Folder for the cached programs (created if missing); default :func:`default_cache_dir`.
        min_compile_time_s: Only programs that took at least this long to compile [s] are written
            (JAX's ``jax_persistent_cache_min_compile_time_secs``); small programs compile faster than
            they load.

    Returns:
        The cache folder, as a string; ``None`` (and nothing changed) when the environment variable
        ``JAXART_COMPILATION_CACHE`` is ``0``.

    Raises:
        TypeError: ``cache_dir`` is not a path.
        ValueError: ``min_compile_time_s`` is negative or not finite.
    """
    if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
        raise TypeError(f"enable_compilation_cache: cache_dir must be a path or None, got {type(cache_dir).__name__}")
    t = float(min_compile_time_s)
    if not (t >= 0.0 and t < float("inf")):
        raise ValueError(f"enable_compilation_cache: min_compile_time_s must be a finite number >= 0, got {t}")
    if os.environ.get(CACHE_SWITCH_ENV, "1") == "0":
        return None
    path = os.fspath(cache_dir) if cache_dir is not None else default_cache_dir()
    os.makedirs(path, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", t)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path
