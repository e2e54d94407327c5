"""Forward-kinematics throughput: jaxart ``eval_fk`` vs ``mjx.kinematics`` vs MuJoCo C ``mj_kinematics``.

Usage: ``python benchmarks/fk.py [--batches 1 1024 4096] [--quick] [--forms-only]``. Prints per-world time
[µs] and compile time [s] for the MJX test-data humanoid and 32/128-link hinge chains, with ratios
(>1 means jaxart is faster). MuJoCo C runs single-threaded in a Python loop (its per-call Python
overhead, ~0.3 µs, is included).

A second table compares the output forms of ``jit(vmap(eval_fk))`` on the humanoid at the largest batch:
the whole State, ``body_q`` only, a scalar loss of ``body_q``, its gradient w.r.t. ``joint_q`` and the
gradient of a loss of the whole State. The forms run alternately in one process (several rounds, the
minimum is reported) so that their ratios are comparable even on a shared machine.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from common import chain_mjcf, compile_timed, mjx_humanoid_path, print_table, time_call

import jaxart


def _models(quick: bool):
    yield "humanoid", open(mjx_humanoid_path()).read()
    yield "chain-32", chain_mjcf(32)
    if not quick:
        yield "chain-128", chain_mjcf(128)


def _random_qpos(mj: mujoco.MjModel, batch: int, rng) -> np.ndarray:
    q = np.tile(mj.qpos0, (batch, 1)) + 0.3 * rng.normal(size=(batch, mj.nq))
    for j in range(mj.njnt):
        adr = mj.jnt_qposadr[j]
        if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            adr += 3
        if mj.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            quat = q[:, adr:adr + 4]
            q[:, adr:adr + 4] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return q


def _to_joint_q(mj: mujoco.MjModel, qpos: np.ndarray) -> np.ndarray:
    """MuJoCo qpos (wxyz quaternions) → jaxart joint_q (xyzw), for importer-mapped models."""
    q = qpos.copy()
    for j in range(mj.njnt):
        adr = mj.jnt_qposadr[j] + (3 if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
        if mj.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            q[..., adr:adr + 4] = qpos[..., [adr + 1, adr + 2, adr + 3, adr]]
    return q


def _mjx_poses(d):
    # mjx.kinematics computes poses only; jaxart's eval_fk also computes body twists
    return d.xpos, d.xquat


def bench_model(name: str, xml: str, batches: list[int], *, mjx_ok: bool = True) -> list[list]:
    from jaxart.solvers.mujoco import mjx

    rows = []
    mj = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(mj)
    builder = jaxart.ModelBuilder()
    builder.add_mjcf(xml)
    model = builder.finalize()
    mx = mjx.put_model(mj)
    dx0 = mjx.make_data(mx)
    rng = np.random.default_rng(0)
    qpos1 = _random_qpos(mj, 1, rng)[0]
    d.qpos[:] = qpos1
    t0 = time.perf_counter()
    n = 2000
    for _ in range(n):
        mujoco.mj_kinematics(mj, d)
    t_c = (time.perf_counter() - t0) / n
    for batch in batches:
        qpos = _random_qpos(mj, batch, rng)
        jq = jnp.asarray(_to_joint_q(mj, qpos), jnp.float32)
        jqd = jnp.zeros((batch, model.joint_dof_count), jnp.float32)
        fk = jax.jit(jax.vmap(lambda q, qd: jaxart.eval_fk(model, q, qd)))
        c_ours, fk_c = compile_timed(fk, jq, jqd)
        t_ours = time_call(fk_c, jq, jqd) / batch
        qj = jnp.asarray(qpos, jnp.float32)
        kin = jax.jit(jax.vmap(lambda q: _mjx_poses(mjx.kinematics(mx, dx0.replace(qpos=q)))))  # noqa: B023
        if mjx_ok:
            c_mjx, kin_c = compile_timed(kin, qj)
            t_mjx = time_call(kin_c, qj) / batch
        else:
            c_mjx = t_mjx = float("nan")
        rows.append([name, batch, t_ours * 1e6, t_mjx * 1e6, t_c * 1e6, t_mjx / t_ours, t_c / t_ours,
                     c_ours, c_mjx])
        print("  done:", rows[-1][:2], flush=True)
    return rows


def _fk_forms(model):
    """``name → jitted function of (joint_q, joint_qd)`` for the output forms of batched FK."""
    def fk(q, qd):
        return jax.vmap(lambda a, b: jaxart.eval_fk(model, a, b))(q, qd)

    def loss(q, qd):
        return jnp.sum(fk(q, qd).body_q[..., :3] ** 2)

    def loss_state(q, qd):
        s = fk(q, qd)
        return jnp.sum(s.body_q ** 2) + jnp.sum(s.body_qd ** 2)

    return {"State": jax.jit(fk), "body_q": jax.jit(lambda q, qd: fk(q, qd).body_q), "loss(body_q)": jax.jit(loss),
            "grad loss(body_q)": jax.jit(jax.grad(loss)), "grad loss(State)": jax.jit(jax.grad(loss_state))}


def bench_forms(batch: int, *, rounds: int = 5) -> list[list]:
    """Per-world time of each :func:`_fk_forms` form on the humanoid, alternating the forms ``rounds`` times."""
    xml = open(mjx_humanoid_path()).read()
    mj = mujoco.MjModel.from_xml_string(xml)
    builder = jaxart.ModelBuilder()
    builder.add_mjcf(xml)
    model = builder.finalize()
    rng = np.random.default_rng(1)
    jq = jnp.asarray(_to_joint_q(mj, _random_qpos(mj, batch, rng)), jnp.float32)
    jqd = jnp.asarray(rng.normal(size=(batch, model.joint_dof_count)), jnp.float32)
    forms = _fk_forms(model)
    compiled = {}
    for name, fn in forms.items():
        compiled[name] = compile_timed(fn, jq, jqd)
    best = dict.fromkeys(forms, float("inf"))
    for _ in range(rounds):
        for name, (_, fn) in compiled.items():
            best[name] = min(best[name], time_call(fn, jq, jqd) / batch)
    ref = best["State"]
    return [[name, batch, best[name] * 1e6, best[name] / ref, compiled[name][0]] for name in forms]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 1024, 4096])
    ap.add_argument("--quick", action="store_true", help="skip the 128-link chain")
    ap.add_argument("--mjx-max-links", type=int, default=0,
                    help="run MJX on chains up to this many links (default: none; on the 2-core CPU its 32-link "
                         "chain kinematics ran for over 10 minutes without finishing a timed call); skipped = nan")
    ap.add_argument("--forms-only", action="store_true", help="only the output-form table")
    args = ap.parse_args()
    forms = bench_forms(max(args.batches))
    print_table(f"eval_fk output forms, humanoid ({jax.devices()[0].platform}, float32, alternating rounds)",
                ["form", "batch", "µs per world", "÷ State", "compile s"], forms)
    if args.forms_only:
        return
    rows = []
    for name, xml in _models(args.quick):
        links = int(name.split("-")[1]) if name.startswith("chain-") else 0
        rows += bench_model(name, xml, args.batches, mjx_ok=links <= args.mjx_max_links)
    print_table(
        f"eval_fk per world ({jax.devices()[0].platform}, float32)",
        ["model", "batch", "jaxart µs", "mjx µs", "mujoco C µs", "mjx/jaxart", "C/jaxart", "compile jaxart s",
         "compile mjx s"],
        rows,
    )


if __name__ == "__main__":
    main()
