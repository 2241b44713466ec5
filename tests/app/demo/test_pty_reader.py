"""The demo's pseudo-terminal card reader (``app.demo.pty_reader``) against the real EM4100 serial
driver: a card held is read even when the writer is paused in the middle of the hold."""

from __future__ import annotations

import queue
import threading
import time

from app.demo.pty_reader import CLOSE_S, PtyReader
from drivers.serial_rfid import Em4100SerialReader
from drivers.base import ReaderState
from portgate.records import ReaderKind


class PausedWriter(PtyReader):
    """A writer whose first frames are each followed by a pause longer than the reader's 150 ms
    confirm window (the cluster demo's process on a loaded machine: issue 37)."""

    def __init__(self, path, pauses: int, pause_s: float) -> None:  # type: ignore[no-untyped-def]
        super().__init__(path)
        self.pauses, self.pause_s = pauses, pause_s
        self.sent: list[float] = []

    def frame(self, uid: str, **kwargs: object) -> None:
        super().frame(uid, **kwargs)
        self.sent.append(time.monotonic())
        if self.pauses:
            self.pauses -= 1
            time.sleep(self.pause_s)


def test_a_card_held_by_a_paused_writer_is_still_read(tmp_path):
    """Three pauses of 0.3 s in a 0.6 s hold: before, the hold ended on frames 0.37 s apart and the
    reader's confirm-by-repeat never read the card (a badge lost, a pair decided wrongly). Now the
    hold goes on until two repeats in a row come close together, and the card is read once."""
    reads: queue.Queue = queue.Queue()
    statuses: queue.Queue = queue.Queue()
    with PausedWriter(tmp_path / "tty", pauses=3, pause_s=0.3) as device:
        reader = Em4100SerialReader("paused", ReaderKind.BADGE, str(device.path), on_status=statuses.put)
        thread = threading.Thread(target=lambda: [reads.put(r) for r in reader.reads()], daemon=True)
        thread.start()
        try:
            while statuses.get(timeout=60).state is not ReaderState.READY:
                pass
            count = device.hold("0B0B01BADE", seconds=0.6)
            read = reads.get(timeout=60)
            assert read.uid == "0B0B01BADE"
            gaps = [b - a for a, b in zip(device.sent, device.sent[1:])]
            assert count == len(device.sent) >= 5 and sum(g <= CLOSE_S for g in gaps[-2:]) == 2, gaps
            assert reads.empty()  # one presentation, one read
        finally:
            reader.close()
            thread.join(15)
