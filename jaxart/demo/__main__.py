"""Run the jaxart demos and save a plot and a video.

``python -m jaxart.demo [--out jaxart_demo.png] [--gif jaxart_demo.gif] [--quick] [--no-cache]``

The video (a quadruped trotting on the floor, rendered by MuJoCo) needs an OpenGL context; on a
machine without a display the demo uses ``MUJOCO_GL=egl`` unless ``MUJOCO_GL`` is already set. The GIF
is written with ``imageio`` (a dependency of jaxart). Compiled programs are kept in JAX's persistent
compilation cache (:func:`jaxart.enable_compilation_cache`), so a second run starts in seconds;
``--no-cache`` compiles everything afresh.
"""

from __future__ import annotations

import argparse
import os
import time


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m jaxart.demo", description=__doc__)
    ap.add_argument("--out", default="jaxart_demo.png", help="where to save the plot")
    ap.add_argument("--gif", default="jaxart_demo.gif", help="where to save the rendered contact scene")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (smoke test)")
    ap.add_argument("--no-cache", action="store_true", help="do not use JAX's persistent compilation cache")
    args = ap.parse_args(argv)
    if not args.no_cache:
        from jaxart.compile_cache import enable_compilation_cache

        cache = enable_compilation_cache()
        if cache is not None:
            print(f"demo: compilation cache in {cache}")
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("MUJOCO_GL", "egl")  # before mujoco is imported; an explicit setting wins

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from jaxart.demo import reach, scene, swingup

    t0 = time.perf_counter()
    res = reach.run(steps=40 if args.quick else 200)
    swing = swingup.run(iters=30 if args.quick else 150)
    trot = scene.run(seconds=0.6 if args.quick else 2.0, fps=15 if args.quick else 30,
                     width=160 if args.quick else 320, height=120 if args.quick else 240)
    fig, axes = plt.subplots(1, 4, figsize=(20, 4))
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
    _scene_panel(axes[3], trot, args.gif)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"demo: done in {time.perf_counter() - t0:.1f} s; plot saved to {args.out}")


def _scene_panel(ax, trot: dict, gif: str) -> None:
    """Show the middle frame of the rendered trot and write the GIF (or say why not)."""
    ax.set_axis_off()
    ax.set_title("Quadruped trot with ground contact (MuJoCo renderer)", fontsize=10)
    if trot["frames"] is None:
        print(f"demo: no video: {trot['render_error']}")
        ax.text(0.5, 0.5, "no OpenGL context:\nset MUJOCO_GL=egl", ha="center", va="center")
        return
    ax.imshow(trot["frames"][len(trot["frames"]) // 2])
    from jaxart.viewer import save_video

    try:
        save_video(trot["frames"], gif, fps=trot["fps"])
        print(f"demo: contact scene saved to {gif}")
    except ImportError as e:
        print(f"demo: no video file: {e}")


if __name__ == "__main__":
    main()
