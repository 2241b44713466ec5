"""A load gate in a process of its own, for the SIGKILL of a gate (issue 37; tests/ops/test_cluster_faults.py):
the gate's own journal (``edge.journal.Journal``, signed with ``<state>/signing.key``) and sync
(``edge.sync.Sync``, MQTT 3.1.1 to the given hosts) tapping ``testkit.fault_check.shift_tap`` at a
fixed rate. Started again on the same journal after a SIGKILL, it goes on from the first tap its
journal does not hold (a new boot), so the run's taps are those of one uninterrupted gate.

    python -m testkit.fault_gate --journal J --state S --keys K --gate g3 --index 3 --taps N
        --rate 20 --hosts 127.0.0.1:p1,127.0.0.1:p2 --replays R

Each read of its journal for the office's replay command is a line of ``R``
(``ReplayLog.read_jsonl``); each tap journaled a line ``tapped <i>`` on stdout (flushed), then
``done``. SIGTERM stops the sync and closes the journal."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

from edge.journal import Journal
from edge.signing import load_or_create
from edge.sync import Sync
from portgate.config import read_secret
from testkit.fault_check import shift_tap
from wire.connection import MqttConfig
from wire.events import TapPayload


def taps_held(journal: Journal) -> int:
    """How many taps the journal holds (the next tap's index)."""
    return sum(isinstance(e.payload, TapPayload) for e in journal.events_between(1, journal.last_seq()))


def log_replays(journal: Journal, path: Path) -> None:
    read = journal.events_between

    def observed(seq_from: int, seq_to: int):
        out = read(seq_from, seq_to)
        line = {"gate": journal.gate_id, "seqs": [e.seq for e in out], "at": dt.datetime.now(dt.UTC).isoformat()}
        with path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        return out

    journal.events_between = observed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    for name in ("journal", "state", "keys", "gate", "hosts", "replays"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--index", type=int, required=True)
    p.add_argument("--taps", type=int, required=True)
    p.add_argument("--rate", type=float, required=True)
    a = p.parse_args(argv)
    journal = Journal(a.journal, port="santos", gate_id=a.gate, key=read_secret(Path(a.keys) / f"{a.gate}.key"),
                      boot_id=str(uuid.uuid4()), signer=load_or_create(a.state))
    start = taps_held(journal)  # before the replay log wraps the journal's reads
    log_replays(journal, Path(a.replays))
    mqtt = MqttConfig(protocol="3.1.1", hosts=a.hosts.split(","), reconnect_min_s=0.2, reconnect_max_s=1)
    sync = Sync(mqtt, journal, port="santos", gate_id=a.gate).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    for i in range(start, a.taps):
        if stop.is_set():
            break
        payload, at = shift_tap(a.index, i)
        journal.append(payload, now=at)
        sync.notify()
        print(f"tapped {i}", flush=True)
        time.sleep(1.0 / a.rate)
    print("done", flush=True)
    stop.wait()
    sync.stop()
    journal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
