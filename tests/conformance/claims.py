"""The solvers' feature claims, read from the README's "What each solver supports" table.

The table is the single statement of which solver claims which feature: a conformance suite runs its checks for
every solver whose cell in the feature's row starts with ✓ (:func:`solver_params`). Each suite keeps, per
claimant, the settings of its scenario (step, tolerances) in a ``CASES`` mapping, or names the tests elsewhere
that check the claim (:class:`Elsewhere`); ``tests/conformance/test_claims.py`` checks that every suite's
``CASES`` holds exactly the README's claimants. Adding a solver (a column) or a claim (a ✓) therefore fails the
suites until they run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

#: The README table's column header of each solver, by the key the suites use.
SOLVERS = {
    "featherstone": "`SolverFeatherstone`",
    "xpbd": "`SolverXPBD`",
    "semi_implicit": "`SolverSemiImplicit`",
    "mujoco": "`SolverMuJoCo`",
}

#: The README table's row of each feature with a conformance suite (the start of the row's first cell).
FEATURES = {
    "equality": "equality CONNECT/WELD/JOINT/TENDON",
    "tendon_equality": "equality CONNECT/WELD/JOINT/TENDON",
    "enabled": "`enabled` switched at run time",
    "acceleration_drives": "ACCELERATION drives (PhysX)",
    "tendons": "fixed and spatial tendons",
    "model_step": "physical at the model's step",
    "limits": "drives (POSITION/VELOCITY/EFFORT), limits, stiffness, damping",
    "contacts": "contacts",
}

_HEADER = "| feature |"


@dataclass(frozen=True)
class Elsewhere:
    """A claim checked by solver-specific tests outside the suite (``path::test`` names, from the repository)."""

    tests: tuple[str, ...]


def readme_table(text: str | None = None) -> dict[str, dict[str, str]]:
    """The feature table: ``{row label: {solver key: cell}}`` (``text``: the README's text, default the file)."""
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(_HEADER))
    header = [c.strip() for c in lines[start].strip().strip("|").split("|")]
    keys = {col: key for key, col in SOLVERS.items()}
    unknown = [c for c in header[1:] if c not in keys]
    if unknown:
        raise ValueError(f"README feature table: columns {unknown} have no key in claims.SOLVERS")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = {keys[col]: cell for col, cell in zip(header[1:], cells[1:], strict=True)}
    return rows


def claimants(feature: str, text: str | None = None) -> tuple[str, ...]:
    """The solver keys whose cell of ``feature``'s row (a key of :data:`FEATURES`) starts with ✓."""
    rows = [cells for label, cells in readme_table(text).items() if label.startswith(FEATURES[feature])]
    if len(rows) != 1:
        raise ValueError(f"README feature table: {len(rows)} rows start with {FEATURES[feature]!r}, expected 1")
    return tuple(key for key, cell in rows[0].items() if cell.startswith("✓"))


def solver_params(feature: str, cases: dict, slow: tuple[str, ...] = ()) -> list:
    """``pytest.param`` per claimant of ``feature`` that the suite runs (its case is not :class:`Elsewhere`),
    with the case as the value and the solver key as the id; the keys in ``slow`` are in the slow tier."""
    params = []
    for key in claimants(feature):
        case = cases.get(key)
        if case is None or isinstance(case, Elsewhere):
            continue  # a missing case fails test_claims; Elsewhere names the tests that check it
        marks = (pytest.mark.slow,) if key in slow else ()
        params.append(pytest.param(key, case, id=key, marks=marks))
    return params
