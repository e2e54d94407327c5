"""Forward and inverse kinematics (Newton's ``eval_fk`` / ``eval_ik``), pure and vectorised."""

from jaxart.kinematics.fk import eval_fk
from jaxart.kinematics.ik import eval_ik

__all__ = ["eval_fk", "eval_ik"]
