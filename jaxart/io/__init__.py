"""Model importers: MJCF through MuJoCo's compiler (:func:`add_mjcf`), URDF (:func:`add_urdf`)."""

from jaxart.io.mjcf import add_mjcf, load_mjcf
from jaxart.io.urdf import add_urdf, load_urdf

__all__ = ["add_mjcf", "add_urdf", "load_mjcf", "load_urdf"]
