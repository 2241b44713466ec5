"""Statements repaired by the close and refused at payment (the tester's defects on main): a second
current statement of a shift, a pay line edited outside the ledger, a payment record lost, the
what-if of the same rulebook, the reasons and counts a close reports, empty ids and ``--by``; on
SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest
from alembic import command
from sqlalchemy import insert, inspect, select, update
from sqlalchemy.exc import IntegrityError

from central.ledger.migrate import alembic_config
from central.pay.cli import load_setup
from central.pay.close import close_month
from central.pay.statements_store import pay_from_ledger

from central.ledger.tables import statement_lines, statements
from tests.central.pay.test_pay_cli import run
from tests.central.pay.test_statement_versions import CHIEF, _close_day, _ledger, _rows

FIRST = f"{CHIEF}@decreto-83611-1979"
AT = dt.datetime(2026, 4, 5, tzinfo=dt.UTC)


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


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


def _before_the_index(db_url, engine) -> None:
    """The ledger as it was before migration 0016 (no unique index of current statements)."""
    command.downgrade(alembic_config(db_url), "0014")
    assert "uq_statements_one_current" not in {i["name"] for i in inspect(engine).get_indexes("statements")}


def test_the_database_refuses_a_second_current_statement_of_a_shift(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        with pytest.raises(IntegrityError):
            _copy_statement(engine, FIRST, "DUP")
        assert _current_of(engine, CHIEF) == [FIRST]
    finally:
        engine.dispose()


def test_the_migration_supersedes_a_second_current_statement_before_it_adds_the_index(db_url, capsys):
    engine = _ledger(db_url)
    try:
        first = _close_day(capsys, db_url)[0]
        _before_the_index(db_url, engine)
        _copy_statement(engine, FIRST, "DUP")
        assert sorted(_current_of(engine, CHIEF)) == sorted(["DUP", FIRST])
        done = _close_day(capsys, db_url)[0]  # migrates first
        assert done["statements"] == first["statements"]
        assert _current_of(engine, CHIEF) == [FIRST]
        dup = {r["statement_id"]: r for r in _rows(engine)}["DUP"]
        assert dup["superseded_by"] == FIRST and dup["superseded_reason"].startswith(
            f"second current statement of shift {CHIEF} (stored outside the ledger)")
        code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, "DUP")
        assert code == 2 and "superseded: DUP" in err
        _, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-05-01T00:00:00+00:00")
        assert [o["statement_id"] for o in overdue if o["shift_id"] == CHIEF] == [FIRST]
        assert "uq_statements_one_current" in {i["name"] for i in inspect(engine).get_indexes("statements")}
    finally:
        engine.dispose()


@pytest.mark.parametrize("path", ["close", "pay"])
def test_storing_a_shift_supersedes_its_second_current_statement(db_url, capsys, path):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        _before_the_index(db_url, engine)
        _copy_statement(engine, FIRST, "DUP")
        _port, rulebook, calendar = load_setup(None)
        day = dt.date(2026, 3, 15)
        if path == "close":
            saved = close_month(engine, day, day, calendar.zone, rulebook, calendar, now=AT).run.saved
        else:
            saved = pay_from_ledger(engine, day, day, rulebook, calendar, now=AT).saved
        assert saved.superseded == 1 and saved.written == 0
        assert _current_of(engine, CHIEF) == [FIRST]
        dup = {r["statement_id"]: r for r in _rows(engine)}["DUP"]
        assert dup["superseded_by"] == FIRST and "one current statement per shift" in dup["superseded_reason"]
    finally:
        engine.dispose()


def _pay_day(capsys, db_url, *args):
    code, out, err = run(capsys, "pay", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15", *args)
    assert code == 0, err
    return out


def _close_cct(capsys, db_url):
    code, out, err = run(capsys, "pay", "close", "--db", db_url, "--from", "2026-03-15", "--to",
                         "2026-03-15", "--rulebook", "example-cct-2026", "--at", "2026-04-05T00:00:00+00:00")
    assert code == 0, err
    return out[0]


def _edit_line(engine, sid: str, position: int, delta_cents: int) -> None:
    with engine.begin() as conn:
        conn.execute(update(statement_lines).where(statement_lines.c.statement_id == sid,
                                                   statement_lines.c.position == position)
                     .values(amount_cents=statement_lines.c.amount_cents + delta_cents))


def test_the_first_close_of_a_scope_checks_the_lines_stored_by_a_full_pay_run(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _pay_day(capsys, db_url)
        assert run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "B2", FIRST)[0] == 0
        _pay_day(capsys, db_url, "--rulebook", "example-cct-2026")
        cct = f"{CHIEF}@example-cct-2026#v2"
        assert _current_of(engine, CHIEF) == [cct]
        _edit_line(engine, cct, 0, 100)
        done = _close_cct(capsys, db_url)  # the scope's first close
        assert done["superseded"] == 1 and done["written"] == 1
        row = {r["statement_id"]: r for r in _rows(engine)}[cct]
        assert row["superseded_at"] is not None
        assert row["superseded_reason"].startswith("stored lines altered outside the ledger")
        again = _close_cct(capsys, db_url)
        assert (again["written"], again["superseded"]) == (0, 0)
    finally:
        engine.dispose()


def _statement_indexes(engine) -> set:
    return {(i["name"], bool(i["unique"]), tuple(i["column_names"]))
            for i in inspect(engine).get_indexes("statements")}


def test_create_all_and_the_migrations_give_the_same_statement_indexes(db_url, tmp_path, pg_cluster):
    from central.db import load_all_tables, make_engine
    from central.ledger.migrate import upgrade

    upgrade(db_url)
    migrated = make_engine(db_url)
    other = (pg_cluster.create_database("made_by_create_all") if migrated.dialect.name == "postgresql"
             else f"sqlite:///{tmp_path / 'create_all.db'}")
    made = make_engine(other)
    try:
        load_all_tables().create_all(made)
        assert _statement_indexes(made) == _statement_indexes(migrated)
        assert ("uq_statements_one_current", True, ("shift_id",)) in _statement_indexes(made)
    finally:
        migrated.dispose()
        made.dispose()


def test_what_if_of_the_rulebook_a_paid_statement_was_recomputed_with_changes_nothing(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _pay_day(capsys, db_url)
        assert run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "B2", FIRST)[0] == 0
        _pay_day(capsys, db_url, "--rulebook", "example-cct-2026")  # v2: CCT with an ADJ line
        code, rows, err = run(capsys, "pay", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15",
                              "--what-if", "example-cct-2026")
        assert code == 0, err
        mine = [r for r in rows if r["shift_id"] == CHIEF]
        total = next(r for r in mine if r["rule"] == "TOTAL")
        assert total["recorded"] == total["what_if"] and total["diff"] == "0.00" and not total["changed"]
        assert not any(r["changed"] for r in mine) and "ADJ" not in {r["rule"] for r in mine}
        assert "what-if example-cct-2026: 0 of" in err
    finally:
        engine.dispose()


def _close_month(capsys, db_url):
    code, out, err = run(capsys, "pay", "close", "--db", db_url, "--from", "2026-03-01", "--to",
                         "2026-03-31", "--at", "2026-04-05T00:00:00+00:00")
    assert code == 0, err
    return out[0]


def test_a_line_edit_in_the_same_close_does_not_rename_an_edited_total(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_month(capsys, db_url)
        current = [r for r in _rows(engine) if r["superseded_at"] is None]
        by_lines, by_total = current[0], current[1]
        _edit_line(engine, by_lines["statement_id"], 0, 100)
        with engine.begin() as conn:
            conn.execute(update(statements).where(statements.c.statement_id == by_total["statement_id"])
                         .values(total_cents=1))
        done = _close_month(capsys, db_url)
        assert done["superseded"] == 2
        why = {r["statement_id"]: r["superseded_reason"] for r in _rows(engine)}
        computed = f"{by_total['total_cents'] // 100}.{by_total['total_cents'] % 100:02d}"
        assert why[by_total["statement_id"]] == (
            "stored row altered outside the ledger (total, flags or hold reason); "
            f"stored total 0.01 (altered) -> computed {computed}")
        was = f"{by_lines['total_cents'] // 100}.{by_lines['total_cents'] % 100:02d}"
        assert why[by_lines["statement_id"]] == (
            f"stored lines altered outside the ledger; computed total {was} -> {was}")
    finally:
        engine.dispose()


def test_the_close_counts_the_statement_it_stored_on_hold(db_url, capsys):
    engine = _ledger(db_url)
    try:
        assert _close_day(capsys, db_url)[0]["held"] == 0
        assert run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "BANK1", FIRST)[0] == 0
        _edit_line(engine, FIRST, 0, 100)  # a line and the total: nothing proves what was paid
        with engine.begin() as conn:
            conn.execute(update(statements).where(statements.c.statement_id == FIRST).values(total_cents=1))
        done = _close_day(capsys, db_url)[0]
        assert (done["written"], done["held"], done["stored_on_hold"]) == (1, 1, 1)
        assert _current_of(engine, CHIEF) == [f"{CHIEF}@decreto-83611-1979#v2"]
        assert _close_day(capsys, db_url)[0]["held"] == 0  # nothing stored the second time
    finally:
        engine.dispose()


def test_an_empty_statement_id_and_an_empty_by_are_refused_before_anything_is_stored(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, FIRST, "")
        assert code == 2 and err.strip().splitlines() == [
            "portgate: statement: statement id number 2 is empty (give the ids `portgate pay overdue` lists)"]
        code, _, err = run(capsys, "pay", "release", "--db", db_url, "--note", "ok", " ")
        assert code == 2 and "statement id number 1 is empty" in err
        assert all(r["paid_at"] is None for r in _rows(engine))
        for args in (("pay", "close", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15"),
                     ("pay", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15")):
            before = _rows(engine)
            code, _, err = run(capsys, *args, "--by", "", "--rulebook", "example-cct-2026")
            assert code == 2 and len(err.strip().splitlines()) == 1 and "--by" in err and "empty" in err
            assert _rows(engine) == before
    finally:
        engine.dispose()


def _paid_by_cli(capsys, db_url, sid):
    code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "TED-9", sid)
    assert code == 0, err


def test_mark_paid_from_the_cli_writes_an_audit_row_naming_the_shift_and_amount(db_url, capsys):
    from central.registry.schema import audit_log

    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        total = {r["statement_id"]: r for r in _rows(engine)}[FIRST]["total_cents"]
        _paid_by_cli(capsys, db_url, FIRST)
        with engine.connect() as conn:
            rows = conn.execute(select(audit_log.c.actor, audit_log.c.action, audit_log.c.detail)
                                .where(audit_log.c.action == "pay.mark_paid")).all()
        assert len(rows) == 1 and rows[0][0].startswith("cli:")
        assert rows[0][2] == {"statements": [FIRST], "detail": "TED-9", "paid": [[FIRST, CHIEF, total]]}
    finally:
        engine.dispose()


def test_a_deleted_paid_statement_comes_back_on_hold_not_payable_again(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        _paid_by_cli(capsys, db_url, FIRST)
        with engine.begin() as conn:
            conn.execute(statement_lines.delete().where(statement_lines.c.statement_id == FIRST))
            conn.execute(statements.delete().where(statements.c.statement_id == FIRST))
        code, out, err = run(capsys, "pay", "close", "--db", db_url, "--from", "2026-03-15", "--to",
                             "2026-03-15", "--at", "2026-04-05T00:00:00+00:00")
        assert code == 0, err
        assert out[0]["written"] == 1 and out[0]["stored_on_hold"] == 1
        assert f"portgate: warning: 1 shift(s) with a payment" in err and CHIEF in err
        back = {r["statement_id"]: r for r in _rows(engine)}[FIRST]
        assert back["paid_at"] is None and back["hold_reason"].startswith("PAYMENT_RECORD_LOST:")
        assert f"{FIRST} (paid " in back["hold_reason"] and "TED-9" in back["hold_reason"]
        assert "is not marked paid in the statements (deleted or un-marked)" in back["hold_reason"]
        code, _, err = run(capsys, "pay", "mark-paid", "--db", db_url, FIRST)
        assert code == 2 and "on hold for review" in err
        assert _close_day(capsys, db_url)[0]["written"] == 0  # the same hold: nothing new
    finally:
        engine.dispose()


def test_an_unmarked_paid_statement_is_superseded_by_one_on_hold(db_url, capsys):
    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        _paid_by_cli(capsys, db_url, FIRST)
        with engine.begin() as conn:
            conn.execute(update(statements).where(statements.c.statement_id == FIRST).values(paid_at=None))
        code, _, err = run(capsys, "pay", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15")
        assert code == 0, err
        assert "PAYMENT_RECORD_LOST" in err
        [current] = _current_of(engine, CHIEF)
        row = {r["statement_id"]: r for r in _rows(engine)}[current]
        assert current != FIRST and row["hold_reason"].startswith("PAYMENT_RECORD_LOST:")
        assert "is not marked paid in the statements (deleted or un-marked)" in row["hold_reason"]
        _, overdue, _ = run(capsys, "pay", "overdue", "--db", db_url, "--at", "2026-05-01T00:00:00+00:00")
        assert next(o for o in overdue if o["statement_id"] == current)["hold"].startswith("PAYMENT_RECORD_LOST")
        done = _close_day(capsys, db_url)[0]
        assert done["written"] == 0
    finally:
        engine.dispose()


def test_a_mistaken_mark_paid_is_reversed_on_the_record_not_held_as_a_lost_payment(db_url, capsys):
    """``pay reverse-paid``: the statement is payable again, the audit log keeps the mark reversed
    and the reason, and the next pay run stores no PAYMENT_RECORD_LOST hold for it (an un-marking
    by hand, the test above, is held)."""
    from central.registry.schema import audit_log

    engine = _ledger(db_url)
    try:
        _close_day(capsys, db_url)
        _paid_by_cli(capsys, db_url, FIRST)
        code, _, err = run(capsys, "pay", "reverse-paid", "--db", db_url, FIRST)
        assert code == 2 and "--reason" in err  # a reason is required
        code, _, err = run(capsys, "pay", "reverse-paid", "--db", db_url, "--reason", " ", FIRST)
        assert code == 2 and "a reversal needs a reason" in err
        code, _, err = run(capsys, "pay", "reverse-paid", "--db", db_url, "--reason", "lote errado", "NOPE", FIRST)
        assert code == 2 and "unknown: NOPE" in err
        assert {r["statement_id"]: r for r in _rows(engine)}[FIRST]["paid_at"] is not None  # nothing changed
        code, out, err = run(capsys, "pay", "reverse-paid", "--db", db_url, "--reason", "pago no lote errado", FIRST)
        assert code == 0, err
        row = {r["statement_id"]: r for r in _rows(engine)}[FIRST]
        assert row["paid_at"] is None and row["paid_ref"] is None and row["hold_reason"] is None
        with engine.connect() as conn:
            [(actor, detail)] = conn.execute(select(audit_log.c.actor, audit_log.c.detail)
                                             .where(audit_log.c.action == "pay.reverse_paid")).all()
        assert actor.startswith("cli:") and detail["detail"] == "pago no lote errado"
        assert detail["statements"] == [FIRST] and detail["reversed"][0][:2] == [FIRST, CHIEF]
        assert detail["reversed"][0][4] == "TED-9"  # the mark reversed: its reference kept
        code, _, err = run(capsys, "pay", "reverse-paid", "--db", db_url, "--reason", "de novo", FIRST)
        assert code == 2 and f"not marked paid: {FIRST}" in err
        code, _, err = run(capsys, "pay", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15")
        assert code == 0, err
        assert "PAYMENT_RECORD_LOST" not in err
        assert _current_of(engine, CHIEF) == [FIRST]
        _paid_by_cli(capsys, db_url, FIRST)  # paid again, then that mark lost: held again
        with engine.begin() as conn:
            conn.execute(update(statements).where(statements.c.statement_id == FIRST).values(paid_at=None))
        code, _, err = run(capsys, "pay", "--db", db_url, "--from", "2026-03-15", "--to", "2026-03-15")
        assert code == 0 and "PAYMENT_RECORD_LOST" in err
    finally:
        engine.dispose()
