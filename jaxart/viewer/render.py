"""Offscreen rendering of jaxart trajectories with MuJoCo's OpenGL renderer."""

from __future__ import annotations

import os

import numpy as np

from jaxart.sim.model import Model, State
from jaxart.viewer.scene import Scene, build_scene

_GL_HINT = ("set MUJOCO_GL=egl (GPU or Mesa EGL, headless) or MUJOCO_GL=osmesa (software) in the environment "
            "before Python imports mujoco, e.g. `MUJOCO_GL=egl jupyter lab` or "
            "os.environ['MUJOCO_GL'] = 'egl' as the first line of a notebook")


class Renderer:
    """Render frames of jaxart trajectories (``State`` sequences or ``body_q`` arrays).

    Headless machines need an offscreen OpenGL backend chosen *before* ``mujoco`` is imported:
    ``MUJOCO_GL=egl`` (Mesa's EGL works on CPU-only machines) or ``MUJOCO_GL=osmesa``.

    Args:
        model: The jaxart model.
        width, height: Frame size in pixels.
        solver: Optional ``SolverMuJoCo`` for ``model`` whose MuJoCo translation is reused.

    Raises:
        TypeError: ``model`` is not a ``jaxart.Model``.
        ValueError: Non-positive frame size.
        RuntimeError: No OpenGL context could be created (the message names ``MUJOCO_GL``).

    Example:
        >>> r = Renderer(model, width=320, height=240)
        >>> frames = r.render(traj, track_body=0)   # (T, 240, 320, 3) uint8
    """

    def __init__(self, model: Model, *, width: int = 320, height: int = 240, solver=None) -> None:
        if not isinstance(model, Model):
            raise TypeError(f"Renderer: model must be a jaxart.Model, got {type(model).__name__}")
        for name, v in (("width", width), ("height", height)):
            if int(v) != v or int(v) < 1:
                raise ValueError(f"Renderer: {name} must be a positive integer, got {v!r}")
        import mujoco

        self.width, self.height = int(width), int(height)
        self.scene: Scene = build_scene(model, width=self.width, height=self.height, solver=solver)
        self._mj = mujoco
        try:
            self._renderer = mujoco.Renderer(self.scene.mj_model, self.height, self.width)
        except Exception as e:  # mujoco.FatalError / GL errors differ by backend
            backend = os.environ.get("MUJOCO_GL", "<unset>")
            raise RuntimeError(f"Renderer: could not create an OpenGL context (MUJOCO_GL={backend}): {e}. "
                               f"To render headless, {_GL_HINT}.") from None
        self._data = mujoco.MjData(self.scene.mj_model)
        mujoco.mj_forward(self.scene.mj_model, self._data)

    def render(self, trajectory, *, world: int | None = None, track_body: int | None = None,
               distance: float | None = None, azimuth: float = 90.0, elevation: float = -20.0,
               lookat=None) -> np.ndarray:
        """Render one frame per time step.

        Args:
            trajectory: A ``State`` whose ``body_q`` has a leading time axis ``(T, body_count, 7)``
                (e.g. the outputs of :func:`jaxart.rollout`), a list of ``State``, a single
                ``State``, or a ``body_q`` array ``(T, body_count, 7)`` / ``(body_count, 7)``.
                Batched trajectories ``(T, W, body_count, 7)`` need ``world``.
            world: Which world of a batched trajectory to draw.
            track_body: jaxart body index the camera follows (its origin stays at the image
                centre); ``None``: a fixed camera looking at the first frame's bodies.
            distance: Camera distance [m] (default: from the model's extent).
            azimuth, elevation: Camera angles [deg] (MuJoCo's free camera convention).
            lookat: Fixed look-at point (3,) for an untracked camera.

        Returns:
            ``(T, height, width, 3)`` uint8 frames (``mediapy.show_video(frames)`` shows them).

        Raises:
            TypeError, ValueError: Bad trajectory, ``world`` or ``track_body``.
        """
        body_q = _as_body_q(trajectory, self.scene.body_count, world)
        if track_body is not None and not (0 <= int(track_body) < self.scene.body_count):
            raise ValueError(f"render: track_body must be a body index in [0, {self.scene.body_count}), "
                             f"got {track_body!r}")
        pos, mat = self.scene.geom_poses(body_q)
        cam = self._camera(body_q, track_body, distance, azimuth, elevation, lookat)
        frames = np.empty((body_q.shape[0], self.height, self.width, 3), np.uint8)
        d, m = self._data, self.scene.mj_model
        for t in range(body_q.shape[0]):
            d.geom_xpos[:] = pos[t]
            d.geom_xmat[:] = mat[t]
            if track_body is not None:
                cam.lookat[:] = body_q[t, int(track_body), :3]
            self._renderer.update_scene(d, camera=cam)
            frames[t] = self._renderer.render()
        del m
        return frames

    def _camera(self, body_q, track_body, distance, azimuth, elevation, lookat):
        cam = self._mj.MjvCamera()
        cam.type = self._mj.mjtCamera.mjCAMERA_FREE
        p0 = body_q[0, :, :3]
        extent = float(np.max(np.ptp(p0, axis=0))) if p0.shape[0] > 1 else 0.0
        cam.distance = float(distance) if distance is not None else max(2.5 * extent, 1.5)
        cam.azimuth, cam.elevation = float(azimuth), float(elevation)
        if lookat is not None:
            look = np.asarray(lookat, np.float64)
            if look.shape != (3,):
                raise ValueError(f"render: lookat must have shape (3,), got {look.shape}")
            cam.lookat[:] = look
        else:
            cam.lookat[:] = p0.mean(axis=0) if track_body is None else p0[int(track_body)]
        return cam

    def close(self) -> None:
        """Release the OpenGL context."""
        self._renderer.close()

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def render(model: Model, trajectory, *, width: int = 320, height: int = 240, solver=None, **kwargs) -> np.ndarray:
    """Render a trajectory in one call (see :class:`Renderer` and :meth:`Renderer.render`).

    Returns:
        ``(T, height, width, 3)`` uint8 frames.
    """
    with Renderer(model, width=width, height=height, solver=solver) as r:
        return r.render(trajectory, **kwargs)


