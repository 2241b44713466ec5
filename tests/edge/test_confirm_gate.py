"""A real gate process with a serial EM4100 reader on a pseudo-terminal: an isolated frame whose
checksum passes is line noise and is NOT journaled; a card held (frames repeated every 65 ms) is
journaled exactly once."""

from __future__ import annotations

import signal
import sqlite3
import time

import msgspec
import pytest

from testkit.gate_process import kill_gate, start_gate, write_gate_config
from app.demo.pty_reader import PtyReader
from wire.events import Event

pytestmark = pytest.mark.slow
V001_CARD = "0A04A10001"  # an enrolled card: noise that forms its frame would punch V001


def events(root) -> list[Event]:
    path = root / "state" / "journal.db"
    if not path.exists():
        return []
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT body FROM journal ORDER BY seq").fetchall()
    except sqlite3.OperationalError:  # table not created yet
        rows = []
    finally:
        conn.close()
    return [msgspec.json.decode(body, type=Event) for (body,) in rows]


def taps(root) -> list:
    return [e.payload for e in events(root) if e.payload.__struct_config__.tag == "tap"]


def wait_for(predicate, seconds: float = 30.0):  # safety net against a hung gate, not a timing check
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def test_a_real_gate_journals_a_held_card_once_and_an_isolated_frame_never(tmp_path):
    with PtyReader(tmp_path / "ttyRFID") as pty:
        cfg = write_gate_config(tmp_path, serial_device=pty.path)
        proc = start_gate(cfg)
        try:
            wait_for(lambda: any(e.payload.__struct_config__.tag == "reader" and e.payload.state == "ready"
                                 for e in events(tmp_path)))
            pty.frame(V001_CARD)  # one frame, checksum good, no repeat: noise
            pty.frame("F1F2F3F4F5")  # and a phantom unknown card
            time.sleep(1.0)
            assert taps(tmp_path) == []
            assert not (tmp_path / "shown.jsonl").exists() or (tmp_path / "shown.jsonl").read_text() == ""
            pty.hold(V001_CARD, seconds=0.8)  # the card held in front of the reader
            [tap] = wait_for(lambda: taps(tmp_path))
            time.sleep(1.0)  # the repeats after the first read are the same presentation
            assert [t.uid for t in taps(tmp_path)] == [V001_CARD]
            assert tap.registration == "V001"
            assert len((tmp_path / "shown.jsonl").read_text().splitlines()) == 1
        finally:
            assert kill_gate(proc, signal.SIGTERM) == 0
