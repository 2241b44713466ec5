"""Everything bad lands in dead_letters (or is dropped as a duplicate) and the ingest keeps going."""

from __future__ import annotations

import datetime as dt
import threading

import msgspec
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.central.ingest.conftest import PORT, now
from testkit.wait import wait_until
from tests.central.ingest.payloads import tap
from wire import topics
from wire.events import Event, encode, new_event_id, sign


def raw_client(broker) -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="intruder", protocol=mqtt.MQTTv5)
    c.connect(broker.host, broker.port)
    c.loop_start()
    return c


def forged(gate_id: str, key: bytes, seq: int = 1) -> Event:
    return sign(
        Event(
            event_id=new_event_id(), port=PORT, gate_id=gate_id, boot_id="b", seq=seq,
            occurred_at=dt.datetime.now(dt.UTC), clock_trusted=True, mono_ns=1, payload=tap(seq),
        ),
        key,
    )


def publish(c, topic, payload):
    c.publish(topic, payload, qos=1).wait_for_publish(5)


def test_bad_mac_malformed_unknown_gate_and_mismatch_go_to_dead_letters(broker, office, make_gate):
    office.start(broker)
    gate = make_gate("g1")
    gate.start(broker)
    c = raw_client(broker)
    t1 = topics.gate_events(PORT, "g1")
    publish(c, t1, encode(forged("g1", b"not-the-key")))  # forged MAC
    publish(c, t1, b"{not json")  # malformed
    publish(c, t1, b'{"event_id": "x"}')  # schema violation
    publish(c, topics.gate_events(PORT, "g9"), encode(forged("g9", b"k")))  # unknown gate
    publish(c, topics.gate_events(PORT, "g2"), encode(sign(forged("g1", gate.key), gate.key)))  # g1 as g2
    wait_until(lambda: len(office.dead()) == 5, what="5 dead letters")
    reasons = sorted(r.reason.split(":")[0] for r in office.dead())
    assert reasons == ["bad MAC", "malformed", "malformed", "topic/gate mismatch", "unknown gate g9"]
    # the ingest keeps running: a valid tap still arrives
    gate.journal.append(tap(1), now=now())
    gate.sync.notify()
    wait_until(lambda: len(office.events("g1")) == 1, what="the valid tap")
    c.loop_stop()


def test_a_replayed_old_event_is_dropped_as_a_duplicate(broker, office, make_gate):
    ingest = office.start(broker)
    gate = make_gate("g1")
    event = gate.journal.append(tap(1), now=now())
    gate.start(broker)
    wait_until(lambda: len(office.events("g1")) == 1, what="first copy")
    c = raw_client(broker)
    for _ in range(3):
        publish(c, topics.gate_events(PORT, "g1"), encode(event))  # attacker or broker resends
    wait_until(lambda: ingest.workers[0].stats["duplicates"] == 3, what="3 duplicates seen")
    assert len(office.events("g1")) == 1
    assert office.dead() == []
    c.loop_stop()


def test_an_event_with_a_tampered_payload_fails_the_mac(broker, office, make_gate):
    office.start(broker)
    gate = make_gate("g1")
    event = gate.journal.append(tap(1, registration="1001"), now=now())
    tampered = msgspec.structs.replace(event, payload=tap(1, registration="6666"))
    c = raw_client(broker)
    publish(c, topics.gate_events(PORT, "g1"), encode(tampered))
    wait_until(lambda: len(office.dead()) == 1, what="dead letter")
    assert office.dead()[0].reason == "bad MAC"
    assert office.events() == []
    c.loop_stop()


def test_numbers_too_big_for_the_ledger_are_malformed_even_with_a_valid_mac(broker, office, make_gate):
    """seq and mono_ns are 64-bit ledger columns: a key holder's 2**63 is a dead letter, not a crash
    of the writer (which would take the batch down with it, again at every redelivery)."""
    ingest = office.start(broker)
    gate = make_gate("g1")
    gate.start(broker)
    c = raw_client(broker)
    t1 = topics.gate_events(PORT, "g1")
    publish(c, t1, encode(forged("g1", gate.key, seq=2**63)))
    huge_clock = msgspec.structs.replace(forged("g1", gate.key, seq=7), mono_ns=2**64)
    publish(c, t1, encode(sign(huge_clock, gate.key)))
    wait_until(lambda: len(office.dead()) == 2, what="2 dead letters")
    assert all(r.reason.startswith("malformed") for r in office.dead())
    gate.journal.append(tap(1), now=now())
    gate.sync.notify()
    wait_until(lambda: len(office.events("g1")) == 1, what="the valid tap")
    assert ingest.workers[0].link.restarts == 0
    c.loop_stop()


