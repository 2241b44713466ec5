"""The shift half of an incremental month close: rebuild only the workers whose inputs or stored
rows changed since the last close (RULES.md G5, G8, G9, P6), the way a build skips unchanged
targets.

Per worker (registration) and scope (work dates and zone), ``close_digests`` keeps two SHA-256
digests of the last close:

- input: everything the worker's shifts are rebuilt from: the raw bytes of the worker's admit/exit
  taps and meal-worked records in the window (``events.raw``, ordered by event id), the clock
  placement of each of them (``place_times`` over the whole month and the anchors of its untrusted
  boots: another worker's event can move it or flag it CLOCK_BACKWARDS), the recorded chain breaks
  naming any of them (``central.ledger.breaks``: a break the audit records later flags the shift
  CHAIN_BREAK), the office meal corrections (P6) of the worker's shifts in the window, the scope
  and ``DIGEST_VERSION``;
- output: the worker's stored ``shifts`` rows (every column but ``rebuilt_at``) and flags, as the
  driver hands them back.

``rebuild_changed`` reads the events (decoded narrow, once), computes every worker's input digest,
and reads the stored digests. When the change counters of ``shifts`` and ``shift_flags``
(``central.ledger.changes``, bumped by the database on every write) are the ones the last close of
the scope recorded (kind ``changes``), the stored output digests stand and no stored row is read;
otherwise it reads the stored rows (one digest of all the stored rows of the scope,
kind ``shiftall``, is compared first: when it matches, the per-worker output digests are the
stored ones; otherwise they are computed from the rows), and runs ``reconstruct``/corrections/compare/write
(``central.ledger.store``'s path) only for the workers where either digest differs or is missing;
a row edited behind the ledger's back changes the output digest, so it is put right. On a scope's
first close every worker is rebuilt whatever its digests: with ``early`` (the month close on
PostgreSQL) the shifts are handed over as soon as they are rebuilt, and the input digests
(``central.ledger.close_inputs``), the rows' binding and the output digests follow. A change to
the rebuild code bumps ``DIGEST_VERSION``. Raises ``portgate.errors.BadInput`` for a damaged
stored event and what SQLAlchemy raises (the caller owns the transaction).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import operator
from collections import defaultdict
from collections.abc import Callable
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.bulk import first_column
from central.ledger.breaks import apply_chain_breaks
from central.ledger.close_record import (CHANGES, EMPTY, WHOLE, WHOLE_SHIFTS, counted_as,  # noqa: F401
                                         counters_state, record_counters, scope_key, sorts_as_python,
                                         stored_digests, utc_times, write_digests)
from central.ledger.close_inputs import _Inputs, input_digests
from central.ledger.corrections import apply_corrections
from central.ledger.shifts import Shift, place_times, reconstruct
from central.ledger.stored_shifts import (_FIRST, _by_shift_id, _by_worker, _count_stored,  # noqa: F401
                                          _output_digest, _stored_rows, _unexited_rows, _whole_digest)
from central.ledger.store import (SHIFT_COLUMNS, _anchors, _store_changed, _taps_query, _window,
                                  bound_shifts, named)
from central.ledger.tables import close_digests, shifts
from central.ledger.taps import MalformedEvent, decode_clocks, decode_taps
from portgate.timeutil import as_utc

#: Part of every input digest: bump it when the rebuild (``reconstruct``, corrections) changes.
DIGEST_VERSION = b"shifts/2"
SHIFT_TABLES = ("shifts", "shift_flags")
#: The named steps of ``rebuild_changed``, in order (pt-BR / English: a progress bar shows them).
STEPS = ("marcações lidas / taps read", "entradas resumidas / inputs digested",
         "turnos gravados conferidos / stored shifts checked", "turnos refeitos / shifts rebuilt",
         "turnos gravados / shifts stored")
_CLOSED_BY = SHIFT_COLUMNS.index("closed_by") - 1  # in a stored row without its shift_id
_PERIOD_END = SHIFT_COLUMNS.index("period_end") - 1


@dataclasses.dataclass(frozen=True, slots=True)
class Rebuilt:
    """What ``rebuild_changed`` did. ``shifts``: the rebuilt workers' shifts (corrections applied,
    as now stored); ``outputs``: every worker's output digest; ``unexited``: per worker, the period
    end (aware UTC) of each shift not closed by an exit (what makes pay depend on the time it
    runs); ``stored``: shifts of the dates now stored; ``in_order``: the rebuilt shifts of
    ``shifts`` in one list, by period start, registration and shift id (``reconstruct``'s order);
    ``partial``: what ``rebuild_changed`` tells its ``early`` caller, the shifts only: ``in_order``,
    the counts and ``read`` as computed, ``outputs`` naming every worker, each ``EMPTY``, and
    ``shifts`` and ``unexited`` empty (the final result has them)."""

    shifts: dict[str, list[Shift]]
    outputs: dict[str, str]
    unexited: dict[str, tuple[dt.datetime, ...]]
    rebuilt: int
    skipped: int
    stored: int
    read: int = 0  # stored shift and flag rows read back for their digests (0: counters unchanged)
    in_order: tuple[Shift, ...] | list[Shift] = ()
    partial: bool = False


@dataclasses.dataclass(slots=True)
class _Month:
    """The month's admit/exit taps and meal records: ``raws`` (``events.raw``, as read), ``taps``
    (their narrow clock views, same order; ``full``: their full ``decode_taps`` views, which carry
    the same fields) and ``month`` (``taps`` and the clock anchors of their untrusted boots);
    ``placed``: ``place_times(month)`` once computed (a first close: step 2 places every event once
    for its digests and step 4's rebuild)."""

    raws: list[bytes]
    taps: list
    month: list
    full: bool = False
    placed: dict | None = None


@dataclasses.dataclass(slots=True)
class _Stored:
    """The stored shifts of the scope as far as they were read: ``outputs`` (every worker's output
    digest), ``shift_rows``/``flag_rows`` (``_stored_rows``; ``None``: not read), ``rows``/``flags``
    (``_by_worker``: all of them when the whole digest differed, else the rebuilt workers' only;
    ``None``: not grouped), ``whole`` (their whole digest), ``read`` (rows read back) and
    ``written`` (step 5's rows as bound)."""

    outputs: dict[str, str]
    shift_rows: list | None = None
    flag_rows: list | None = None
    rows: dict | None = None
    flags: dict | None = None
    whole: str | None = None
    read: int = 0
    written: list | None = None  # step 5's rows of its shifts as bound (``SHIFT_COLUMNS``)


def rebuild_changed(conn: Connection, date_from: dt.date, date_to: dt.date, zone: ZoneInfo, *,
                    now: dt.datetime, step: Callable[[str], None] | None = None,
                    ready: Callable[[Rebuilt], None] | None = None,
                    early: Callable[[Rebuilt], None] | None = None) -> Rebuilt:
    """Make the stored shifts of work dates [date_from, date_to] equal to the events, rebuilding
    only the workers whose input or stored-output digest differs from the last close's (see the
    module docstring); store the new digests of those workers. ``step``: told the name of each
    step of ``STEPS`` once it is done (a progress bar). ``ready``: when workers are rebuilt, called
    once their shifts and every output digest are computed, before step 5 writes anything, with
    what will be returned but ``read`` (the rows a read-back may still add; step 5 writes once it
    returns): a caller can go on with the shifts while the writes run (nothing it gets changes).
    ``early``: on a scope's first close (no shift digest of the scope stored: every worker is
    rebuilt whatever its digests), called instead of ``ready`` as soon as the shifts are rebuilt,
    with them only (``Rebuilt.partial``); the input digests, the rows' binding and the output
    digests are computed once it returns (issue 32: the close pays meanwhile)."""
    told = step or _silent
    scope = scope_key(date_from, date_to, zone)
    month = _read_month(conn, *_window(date_from, date_to, zone), full=_first_close(conn, scope))
    told(STEPS[0])
    inputs = input_digests(conn, DIGEST_VERSION + scope.encode(), month, date_from, date_to,
                           later=early is not None and month.full)  # a first close: digested later
    told(STEPS[1])
    known, counters = counters_state(conn, scope, SHIFT_TABLES)
    last = stored_digests(conn, scope, "shifts")
    stored = _stored_outputs(conn, scope, known, last, date_from, date_to)
    workers = inputs.workers | set(stored.outputs)
    todo = _changed(workers, last, inputs, stored.outputs)
    if todo:  # the rebuilt workers' stored rows are compared and replaced
        _read_for_rebuild(conn, stored, todo, date_from, date_to)
    unexited, n_stored = _unexited_and_count(conn, stored, todo, date_from, date_to)
    told(STEPS[2])
    rebuilt: dict[str, list[Shift]] = {}
    found = _reconstruct(conn, month, inputs, todo, zone, date_from, date_to) if todo else []
    told(STEPS[3])
    if todo:
        n_stored += len(found) - sum(len(stored.rows.get(reg, ())) for reg in todo)
        counts = (len(todo), len(workers) - len(todo), n_stored)
        if early is not None and not last:  # every worker rebuilt: the shifts are all the caller needs
            early(Rebuilt({}, dict.fromkeys(workers, EMPTY), {}, *counts, stored.read, found, partial=True))
            ready = None
        rebuilt = _store_rebuilt(conn, found, stored, todo, unexited, date_from, date_to, now, ready and (
            lambda done: ready(Rebuilt(done, stored.outputs, unexited, *counts, stored.read, found))))
        counters = _digest_rebuilt(conn, scope, stored, todo, found, inputs, counters, now, (date_from, date_to))
    if stored.rows is not None:  # the whole digest differed or the rows changed
        write_digests(conn, scope, WHOLE_SHIFTS, {WHOLE: (EMPTY, stored.whole)}, now)
    if not known or todo:
        record_counters(conn, scope, counters, now)
    told(STEPS[4])
    return Rebuilt(rebuilt, stored.outputs, unexited, len(todo), len(workers) - len(todo), n_stored,
                   stored.read, found)


def _changed(workers: set[str], last: dict[str, tuple[str, str]], inputs: _Inputs,
             outputs: dict[str, str]) -> set[str]:
    """The workers whose input or output digest differs from the last close's (``last``; none
    stored: every worker, whatever its digests, which are not computed for it)."""
    if not last:
        return set(workers)
    return {reg for reg in workers if last.get(reg) != (inputs.digests.get(reg, EMPTY), outputs.get(reg, EMPTY))}


def _digest_rebuilt(conn: Connection, scope: str, stored: _Stored, todo: set[str], found: list[Shift],
                    inputs: _Inputs, was: dict[str, int], now: dt.datetime,
                    dates: tuple[dt.date, dt.date]) -> dict[str, int]:
    """After step 5's writes: store ``todo``'s digests, set ``stored.whole`` (the digest of all
    the stored rows, as written when ``_as_written`` can tell them, else read back) and return
    the change counters after this transaction's writes (``was``: before them)."""
    write_digests(conn, scope, "shifts", {reg: (inputs.digests.get(reg, EMPTY), stored.outputs[reg])
                                          for reg in todo}, now)
    _known, counters = counters_state(conn, scope, SHIFT_TABLES)  # this transaction's writes
    after = _as_written(conn, stored, todo, found, was, counters)
    if after is None:  # read them back
        after = _stored_rows(conn, *dates)
        stored.read += len(after[0]) + len(after[1])
    stored.whole = _whole_digest(*after)
    return counters


def _as_written(conn: Connection, stored: _Stored, todo: set[str], found: list[Shift],
                was: dict[str, int], now: dict[str, int]) -> tuple[list, list] | None:
    """What ``_stored_rows`` would read back after step 5, computed from the rows step 3 read
    and the shifts step 5 wrote (``found``, whose rows ``_store_changed`` bound in
    ``stored.written``): only when no worker of ``todo`` had a stored row (nothing deleted or
    kept: every shift of ``found`` and its flags inserted; a scope's first close), the counters
    say nobody else wrote (``counted_as``) and the database sorts shift ids as Python does
    (``sorts_as_python``); else ``None`` (read them back)."""
    if stored.shift_rows is None or stored.written is None or any(stored.rows.get(reg) for reg in todo):
        return None
    new_flags = [(s.registration, s.shift_id, f.code, f.detail) for s in found for f in s.flags]
    if not (counted_as(conn, was, now, {"shifts": len(found), "shift_flags": len(new_flags)})
            and sorts_as_python(conn, "shifts", "shift_id")):
        return None
    rows = [*stored.shift_rows, *(row[:-1] for row in stored.written)]
    rows.sort(key=_FIRST)
    flags = [*stored.flag_rows, *new_flags]
    flags.sort(key=_SECOND)  # stable: each shift's flags stay in their insertion (id) order
    return rows, flags


def _silent(_name: str) -> None:
    """No progress shown."""


def _first_close(conn: Connection, scope: str) -> bool:
    """Whether no shift digest of ``scope`` is stored: every worker with events is rebuilt."""
    c = close_digests.c
    return conn.execute(select(c.registration).where(c.scope == scope, c.kind == "shifts").limit(1)).first() is None


def _read_month(conn: Connection, lo: dt.datetime, hi: dt.datetime, full: bool = False) -> _Month:
    """Step 1: the raw taps of the window, decoded narrow (only what the digests need; ``full``:
    decoded whole once, for a close that rebuilds every worker), and the clock anchors of their
    untrusted boots. Raises ``BadInput`` naming a damaged stored event."""
    raws = first_column(conn, _taps_query(lo, hi))  # PostgreSQL: bytes sent as bytes, not hex text
    try:
        taps = (decode_taps if full else decode_clocks)(raws)  # narrow: only what the digests need
    except MalformedEvent as exc:
        raise named(conn, exc) from exc
    boots = {(e.gate_id, e.boot_id) for e in taps if not e.clock_trusted}
    anchors = _anchors(conn, boots, {e.event_id for e in taps}) if boots else []
    return _Month(raws, taps, taps + anchors if anchors else taps, full)


def _stored_outputs(conn: Connection, scope: str, known: bool, last: dict[str, tuple[str, str]],
                    date_from: dt.date, date_to: dt.date) -> _Stored:
    """Step 3: every worker's output digest. Unchanged since the last close when the change
    counters are the ones it recorded (``known``: nothing read); otherwise the stored rows are
    read and one digest of them all compared first, per worker only when that one differs."""
    if known:
        return _Stored({reg: o for reg, (_i, o) in last.items() if o != EMPTY})
    shift_rows, flag_rows = _stored_rows(conn, date_from, date_to)
    stored = _Stored({}, shift_rows, flag_rows, read=len(shift_rows) + len(flag_rows),
                     whole=_whole_digest(shift_rows, flag_rows))
    if stored_digests(conn, scope, WHOLE_SHIFTS).get(WHOLE) == (EMPTY, stored.whole):
        stored.outputs = {reg: o for reg, (_i, o) in last.items() if o != EMPTY}
    else:
        stored.rows, stored.flags = _by_worker(shift_rows, flag_rows)
        stored.outputs = {reg: _output_digest(own, stored.flags.get(reg, ()))
                          for reg, own in stored.rows.items()}
    return stored


def _read_for_rebuild(conn: Connection, stored: _Stored, todo: set[str], date_from: dt.date,
                      date_to: dt.date) -> None:
    """The stored rows the rebuild of ``todo`` compares and replaces: read (if step 3 did not) and
    grouped by worker (``todo``'s only, if step 3 did not group them all)."""
    if stored.shift_rows is None:
        stored.shift_rows, stored.flag_rows = _stored_rows(conn, date_from, date_to)
        stored.read += len(stored.shift_rows) + len(stored.flag_rows)
    if stored.rows is None:
        stored.rows, stored.flags = _by_worker([r for r in stored.shift_rows if r[1] in todo],
                                               [f for f in stored.flag_rows if f[0] in todo])


def _unexited_and_count(conn: Connection, stored: _Stored, todo: set[str], date_from: dt.date,
                        date_to: dt.date) -> tuple[dict[str, tuple], int]:
    """``({registration: (period end, ...)}, n)``: the period ends (aware UTC) of the stored shifts
    not closed by an exit of the workers not in ``todo``, and how many shifts are stored; from the
    rows read if they were, else by two narrow queries."""
    unexited: dict[str, tuple] = defaultdict(tuple)
    if stored.shift_rows is None:
        for reg, end in _unexited_rows(conn, date_from, date_to):
            unexited[reg] += (_aware(end),)
        return dict(unexited), _count_stored(conn, date_from, date_to)
    for r in stored.shift_rows:
        if r[_CLOSED_BY + 1] != "exit" and r[1] not in todo:
            unexited[r[1]] += (_aware(r[_PERIOD_END + 1]),)
    return dict(unexited), len(stored.shift_rows)


def _reconstruct(conn: Connection, month: _Month, inputs: _Inputs, todo: set[str], zone: ZoneInfo,
                 date_from: dt.date, date_to: dt.date) -> list[Shift]:
    """Step 4: the shifts of ``todo``'s workers in the dates, rebuilt from their taps (fully
    decoded) with the clock placement of the whole month, meal corrections (P6) and chain breaks
    applied. Raises ``BadInput`` naming a damaged stored event."""
    try:
        subset = ([e for e in month.taps if e.payload.registration in todo] if month.full else
                  decode_taps([raw for raw, e in zip(month.raws, month.taps) if e.payload.registration in todo]))
    except MalformedEvent as exc:
        raise named(conn, exc) from exc
    placed = month.placed if month.placed is not None else place_times(month.month)
    found = [s for s in reconstruct(subset, zone, placed=placed)
             if date_from <= s.work_date <= date_to]
    if inputs.any_fix:  # no meal correction stored at all: none to apply
        found = apply_corrections(conn, found)
    return apply_chain_breaks(conn, found, inputs.broken)  # the breaks read for the digests


def _store_rebuilt(conn: Connection, found: list[Shift], stored: _Stored, todo: set[str],
                   unexited: dict[str, tuple], date_from: dt.date, date_to: dt.date,
                   now: dt.datetime, ready: Callable[[dict], None] | None = None) -> dict[str, list[Shift]]:
    """Step 5: set ``todo``'s output digests in ``stored.outputs`` and their open period ends in
    ``unexited``, tell ``ready`` (if given) ``found`` by worker, then make ``todo``'s stored shifts
    and flags those of ``found`` (``_store_changed``: the difference only); returns ``found`` by
    worker (by shift id)."""
    theirs: dict[str, tuple] = {}
    for reg in todo:
        for r in stored.rows.get(reg, ()):
            theirs[r[0]] = (r[1:], [])
        for sid, code, detail in stored.flags.get(reg, ()):
            theirs[sid][1].append((code, detail))
    theirs = {sid: (cols, tuple(fl)) for sid, (cols, fl) in theirs.items()}
    bound = stored.written = bound_shifts(conn, found, now)
    rebuilt, new_rows, new_flags = _by_shift_id(found, bound)
    for reg in todo:
        own = new_rows.get(reg)
        stored.outputs[reg] = _output_digest(own, new_flags.get(reg, ())) if own else EMPTY
        unexited[reg] = tuple(s.period_end for s in rebuilt.get(reg, ()) if s.closed_by != "exit")
    if ready is not None:
        ready(rebuilt)
    _store_changed(conn, found, date_from, date_to, now, stored=theirs, bound=bound)
    return rebuilt


_SECOND = operator.itemgetter(1)


def _aware(value) -> dt.datetime:
    """A stored time as aware UTC (SQLite: naive UTC text)."""
    if type(value) is str:
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
    return as_utc(value)
