"""Each configured reader's health at the gate (edge/reader_health.py): ok / fault / unknown since
when and its last read, carried by the heartbeat file (the screen) and the signed status message
(the office), a change of state sending a status at once."""

from __future__ import annotations

import datetime as dt

from drivers.base import FaultKind, ReaderState, ReaderStatus
from edge.heartbeat import Heartbeat, read_heartbeat
from edge.reader_health import ReaderHealth
from wire import downlink as dl


class Tick:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t


def test_a_reader_goes_from_unknown_to_ok_to_fault_and_back_with_since_and_last_read():
    clock = Tick()
    health = ReaderHealth([("r-control", "control"), ("r-badge", "badge")], clock=clock)
    assert [(v.reader_id, v.state, v.since) for v in health.snapshot()] == [
        ("r-control", "unknown", None), ("r-badge", "unknown", None)]
    health.note_status(ReaderStatus("r-badge", ReaderState.READY, "aberto"))
    v0 = health.version
    clock.t = 1_010.0
    health.note_read("r-badge")
    health.note_status(ReaderStatus("r-badge", ReaderState.READY, "cartão não suportado", FaultKind.UNSUPPORTED_CARD))
    assert health.version == v0  # a fault counted on a working reader: still ok, no change
    clock.t = 1_020.0
    health.note_status(ReaderStatus("r-badge", ReaderState.FAULT, "desconectado", FaultKind.DEVICE_LOST))
    clock.t = 1_021.0
    health.note_status(ReaderStatus("r-badge", ReaderState.ABSENT, "indisponível", FaultKind.OPEN_FAILED))
    badge = health.snapshot()[1]
    assert (badge.state, badge.since, badge.last_read, badge.detail) == ("fault", 1_020.0, 1_010.0, "indisponível")
    assert health.version > v0
    clock.t = 1_030.0
    health.note_status(ReaderStatus("r-badge", ReaderState.READY, "aberto"))
    assert (health.snapshot()[1].state, health.snapshot()[1].since) == ("ok", 1_030.0)


def test_the_heartbeat_file_carries_the_readers_and_a_bad_entry_is_skipped(tmp_path):
    health = ReaderHealth([("r-control", "control")])
    health.note_status(ReaderStatus("r-control", ReaderState.FAULT, "x" * 500))
    beat = Heartbeat(tmp_path, None, readers=health.snapshot)
    beat.beat()
    alive = read_heartbeat(tmp_path / "gate-alive.json")
    (r,) = alive.readers
    assert (r.reader_id, r.kind, r.state, len(r.detail)) == ("r-control", "control", "fault", 160)
    body = (tmp_path / "gate-alive.json").read_text().rstrip()
    bad = body.replace('"readers": [', '"readers": [{"state": "ok"}, ')
    (tmp_path / "gate-alive.json").write_text(bad)
    assert [x.reader_id for x in read_heartbeat(tmp_path / "gate-alive.json").readers] == ["r-control"]
    beat.stop()


def test_the_status_message_names_the_readers_and_a_change_sends_one_at_once(tmp_path):
    from edge.journal import Journal
    from edge.sync import Sync
    from wire.connection import MqttConfig

    journal = Journal(tmp_path / "j.db", port="santos", gate_id="g1", key=b"k" * 64, boot_id="b")
    health = ReaderHealth([("r-control", "control")], clock=lambda: 1_767_000_000.0)
    sync = Sync(MqttConfig(host="127.0.0.1", port=1), journal, port="santos", gate_id="g1", readers=health)
    health.note_status(ReaderStatus("r-control", ReaderState.FAULT, "desconectado"))
    status = dl.decode(sync._status("online", "progress"), dl.GateStatus)
    assert dl.verify_status(status, b"k" * 64)
    (r,) = status.readers
    assert (r.reader_id, r.state, r.since) == ("r-control", "fault", dt.datetime.fromtimestamp(1_767_000_000, dt.UTC))
    journal.close()


def test_a_readers_change_is_sent_at_once_not_after_status_every_s():
    from tests.edge.sync.harness import Harness

    h = Harness(0, status_every_s=30)
    h.connect()
    n = len(h.link.statuses)
    h.advance(1)
    fault = (True, None, (("r-badge", "fault", 1.0),))
    for c in h.core.poll(h.now, fault):
        h.execute(c)
    assert len(h.link.statuses) == n, "within status_every_s a change of health waits"
    h.core.status_soon(h.now)  # what the driver does when ReaderHealth.version moved
    for c in h.core.poll(h.now, fault):
        h.execute(c)
    assert len(h.link.statuses) == n + 1
