"""Dynamics throughput: mass matrix + bias forces and the Featherstone step vs MuJoCo C and MJX.

Usage: ``python benchmarks/dynamics.py [--batches 1 1024 4096] [--models humanoid arm7] [--no-mjx]
[--quick]``. Prints per-world times [µs], ratios (>1 means jaxart is faster) and trace+compile
times [s]; then the cost of a rollout gradient as a multiple of the forward rollout (one world, and
a ``vmap`` batch of 64 worlds) and the temporary memory XLA plans for a 1000-step gradient with and
without checkpointing. Contacts are disabled everywhere (MuJoCo/MJX ``DisableBit.CONTACT``; jaxart
gets ``contacts=None``). MuJoCo C runs single-threaded in a Python loop (its ~0.3 µs per-call Python
overhead included).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from common import compile_time, mjx_humanoid_path, print_table, time_call
from fk import _random_qpos, _to_joint_q

import jaxart
from jaxart.dynamics import eval_inverse_dynamics_passive
from jaxart.rollout import rollout
from jaxart.solvers import SolverFeatherstone


def _load(name: str):
    path = mjx_humanoid_path() if name == "humanoid" else jaxart.assets.asset_path(name)
    mj = mujoco.MjModel.from_xml_path(path)
    mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    b = jaxart.ModelBuilder()
    b.add_mjcf(path)
    return mj, b.finalize()


def _c_time(fn, n=2000) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def _ours_terms(model):
    st = model.state()
    return jax.jit(jax.vmap(lambda q, qd: eval_inverse_dynamics_passive(model, st.replace(joint_q=q, joint_qd=qd))))


def _mjx_terms(mj):
    from jaxart.solvers.mujoco import mjx

    mx = mjx.put_model(mj)
    dx0 = mjx.make_data(mx)

    def terms(q, qd):
        dx = mjx.kinematics(mx, dx0.replace(qpos=q, qvel=qd))
        dx = mjx.crb(mx, mjx.com_pos(mx, dx))
        dx = mjx.rne(mx, mjx.com_vel(mx, dx))
        return dx._impl.M, dx.qfrc_bias

    return jax.jit(jax.vmap(terms))


def _mjx_step(mj, qpos):
    from jaxart.solvers.mujoco import mjx

    mx = mjx.put_model(mj)
    dx = jax.vmap(lambda q: mjx.make_data(mx).replace(qpos=q))(jnp.asarray(qpos, jnp.float32))
    return jax.jit(jax.vmap(lambda x: mjx.step(mx, x))), dx


def bench_terms(name, mj, model, batches, use_mjx) -> list[list]:
    """Mass matrix + gravity/Coriolis per world."""
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(0)
    d.qpos[:] = _random_qpos(mj, 1, rng)[0]
    d.qvel[:] = rng.normal(size=mj.nv)
    bias = np.zeros(mj.nv)

    def c_terms():
        mujoco.mj_kinematics(mj, d)
        mujoco.mj_comPos(mj, d)
        mujoco.mj_crb(mj, d)
        mujoco.mj_comVel(mj, d)
        mujoco.mj_rne(mj, d, 0, bias)

    t_c = _c_time(c_terms)
    rows = []
    for batch in batches:
        qpos = _random_qpos(mj, batch, rng)
        jq = jnp.asarray(_to_joint_q(mj, qpos), jnp.float32)
        jqd = jnp.asarray(rng.normal(size=(batch, model.joint_dof_count)), jnp.float32)
        f = _ours_terms(model)
        c_ours = compile_time(f, jq, jqd)
        t_ours = time_call(f, jq, jqd) / batch
        t_mjx = c_mjx = float("nan")
        if use_mjx:
            g = _mjx_terms(mj)
            qj, vj = jnp.asarray(qpos, jnp.float32), jnp.asarray(rng.normal(size=(batch, mj.nv)), jnp.float32)
            c_mjx = compile_time(g, qj, vj)
            t_mjx = time_call(g, qj, vj) / batch
        rows.append([name, batch, t_ours * 1e6, t_mjx * 1e6, t_c * 1e6, t_mjx / t_ours, t_c / t_ours, c_ours, c_mjx])
    return rows


def _ours_step(solver, dt):
    return jax.jit(jax.vmap(lambda s: solver.step(s, None, None, dt)))


def bench_step(name, mj, model, batches, use_mjx) -> list[list]:
    """One contact-free step per world."""
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(1)
    d.qpos[:] = _random_qpos(mj, 1, rng)[0]
    t_c = _c_time(lambda: mujoco.mj_step(mj, d))
    dt = float(mj.opt.timestep)
    solver = SolverFeatherstone(model)
    rows = []
    for batch in batches:
        qpos = _random_qpos(mj, batch, rng)
        jq = jnp.asarray(_to_joint_q(mj, qpos), jnp.float32)
        st = jax.vmap(lambda q: jaxart.eval_fk(model, q, model.joint_qd))(jq)  # noqa: B023
        step = _ours_step(solver, dt)
        c_ours = compile_time(step, st)
        t_ours = time_call(step, st) / batch
        t_mjx = c_mjx = float("nan")
        if use_mjx:
            mstep, dx = _mjx_step(mj, qpos)
            c_mjx = compile_time(mstep, dx)
            t_mjx = time_call(mstep, dx) / batch
        rows.append([name, batch, t_ours * 1e6, t_mjx * 1e6, t_c * 1e6, t_mjx / t_ours, t_c / t_ours, c_ours, c_mjx])
    return rows


def bench_gradient(name, model, steps=100, long_steps=1000, batch=64) -> list[list]:
    """Rollout gradient cost vs forward (one world and a ``vmap`` batch), and planned temp memory of a
    1000-step gradient."""
    solver = SolverFeatherstone(model)
    dt = 1e-3
    nd = model.joint_dof_count

    def loss(joint_f, n, remat="light"):
        ctrl = model.control()
        ctrl = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n,) + x.shape), ctrl).replace(joint_f=joint_f)
        final, _ = rollout(solver, model.state(), ctrl, dt=dt, remat=remat, output_fn=lambda s: None)
        return jnp.sum(final.joint_q ** 2)

    jf = jnp.zeros((steps, nd), jnp.float32)
    fwd = jax.jit(lambda x: loss(x, steps))
    grad = jax.jit(jax.grad(lambda x: loss(x, steps)))
    t_f, t_g = time_call(fwd, jf, repeat=3), time_call(grad, jf, repeat=3)
    rows = [[name, f"grad/forward ({steps} steps, remat='light')", t_g / t_f, t_f * 1e3, t_g * 1e3]]
    jf_b = jnp.zeros((batch, steps, nd), jnp.float32)
    fwd_b = jax.jit(jax.vmap(lambda x: loss(x, steps)))
    grad_b = jax.jit(jax.vmap(jax.grad(lambda x: loss(x, steps))))
    t_f, t_g = time_call(fwd_b, jf_b, repeat=3), time_call(grad_b, jf_b, repeat=3)
    rows.append([name, f"grad/forward ({steps} steps, batch {batch}, remat='light')", t_g / t_f, t_f * 1e3,
                 t_g * 1e3])
    grad_b = jax.jit(jax.vmap(jax.grad(lambda x: loss(x, steps, "step"))))  # the README's batched-gradient tip
    t_g = time_call(grad_b, jf_b, repeat=3)
    rows.append([name, f"grad/forward ({steps} steps, batch {batch}, remat='step')", t_g / t_f, t_f * 1e3, t_g * 1e3])
    no_ynn = {"xla_cpu_experimental_ynn_fusion_type": ""}  # the README's CPU performance tip
    grad_b = jax.jit(jax.vmap(jax.grad(lambda x: loss(x, steps))), compiler_options=no_ynn)
    t_g = time_call(grad_b, jf_b, repeat=3)
    rows.append([name, f"grad/forward ({steps} steps, batch {batch}, no YNN fusion)", t_g / t_f, t_f * 1e3,
                 t_g * 1e3])
    jf_long = jnp.zeros((long_steps, nd), jnp.float32)
    for remat in ("light", "step", "nested"):  # None: the same program as "light" (the solver checkpoints its step)
        comp = jax.jit(jax.grad(lambda x, r=remat: loss(x, long_steps, r))).lower(jf_long).compile()
        mem = comp.memory_analysis()
        temp = getattr(mem, "temp_size_in_bytes", float("nan")) if mem is not None else float("nan")
        rows.append([name, f"temp MB, {long_steps}-step grad, remat={remat}", temp / 2**20, float("nan"),
                     float("nan")])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 1024, 4096])
    ap.add_argument("--models", nargs="+", default=["humanoid", "arm7"])
    ap.add_argument("--no-mjx", action="store_true", help="skip MJX (its humanoid step compiles for ~30 s)")
    ap.add_argument("--quick", action="store_true", help="skip the gradient/memory section")
    args = ap.parse_args()
    terms, steps, grads = [], [], []
    for name in args.models:
        mj, model = _load(name)
        terms += bench_terms(name, mj, model, args.batches, not args.no_mjx)
        steps += bench_step(name, mj, model, args.batches, not args.no_mjx)
        if not args.quick:
            grads += bench_gradient(name, model)
    header = ["model", "batch", "jaxart µs", "mjx µs", "mujoco C µs", "mjx/jaxart", "C/jaxart", "compile jaxart s",
              "compile mjx s"]
    platform = jax.devices()[0].platform
    print_table(f"mass matrix + gravity/Coriolis per world ({platform}, float32)", header, terms)
    print_table(f"contact-free step per world ({platform}, float32)", header, steps)
    if grads:
        print_table("rollout gradients", ["model", "quantity", "value", "forward ms", "grad ms"], grads)


if __name__ == "__main__":
    main()
