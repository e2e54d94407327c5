"""The benchmark scripts run end to end in their small (``--quick``) forms."""

import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.slow  # compiles a batched humanoid and quadruped contact step for two batch sizes, and MJX's
def test_accelerator_benchmark_quick_form_runs(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(sys, "argv", ["accelerator.py", "--quick", "--steps", "5"])
    runpy.run_path(str(BENCH / "accelerator.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "failed:" not in out
    for name in ("mjx_humanoid", "quadruped"):
        assert out.count(f"{name}: batch") == 2
    rows = [line.split() for line in out.splitlines() if line.split()[:2] in (["mjx_humanoid", "jaxart"],
                                                                                ["quadruped", "jaxart"])]
    assert len(rows) == 4 and all(r[10] == "True" for r in rows)  # every jaxart run stayed finite


def _compile_rows(monkeypatch, capsys, *extra):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(sys, "argv", ["compile.py", "--quick", *extra])
    runpy.run_path(str(BENCH / "compile.py"), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    header = lines.index(next(line for line in lines if line.split()[:2] == ["program", "impl"]))
    return [line.split() for line in lines[header + 1:] if line.strip()]


def test_compile_benchmark_quick_form_times_a_cold_fk_compile(monkeypatch, capsys):
    rows = _compile_rows(monkeypatch, capsys, "--programs", "ball_fk")
    assert len(rows) == 1 and rows[0][:2] == ["ball_fk", "jaxart"]
    trace, lower, xla, total, cpu = map(float, rows[0][2:7])
    assert min(trace, lower, xla) > 0 and abs(trace + lower + xla - total) < 0.01 * total + 0.01 and cpu > 0
    assert int(rows[0][7]) > 100 and rows[0][8] == "True"  # a real program, and it ran to finite values


@pytest.mark.slow  # compiles a one-ball contact step and a 3-step rollout gradient in fresh processes
def test_compile_benchmark_quick_form_runs(monkeypatch, capsys):
    rows = _compile_rows(monkeypatch, capsys)
    assert [r[:2] for r in rows] == [["ball_step", "jaxart"], ["ball_fk", "jaxart"], ["ball_grad", "jaxart"]]
    assert all(r[8] == "True" for r in rows)


@pytest.mark.slow  # compiles SHAC's differentiated pendulum window and rejax's PPO iteration (minutes)
def test_learning_benchmark_quick_form_runs(tmp_path):
    pytest.importorskip("rejax")
    import os
    import subprocess

    # A fresh interpreter: rejax's running statistics do not keep float32 under the suite's jax_enable_x64.
    env = {**os.environ, "JAX_ENABLE_X64": "0", "PYTHONPATH": str(BENCH.parent)}
    out_json = tmp_path / "records.json"
    out = subprocess.run([sys.executable, str(BENCH / "learning.py"), "--quick", "--save", str(out_json)], env=env,
                         capture_output=True, text=True, timeout=1200, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("| SHAC") or line.startswith("| PPO")]
    assert len(rows) == 2 and out_json.exists(), out


@pytest.mark.slow  # compiles the humanoid's rollout and its gradient, one world and four (minutes)
def test_gradients_benchmark_quick_form_runs(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(sys, "argv", ["gradients.py", "--quick"])
    runpy.run_path(str(BENCH / "gradients.py"), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    header = lines.index(next(line for line in lines if line.split()[:1] == ["worlds"]))
    rows = [line.split() for line in lines[header + 1:] if line.strip()]
    assert [r[:2] for r in rows] == [["1", "3"], ["4", "3"]] and all(r[-1] == "True" for r in rows)
