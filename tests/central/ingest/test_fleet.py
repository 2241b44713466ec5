"""Downlinks into the real gate store, presence relay, shared subscriptions, broker ACL."""

from __future__ import annotations

import time

import datetime as dt

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import select

from central.ledger.schema import gate_progress
from central.broadcast.csv_source import publish_snapshot
from portgate.records import Card, CardKind, CardStatus, Worker, WorkerStatus
from app.demo.mosquitto import Mosquitto
from tests.central.ingest.conftest import PORT, Office, now
from testkit.wait import wait_until
from tests.central.ingest.payloads import tap
from wire import downlink as dl
from wire import topics
from wire.connection import MqttConfig

pytestmark = pytest.mark.mqtt
AT = dt.datetime(2026, 3, 2, 10, tzinfo=dt.UTC)


def office_client(broker, user=None, password=None) -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="office-pub", protocol=mqtt.MQTTv5)
    if user:
        c.username_pw_set(user, password)
    c.connect(broker.host, broker.port)
    c.loop_start()
    return c


def roster(version, regs):
    return dl.RosterSnapshot(
        version=version, at=AT,
        workers=[Worker(r, f"W{r}", "vigia", WorkerStatus.ACTIVE) for r in regs],
        cards=[Card(f"AA{int(r):06d}", CardKind.CONTROL, r, CardStatus.ACTIVE) for r in regs],
    )


def test_snapshot_then_delta_then_out_of_order_delta_asks_for_a_snapshot(broker, make_gate):
    gate = make_gate("g1")
    c = office_client(broker)
    publish_snapshot(c, PORT, "roster", roster(5, ["1001", "1002"]))  # retained before the gate connects
    sync = gate.start(broker, store=gate.store)
    wait_until(lambda: gate.store.versions()["roster"][0] == 5, what="snapshot applied")
    assert gate.store.worker("1002") is not None
    delta = dl.RosterDelta(from_version=5, to_version=6, at=AT, workers_upsert=[Worker("1003", "W", "vigia", WorkerStatus.ACTIVE)])
    c.publish(topics.downlink(PORT, "roster", "delta"), dl.encode(delta), qos=1).wait_for_publish(5)
    wait_until(lambda: gate.store.versions()["roster"][0] == 6, what="delta applied")
    assert gate.store.worker("1003") is not None
    requests = []
    c.on_message = lambda cl, u, m: requests.append(dl.decode(m.payload, dl.Command))
    c.subscribe(topics.all_gate_requests(PORT), 1)
    wait_until(lambda: True)
    skipping = dl.RosterDelta(from_version=8, to_version=9, at=AT)
    c.publish(topics.downlink(PORT, "roster", "delta"), dl.encode(skipping), qos=1).wait_for_publish(5)
    wait_until(lambda: requests, what="snapshot request")
    assert requests[0] == dl.SnapshotRequest(gate_id="g1", kind="roster", have_version=6, at=requests[0].at)
    assert gate.store.versions()["roster"][0] == 6  # the copy is kept
    assert sync.downlink.copies()["roster"].version == 6
    c.loop_stop()


def test_a_snapshot_request_nobody_was_subscribed_to_is_sent_again(broker, make_gate):
    """After a broker restart the office's shared subscription to requests is missing until it
    subscribes again: the request comes back "No matching subscribers" and goes out again later."""
    gate = make_gate("g1")
    c = office_client(broker)
    publish_snapshot(c, PORT, "roster", roster(5, ["1001"]))
    sync = gate.start(broker, store=gate.store, unrouted_backoff_s=0.3, unrouted_backoff_max_s=0.6)
    wait_until(lambda: gate.store.versions()["roster"][0] == 5, what="snapshot applied")
    skipping = dl.RosterDelta(from_version=8, to_version=9, at=AT)
    c.publish(topics.downlink(PORT, "roster", "delta"), dl.encode(skipping), qos=1).wait_for_publish(5)
    wait_until(lambda: sync.stats["requests_unrouted"] >= 1, what="the request routed to nobody")
    requests = []
    c.on_message = lambda cl, u, m: requests.append(dl.decode(m.payload, dl.Command))
    c.subscribe(topics.all_gate_requests(PORT), 1)  # the office is back
    wait_until(lambda: requests, what="the request sent again")
    assert requests[0] == dl.SnapshotRequest(gate_id="g1", kind="roster", have_version=5, at=requests[0].at)
    time.sleep(1.0)
    assert len(requests) == 1, "routed once: not sent again"
    c.loop_stop()


def test_a_blocklist_delta_blocks_the_card_at_the_gate(broker, make_gate):
    gate = make_gate("g1")
    c = office_client(broker)
    publish_snapshot(c, PORT, "roster", roster(1, ["1001"]))
    gate.start(broker, store=gate.store)
    wait_until(lambda: gate.store.versions()["roster"][0] == 1, what="roster")
    block = dl.CardsDelta(from_version=0, to_version=1, at=AT, blocked=[dl.BlockedCard("AA001001", "confiscated", AT)])
    snap = dl.CardsSnapshot(version=0, at=AT, blocked=[])
    publish_snapshot(c, PORT, "cards", snap)
    c.publish(topics.downlink(PORT, "cards", "delta"), dl.encode(block), qos=1).wait_for_publish(5)
    wait_until(lambda: gate.store.card("AA001001").status == CardStatus.CONFISCATED, what="card blocked")
    c.loop_stop()


