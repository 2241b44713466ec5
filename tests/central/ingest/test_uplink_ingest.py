"""Gate uplink -> broker -> office ingest, with a real mosquitto and a real SQLite ledger."""

from __future__ import annotations

from tests.central.ingest.conftest import now
from testkit.wait import wait_until
from tests.central.ingest.payloads import tap


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


def test_the_uplink_publishes_the_journal_bytes_once_each_in_outbox_order(broker, make_gate):
    """A small window, read-ahead and mark batch make the pump re-read the outbox many times while
    rows are in flight or acknowledged but not yet marked: each row still goes out exactly once,
    priority first then by seq, as the very bytes stored in the journal (no re-encoding)."""
    import threading

    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from edge.journal import PRIORITY_HIGH
    from wire import topics
    from wire.events import AlertPayload

    from tests.central.ingest.conftest import PORT

    got: list[bytes] = []
    subscribed = threading.Event()
    sub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="raw-sub", protocol=mqtt.MQTTv5)
    sub.on_message = lambda _c, _u, msg: got.append(bytes(msg.payload))
    sub.on_subscribe = lambda *_a: subscribed.set()
    sub.connect(broker.host, broker.port)
    sub.subscribe(topics.gate_events(PORT, "g1"), qos=1)
    sub.loop_start()
    try:
        gate = make_gate("g1")
        gate.journal.append_many([tap(i) for i in range(37)], now=now())
        gate.journal.append(AlertPayload(code="TEST", detail="priority"), now=now(), priority=PRIORITY_HIGH)
        stored = gate.journal.outbox_wire(100)
        assert [seq for seq, _ in stored] == [38, *range(1, 38)]
        wait_until(subscribed.is_set, what="subscription acknowledged")
        gate.start(broker, window=4, read_ahead=5, mark_batch=3, rate=0)
        wait_until(lambda: gate.journal.outbox_depth() == 0, what="outbox drained")
        wait_until(lambda: len(got) >= len(stored), what="every row received")
        assert got == [body for _, body in stored]
        assert gate.sync.stats["published"] == len(stored) == gate.sync.stats["acked"]
    finally:
        sub.loop_stop()
        sub.disconnect()


def test_G11_coverage_events_reach_the_ledger_and_are_stored_not_dead_lettered(broker, office, make_gate):
    import datetime as dt

    from sqlalchemy import select

    from central.ledger.schema import events
    from edge.journal import PRIORITY_HIGH
    from wire.events import CoveragePayload

    office.start(broker)
    gate = make_gate("g1")
    due = dt.datetime(2026, 3, 15, 4, 30, tzinfo=dt.UTC)
    common = dict(ship="9300001", date=dt.date(2026, 3, 15), period="01-07", voyage="long_haul",
                  due_at=due, period_end=due + dt.timedelta(hours=5, minutes=30), dispatched=["V001"])
    gate.journal.append(CoveragePayload(state="raised", **common), now=now(), priority=PRIORITY_HIGH)
    gate.journal.append(CoveragePayload(state="ended", ended_by="watchman_admitted", watchman="V002", **common),
                        now=now(), priority=PRIORITY_HIGH)
    gate.start(broker)
    wait_until(lambda: len(office.events("g1")) == 2, what="2 coverage rows")
    with office.engine.connect() as c:
        rows = c.execute(select(events.c.type, events.c.payload).order_by(events.c.seq)).all()
    assert [(t, p["state"], p["period"]) for t, p in rows] == [("coverage", "raised", "01-07"),
                                                                ("coverage", "ended", "01-07")]
    assert rows[1][1]["watchman"] == "V002"
    assert office.dead() == []
