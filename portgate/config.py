"""Configuration loading: TOML parsed and validated completely at start-up into typed objects
(STYLE.md 12). Every section is a ``msgspec.Struct`` with ``forbid_unknown_fields=True``; a bad key
or value raises ``ConfigError`` naming the key path (``$.gate.debounce_ms``) and the file.

Secrets are never in the TOML itself: a setting ending in ``_file`` names a file whose contents are
read by ``read_secret``, which refuses files readable by group or others.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import TypeVar

import msgspec

from portgate.errors import ConfigError

T = TypeVar("T")


def load_toml(path: str | Path, schema: type[T]) -> T:
    """Read ``path`` and convert it to ``schema``; raise ``ConfigError`` naming the bad key."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("file not found", path=str(path)) from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=str(path)) from exc
    return convert(raw, schema, path=str(path))


def convert(raw: object, schema: type[T], *, path: str | None = None) -> T:
    """Convert already-parsed data to ``schema``; raise ``ConfigError`` naming the key path."""
    try:
        return msgspec.convert(raw, schema, strict=False)
    except msgspec.ValidationError as exc:
        text = str(exc)
        key = text.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in text else None
        message = text.split(" - at `", 1)[0]
        if message.startswith("Object contains unknown field `"):  # name the key itself
            field = message.split("`")[1]
            key, message = f"{key or '$'}.{field}", "unknown key (misspelt, or not valid here)"
        raise ConfigError(message, key=key, path=path) from exc


def read_secret(path: str | Path, *, what: str = "secret") -> bytes:
    """Read a secret file (MQTT password, HMAC key). Raises ``ConfigError`` if it is missing, empty,
    or readable by group/others (mode must be 0600 or 0400). Trailing newlines are stripped."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError as exc:
        raise ConfigError(f"{what} file not found", path=str(path)) from exc
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{what} file must not be accessible by group or others (chmod 600)", path=str(path)
        )
    data = path.read_bytes().rstrip(b"\r\n")
    if not data:
        raise ConfigError(f"{what} file is empty", path=str(path))
    return data


def write_secret(path: str | Path, data: bytes) -> None:
    """Create a secret file with mode 0600 (used by provisioning and the demo)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
