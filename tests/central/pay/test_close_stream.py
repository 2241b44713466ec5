"""A first close's statements streamed on PostgreSQL (``central.pay.versions_save._stream``,
``central.pay.copy_writer.CopyWriter``): when none of the run's shifts has a stored statement, the
statements and lines go in by batches COPYed on a writer thread while the next batch is planned, in
the pay half's transaction; they store what one COPY each stores (the same line ids), and a batch
failing mid-stream, or the planning failing, rolls the pay transaction back and raises."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from sqlalchemy import delete, func, insert, select

from central.ledger.tables import statement_lines, statements
from central.pay import versions_save
from central.pay.copy_writer import CopyWriter
from central.pay.statements_store import pay_shifts
from central.pay.versions import statement_id
from portgate.errors import StoreConflict
from tests.central.ledger.test_rebuild_equality import _reference
from tests.central.pay.test_incremental_close import LATER, _assert_as_the_full_path, _close, month  # noqa: F401

pytestmark = pytest.mark.parametrize("migrated_url", ["postgresql"], indirect=True)  # COPY: psycopg's


def _count(engine, table) -> int:
    """Rows of ``table`` committed (read on a connection of its own)."""
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def _writers() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "statements-writer"]


class _Watched(CopyWriter):
    """A ``CopyWriter`` that notes each batch handed over and the thread inserting it; ``before``:
    called with the batch's number (1, 2, ...) and its batches before it is handed over."""

    puts: list[int] = []
    threads: set[str] = set()
    before = None

    def put(self, *batches) -> None:
        type(self).puts.append(len(batches[0][2]))
        if type(self).before is not None:
            type(self).before(len(type(self).puts), batches)
        super().put(*batches)

    def _loop(self) -> None:
        type(self).threads.add(threading.current_thread().name)
        super()._loop()


@pytest.fixture()
def watched(monkeypatch):
    """``_Watched`` in place of the writer, 7 statements a batch."""
    monkeypatch.setattr(versions_save, "STREAM_CHUNK", 7)
    monkeypatch.setattr(versions_save, "CopyWriter", _Watched)
    _Watched.puts, _Watched.threads, _Watched.before = [], set(), None
    return _Watched


def test_a_first_close_streams_its_statements_in_batches_with_the_line_ids_of_one_copy(month, watched):
    engine = month[0]
    done = _close(*month)
    saved = done.run.saved
    assert len(watched.puts) == -(-saved.written // 7) > 2 and sum(watched.puts) == saved.written
    assert watched.threads == {"statements-writer"} and not _writers()
    with engine.connect() as conn:
        lines = conn.execute(select(statement_lines.c.id, statement_lines.c.statement_id,
                                    statement_lines.c.position).order_by(statement_lines.c.id)).all()
    ids = [r[0] for r in saved.rows]  # the statements in the order planned (one COPY's order)
    n_lines = {sid: 0 for sid in ids}
    for _id, sid, _pos in lines:
        n_lines[sid] += 1
    expected = [(sid, pos) for sid in ids for pos in range(n_lines[sid])]
    assert [(sid, pos) for _id, sid, pos in lines] == expected
    assert [r[0] for r in lines] == list(range(lines[0][0], lines[0][0] + len(lines)))  # no gap
    assert saved.lines_written == len(lines) > saved.written
    again = _close(*month)  # the history is not empty now: the one-COPY path, nothing to write
    assert again.paid == 0 and len(watched.puts) == -(-saved.written // 7)
    _assert_as_the_full_path(*month)


def test_a_batch_failing_mid_stream_rolls_the_statements_back_and_raises(month, watched):
    engine, first, last, rulebook, calendar = month
    found = sorted(_reference(engine, first, last).values(),  # as the close pays them
                   key=lambda s: (s.period_start, s.registration, s.shift_id))
    taken = statement_id(pay_shifts(found, rulebook, calendar, now=LATER).statements[2 * 7])  # batch 3's
    other = {"statement_id": taken, "shift_id": "another/run", "registration": "another",  # a real
             "rulebook": rulebook.id, "work_day": dt.date(2026, 1, 5), "total_cents": 0,  # unique key
             "service_end": LATER, "due_at": LATER, "computed_at": LATER}  # violation, not in the month
    with engine.begin() as conn:
        conn.execute(insert(statements).values(other))
    with pytest.raises(StoreConflict, match="saving statements failed"):
        _close(*month)
    assert len(watched.puts) > 3  # planned on after the failing batch, not written
    assert not _writers()
    assert _count(engine, statements) == 1 and _count(engine, statement_lines) == 0  # only the other's
    with engine.begin() as conn:
        conn.execute(delete(statements).where(statements.c.statement_id == taken))
    again = _close(*month)  # the shifts were committed (a close stopped between its halves)
    assert again.rebuilt == 0 and again.paid > 0 and again.run.saved.written == again.statements
    _assert_as_the_full_path(*month)


def test_planning_failing_mid_stream_stops_the_writer_and_stores_no_statement(month, watched, monkeypatch):
    engine = month[0]
    real_plan, calls = versions_save._plan_chunk, []

    def plan(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("planning failed")
        return real_plan(*args, **kwargs)
    monkeypatch.setattr(versions_save, "_plan_chunk", plan)
    with pytest.raises(RuntimeError, match="planning failed"):
        _close(*month)
    assert len(watched.puts) == 3 and not _writers()
    assert _count(engine, statements) == 0 and _count(engine, statement_lines) == 0
    monkeypatch.setattr(versions_save, "_plan_chunk", real_plan)
    again = _close(*month)
    assert again.paid > 0 and again.run.saved.written == again.statements
    _assert_as_the_full_path(*month)
