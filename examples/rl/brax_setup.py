"""Shared setup of the Brax example scripts: brax's trainers, the JAX pin they need, and JAX's classic ``pmap``.

brax 0.14.2's trainers call ``jax.device_put_replicated``, removed in JAX 0.10, so the ``brax`` extra pins
``jax<0.10``. On JAX 0.9 ``jax.pmap`` is by default a ``jit`` of a ``shard_map`` whose compilation cache is keyed
on whether its arguments are committed to devices: brax passes its first training epoch the uncommitted
environment states of its jitted ``reset``/``step`` and every later epoch the committed outputs of the previous
one, so each trainer compiles its training epoch twice (measured: APG swing-up spent ~54 s of 183 s in the second
compile). JAX 0.9's classic ``pmap`` (``jax_pmap_shmap_merge=False``, a documented JAX 0.9 option, deprecated
with ``pmap`` itself) does not recompile for that; :func:`load_trainers` switches to it.
"""

from __future__ import annotations

import warnings

import jax


def load_trainers(script: str):
    """Import brax's training agents (``ppo``, ``apg``, ``ppo_networks``) or exit naming what to install.

    Args:
        script: The calling script's name, for the messages.

    Returns:
        ``(ppo, apg, ppo_networks)`` modules of ``brax.training.agents``.
    """
    try:
        from brax.training.agents.apg import train as apg
        from brax.training.agents.ppo import networks as ppo_networks
        from brax.training.agents.ppo import train as ppo
    except ImportError as e:
        raise SystemExit(f'{script}: needs brax ({e}); pip install "jaxart[brax]"') from None
    if not hasattr(jax, "device_put_replicated"):
        raise SystemExit(f"{script}: brax 0.14.2 needs jax<0.10 (found jax {jax.__version__}); "
                         'pip install "jaxart[brax]" pins it')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        jax.config.update("jax_pmap_shmap_merge", False)  # module docstring: one compilation per training epoch
    return ppo, apg, ppo_networks
