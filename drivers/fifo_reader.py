"""A card reader fed through a named pipe (FIFO): one read per line, ``UID`` or ``KIND UID``.

Used by tests to script a burst of taps into a real gate process
(``driver = "fifo"`` in gate.toml). Implements ``drivers.base.Reader``. The pipe is opened
read-write, so it never sees end-of-file when a writer goes away, and read one byte at a time, so a
killed gate loses at most the line it was reading (like a tap that got no light). A line that is
not valid UTF-8 or not ``[KIND] UID`` is still delivered (as raw text) for the gate to DENY (G1):
nothing a reader sends stops the gate.
"""

from __future__ import annotations

import datetime as dt
import os
import select
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from drivers.base import CardRead, ReaderState, ReaderStatus, StatusCallback
from portgate.errors import BadInput
from portgate.records import ReaderKind
from portgate.uid import canonical_uid


class FifoReader:
    def __init__(self, reader_id: str, kind: ReaderKind | str, path: str | Path, *,
                 on_status: StatusCallback | None = None) -> None:
        self.reader_id = reader_id
        self.kind = ReaderKind(kind)
        self.path = Path(path)
        self._on_status = on_status
        self._closed = False
        if not self.path.exists():
            os.mkfifo(self.path, 0o600)
        elif not stat.S_ISFIFO(self.path.stat().st_mode):
            raise BadInput("not a FIFO", where=str(self.path))
        self._fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)

    def reads(self) -> Iterator[CardRead]:
        if self._on_status:
            self._on_status(ReaderStatus(self.reader_id, ReaderState.READY, str(self.path)))
        buf = b""
        while not self._closed:
            try:
                ready, _, _ = select.select([self._fd], [], [], 0.2)
            except (OSError, ValueError):
                return  # closed under us
            if not ready:
                continue
            try:
                byte = os.read(self._fd, 1)
            except BlockingIOError:
                continue
            except OSError:
                return
            if byte != b"\n":
                buf += byte
                if len(buf) > 4096:  # hostile input: no newline for ever
                    buf = b""
                continue
            line, buf = buf.decode("utf-8", errors="replace").strip(), b""
            if line:
                yield self._read(line)

    def _read(self, line: str) -> CardRead:
        parts = line.split()
        kind, raw = self.kind, line
        if len(parts) == 2 and parts[0] in ("control", "badge"):
            kind, raw = ReaderKind(parts[0]), parts[1]
        try:
            uid = canonical_uid(raw)
        except BadInput:
            uid = raw  # the gate denies it (G1 malformed) and journals it
        return CardRead(uid=uid, reader_id=self.reader_id, kind=kind, mono_ns=time.monotonic_ns(),
                        wall=dt.datetime.now(dt.UTC))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                os.close(self._fd)
            except OSError:
                pass

    def __enter__(self) -> FifoReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
