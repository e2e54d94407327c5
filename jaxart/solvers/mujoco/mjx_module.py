"""Importing ``mujoco.mjx`` without its optional-backend probe messages.

``mujoco.mjx`` (3.17 under ``mujoco`` 4.0) probes at import for its optional Warp backend and prints
``Failed to import warp: ...`` and ``Failed to import mujoco_warp: ...`` when NVIDIA Warp is not
installed. jaxart never uses that backend, so the messages only read as failures. :func:`load_mjx`
imports the module once with those two lines filtered out of standard output; any other output of
the import is printed unchanged. Nothing in ``mujoco`` is modified.
"""

from __future__ import annotations

import contextlib
import io
import sys
from types import ModuleType

#: Prefixes of the import-time lines that are filtered out.
PROBE_MESSAGES = ("Failed to import warp:", "Failed to import mujoco_warp:")


def load_mjx() -> ModuleType:
    """Return ``mujoco.mjx``, importing it quietly the first time.

    Returns:
        The ``mujoco.mjx`` module.
    """
    if "mujoco.mjx" in sys.modules:
        return sys.modules["mujoco.mjx"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        from mujoco import mjx
    for line in buf.getvalue().splitlines():
        if not line.startswith(PROBE_MESSAGES):
            print(line)
    return mjx


#: ``mujoco.mjx``, imported quietly when this module is first imported.
mjx = load_mjx()
