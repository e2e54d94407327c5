"""Contact laws: the implicit compliant law of ``SolverFeatherstone`` and Newton's penalty law.

See :mod:`jaxart.contact.implicit` for the implicit law (solved inside the joint-space step),
:mod:`jaxart.contact.penalty` for Newton's explicit penalty law (body wrenches) and
:mod:`jaxart.contact.smooth` for its smooth (softplus) variant used for gradients through contact.
"""

from jaxart.contact.implicit import ImplicitContactRows, implicit_contact_forces, implicit_contact_rows
from jaxart.contact.penalty import (
    ContactForces,
    accumulate_point_forces,
    average_materials,
    contact_body_wrenches,
    contact_forces,
)
from jaxart.contact.smooth import smooth_contact_body_wrenches

__all__ = [
    "ContactForces",
    "ImplicitContactRows",
    "implicit_contact_forces",
    "implicit_contact_rows",
    "accumulate_point_forces",
    "average_materials",
    "contact_body_wrenches",
    "contact_forces",
    "smooth_contact_body_wrenches",
]
