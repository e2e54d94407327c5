"""Policy learning on the quadruped: SHAC (analytic gradients through jaxart) vs PPO (rejax), one run each.

Both learn ``jaxart.envs.QuadrupedWalk`` (the same task, observation, reward, termination and episode length)
on today's JAX. SHAC is :class:`jaxart.learn.SHAC`; PPO is rejax's (``pip install "jaxart[rl]"``) through
:class:`jaxart.learn.gymnax_env.GymnaxEnv`. Both are evaluated by the same deterministic evaluator
(:func:`jaxart.learn.episode_return`: the policy's mean action, ``--eval-envs`` episodes) every few updates;
everything runs in float32 (rejax's running statistics do not keep float32 under ``jax_enable_x64``). The table
reports, for a target return (default: the lower of the two best evaluations, so both reach it), the environment
steps, wall time and process CPU time (compilation included) at which each first reached it.

    python benchmarks/learning.py                       # ~5 CPU minutes on a 2-core CPU
    python benchmarks/learning.py --quick               # a smoke run (pendulum, tiny budgets)
    python benchmarks/learning.py --only shac --save shac.json &   # or the two in parallel on two cores
    python benchmarks/learning.py --only ppo --save ppo.json; wait
    python benchmarks/learning.py --tables shac.json ppo.json
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_use_fusion_emitters=false")  # faster compiles, same run time

import jax
import jax.numpy as jnp

from jaxart import envs
from jaxart.learn import SHAC, SHACConfig, episode_return, train_with_evaluations


def run_shac(env, args) -> list[dict]:
    """SHAC's evaluation records (``env_steps``, ``wall_s``, ``eval_return``)."""
    cfg = SHACConfig(num_envs=args.num_envs, horizon=args.horizon, episode_length=args.episode_length,
                     gamma=args.gamma, critic_iterations=8)
    _, records = train_with_evaluations(SHAC(env, cfg), jax.random.PRNGKey(args.seed), iterations=args.shac_iters,
                                        eval_every=args.shac_eval_every, num_eval_envs=args.eval_envs,
                                        progress=lambda r: print("  shac", r, flush=True))
    return records


