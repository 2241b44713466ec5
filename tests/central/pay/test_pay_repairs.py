"""Statements repaired by the close and refused at payment (the tester's defects on main): a second
current statement of a shift, a pay line edited outside the ledger, a payment record lost, the
what-if of the same rulebook, the reasons and counts a close reports, empty ids and ``--by``; on
SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import insert, select, update

from central.ledger.tables import statement_lines, statements
from tests.central.pay.test_pay_cli import run
from tests.central.pay.test_statement_versions import CHIEF, _close_day, _ledger, _rows

FIRST = f"{CHIEF}@decreto-83611-1979"


def _copy_statement(engine, sid: str, new_id: str) -> None:
    """A second current statement of the same shift, as a sqlite3 INSERT ... SELECT would make."""
    with engine.begin() as conn:
        row = dict(conn.execute(select(statements).where(statements.c.statement_id == sid)).mappings().one())
        lines = [dict(r) for r in conn.execute(select(statement_lines).where(
            statement_lines.c.statement_id == sid)).mappings()]
        conn.execute(insert(statements).values({**row, "statement_id": new_id}))
        for ln in lines:
            ln.pop("id", None)
            conn.execute(insert(statement_lines).values({**ln, "statement_id": new_id}))


def _current_of(engine, shift_id: str) -> list[str]:
    return [r["statement_id"] for r in _rows(engine)
            if r["shift_id"] == shift_id and r["superseded_at"] is None]


def test_a_second_current_statement_of_a_shift_is_superseded_at_the_close(db_url, capsys):
    engine = _ledger(db_url)
    try:
        first = _close_day(capsys, db_url)[0]
        _copy_statement(engine, FIRST, "DUP")
        assert sorted(_current_of(engine, CHIEF)) == sorted(["DUP", FIRST])
        done = _close_day(capsys, db_url)[0]
        assert done["statements"] == first["statements"] and done["superseded"] == 1
        assert _current_of(engine, CHIEF) == [FIRST]
        dup = {r["statement_id"]: r for r in _rows(engine)}["DUP"]
        assert dup["superseded_by"] == FIRST and dup["superseded_reason"].startswith(
            f"second current statement of shift {CHIEF} (stored outside the ledger)")
        code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, "DUP")
        assert code == 2 and "superseded: DUP" in err
        _, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-05-01T00:00:00+00:00")
        assert [o["statement_id"] for o in overdue if o["shift_id"] == CHIEF] == [FIRST]
    finally:
        engine.dispose()


def test_a_full_pay_run_also_supersedes_a_second_current_statement(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        _copy_statement(engine, FIRST, "DUP")
        code, _, err = run(capsys, "pay", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15")
        assert code == 0, err
        assert _current_of(engine, CHIEF) == [FIRST]
        assert "1 superseded" in err
    finally:
        engine.dispose()
