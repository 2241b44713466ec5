"""A pseudo-terminal that behaves like a USB serial RFID reader (RDM6300 / line reader).

The driver opens ``path``, a symlink to the current ``/dev/pts/N``. ``unplug()`` closes the master
(the driver's reads fail with EIO, as after a USB unplug) and removes the symlink; ``plug()`` makes
a new pty and points the symlink at it, so "the device vanishes and comes back" is real.
"""

from __future__ import annotations

import os
import pty
import random
import time
import tty
from pathlib import Path

from drivers.em4100 import encode_frame

REPEAT_S = 0.065  # RDM6300 repeats the frame about every 65 ms while a card is held
#: a held card's frames go on until two repeats in a row each followed the previous one within
#: this (the reader's confirm-by-repeat window is 150 ms; a margin for the reader's own delays)
CLOSE_S = 0.1
GIVE_UP_S = 10.0  # a card held this long past ``seconds`` without two close repeats: stop anyway


class PtyReader:
    """Writer side of a fake serial reader. Use as a context manager (plugged on enter)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._master: int | None = None
        self.slave_name: str | None = None

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def plug(self) -> None:
        """Create a new pty and point ``path`` at its slave (atomically)."""
        if self._master is not None:
            return
        master, slave = pty.openpty()
        tty.setraw(slave)
        self.slave_name = os.ttyname(slave)
        os.close(slave)  # the pty stays usable while the master is open
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(self.slave_name)
        tmp.replace(self.path)
        self._master = master

    def unplug(self) -> None:
        """Remove the device: the symlink goes and the master closes (reads on the slave fail)."""
        self.path.unlink(missing_ok=True)
        if self._master is not None:
            os.close(self._master)
            self._master = None

    def write(self, data: bytes) -> None:
        if self._master is None:
            raise RuntimeError("reader is unplugged")
        view = memoryview(data)
        while view:
            n = os.write(self._master, view)
            view = view[n:]

    def frame(self, uid: str, **kwargs: object) -> None:
        """Send one EM4100 frame (``encode_frame`` keywords: ``eol``, ``checksum``)."""
        self.write(encode_frame(uid, **kwargs))  # type: ignore[arg-type]

    def hold(self, uid: str, seconds: float, interval: float = REPEAT_S, pieces: int = 1, **kwargs: object) -> int:
        """Hold a card in front of the reader: repeat its frame every ``interval`` s for ``seconds``,
        and on until two repeats in a row each came within ``CLOSE_S`` of the one before (at most
        ``GIVE_UP_S`` more); returns the count of frames.

        The second condition is what a person holding a card until the gate beeps does. Without it a
        writer stalled past the hold (issue 37: the cluster demo's process, two ports' days, the web
        application and the ledger queries on a loaded machine, paused for over 0.6 s) sent its few
        frames too far apart for the reader's confirm-by-repeat: the card was never read and a
        card + badge pair was decided wrongly.

        ``pieces`` > 1 sends each frame in that many chunks (``split_frame``); ``kwargs`` go to
        ``encode_frame`` (``eol``, ``checksum``)."""
        count, close, previous = 0, 0, None
        start = time.monotonic()
        while True:
            if pieces > 1:
                before = self.split_frame(uid, pieces, **kwargs)
            else:
                before = time.monotonic()
                self.frame(uid, **kwargs)
            now = time.monotonic()  # the frame's last byte went out between ``before`` and ``now``
            count += 1
            close = close + 1 if previous is not None and now - previous <= CLOSE_S else 0
            previous = before
            if now + interval > start + seconds and (close >= 2 or now > start + seconds + GIVE_UP_S):
                return count
            time.sleep(interval)

    def split_frame(self, uid: str, pieces: int = 3, pause: float = 0.01, **kwargs: object) -> float:
        """Send one frame in ``pieces`` chunks with ``pause`` s between them (slow UART, USB
        packetisation; ``pieces=1``: the whole frame at once); ``kwargs`` go to ``encode_frame``.
        Returns ``time.monotonic()`` just before the last chunk was written."""
        data = encode_frame(uid, **kwargs)  # type: ignore[arg-type]
        step = max(1, -(-len(data) // max(1, pieces)))
        last = time.monotonic()
        for i in range(0, len(data), step):
            if i:
                time.sleep(pause)
            last = time.monotonic()
            self.write(data[i : i + step])
        return last

    def noise(self, n: int, seed: int | None = None) -> bytes:
        """Send ``n`` random bytes without STX (line noise); returns them."""
        rng = random.Random(seed)
        data = bytes(rng.choice([b for b in range(256) if b != 0x02]) for _ in range(n))
        self.write(data)
        return data

    def line(self, text: str, eol: bytes = b"\r\n") -> None:
        """Send one line (line-oriented readers)."""
        self.write(text.encode("ascii") + eol)

    def __enter__(self) -> PtyReader:
        self.plug()
        return self

    def __exit__(self, *exc: object) -> None:
        self.unplug()
