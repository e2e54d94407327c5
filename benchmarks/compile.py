"""Seconds to the first step: trace, lowering and XLA compile time of jaxart programs vs MJX's.

Usage: ``python benchmarks/compile.py [--programs step fk grad ball_grad] [--impls jaxart jaxart-fast mjx]
[--batch 64] [--steps 100] [--quick] [--in-process]``.

Every (program, implementation) pair is compiled in a fresh Python process (a cold start: nothing traced or
compiled before, JAX's persistent compilation cache off, ``JAXART_COMPILATION_CACHE=0``), on the same model
file for jaxart and MJX:

* ``step``: one contact step of ``--batch`` worlds under ``vmap`` on the humanoid of MuJoCo's MJX test data
  (jaxart: ``model.collide`` + ``SolverFeatherstone.step``; MJX: ``mjx.step``, CG solver);
* ``fk``: batched forward kinematics of the same humanoid (``jaxart.eval_fk`` vs ``mjx.kinematics``);
* ``grad``: gradient of a loss of the final state of a ``--steps``-step rollout of one humanoid world with
  ground contact with respect to the joint forces of every step (jaxart: ``jaxart.rollout``; MJX:
  ``lax.scan`` over ``mjx.step``, the ``jax.grad`` of it);
* ``ball_step``, ``ball_fk``, ``ball_grad``: the same programs for a single free sphere dropped on a plane.

``jaxart-fast`` (and ``mjx-fast``, not run by default) compile the same program with
``jax.jit(..., compiler_options=jaxart.fast_compile_options())`` (XLA:CPU's older fusion emitter).

Columns: trace (Python tracing to a jaxpr, ``jit(f).trace``), lower (jaxpr → StableHLO, ``.lower()``),
XLA (``.compile()``), total (their sum: the wait before the first step, without the model build), CPU (the
process's CPU time over the three, all threads: less sensitive than wall time to other processes on a shared
machine), and the StableHLO program size (operations in ``.lower().as_text()``). ``--quick`` compiles the one-ball
step, FK and 3-step gradient with jaxart only, batch 4 (the suite's smoke test); ``--in-process`` measures in
this process instead of fresh ones (later programs then reuse whatever the earlier ones traced).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

PROGRAMS = ("step", "fk", "grad", "ball_step", "ball_fk", "ball_grad")
DEFAULT = ("step", "fk", "grad", "ball_grad")
IMPLS = ("jaxart", "jaxart-fast", "mjx", "mjx-fast")
DEFAULT_IMPLS = ("jaxart", "jaxart-fast", "mjx")

BALL_XML = """<mujoco model="ball">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 0.3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
</mujoco>"""


def _xml(program: str) -> str:
    from common import mjx_humanoid_path

    return BALL_XML if program.startswith("ball") else open(mjx_humanoid_path()).read()


def _jaxart_program(program: str, xml: str, batch: int, steps: int):
    """``(function, example arguments)`` of a jaxart program."""
    import jax
    import jax.numpy as jnp

    import jaxart

    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_mjcf(xml)
    model = b.finalize()
    solver = jaxart.solvers.SolverFeatherstone(model)
    dt = 2e-3
    if program == "step":
        states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), model.state())
        return jax.vmap(lambda s: solver.step(s, None, model.collide(s), dt)), (states,)
    if program == "fk":
        q = jnp.broadcast_to(model.joint_q, (batch, *model.joint_q.shape))
        qd = jnp.zeros((batch, model.joint_dof_count), q.dtype)
        return jax.vmap(lambda a, v: jaxart.eval_fk(model, a, v)), (q, qd)

    def loss(joint_f):
        ctrl = model.control()
        ctrl = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (steps,) + x.shape), ctrl).replace(joint_f=joint_f)
        final, _ = jaxart.rollout(solver, model.state(), ctrl, dt=dt, output_fn=lambda s: None)
        return jnp.sum(final.joint_q ** 2) + jnp.sum(final.joint_qd ** 2)

    return jax.grad(loss), (jnp.zeros((steps, model.joint_dof_count), model.joint_q.dtype),)


def _mjx_program(program: str, xml: str, batch: int, steps: int):
    """``(function, example arguments)`` of the same program in MJX."""
    import jax
    import jax.numpy as jnp
    import mujoco

    from jaxart.solvers.mujoco import mjx

    mj = mujoco.MjModel.from_xml_string(xml)
    mj.opt.solver = mujoco.mjtSolver.mjSOL_CG
    mx = mjx.put_model(mj)
    if program == "step":
        dx = jax.vmap(lambda _: mjx.make_data(mx))(jnp.arange(batch))
        return jax.vmap(lambda d: mjx.step(mx, d)), (dx,)
    dx0 = mjx.make_data(mx)
    if program == "fk":
        q = jnp.broadcast_to(jnp.asarray(mj.qpos0, jnp.float32), (batch, mj.nq))
        return jax.vmap(lambda a: (lambda d: (d.xpos, d.xquat))(mjx.kinematics(mx, dx0.replace(qpos=a)))), (q,)

    def loss(qfrc):
        def body(d, f):
            return mjx.step(mx, d.replace(qfrc_applied=f)), None

        final, _ = jax.lax.scan(body, dx0, qfrc)
        return jnp.sum(final.qpos ** 2) + jnp.sum(final.qvel ** 2)

    return jax.grad(loss), (jnp.zeros((steps, mj.nv), jnp.float32),)


def hlo_ops(text: str) -> int:
    """Number of operations in a StableHLO module's text (lines that assign a result)."""
    return sum(1 for line in text.splitlines() if " = " in line and not line.lstrip().startswith("//"))