def run_ppo(env, args) -> list[dict]:
    """rejax PPO's evaluation records, evaluated like SHAC's (deterministic mean action)."""
    from rejax import PPO

    from jaxart.learn.gymnax_env import GymnaxEnv

    t0, c0 = time.perf_counter(), time.process_time()
    genv = GymnaxEnv(env, episode_length=args.episode_length)
    algo = PPO.create(env=genv, env_params=genv.default_params, num_envs=args.num_envs, num_steps=args.ppo_unroll,
                      num_epochs=4, num_minibatches=8, learning_rate=3e-4, max_grad_norm=0.5, gamma=args.gamma,
                      gae_lambda=0.95, clip_eps=0.2, ent_coef=1e-3, vf_coef=0.5, normalize_observations=True,
                      total_timesteps=args.ppo_steps, skip_initial_evaluation=True)
    per_iter = args.num_envs * args.ppo_unroll

    def policy(ts):
        def act(obs):
            x = algo.normalize_obs(ts.obs_rms_state, obs)[None]  # rejax's MLP wants a batch axis
            mean = algo.actor.apply(ts.actor_ts.params, x, method=lambda m, o: m.action_mean(m.features(o)))
            return jnp.clip(mean[0], -1.0, 1.0)

        return act

    k_init, k_eval = jax.random.split(jax.random.PRNGKey(args.seed))
    evaluate = jax.jit(lambda ts: episode_return(env, policy(ts), k_eval, num_envs=args.eval_envs,
                                                 episode_length=args.episode_length))
    iteration = jax.jit(algo.train_iteration)
    ts = jax.jit(algo.init_state)(k_init)
    records, steps = [], 0

    def record():
        ret = float(evaluate(ts))
        records.append({"env_steps": steps, "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                        "eval_return": ret})
        print("  ppo", records[-1], flush=True)

    record()
    n_iters = -(-args.ppo_steps // per_iter)
    for i in range(1, n_iters + 1):
        ts = iteration(ts)
        steps += per_iter
        if i % args.ppo_eval_every == 0 or i == n_iters:
            record()
    return records


def common_target(results: dict[str, list[dict]]) -> float:
    """The lower of the trainers' best evaluation returns (every trainer reaches it)."""
    return min(max(r["eval_return"] for r in rec) for rec in results.values())


def first_reaching(records: list[dict], target: float) -> dict | None:
    """The first evaluation record whose return is at least ``target``."""
    return next((r for r in records if r["eval_return"] >= target), None)


def table(results: dict[str, list[dict]], target: float) -> str:
    """The comparison as a Markdown table (wall and process CPU seconds include compilation)."""
    lines = [f"target return {target:.1f} (episodes of the evaluation length, deterministic policy)", "",
             "| trainer | env steps to target | wall s to target | CPU s to target | first eval (wall s) | "
             "best return | final return | env steps | wall s | CPU s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, rec in results.items():
        hit = first_reaching(rec, target)
        to = (f"{hit['env_steps']:,}", f"{hit['wall_s']:.0f}", f"{hit['cpu_s']:.0f}") if hit else ("not reached",) * 3
        best = max(r["eval_return"] for r in rec)
        lines.append(f"| {name} | {' | '.join(to)} | {rec[0]['wall_s']:.0f} | {best:.1f} | "
                     f"{rec[-1]['eval_return']:.1f} | {rec[-1]['env_steps']:,} | {rec[-1]['wall_s']:.0f} | "
                     f"{rec[-1]['cpu_s']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="pendulum swing-up and tiny budgets (smoke test)")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--episode-length", type=int, default=200)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--horizon", type=int, default=32, help="SHAC's differentiated window")
    p.add_argument("--shac-iters", type=int, default=30)
    p.add_argument("--shac-eval-every", type=int, default=5)
    p.add_argument("--ppo-steps", type=int, default=200_000)
    p.add_argument("--ppo-unroll", type=int, default=32)
    p.add_argument("--ppo-eval-every", type=int, default=10)
    p.add_argument("--eval-envs", type=int, default=16)
    p.add_argument("--target", type=float, default=None, help="target return (default: the lower best return)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", choices=("shac", "ppo"), default=None, help="train one (run the two in parallel)")
    p.add_argument("--save", default=None, help="write the evaluation records to this JSON file")
    p.add_argument("--tables", nargs="+", default=None, help="print one table from saved JSON records")
    args = p.parse_args()
    if args.tables:
        results = {k: v for path in args.tables for k, v in json.loads(pathlib.Path(path).read_text()).items()}
        print(table(results, args.target if args.target is not None else common_target(results)))
        return
    if args.quick:
        args.num_envs, args.episode_length, args.horizon, args.eval_envs = 8, 20, 8, 4
        args.shac_iters, args.shac_eval_every, args.ppo_steps, args.ppo_unroll, args.ppo_eval_every = 4, 2, 512, 16, 2
        env = envs.PendulumSwingup(dtype=jnp.float32)
    else:
        env = envs.QuadrupedWalk(dtype=jnp.float32)  # float32 also under jax_enable_x64 (rejax's PPO needs it)
    print(f"{type(env).__name__}: {args.num_envs} worlds, episodes of {args.episode_length} steps, "
          f"jax {jax.__version__}, {jax.devices()[0].platform}", flush=True)
    results = {}
    if args.only in (None, "shac"):
        results["SHAC (jaxart.learn)"] = run_shac(env, args)
    if args.only in (None, "ppo"):
        results["PPO (rejax)"] = run_ppo(env, args)
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(results))
    print(table(results, args.target if args.target is not None else common_target(results)))


if __name__ == "__main__":
    main()
