"""A scope's first close on PostgreSQL hands the pay half the rebuilt shifts as soon as
``reconstruct`` returns (``rebuild_changed``'s ``early``, ``Rebuilt.partial``) and digests the
shift inputs, binds the shift rows and digests them once the pay half writes
(``central.ledger.close_inputs``: ``later``); the pay input digests are computed after the
statements are written. The stored rows are the full path's; SQLite and a re-close as before; a
partial result with pay digests already stored is waited for whole; failures after the hand-over
store nothing of the pay half (issue 32, docs/performance.md, thirteenth pass)."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import delete, func, select, text
from sqlalchemy.exc import SQLAlchemyError

from central.ledger import close_inputs
from central.ledger.tables import close_digests, shifts, statements
from central.pay import close
from central.pay.close import STEPS
from portgate.errors import StoreError
from tests.central.pay.test_incremental_close import _assert_as_the_full_path, _close, month  # noqa: F401


def _count(engine, table) -> int:
    """Rows of ``table`` committed (read on a connection of its own)."""
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def _digests(engine) -> dict:
    """``{(scope, kind, registration): (input, output)}`` of ``close_digests``."""
    c = close_digests.c
    with engine.connect() as conn:
        return {r[:3]: r[3:] for r in conn.execute(select(c.scope, c.kind, c.registration, c.input_digest,
                                                          c.output_digest))}


def _spied(mocker) -> list[tuple[str, bool]]:
    """Record ``(what, on the main thread)`` as the input digests, pay and the statements' first
    write happen (spies: the real functions run)."""
    seen: list[tuple[str, bool]] = []
    real_digest, real_pay, real_save = close_inputs.digest_inputs, close.pay_shifts, close.save_statements

    def digest(*args):
        seen.append(("inputs digested", threading.current_thread() is threading.main_thread()))
        return real_digest(*args)

    def pay(*args, **kwargs):
        seen.append(("paid", threading.current_thread() is threading.main_thread()))
        return real_pay(*args, **kwargs)

    def save(*args, before_write, **kwargs):
        def writing():
            seen.append(("statements writing", True))
            before_write()
        return real_save(*args, before_write=writing, **kwargs)

    mocker.patch.object(close_inputs, "digest_inputs", digest)
    mocker.patch.object(close, "pay_shifts", pay)
    mocker.patch.object(close, "save_statements", save)
    return seen


def test_a_first_close_pays_before_the_shift_inputs_are_digested_on_postgresql_only(month, mocker):
    engine = month[0]
    seen = _spied(mocker)
    told: list[str] = []
    done = _close(*month, progress=told.append)
    if engine.dialect.name == "postgresql":  # digested on the shift half's thread once pay writes
        assert seen == [("paid", True), ("statements writing", True), ("inputs digested", False)]
    else:
        assert seen == [("inputs digested", True), ("paid", True), ("statements writing", True)]
    assert told == list(STEPS)
    assert done.rebuilt == done.paid == done.workers > 0 and done.statements == _count(engine, statements)
    first = _digests(engine)
    assert {kind for _scope, kind, _reg in first} == {"shifts", "shiftall", "pay", "payall", "changes"}
    seen.clear()
    again = _close(*month)  # a re-close: the digests compared first, nothing rebuilt or paid
    assert seen[0][0] == "inputs digested"  # before anything of the pay half, as before
    assert (again.rebuilt, again.paid) == (0, 0) and _digests(engine) == first
    _assert_as_the_full_path(*month)


def test_the_pay_half_waits_for_the_whole_shift_half_when_pay_digests_are_stored(month, mocker):
    """No shift digest stored (the shift half rebuilds every worker and hands its shifts over
    early) but the pay digests of the last close are: the pay half compares them, so it waits
    for the shift half's output digests (its commit) and pays nobody whose inputs are unchanged."""
    engine = month[0]
    done = _close(*month)
    first = _digests(engine)
    with engine.begin() as conn:
        conn.execute(delete(close_digests).where(close_digests.c.kind.in_(("shifts", "shiftall"))))
    seen = _spied(mocker)
    again = _close(*month)
    assert (again.rebuilt, again.shifts_skipped, again.paid) == (done.workers, 0, 0)
    assert again.run.statements == [] and again.statements == done.statements
    if engine.dialect.name == "postgresql":  # the shift half's commit came before pay
        assert seen[:2] == [("inputs digested", False), ("paid", True)]
    assert _digests(engine) == first
    _assert_as_the_full_path(*month)


def test_the_input_digests_failing_after_the_hand_over_store_nothing_of_the_pay_half(month, mocker):
    engine = month[0]
    mocker.patch.object(close_inputs, "digest_inputs", side_effect=RuntimeError("digests failed"))
    paid = mocker.spy(close, "pay_shifts")
    with pytest.raises(RuntimeError, match="digests failed"):
        _close(*month)
    assert paid.call_count == (engine.dialect.name == "postgresql")  # after the hand-over there only
    assert _count(engine, shifts) == 0 and _count(engine, statements) == 0
    assert _count(engine, close_digests) == 0
    assert not any(t.name.startswith(("close-shifts", "close-digests")) for t in threading.enumerate())
    mocker.stopall()
    done = _close(*month)  # nothing half-stored: the next close goes the full path
    assert done.rebuilt == done.paid == done.workers > 0
    _assert_as_the_full_path(*month)


def test_a_database_failure_of_the_shift_rows_after_the_hand_over_stores_nothing(month):
    """A trigger refuses the shift rows (a real database error; on PostgreSQL their COPY, while the
    pay half writes its statements after the hand-over; SQLite has no hand-over and fails the same
    way): ``StoreError``, no shift, statement or digest stored; the next close stores everything."""
    engine = month[0]
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("CREATE FUNCTION no_shifts() RETURNS trigger LANGUAGE plpgsql AS "
                              "$$ BEGIN RAISE EXCEPTION 'no shifts today'; END $$"))
            conn.execute(text("CREATE TRIGGER no_shifts BEFORE INSERT ON shifts FOR EACH STATEMENT "
                              "EXECUTE FUNCTION no_shifts()"))
        else:
            conn.execute(text("CREATE TRIGGER no_shifts BEFORE INSERT ON shifts "
                              "BEGIN SELECT RAISE(ABORT, 'no shifts today'); END"))
    with pytest.raises(StoreError, match="closing the month failed") as failed:
        _close(*month)
    assert isinstance(failed.value.__cause__, SQLAlchemyError) and "no shifts today" in str(failed.value.__cause__)
    assert _count(engine, shifts) == 0 and _count(engine, statements) == 0 and _count(engine, close_digests) == 0
    assert not any(t.name.startswith(("close-shifts", "close-digests")) for t in threading.enumerate())
    with engine.begin() as conn:
        conn.execute(text("DROP TRIGGER no_shifts" + (" ON shifts" if engine.dialect.name == "postgresql" else "")))
    done = _close(*month)
    assert done.rebuilt == done.paid == done.workers > 0
    _assert_as_the_full_path(*month)
