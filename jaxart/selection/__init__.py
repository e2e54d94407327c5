"""Selection (Newton's ``newton.selection``): :class:`ArticulationView` over a Model/State.

Modules: ``view`` (the view), ``layout`` (static index bookkeeping), ``ops`` (gather/scatter kernels),
``root`` (root pose/twist conversions).
"""

from jaxart.selection.view import ArticulationView

__all__ = ["ArticulationView"]
