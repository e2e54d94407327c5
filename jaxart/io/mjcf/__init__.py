"""MJCF import through MuJoCo's compiler: :func:`add_mjcf` (``ModelBuilder.add_mjcf``) and :func:`load_mjcf`.

The mapping is documented in :mod:`jaxart.io.mjcf.importer`; one module per MJCF element family
(joints, shapes, pairs, equality, tendons, actuators) and small conversions in :mod:`jaxart.io.mjcf.convert`.
"""

from jaxart.io.mjcf.convert import xyzw
from jaxart.io.mjcf.importer import add_mjcf, load_mjcf

__all__ = ["add_mjcf", "load_mjcf", "xyzw"]
