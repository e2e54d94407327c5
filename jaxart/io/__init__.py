"""Model importers and exporters: MJCF through MuJoCo's compiler (:func:`add_mjcf`); USD through
UsdPhysics (:func:`jaxart.io.usd.add_usd`, :func:`jaxart.io.usd.export_model`,
:func:`jaxart.io.usd.export_trajectory`)."""

from jaxart.io.mjcf import add_mjcf, load_mjcf

__all__ = ["add_mjcf", "load_mjcf"]
