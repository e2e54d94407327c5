"""Contact models: Newton's penalty law (exact and smooth) as body wrenches.

See :mod:`jaxart.contact.penalty` for the force law and :mod:`jaxart.contact.smooth` for the
smooth (softplus) variant used for gradients through contact.
"""

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
    "accumulate_point_forces",
    "average_materials",
    "contact_body_wrenches",
    "contact_forces",
    "smooth_contact_body_wrenches",
]
