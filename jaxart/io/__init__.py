"""Model importers and exporters: MJCF through MuJoCo's compiler (:func:`add_mjcf`), URDF (:func:`add_urdf`);
USD through UsdPhysics (:func:`jaxart.io.usd.add_usd`, :func:`jaxart.io.usd.export_model`,
:func:`jaxart.io.usd.export_trajectory`)."""

from jaxart.io.mjcf import add_mjcf, load_mjcf
from jaxart.io.urdf import add_urdf, load_urdf

__all__ = ["add_mjcf", "add_urdf", "load_mjcf", "load_urdf"]
