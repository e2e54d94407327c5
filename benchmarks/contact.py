"""Step throughput with ground contact: jaxart's solvers vs MJX and MuJoCo C.

Usage: ``python benchmarks/contact.py [--batches 1 1024] [--models quadruped humanoid] [--no-mjx]
[--quick]``. For each model (the bundled quadruped; the humanoid of MuJoCo's MJX test data) and
batch size, prints the per-world time [µs] of one step *including collision detection*
(``model.collide`` + ``solver.step`` for jaxart, ``mjx.step`` / ``mj_step`` for MuJoCo), the ratio
MJX/jaxart (> 1 means jaxart is faster) and trace+compile times [s]. Worlds start from the model's
initial pose dropped onto the floor (the timed steps see real contacts). MJX uses the CG solver
(its batched Newton/Cholesky path was seen to hang on this 2-core CPU); MuJoCo C runs
single-threaded in a Python loop (per-call overhead included). The "contact rows"/"active" columns
show jaxart's contact capacity and active contacts of world 0 after settling (the MJX humanoid's
foot–floor contacts are explicit ``<contact><pair>`` elements, imported as explicit contact pairs).
Featherstone runs the penalty contact law with the gains MuJoCo's solref implies, which needs a
smaller step on these light feet than MJX's soft constraints (its ``dt`` column says which).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import mujoco
from common import compile_time, mjx_humanoid_path, print_table, time_call

import jaxart

#: solver factory and time step (None = the MJCF's); SemiImplicit's explicit attachment springs need
#: ~50 µs on these light links (see examples/drop_quadruped.py)
SOLVERS = {
    "featherstone": (lambda m: jaxart.solvers.SolverFeatherstone(m), 2e-4),
    "xpbd": (lambda m: jaxart.solvers.SolverXPBD(m, iterations=2), None),
    "semi_implicit": (lambda m: jaxart.solvers.SolverSemiImplicit(m), 5e-5),
}


def _path(name: str) -> str:
    return mjx_humanoid_path() if name == "humanoid" else jaxart.assets.asset_path(name)


def _load(name: str):
    mj = mujoco.MjModel.from_xml_path(_path(name))
    b = jaxart.ModelBuilder()
    b.add_mjcf(_path(name))
    return mj, b.finalize()


def _ours(model, solver, dt: float, batch: int):
    """Jitted batched ``collide + step`` and a batch of states."""
    step = jax.jit(jax.vmap(lambda s: solver.step(s, None, model.collide(s), dt)))
    state = model.state()
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), state)
    return step, states


def _settle(step, states, n: int = 20):
    for _ in range(n):
        states = step(states)
    return states


def _mjx(mj, batch: int):
    from mujoco import mjx

    mj = mujoco.MjModel.from_xml_path(mj) if isinstance(mj, str) else mj
    mj.opt.solver = mujoco.mjtSolver.mjSOL_CG
    mx = mjx.put_model(mj)
    dx = jax.vmap(lambda _: mjx.make_data(mx))(jnp.arange(batch))
    return jax.jit(jax.vmap(lambda x: mjx.step(mx, x))), dx


def _c_time(mj, n: int = 2000) -> float:
    d = mujoco.MjData(mj)
    for _ in range(50):
        mujoco.mj_step(mj, d)
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(mj, d)
    return (time.perf_counter() - t0) / n


def _capacity(model) -> int:
    from jaxart.collision import default_capacity

    return default_capacity(model)


def bench(name: str, batches, use_mjx: bool) -> list[list]:
    """Rows ``[model, solver, batch, contact rows, active, µs/world, mjx µs, C µs, mjx/ours, compiles]``."""
    mj, model = _load(name)
    dt = float(mj.opt.timestep)
    t_c = _c_time(mj)
    rows = []
    for batch in batches:
        t_mjx = c_mjx = float("nan")
        if use_mjx:
            mstep, dx = _mjx(mj, batch)
            c_mjx = compile_time(mstep, dx)
            t_mjx = time_call(mstep, dx, repeat=3) / batch
        for sname, (make, own_dt) in SOLVERS.items():
            step, states = _ours(model, make(model), own_dt or dt, batch)
            c_ours = compile_time(step, states)
            states = _settle(step, states)
            t_ours = time_call(step, states, repeat=3) / batch
            first = jax.tree_util.tree_map(lambda x: x[0], states)
            active = int(model.collide(first).count)
            finite = bool(jnp.all(jnp.isfinite(states.body_q)))
            rows.append([name, sname, batch, own_dt or dt, finite, _capacity(model), active, t_ours * 1e6,
                         t_mjx * 1e6, t_c * 1e6, t_mjx / t_ours, c_ours, c_mjx])
            print("  done:", rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 1024])
    ap.add_argument("--models", nargs="+", default=["quadruped", "humanoid"])
    ap.add_argument("--no-mjx", action="store_true", help="skip MJX")
    ap.add_argument("--quick", action="store_true", help="quadruped only, batches 1 and 64, no MJX")
    args = ap.parse_args()
    if args.quick:
        args.models, args.batches, args.no_mjx = ["quadruped"], [1, 64], True
    rows = []
    for name in args.models:
        rows += bench(name, args.batches, not args.no_mjx)
    header = ["model", "solver", "batch", "dt", "finite", "contact rows", "active", "jaxart µs/world", "mjx µs/world",
              "mujoco C µs", "mjx/jaxart", "compile jaxart s", "compile mjx s"]
    print_table("collide + step with ground contact (per world)", header, rows)



if __name__ == "__main__":
    main()
