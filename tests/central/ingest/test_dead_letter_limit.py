"""Issue 36 #15: dead letters are stored per sending gate at most ``[ingest]
dead_letters_per_gate_min`` a minute; past it one summary row, the rest counted. Real mosquitto,
the office's real ingest and ledger."""

from __future__ import annotations

from sqlalchemy import select

from central.ledger.schema import dead_letters
from tests.central.ingest.conftest import PORT
from tests.central.ingest.test_rejects import publish, raw_client
from testkit.wait import wait_until
from wire import topics

pytestmark = __import__("pytest").mark.mqtt


def _rows(office):
    with office.engine.connect() as c:
        return c.execute(select(dead_letters.c.topic, dead_letters.c.reason).order_by(dead_letters.c.id)).all()


def dropped(ingest) -> int:
    return sum(w.stats["dead_letters_dropped"] for w in ingest.workers)


def test_a_gate_flooding_junk_fills_at_most_its_share_of_dead_letters(broker, office):
    ingest = office.start(broker, dead_letters_per_gate_min=10, batch_size=5)
    c = raw_client(broker)
    try:
        for i in range(30):
            publish(c, topics.gate_events(PORT, "g1"), b"{junk %d" % i)
        publish(c, topics.gate_events(PORT, "g2"), b"{other gate's junk")
        # at least 19: a junk message the broker redelivers (the office's session resumed under load
        # before its acknowledgement) is counted again; what is stored stays within the share
        def counted():
            return dropped(ingest) >= 19 and any(t.endswith("/g2/events") for t, _r in _rows(office))
        try:
            wait_until(counted, what="the flood counted")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {dropped(ingest)} dropped, rows {_rows(office)}") from None
    finally:
        c.disconnect()
        c.loop_stop()
    rows = _rows(office)
    g1 = [r for t, r in rows if "/g1/" in t]
    assert len(g1) == 11  # ten stored as they came, then one summary
    assert g1[-1].startswith("rate limited: more than 10 dead letters a minute from g1")
    assert len([t for t, _r in rows if "/g2/" in t]) == 1  # another gate's dead letters are its own
