"""Reduced-coordinate Featherstone solver: solver (SolverFeatherstone), step (the jitted step)."""

from jaxart.solvers.featherstone.solver import SolverFeatherstone

__all__ = ["SolverFeatherstone"]
