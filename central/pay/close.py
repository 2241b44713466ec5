"""The month close, incremental: shifts rebuilt from the events, then statements computed and stored
(Lei 9.719 art. 2 §1), each only for the workers whose inputs or stored rows changed since the last
close of the same work dates.

``close_month(engine, date_from, date_to, zone, rulebook, calendar, now=...)``:

1. ``central.ledger.reclose.rebuild_changed``: the shift half (its docstring says what a worker's
   shift inputs are);
2. per worker, the pay input digest: the worker's stored-shift digest (step 1's output), the whole
   rulebook (every field: id, wages, terms), the holiday calendar (zone, years, days), which of
   the worker's shifts with no exit are still OPEN at ``now`` (``OPEN_GRACE``) and
   ``PAY_DIGEST_VERSION``; the pay output digest: the worker's current statements in the dates
   (id, shift, rulebook, version, digest, total, flags, hold reason, service end, due time; not
   the office's payment and release marks, which pay leaves alone);
   when the change counters of ``statements`` and ``statement_lines`` are the ones the last
   close recorded, the stored output digests stand and no statement is read back; when the
   ``statement_lines`` counter differs (or none is recorded: a scope's first close), each current
   statement's lines are checked against its ``digest`` and a worker with an edited line is repaid
   (the statement superseded);
3. the workers whose two pay digests differ from the last close's (or have none) are paid and
   stored as ``pay_from_ledger`` does (``pay_shifts`` + ``save_statements``: new versions supersede
   the current ones that differ), and so are the workers with a payment the statements no longer
   show (``central.pay.payments.lost_payments``: stored on hold); the others are skipped.

Pay reads no registry table (a worker's function comes with the shift from the escala dispatch),
so the registry's part is the port's holiday calendar. Shifts, pay and their digests are three
transactions; a close interrupted between them leaves digests that no longer match, which only
sends those workers through the full path next time. On PostgreSQL the shift transaction writes on
a thread while the stored statements are read and pay is computed, planned and written, and the
statements are committed after it (``central.pay.close_behind``); the pay digests of the rows as
written are computed while the statement lines are written. On a scope's first close there
(no shift digest stored) the pay half starts from the rebuilt shifts as soon as ``reconstruct``
returns (``rebuild_changed``'s ``early``; ``Rebuilt.partial``): every worker is paid whatever its
digests, so the shift input digests, the shift rows' binding and output digests, and the pay
input digests are all computed once the statements are being written, when the client would
otherwise wait for the server (issue 32: 0.9-1 s of a 5,000-worker close's Python off its path
to the first write; docs/performance.md, thirteenth pass); with pay digests of the scope stored,
the pay half waits for the whole shift half (its commit) and compares them. The cyclic collector is paused for the
whole close, and what the close built (a month's events, shifts, statements: millions of tracked
objects, none in a cycle) goes to its oldest generation when it ends instead of being scanned by
the young collection its allocation count starts at once (``portgate.gctune.paused(long_lived=True)``:
0.4-0.9 s of a 5,000-worker first close, after its last write). Raises ``StoreError`` on a database
failure, ``BadInput`` for a damaged stored event.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from zoneinfo import ZoneInfo

from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import store_failure
from central.ledger.bulk import bind_tuples
from central.ledger.close_record import (CHANGES, EMPTY, WHOLE, counted_as, counters_state, record_counters,
                                         scope_key, sorts_as_python, stored_digests, utc_times, write_digests)
from central.ledger.reclose import STEPS as SHIFT_STEPS
from central.ledger.reclose import Rebuilt, rebuild_changed
from central.ledger.shifts import Shift
from central.ledger.store import _raw_rows, read_shifts
from central.ledger.tables import statement_lines, statements
from central.pay.calendar import HolidayCalendar
from central.pay.close_behind import ShiftHalf
from central.pay.close_digests import DIGESTED_COLUMNS, PAY_DIGEST_VERSION  # noqa: F401 (importable here)
from central.pay.close_digests import Digested as _Digested
from central.pay.close_digests import calendar_digest, rulebook_digest  # noqa: F401 (importable here)
from central.pay.close_digests import digest_written as _digest_written
from central.pay.close_digests import pay_inputs as _pay_inputs
from central.pay.close_digests import pay_outputs as _pay_outputs
from central.pay.close_digests import whole_digest as _whole_digest
from central.pay.rulebook import Rulebook
from central.pay.payments import lost_payments
from central.pay.statements_store import PayRun, pay_shifts, save_statements
from central.pay.versions import PAY_CONFLICT, stored_digest_matches
from portgate.gctune import paused as gc_paused

#: The ``close_digests`` kind of the digest of all the current statements of a scope.
WHOLE_PAY = "payall"
PAY_TABLES = ("statements", "statement_lines")
#: ``store_failure``'s words for the shift half's unique key or lock taken by another close (a
#: ``StoreConflict``, exit 1); the pay half's is ``versions.PAY_CONFLICT``.
CLOSE_CONFLICT = "another close of these days is running or ran meanwhile, run it again"
#: The named steps of a close, in order (pt-BR / English: ``portgate pay close`` shows them in its
#: progress bar): the shift half's (``central.ledger.reclose.STEPS``), then the pay half's.
STEPS = (*SHIFT_STEPS, "pagamentos conferidos / pay inputs checked", "turnos pagos / shifts paid",
         "demonstrativos gravados / statements stored", "resumos gravados / digests recorded")


@dataclasses.dataclass(frozen=True, slots=True)
class CloseResult:
    """What a close did: ``workers`` seen; of them ``rebuilt`` (shifts) and ``paid`` (statements
    computed and stored) went through the full path, ``shifts_skipped`` and ``pay_skipped`` did not;
    ``shifts``/``statements``: the shifts and current statements of the dates now stored; ``run``:
    the pay run of the paid workers; ``read``: stored shift, flag and statement rows read back to
    compute output digests (0 when the change counters showed nothing written since the last
    close and nothing was rebuilt or paid)."""

    workers: int
    rebuilt: int
    shifts_skipped: int
    paid: int
    pay_skipped: int
    shifts: int
    statements: int
    run: PayRun
    read: int = 0


def close_month(engine: Engine, date_from: dt.date, date_to: dt.date, zone: ZoneInfo,
                rulebook: Rulebook, calendar: HolidayCalendar, *, now: dt.datetime,
                by: str | None = None, reason: str | None = None,
                progress: Callable[[str], None] | None = None) -> CloseResult:
    """Close work dates [date_from, date_to] (see the module docstring). ``by``/``reason`` as for
    ``pay_from_ledger``. ``progress``: called with the name of each step of ``STEPS`` once it is
    done, in order (each once, also when a step had nothing to do; not after a failure)."""
    told = progress or (lambda _name: None)
    scope = scope_key(date_from, date_to, zone)
    try:
        with gc_paused(long_lived=True), ShiftHalf(engine, lambda conn, step, ready: rebuild_changed(
                conn, date_from, date_to, zone, now=now, step=step, ready=ready,
                early=ready if conn.dialect.name == "postgresql" else None), told,
                what="closing the month failed", conflict=CLOSE_CONFLICT) as half, \
                ThreadPoolExecutor(1, thread_name_prefix="close-digests") as beside:
            with engine.connect() as conn:
                state = _read_pay_state(conn, scope, date_from, date_to)  # PostgreSQL: while the
                ledger, todo = _first_to_pay(half, state)  # shifts are rebuilt; then while written
                inputs = None if ledger.partial else _pay_inputs(ledger, rulebook, calendar, now)
                todo = _to_pay(state, inputs) if todo is None else todo
                found = _shifts_to_pay(conn, half, ledger, todo, date_from, date_to)
            run, digested = _pay_and_store(engine, half, beside, found, state, rulebook, calendar,
                                           (date_from, date_to), now=now, by=by, reason=reason)
            ledger = half.stored(*STEPS[5:7])
            inputs = _pay_inputs(ledger, rulebook, calendar, now) if inputs is None else inputs
        told(STEPS[7])
        n_statements, read = _record_pay_digests(engine, scope, state, inputs, todo, run, digested,
                                                 (date_from, date_to), now)
    except SQLAlchemyError as exc:
        raise store_failure("closing the month failed", exc, CLOSE_CONFLICT) from exc
    told(STEPS[8])
    workers = set(inputs) | set(state.outputs)
    return CloseResult(len(set(ledger.outputs) | workers), ledger.rebuilt, ledger.skipped,
                       len(todo), len(workers) - len(todo), ledger.stored, n_statements, run,
                       state.read + read + ledger.read)


@dataclasses.dataclass(slots=True)
class _PayState:
    """What the pay half starts from, read before the pay run (nothing in it depends on the
    shifts): ``known`` (the change counters of ``PAY_TABLES`` are the ones the last close
    recorded), ``counters`` (those counters now), ``last`` (the last close's per-worker pay
    digests), ``before`` (the counters and then the current statement rows, as read, when not
    ``known``), ``whole_differs`` (those rows are not what the last close's whole digest says),
    ``outputs`` (each worker's pay output digest), ``lines_altered`` (per worker, the current
    statements whose stored lines no longer hash to their digest), ``lost`` (``lost_payments``),
    ``n_statements`` (current statements stored) and ``read`` (stored rows read)."""

    known: bool
    counters: dict[str, int]
    last: dict[str, tuple[str, str]]
    before: tuple[dict[str, int], list[tuple]] | None
    whole_differs: bool
    outputs: dict[str, str]
    lines_altered: dict[str, set[str]]
    lost: dict
    n_statements: int
    read: int


def _read_pay_state(conn: Connection, scope: str, date_from: dt.date, date_to: dt.date) -> _PayState:
    """The stored statements' side of the pay digests (``_PayState``): when the change counters of
    the statement tables are the recorded ones the stored output digests stand and no statement is
    read; otherwise the current statements are read (counters first) and compared with the last
    whole digest; the lines are checked against their statements' digests when their counter
    moved (or none is recorded: a scope's first close)."""
    known, counters = counters_state(conn, scope, PAY_TABLES)
    last = stored_digests(conn, scope, "pay")
    before, rows, read = None, [], 0  # (counters, rows) read in that order: what the pay run starts from
    if known:  # no statement or line written since the last close recorded them
        n_statements, whole_differs = _count_current(conn, date_from, date_to), False
    else:
        rows = _current_rows(conn, date_from, date_to)
        before, read, n_statements = (counters, rows), len(rows), len(rows)
        whole_differs = stored_digests(conn, scope, WHOLE_PAY).get(WHOLE) != (EMPTY, _whole_digest(rows))
    outputs = (_pay_outputs(rows) if whole_differs
               else {reg: o for reg, (_i, o) in last.items() if o != EMPTY})
    lines_altered: dict[str, set[str]] = {}
    if counters.get("statement_lines") != _recorded_lines(conn, scope):  # a first close too
        lines_altered, n_lines = _lines_altered(conn, date_from, date_to)
        read += n_lines
    lost = lost_payments(conn, date_from, date_to)  # paid per the audit log only
    return _PayState(known, counters, last, before, whole_differs, outputs, lines_altered, lost,
                     n_statements, read)


def _first_to_pay(half: ShiftHalf, state: _PayState) -> tuple[Rebuilt, set[str] | None]:
    """``(ledger, todo)``: the shift half's result as computed and, when it is the shifts only
    (``Rebuilt.partial``: a scope's first close on PostgreSQL) and no pay digest of the scope is
    stored either, the workers to pay (every worker, whatever its pay digests: they are computed
    once the statements are written). ``todo`` is ``None`` otherwise (compare the digests); a
    partial result with pay digests stored is waited for whole (the shift half's commit)."""
    ledger = half.computed()
    if not ledger.partial:
        return ledger, None
    if not state.last:
        return ledger, _to_pay(state, ledger.outputs)
    return half.stored(), None


def _to_pay(state: _PayState, inputs: dict[str, str]) -> set[str]:
    """The workers to pay: those whose pay input or output digest differs from the last close's
    (or has none), with an edited statement line, or with a payment the statements lost."""
    workers = set(inputs) | set(state.outputs)
    todo = {reg for reg in workers
            if state.last.get(reg) != (inputs.get(reg, EMPTY), state.outputs.get(reg, EMPTY))}
    todo |= set(state.lines_altered)
    todo |= {reg for reg, _why in state.lost.values()}
    return todo


def _shifts_to_pay(conn: Connection, half: ShiftHalf, ledger: Rebuilt, todo: set[str],
                   date_from: dt.date, date_to: dt.date) -> list[Shift]:
    """The shifts of ``todo``'s workers, by period start, registration and shift id: the rebuilt
    ones as computed, the others read once the shift half has committed."""
    if not any(reg not in ledger.shifts and ledger.outputs.get(reg, EMPTY) != EMPTY for reg in todo):
        # only rebuilt shifts: ``ledger.in_order`` is already in this order (a first close)
        return [s for s in ledger.in_order if s.registration in todo]
    found = [s for reg in todo for s in ledger.shifts.get(reg, ())]
    half.stored()  # stored shifts that were not rebuilt, once committed
    found.extend(s for s in read_shifts(conn, date_from, date_to)
                 if s.registration in todo and s.registration not in ledger.shifts)
    found.sort(key=lambda s: (s.period_start, s.registration, s.shift_id))
    return found


def _pay_and_store(engine: Engine, half: ShiftHalf, beside: ThreadPoolExecutor, found: list[Shift],
                   state: _PayState, rulebook: Rulebook, calendar: HolidayCalendar,
                   dates: tuple[dt.date, dt.date], *, now: dt.datetime, by: str | None,
                   reason: str | None) -> tuple[PayRun, Future | None]:
    """Pay ``found`` and store the statements (``save_statements``: written while the shift half
    writes, which waits for them, and committed after it). When the current rows were read before (``state.before``), the
    pay digests of the rows as written are computed on ``beside`` while the lines are written:
    returns the run and that computation (``_digest_written``; ``None``: none)."""
    run = pay_shifts(found, rulebook, calendar, now=now)
    altered_ids = frozenset(sid for ids in state.lines_altered.values() for sid in ids)
    digested: list[Future] = []

    def before_lines(rows: tuple[tuple, ...], gone: frozenset[str]) -> None:
        if state.before is not None:
            lo, hi = bind_tuples(engine.dialect, statements, ("work_day", "work_day"), [dates])[0]
            digested.append(beside.submit(_digest_written, state.before[1], rows, gone, lo, hi))

    saved = save_statements(engine, run.statements, now=now, by=by, reason=reason, lines_altered=altered_ids,
                            lost={k: v[1] for k, v in state.lost.items()}, before_write=half.write,
                            before_lines=before_lines, before_commit=lambda: half.stored(*STEPS[5:7]))
    return dataclasses.replace(run, saved=saved), (digested[0] if digested else None)


def _record_pay_digests(engine: Engine, scope: str, state: _PayState, inputs: dict[str, str],
                        todo: set[str], run: PayRun, digested: Future | None,
                        dates: tuple[dt.date, dt.date], now: dt.datetime) -> tuple[int, int]:
    """Store the pay digests of ``todo``'s workers and of all the current statements, and the
    change counters, in one transaction: from the rows as written (``_as_written``) when nobody
    else wrote, else read back. Returns ``(current statements, rows read back)``."""
    if not (todo or state.whole_differs):
        if not state.known and state.counters:  # verified the slow way: the next re-close need not
            with engine.begin() as conn:
                record_counters(conn, scope, state.counters, now)
        return state.n_statements, 0
    read = 0
    with engine.begin() as conn:
        _known, counters = counters_state(conn, scope, PAY_TABLES)  # before the rows: a
        rows = _as_written(conn, state.before, counters, run.saved, digested)
        if rows is None:  # write in between shows next time
            rows = _current_rows(conn, *dates)
            read += len(rows)
            written = _Digested(rows, _pay_outputs(rows), _whole_digest(rows))
        else:
            written = digested.result()
        write_digests(conn, scope, "pay", {reg: (inputs.get(reg, EMPTY), written.outputs.get(reg, EMPTY))
                                           for reg in todo}, now)
        write_digests(conn, scope, WHOLE_PAY, {WHOLE: (EMPTY, written.whole)}, now)
        record_counters(conn, scope, counters, now)
    return len(written.rows), read


def _current_rows(conn: Connection, date_from: dt.date, date_to: dt.date) -> list[tuple]:
    """The current statements of work days [date_from, date_to] as the driver hands them back
    (``DIGESTED_COLUMNS``; PostgreSQL: times in UTC, ``utc_times``: only digested), in the
    database's statement id order."""
    c = statements.c
    lo, hi = bind_tuples(conn.dialect, statements, ("work_day", "work_day"), [(date_from, date_to)])[0]
    query = select(*(c[n] for n in DIGESTED_COLUMNS)).where(
        c.work_day >= bindparam("d_lo"), c.work_day <= bindparam("d_hi"),
        c.superseded_at.is_(None)).order_by(c.statement_id)
    with utc_times(conn):
        return _raw_rows(conn, query, {"d_lo": lo, "d_hi": hi})


def _as_written(conn: Connection, before: tuple[dict[str, int], list[tuple]] | None,
                counters: dict[str, int], saved, digested: Future | None) -> list[tuple] | None:
    """The current statements of the dates after ``saved`` (``versions.SaveResult``) was
    stored, as ``_current_rows`` would read them back (``digested`` computed them and their
    digests from ``before``, the counters and then the rows read before the pay run, and what the
    run wrote: ``_digest_written``). Only when ``counters`` (read now) are
    ``before``'s plus exactly the run's own writes (``close_record.counted_as``: on SQLite per
    row: inserted statements, rows the supersede UPDATEs changed, inserted lines; on PostgreSQL
    once per table its transaction wrote, and only when it superseded no duplicate current
    statement, whose UPDATE the count cannot tell apart), so that nobody else wrote either table
    in between, and the database sorts statement ids as Python does (``close_record.sorts_as_python``:
    SQLite, PostgreSQL in the C collation); ``None`` otherwise (nothing read before, no counters,
    anything else written, another collation): read them back."""
    if before is None or saved is None or digested is None:
        return None
    was = before[0]
    if conn.dialect.name == "sqlite":
        wrote = {"statements": len(saved.rows) + saved.updated, "statement_lines": saved.lines_written}
    elif saved.superseded != len(saved.superseded_ids):  # duplicates superseded too
        return None
    else:  # a supersede UPDATE counts even when it changed no row
        wrote = {"statements": len(saved.rows) + len(saved.superseded_ids),
                 "statement_lines": saved.lines_written}
    if not (counted_as(conn, was, counters, wrote) and sorts_as_python(conn, "statements", "statement_id")):
        return None
    return digested.result().rows


def _recorded_lines(conn: Connection, scope: str) -> int | None:
    """The statement_lines counter the last close of ``scope`` recorded (``None``: none)."""
    got = stored_digests(conn, scope, CHANGES).get("statement_lines")
    return int(got[0]) if got else None


def _lines_altered(conn: Connection, date_from: dt.date, date_to: dt.date) -> tuple[dict[str, set[str]], int]:
    """``({registration: {statement_id}}, rows read)``: the current statements of the work days whose
    stored lines, with their row's rulebook, total, flags and hold reason, no longer hash to the
    statement's ``digest`` (``versions.statement_digest``; an adjustment line and flag taken off
    first, as the digest is of the statement before them; a statement with no digest is not
    checked)."""
    c, ln = statements.c, statement_lines.c
    lo, hi = bind_tuples(conn.dialect, statements, ("work_day", "work_day"), [(date_from, date_to)])[0]
    values = {"d_lo": lo, "d_hi": hi}
    current = and_(c.work_day >= bindparam("d_lo"), c.work_day <= bindparam("d_hi"),
                   c.superseded_at.is_(None))
    heads = _raw_rows(conn, select(c.statement_id, c.registration, c.rulebook, c.total_cents, c.flags,
                                   c.hold_reason, c.digest).where(current), values)
    lines: dict[str, list[tuple]] = defaultdict(list)
    body = _raw_rows(conn, select(ln.statement_id, ln.rule, ln.article, ln.description, ln.amount_cents)
                     .join(statements, c.statement_id == ln.statement_id).where(current)
                     .order_by(ln.statement_id, ln.position), values)
    for sid, *line in body:
        lines[sid].append(tuple(line))
    out: dict[str, set[str]] = defaultdict(set)
    for sid, reg, rulebook, total, flags, hold, digest in heads:
        if digest is None:  # stored before statements had digests: nothing to check against
            continue
        if not stored_digest_matches(rulebook, total, flags, hold, lines.get(sid, []), digest):
            out[reg].add(sid)
    return dict(out), len(heads) + len(body)


def _count_current(conn: Connection, date_from: dt.date, date_to: dt.date) -> int:
    """How many current statements of work days [date_from, date_to] are stored."""
    c = statements.c
    return conn.execute(select(func.count()).select_from(statements).where(
        c.work_day >= date_from, c.work_day <= date_to, c.superseded_at.is_(None))).scalar_one()
