"""The notebooks run top to bottom in a Jupyter kernel (nbclient) and are committed without outputs;
the examples run as scripts."""

import json
import os
import pathlib
import runpy
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: examples and notebooks left to ``-m slow`` (suite budget): the drop examples compile one contact step per
#: solver on a 12/26-DOF model (1–2 min each); system identification compiles a batch of rollout gradients
_SLOW_EXAMPLES = {"drop_humanoid.py", "drop_quadruped.py"}
_SLOW_NOTEBOOKS = {"system_identification.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_outputs_stripped(path):
    nb = json.loads(path.read_text())
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, f"{path.name} cell {i}"


def _skip_unless_runnable(nb) -> None:
    """Notebooks listing ``metadata.jaxart.requires`` run only where those packages work here.

    (No notebook lists any today. Brax's trainers, brax 0.14.2, call ``jax.device_put_replicated``, removed in
    JAX 0.10: a notebook requiring ``brax`` is skipped on JAX 0.10 and runs under the ``brax`` extra's pins.)
    """
    import importlib.util

    import jax

    for name in nb.metadata.get("jaxart", {}).get("requires", []):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"needs {name}")
        if name == "brax" and not hasattr(jax, "device_put_replicated"):
            pytest.skip(f"brax 0.14.2 needs jax<0.10, found {jax.__version__} (pip install 'jaxart[brax]')")


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.name in _SLOW_NOTEBOOKS else p
                                  for p in NOTEBOOKS], ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    _skip_unless_runnable(nb)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("MUJOCO_GL", "egl")
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    t0 = time.perf_counter()
    client.execute(env=env)
    print(f"{path.name}: {time.perf_counter() - t0:.1f} s")



@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.name in _SLOW_EXAMPLES else p
                                  for p in sorted((ROOT / "examples").glob("*.py"))], ids=lambda p: p.name)
def test_examples_run(path, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [str(path), "--quick"])
    runpy.run_path(str(path), run_name="__main__")
