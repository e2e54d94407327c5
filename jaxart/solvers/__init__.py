"""Solvers (Newton's ``newton.solvers``): each has ``step(state, control, contacts, dt) -> State``.

Solvers are imported lazily so that importing :mod:`jaxart` stays fast.
"""

from __future__ import annotations

import importlib

_SOLVERS = {
    "SolverFeatherstone": "jaxart.solvers.featherstone",
    "SolverMuJoCo": "jaxart.solvers.mujoco",
    "SolverSemiImplicit": "jaxart.solvers.semi_implicit",
    "SolverXPBD": "jaxart.solvers.xpbd",
}

__all__ = list(_SOLVERS)


def __getattr__(name: str):
    if name in _SOLVERS:
        return getattr(importlib.import_module(_SOLVERS[name]), name)
    raise AttributeError(f"module 'jaxart.solvers' has no attribute {name!r}")
