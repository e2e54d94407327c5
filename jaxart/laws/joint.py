"""Per-DOF joint laws (Newton's ``joint_force``), elementwise over any shape of DOFs.

Each law returns a :class:`JointTerm`: the generalized force [N or N·m] on the DOF and its stiffness
``−∂f/∂q`` and damping ``−∂f/∂q̇``, which the implicit solvers fold into their matrix (``k dt² + c dt``).
An implicit solver evaluates the position terms at the look-ahead ``q + look·q̇`` (``look = dt``); explicit
solvers pass ``look = 0``. The stiffness and damping are the derivatives of the law itself (at ``look = 0``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

__all__ = ["JointTerm", "drive", "penalty_limit", "smooth_friction", "spring_damper"]


class JointTerm(NamedTuple):
    """A joint law's force and its derivatives (arrays of the DOFs' shape).

    Attributes:
        force: Generalized force [N (linear DOF) or N·m (angular DOF)].
        stiffness: ``−∂force/∂q`` [N/m or N·m/rad].
        damping: ``−∂force/∂q̇`` [N·s/m or N·m·s/rad].
    """

    force: jnp.ndarray
    stiffness: jnp.ndarray
    damping: jnp.ndarray


def drive(err, vel, target_vel, ke, kd, *, act=0.0, effort_limit=None, look=0.0) -> tuple[JointTerm, jnp.ndarray]:
    """PD drive ``ke (e − look·q̇) + kd (q̇* − q̇) + act``, clamped to ``±effort_limit``.

    Args:
        err: Position error ``q* − q`` [m or rad].
        vel: Velocity ``q̇`` [m/s or rad/s].
        target_vel: Target velocity ``q̇*`` [m/s or rad/s].
        ke: Position gain [N/m or N·m/rad].
        kd: Velocity gain [N·s/m or N·m·s/rad].
        act: Feed-forward force added before the clamp [N or N·m].
        effort_limit: Clamp [N or N·m]; ``None``: no clamp.
        look: Implicit look-ahead time [s].

    Returns:
        ``(term, saturated)``: the drive (zero stiffness and damping where the clamp is active) and the boolean
        mask of clamped DOFs.
    """
    force = ke * (err - look * vel) + kd * (target_vel - vel) + act
    if effort_limit is None:
        saturated = jnp.zeros(jnp.shape(force), bool)
        return JointTerm(force, ke, kd), saturated
    saturated = jnp.abs(force) > effort_limit
    force = jnp.clip(force, -effort_limit, effort_limit)
    return JointTerm(force, jnp.where(saturated, 0.0, ke), jnp.where(saturated, 0.0, kd)), saturated


def penalty_limit(pos, vel, lower, upper, ke, kd, *, enabled=True, look=0.0) -> tuple[JointTerm, jnp.ndarray]:
    """Penalty position limit: beyond ``[lower, upper]`` the force ``ke (q_lim − q − look·q̇) − kd q̇``.

    Args:
        pos: Position ``q`` [m or rad].
        vel: Velocity ``q̇`` [m/s or rad/s].
        lower, upper: Limits [m or rad] (may be infinite).
        ke: Limit stiffness [N/m or N·m/rad].
        kd: Limit damping [N·s/m or N·m·s/rad].
        enabled: Mask of the DOFs that have the limit (broadcast to ``pos``).
        look: Implicit look-ahead time [s].

    Returns:
        ``(term, active)``: the limit force (zero inside the limits) and the boolean mask of violated DOFs.
    """
    active = enabled & ((pos < lower) | (pos > upper))
    err = jnp.where(pos < lower, lower - pos, upper - pos)
    force = jnp.where(active, ke * (err - look * vel) - kd * vel, 0.0)  # 0 inside, also for infinite bounds
    return JointTerm(force, jnp.where(active, ke, 0.0), jnp.where(active, kd, 0.0)), active


def spring_damper(pos, vel, rest, ke, kd, *, look=0.0) -> JointTerm:
    """Passive spring-damper ``ke (q_rest − q − look·q̇) − kd q̇``.

    Args:
        pos: Position ``q`` [m or rad] (angular springs pass the wrapped angle, :func:`jaxart.laws.angles.wrap_angle`).
        vel: Velocity ``q̇`` [m/s or rad/s].
        rest: Rest position [m or rad].
        ke: Stiffness [N/m or N·m/rad].
        kd: Damping [N·s/m or N·m·s/rad].
        look: Implicit look-ahead time [s].
    """
    return JointTerm(ke * ((rest - pos) - look * vel) - kd * vel, ke, kd)


def smooth_friction(vel, mu, eps) -> JointTerm:
    """Smooth Coulomb friction ``−μ tanh(q̇/ε)`` and its damping ``μ/ε (1 − tanh²)``.

    Args:
        vel: Velocity ``q̇`` [m/s or rad/s].
        mu: Friction force [N or N·m].
        eps: Velocity scale ε [m/s or rad/s].
    """
    th = jnp.tanh(vel / eps)
    return JointTerm(-mu * th, jnp.zeros_like(th), mu / eps * (1.0 - th * th))
