"""Bundled MJCF models shipped with jaxart.

All models are original jaxart assets (not copies of other projects' model files). They use
only features a simple MJCF importer can represent: hinge/slide/ball/free joints, primitive
geoms (plane, sphere, capsule, box, cylinder, ellipsoid), ``<inertial>``, ``<default>``
classes, position/velocity/motor actuators and sites.

Models:
    pendulum: Single hinge pendulum about the world Y axis; a uniform 1 m, 1 kg rod with an
        explicit ``<inertial>`` (closed-form reference case). One motor.
    double_pendulum: Two hinges about Y, two uniform 1 m, 1 kg rods with explicit
        ``<inertial>``. Two motors.
    arm7: Fixed-base 7-DoF serial arm (shoulder yaw/pitch/roll, elbow, wrist x3) with rotated
        body frames, joint ranges, armature, damping, mass from geoms, position servos and an
        end-effector site ``"ee"``.
    quadruped: Free-floating box torso with four 3-hinge legs (12 DoF), sphere feet, a
        ground plane and position servos.
    humanoid: Free-floating 20-DoF humanoid with multi-hinge bodies (abdomen, hips, ankles,
        shoulders), ``<default>`` classes incl. ``childclass``, a ground plane and torque
        motors with gear. Angles are in degrees.

Example:
    >>> from jaxart.assets import asset_path
    >>> path = asset_path("pendulum")
"""

from __future__ import annotations

import os

__all__ = ["ASSET_NAMES", "asset_path"]

ASSET_NAMES: tuple[str, ...] = ("pendulum", "double_pendulum", "arm7", "quadruped", "humanoid")

_ASSET_DIR = os.path.dirname(os.path.abspath(__file__))


def asset_path(name: str) -> str:
    """Returns the absolute path of a bundled MJCF model.

    Args:
        name: Asset name, one of ``ASSET_NAMES`` (without the ``.xml`` suffix).

    Returns:
        Absolute filesystem path of ``<name>.xml`` inside the ``jaxart.assets`` package.

    Raises:
        ValueError: If ``name`` is not a bundled asset.
    """
    if name not in ASSET_NAMES:
        raise ValueError(
            f"Unknown asset {name!r}; valid asset names are: {', '.join(ASSET_NAMES)}."
        )
    return os.path.join(_ASSET_DIR, f"{name}.xml")
