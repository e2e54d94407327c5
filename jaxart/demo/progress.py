"""A dependency-free text progress bar for the demos."""

from __future__ import annotations

import sys


def progress(i: int, total: int, msg: str = "", width: int = 30) -> None:
    """Draw ``[#####.....] i/total msg`` on one terminal line (newline at the end)."""
    done = int(width * (i + 1) / total)
    bar = "#" * done + "." * (width - done)
    end = "\n" if i + 1 == total else "\r"
    sys.stdout.write(f"  [{bar}] {i + 1:4d}/{total} {msg}{end}")
    sys.stdout.flush()