def _as_body_q(trajectory, body_count: int, world: int | None) -> np.ndarray:
    if isinstance(trajectory, State):
        body_q = np.asarray(trajectory.body_q)
    elif isinstance(trajectory, (list, tuple)):
        if not trajectory or not all(isinstance(s, State) for s in trajectory):
            raise TypeError("render: a trajectory list must be a non-empty list of jaxart.State")
        body_q = np.stack([np.asarray(s.body_q) for s in trajectory])
    elif hasattr(trajectory, "shape"):
        body_q = np.asarray(trajectory)
    else:
        raise TypeError(f"render: trajectory must be a State, a list of State or a body_q array, "
                        f"got {type(trajectory).__name__}")
    if body_q.ndim == 2:
        body_q = body_q[None]
    if body_q.ndim == 4:
        if world is None:
            raise ValueError(f"render: batched trajectory body_q {body_q.shape}; pass world=<index>")
        if not 0 <= int(world) < body_q.shape[1]:
            raise ValueError(f"render: world must be in [0, {body_q.shape[1]}), got {world!r}")
        body_q = body_q[:, int(world)]
    elif world is not None:
        raise ValueError(f"render: world={world!r} given but body_q {body_q.shape} has no world axis")
    if body_q.ndim != 3 or body_q.shape[1:] != (body_count, 7):
        raise ValueError(f"render: body_q must have shape (T, {body_count}, 7) (or (T, W, {body_count}, 7) "
                         f"with world=...), got {body_q.shape}")
    if not np.all(np.isfinite(body_q)):
        raise ValueError("render: body_q contains non-finite values")
    return body_q.astype(np.float64)
