"""gate_losses on the migrated schema (SQLite and PostgreSQL): a journal quarantine alert records
its lost range once, and the gap computation skips it."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from central.db import make_engine
from central.ingest import event_store
from central.ledger.migrate import head, upgrade
from central.ledger.schema import gate_losses, gate_progress
from wire.events import AlertPayload, Event, TapPayload, encode, new_event_id, sign

T = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)
KEY = b"k" * 32


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _event(seq, payload=None, gate="g1"):
    payload = payload or TapPayload(uid=f"{seq:08X}", reader_id="r1", reader_kind="control", decision="admit")
    return sign(Event(event_id=new_event_id(), port="santos", gate_id=gate, boot_id="b", seq=seq, occurred_at=T,
                      clock_trusted=True, mono_ns=seq, payload=payload), KEY)


def _write(conn, evs):
    inserted = event_store.write_batch(conn, [event_store.Accepted("t", e, encode(e)) for e in evs], [], T)
    losses = event_store.record_losses(conn, inserted, T)
    gaps = event_store.update_progress(conn, {e.gate_id for e in evs}, T)
    return losses, gaps


def test_a_quarantine_alert_records_the_lost_range_once_and_closes_the_gap(db_url):
    assert upgrade(db_url) == head()
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:
            _write(c, [_event(s) for s in range(1, 6)])
        alert = _event(10, AlertPayload(code="STORE_QUARANTINED",
                                        detail="journal quarantined to j.db.corrupt-x; reason='x'; resumed_at=10 lost_after=5"))
        store_alert = _event(11, AlertPayload(code="STORE_QUARANTINED", detail="store quarantined to s.db.corrupt-x"))
        with engine.begin() as c:
            losses, gaps = _write(c, [alert, store_alert])
        assert [(x.gate_id, x.seq_from, x.seq_to) for x in losses] == [("g1", 6, 9)]
        assert gaps == []
        with engine.begin() as c:  # the same alert again (a replay): no second row
            again = event_store.record_losses(c, [(0, alert)], T)
            assert again == []
            rows = c.execute(select(gate_losses.c.seq_from, gate_losses.c.seq_to, gate_losses.c.event_id)).all()
            assert rows == [(6, 9, alert.event_id)]
            progress = c.execute(select(gate_progress.c.contiguous_seq, gate_progress.c.highest_seq)).one()
            assert tuple(progress) == (11, 11)
    finally:
        engine.dispose()


def test_an_alert_claiming_more_than_its_own_seq_is_cut_and_an_empty_range_records_nothing(db_url):
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:
            _write(c, [_event(s) for s in range(1, 4)])
            bogus = _event(7, AlertPayload(code="STORE_QUARANTINED", detail="resumed_at=637483 lost_after=3"))
            nothing = _event(1, AlertPayload(code="STORE_QUARANTINED", detail="resumed_at=1 lost_after=-1"), gate="g2")
            losses, gaps = _write(c, [bogus, nothing, _event(9)])
        assert [(x.gate_id, x.seq_from, x.seq_to) for x in losses] == [("g1", 4, 6)]
        assert [(g.gate_id, g.seq_from, g.seq_to) for g in gaps] == [("g1", 8, 8)]  # still a real gap
    finally:
        engine.dispose()


def test_a_gate_journal_emptied_beside_its_hwm_file_tells_the_office_what_was_lost(db_url, tmp_path):
    """The tester's case end to end: the gate stopped with 3 rows never sent, ``: > journal.db``, the
    ``.hwm`` kept; at the next start the real journal's alert makes the office record 8..10 as lost
    (no gap left to ask a replay of, for ever)."""
    from edge.journal import Journal
    from edge.rules.model import Now

    now = Now(wall=T, mono_ns=1, clock_trusted=True)
    path = tmp_path / "journal.db"

    def journal():
        return Journal(path, port="santos", gate_id="g1", key=KEY, boot_id="b")

    j = journal()
    sent = j.append_many([TapPayload(uid=f"{s:08X}", reader_id="r1", reader_kind="control", decision="admit")
                          for s in range(1, 11)], now=now)[:7]
    j.mark_sent([e.seq for e in sent])
    j.close()
    path.write_bytes(b"")
    j = journal()
    after = j.outbox_batch(10) + [j.append(TapPayload(uid="0B", reader_id="r1", reader_kind="control",
                                                      decision="admit"), now=now)]
    j.close()
    assert [e.seq for e in after] == [11, 12]
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:
            _write(c, sent)
        with engine.begin() as c:
            losses, gaps = _write(c, after)
        assert [(x.gate_id, x.seq_from, x.seq_to) for x in losses] == [("g1", 8, 10)] and gaps == []
        with engine.begin() as c:
            progress = c.execute(select(gate_progress.c.contiguous_seq, gate_progress.c.highest_seq)).one()
        assert tuple(progress) == (12, 12)
    finally:
        engine.dispose()
