"""Gate uplink -> broker -> office ingest, with a real mosquitto and a real SQLite ledger."""

from __future__ import annotations

from tests.mqtt.conftest import now, wait_until
from tests.mqtt.payloads import tap


def test_taps_reach_the_ledger_once_in_order_and_leave_the_outbox(broker, office, make_gate):
    office.start(broker)
    gate = make_gate("g1")
    for i in range(50):
        gate.journal.append(tap(i), now=now())
    gate.start(broker)
    wait_until(lambda: len(office.events()) == 50, what="50 ledger rows")
    assert [r.seq for r in office.events("g1")] == list(range(1, 51))
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="outbox drained")
    assert office.dead() == []
