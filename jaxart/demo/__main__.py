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

    from jaxart.demo import reach

    t0 = time.perf_counter()
    res = reach.run(steps=40 if args.quick else 200)
    panels = [("Reaching through eval_fk (jit + grad)", res["loss"], "squared distance [m²]")]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4), squeeze=False)
    for ax, (title, curve, ylabel) in zip(axes[0], panels, strict=True):
        ax.semilogy(curve)
        ax.set_title(title)
        ax.set_xlabel("iteration")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"demo: done in {time.perf_counter() - t0:.1f} s; plot saved to {args.out}")


if __name__ == "__main__":
    main()
