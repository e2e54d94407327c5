"""jaxart: a differentiable articulation simulator in JAX with Newton's articulation API.

Importing jaxart never changes global JAX configuration (enable float64 yourself with
``jax.config.update("jax_enable_x64", True)`` and ``finalize(dtype=jnp.float64)``).
"""

from jaxart import assets, collision, selection, sensors, solvers
from jaxart.collision import Contacts
from jaxart.compile_cache import enable_compilation_cache
from jaxart.compile_options import fast_compile_options
from jaxart.dynamics import (
    eval_forward_dynamics,
    eval_generalized_external_force,
    eval_inverse_dynamics_force,
    eval_inverse_dynamics_passive,
    eval_jacobian,
    eval_mass_matrix,
)
from jaxart.kinematics import eval_fk, eval_ik
from jaxart.rollout import rollout
from jaxart.sim.builder import ModelBuilder
from jaxart.sim.builder_shapes import Mesh
from jaxart.sim.configs import JointDofConfig, ShapeConfig
from jaxart.sim.contact_pairs import ContactPairConfig
from jaxart.sim.enums import MAXVAL, Axis, BodyFlags, EqType, GeoType, JointDriveType, JointTargetMode, JointType
from jaxart.sim.heightfield import Heightfield
from jaxart.sim.model import Control, Model, State

__version__ = "0.1.0"

__all__ = [
    "enable_compilation_cache",
    "fast_compile_options",
    "MAXVAL",
    "Axis",
    "BodyFlags",
    "ContactPairConfig",
    "Contacts",
    "Control",
    "EqType",
    "GeoType",
    "Heightfield",
    "JointDofConfig",
    "JointDriveType",
    "JointTargetMode",
    "JointType",
    "Mesh",
    "Model",
    "ModelBuilder",
    "ShapeConfig",
    "State",
    "eval_fk",
    "eval_forward_dynamics",
    "eval_generalized_external_force",
    "eval_ik",
    "eval_inverse_dynamics_force",
    "eval_inverse_dynamics_passive",
    "eval_jacobian",
    "eval_mass_matrix",
    "rollout",
    "assets",
    "collision",
    "selection",
    "sensors",
    "solvers",
]

_LAZY_SUBPACKAGES = ("envs", "sharding", "viewer")  # imported on first use (mujoco rendering, RL envs)


def __getattr__(name: str):
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"jaxart.{name}")
    raise AttributeError(f"module 'jaxart' has no attribute {name!r}")
