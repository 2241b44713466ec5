"""Payload size: the shipped broker refuses a 40 MB message (``max_packet_size``); an office
behind a broker without the limit refuses it before decoding and keeps 4 KB and its hash; a flood of
junk writes a bounded number of warning lines."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import structlog
from sqlalchemy import func, select

from app.demo.mosquitto import Mosquitto
from central.ingest.keys import KeyRing
from central.ingest.event_store import DEAD_RAW_KEPT, MAX_MESSAGE_BYTES
from central.ingest.logbudget import LogBudget
from central.ingest.writer import LedgerWriter
from central.ledger.schema import dead_letters, events
from tests.central.ingest.conftest import PORT, now
from tests.central.ingest.payloads import tap
from tests.central.ingest.test_rejects import raw_client
from testkit.wait import wait_until
from wire import topics

pytestmark = pytest.mark.mqtt

SHIPPED = Path(__file__).resolve().parents[3] / "config" / "mosquitto" / "mosquitto.conf"
BIG = b'{"event_id":"' + b"x" * (40 * 1024 * 1024) + b'"}'


def _shipped_limit_line() -> str:
    line = next(ln for ln in SHIPPED.read_text().splitlines() if ln.startswith("max_packet_size "))
    assert 1_000_000 <= int(line.split()[1]) < len(BIG)
    return line


def _dead_rows(office):
    with office.engine.connect() as c:
        return c.execute(select(dead_letters.c.reason, dead_letters.c.raw)).all()


def _publish_40mb_then_a_tap(broker, office, gate) -> list:
    """Publish BIG at QoS 1; return what the broker answered (PUBACK reason codes, disconnects)."""
    office.start(broker)
    c = raw_client(broker)
    answers: list = []
    c.on_publish = lambda _c, _u, _mid, rc, _p: answers.append(rc)
    c.on_disconnect = lambda _c, _u, _f, rc, _p: answers.append(("disconnected", rc))
    c.publish(topics.gate_events(PORT, gate.gate_id), BIG, qos=1)
    wait_until(lambda: answers, timeout=60, what="the broker's answer to 40 MB")
    gate.journal.append(tap(1), now=now())
    gate.start(broker)
    office.wait_all_of(gate, 1)
    c.disconnect()
    c.loop_stop()
    return answers


def test_the_shipped_broker_refuses_a_40mb_message(tmp_path, office, make_gate):
    broker = Mosquitto(tmp_path / "broker", extra=_shipped_limit_line()).start()
    try:
        answers = _publish_40mb_then_a_tap(broker, office, make_gate("g1"))
    finally:
        broker.kill()
    assert answers[0] != 0, "not accepted: mosquitto refuses it (v5: disconnects the publisher)"
    assert _dead_rows(office) == [], "the broker dropped it: the office never saw it"
    with office.engine.connect() as c:
        assert c.execute(select(func.max(func.length(events.c.raw)))).scalar() < 4096


def test_the_office_refuses_an_oversize_message_before_decoding_and_keeps_4kb(broker, office, make_gate, mocker):
    decode = mocker.spy(__import__("central.ingest.check", fromlist=["decode"]), "decode")
    assert _publish_40mb_then_a_tap(broker, office, make_gate("g1"))[0] == 0
    wait_until(lambda: len(_dead_rows(office)) == 1, what="the oversize dead letter")
    (reason, raw), = _dead_rows(office)
    assert reason.startswith(f"oversize: {len(BIG)} bytes, more than {MAX_MESSAGE_BYTES}")
    assert f"[raw: first {DEAD_RAW_KEPT} of {len(BIG)} bytes, sha256 {hashlib.sha256(BIG).hexdigest()}]" in reason
    assert raw == BIG[:DEAD_RAW_KEPT]
    assert all(len(call.args[0]) < MAX_MESSAGE_BYTES for call in decode.call_args_list)


def test_a_flood_of_junk_writes_a_bounded_number_of_warning_lines(office, keys_dir, broker):
    # above the per-gate storage limit (test_dead_letter_limit.py): here every row is stored
    writer = LedgerWriter(office.config(broker, dead_letters_per_gate_min=10_000), office.engine, KeyRing(keys_dir))
    junk = [(topics.gate_events(PORT, "g1"), b"junk %d" % i) for i in range(5000)]
    with structlog.testing.capture_logs() as logs:
        writer.process(1, junk[:2500])
        writer.process(2, junk[2500:])
    lines = [e for e in logs if e["event"] == "ingest.dead_letter"]
    assert len(lines) == 20
    with office.engine.connect() as c:
        assert c.execute(select(func.count()).select_from(dead_letters)).scalar() == 5000


def test_the_log_budget_lets_a_burst_through_then_counts_until_the_window_ends():
    clock = [0.0]
    budget = LogBudget(burst=3, window_s=60, clock=lambda: clock[0])
    assert [budget.take() for _ in range(5)] == [0, 0, 0, None, None]
    clock[0] = 59.9
    assert budget.take() is None
    clock[0] = 60.0
    assert budget.take() == 3, "the first line of the next window says how many were swallowed"
    assert budget.take() == 0
    with pytest.raises(ValueError):
        LogBudget(burst=0)
    assert re.fullmatch(r"max_packet_size \d+ .*", _shipped_limit_line())
