"""MuJoCo (MJX) solver: ``solver`` (SolverMuJoCo); Model->MjSpec conversion (``convert``, ``joints``,
``shapes``, ``hfield``, ``filter``, ``equality``, ``tendons``); ``layout``, ``state``, ``contacts``.

Newton's tendon authoring helpers (``add_tendon_fixed``, ``add_tendon_spatial``, ``TendonWrap*``) are
re-exported here, as ``newton.solvers.mujoco`` has them. Importing this package imports ``mujoco.mjx``
first through :mod:`~jaxart.solvers.mujoco.mjx_module`, which keeps its optional-backend probe messages
out of the output."""

from jaxart.sim.builder_tendons import TendonWrapGeom, TendonWrapPulley, TendonWrapSite
from jaxart.solvers.mujoco.mjx_module import mjx
from jaxart.solvers.mujoco.solver import SolverMuJoCo
from jaxart.solvers.mujoco.tendons import add_tendon_fixed, add_tendon_spatial

__all__ = ["SolverMuJoCo", "mjx", "TendonWrapGeom", "TendonWrapPulley", "TendonWrapSite", "add_tendon_fixed",
           "add_tendon_spatial"]
