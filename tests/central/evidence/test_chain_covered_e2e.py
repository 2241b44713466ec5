"""Chain-covered verification through the real ingest (mosquitto + workers + writer, SQLite): a
burst of a signing gate's events queued while the office is offline arrives in large batches, one
signature is verified per run of linked events, and every edited, forged, swapped or missing event
is still named exactly (gate and seq) with nothing else lost; with the helper process and without
(``verify_processes = 0``: the writer's own path)."""

from __future__ import annotations

import uuid

import msgspec
import pytest
from sqlalchemy import select

from central.ingest.keys import public_key_path, read_public_keys, register_public_key
from central.ledger.schema import chain_breaks, event_links
from edge.journal import Journal
from tests.central.ingest.conftest import PORT, now
from tests.central.ingest.payloads import tap
from testkit.wait import wait_until
from wire import chain, topics
from wire.connection import MqttConfig, make_client
from wire.events import encode, sign

pytestmark = pytest.mark.mqtt
TOPIC = topics.gate_events(PORT, "g1")


def signing_gate(make_gate, keys_dir, tmp_path):
    gate = make_gate("g1")
    signer = chain.new_private_key()
    register_public_key(keys_dir, "g1", chain.public_pem(signer.public_key()))
    gate.journal = Journal(tmp_path / "signed.journal", port=PORT, gate_id="g1", key=gate.key,
                           boot_id="b1", signer=signer)
    return gate


def publish(broker, raws):
    client = make_client(MqttConfig(), f"feeder-{uuid.uuid4().hex[:6]}")
    client.connect(broker.host, broker.port)
    client.loop_start()
    try:
        for info in [client.publish(TOPIC, raw, qos=1) for raw in raws]:
            info.wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()


def queued_then_ingested(office, broker, raws, **settings):
    """Create the office's session, stop it, queue ``raws`` in the broker, start it again."""
    office.start(broker, **settings)
    office.stop_all()
    publish(broker, raws)
    office.start(broker, **settings)


def breaks(office):
    with office.engine.connect() as c:
        return sorted((r.kind, r.gate_id, r.seq_from, r.seq_to)
                      for r in c.execute(select(chain_breaks)))


def remac(ev, key, **changes):
    """``ev`` changed and its MAC redone with the HMAC key (the office holds it): its signature stays."""
    return sign(msgspec.structs.replace(ev, **changes), key)


@pytest.mark.parametrize("helpers", [1, 0])
def test_edits_forgeries_a_swap_and_a_deletion_in_one_burst_are_each_named(
        broker, office, make_gate, keys_dir, tmp_path, helpers):
    burst(broker, office, make_gate, keys_dir, tmp_path, helpers)


def test_the_same_burst_into_postgresql(broker, make_gate, keys_dir, tmp_path, pg_cluster):
    from tests.central.ingest.conftest import Office

    office = Office(tmp_path, keys_dir, url=pg_cluster.create_database("chain"))
    try:
        burst(broker, office, make_gate, keys_dir, tmp_path, 1)
    finally:
        office.stop_all()
        office.engine.dispose()


def burst(broker, office, make_gate, keys_dir, tmp_path, helpers):
    gate = signing_gate(make_gate, keys_dir, tmp_path)
    evs = [gate.journal.append(tap(i), now=now()) for i in range(40)]
    by_seq = {e.seq: e for e in evs}
    sent = {s: encode(e) for s, e in by_seq.items()}
    sent[10] = encode(remac(by_seq[10], gate.key, payload=tap(777)))  # content edited inside a run
    sent[15] = encode(remac(by_seq[15], gate.key, event_id=str(uuid.uuid4()), payload=tap(999),
                            sig="ab" * 64))  # forged with the HMAC key alone
    a, b = by_seq[20], by_seq[21]
    swapped = remac(b, gate.key, seq=20, prev=a.prev)  # a swapped pair, relinked
    sent[20], sent[21] = encode(swapped), encode(remac(a, gate.key, seq=21, prev=chain.event_hash(swapped)))
    del sent[25]  # a deleted event
    queued_then_ingested(office, broker, [sent[s] for s in sorted(sent)], verify_processes=helpers)
    office.wait_all_of(gate, 35)  # 40, less the deleted one and the four refused
    assert breaks(office) == [("BAD_SIGNATURE", "g1", s, s) for s in (10, 15, 20, 21)]
    stored = {r.seq: r.event_id for r in office.events("g1")}
    assert stored == {s: e.event_id for s, e in by_seq.items() if s not in (10, 15, 20, 21, 25)}
    dead = sorted(r for r, _g in office.dead())
    assert [d.split(":")[0] for d in dead] == [f"CHAIN_BREAK BAD_SIGNATURE gate g1 seq {s}"
                                               for s in (10, 15, 20, 21)]
    # the deletion and the refused events are holes the office knows (gaps it asks the gate for)
    wait_until(lambda: office.contiguous("g1") == 9, what="the gapless prefix stops before seq 10")
    # the genuine events (the deleted one too) still land, and their links all hold
    publish(broker, [encode(by_seq[s]) for s in (10, 15, 20, 21, 25)])
    office.wait_all_of(gate, 40)
    assert breaks(office) == [("BAD_SIGNATURE", "g1", s, s) for s in (10, 15, 20, 21)]
    assert office.contiguous("g1") == 40
    with office.engine.connect() as c:  # every link row holds the event's hash (computed once, with its verdict)
        links = {r.seq: (bytes(r.hash).hex(), bytes(r.prev).hex()) for r in c.execute(select(event_links))}
    assert links == {s: (chain.event_hash(e), e.prev) for s, e in by_seq.items()}
    gate.journal.close()


@pytest.mark.parametrize("helpers", [1, 0])
def test_a_key_rollover_mid_burst_is_learned_and_an_edit_after_it_named(
        broker, office, make_gate, keys_dir, tmp_path, helpers):
    gate = signing_gate(make_gate, keys_dir, tmp_path)
    for i in range(8):
        gate.journal.append(tap(i), now=now())
    new = chain.new_private_key()
    roll = gate.journal.rotate_key(new, now=now())
    for i in range(8, 20):
        gate.journal.append(tap(i), now=now())
    evs = gate.journal.events_between(1, 21)
    sent = [encode(e) for e in evs]
    sent[14] = encode(remac(evs[14], gate.key, payload=tap(555)))  # seq 15: signed by the new key, edited
    queued_then_ingested(office, broker, sent, verify_processes=helpers)
    office.wait_all_of(gate, 20)
    assert roll.seq == 9 and breaks(office) == [("BAD_SIGNATURE", "g1", 15, 15)]
    keys = read_public_keys(public_key_path(keys_dir, "g1"))
    assert [chain.fingerprint(k) for k in keys][-1] == chain.fingerprint(new.public_key())
    publish(broker, [encode(evs[14])])
    office.wait_all_of(gate, 21)
    assert breaks(office) == [("BAD_SIGNATURE", "g1", 15, 15)] and office.contiguous("g1") == 21
    gate.journal.close()
