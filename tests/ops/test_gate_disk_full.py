"""A full disk on the gate: publishing needs no disk. ``portgate edge run`` with its state directory
on a small real file system (tmpfs mounted for the test) that the test fills: the reads it refuses
are shown as DENY with their UID, the events it had journaled are still published, the marks are
retried once space returns, and one DISK_FULL_REFUSED alert says how many reads were refused and
when. Also the WAL stays near its limit and is given back at close."""

from __future__ import annotations

import errno
import json
import os
import time
import uuid

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from app.demo.mosquitto import Mosquitto
from edge.journal import Journal
from edge.rules.model import Now
from edge.sqlite_files import WAL_AUTOCHECKPOINT_PAGES, WAL_SIZE_LIMIT
from testkit.gate_process import write_gate_config
from testkit.tmpfs import mounted_tmpfs
from testkit.wait import wait_until
from tests.ops.conftest import free_port, scrape
from wire.events import TapPayload, decode

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")


@pytest.fixture
def small_fs(tmp_path):
    """A real 4 MiB tmpfs mounted at ``tmp_path/state``; unmounted when the test ends."""
    with mounted_tmpfs(tmp_path / "state", "4m") as mnt:
        yield mnt


def fill(directory) -> int:
    """Write ``directory/filler`` until the file system refuses (ENOSPC); return the bytes written."""
    written = 0
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 16, 4096, 1):
            while True:
                try:
                    written += os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return written


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in scrape")


class Collector:
    """A paho subscriber on the gate's events topic: every event received, decoded."""

    def __init__(self, broker: Mosquitto, topic: str) -> None:
        self.events = []
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"collector-{uuid.uuid4().hex[:6]}")
        self.client.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
        self.client.on_message = lambda _c, _u, m: self.events.append(decode(m.payload))
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def seqs(self) -> set[int]:
        return {e.seq for e in self.events}

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def test_gate_on_a_full_disk_keeps_publishing_and_reports_the_refused_reads(tmp_path, small_fs, start_service):
    broker = Mosquitto(tmp_path / "broker")  # its port is known now; started once the disk is full
    # a window of 5: the 20+ journaled rows take several windows, each opened only after PUBACKs
    # whose marks fail on the full disk
    mport = free_port()
    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text().replace("[[readers]]", f"metrics_port = {mport}\n\n[[readers]]") + f"""
[mqtt]
host = "127.0.0.1"
port = {broker.port}
reconnect_min_s = 0.2
reconnect_max_s = 1

[sync]
window = 5
read_ahead = 5
check_every_s = 0.2
unrouted_backoff_s = 0.2
unrouted_backoff_max_s = 0.5
""")
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)
    shown = tmp_path / "shown.jsonl"
    collector = None
    try:
        svc = start_service(["edge", "run", "--config", str(cfg)])
        journaled = [f"F10000{i:02d}" for i in range(20)]
        os.write(fifo, "".join(u + "\n" for u in journaled).encode())
        wait_until(lambda: shown.exists() and len(shown.read_text().splitlines()) >= 20 or not svc.alive(),
                   what="20 reads journaled")
        assert svc.alive(), svc.output()
        journal_rows = metric(scrape(mport), 'portgate_outbox_depth{gate_id="g-aurora"}')
        assert journal_rows >= 20  # the 20 taps and the reader's own status events, all unsent

        assert fill(small_fs) > 0  # the state directory is full from here on
        refused = ["F1000090", "F1000091", "F1000092"]
        os.write(fifo, "".join(u + "\n" for u in refused).encode())
        wait_until(lambda: len(shown.read_text().splitlines()) >= 23, what="3 refused reads shown")
        lines = [json.loads(x) for x in shown.read_text().splitlines()]
        for line, uid in zip(lines[20:], refused, strict=True):
            assert line["outcome"] == "deny" and line["rules"] == ["INTERNAL"] and line["seq"] is None
            assert line["uid"] == uid  # never null: the watchman's record names the card

        broker.start()
        collector = Collector(broker, "portgate/v1/santos/gate/g-aurora/events")
        wait_until(lambda: collector.seqs() >= set(range(1, int(journal_rows) + 1)), timeout=60,
                   what="every journaled event published from a full disk")
        wait_until(lambda: "uplink.marks_deferred" in svc.output(), what="marks deferred")
        assert metric(scrape(mport), 'portgate_outbox_depth{gate_id="g-aurora"}') == journal_rows  # none marked
        assert not any(e.payload.code == "DISK_FULL_REFUSED" for e in collector.events
                       if getattr(e.payload, "code", None))

        (small_fs / "filler").unlink()  # space returns
        wait_until(lambda: any(getattr(e.payload, "code", None) == "DISK_FULL_REFUSED" for e in collector.events),
                   timeout=60, what="the DISK_FULL_REFUSED alert published")
        alert = next(e for e in collector.events if getattr(e.payload, "code", None) == "DISK_FULL_REFUSED")
        words = dict(w.split("=", 1) for w in alert.payload.detail.split())
        assert words["refused_reads"] == "3" and words["refused_other"] == "0"
        assert words["first"] <= words["last"] and words["first"].endswith("Z")
        assert alert.seq == journal_rows + 1  # the refused reads used no sequence number
        wait_until(lambda: metric(scrape(mport), 'portgate_outbox_depth{gate_id="g-aurora"}') == 0,
                   timeout=30, what="the deferred marks written once space returned")
        assert svc.stop() == 0
        assert len([e for e in collector.events if getattr(e.payload, "code", None) == "DISK_FULL_REFUSED"]) >= 1
        assert "uplink.marks_recovered" in svc.output() and "sync.pump_error" not in svc.output()
    finally:
        os.close(fifo)
        if collector is not None:
            collector.close()
        broker.kill()


def _now() -> Now:
    import datetime as dt

    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


def test_journal_wal_stays_near_its_limit_and_is_truncated_at_close(small_fs):
    j = Journal(small_fs / "journal.db", port="santos", gate_id="g-aurora", key=b"k" * 32, boot_id="b" * 36)
    wal = small_fs / "journal.db-wal"
    largest = 0
    for i in range(3000):  # about 7,000 WAL frames: SQLite's default would let the WAL reach 4 MiB
        j.append(TapPayload(uid=f"0A04A1{i:04d}", reader_id="r-control", reader_kind="control",
                            decision="admit", message="Entrada liberada"), now=_now())
        largest = max(largest, wal.stat().st_size if wal.exists() else 0)
        if i % 500 == 499:
            j.mark_sent(range(1, i + 2))
    frame = 4096 + 24
    assert largest <= max(WAL_SIZE_LIMIT, WAL_AUTOCHECKPOINT_PAGES * frame) + 8 * frame, largest
    j.close()
    assert not wal.exists() or wal.stat().st_size == 0
