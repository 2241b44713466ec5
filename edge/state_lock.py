"""One gate service per state directory: an exclusive ``fcntl.flock`` on ``<state_dir>/gate.lock``,
held for the life of the service.

The SQLite locks on ``store.db`` and ``journal.db`` only show while a process writes; two services
on one directory would otherwise both start and interleave their sequence numbers. The kernel gives
the lock back when the process ends, however it ends (``kill -9`` included), so a stale lock file
never blocks a restart; the file itself stays, empty (``fuser -v <state_dir>/gate.lock`` names the
holder).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from portgate.errors import StoreError, StoreLocked

LOCK_NAME = "gate.lock"


class StateDirLock:
    """The held lock on ``<state_dir>/gate.lock``. Build it with ``StateDirLock.take(state_dir)``;
    ``release()`` (idempotent) gives it back."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def take(cls, state_dir: Path | str) -> StateDirLock:
        """Create ``state_dir`` if needed, open ``gate.lock`` (0600) and take an exclusive flock
        without waiting. Raises ``StoreLocked`` (path = the lock file) when another process holds
        it: the caller waits and tries again (``edge.service.wait_unlocked``); ``StoreError`` when
        the directory or file cannot be made or opened (permissions, a full disk)."""
        path = Path(state_dir) / LOCK_NAME
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot open the gate's lock file {path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(fd)
            raise StoreLocked(path) from exc
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock the gate's lock file {path}: {exc.strerror or exc}") from exc
        return cls(path, fd)

    def release(self) -> None:
        """Give the lock back and close the file (the file stays). Safe to call twice."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock
