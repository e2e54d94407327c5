"""Shared test setup: float64 everywhere (oracle comparisons) and small model factories."""

import jax

jax.config.update("jax_enable_x64", True)
