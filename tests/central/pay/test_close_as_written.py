"""A close that paid workers digests the current statements from what it read before and what it
wrote (``central.pay.close._as_written``) instead of reading them back: the digests it stores are
byte for byte those of the rows read back; a write by anyone else in between (the change counters
are not the close's own) makes it read them back; so does, on PostgreSQL, a statement id column in
a collation other than C (``reclose.sorts_as_python``: the whole digest is in the database's
order)."""

from __future__ import annotations

from sqlalchemy import select, update

import central.pay.close as close
from central.ledger.reclose import scope_key, stored_digests
from central.ledger.tables import statements
from tests.central.ledger.test_rebuild_equality import Z
from tests.central.pay.test_close_counters import PAID
from tests.central.pay.test_incremental_close import (  # noqa: F401 (month: a fixture)
    _assert_as_the_full_path, _close, month)


def _stored_against_read_back(engine, first, last, unpaid: str | None = None) -> None:
    """The pay digests the last close stored equal the ones of the current rows read back now
    (``unpaid``: a worker whose row was edited and whom that close did not pay: its per-worker
    digest is the earlier one, the whole digest has the edit)."""
    scope = scope_key(first, last, Z)
    with engine.connect() as conn:
        rows = close._current_rows(conn, first, last)
        whole = stored_digests(conn, scope, close.WHOLE_PAY)
        per_worker = {reg: o for reg, (_i, o) in stored_digests(conn, scope, "pay").items()
                      if o != close.EMPTY}  # a worker with no statement
    assert rows and whole == {"*": (close.EMPTY, close._whole_digest(rows))}
    now = close._pay_outputs(rows)
    if unpaid is not None:
        assert per_worker.pop(unpaid) != now.pop(unpaid)
    assert per_worker == now


def _edit_statement(engine, shift_id: str) -> None:
    with engine.begin() as conn:
        conn.execute(update(statements).where(statements.c.shift_id == shift_id,
                                              statements.c.superseded_at.is_(None)).values(total_cents=1))


def test_a_first_close_digests_what_it_wrote_as_read_back(month, mocker):
    engine, first, last = month[:3]
    read = mocker.spy(close, "_current_rows")
    written = mocker.spy(close, "_as_written")
    done = _close(*month)
    assert read.call_count == 1  # the rows before only
    assert written.spy_return is not None
    assert done.statements == len(written.spy_return)
    _stored_against_read_back(engine, first, last)
    assert _close(*month).read == 0
    _assert_as_the_full_path(*month)


def test_a_superseded_statement_is_left_out_of_what_was_written(month, mocker):
    engine, first, last = month[:3]
    _close(*month)
    _edit_statement(engine, PAID)
    written = mocker.spy(close, "_as_written")
    done = _close(*month)
    assert done.paid == 1 and done.run.saved.superseded == 1 and done.run.saved.updated == 1
    assert written.spy_return is not None
    assert len(written.spy_return) == done.statements
    with engine.connect() as conn:
        old = conn.execute(select(statements.c.statement_id).where(
            statements.c.shift_id == PAID, statements.c.superseded_at.is_not(None))).scalar_one()
    assert old in done.run.saved.superseded_ids
    assert old not in {r[1] for r in written.spy_return}
    _stored_against_read_back(engine, first, last)
    assert _close(*month).read == 0
    _assert_as_the_full_path(*month)


def test_a_write_by_someone_else_during_the_close_sends_it_reading_back(month, mocker):
    engine, first, last = month[:3]
    _close(*month)
    _edit_statement(engine, PAID)  # the next close reads the statements before paying
    with engine.connect() as conn:
        other, owner = conn.execute(select(statements.c.statement_id, statements.c.registration).where(
            statements.c.superseded_at.is_(None), statements.c.shift_id != PAID)
            .order_by(statements.c.statement_id)).first()
    real = close.save_statements

    def meanwhile(*args, **kwargs):  # another session edits a statement between read and save
        with engine.begin() as conn:
            conn.execute(update(statements).where(statements.c.statement_id == other)
                         .values(hold_reason="edited meanwhile"))
        return real(*args, **kwargs)

    mocker.patch.object(close, "save_statements", meanwhile)
    read = mocker.spy(close, "_current_rows")
    written = mocker.spy(close, "_as_written")
    done = _close(*month)
    assert done.paid == 1 and written.spy_return is None and read.call_count == 2
    _stored_against_read_back(engine, first, last, unpaid=owner)  # the edit is in the whole digest
