"""End to end through a real mosquitto (issue 20): a signing gate's events are verified on ingest,
the office signs a receipt of the chain and the gate keeps the newest; an event forged with the
HMAC key alone is a CHAIN_BREAK dead letter and the genuine one still lands."""

from __future__ import annotations

import datetime as dt
import json
import re

import uuid

import msgspec
import pytest
from sqlalchemy import select

from central.ingest.receipts import office_key, receipt_body
from central.ingest.keys import register_public_key
from central.ledger.schema import chain_breaks, chain_receipts
from edge.journal import Journal
from tests.central.ingest.conftest import PORT, now
from tests.central.ingest.payloads import tap
from testkit.wait import wait_until
from wire import chain, topics
from wire.connection import MqttConfig, make_client
from wire.events import encode, sign

pytestmark = pytest.mark.mqtt


def test_receipts_reach_the_gate_and_a_forgery_is_a_named_break(broker, office, make_gate, keys_dir, tmp_path):
    gate = make_gate("g1")
    signer = chain.new_private_key()
    register_public_key(keys_dir, "g1", chain.public_pem(signer.public_key()))
    gate.journal = Journal(tmp_path / "signed.journal", port=PORT, gate_id="g1", key=gate.key,
                           boot_id="b1", signer=signer)
    office.start(broker)
    evs = [gate.journal.append(tap(i), now=now()) for i in range(20)]
    gate.start(broker, office_key=office_key(keys_dir).public_key())
    office.wait_all_of(gate, 20)
    wait_until(lambda: (gate.journal.receipt() or {}).get("seq") == 20, what="the receipt of seq 20 kept")
    kept = gate.journal.receipt()
    assert kept["head"] == chain.event_hash(evs[-1]) == gate.journal.head()[1]
    pub = office_key(keys_dir).public_key()
    pub.verify(bytes.fromhex(kept["sig"]), kept["body"].encode("utf-8"))  # raises if not the office's
    assert json.loads(kept["body"])["text"].endswith(f"chain of gate g1 held up to seq 20 with head {kept['head']}")
    with office.engine.connect() as c:
        assert c.execute(select(chain_receipts.c.seq).where(chain_receipts.c.gate_id == "g1")).scalars().all()

    # the office's HMAC key alone cannot make an event the chain accepts
    gate.stop()
    genuine = gate.journal.append(tap(21), now=now())
    forged = sign(msgspec.structs.replace(genuine, event_id=str(uuid.uuid4()), payload=tap(99)), gate.key)
    client = make_client(MqttConfig(), "forger")
    client.connect(broker.host, broker.port)
    client.loop_start()
    client.publish(topics.gate_events(PORT, "g1"), encode(forged), qos=1).wait_for_publish(10)
    client.disconnect()
    client.loop_stop()
    wait_until(lambda: any(r.startswith("CHAIN_BREAK BAD_SIGNATURE gate g1 seq 21") for r, _g in office.dead()),
               what="the forgery dead-lettered as a chain break")
    gate.start(broker, office_key=office_key(keys_dir).public_key())
    office.wait_all_of(gate, 21)
    assert [e for e in office.events("g1") if e.event_id == genuine.event_id]
    with office.engine.connect() as c:
        found = c.execute(select(chain_breaks.c.kind, chain_breaks.c.seq_from, chain_breaks.c.seq_to)).all()
    assert [tuple(r) for r in found] == [("BAD_SIGNATURE", 21, 21)]
    gate.journal.close()


def test_a_receipt_not_signed_by_the_office_is_logged_and_the_good_one_stays(broker, make_gate, tmp_path, capfd):
    """Receipts published on the gate's receipt topic through a real mosquitto: one signed by the
    office key is kept; one signed by another key, or edited, is one ``receipt.rejected`` line and
    the gate still holds the good one."""
    office = chain.new_private_key()
    gate = make_gate("g1")
    for i in range(20):
        gate.journal.append(tap(i), now=now())
    head = chain.event_hash(gate.journal.events_between(20, 20)[0])

    def receipt(seq, key):
        body = receipt_body(PORT, "g1", seq, head, 0, dt.datetime.now(dt.UTC))
        return json.dumps({"body": body.decode("utf-8"), "sig": key.sign(body).hex()}).encode()

    client = make_client(MqttConfig(), "office-stand-in")
    client.connect(broker.host, broker.port)
    client.loop_start()
    try:
        sync = gate.start(broker, office_key=office.public_key())
        topic = topics.gate_receipt(PORT, "g1")
        client.publish(topic, receipt(10, office), qos=1, retain=True).wait_for_publish(10)
        wait_until(lambda: (gate.journal.receipt() or {}).get("seq") == 10, what="the good receipt kept")
        capfd.readouterr()
        client.publish(topic, receipt(20, chain.new_private_key()), qos=1, retain=True).wait_for_publish(10)
        printed: list[str] = []

        def refused_and_logged() -> bool:  # the count moves before the log line is written
            out = capfd.readouterr()
            printed.extend((out.out + out.err).splitlines())
            return sync.stats["receipts_rejected"] == 1 and any("receipt.rejected" in line for line in printed)

        wait_until(refused_and_logged, what="the forged receipt refused and logged")
        rejected = [line for line in printed if "receipt.rejected" in line]
        assert len(rejected) == 1 and "does not verify against the office public key" in rejected[0]
        assert re.search(r"kept_seq[\"=: ]+10\b", rejected[0]), rejected[0]
        assert gate.journal.receipt()["seq"] == 10 and sync.stats["receipts_kept"] == 1
    finally:
        client.disconnect()
        client.loop_stop()
