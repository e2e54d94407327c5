"""Model importers: MJCF through MuJoCo's compiler (:func:`add_mjcf`)."""

from jaxart.io.mjcf import add_mjcf, load_mjcf

__all__ = ["add_mjcf", "load_mjcf"]
