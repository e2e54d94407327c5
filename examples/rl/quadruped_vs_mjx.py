"""Train the quadruped walking task with Brax's PPO on jaxart and on MJX, in one run, and compare.

Usage (in an environment with the ``brax`` extra, ``pip install "jaxart[brax]"``: brax 0.14.2 needs
``jax<0.10``)::

    python examples/rl/quadruped_vs_mjx.py [--steps 2000000] [--mjx-dt 0.002] [--out quadruped_ppo.png]

Both backends get the same task (:class:`jaxart.envs.QuadrupedWalk` and its MJX twin
:class:`jaxart.envs.mjx_quadruped.MjxQuadrupedWalk`: same model file, observation, reward, termination,
a 50 Hz policy), the same trainer settings and the same number of environment steps; each simulates
at its own physics step (jaxart: 4 ms implicit contact; MJX: ``--mjx-dt``, the model file's 2 ms by
default). Prints evaluation reward and forward speed against environment steps and wall time (which
includes compilation), a summary table, and saves the curves to ``--out``.
"""

from __future__ import annotations

import argparse
import functools
import time

import jax
import numpy as np
from brax_setup import load_trainers


def _ppo():
    ppo, _, ppo_networks = load_trainers("quadruped_vs_mjx")
    return ppo, ppo_networks


def make_env(backend: str, mjx_dt: float):
    """The walking task on ``backend`` (``"jaxart"`` or ``"mjx"``) at a 50 Hz policy rate."""
    from jaxart import envs

    if backend == "jaxart":
        return envs.QuadrupedWalk()  # 4 ms x 5
    from jaxart.envs.mjx_quadruped import MjxQuadrupedWalk

    return MjxQuadrupedWalk(dt=mjx_dt, action_repeat=max(1, round(0.02 / mjx_dt)))


def train(env, *, steps: int, episode_length: int, num_envs: int, evals: int, seed: int) -> list[dict]:
    """Brax PPO on ``env``; returns one record per evaluation (env steps, wall s, reward, forward speed)."""
    ppo, ppo_networks = _ppo()
    curve, t0 = [], time.perf_counter()

    def progress(step, metrics):
        length = max(float(metrics.get("eval/avg_episode_length", episode_length)), 1.0)
        rec = {"steps": int(step), "wall_s": time.perf_counter() - t0,
               "reward": float(metrics["eval/episode_reward"]),
               "speed": float(metrics["eval/episode_forward_velocity"]) / length, "length": length}
        curve.append(rec)
        print(f"  {env.backend:6s} {rec['steps']:>9d} steps {rec['wall_s']:7.1f} s  reward {rec['reward']:8.2f}  "
              f"forward {rec['speed']:+.3f} m/s  episode {length:5.0f}", flush=True)

    nets = functools.partial(ppo_networks.make_ppo_networks, policy_hidden_layer_sizes=(64, 64),
                             value_hidden_layer_sizes=(128, 128))
    ppo.train(environment=env, num_timesteps=steps, episode_length=episode_length, num_envs=num_envs,
              batch_size=num_envs, num_minibatches=8, unroll_length=20, num_updates_per_batch=4,
              learning_rate=3e-4, entropy_cost=1e-2, discounting=0.97, reward_scaling=1.0, num_evals=evals,
              num_eval_envs=64, normalize_observations=True, network_factory=nets, seed=seed,
              progress_fn=progress)
    return curve


def _plot(results: dict, path: str, dts: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 6.5))
    for name, curve in results.items():
        steps, wall = np.array([r["steps"] for r in curve]), np.array([r["wall_s"] for r in curve])
        for row, key in enumerate(("reward", "speed")):
            vals = np.array([r[key] for r in curve])
            label = f"{name} (dt {dts[name] * 1e3:g} ms)"
            axes[row, 0].plot(steps, vals, "o-", label=label)
            axes[row, 1].plot(wall, vals, "o-", label=label)
    for row, ylabel in enumerate(("eval episode reward", "forward speed [m/s]")):
        axes[row, 0].set_ylabel(ylabel)
        for col, xlabel in enumerate(("environment steps", "wall time [s] (incl. compilation)")):
            axes[row, col].set_xlabel(xlabel)
            axes[row, col].grid(alpha=0.3)
            axes[row, col].legend()
    fig.suptitle("Quadruped walk, Brax PPO: jaxart vs MJX (same task, same trainer)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"quadruped_vs_mjx: curves saved to {path}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=2_000_000, help="environment steps per backend")
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--episode-length", type=int, default=500, help="environment steps (10 s at 50 Hz)")
    ap.add_argument("--evals", type=int, default=9)
    ap.add_argument("--mjx-dt", type=float, default=0.002, help="MJX physics step [s] (model file: 0.002)")
    ap.add_argument("--backends", nargs="+", default=["jaxart", "mjx"], choices=["jaxart", "mjx"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="quadruped_ppo.png")
    args = ap.parse_args(argv)
    from jaxart import enable_compilation_cache

    enable_compilation_cache()  # a second run reuses the compiled programs
    print(f"jax {jax.__version__}, {jax.device_count()} {jax.devices()[0].platform} device(s)")
    results, dts = {}, {}
    for backend in args.backends:
        env = make_env(backend, args.mjx_dt)
        dts[backend] = env.dt
        print(f"{backend}: physics dt {env.dt * 1e3:g} ms x {env.action_repeat} per action", flush=True)
        results[backend] = train(env, steps=args.steps, episode_length=args.episode_length,
                                 num_envs=args.num_envs, evals=args.evals, seed=args.seed)
    print("\n| backend | dt [ms] | env steps | wall [s] | final reward | best reward | final forward speed [m/s] |")
    print("|---|---|---|---|---|---|---|")
    for name, c in results.items():
        print(f"| {name} | {dts[name] * 1e3:g} | {c[-1]['steps']} | {c[-1]['wall_s']:.0f} | {c[-1]['reward']:.1f} "
              f"| {max(r['reward'] for r in c):.1f} | {c[-1]['speed']:+.3f} |")
    _plot(results, args.out, dts)


if __name__ == "__main__":
    main()
