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


def test_spatial_layout_benchmark_compares_equal_kernels(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(sys, "argv", ["spatial_layout.py", "--lanes", "8", "--bodies", "2", "--levels", "1"])
    runpy.run_path(str(BENCH / "spatial_layout.py"), run_name="__main__")
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()
            if line.split()[:1] in (["components"], ["blocks"], ["einsum"])}
    assert set(rows) == {"components", "blocks", "einsum"}
    assert int(rows["components"][1]) > 5 * int(rows["blocks"][1])  # one operation per matrix entry
    assert all(float(r[4]) < 1e-5 for r in rows.values())  # the same values


def test_program_size_attributes_equations_to_jaxart_functions():
    import os
    import subprocess

    # a fresh interpreter: the script replaces custom_vmap before jaxart is imported
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent), "JAX_ENABLE_X64": "0"}
    out = subprocess.run([sys.executable, str(BENCH / "program_size.py"), "--program", "ball_fk", "--batch", "4",
                          "--top", "5"], env=env, capture_output=True, text=True, timeout=600, check=True).stdout
    lines = out.splitlines()
    total = int(lines[0].split(": ")[1].split()[0])
    counts = [int(line.split()[0]) for line in lines[1:]]
    assert total > 100 and len(counts) == 5 and counts == sorted(counts, reverse=True) and sum(counts) <= total
    assert any("kinematics/" in line or "math/" in line for line in lines[1:])  # inside the FK lane kernel
