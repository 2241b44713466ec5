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
a thread while pay is computed and planned, and the statements are written after its commit
(``central.pay.close_behind``). Raises ``StoreError`` on a database failure,
``BadInput`` for a damaged stored event.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import operator
from collections import defaultdict
from collections.abc import Callable
from zoneinfo import ZoneInfo

import msgspec
from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import store_failure
from central.ledger.bulk import bind_tuples
from central.ledger.reclose import STEPS as SHIFT_STEPS
from central.ledger.reclose import (CHANGES, EMPTY, WHOLE, Rebuilt, counted_as, counters_state,
                                    rebuild_changed, record_counters, scope_key, sorts_as_python,
                                    stored_digests, utc_times, write_digests)
from central.ledger.store import _raw_rows, read_shifts
from central.ledger.tables import statement_lines, statements
from central.pay.calendar import HolidayCalendar
from central.pay.close_behind import ShiftHalf
from central.pay.rulebook import Rulebook
from central.pay.payments import lost_payments
from central.pay.statements_store import OPEN_GRACE, PayRun, pay_shifts, save_statements
from central.pay.versions import PAY_CONFLICT, STATEMENT_COLUMNS, stored_digest_matches
from portgate.gctune import paused as gc_paused

#: Part of every pay input digest: bump it when the pay engine or the statement storage changes.
PAY_DIGEST_VERSION = b"pay/1"
#: The ``close_digests`` kind of the digest of all the current statements of a scope.
WHOLE_PAY = "payall"
PAY_TABLES = ("statements", "statement_lines")
_STATEMENT_COLUMNS = ("registration", "statement_id", "shift_id", "rulebook", "version", "digest",
                      "total_cents", "flags", "hold_reason", "service_end", "due_at")
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
        with gc_paused(), ShiftHalf(engine, lambda conn, step, ready: rebuild_changed(
                conn, date_from, date_to, zone, now=now, step=step, ready=ready), told,
                what="closing the month failed", conflict=PAY_CONFLICT) as half:
            ledger, read = half.computed(), 0  # the shifts are written meanwhile (PostgreSQL)
            with engine.connect() as conn:
                inputs = _pay_inputs(ledger, rulebook, calendar, now)
                known, counters = counters_state(conn, scope, PAY_TABLES)
                last = stored_digests(conn, scope, "pay")
                before = None  # (counters, rows) read in that order: what the pay run starts from
                if known:  # no statement or line written since the last close recorded them
                    n_statements, last_whole_differs = _count_current(conn, date_from, date_to), False
                else:
                    rows = _current_rows(conn, date_from, date_to)
                    before = (counters, rows)
                    read += len(rows)
                    n_statements, whole = len(rows), _whole_digest(rows)
                    last_whole_differs = stored_digests(conn, scope, WHOLE_PAY).get(WHOLE) != (EMPTY, whole)
                if not last_whole_differs:
                    outputs = {reg: o for reg, (_i, o) in last.items() if o != EMPTY}
                else:
                    outputs = _pay_outputs(rows)
                workers = set(inputs) | set(outputs)
                todo = {reg for reg in workers
                        if last.get(reg) != (inputs.get(reg, EMPTY), outputs.get(reg, EMPTY))}
                lines_altered: dict[str, set[str]] = {}
                if counters.get("statement_lines") != _recorded_lines(conn, scope):  # first too
                    lines_altered, n_lines = _lines_altered(conn, date_from, date_to)
                    read += n_lines
                    todo |= set(lines_altered)
                lost = lost_payments(conn, date_from, date_to)  # paid per the audit log only
                todo |= {reg for reg, _why in lost.values()}
                found = [s for reg in todo for s in ledger.shifts.get(reg, ())]
                if any(reg not in ledger.shifts and ledger.outputs.get(reg, EMPTY) != EMPTY
                       for reg in todo):  # stored shifts that were not rebuilt, once committed
                    half.stored()
                    found.extend(s for s in read_shifts(conn, date_from, date_to)
                                 if s.registration in todo and s.registration not in ledger.shifts)
            found.sort(key=lambda s: (s.period_start, s.registration, s.shift_id))
            run = pay_shifts(found, rulebook, calendar, now=now)
            altered_ids = frozenset(sid for ids in lines_altered.values() for sid in ids)
            run = dataclasses.replace(run, saved=save_statements(  # written once the shifts are
                engine, run.statements, now=now, by=by, reason=reason, lines_altered=altered_ids,
                lost={k: v[1] for k, v in lost.items()}, before_write=lambda: half.stored(*STEPS[5:7])))
            ledger = half.stored(*STEPS[5:7])
        read += ledger.read
        told(STEPS[7])
        if todo or last_whole_differs:
            with engine.begin() as conn:
                _known, counters = counters_state(conn, scope, PAY_TABLES)  # before the rows: a
                rows = _as_written(conn, date_from, date_to, before, counters, run.saved)
                if rows is None:  # write in between shows next time
                    rows = _current_rows(conn, date_from, date_to)
                    read += len(rows)
                n_statements, after = len(rows), _pay_outputs(rows)
                write_digests(conn, scope, "pay", {reg: (inputs.get(reg, EMPTY), after.get(reg, EMPTY))
                                                   for reg in todo}, now)
                write_digests(conn, scope, WHOLE_PAY, {WHOLE: (EMPTY, _whole_digest(rows))}, now)
                record_counters(conn, scope, counters, now)
        elif not known and counters:  # verified the slow way: the next re-close need not
            with engine.begin() as conn:
                record_counters(conn, scope, counters, now)
    except SQLAlchemyError as exc:
        raise store_failure("closing the month failed", exc, PAY_CONFLICT) from exc
    told(STEPS[8])
    return CloseResult(len(set(ledger.outputs) | workers), ledger.rebuilt, ledger.skipped,
                       len(todo), len(workers) - len(todo), ledger.stored, n_statements, run, read)


