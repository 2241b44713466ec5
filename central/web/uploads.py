"""Uploaded CSV files written under their own base name in a private temporary directory, so a
service's messages name them ``workers.csv:7: ...`` as on the command line."""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(filename: str | None, default: str) -> str:
    """The upload's base name with only ``[A-Za-z0-9._-]`` (others become ``_``), or ``default``."""
    base = Path(filename or "").name
    base = _SAFE.sub("_", base).lstrip(".")
    return base or default


@contextlib.contextmanager
def saved(files: dict[str, tuple[str, bytes]]) -> Iterator[dict[str, Path]]:
    """``{key: (name, data)}`` -> ``{key: path}`` in a temporary directory removed on exit. Two
    uploads of the same name get distinct paths (``a.csv``, ``2-a.csv``)."""
    with tempfile.TemporaryDirectory(prefix="portgate-upload-") as tmp:
        out: dict[str, Path] = {}
        used: set[str] = set()
        for key, (name, data) in files.items():
            final = name if name not in used else f"{len(used) + 1}-{name}"
            used.add(final)
            path = Path(tmp) / final
            path.write_bytes(data)
            out[key] = path
        yield out
