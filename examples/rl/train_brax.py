"""Train a jaxart environment with Brax's PPO and APG (analytic policy gradients) and compare them.

Usage (in an environment with the ``brax`` extra: ``pip install "jaxart[brax]"``, which pins
``brax==0.14.2`` and ``jax<0.10`` — brax 0.14.2's trainers call ``jax.device_put_replicated``,
removed in JAX 0.10)::

    MUJOCO_GL=egl python examples/rl/train_brax.py [--env pendulum_swingup] [--max-torque 6] [--solved 150]
        [--quick] [--out rl_curves.png]

Prints evaluation reward against environment steps and wall time for both trainers, the wall time
and environment steps each needed to reach ``--solved`` (the "solved" return), saves the learning
curves, and renders the APG policy to ``<out>.gif`` (needs ``jaxart[viz]``).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("MUJOCO_GL", "egl")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from brax_setup import load_trainers  # noqa: E402


def train(env, *, quick: bool, episode_length: int) -> dict:
    """Run PPO then APG; return their curves ``[(env_steps, wall_s, eval_reward), ...]`` and policies."""
    ppo, apg, _ = load_trainers("train_brax")
    evals = 4 if quick else 10
    # APG: whole-episode-scale horizons (100 env steps = 2 s) so the gradient sees the swing-up pay off.
    apg_cfg = {"num_envs": 16 if quick else 64, "policy_updates": 20 if quick else 100,
               "horizon_length": 50 if quick else 100}
    # APG reports its evaluation index; convert it to environment steps as PPO reports them.
    apg_steps = round(apg_cfg["policy_updates"] / max(evals - 1, 1)) * apg_cfg["num_envs"] * apg_cfg["horizon_length"]
    out = {}
    for name in ("ppo", "apg"):
        curve, t0 = [], time.perf_counter()

        def progress(step, metrics, curve=curve, t0=t0, name=name):
            step = int(step) * (apg_steps if name == "apg" else 1)
            curve.append((step, time.perf_counter() - t0, float(metrics["eval/episode_reward"])))
            print(f"{name}: {step:>8d} env steps  {curve[-1][1]:6.1f} s  eval reward {curve[-1][2]:7.2f}", flush=True)

        if name == "ppo":
            make, params, _ = ppo.train(
                environment=env, num_timesteps=30_000 if quick else 600_000, episode_length=episode_length,
                num_envs=64 if quick else 256, batch_size=64 if quick else 256, num_minibatches=4,
                unroll_length=10, num_updates_per_batch=4, learning_rate=3e-4, entropy_cost=1e-2,
                discounting=0.97, num_evals=evals, num_eval_envs=16, normalize_observations=True,
                deterministic_eval=True, seed=0, progress_fn=progress)
        else:
            make, params, _ = apg.train(
                environment=env, episode_length=episode_length, learning_rate=2e-3, num_evals=evals,
                num_eval_envs=16, normalize_observations=True, seed=0, deterministic_eval=True,
                progress_fn=progress, **apg_cfg)
        out[name] = {"curve": curve, "policy": make(params, deterministic=True)}
    return out


def policy_video(env, policy, steps: int, path: str) -> None:
    """Roll the deterministic policy out for ``steps`` steps and write a GIF of it."""
    from jaxart import viewer

    def body(carry, _):
        s, key = carry
        key, sub = jax.random.split(key)
        a, _ = policy(s.obs, sub)
        s = env.step(s, a)
        return (s, key), s.pipeline_state.body_q

    key = jax.random.PRNGKey(1)
    _, body_q = jax.jit(lambda k: jax.lax.scan(body, (env.reset(k), k), None, length=steps))(key)
    frames = viewer.render(env.model, np.asarray(body_q), width=240, height=180, distance=3.5)
    viewer.save_video(frames, path, fps=1.0 / env.control_dt)
    print(f"train_brax: policy video saved to {path}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="pendulum_swingup")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-torque", type=float, default=None,
                    help="pendulum_swingup: torque at |a| = 1 [N m] (env default 2.5; gravity torque 4.9)")
    ap.add_argument("--solved", type=float, default=None, help="evaluation return that counts as solved")
    ap.add_argument("--out", default="rl_curves.png")
    args = ap.parse_args(argv)
    from jaxart import enable_compilation_cache

    enable_compilation_cache()  # a second run reuses the compiled programs
    from jaxart import envs

    env = envs.make(args.env, **({} if args.max_torque is None else {"max_torque": args.max_torque}))
    res = train(env, quick=args.quick, episode_length=100 if args.quick else 200)
    if args.solved is not None:
        for name, r in res.items():
            hit = [(s, t, x) for s, t, x in r["curve"] if x >= args.solved]
            print(f"train_brax: {name.upper()} " + (f"reached {args.solved:g} after {hit[0][0]} env steps and "
                                                   f"{hit[0][1]:.0f} s" if hit else f"never reached {args.solved:g}"))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for name, r in res.items():
        steps, wall, rew = map(np.asarray, zip(*r["curve"], strict=True))
        axes[0].plot(steps, rew, "o-", label=name.upper())
        axes[1].plot(wall, rew, "o-", label=name.upper())
    axes[0].set_xlabel("environment steps")
    axes[1].set_xlabel("wall time [s] (incl. compilation)")
    for ax in axes:
        ax.set_ylabel("eval episode reward")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(f"jaxart {args.env}: Brax PPO vs APG")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"train_brax: curves saved to {args.out}")
    policy_video(env, res["apg"]["policy"], 100, os.path.splitext(args.out)[0] + ".gif")


if __name__ == "__main__":
    main()
