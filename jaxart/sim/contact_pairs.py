"""Per-pair contact parameters of explicit contact pairs (``ModelBuilder.add_shape_contact_pair``).

An explicit pair may carry its own contact parameters (MJCF ``<contact><pair friction solref margin gap>``).
:class:`ContactPairConfig` holds them on the builder; ``finalize`` resolves every parameter left ``None``
from the two shapes (the value any other contact between them would use) and stores one value per pair in
the ``Model`` (``contact_pair_*`` fields, in the order of ``topology.shape_explicit_contact_pairs``). Every
contact row of a pair (``Contacts.pair ≥ 0``) then uses the pair's values instead of the shapes' materials,
in every solver (:func:`jaxart.contact.average_materials`, :func:`jaxart.collision.row_margins`).

Resolved at ``finalize``: editing ``shape_material_*`` on a finalized model does not change the parameters
of its explicit pairs; edit the ``contact_pair_*`` fields instead (traced leaves, differentiable).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxart.sim.validate import as_float

#: ``ContactPairConfig`` field → ``Model`` field.
PAIR_FIELDS = {
    "ke": "contact_pair_ke", "kd": "contact_pair_kd", "kf": "contact_pair_kf", "ka": "contact_pair_ka",
    "mu": "contact_pair_mu", "mu_torsional": "contact_pair_mu_torsional", "mu_rolling": "contact_pair_mu_rolling",
    "margin": "contact_pair_margin", "gap": "contact_pair_gap",
}
_SIGNED = ("ka",)


@dataclasses.dataclass(frozen=True)
class ContactPairConfig:
    """Contact parameters of one explicit pair; ``None`` = derived from the two shapes at ``finalize``.

    Attributes:
        ke: Contact normal stiffness [N/m] (default: mean of the shapes' ``ke``).
        kd: Contact damping [N·s/m] (default: mean of the shapes' ``kd``).
        kf: Friction stiffness [N·s/m] of the penalty law (default: mean of the shapes' ``kf``).
        ka: Adhesion distance [m] (default: mean of the shapes' ``ka``).
        mu: Coulomb (sliding) friction coefficient (default: mean of the shapes' ``mu``).
        mu_torsional: Torsional friction coefficient [m] (default: mean of the shapes').
        mu_rolling: Rolling friction coefficient [m] (default: mean of the shapes').
        margin: The pair's total contact margin [m]: the surfaces' distance at which the contact law starts
            (replaces ``margin_a + margin_b``; default: that sum).
        gap: The pair's detection gap [m] beyond the margin (replaces ``gap_a + gap_b``; default: that sum).

    Raises:
        ValueError: A value is not finite, or negative where it must not be (all but ``ka``).
        TypeError: A value is not a real number.
    """

    ke: float | None = None
    kd: float | None = None
    kf: float | None = None
    ka: float | None = None
    mu: float | None = None
    mu_torsional: float | None = None
    mu_rolling: float | None = None
    margin: float | None = None
    gap: float | None = None

    def __post_init__(self) -> None:
        for name in PAIR_FIELDS:
            v = getattr(self, name)
            if v is not None:
                v = as_float(v, f"ContactPairConfig: {name}", nonneg=name not in _SIGNED)
                object.__setattr__(self, name, v)


def _shape_default(builder, name: str, a: int, b: int) -> float:
    """The value a contact between shapes ``a`` and ``b`` takes without a pair override."""
    ca, cb = builder.shape_cfg[a], builder.shape_cfg[b]
    if name == "margin":
        return ca.margin + cb.margin
    if name == "gap":
        return sum(builder.rigid_gap if c.gap is None else c.gap for c in (ca, cb))
    return 0.5 * (getattr(ca, name) + getattr(cb, name))


def contact_pair_fields(builder, arr) -> dict:
    """The ``contact_pair_*`` ``Model`` fields of ``builder`` (``(k,)`` each, ``k`` explicit pairs).

    Args:
        builder: The :class:`~jaxart.ModelBuilder` being finalized.
        arr: ``(values, shape) → jax array`` of the model dtype.
    """
    pairs = builder.shape_explicit_contact_pairs
    cfgs = builder.shape_explicit_contact_pair_cfg
    out = {}
    for name, field in PAIR_FIELDS.items():
        vals = []
        for (a, b), cfg in zip(pairs, cfgs, strict=True):
            v = getattr(cfg, name)
            vals.append(_shape_default(builder, name, a, b) if v is None else v)
        out[field] = arr(np.asarray(vals, np.float64), (len(pairs),))
    return out
