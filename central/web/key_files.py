"""The office application's key files (``office serve``): the session signing key (``[web]
secret_file``, default ``<keys_dir>/web-session.key``) and the payslip verification key (``[web]
slip_key_file``, default ``<keys_dir>/payslip.key``), each made (0600, 32 random bytes) when missing,
in a directory that must exist: a mistyped path never creates a directory (as root, mode 0755).
``app.checkconfig`` refuses the same before the service starts."""

from __future__ import annotations

import secrets
from pathlib import Path

from portgate.config import write_secret
from portgate.errors import ConfigError


def key_dir_missing(path: Path) -> str | None:
    """Why the key file ``path`` cannot be made when missing: its directory does not exist (a key
    file is made, never a directory: a mistyped path must not create one as root); ``None`` when it
    exists or can be made."""
    if path.exists() or path.parent.is_dir():
        return None
    return f"the directory {str(path.parent)!r} of {str(path)!r} does not exist (a key file is made there, " \
           "never the directory): fix the path or create the directory"


def _made_key(path: Path, what: str, key: str | None = None) -> bytes:
    """The key in ``path``, created (0600, 32 random bytes) when missing. ``ConfigError`` naming
    ``what`` when it is unreadable or shorter than 32 bytes, naming ``key`` (``$.web.secret_file``)
    when its directory does not exist (``key_dir_missing``: nothing is created; ``None``: the
    default in ``keys_dir``, made with its directory)."""
    if key is not None and (problem := key_dir_missing(path)) is not None:
        raise ConfigError(problem, key=key)
    if not path.exists():
        write_secret(path, secrets.token_bytes(32))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the {what}: {exc.strerror}", path=str(path)) from exc
    if len(data) < 32:
        raise ConfigError(f"the {what} has fewer than 32 bytes", path=str(path))
    return data


def _key_paths(config) -> tuple[tuple[Path, str, str | None], ...]:
    """(path, what, key naming it) of the office's key files: the session key, the payslip key; the
    key ``None`` for a default in ``keys_dir`` (made with it when missing, as before)."""
    w = config.web
    return ((Path(w.secret_file or Path(config.keys_dir) / "web-session.key"), "session key",
             "$.web.secret_file" if w.secret_file else None),
            (Path(w.slip_key_file or Path(config.keys_dir) / "payslip.key"), "payslip key",
             "$.web.slip_key_file" if w.slip_key_file else None))


def check_key_dirs(config) -> None:
    """``ConfigError`` naming the key of the first configured key file (``[web] secret_file``,
    ``slip_key_file``) whose directory does not exist (``key_dir_missing``): ``office serve`` says
    it before it listens or logs anything."""
    for path, _what, key in _key_paths(config):
        if key is not None and (problem := key_dir_missing(path)) is not None:
            raise ConfigError(problem, key=key)


def session_secret(config) -> bytes:
    """The session signing key from ``[web] secret_file`` (default ``<keys_dir>/web-session.key``),
    created (0600, 32 random bytes) when missing. ``ConfigError`` when it is unreadable or short."""
    return _made_key(*_key_paths(config)[0])


def slip_key(config) -> bytes:
    """The payslip verification key (HMAC-SHA256) from ``[web] slip_key_file`` (default
    ``<keys_dir>/payslip.key``), created (0600, 32 random bytes) when missing. ``ConfigError`` when
    it is unreadable or short."""
    return _made_key(*_key_paths(config)[1])