def test_an_admission_at_one_gate_is_relayed_as_presence_to_the_others(broker, office, make_gate):
    office.start(broker)
    g1, g2 = make_gate("g1"), make_gate("g2")
    g1.start(broker, store=g1.store)
    g2.start(broker, store=g2.store)
    wait_until(lambda: g2.sync.connected.is_set(), what="g2 connected")
    g1.journal.append(tap(1, registration="1001", decision="admit"), now=now())
    g1.sync.notify()
    wait_until(lambda: g2.store.open_shift("1001") is not None, what="presence at g2")
    assert g2.store.open_shift("1001").gate_id == "g1"
    g1.journal.append(tap(2, registration="1001", decision="exit"), now=now())
    g1.sync.notify()
    wait_until(lambda: g2.store.open_shift("1001") is None, what="presence cleared at g2")


def test_two_ingest_workers_on_a_shared_subscription_give_the_same_ledger_as_one(tmp_path, broker, keys_dir, make_gate):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
    one = Office(tmp_path / "one", keys_dir)
    two = Office(tmp_path / "two", keys_dir)
    try:
        # Two offices: each needs its own MQTT client ids (the same id would make the broker drop
        # one session for the other, again and again).
        one.start(broker, share_group="one", mqtt=MqttConfig(host=broker.host, port=broker.port,
                                                            client_id="ledger-one"))
        pair = two.start(broker, workers=2, share_group="two", batch_size=20,
                         mqtt=MqttConfig(host=broker.host, port=broker.port, client_id="ledger-two"))
        gates = [make_gate(f"g{i}") for i in (1, 2, 3)]
        for g in gates:
            g.journal.append_many([tap(i) for i in range(300)], now=now())
            g.start(broker)
        wait_until(lambda: len(one.events()) == 900 and len(two.events()) == 900, timeout=120, what="both ledgers")
        key = lambda rows: sorted((r.gate_id, r.seq, r.event_id) for r in rows)  # noqa: E731
        assert key(one.events()) == key(two.events())
        assert all(w.stats["inserted"] > 0 for w in pair.workers), "the broker spread the stream"

        def progress(o):
            with o.engine.connect() as c:
                return sorted(c.execute(select(gate_progress.c.gate_id, gate_progress.c.contiguous_seq)).all())

        wait_until(lambda: progress(two) == progress(one) == [("g1", 300), ("g2", 300), ("g3", 300)], what="progress")
    finally:
        one.stop_all()
        two.stop_all()


ACL = """\
user office
topic readwrite portgate/#

pattern write portgate/v1/santos/gate/%u/events
pattern write portgate/v1/santos/gate/%u/status
pattern read portgate/v1/santos/gate/%u/cmd
pattern write portgate/v1/santos/gate/%u/requests

user g1
topic read portgate/v1/santos/down/#
"""


def test_the_broker_acl_refuses_a_gate_publishing_as_another(tmp_path, office, make_gate):
    users = {"office": "op", "g1": "p1", "g2": "p2"}
    broker = Mosquitto(tmp_path / "acl", users=users, acl=ACL).start()
    try:
        pw = tmp_path / "office.pw"
        pw.write_text("op")
        pw.chmod(0o600)
        office.start(broker, mqtt=MqttConfig(host=broker.host, port=broker.port, username="office", password_file=str(pw)))
        g1pw = tmp_path / "g1.pw"
        g1pw.write_text("p1")
        g1pw.chmod(0o600)
        impostor = make_gate("g2")  # has g2's key and gate id, but logs in with g1's credentials
        impostor.journal.append(tap(1), now=now())
        sync = impostor.start(broker, mqtt=MqttConfig(host=broker.host, port=broker.port, username="g1", password_file=str(g1pw), reconnect_min_s=1, reconnect_max_s=1), reject_backoff_s=0.2)
        # mosquitto answers PUBACK 0x87 (not authorised) or drops the connection; either way the
        # gate keeps the event and tries again later
        wait_until(lambda: sync.stats["rejected"] or sync.stats["connects"] >= 2, what="a refused attempt and a retry")
        assert impostor.journal.outbox_depth() == 1, "a refused event stays in the outbox"
        honest = make_gate("g1")
        honest.journal.append(tap(1), now=now())
        honest.start(broker, mqtt=MqttConfig(host=broker.host, port=broker.port, username="g1", password_file=str(g1pw)))
        wait_until(lambda: len(office.events("g1")) == 1, what="g1's own event")
        assert office.events("g2") == [] and office.dead() == []
        assert impostor.journal.outbox_depth() == 1
    finally:
        broker.kill()


def test_a_confiscation_at_one_gate_blocks_the_card_at_the_others(broker, office, make_gate):
    """G10: the office relays a confiscation committed in the ledger as a blocklist snapshot."""
    from wire.events import ConfiscationPayload

    office.start(broker)
    g1, g2 = make_gate("g1"), make_gate("g2")
    c = office_client(broker)
    publish_snapshot(c, PORT, "roster", roster(1, ["1001"]))
    g1.start(broker, store=g1.store)
    g2.start(broker, store=g2.store)
    wait_until(lambda: g2.store.versions()["roster"][0] == 1, what="roster at g2")
    uid = "AA001001"  # the control card roster() gives registration 1001
    assert g2.store.card(uid).status == CardStatus.ACTIVE
    g1.journal.append(ConfiscationPayload(uid=uid, registration="1001", inspector_uid="FF000001",
                                          inspector_registration="F1", reason_flag="BORROWED_CARD",
                                          article="83.611 art. 20 j/l"), now=now(), priority=1)
    g1.sync.notify()
    wait_until(lambda: g2.store.card(uid).status == CardStatus.CONFISCATED, what="card blocked at g2")
    c.loop_stop()
