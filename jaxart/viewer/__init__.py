"""See a simulation: render trajectories with MuJoCo's renderer and save them as GIF/MP4.

Frames are drawn through the model's MuJoCo translation (``SolverMuJoCo``'s mapping), with geoms
placed from jaxart body poses, so trajectories of any solver render::

    import os; os.environ.setdefault("MUJOCO_GL", "egl")   # before anything imports mujoco
    from jaxart import viewer
    frames = viewer.render(model, traj, width=320, height=240, track_body=0)  # (T, H, W, 3) uint8
    viewer.save_video(frames, "run.gif", fps=30)          # needs pip install "jaxart[viz]"
    viewer.show_video(frames, fps=30)                      # in a notebook (mediapy)

Headless machines (CI, servers, CPU-only laptops without a display) need ``MUJOCO_GL=egl`` (Mesa
EGL works without a GPU) or ``MUJOCO_GL=osmesa``, set before ``mujoco`` is first imported.
"""

from jaxart.viewer.render import Renderer, render
from jaxart.viewer.video import save_video, show_video

__all__ = ["Renderer", "render", "save_video", "show_video"]
