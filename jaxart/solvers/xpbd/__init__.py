"""Maximal-coordinate XPBD solver: ``solver`` (SolverXPBD); constraint kernels (``common``, ``contacts``,
``joints``, ``soa``, ``joint_soa``, ``lanes``, ``lane_contacts``)."""

from jaxart.solvers.xpbd.solver import SolverXPBD

__all__ = ["SolverXPBD"]
