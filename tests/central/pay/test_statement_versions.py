"""Versioned statements (issue 20): re-running pay supersedes, one current statement per shift, a
paid statement is answered by an adjustment line; ``pay --what-if`` stores nothing."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from central.db import make_engine
from central.ledger.migrate import upgrade
from central.ledger.store import insert_events
from central.ledger.tables import statement_lines, statements
from tests.central.pay.test_pay_cli import SHIFTS, loc, run
from testkit.shift_events import ShiftEvents, dispatch

MONTH = ("--from", "2026-03-01", "--to", "2026-03-31")
CHIEF = "101/9300002/2026-03-15/19-01"  # RULES.md worked example 2: 696.60


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _ledger(db_url):
    """The ledger at ``db_url`` migrated (nothing to do on this module's copies; other modules pass
    an empty one) and holding the taps of SHIFTS; an engine on it."""
    upgrade(db_url)
    gates = {ship: ShiftEvents(f"g{ship[-1]}") for ship in ("9300001", "9300002", "9300003")}
    evs = []
    for reg, fn, ship, berth, day, period, admit, exit_ in SHIFTS:
        d = dispatch(day, period, ship, berth=berth, function=fn)
        evs.append((loc(admit), gates[ship], "admit", reg, d))
        if exit_:
            evs.append((loc(exit_), gates[ship], "exit", reg, d))
    evs.sort(key=lambda e: e[0])
    built = [g.tap(kind, reg, at.astimezone(dt.UTC), d) for at, g, kind, reg, d in evs]
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, built, dt.datetime(2026, 4, 5, tzinfo=dt.UTC))
    return engine


def _rows(engine):
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(statements).order_by(
            statements.c.shift_id, statements.c.version)).mappings()]


def test_pay_twice_with_different_rulebooks_leaves_one_current_statement_per_shift(db_url, capsys):
    engine = _ledger(db_url)
    try:
        assert run(capsys, "pay", "--db", db_url, *MONTH, "--by", "ana")[0] == 0
        code, out, err = run(capsys, "pay", "--db", db_url, *MONTH, "--rulebook", "example-cct-2026",
                             "--by", "bruno", "--reason", "CCT 2026 signed")
        assert code == 0 and "4 superseded" in err
        rows = _rows(engine)
        current = [r for r in rows if r["superseded_at"] is None]
        assert len(rows) == 8 and len(current) == 4
        assert sorted(r["shift_id"] for r in current) == sorted({r["shift_id"] for r in rows})
        assert {r["rulebook"] for r in current} == {"example-cct-2026"}
        assert {r["computed_by"] for r in current} == {"bruno"}
        old = next(r for r in rows if r["shift_id"] == CHIEF and r["version"] == 1)
        assert old["statement_id"] == f"{CHIEF}@decreto-83611-1979"
        assert old["superseded_by"] == f"{CHIEF}@example-cct-2026#v2"
        assert old["superseded_reason"].startswith("CCT 2026 signed: rulebook decreto-83611-1979 -> "
                                                   "example-cct-2026; computed total 696.60 -> ")
        # overdue lists only current statements; a superseded one cannot be marked paid
        _, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-05-01T00:00:00+00:00")
        assert len(overdue) == 4 and all(o["statement_id"].endswith("#v2") for o in overdue)
        code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, old["statement_id"])
        assert code == 2 and f"superseded: {old['statement_id']} (by {old['superseded_by']})" in err
        # the same run again changes nothing
        code, _, err = run(capsys, "pay", "--db", db_url, *MONTH, "--rulebook", "example-cct-2026")
        assert code == 0 and "stored 0 statement version(s)" in err and "4 unchanged" in err
        assert len(_rows(engine)) == 8
    finally:
        engine.dispose()


def test_a_paid_statement_is_superseded_by_an_adjustment_not_silently(db_url, capsys):
    engine = _ledger(db_url)
    try:
        run(capsys, "pay", "--db", db_url, *MONTH)
        paid_id = f"{CHIEF}@decreto-83611-1979"
        assert run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "lote-1", paid_id)[0] == 0
        code, out, err = run(capsys, "pay", "--db", db_url, *MONTH, "--rulebook", "example-cct-2026")
        assert code == 0 and "(1 already paid: adjustment line)" in err
        rows = {r["statement_id"]: r for r in _rows(engine)}
        paid = rows[paid_id]
        assert paid["paid_at"] is not None and paid["paid_ref"] == "lote-1"  # kept as paid
        new = rows[paid["superseded_by"]]
        assert "already paid (lote-1): adjustment line" in paid["superseded_reason"]
        computed = next(r for r in out if r["shift_id"] == CHIEF and r["rule"] == "TOTAL")
        assert new["total_cents"] == round(float(computed["amount"]) * 100) - 69660
        assert "ADJUSTMENT" in new["flags"].split(",")
        with engine.connect() as conn:
            adj = conn.execute(select(statement_lines.c.amount_cents).where(
                statement_lines.c.statement_id == new["statement_id"],
                statement_lines.c.rule == "ADJ")).scalar_one()
        assert adj == -69660
        # going back to the first rulebook: owed = 696.60 - 696.60 paid = 0, one current statement
        run(capsys, "pay", "--db", db_url, *MONTH)
        current = [r for r in _rows(engine) if r["shift_id"] == CHIEF and r["superseded_at"] is None]
        assert len(current) == 1 and current[0]["total_cents"] == 0 and current[0]["version"] == 3
        # and re-running it once more is idempotent (the computed content is compared, not the adjusted)
        _, _, err = run(capsys, "pay", "--db", db_url, *MONTH)
        assert "stored 0 statement version(s)" in err
    finally:
        engine.dispose()


def test_what_if_prints_the_new_total_beside_the_recorded_and_stores_nothing(db_url, capsys):
    engine = _ledger(db_url)
    try:
        run(capsys, "pay", "--db", db_url, *MONTH)
        with engine.connect() as conn:
            before = conn.execute(select(func.count()).select_from(statements)).scalar_one()
        code, rows, err = run(capsys, "pay", "--db", db_url, *MONTH, "--what-if", "example-cct-2026")
        assert code == 0 and "nothing stored" in err
        total = next(r for r in rows if r["shift_id"] == CHIEF and r["rule"] == "TOTAL")
        assert total["recorded"] == "696.60" and total["what_if"] != "696.60" and total["changed"]
        assert total["rulebook"] == {"recorded": "decreto-83611-1979", "what_if": "example-cct-2026"}
        lines = [r for r in rows if r["shift_id"] == CHIEF and r["rule"] != "TOTAL"]
        assert sum(float(r["diff"]) for r in lines) == float(total["diff"])
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(statements)).scalar_one() == before
        code, _, err = run(capsys, "pay", "--db", db_url, *MONTH, "--what-if", "no-such-book")
        assert code == 2 and "no-such-book" in err
    finally:
        engine.dispose()


def _set(engine, sid, **values):
    from sqlalchemy import update

    with engine.begin() as conn:
        conn.execute(update(statements).where(statements.c.statement_id == sid).values(**values))


def _close_day(capsys, db_url):
    code, out, err = run(capsys, "pay", "close", "--db", db_url, "--from", "2026-03-15",
                         "--to", "2026-03-15", "--at", "2026-04-05T00:00:00+00:00")
    assert code == 0, err
    return out


def test_a_paid_statement_edited_afterwards_is_adjusted_by_what_its_digest_proves(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        paid_id = f"{CHIEF}@decreto-83611-1979"
        assert run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "BANK1", paid_id)[0] == 0
        _set(engine, paid_id, total_cents=1)  # edited behind the ledger's back
        _close_day(capsys, db_url)
        rows = {r["statement_id"]: r for r in _rows(engine)}
        new = rows[rows[paid_id]["superseded_by"]]
        assert "already paid (BANK1): adjustment line" in rows[paid_id]["superseded_reason"]
        assert "stored total 0.01 (altered) -> computed 696.60" in rows[paid_id]["superseded_reason"]
        with engine.connect() as conn:
            adj = conn.execute(select(statement_lines.c.amount_cents).where(
                statement_lines.c.statement_id == new["statement_id"],
                statement_lines.c.rule == "ADJ")).scalar_one()
        assert adj == -69660 and new["total_cents"] == 0 and new["hold_reason"] is None
        _close_day(capsys, db_url)  # and again: nothing changes
        assert len(_rows(engine)) == len(rows)
    finally:
        engine.dispose()


def test_a_paid_statement_whose_paid_amount_nothing_proves_puts_the_new_one_on_hold(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        paid_id = f"{CHIEF}@decreto-83611-1979"
        assert run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "BANK1", paid_id)[0] == 0
        from sqlalchemy import update

        with engine.begin() as conn:  # a line and the total edited: the digest proves neither
            conn.execute(update(statement_lines).where(statement_lines.c.statement_id == paid_id,
                                                       statement_lines.c.position == 0)
                         .values(amount_cents=1))
        _set(engine, paid_id, total_cents=1)
        _close_day(capsys, db_url)
        rows = {r["statement_id"]: r for r in _rows(engine)}
        new = rows[rows[paid_id]["superseded_by"]]
        assert new["hold_reason"].startswith(f"PAID_UNPROVEN: paid version {paid_id} (BANK1)")
        _, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-05-01T00:00:00+00:00")
        listed = next(o for o in overdue if o["statement_id"] == new["statement_id"])
        assert listed["hold"].startswith("PAID_UNPROVEN")
        code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, new["statement_id"])
        assert code == 2 and "on hold for review" in err
        _close_day(capsys, db_url)  # the same hold again: nothing changes
        assert len(_rows(engine)) == len(rows)
    finally:
        engine.dispose()


def test_an_unpaid_statement_with_an_edited_total_names_it_as_altered(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        sid = f"{CHIEF}@decreto-83611-1979"
        _set(engine, sid, total_cents=999999)
        _close_day(capsys, db_url)
        why = {r["statement_id"]: r for r in _rows(engine)}[sid]["superseded_reason"]
        assert why == ("stored row altered outside the ledger (total, flags or hold reason); "
                       "stored total 9999.99 (altered) -> computed 696.60")
    finally:
        engine.dispose()
