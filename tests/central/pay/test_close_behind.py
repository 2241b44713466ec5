"""The month close's shift half beside its pay half (``central.pay.close_behind``): on PostgreSQL
the pay is computed and the statements written while the shift half's transaction writes, and
the statements are committed only after it committed; on SQLite the halves run one after the other. Failures of either half."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from central.ledger import reclose
from central.ledger.tables import shifts, statements
from central.pay import close
from central.pay.close import STEPS
from portgate.errors import StoreError
from tests.central.pay.test_incremental_close import _assert_as_the_full_path, _close, month  # noqa: F401


def _count(engine, table) -> int:
    """Rows of ``table`` committed (read on a connection of its own)."""
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_statements_are_written_while_the_shifts_are_on_postgresql_and_committed_after_them(month, mocker):
    engine = month[0]
    behind = engine.dialect.name == "postgresql"
    writing = threading.Event()  # the pay half planned its statements and is about to write them
    written = threading.Event()  # the statements and lines written, not committed
    seen: dict[str, object] = {}
    real_store, real_pay, real_save = reclose._store_changed, close.pay_shifts, close.save_statements

    def store(*args, **kwargs):  # the shift half's first write waits for the statements' (PostgreSQL)
        seen["pay half writing when the shifts are written"] = writing.is_set()
        seen["statements written before the shifts were"] = written.wait(timeout=120 if behind else 0)
        seen["store thread"] = threading.current_thread() is threading.main_thread()
        return real_store(*args, **kwargs)

    def pay(*args, **kwargs):
        out = real_pay(*args, **kwargs)
        seen["shifts committed when paid"] = _count(engine, shifts) > 0
        return out

    def save(*args, before_write, before_commit, **kwargs):  # the pay half commits after the shift half
        def then_write():
            writing.set()
            before_write()

        def then_commit():
            written.set()
            before_commit()
            seen["shifts committed when the statements are committed"] = _count(engine, shifts) > 0
            seen["statements not committed before"] = _count(engine, statements) == 0
        return real_save(*args, before_write=then_write, before_commit=then_commit, **kwargs)

    mocker.patch.object(reclose, "_store_changed", store)
    mocker.patch.object(close, "pay_shifts", pay)
    mocker.patch.object(close, "save_statements", save)
    told: list[str] = []
    done = _close(*month, progress=told.append)
    assert seen == {"pay half writing when the shifts are written": behind,
                    "statements written before the shifts were": behind, "store thread": not behind,
                    "shifts committed when paid": not behind,
                    "shifts committed when the statements are committed": True,
                    "statements not committed before": True}
    assert told == list(STEPS)  # in order, each once, from the caller's thread
    assert done.rebuilt == done.paid > 0 and done.statements == _count(engine, statements)
    assert not any(t.name.startswith("close-shifts") for t in threading.enumerate())
    _assert_as_the_full_path(*month)


def test_a_shift_half_failing_as_it_writes_stores_no_statement(month, mocker):
    engine = month[0]
    mocker.patch.object(reclose, "_store_changed", side_effect=OperationalError("COPY", {}, "gone"))
    told: list[str] = []
    with pytest.raises(StoreError, match="closing the month failed"):
        _close(*month, progress=told.append)
    assert _count(engine, shifts) == 0 and _count(engine, statements) == 0
    assert STEPS[4] not in told and STEPS[7] not in told
    assert not any(t.name.startswith("close-shifts") for t in threading.enumerate())
    mocker.stopall()
    done = _close(*month)  # nothing half-written: the next close goes the full path
    assert done.rebuilt == done.paid > 0


def test_a_pay_half_failing_waits_for_the_shift_half_and_stores_no_statement(month, mocker):
    engine = month[0]
    mocker.patch.object(close, "pay_shifts", side_effect=RuntimeError("pay failed"))
    with pytest.raises(RuntimeError, match="pay failed"):
        _close(*month)
    assert not any(t.name.startswith("close-shifts") for t in threading.enumerate())
    assert _count(engine, shifts) > 0 and _count(engine, statements) == 0  # as a close stopped between
    mocker.stopall()
    again = _close(*month)
    assert again.rebuilt == 0 and again.paid > 0
    _assert_as_the_full_path(*month)