def rulebook_digest(rulebook: Rulebook) -> bytes:
    """SHA-256 of every field of the rulebook (its TOML's parsed content)."""
    return hashlib.sha256(msgspec.json.encode(rulebook)).digest()


def calendar_digest(calendar: HolidayCalendar) -> bytes:
    """SHA-256 of the calendar's zone, years and holidays."""
    body = [calendar.timezone, calendar.years.start, calendar.years.stop,
            sorted((d.isoformat(), n) for d, n in calendar.days.items())]
    return hashlib.sha256(msgspec.json.encode(body)).digest()


def _pay_inputs(ledger: Rebuilt, rulebook: Rulebook, calendar: HolidayCalendar,
                now: dt.datetime) -> dict[str, str]:
    common = PAY_DIGEST_VERSION + rulebook_digest(rulebook) + calendar_digest(calendar)
    out = {}
    for reg, shifts_digest in ledger.outputs.items():
        h = hashlib.sha256(common)
        h.update(shifts_digest.encode())
        h.update(bytes(now < end + OPEN_GRACE for end in sorted(ledger.unexited.get(reg, ()))))
        out[reg] = h.hexdigest()
    return out


def _current_rows(conn: Connection, date_from: dt.date, date_to: dt.date) -> list[tuple]:
    """The current statements of work days [date_from, date_to] as the driver hands them back
    (``_STATEMENT_COLUMNS``; PostgreSQL: times in UTC, ``utc_times``: only digested), in the
    database's statement id order."""
    c = statements.c
    lo, hi = bind_tuples(conn.dialect, statements, ("work_day", "work_day"), [(date_from, date_to)])[0]
    query = select(*(c[n] for n in _STATEMENT_COLUMNS)).where(
        c.work_day >= bindparam("d_lo"), c.work_day <= bindparam("d_hi"),
        c.superseded_at.is_(None)).order_by(c.statement_id)
    with utc_times(conn):
        return _raw_rows(conn, query, {"d_lo": lo, "d_hi": hi})


def _as_written(conn: Connection, date_from: dt.date, date_to: dt.date,
                before: tuple[dict[str, int], list[tuple]] | None, counters: dict[str, int],
                saved) -> list[tuple] | None:
    """The current statements of the dates after ``saved`` (``versions.SaveResult``) was
    stored, as ``_current_rows`` would read them back, computed from ``before`` (the counters and
    then the rows read before the pay run) and what the run wrote: the rows before but the
    superseded ones, and the new rows of the dates, by statement id. Only when ``counters`` (read
    now) are ``before``'s plus exactly the run's own writes (``reclose.counted_as``: on SQLite per
    row: inserted statements, rows the supersede UPDATEs changed, inserted lines; on PostgreSQL
    once per table its transaction wrote, and only when it superseded no duplicate current
    statement, whose UPDATE the count cannot tell apart), so that nobody else wrote either table
    in between, and the database sorts statement ids as Python does (``reclose.sorts_as_python``:
    SQLite, PostgreSQL in the C collation); ``None`` otherwise (nothing read before, no counters,
    anything else written, another collation): read them back."""
    if before is None or saved is None:
        return None
    was, rows = before
    if conn.dialect.name == "sqlite":
        wrote = {"statements": len(saved.rows) + saved.updated, "statement_lines": saved.lines_written}
    elif saved.superseded != len(saved.superseded_ids):  # duplicates superseded too
        return None
    else:  # a supersede UPDATE counts even when it changed no row
        wrote = {"statements": len(saved.rows) + len(saved.superseded_ids),
                 "statement_lines": saved.lines_written}
    if not (counted_as(conn, was, counters, wrote) and sorts_as_python(conn, "statements", "statement_id")):
        return None
    lo, hi = bind_tuples(conn.dialect, statements, ("work_day", "work_day"), [(date_from, date_to)])[0]
    gone = saved.superseded_ids
    out = [r for r in rows if r[1] not in gone] if gone else list(rows)
    out.extend(_WRITTEN(r) for r in saved.rows if lo <= r[_WORK_DAY] <= hi)
    out.sort(key=_STATEMENT_ID)
    return out


_WRITTEN = operator.itemgetter(*(STATEMENT_COLUMNS.index(n) for n in _STATEMENT_COLUMNS))
_WORK_DAY = STATEMENT_COLUMNS.index("work_day")
_STATEMENT_ID = operator.itemgetter(_STATEMENT_COLUMNS.index("statement_id"))


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


def _whole_digest(rows: list[tuple]) -> str:
    """SHA-256 of all the rows, in their order (times as msgpack timestamps: any zone)."""
    return hashlib.sha256(msgspec.msgpack.encode(rows)).hexdigest()


def _pay_outputs(rows: list[tuple]) -> dict[str, str]:
    """``{registration: SHA-256}`` of each worker's rows (by statement id; an aware time packed as
    its instant: PostgreSQL's rows in the session's zone digest as the same rows in UTC)."""
    by_reg: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_reg[row[0]].append(row[1:])
    return {reg: hashlib.sha256(msgspec.msgpack.encode(sorted(items))).hexdigest()
            for reg, items in by_reg.items()}
