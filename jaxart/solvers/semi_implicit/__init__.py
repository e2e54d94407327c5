"""Maximal-coordinate semi-implicit (penalty) solver: solver (SolverSemiImplicit)."""

from jaxart.solvers.semi_implicit.solver import SolverSemiImplicit

__all__ = ["SolverSemiImplicit"]
