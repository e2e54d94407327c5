"""Run the jaxart demos and save a plot: ``python -m jaxart.demo [--out jaxart_demo.png] [--quick]``."""

from __future__ import annotations

import argparse
import time


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m jaxart.demo", description=__doc__)
    ap.add_argument("--out", default="jaxart_demo.png", help="where to save the plot")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (smoke test)")
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from jaxart.demo import reach, swingup

    t0 = time.perf_counter()
    res = reach.run(steps=40 if args.quick else 200)
    swing = swingup.run(iters=30 if args.quick else 150)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4))
    panels = [("Reaching through eval_fk (jit + grad)", res["loss"], "squared distance [m²]"),
              ("Pendulum swing-up through a Featherstone rollout", swing["cost"], "cost")]
    for ax, (title, curve, ylabel) in zip(axes[:2], panels, strict=True):
        ax.semilogy(curve)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("optimiser iteration")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    t = np.arange(1, len(swing["q"]) + 1) * swing["dt"]
    axes[2].plot(t, swing["q"], label="angle q [rad]")
    axes[2].plot(t, swing["u"], label="torque u [N·m]")
    axes[2].axhline(np.pi, color="k", ls=":", lw=1, label="upright (π)")
    axes[2].set_title("Optimised swing-up trajectory", fontsize=10)
    axes[2].set_xlabel("time [s]")
    axes[2].legend(fontsize=8)
    axes[2].grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"demo: done in {time.perf_counter() - t0:.1f} s; plot saved to {args.out}")


if __name__ == "__main__":
    main()