def test_a_bad_gate_status_goes_to_dead_letters_and_a_good_one_after_it_counts(broker, office, make_gate):
    """The office reads the gates' statuses for their ``sent_seq``: one that does not parse, or names
    another gate than its topic, is a dead letter; the ingest goes on and takes the next one."""
    from wire import downlink as dl

    ingest = office.start(broker, tail_grace_s=0.2)
    gate = make_gate("g1")
    gate.journal.append_many([tap(i) for i in range(1, 4)], now=now())  # journaled, never published
    c = raw_client(broker)
    status = topics.gate_status(PORT, "g1")
    publish(c, status, b"{not json")
    other = dl.GateStatus(port=PORT, gate_id="g2", boot_id="b", state="online", reason="progress",
                          at=dt.datetime.now(dt.UTC), sent_seq=3)
    publish(c, status, dl.encode(other))
    ghost = msgspec.structs.replace(other, gate_id="ghost")  # no key: not a gate of this port
    publish(c, topics.gate_status(PORT, "ghost"), dl.encode(ghost))
    huge = msgspec.structs.replace(other, gate_id="g1", sent_seq=2**63)
    publish(c, status, dl.encode(huge))
    wait_until(lambda: len(office.dead()) == 4, what="four dead letters")
    assert all(reason.startswith("bad status") for reason, _gate in office.dead())
    mine = dl.sign_status(msgspec.structs.replace(other, gate_id="g1"), gate.key)
    publish(c, status, dl.encode(mine))  # as the gate would after its broker acknowledged 1..3
    wait_until(lambda: ingest.workers[0].stats["tail_replays"] >= 1, what="the good status counted")
    gate.start(broker)
    office.wait_all_of(gate, 3)
    assert ingest.workers[0].alive()


def test_an_unsigned_or_forged_status_is_a_dead_letter_and_asks_for_no_replay(broker, office, make_gate):
    """A stolen broker password is not a gate key: a retained status claiming a huge ``sent_seq``
    unsigned, or signed with another key, is dead-lettered and sets off no tail replay; the gate's
    own signed status still counts."""
    from wire import downlink as dl

    ingest = office.start(broker, tail_grace_s=0.2)
    gate = make_gate("g1")
    c = raw_client(broker)
    status = topics.gate_status(PORT, "g1")
    claim = dl.GateStatus(port=PORT, gate_id="g1", boot_id="b", state="online", reason="progress",
                          at=dt.datetime.now(dt.UTC), sent_seq=2**62)
    publish(c, status, dl.encode(claim))
    publish(c, status, dl.encode(dl.sign_status(claim, b"a-stolen-password-is-not-the-key")))
    tampered = msgspec.structs.replace(dl.sign_status(claim, gate.key), sent_seq=2**62 + 1)
    publish(c, status, dl.encode(tampered))
    wait_until(lambda: len(office.dead()) == 3, what="three dead letters")
    assert sorted(reason for reason, _gate in office.dead()) == [
        f"bad status: {status}: bad MAC", f"bad status: {status}: bad MAC",
        f"bad status: {status}: unsigned (a gate of an older release?)"]
    gate.journal.append_many([tap(i) for i in range(1, 3)], now=now())
    gate.start(broker)  # its birth status is signed with its key
    office.wait_all_of(gate, 2)
    stats = ingest.workers[0].stats
    assert stats["tail_replays"] == 0 and stats["replay_requests"] == 0
    assert len(office.dead()) == 3  # the gate's own statuses were taken
    c.loop_stop()


def test_the_gate_signs_every_status_it_publishes(broker, make_gate):
    """Birth, progress and graceful offline statuses (and the Last Will set at connect) verify with
    the gate's key."""
    from wire import downlink as dl

    seen: list[bytes] = []
    c = raw_client(broker)
    subscribed = threading.Event()
    c.on_message = lambda _c, _u, m: seen.append(bytes(m.payload))
    c.on_subscribe = lambda *_a: subscribed.set()
    c.subscribe(topics.gate_status(PORT, "g1"), qos=1)
    assert subscribed.wait(60), "the broker did not acknowledge the status subscription"
    gate = make_gate("g1")
    gate.start(broker)
    wait_until(lambda: seen, what="the birth status")
    will = gate.sync.client._will_payload
    gate.stop()
    # a progress status may come between the birth and the graceful one
    wait_until(lambda: any(dl.decode(p, dl.GateStatus).reason == "graceful" for p in list(seen)),
               what="the graceful offline status")
    statuses = [dl.decode(p, dl.GateStatus) for p in seen]
    assert {s.reason for s in statuses} >= {"birth", "graceful"}
    assert all(dl.verify_status(s, gate.key) for s in statuses)
    assert dl.verify_status(dl.decode(bytes(will), dl.GateStatus), gate.key)
    c.loop_stop()


def test_events_sent_at_qos_0_or_with_properties_are_ingested_like_the_others(broker, office, make_gate):
    """They come through paho's own message handling, not the raw fast path: same ledger, and a
    forged one among them is still a dead letter. The QoS 1 one with properties is acknowledged
    after its commit (a new session of the office does not get it again)."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    ingest = office.start(broker)
    gate = make_gate("g1")
    c = raw_client(broker)
    t1 = topics.gate_events(PORT, "g1")
    props = Properties(PacketTypes.PUBLISH)
    props.UserProperty = [("k", "v")]
    c.publish(t1, encode(forged("g1", gate.key, 1)), qos=0).wait_for_publish(5)
    c.publish(t1, encode(forged("g1", gate.key, 2)), qos=1, properties=props).wait_for_publish(5)
    c.publish(t1, encode(forged("g1", b"not-the-key", 3)), qos=0).wait_for_publish(5)
    wait_until(lambda: len(office.events("g1")) == 2 and len(office.dead()) == 1, what="2 events, 1 dead letter")
    assert [r.seq for r in office.events("g1")] == [1, 2]
    wait_until(lambda: ingest.workers[0].stats["inserted"] == 2, what="the commit reported to the worker")
    office.stop_all()
    again = office.start(broker)
    publish(c, t1, encode(forged("g1", gate.key, 4)))
    wait_until(lambda: len(office.events("g1")) == 3, what="the next event")
    assert again.workers[0].stats["duplicates"] == 0  # seq 2 was acknowledged: not delivered again
    c.loop_stop()
