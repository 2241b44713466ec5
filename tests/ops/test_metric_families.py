"""The Prometheus families each service exposes, scraped from a real ``central run`` and a real
``edge run``: counters are counters (``_total``), labelled counters exist at 0 for the label values
known at start (so ``increase()`` alerts on the first event), each service exposes only its own
families, and a label naming the gate is always ``gate_id``."""

from __future__ import annotations

import os
import re

from prometheus_client.parser import text_string_to_metric_families

from testkit.gate_process import write_gate_config
from testkit.wait import wait_until
from tests.ops.conftest import free_port, scrape
from tests.ops.test_central_service import central_toml

GATE_FAMILIES = ("portgate_decisions", "portgate_tap_latency_seconds", "portgate_outbox_depth",
                 "portgate_outbox_oldest_age_seconds", "portgate_clock_synchronised", "portgate_reader_up",
                 "portgate_reader_faults", "portgate_uplink_published", "portgate_uplink_acked",
                 "portgate_uplink_rejected", "portgate_uplink_unrouted", "portgate_uplink_connected")
OFFICE_FAMILIES = ("portgate_ingest_events", "portgate_ingest_duplicates", "portgate_ingest_dead_letters",
                   "portgate_ingest_commit_retries", "portgate_ingest_open_gaps",
                   "portgate_ingest_replay_requests", "portgate_ingest_workers_alive", "portgate_mqtt_connected")


def families(text: str) -> dict:
    # ``*_created`` (a counter's creation time) parses as a family of its own in the text format
    return {f.name: f for f in text_string_to_metric_families(text)
            if f.name.startswith("portgate_") and not f.name.endswith("_created")}


def value(fams: dict, family: str, sample: str, **labels) -> float:
    for s in fams[family].samples:
        if s.name == sample and s.labels == labels:
            return s.value
    raise AssertionError(f"{sample}{labels} not exposed: {[(s.name, s.labels) for s in fams[family].samples]}")


def test_office_exposes_its_families_only_with_replays_as_a_counter(tmp_path, broker, notify_socket,
                                                                     start_service):
    mport = free_port()
    cfg = central_toml(tmp_path, broker, metrics_port=mport)
    svc = start_service(["central", "run", "--config", str(cfg)], notify=notify_socket)
    wait_until(lambda: notify_socket.seen("READY=1") or not svc.alive(), timeout=90, what="READY=1")
    assert svc.alive(), svc.output()
    text = scrape(mport)
    fams = families(text)
    assert set(fams) == set(OFFICE_FAMILIES), sorted(fams)
    assert fams["portgate_ingest_replay_requests"].type == "counter"
    assert "# TYPE portgate_ingest_replay_requests_total counter" in text
    assert value(fams, "portgate_ingest_replay_requests", "portgate_ingest_replay_requests_total") == 0
    assert value(fams, "portgate_mqtt_connected", "portgate_mqtt_connected", client="ingest-0") == 1
    assert svc.stop() == 0


def test_gate_exposes_its_families_only_with_counters_at_zero_and_gate_id_labels(tmp_path, broker,
                                                                                  start_service):
    mport = free_port()
    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text().replace("[[readers]]", f"metrics_port = {mport}\n\n[[readers]]") + f"""
[mqtt]
host = "{broker.host}"
port = {broker.port}
""")
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)
    try:
        svc = start_service(["edge", "run", "--config", str(cfg)])
        wait_until(lambda: "mqtt.connected" in svc.output() or not svc.alive(), timeout=90, what="connected")
        assert svc.alive(), svc.output()
        text = scrape(mport)
        assert svc.stop() == 0
    finally:
        os.close(fifo)
    fams = families(text)
    assert set(fams) == set(GATE_FAMILIES), sorted(fams)
    # nothing refused by the broker: exposed at 0 all the same
    assert value(fams, "portgate_uplink_rejected", "portgate_uplink_rejected_total", gate_id="g-aurora") == 0
    for family in ("portgate_uplink_published", "portgate_uplink_acked", "portgate_uplink_unrouted"):
        assert value(fams, family, family + "_total", gate_id="g-aurora") >= 0, family
    for rule in ("G1", "G2", "G10", "INTERNAL"):
        assert value(fams, "portgate_decisions", "portgate_decisions_total", outcome="deny", rule=rule) == 0
    assert value(fams, "portgate_decisions", "portgate_decisions_total", outcome="admit", rule="none") == 0
    assert value(fams, "portgate_uplink_connected", "portgate_uplink_connected", gate_id="g-aurora") == 1
    for fam in fams.values():  # the gate is named by one label only
        for s in fam.samples:
            named = {k for k, v in s.labels.items() if "g-aurora" in v}
            assert named <= {"gate_id"}, (s.name, s.labels)
    assert not re.search(r'client="gate-', text)


def test_a_reader_starts_with_every_fault_kind_at_zero():
    from prometheus_client import REGISTRY

    from drivers.base import FaultKind
    from drivers.metrics import StatusReporter

    StatusReporter("r-zero", None, "test")
    for kind in FaultKind:
        assert REGISTRY.get_sample_value("portgate_reader_faults_total",
                                         {"reader_id": "r-zero", "kind": kind.value}) == 0, kind