def measure(program: str, impl: str, batch: int, steps: int) -> dict:
    """Build one program and time its trace, lowering and XLA compilation (then run it once)."""
    import jax
    import numpy as np

    import jaxart

    build = _jaxart_program if impl.startswith("jaxart") else _mjx_program
    fn, args = build(program.removeprefix("ball_"), _xml(program), batch, steps)
    fn = jax.jit(fn, compiler_options=jaxart.fast_compile_options() if impl.endswith("-fast") else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0, t0 = time.process_time(), time.perf_counter()
        traced = fn.trace(*args)
        t1 = time.perf_counter()
        lowered = traced.lower()
        t2 = time.perf_counter()
        compiled = lowered.compile()
        t3, c3 = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(compiled(*args))
    finite = all(bool(np.all(np.isfinite(np.asarray(x)))) for x in jax.tree_util.tree_leaves(out)
                 if np.issubdtype(np.asarray(x).dtype, np.floating))
    return {"program": program, "impl": impl, "trace": t1 - t0, "lower": t2 - t1, "xla": t3 - t2,
            "total": t3 - t0, "cpu": c3 - c0, "ops": hlo_ops(lowered.as_text()), "finite": finite}


def measure_cold(program: str, impl: str, batch: int, steps: int) -> dict:
    """:func:`measure` in a fresh Python process, with every compilation cache off."""
    env = dict(os.environ, JAXART_COMPILATION_CACHE="0")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this checkout's jaxart first
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    cmd = [sys.executable, os.path.abspath(__file__), "--one", program, impl, "--batch", str(batch),
           "--steps", str(steps)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    for line in reversed(res.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"{program}/{impl} failed:\n{res.stderr[-3000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--programs", nargs="+", choices=PROGRAMS)
    ap.add_argument("--impls", nargs="+", choices=IMPLS)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="jaxart only, batch 4, 3 steps, ball programs by default")
    ap.add_argument("--in-process", action="store_true", help="measure in this process (not cold)")
    ap.add_argument("--one", nargs=2, metavar=("PROGRAM", "IMPL"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(measure(a.one[0], a.one[1], a.batch, a.steps)), flush=True)
        return
    from common import print_table

    if a.quick:
        a.batch, a.steps = 4, 3
    programs = a.programs or (["ball_step", "ball_fk", "ball_grad"] if a.quick else list(DEFAULT))
    runs = [(p, i) for p in programs for i in (a.impls or (["jaxart"] if a.quick else list(DEFAULT_IMPLS)))]
    rows = []
    for program, impl in runs:
        try:
            r = (measure if a.in_process else measure_cold)(program, impl, a.batch, a.steps)
        except Exception as e:  # noqa: BLE001 - report and go on with the other programs
            print(f"  failed: {program} {impl}: {e}", flush=True)
            continue
        rows.append([program, impl, r["trace"], r["lower"], r["xla"], r["total"], r["cpu"], r["ops"], r["finite"]])
        print("  done:", json.dumps(r), flush=True)
    where = "one process, in order" if a.in_process else "cold process each"
    print_table(f"Compile time [s], {where}, batch {a.batch}, rollout {a.steps} steps",
                ["program", "impl", "trace", "lower", "XLA", "total", "CPU", "HLO ops", "finite"], rows)


if __name__ == "__main__":
    main()
