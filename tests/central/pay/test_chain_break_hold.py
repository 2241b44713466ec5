"""A shift built from an event with a recorded chain break is flagged CHAIN_BREAK and its statement
held for review (wire.flags.REVIEW_FLAGS, central/ledger/breaks.py): an exit whose content was
edited in the ledger (sig kept) passes until ``portgate evidence audit`` records BAD_SIGNATURE;
the next incremental close (``close_month``) and the full pay run (``rebuild_shifts`` +
``pay_from_ledger``) then hold it, and ``release_holds`` releases it. Real ledger (SQLite and
PostgreSQL), real Ed25519 signatures, the real audit."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest
from sqlalchemy import select

from central.db import make_engine
from central.evidence.audit import audit
from central.ingest.keys import KeyRing, register_public_key
from central.ledger.migrate import upgrade
from central.ingest.check import link_row
from central.ledger.schema import event_links, events
from central.ledger.store import event_row, insert_events, read_shifts, rebuild_shifts
from central.ledger.tables import statements
from central.pay.cli import load_setup
from central.pay.close import close_month
from central.pay.statements_store import pay_from_ledger, release_holds
from testkit.shift_events import KEY, ShiftEvents, dispatch
from tests.central.ledger.test_rebuild_equality import RECEIVED, Z, t
from wire import chain
from wire.events import sign

NOW = dt.datetime(2026, 4, 3, tzinfo=dt.UTC)
FIRST, LAST = dt.date(2026, 3, 1), dt.date(2026, 3, 31)


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _sealed(tmp_path, evs) -> tuple:
    """``evs`` of gate gs sealed in one chain (``prev`` hashes and Ed25519 signatures) by a key whose
    public half is registered in ``tmp_path/keys``: ``(keys dir, sealed events)``."""
    signer = chain.new_private_key()
    keys = tmp_path / "keys"
    register_public_key(keys, "gs", chain.public_pem(signer.public_key()))
    prev, sealed = chain.GENESIS, []
    for ev in evs:
        ev, prev = chain.seal(msgspec.structs.replace(ev, prev=prev), signer, KEY)
        sealed.append(ev)
    return keys, sealed


def _links(sealed) -> list[dict]:
    """The ``event_links`` rows of ``sealed`` as the ingest writes them."""
    return [{k: v for k, v in link_row(e).items() if k != "event_id"} for e in sealed]


def _signed_ledger(db_url, tmp_path, *, exit_sig: str | None = None):
    """Worker A's admit/exit (07-13 on 3 March) signed and linked by gate gs, stored with their
    ``event_links`` rows (as the ingest writes them, from the events as signed); gs's public
    key registered in a keys dir. Returns ``(engine, ring, exit event)``."""
    upgrade(db_url)
    engine = make_engine(db_url)
    gate, d = ShiftEvents("gs"), dispatch(dt.date(2026, 3, 3), "07-13")
    keys, sealed = _sealed(tmp_path, [gate.admit("A", t(3, 7), d), gate.exit("A", t(3, 13), d)])
    links = _links(sealed)
    if exit_sig is not None:  # the exit's sig bytes replaced, MAC redone: its content is intact
        sealed[1] = sign(msgspec.structs.replace(sealed[1], sig=exit_sig), KEY)
    with engine.begin() as conn:
        insert_events(conn, sealed, RECEIVED)
        conn.execute(event_links.insert(), links)
    return engine, KeyRing(keys, recheck_s=0), sealed[1]


def _current(engine):
    c = statements.c
    with engine.connect() as conn:
        return conn.execute(select(c.statement_id, c.total_cents, c.hold_reason)
                            .where(c.superseded_at.is_(None))).all()


def test_an_edited_exit_is_held_for_review_once_the_audit_records_its_break(db_url, tmp_path):
    engine, ring, exit_ev = _signed_ledger(db_url, tmp_path)
    _port, rulebook, calendar = load_setup(None)
    close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    [(_sid, honest, hold)] = _current(engine)
    assert hold is None
    later = msgspec.structs.replace(exit_ev, occurred_at=exit_ev.occurred_at + dt.timedelta(hours=6),
                                    mono_ns=exit_ev.mono_ns + 6 * 3600 * 10**9)  # sig kept
    stored = event_row(sign(later, KEY), RECEIVED)  # every column as stored from the edited raw
    stored.pop("received_at")
    with engine.begin() as conn:
        conn.execute(events.update().where(events.c.event_id == exit_ev.event_id).values(**stored))
    report = audit(engine, ring, now=NOW)
    assert [(b.kind, b.event_id) for b in report.recorded] == [("BAD_SIGNATURE", exit_ev.event_id)]
    done = close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    assert (done.rebuilt, done.paid) == (1, 1)  # the new break is an input of A's digest
    [(sid, edited, hold)] = _current(engine)
    assert edited > honest and hold.startswith("CHAIN_BREAK: BAD_SIGNATURE on the exit event "
                                               f"{exit_ev.event_id} (gate gs seq 2): review before paying")
    with engine.connect() as conn:
        [shift] = read_shifts(conn, FIRST, LAST)
    assert [f.code for f in shift.flags] == ["CHAIN_BREAK"] and not shift.held  # review: paid, on hold
    again = close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    assert (again.rebuilt, again.paid) == (0, 0)
    rebuild_shifts(engine, FIRST, LAST, Z, now=NOW)  # `portgate pay --db`: the full path agrees
    run = pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=NOW, store=True)
    assert [s.hold_reason for s in run.statements] == [hold] and _current(engine) == [(sid, edited, hold)]
    release_holds(engine, [sid], NOW, "reviewed: exit confirmed by the berth log")
    with engine.connect() as conn:
        assert conn.execute(select(statements.c.hold_released_at).where(
            statements.c.statement_id == sid)).scalar() is not None
    engine.dispose()


def test_a_break_recorded_after_a_close_with_no_event_changed_is_noticed_by_the_next_close(db_url, tmp_path):
    engine, ring, exit_ev = _signed_ledger(db_url, tmp_path, exit_sig="00" * 64)
    _port, rulebook, calendar = load_setup(None)
    close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    [(sid, total, hold)] = _current(engine)
    assert hold is None
    assert [b.kind for b in audit(engine, ring, now=NOW).recorded] == ["BAD_SIGNATURE"]
    done = close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    assert (done.rebuilt, done.paid) == (1, 1)
    [(new_sid, same, hold)] = _current(engine)
    assert new_sid != sid and same == total and hold.startswith("CHAIN_BREAK: BAD_SIGNATURE on the exit event")
    engine.dispose()


def test_a_deleted_exit_is_missing_and_holds_the_shifts_of_its_window(db_url, tmp_path):
    """Gate gs: A 07-13 on 3 March (seq 1, 2), B 07-13 on 4 March (seq 3, 4), C on 6 March (5, 6).
    A's exit (seq 2) deleted after a close: the audit records MISSING seq 2..2, the next close
    holds A's MISSING_EXIT shift and B's (its admit is the window's end) for review, not C's."""
    upgrade(db_url)
    engine = make_engine(db_url)
    gate, taps = ShiftEvents("gs"), []
    for reg, day in (("A", 3), ("B", 4), ("C", 6)):
        d = dispatch(dt.date(2026, 3, day), "07-13")
        taps += [gate.admit(reg, t(day, 7), d), gate.exit(reg, t(day, 13), d)]
    keys, sealed = _sealed(tmp_path, taps)
    with engine.begin() as conn:
        insert_events(conn, sealed, RECEIVED)
        conn.execute(event_links.insert(), _links(sealed))
    _port, rulebook, calendar = load_setup(None)
    close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    assert [h for _s, _t, h in _current(engine)] == [None, None, None]
    with engine.begin() as conn:
        conn.execute(events.delete().where(events.c.event_id == sealed[1].event_id))
    close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)  # A: MISSING_EXIT, not held yet
    ring = KeyRing(keys, recheck_s=0)
    assert [(b.kind, b.seq_from, b.seq_to) for b in audit(engine, ring, now=NOW).recorded] == [("MISSING", 2, 2)]
    close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    with engine.connect() as conn:
        shifts = {s.registration: s for s in read_shifts(conn, FIRST, LAST)}
    window = f"MISSING seq 2..2 of gate gs (deleted between {t(3, 7).isoformat()} and {t(4, 7).isoformat()})"
    for reg in ("A", "B"):
        assert [f.detail for f in shifts[reg].flags if f.code == "CHAIN_BREAK"] == [window + ": review before paying"]
    assert "MISSING_EXIT" in [f.code for f in shifts["A"].flags]
    assert [f.code for f in shifts["C"].flags] == []
    holds = sorted((h for _s, _t, h in _current(engine)), key=lambda h: h or "")
    assert holds[0] is None and holds[1:] == [f"CHAIN_BREAK: {window}: review before paying"] * 2
    rebuild_shifts(engine, FIRST, LAST, Z, now=NOW)  # the full path agrees
    with engine.connect() as conn:
        assert {s.registration: s.flags for s in read_shifts(conn, FIRST, LAST)} == {
            r: s.flags for r, s in shifts.items()}
    engine.dispose()


def test_a_deleted_late_exit_holds_its_shift_though_its_period_ended_before_the_window(db_url, tmp_path):
    """Gate gs, 3 March: A admitted 07:00 for 07-13 (seq 1), B admitted 13:35 for 13-19 (seq 2), A
    exits late at 13:40 (seq 3), B exits 19:00 (seq 4). A's exit deleted: the window opens at B's
    admit (13:35), after A's period ended (13:00); A's MISSING_EXIT shift is held all the same (its
    exit may be the deleted event), and so is B's (its span meets the window)."""
    upgrade(db_url)
    engine = make_engine(db_url)
    gate = ShiftEvents("gs")
    a, b = dispatch(dt.date(2026, 3, 3), "07-13"), dispatch(dt.date(2026, 3, 3), "13-19")
    at = lambda h, m: t(3, h) + dt.timedelta(minutes=m)  # noqa: E731
    keys, sealed = _sealed(tmp_path, [gate.admit("A", at(7, 0), a), gate.admit("B", at(13, 35), b),
                                      gate.exit("A", at(13, 40), a), gate.exit("B", at(19, 0), b)])
    with engine.begin() as conn:
        insert_events(conn, sealed, RECEIVED)
        conn.execute(event_links.insert(), _links(sealed))
        conn.execute(events.delete().where(events.c.event_id == sealed[2].event_id))
    assert [(x.kind, x.seq_from, x.seq_to) for x in audit(engine, KeyRing(keys, recheck_s=0), now=NOW).recorded] == [
        ("MISSING", 3, 3)]
    _port, rulebook, calendar = load_setup(None)
    close_month(engine, FIRST, LAST, Z, rulebook, calendar, now=NOW)
    with engine.connect() as conn:
        shifts = {s.registration: s for s in read_shifts(conn, FIRST, LAST)}
    assert "MISSING_EXIT" in [f.code for f in shifts["A"].flags]
    assert [f.code for f in shifts["A"].flags if f.code == "CHAIN_BREAK"] == ["CHAIN_BREAK"]
    assert [f.code for f in shifts["B"].flags if f.code == "CHAIN_BREAK"] == ["CHAIN_BREAK"]  # B's span meets it
    engine.dispose()
