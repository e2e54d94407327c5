"""The conformance suites cover exactly the claims of the README's feature table (:mod:`claims`)."""

from __future__ import annotations

import ast
import importlib

import pytest
from claims import FEATURES, ROOT, SOLVERS, Elsewhere, claimants, readme_table

#: Each suite module's case tables by feature.
SUITES = {
    "equality": ("test_equality_rows", "CASES"),
    "enabled": ("test_equality_rows", "ENABLED_CASES"),
    "tendon_equality": ("test_tendon_equality", "CASES"),
    "acceleration_drives": ("test_acceleration_drive_law", "CASES"),
    "tendons": ("test_tendon_rows", "CASES"),
    "model_step": ("test_model_step_drops", "CASES"),
    "limits": ("test_joint_limits", "CASES"),
    "contacts": ("test_contact_rest", "CASES"),
}


def _test_names(path) -> set[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_the_table_has_every_solver_and_feature():
    rows = readme_table()
    assert all(set(cells) == set(SOLVERS) for cells in rows.values())
    for feature in FEATURES:
        assert claimants(feature)  # one row each, claimed by some solver
    assert set(SUITES) == set(FEATURES)


@pytest.mark.parametrize("feature", list(SUITES))
def test_every_claimant_has_a_case_and_no_other_solver_does(feature):
    module, name = SUITES[feature]
    cases = getattr(importlib.import_module(module), name)
    assert set(cases) == set(claimants(feature)), f"{module}.{name} vs the README's {FEATURES[feature]!r} row"
    for key, case in cases.items():
        if isinstance(case, Elsewhere):
            assert case.tests, key
            for ref in case.tests:
                path, test = ref.split("::")
                assert test in _test_names(path), f"{key}: {ref} does not exist"


def test_claims_read_the_check_marks():
    text = ("| feature | `SolverFeatherstone` | `SolverXPBD` | `SolverSemiImplicit` | `SolverMuJoCo` |\n"
            "|---|---|---|---|---|\n"
            "| physical at the model's step (x) | ✓ 10 ms | ✓ | ✗ 0.1 ms | ✓ |\n"
            "| equality CONNECT/WELD/JOINT/TENDON, mimic | ✓ | ✗ | ✓ | ✓ |\n")
    assert claimants("model_step", text) == ("featherstone", "xpbd", "mujoco")
    assert claimants("equality", text) == ("featherstone", "semi_implicit", "mujoco")
    with pytest.raises(ValueError, match="rows start with"):
        claimants("tendons", text)
    with pytest.raises(ValueError, match="no key in claims.SOLVERS"):
        readme_table(text.replace("`SolverXPBD`", "`SolverNew`"))
