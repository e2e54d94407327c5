"""USD in and out: :func:`add_usd` (UsdPhysics import), :func:`export_model`, :func:`export_trajectory`.

See :mod:`jaxart.io.usd_import` for the import mapping and :mod:`jaxart.io.usd_export` for the export.
Requires ``usd-core`` (``pxr``), a jaxart dependency; it is imported only when these functions run.
"""

from jaxart.io.usd_export import export_model
from jaxart.io.usd_import import add_usd
from jaxart.io.usd_trajectory import export_trajectory

__all__ = ["add_usd", "export_model", "export_trajectory"]
