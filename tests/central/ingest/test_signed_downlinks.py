"""Issue 36 #9: a gate holding the office key applies only downlinks signed with it, on their own
topic, never older than one it applied; anything else is refused, logged and journaled as a
``DOWNLINK_REFUSED`` alert. Real mosquitto, the office's real publisher, a real gate sync."""

from __future__ import annotations

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from central.broadcast.publisher import Publisher, office_signer
from central.office_key import office_key
from tests.central.ingest.conftest import PORT
from tests.central.ingest.test_fleet import roster
from testkit.wait import wait_until
from wire import downlink as dl
from wire import topics
from wire.chain import new_private_key
from wire.signed_downlink import Signer

pytestmark = pytest.mark.mqtt


def _client(broker) -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="office-signed", protocol=mqtt.MQTTv5)
    c.connect(broker.host, broker.port)
    c.loop_start()
    return c


def _alerts(gate) -> list[str]:
    return [e.payload.detail for e in gate.journal.events_between(1, 10_000)
            if getattr(e.payload, "code", None) == "DOWNLINK_REFUSED"]


def test_only_downlinks_signed_by_the_office_and_newer_are_applied(broker, make_gate, keys_dir):
    gate = make_gate("g1")
    sync = gate.start(broker, store=gate.store, office_key=office_key(keys_dir).public_key())
    c = _client(broker)
    try:
        signed = Publisher(c, PORT, office_signer(keys_dir))
        signed.send("roster", "snapshot", roster(5, ["1001"]), wait=5)
        wait_until(lambda: gate.store.versions()["roster"][0] == 5, what="the signed snapshot applied")
        captured = Signer(office_key(keys_dir)).seal(topics.downlink(PORT, "roster", "snapshot"),
                                                      dl.encode(roster(6, ["1001", "1002"])))
        signed.send("roster", "snapshot", roster(7, ["1001", "1003"]), wait=5)
        wait_until(lambda: gate.store.versions()["roster"][0] == 7, what="the newer snapshot applied")
        # unsigned, signed by another key, moved to another topic, an older one replayed: refused
        Publisher(c, PORT).send("roster", "snapshot", roster(9, ["6666"]), wait=5)
        Publisher(c, PORT, Signer(new_private_key())).send("roster", "snapshot", roster(10, ["6666"]), wait=5)
        c.publish(topics.downlink(PORT, "escala", "snapshot"),
                  Signer(office_key(keys_dir)).seal(topics.downlink(PORT, "roster", "snapshot"), b"{}"),
                  qos=1).wait_for_publish(5)
        c.publish(topics.downlink(PORT, "roster", "snapshot"), captured, qos=1).wait_for_publish(5)
        wait_until(lambda: sync.stats["downlink_refused"] == 4, what="four refusals")
        assert gate.store.versions()["roster"][0] == 7 and gate.store.worker("6666") is None
        wait_until(lambda: len(_alerts(gate)) >= 3, what="the alerts journaled")
        reasons = {a.split(":")[0] for a in _alerts(gate)}
        assert reasons == {"unsigned", "unknown_key", "other_topic", "older"}
        # a replay command is signed too: an unsigned one is not obeyed
        c.publish(topics.gate_cmd(PORT, "g1"), dl.encode(dl.ReplayCommand(seq_from=1, seq_to=1, at=roster(1, []).at)),
                  qos=1).wait_for_publish(5)
        wait_until(lambda: sync.stats["downlink_refused"] == 5, what="the unsigned command refused")
        # the newest issue number survives a restart of the gate: a captured older delta (not
        # retained, so nothing newer comes first after the restart) is still refused
        delta_topic = topics.downlink(PORT, "cards", "delta")
        captured_delta = Signer(office_key(keys_dir)).seal(delta_topic, dl.encode(
            dl.CardsDelta(from_version=1, to_version=2, blocked=[], unblocked=["AA001001"], at=roster(1, []).at)))
        signed.send("cards", "delta", dl.CardsDelta(from_version=2, to_version=3, blocked=[], unblocked=[],
                                                   at=roster(1, []).at), wait=5)
        wait_until(lambda: sync.stats["downlink_refused"] == 5 and gate.journal.downlink_issued().get(delta_topic),
                   what="the newer delta's issue number kept")
        sync.stop()
        sync = gate.start(broker, store=gate.store, office_key=office_key(keys_dir).public_key())
        c.publish(delta_topic, captured_delta, qos=1).wait_for_publish(5)
        # (the retained roster snapshot is the one signed by another key: refused again at the restart)
        wait_until(lambda: f"older: {delta_topic}" in _alerts(gate), what="the replay after the restart refused")
    finally:
        c.disconnect()
        c.loop_stop()
