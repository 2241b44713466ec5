"""A real small file system for tests of a full disk: a tmpfs of a given size mounted on a test's
directory (root only: the tests that use it are marked to need root)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def mounted_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` (``"2m"``) at ``path`` (made if missing, mode 0700) and yield it;
    unmounted on exit, lazily when a process still holds a file in it."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)]).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], check=True)
