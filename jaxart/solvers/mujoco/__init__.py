"""MuJoCo (MJX) solver: ``solver`` (SolverMuJoCo); Model->MjSpec conversion (``convert``, ``joints``,
``shapes``, ``hfield``, ``filter``, ``equality``); ``layout``, ``state``, ``contacts``."""

from jaxart.solvers.mujoco.solver import SolverMuJoCo

__all__ = ["SolverMuJoCo"]
