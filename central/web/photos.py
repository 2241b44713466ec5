"""Where the web application finds a worker's photo in the office's photos directory."""

from __future__ import annotations

from pathlib import Path

from central.registry.photos import office_photo


def gate_photo(directory: Path, registration: str) -> Path | None:
    """The photo shown on the worker's page (office size, else gate size), or None."""
    return office_photo(directory, registration)
