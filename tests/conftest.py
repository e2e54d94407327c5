"""Shared test setup: float64 everywhere (oracle comparisons) and small model factories."""

import os

import jax

# Offscreen rendering (jaxart.viewer) needs a headless GL backend chosen before mujoco is imported.
os.environ.setdefault("MUJOCO_GL", "egl")

jax.config.update("jax_enable_x64", True)
