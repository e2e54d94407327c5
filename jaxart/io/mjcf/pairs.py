"""MJCF ``<contact><pair>`` → jaxart explicit contact pairs (``ModelBuilder.add_shape_contact_pair``).

MuJoCo tests an explicit pair whatever the geoms' ``contype``/``conaffinity`` and ``<exclude>``;
jaxart's explicit pairs bypass collision groups and filter pairs the same way, so the pair
itself is imported exactly. (``<exclude>`` body pairs are imported by
:func:`jaxart.io.mjcf.shapes.add_collision_filters` as filter pairs between the bodies' colliding
shapes.)

Per-pair parameters have no per-pair counterpart in jaxart: a contact's material is the mean of
its two shapes' materials. A pair is therefore imported exactly only when MuJoCo's pair values
equal what jaxart derives from the two shapes; every difference is reported in the importer's
warning (never dropped silently):

* sliding friction ``friction[0]`` vs the mean of the two geoms' ``friction[0]``; a different
  ``friction[1]`` (anisotropic friction); for ``condim ≥ 4`` the torsional and for ``condim = 6``
  the rolling coefficients vs the geoms' means;
* ``solref`` → ``(ke, kd)`` with :func:`~jaxart.io.mjcf.convert.solref_gains` (effective mass: the
  heavier of the two geoms' trees, as in :func:`~jaxart.io.mjcf.shapes.geom_config`) vs the mean
  of the two shapes' ``ke``/``kd``; a non-zero ``solreffriction``;
* ``margin`` / ``gap`` vs the larger geom margin / gap (MuJoCo's rule for dynamic contacts, which
  is what the imported shape margins/gaps reproduce).

``condim`` and ``solimp`` are not reported, as for geoms (see :mod:`jaxart.io.mjcf.report`).
Pairs naming a geom that is not imported (heightfield/SDF) and repeated pairs (MuJoCo accepts the
same geom pair twice; jaxart tests it once) are reported and skipped.
"""

from __future__ import annotations

import numpy as np

from jaxart.io.mjcf.convert import solref_gains
from jaxart.io.mjcf.flags import contacts_disabled
from jaxart.io.mjcf.shapes import GEOM_TYPES, geom_config, tree_mass

_RTOL = 1e-6


def _name(m, p: int) -> str:
    g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
    label = m.pair(p).name or f"#{p}"
    return f"contact pair {label!r} ({m.geom(g1).name or g1!r}, {m.geom(g2).name or g2!r})"


def _differs(a: float, b: float) -> bool:
    return abs(a - b) > _RTOL * max(abs(a), abs(b), 1e-12)


def _material_issues(m, p: int, *, min_timeconst: float) -> list[str]:
    g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
    c1, c2 = geom_config(m, g1, min_timeconst=min_timeconst), geom_config(m, g2, min_timeconst=min_timeconst)
    fr = np.asarray(m.pair_friction[p], dtype=np.float64)
    dim = int(m.pair_dim[p])
    out = []
    checks = [("friction", fr[0], 0.5 * (c1.mu + c2.mu))] if dim > 1 else []
    if dim > 1 and _differs(fr[1], fr[0]):
        out.append(f"anisotropic friction {fr[:2].tolist()} (jaxart uses friction[0] in every direction)")
    if dim >= 4:
        checks.append(("torsional friction", fr[2], 0.5 * (c1.mu_torsional + c2.mu_torsional)))
    if dim >= 6:
        checks.append(("rolling friction", fr[3], 0.5 * (c1.mu_rolling + c2.mu_rolling)))
    mass = max(tree_mass(m, int(m.geom_bodyid[g1])), tree_mass(m, int(m.geom_bodyid[g2])))
    ke, kd = solref_gains(m.pair_solref[p], mass, min_timeconst=min_timeconst)
    checks += [("solref stiffness ke", ke, 0.5 * (c1.ke + c2.ke)), ("solref damping kd", kd, 0.5 * (c1.kd + c2.kd)),
               ("margin", float(m.pair_margin[p]), max(m.geom_margin[g1], m.geom_margin[g2])),
               ("gap", float(m.pair_gap[p]), max(m.geom_gap[g1], m.geom_gap[g2]))]
    for what, pair_value, used in checks:
        if _differs(float(pair_value), float(used)):
            out.append(f"{what} {float(pair_value):.6g} (jaxart uses the shapes' {float(used):.6g})")
    if np.any(np.asarray(m.pair_solreffriction[p]) != 0.0):
        out.append(f"solreffriction {np.asarray(m.pair_solreffriction[p]).tolist()} (not representable)")
    return out


def pair_issues(m, *, min_timeconst: float) -> list[str]:
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
            diffs = _material_issues(m, p, min_timeconst=min_timeconst)
            if diffs:
                issues.append(f"{_name(m, p)} imported with the shapes' materials: " + "; ".join(diffs))
    return issues


def add_contact_pairs(builder, m, shapes: dict[int, int]) -> list[tuple[int, int]]:
    """Add every importable MuJoCo pair as an explicit jaxart contact pair.

    Args:
        builder: Target builder.
        m: Compiled model.
        shapes: Shape index per imported MuJoCo geom id.

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
        builder.add_shape_contact_pair(a, b)
        added.append((a, b))
    return added
