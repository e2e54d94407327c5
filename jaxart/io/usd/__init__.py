"""USD in and out: :func:`add_usd` (UsdPhysics import), :func:`export_model`, :func:`export_trajectory`.

See :mod:`jaxart.io.usd.importer` for the import mapping and :mod:`jaxart.io.usd.export` for the export.
Requires ``usd-core`` (``pxr``), a jaxart dependency; it is imported only when these functions run.
"""

from jaxart.io.usd.export import export_model
from jaxart.io.usd.importer import add_usd
from jaxart.io.usd.trajectory import export_trajectory

__all__ = ["add_usd", "export_model", "export_trajectory"]
