"""A gate SIGKILLed after the broker's PUBACKs and before its marks were committed: at-least-once.

The gate's uplink runs in a child process against a real mosquitto; its journal commits the first
mark and then never returns from the next ones (the SD card "hangs"), so the process dies with rows
acknowledged by the broker but not marked sent. After the kill the reopened journal still holds
exactly those rows, the gate sends them again, and the office keeps one row per event id."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from edge.journal import Journal
from tests.central.ingest.conftest import PORT, now
from tests.central.ingest.payloads import tap
from testkit.wait import wait_until

ROOT = Path(__file__).resolve().parents[3]
N = 30

CHILD = r"""
import json, sys, threading, time
from edge.journal import Journal
from edge.sync import Sync, SyncSettings
from wire.connection import MqttConfig

path, key, port, gate_id, host, mqtt_port = sys.argv[1:7]

class HangingJournal(Journal):
    marks = 0
    def mark_sent(self, seqs):
        self.marks += 1
        if self.marks == 1:
            super().mark_sent(seqs)
            print(json.dumps({"marked": sorted(seqs)}), flush=True)
            return
        threading.Event().wait()  # the later marks never commit

journal = HangingJournal(path, port=port, gate_id=gate_id, key=key.encode(), boot_id="doomed")
sync = Sync(MqttConfig(host=host, port=int(mqtt_port)), journal, port=port, gate_id=gate_id,
            settings=SyncSettings(window=10, rate=0, mark_every_s=0.001)).start()
while sync.stats["acked"] < int(sys.argv[7]):
    time.sleep(0.01)
print(json.dumps({"acked": sync.stats["acked"]}), flush=True)
threading.Event().wait()
"""


def _said(child, key):
    """The value of ``key`` in the child's next JSON line with it (its log lines go there too)."""
    for line in child.stdout:
        if line.startswith("{") and key in (said := json.loads(line)):
            return said[key]
    raise AssertionError(f"the gate process ended without saying {key!r}")


def test_a_gate_killed_between_puback_and_mark_sends_the_unmarked_rows_again_and_the_office_dedups(
        tmp_path, broker, office, make_gate):
    ingest = office.start(broker)
    gate = make_gate("g1")
    gate.journal.append_many([tap(i) for i in range(N)], now=now())
    path = gate.journal.path
    gate.journal.close()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), gate.key.decode(), PORT, "g1", broker.host, str(broker.port),
         str(N)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        marked = _said(child, "marked")
        assert _said(child, "acked") == N
        wait_until(lambda: len(office.events("g1")) == N, what="every event reached the office once")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert 0 < len(marked) < N, "the kill must fall between a committed mark and the others"

    gate.journal = Journal(path, port=PORT, gate_id="g1", key=gate.key, boot_id="after-kill")
    unmarked = [s for s in range(1, N + 1) if s not in marked]
    assert gate.journal.outbox_depth() == len(unmarked)
    assert [s for s, _body in gate.journal.outbox_wire(100)] == unmarked  # acked, never marked: kept
    sync = gate.start(broker)
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="the unmarked rows sent again and marked")
    assert sync.stats["published"] == len(unmarked)
    wait_until(lambda: ingest.workers[0].stats["duplicates"] >= len(unmarked), what="resends seen as duplicates")
    rows = office.events("g1")
    assert sorted(r.seq for r in rows) == list(range(1, N + 1)) and len({r.event_id for r in rows}) == N
