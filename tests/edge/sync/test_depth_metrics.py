"""The outbox depth the uplink reports (the Prometheus gauge and the signed status) follows the
journal's sent ranges: out-of-order marks and priority rows sent ahead are counted exactly."""

from __future__ import annotations

import datetime as dt

from prometheus_client import REGISTRY

from edge.journal import Journal
from edge.rules.model import Now
from edge.sync import Sync, SyncSettings
from wire import downlink as dl
from wire.connection import MqttConfig
from wire.events import AlertPayload, TapPayload

T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)
NOW = Now(wall=T0, mono_ns=1, clock_trusted=True)


def test_the_depth_gauge_and_the_status_count_exactly_the_rows_not_acknowledged(tmp_path):
    j = Journal(tmp_path / "j.db", port="santos", gate_id="g-depth", key=b"k" * 16, boot_id="b")
    j.append_many([TapPayload(uid=f"{i:08X}", reader_id="r", reader_kind="control", decision="admit")
                   for i in range(10)], now=NOW)
    j.append(AlertPayload(code="X", detail="d"), now=NOW, priority=1)  # seq 11
    j.mark_sent([11, 2, 7, 3])
    sync = Sync(MqttConfig(host="127.0.0.1", port=1), j, port="santos", gate_id="g-depth",
                settings=SyncSettings(high_water=100), now=lambda: NOW)  # never started: no broker needed
    sync._check_depth()
    assert REGISTRY.get_sample_value("portgate_outbox_depth", {"gate_id": "g-depth"}) == 7
    status = dl.decode(sync._status("online", "progress"), dl.GateStatus)
    assert (status.outbox_depth, status.oldest_unsent_at, status.sent_seq) == (7, T0, 0)
    j.mark_sent([1, 4, 5, 6, 8, 9, 10])
    sync._check_depth()
    assert REGISTRY.get_sample_value("portgate_outbox_depth", {"gate_id": "g-depth"}) == 0
    assert j.sent_through() == 11 and j.oldest_unsent_at() is None
    j.close()


def test_the_status_is_dated_by_the_gate_s_clock_not_the_machine_s(tmp_path):
    """A gate's status ``at`` (the office's "desde") is its clock's reading, the one its events
    carry: the demo's scripted day (issue 34 item 15), not the machine's date."""
    j = Journal(tmp_path / "j.db", port="santos", gate_id="g-clock", key=b"k" * 16, boot_id="b")
    sync = Sync(MqttConfig(host="127.0.0.1", port=1), j, port="santos", gate_id="g-clock",
                settings=SyncSettings(high_water=100), now=lambda: NOW)
    assert dt.datetime.now(dt.UTC) - T0 > dt.timedelta(days=1)  # else the two clocks could not be told apart
    for state, reason in (("online", "progress"), ("offline", "will")):
        assert dl.decode(sync._status(state, reason), dl.GateStatus).at == T0
    j.close()
