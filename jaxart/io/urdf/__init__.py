"""URDF import with Newton's keywords and semantics: :func:`add_urdf` (``ModelBuilder.add_urdf``) and
:func:`load_urdf`.

The mapping is documented in :mod:`jaxart.io.urdf.importer`; XML parsing in :mod:`jaxart.io.urdf.parse`,
tree ordering and fixed-joint collapsing in :mod:`jaxart.io.urdf.tree`, shapes and meshes in
:mod:`jaxart.io.urdf.geometry`.
"""

from jaxart.io.urdf.importer import add_urdf, load_urdf

__all__ = ["add_urdf", "load_urdf"]
