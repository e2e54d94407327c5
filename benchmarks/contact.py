"""Simulated seconds per wall second with ground contact, at the largest step each system takes.

Usage: ``python benchmarks/contact.py [--batch 1024] [--models quadruped humanoid mjx_humanoid]
[--solvers featherstone featherstone_explicit xpbd semi_implicit] [--no-mjx] [--mjx-models ...] [--quick]``.

Per model (the bundled quadruped and humanoid, and the humanoid of MuJoCo's MJX test data):

1. **Largest stable step** of every jaxart solver: the largest ``dt`` from a ladder (16 ms down to
   25 µs, never above the MJCF's own step times 8) for which one world dropped uncontrolled from the
   initial pose stays physical for 2 s: all values finite, kinetic + gravitational energy never above
   its initial value (+0.1 %: no rise above the drop height, no energy gain), contact penetration below
   2 cm. MuJoCo C runs the same drop at the model's own step: its largest penetration and energy gain
   (``mjENBL_ENERGY``) are printed (its soft contacts penetrate the MJX humanoid's feet by ~3 cm).
2. **Throughput** at that step (and at the model's own step too where the stable step is larger; the
   ``step`` column says which): ``model.collide`` + ``solver.step`` on ``--batch`` worlds (``vmap``),
   per-world wall time of one step, and simulated seconds per wall second per world (``dt / time``),
   next to ``mjx.step`` (CG solver; its batched Newton/Cholesky path was seen to hang on a 2-core CPU) on
   the same batch and single-threaded MuJoCo C (``mj_step`` in a Python loop), both at the model's own
   step. Ratios > 1 mean jaxart simulates more seconds per wall second. Compile times are trace + XLA.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from common import compile_timed, mjx_humanoid_path, print_table, time_call

import jaxart

SOLVERS = {
    "featherstone": lambda m: jaxart.solvers.SolverFeatherstone(m),
    "featherstone_explicit": lambda m: jaxart.solvers.SolverFeatherstone(m, contact="explicit"),
    "xpbd": lambda m: jaxart.solvers.SolverXPBD(m),
    "semi_implicit": lambda m: jaxart.solvers.SolverSemiImplicit(m),
}
LADDER = (16e-3, 10e-3, 5e-3, 4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1e-4, 5e-5, 2.5e-5)
CHUNK = 100  # steps per jitted call of the physical check (dt is traced: one compile per solver)


def _path(name: str) -> str:
    return mjx_humanoid_path() if name == "mjx_humanoid" else jaxart.assets.asset_path(name)


def _load(name: str):
    mj = mujoco.MjModel.from_xml_path(_path(name))
    b = jaxart.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b.add_mjcf(_path(name))
    return mj, b.finalize()


def _energy(model, s):
    com = jaxart.math.transform_point(s.body_q, model.body_com)
    rot = jaxart.math.quat_to_matrix(s.body_q[:, 3:])
    inertia = rot @ model.body_inertia @ jnp.swapaxes(rot, -1, -2)
    v, w = s.body_qd[:, :3], s.body_qd[:, 3:]
    kin = 0.5 * jnp.sum(model.body_mass * jnp.sum(v * v, -1)) + 0.5 * jnp.einsum("bi,bij,bj->", w, inertia, w)
    return kin - jnp.sum(model.body_mass * (com @ model.gravity))


def _chunk_fn(model, solver):
    """Jitted ``CHUNK`` steps with a traced ``dt``: returns the state, max energy, max penetration, finite."""
    @jax.jit
    def run(state, dt):
        def step(s, _):
            c = model.collide(s)
            s = solver.step(s, None, c, dt)
            pen = -jnp.min(jnp.where(c.active, c.separation, 0.0))
            return s, (_energy(model, s), pen, jnp.all(jnp.isfinite(s.body_q)))

        s, (e, p, f) = jax.lax.scan(step, state, None, length=CHUNK)
        return s, jnp.max(e), jnp.max(p), jnp.all(f)
    return run


def physical(run, model, dt: float, seconds: float = 2.0) -> bool:
    """The drop check of the module docstring at step ``dt``."""
    s = model.state()
    e0 = float(_energy(model, s))
    for _ in range(max(1, math.ceil(seconds / dt / CHUNK))):
        s, e, pen, finite = run(s, jnp.asarray(dt, s.body_q.dtype))
        if not bool(finite) or float(e) > e0 + 1e-3 * abs(e0) or float(pen) > 0.02:
            return False
    return True


def largest_stable_step(model, solver, model_dt: float) -> float:
    run = _chunk_fn(model, solver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the explicit solvers' stable-step warnings: this search measures it
        for dt in (d for d in LADDER if d <= 8 * model_dt + 1e-12):
            if physical(run, model, dt):
                return dt
    return float("nan")


def _throughput(model, solver, dt: float, batch: int):
    step = jax.jit(jax.vmap(lambda s: solver.step(s, None, model.collide(s), dt)))
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), model.state())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seconds, compiled = compile_timed(step, states)
    for _ in range(20):  # settle into contact
        states = compiled(states)
    return time_call(compiled, states, repeat=3) / batch, seconds


def _mjx_time(mj, batch: int):
    from jaxart.solvers.mujoco import mjx

    mj.opt.solver = mujoco.mjtSolver.mjSOL_CG
    mx = mjx.put_model(mj)
    dx = jax.vmap(lambda _: mjx.make_data(mx))(jnp.arange(batch))
    step = jax.jit(jax.vmap(lambda x: mjx.step(mx, x)))
    seconds, compiled = compile_timed(step, dx)
    for _ in range(20):
        dx = compiled(dx)
    return time_call(compiled, dx, repeat=3) / batch, seconds


def _c_check_and_time(mj, n: int = 2000):
    """MuJoCo C at its own step: (max penetration [m], max energy gain [J] over 2 s, seconds per step)."""
    mj.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    e0, gain, pen = float(np.sum(d.energy)), -math.inf, 0.0
    for _ in range(int(round(2.0 / mj.opt.timestep))):
        mujoco.mj_step(mj, d)
        pen = max([pen] + [-c.dist for c in d.contact[:d.ncon]])
        gain = max(gain, float(np.sum(d.energy)) - e0 if np.all(np.isfinite(d.qpos)) else math.inf)
    d = mujoco.MjData(mj)
    for _ in range(50):
        mujoco.mj_step(mj, d)
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(mj, d)
    return pen, gain, (time.perf_counter() - t0) / n


def bench(name: str, solvers, batch: int, use_mjx: bool) -> list[list]:
    mj, model = _load(name)
    model_dt = float(mj.opt.timestep)
    c_pen, c_gain, t_c = _c_check_and_time(mj)
    t_mjx, c_mjx = _mjx_time(mujoco.MjModel.from_xml_path(_path(name)), batch) if use_mjx else (math.nan, math.nan)
    rows = []
    for sname in solvers:
        solver = SOLVERS[sname](model)
        stable = largest_stable_step(model, solver, model_dt)
        steps = [("stable", stable)] + ([("model", model_dt)] if stable > model_dt else [])
        for which, dt in steps:
            t, c = _throughput(model, solver, dt, batch) if math.isfinite(dt) else (math.nan, math.nan)
            rate = dt / t
            rows.append([name, sname, which, dt * 1e3, t * 1e6, rate, model_dt * 1e3, t_mjx * 1e6, model_dt / t_mjx,
                         c_pen * 100, c_gain, t_c * 1e6, model_dt / t_c, rate / (model_dt / t_mjx),
                         rate / (model_dt / t_c), c, c_mjx])
            print("  done:", rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--models", nargs="+", default=["quadruped", "humanoid", "mjx_humanoid"])
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    ap.add_argument("--no-mjx", action="store_true", help="skip MJX")
    ap.add_argument("--mjx-models", nargs="+", default=["humanoid", "mjx_humanoid"],
                    help="models timed with MJX (the quadruped's batched mjx.step hangs in XLA:CPU on this 2-core "
                         "machine unless PJRT_NPROC=8 is set, which slows every timing ~30 %%)")
    ap.add_argument("--quick", action="store_true", help="quadruped, Featherstone only, batch 64, no MJX")
    args = ap.parse_args()
    if args.quick:
        args.models, args.solvers, args.batch, args.no_mjx = ["quadruped"], ["featherstone"], 64, True
    rows = []
    for name in args.models:
        rows += bench(name, args.solvers, args.batch, not args.no_mjx and name in args.mjx_models)
    header = ["model", "solver", "step", "dt ms", "µs/step/world", "sim s/wall s", "model dt ms", "mjx µs",
              "mjx sim s/s", "C pen cm", "C ΔE J", "C µs", "C sim s/s", "vs mjx", "vs C", "compile s", "mjx compile s"]
    print_table(f"collide + step with ground contact, batch {args.batch}: simulated seconds per wall second "
                "(per world) at each system's stable step", header, rows)


if __name__ == "__main__":
    main()
