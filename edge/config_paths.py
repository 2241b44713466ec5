"""The paths of ``gate.toml`` that ``edge run`` opens at start-up, checked before it opens them, so
that ``edge check-config`` refuses exactly what ``edge run`` refuses, with the same one line
(``ConfigError`` naming the key and the path; tests/ops/test_check_config_refusals.py):

- ``$.state_dir``: the directory of store.db, journal.db and ``gate.lock`` must exist or be
  creatable, and ``gate.lock`` openable for writing (``edge.state_lock.StateDirLock.take``'s words);
  the check makes no directory or file it leaves behind;
- ``$.readers[N].device`` of a ``fifo`` reader: a FIFO, or nothing yet in an existing directory
  (``drivers.fifo_reader`` makes the pipe);
- ``$.indicator_file`` (``indicator = "file"``): not a directory, in an existing directory (the
  file is made there, never its directory).

Serial and wedge devices are not checked: a reader unplugged at start-up is retried, not refused.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from edge.state_lock import LOCK_NAME
from portgate.errors import ConfigError


def check_gate_paths(cfg) -> None:
    """``ConfigError`` naming the key of the first path ``edge run`` could not open (see the module)."""
    _state_dir(Path(cfg.state_dir))
    for i, reader in enumerate(cfg.readers):
        if reader.driver == "fifo" and reader.device:
            _fifo(Path(reader.device), f"$.readers[{i}].device")
    if cfg.indicator == "file" and cfg.indicator_file:
        _made_in_its_directory(Path(cfg.indicator_file), "$.indicator_file")


def _fifo(path: Path, key: str) -> None:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        _made_in_its_directory(path, key)
        return
    except OSError as exc:
        raise ConfigError(f"cannot open {path}: {exc.strerror or exc}", key=key) from exc
    if not stat.S_ISFIFO(mode):
        raise ConfigError(f"{path} is not a FIFO (a fifo reader reads a named pipe)", key=key)


def _made_in_its_directory(path: Path, key: str) -> None:
    """A file the gate makes when missing: ``path`` not a directory, its directory existing."""
    if path.is_dir():
        raise ConfigError(f"{path} is a directory, not a file", key=key)
    if not path.parent.is_dir():
        raise ConfigError(f"the directory of {path} does not exist (the file is made there, never the "
                          "directory)", key=key)


def _state_dir(state: Path) -> None:
    """Make what ``StateDirLock.take`` makes, then take back what this made (the missing directories,
    a probe file): ``ConfigError`` in ``take``'s words naming ``$.state_dir``. An existing
    ``gate.lock`` is opened for writing, never created or removed (a gate starting meanwhile keeps
    its lock)."""
    lock = state / LOCK_NAME
    made: list[Path] = []
    try:
        _make_dirs(state, made)
        if lock.exists():
            os.close(os.open(lock, os.O_RDWR | os.O_CLOEXEC))
        else:
            fd, probe = tempfile.mkstemp(dir=state, prefix=".check-config-")
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"cannot open the gate's lock file {lock}: {exc.strerror or exc}",
                          key="$.state_dir") from exc
    finally:
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:
                pass  # a gate started meanwhile filled it: it is its directory now


def _make_dirs(state: Path, made: list[Path]) -> None:
    """The missing directories of ``state``, made (appended to ``made``); ``ConfigError`` naming the
    one that cannot be made and why."""
    for d in reversed([d for d in (state, *state.parents) if not d.exists()]):
        try:
            d.mkdir()
        except OSError as exc:
            raise ConfigError(f"cannot make the directory {d}: {exc.strerror or exc}", key="$.state_dir") from exc
        made.append(d)
