"""Package boundaries: the import-linter contracts of ``pyproject.toml`` and no private names across modules.

The contracts (``[tool.importlinter]``) keep the layers one-way (math → sim → kinematics/collision →
laws/contact → dynamics → solvers → importers → envs/viewer), the solvers from importing each other's
engines, and every package free of import cycles between its modules (imports inside functions included).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Imports of private names that the collision package still makes between its own modules.
_ALLOWED_PRIVATE = {
    ("jaxart/collision/narrow_mesh.py", "jaxart.collision.narrow_convex", "_capsule_vs"),
    ("jaxart/collision/narrow_mesh.py", "jaxart.collision.narrow_convex", "_sphere_vs_local"),
    ("jaxart/collision/narrow_cylinder.py", "jaxart.collision.narrow_mesh", "_triangles"),
}


def _private_imports(path: Path) -> list[tuple[str, str, str]]:
    """``(file, module, name)`` of every ``from jaxart… import _name`` in ``path`` (dunder names excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] == "jaxart"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    module = "." * node.level + (node.module or "")
                    found.append((path.relative_to(ROOT).as_posix(), module, alias.name))
    return found


def test_no_private_name_is_imported_across_modules():
    files = sorted((ROOT / "jaxart").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    found = {hit for path in files for hit in _private_imports(path)}
    assert not found - _ALLOWED_PRIVATE, sorted(found - _ALLOWED_PRIVATE)


def test_private_import_check_catches_one(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    bad = tmp_path / "bad.py"
    bad.write_text("from jaxart.math.quat import _hidden\nfrom jaxart.math import quat_mul\n")
    assert _private_imports(bad) == [("bad.py", "jaxart.math.quat", "_hidden")]


def test_import_linter_contracts_hold():
    pytest.importorskip("importlinter")
    code = ("import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "3 kept, 0 broken" in run.stdout, run.stdout[-2000:]
