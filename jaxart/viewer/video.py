"""Writing rendered frames to GIF / MP4 files with ``imageio`` (optional extra ``jaxart[viz]``)."""

from __future__ import annotations

import os

import numpy as np

_FORMATS = (".gif", ".mp4")


def save_video(frames, path: str | os.PathLike, *, fps: float = 30.0) -> str:
    """Write ``(T, H, W, 3)`` uint8 frames to a GIF or MP4 file.

    GIFs are written with Pillow through ``imageio`` (a dependency of jaxart); MP4 (H.264) needs the
    ``imageio-ffmpeg`` package, which ships its own ffmpeg binary (``pip install "jaxart[viz]"``).

    Args:
        frames: ``(T, H, W, 3)`` uint8 array (e.g. from :func:`jaxart.viewer.render`).
        path: Output file; the suffix (``.gif`` or ``.mp4``) picks the format.
        fps: Frames per second.

    Returns:
        The path written, as a string.

    Raises:
        ValueError: Bad frame array, fps or file suffix.
        ImportError: ``imageio`` (or ``imageio-ffmpeg`` for MP4) is not installed.
    """
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[0] < 1:
        raise ValueError(f"save_video: frames must have shape (T, H, W, 3) with T >= 1, got {frames.shape}")
    if frames.dtype != np.uint8:
        raise ValueError(f"save_video: frames must be uint8, got {frames.dtype}")
    if not fps > 0:
        raise ValueError(f"save_video: fps must be positive, got {fps!r}")
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in _FORMATS:
        raise ValueError(f"save_video: path must end in one of {_FORMATS}, got {path!r}")
    try:
        import imageio.v3 as iio
    except ImportError:
        raise ImportError('save_video needs imageio: pip install "jaxart[viz]"') from None
    if ext == ".gif":
        iio.imwrite(path, frames, extension=".gif", duration=1000.0 / fps, loop=0)
        return path
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        raise ImportError('save_video: MP4 needs imageio-ffmpeg: pip install "jaxart[viz]"') from None
    iio.imwrite(path, frames, extension=".mp4", plugin="FFMPEG", fps=fps, codec="libx264",
                macro_block_size=1, pixelformat="yuv420p")
    return path


def show_video(frames, *, fps: float = 30.0, **kwargs):
    """Show frames as a video in a notebook with ``mediapy`` (extra ``jaxart[viz]``).

    mediapy encodes with an ``ffmpeg`` program; when none is on ``PATH`` the binary shipped by
    ``imageio-ffmpeg`` is used.

    Args:
        frames: ``(T, H, W, 3)`` uint8 frames.
        fps: Frames per second.
        **kwargs: Passed to ``mediapy.show_video`` (``title``, ``codec``, ...).

    Raises:
        ImportError: ``mediapy`` (or, without a system ffmpeg, ``imageio-ffmpeg``) is not installed.
    """
    import shutil

    try:
        import mediapy
    except ImportError:
        raise ImportError('show_video needs mediapy: pip install "jaxart[viz]"') from None
    if shutil.which("ffmpeg") is None:
        try:
            import imageio_ffmpeg
        except ImportError:
            raise ImportError('show_video: no ffmpeg on PATH; pip install "jaxart[viz]" (imageio-ffmpeg)') from None
        mediapy.set_ffmpeg(imageio_ffmpeg.get_ffmpeg_exe())
    return mediapy.show_video(np.asarray(frames), fps=fps, **kwargs)
