"""MJCF ``<contact><pair>`` → jaxart explicit contact pairs (``ModelBuilder.add_shape_contact_pair``).

MuJoCo tests an explicit pair whatever the geoms' ``contype``/``conaffinity`` and ``<exclude>``;
jaxart's explicit pairs bypass collision groups and filter pairs the same way, so the pair
itself is imported exactly. (``<exclude>`` body pairs are imported by
:func:`jaxart.io.mjcf.shapes.add_collision_filters` as filter pairs between the bodies' colliding
shapes.)

Each pair carries its own contact parameters (:class:`~jaxart.sim.contact_pairs.ContactPairConfig`,
stored per pair in ``Model.contact_pair_*`` and used by every solver for the pair's contacts):

* ``friction[0]`` (sliding) → ``mu``; ``friction[2]`` (torsional) → ``mu_torsional`` when ``condim ≥ 4``,
  else 0; ``friction[3]`` (rolling) → ``mu_rolling`` when ``condim = 6``, else 0; ``condim = 1``
  (frictionless) → ``mu = 0``;
* ``solref`` → ``(ke, kd)`` with :func:`~jaxart.io.mjcf.convert.solref_gains`, the mapping of geom
  ``solref`` (:mod:`jaxart.io.mjcf.shapes`) with the effective mass of the heavier of the two geoms'
  kinematic trees and the same ``refsafe`` time-constant clamp;
* ``margin`` → ``margin`` (the pair's total margin), ``gap`` → ``gap`` (a zero gap leaves the shapes'
  detection gaps, as for geoms);
* ``kf``/``ka`` (no MuJoCo counterpart) are the mean of the two shapes' (Newton's rule).

Not representable, and reported in the importer's warning: anisotropic friction (``friction[1] ≠
friction[0]``; jaxart uses ``friction[0]`` in every tangent direction) and a non-zero
``solreffriction``. ``solimp`` is ignored, as for geoms: the ``(ke, kd)`` above are MuJoCo's spring at
full impedance ``d = dmax`` (``solimp[1]``), which MuJoCo reaches once the penetration exceeds the
``solimp`` width (1 mm by default); below it MuJoCo's contact is softer by ``d(r)/dmax``. Pairs naming a
geom that is not imported (heightfield/SDF) and repeated pairs (MuJoCo accepts the same geom pair twice;
jaxart tests it once) are reported and skipped.
"""

from __future__ import annotations

import numpy as np

from jaxart.io.mjcf.convert import solref_gains
from jaxart.io.mjcf.flags import contacts_disabled
from jaxart.io.mjcf.shapes import GEOM_TYPES, tree_mass
from jaxart.sim.contact_pairs import ContactPairConfig

_RTOL = 1e-6


def _name(m, p: int) -> str:
    g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
    label = m.pair(p).name or f"#{p}"
    return f"contact pair {label!r} ({m.geom(g1).name or g1!r}, {m.geom(g2).name or g2!r})"


def pair_config(m, p: int, *, min_timeconst: float) -> ContactPairConfig:
    """The :class:`ContactPairConfig` of MuJoCo pair ``p`` (see the module docstring)."""
    g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
    fr = np.asarray(m.pair_friction[p], dtype=np.float64)
    dim = int(m.pair_dim[p])
    mass = max(tree_mass(m, int(m.geom_bodyid[g1])), tree_mass(m, int(m.geom_bodyid[g2])))
    ke, kd = solref_gains(m.pair_solref[p], mass, min_timeconst=min_timeconst)
    return ContactPairConfig(ke=ke, kd=kd, mu=float(fr[0]) if dim > 1 else 0.0,
                             mu_torsional=float(fr[2]) if dim >= 4 else 0.0,
                             mu_rolling=float(fr[3]) if dim >= 6 else 0.0,
                             margin=float(m.pair_margin[p]), gap=float(m.pair_gap[p]) or None)


def _parameter_issues(m, p: int) -> list[str]:
    fr = np.asarray(m.pair_friction[p], dtype=np.float64)
    out = []
    if int(m.pair_dim[p]) > 1 and abs(fr[1] - fr[0]) > _RTOL * max(abs(fr[0]), abs(fr[1]), 1e-12):
        out.append(f"anisotropic friction {fr[:2].tolist()} (jaxart uses friction[0] in every direction)")
    if np.any(np.asarray(m.pair_solreffriction[p]) != 0.0):
        out.append(f"solreffriction {np.asarray(m.pair_solreffriction[p]).tolist()} (not representable)")
    return out


def pair_issues(m) -> list[str]:
    """Importer issues of the model's explicit pairs (see the module docstring); one entry per pair."""
    issues, seen = [], {}
    if contacts_disabled(m):
        return issues
    for p in range(m.npair):
        g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
        key = (min(g1, g2), max(g1, g2))
        missing = [g for g in key if int(m.geom_type[g]) not in GEOM_TYPES]
        if missing:
            issues.append(f"{_name(m, p)}: geom {m.geom(missing[0]).name or missing[0]!r} is not imported "
                          "(heightfield/SDF); pair skipped")
        elif key in seen:
            issues.append(f"{_name(m, p)}: repeats pair #{seen[key]} (jaxart tests a shape pair once); pair skipped")
        else:
            seen[key] = p
            diffs = _parameter_issues(m, p)
            if diffs:
                issues.append(f"{_name(m, p)}: " + "; ".join(diffs))
    return issues


def add_contact_pairs(builder, m, shapes: dict[int, int], *, min_timeconst: float) -> list[tuple[int, int]]:
    """Add every importable MuJoCo pair as an explicit jaxart contact pair with its own parameters.

    Args:
        builder: Target builder.
        m: Compiled model.
        shapes: Shape index per imported MuJoCo geom id.
        min_timeconst: ``solref`` time-constant clamp [s] (MuJoCo's ``refsafe``).

    Returns:
        The ``(shape_a, shape_b)`` pairs added, in MuJoCo pair order (skipped pairs omitted; none when the
        ``contact`` or ``constraint`` flag is disabled).
    """
    added = []
    if contacts_disabled(m):
        return added
    for p in range(m.npair):
        g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
        if g1 not in shapes or g2 not in shapes:
            continue
        a, b = shapes[g1], shapes[g2]
        if (min(a, b), max(a, b)) in builder.shape_explicit_contact_pairs:
            continue  # repeated MuJoCo pair (reported by pair_issues)
        builder.add_shape_contact_pair(a, b, pair_config(m, p, min_timeconst=min_timeconst))
        added.append((a, b))
    return added
