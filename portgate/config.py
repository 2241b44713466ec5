"""Configuration loading: TOML parsed and validated completely at start-up into typed objects
(STYLE.md 12). Every section is a ``msgspec.Struct`` with ``forbid_unknown_fields=True``; a bad key
or value raises ``ConfigError`` naming the key path (``$.gate.debounce_ms``) and the file.

Secrets are never in the TOML itself: a setting ending in ``_file`` names a file whose contents are
read by ``read_secret``, which refuses files readable by group or others.

No string anywhere in a configuration may hold a NUL character (no path, URL or id can): it is
refused naming its key. A file that cannot be opened (a NUL in its name, a name too long, a
directory) is a ``ConfigError`` naming it, never a traceback.

Every value has its TOML type (msgspec's strict conversion): a number in quotes is refused where a
number is expected (``workers = "2"``: "Expected `int`, got `str`"), as is a number where a string is
expected, a ``true`` for a number, a ``1`` or ``"true"`` for a bool, and a float where an integer is
expected even when it is integral (``lanes = 3.0``: "Expected `int`, got `float`"). An integer is
taken for a float, and a string for a date, time or exact amount (``Decimal``: ``amount = "210.00"``).
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import msgspec

from portgate.errors import BadInput, ConfigError
from portgate.tables import one_line

T = TypeVar("T")

#: The one wording of a rulebook too deeply nested to parse (the web's message table translates it).
TOO_DEEP = "the rulebook is nested too deeply"


@contextmanager
def nesting_guard(where: str | None) -> Iterator[None]:
    """Turn a ``RecursionError`` raised while parsing or converting a rulebook (``a=`` followed by
    thousands of ``[``) into ``BadInput(TOO_DEEP, where=where)``: exit 2, one line, never a traceback.
    Shared by ``portgate pay --what-if``/``--rulebook`` and the web what-if page."""
    try:
        yield
    except RecursionError as exc:
        raise BadInput(TOO_DEEP, where=where) from exc


def load_toml(path: str | Path, schema: type[T]) -> T:
    """Read ``path`` and convert it to ``schema``; raise ``ConfigError`` naming the bad key."""
    path = Path(path)
    return convert(read_toml(path), schema, path=one_line(str(path)))


def read_toml(path: str | Path) -> dict:
    """Parse the TOML file at ``path``. Raises ``ConfigError`` naming the file if it is missing,
    cannot be opened (``unreadable(...)``), is not UTF-8 or not TOML."""
    path = Path(path)
    where = one_line(str(path))
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("file not found", path=where) from exc
    except (OSError, ValueError) as exc:
        if isinstance(exc, tomllib.TOMLDecodeError | UnicodeDecodeError):
            raise ConfigError(f"not valid TOML: {one_line(str(exc))}", path=where) from exc
        raise ConfigError(unreadable(exc), path=where) from exc


def naming_key(exc: ConfigError, key: str, path: str | None) -> ConfigError:
    """``exc`` (about a file another setting names) restated under that setting: ``path:key: file:
    reason``; an error already naming a key inside the file is kept as it is."""
    if exc.key is not None:
        return exc
    return ConfigError(f"{exc.path}: {exc.reason}" if exc.path else exc.reason, key=key, path=path)


def must_exist(path: str | None, key: str, *, directory: bool = False) -> None:
    """``ConfigError`` naming ``key`` and ``path`` when the file (``directory``: the directory) a
    config names is not there ("file not found: PATH", "directory not found: PATH") or cannot be
    looked at; nothing for ``None`` (not configured). The one text of ``check-config`` and the
    services for a missing configured path."""
    if path is None:
        return
    p = Path(path)
    try:
        ok = p.is_dir() if directory else p.is_file()
    except (OSError, ValueError) as exc:  # a name too long for the file system
        raise ConfigError(unreadable(exc), key=key) from exc
    if not ok:
        raise ConfigError(f"{'directory' if directory else 'file'} not found: {p}", key=key)


def unreadable(exc: OSError | ValueError) -> str:
    """One line saying why a path could not be opened (``OSError`` or ``ValueError`` of a NUL)."""
    if isinstance(exc, ValueError):
        return "cannot be opened: the path contains a NUL character"
    return f"cannot be opened: {exc.strerror or exc}"


def _nul_key(raw: object, key: str = "$") -> str | None:
    """The key path of the first string in ``raw`` (keys included) holding a NUL character."""
    if isinstance(raw, str):
        return key if "\x00" in raw else None
    if isinstance(raw, dict):
        for k, v in raw.items():
            found = f"{key}.{one_line(str(k))}" if "\x00" in str(k) else _nul_key(v, f"{key}.{k}")
            if found:
                return found
    elif isinstance(raw, list):
        for i, v in enumerate(raw):
            found = _nul_key(v, f"{key}[{i}]")
            if found:
                return found
    return None


def convert(raw: object, schema: type[T], *, path: str | None = None) -> T:
    """Convert already-parsed data to ``schema``; raise ``ConfigError`` naming the key path (a
    string with a NUL character anywhere is refused first)."""
    nul = _nul_key(raw)
    if nul is not None:
        raise ConfigError("contains a NUL character", key=nul, path=path)
    try:
        value = msgspec.convert(raw, schema, strict=True)
    except msgspec.ValidationError as exc:
        text = str(exc)
        key = text.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in text else None
        message = text.split(" - at `", 1)[0]
        if message.startswith("Object contains unknown field `"):  # name the key itself
            field = message.split("`")[1]
            key, message = f"{key or '$'}.{field}", "unknown key (misspelt, or not valid here)"
        raise ConfigError(message, key=key, path=path) from exc
    return value


def read_secret(path: str | Path, *, what: str = "secret") -> bytes:
    """Read a secret file (MQTT password, HMAC key). Raises ``ConfigError`` if it is missing, empty,
    readable by group/others (mode must be 0600 or 0400) or its name cannot be looked up (a NUL, too
    long); ``OSError`` if it is there but cannot be read (a directory, no permission). Trailing
    newlines are stripped."""
    path = Path(path)
    where = one_line(str(path))
    try:
        st = path.stat()
    except FileNotFoundError as exc:
        raise ConfigError(f"{what} file not found", path=where) from exc
    except (OSError, ValueError) as exc:  # a NUL in the name, a name too long
        raise ConfigError(f"{what} file {unreadable(exc)}", path=where) from exc
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"{what} file must not be accessible by group or others (chmod 600)", path=where)
    data = path.read_bytes().rstrip(b"\r\n")  # OSError (a directory, no permission) for the caller
    if not data:
        raise ConfigError(f"{what} file is empty", path=where)
    return data


def write_secret(path: str | Path, data: bytes) -> None:
    """Create a secret file with mode 0600 (used by provisioning and the demo)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
