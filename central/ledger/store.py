"""Ledger I/O around the pure shift reconstruction: read events, write and read derived shifts.

All times written are aware UTC; SQLite returns them naive, so every read goes through ``as_utc``.
Vendor (SQLAlchemy) errors are translated to ``StoreError`` at the public functions.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from zoneinfo import ZoneInfo

import msgspec
from sqlalchemy import and_, bindparam, delete, insert, or_, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import store_failure
from central.ledger.bulk import bind_tuples, insert_tuples
from central.ledger.schema import events
from central.ledger.breaks import apply_chain_breaks
from central.ledger.corrections import apply_corrections
from central.ledger.shifts import Flag, Shift, reconstruct
from central.ledger.taps import MalformedEvent, decode_taps
from central.ledger.tables import shift_flags, shifts
from portgate.errors import BadInput, StoreError
from portgate.gctune import paused as _no_cyclic_gc
from portgate.timeutil import as_utc
from wire.events import Event, TapPayload, decode, encode

#: Events are read this far around the requested work dates (periods cross midnight; extensions).
MARGIN = dt.timedelta(days=2)



def event_row(event: Event, received_at: dt.datetime) -> dict:
    """The ``events`` row of a wire event (what the ingest inserts), keeping its MAC and raw bytes."""
    payload = event.payload
    tap = isinstance(payload, TapPayload)
    return {
        "event_id": event.event_id, "port": event.port, "gate_id": event.gate_id,
        "boot_id": event.boot_id, "seq": event.seq, "occurred_at": event.occurred_at.astimezone(dt.UTC),
        "clock_trusted": event.clock_trusted, "mono_ns": event.mono_ns,
        "type": type(payload).__struct_config__.tag, "registration": getattr(payload, "registration", None),
        "decision": payload.decision if tap else None, "payload": msgspec.to_builtins(payload),
        "mac": event.mac, "raw": encode(event), "received_at": received_at,
    }


def insert_events(conn: Connection, evs: list[Event], received_at: dt.datetime) -> None:
    """Append events (tests, demo, bench). The ingest has its own deduplicating path."""
    if evs:
        conn.execute(insert(events), [event_row(e, received_at) for e in evs])


def load_events(conn: Connection, date_from: dt.date, date_to: dt.date, zone: ZoneInfo) -> list[Event]:
    """Admit/exit taps and meal-worked records (P6) that can belong to shifts of local work dates
    [date_from, date_to], every
    untrusted-clock tap (its stored time means nothing), and the trusted events of those boots (clock
    anchors)."""
    lo, hi = _window(date_from, date_to, zone)
    out = [decode(raw) for raw in conn.execute(_taps_query(lo, hi)).scalars().all()]
    boots = {(e.gate_id, e.boot_id) for e in out if not e.clock_trusted}
    out.extend(_anchors(conn, boots, {e.event_id for e in out}))
    return out


def load_shift_taps(conn: Connection, date_from: dt.date, date_to: dt.date,
                    zone: ZoneInfo) -> list:
    """The events ``load_events`` returns, for the shift rebuild: the admit/exit taps and meal
    records decoded in one pass as ``central.ledger.taps`` views (only the fields a shift is made
    of), the clock anchors of their untrusted boots as full ``wire.events.Event``. Raises
    ``BadInput`` for a damaged stored event."""
    lo, hi = _window(date_from, date_to, zone)
    raws = conn.execute(_taps_query(lo, hi)).scalars().all()
    try:
        out: list = decode_taps(raws)
    except MalformedEvent as exc:
        raise named(conn, exc) from exc
    del raws
    boots = {(e.gate_id, e.boot_id) for e in out if not e.clock_trusted}
    if boots:
        seen = {e.event_id for e in out}
        out.extend(_anchors(conn, boots, seen))
    return out


def named(conn: Connection, exc: MalformedEvent) -> BadInput:
    """``exc`` naming the stored row of its event: ``ledger event id N (gate G, seq S): ...``."""
    row = conn.execute(select(events.c.id, events.c.gate_id, events.c.seq)
                       .where(events.c.raw == exc.raw).order_by(events.c.id).limit(1)).first()
    where = f"ledger event id {row[0]} (gate {row[1]}, seq {row[2]})" if row else "ledger event"
    return BadInput(exc.reason, where=where)


def _window(date_from: dt.date, date_to: dt.date, zone: ZoneInfo) -> tuple[dt.datetime, dt.datetime]:
    lo = dt.datetime.combine(date_from, dt.time(0), zone).astimezone(dt.UTC) - MARGIN
    hi = dt.datetime.combine(date_to + dt.timedelta(days=1), dt.time(0), zone).astimezone(dt.UTC) + MARGIN
    return lo, hi


def _taps_query(lo: dt.datetime, hi: dt.datetime):
    return select(events.c.raw).where(
        or_(and_(events.c.type == "tap", events.c.decision.in_(("admit", "exit"))),
            events.c.type == "meal_worked"),  # P6 recorded at the gate
        or_(and_(events.c.occurred_at >= lo, events.c.occurred_at < hi),
            events.c.clock_trusted.is_(False)),
    )


def _anchors(conn: Connection, boots: set[tuple[str, str]], seen: set[str]) -> list[Event]:
    """The trusted events of these (gate, boot)s whose ids are not in ``seen`` (which it extends)."""
    out = []
    for gate, boot in sorted(boots):
        rows = conn.execute(
            select(events.c.raw).where(events.c.gate_id == gate, events.c.boot_id == boot,
                                       events.c.clock_trusted.is_(True))
        ).scalars().all()
        for raw in rows:
            ev = decode(raw)
            if ev.event_id not in seen:
                seen.add(ev.event_id)
                out.append(ev)
    return out


def rebuild_shifts(engine: Engine, date_from: dt.date, date_to: dt.date, zone: ZoneInfo,
                   *, now: dt.datetime) -> list[Shift]:
    """Reconstruct the shifts of work dates [date_from, date_to] from the events table and make the
    stored ``shifts``/``shift_flags`` of those dates equal to them: rows whose content (every
    column but ``rebuilt_at``, and the flags) is unchanged are left as they are; changed ones are
    replaced and stamped ``rebuilt_at = now``; new ones inserted; shifts no longer found deleted.
    Raises ``StoreError`` if the database fails (nothing is half-written: one transaction)."""
    try:
        with _no_cyclic_gc(), engine.begin() as conn:
            found = [s for s in reconstruct(load_shift_taps(conn, date_from, date_to, zone), zone)
                     if date_from <= s.work_date <= date_to]
            found = apply_corrections(conn, found)  # P6 meal worked recorded by the office
            found = apply_chain_breaks(conn, found)  # a forged or edited admit/exit: review
            _store_changed(conn, found, date_from, date_to, now)
        return found
    except SQLAlchemyError as exc:
        raise store_failure("rebuilding shifts failed", exc,
                            "another run rebuilt these shifts meanwhile; run again") from exc


#: The ``shifts`` columns in the order ``_shift_values`` gives them (``rebuilt_at`` last).
SHIFT_COLUMNS = ("shift_id", "registration", "ship", "work_date", "period", "function", "berth",
                 "voyage", "post", "gate_id", "period_start", "period_end", "admit_at", "exit_at",
                 "closed_by", "admit_event_id", "exit_event_id", "meal_worked", "held", "rebuilt_at")


def _shift_values(s: Shift, now: dt.datetime) -> tuple:
    return (s.shift_id, s.registration, s.ship, s.work_date, s.period, s.function, s.berth,
            s.voyage, s.post, s.gate_id, s.period_start, s.period_end, s.admit_at, s.exit_at,
            s.closed_by, s.admit_event_id, s.exit_event_id, s.meal_worked, s.held, now)


def bound_shifts(conn: Connection, found: list[Shift], now: dt.datetime) -> list[tuple]:
    """The ``shifts`` rows of ``found`` (``SHIFT_COLUMNS``, ``rebuilt_at`` = ``now``) as the driver
    stores them (``bind_tuples``)."""
    return bind_tuples(conn.dialect, shifts, SHIFT_COLUMNS, (_shift_values(s, now) for s in found))


def _store_changed(conn: Connection, found: list[Shift], date_from: dt.date, date_to: dt.date,
                   now: dt.datetime, stored: dict[str, tuple] | None = None,
                   bound: list[tuple] | None = None) -> list[tuple]:
    """Write the difference between ``found`` and the stored shifts of the dates (see
    ``rebuild_shifts``), or ``stored`` (``_stored_content``'s rows of the shifts to make equal to
    ``found``). Stored and new rows are compared as the driver stores them; returns the rows of
    ``found`` so converted (``SHIFT_COLUMNS``; ``bound``: already converted by ``bound_shifts``)."""
    if bound is None:
        bound = bound_shifts(conn, found, now)
    if stored is None:
        stored = _stored_content(conn, date_from, date_to)
    write, keep = [], set()
    for s, row in zip(found, bound):
        old = stored.get(s.shift_id)
        if old is not None and old[0] == row[1:-1] and old[1] == tuple((f.code, f.detail) for f in s.flags):
            keep.add(s.shift_id)
        else:
            write.append((s, row))
    gone = [sid for sid in stored if sid not in keep]
    for chunk in range(0, len(gone), 2000):
        conn.execute(_DELETE_SHIFTS, {"ids": gone[chunk:chunk + 2000]})
    insert_tuples(conn, shifts, SHIFT_COLUMNS, [row for _s, row in write], bound=True)
    insert_tuples(conn, shift_flags, ("shift_id", "flag", "detail"),
                  [(s.shift_id, f.code, f.detail) for s, _row in write for f in s.flags])
    return bound


_DELETE_SHIFTS = delete(shifts).where(shifts.c.shift_id.in_(bindparam("ids", expanding=True)))


def _stored_content(conn: Connection, date_from: dt.date, date_to: dt.date) -> dict[str, tuple]:
    """``{shift_id: (columns after shift_id but rebuilt_at, ((flag, detail), ...))}`` of the stored
    shifts of the dates, as the driver hands them back (no type conversion)."""
    c = shifts.c
    in_dates = and_(c.work_date >= bindparam("d_lo"), c.work_date <= bindparam("d_hi"))
    lo, hi = bind_tuples(conn.dialect, shifts, ("work_date", "work_date"), [(date_from, date_to)])[0]
    values = {"d_lo": lo, "d_hi": hi}
    flags: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for sid, code, detail in _raw_rows(conn, select(shift_flags.c.shift_id, shift_flags.c.flag,
                                                    shift_flags.c.detail)
                                       .join(shifts, c.shift_id == shift_flags.c.shift_id)
                                       .where(in_dates).order_by(shift_flags.c.id), values):
        flags[sid].append((code, detail))
    return {row[0]: (tuple(row[1:]), tuple(flags.get(row[0], ()))) for row in
            _raw_rows(conn, select(*(c[n] for n in SHIFT_COLUMNS[:-1])).where(in_dates), values)}


def _raw_rows(conn: Connection, query, values: dict):
    """Rows of ``query`` straight from the driver (a list of its tuples, no result processing);
    ``values`` by bind name, already converted."""
    compiled = query.compile(dialect=conn.dialect)
    params = (tuple(values[k] for k in compiled.positiontup) if compiled.positional else values)
    result = conn.exec_driver_sql(compiled.string, params)
    try:
        return result.cursor.fetchall()  # the driver's tuples, in one call
    finally:
        result.close()


def read_shifts(conn: Connection, date_from: dt.date, date_to: dt.date) -> list[Shift]:
    """Stored shifts of work dates [date_from, date_to] with their flags, ordered by period start."""
    try:
        flag_map: dict[str, list[Flag]] = defaultdict(list)
        for sid, code, detail in conn.execute(
            select(shift_flags.c.shift_id, shift_flags.c.flag, shift_flags.c.detail)
            .join(shifts, shifts.c.shift_id == shift_flags.c.shift_id)
            .where(shifts.c.work_date >= date_from, shifts.c.work_date <= date_to)
            .order_by(shift_flags.c.id)
        ):
            flag_map[sid].append(Flag(code, detail))
        c = shifts.c
        lo, hi = bind_tuples(conn.dialect, shifts, ("work_date", "work_date"), [(date_from, date_to)])[0]
        rows = _raw_rows(conn, select(*(c[n] for n in SHIFT_COLUMNS[:-2]))
                         .where(c.work_date >= bindparam("d_lo"), c.work_date <= bindparam("d_hi"))
                         .order_by(c.period_start, c.registration), {"d_lo": lo, "d_hi": hi})
        utc = dt.UTC
        when, day = _TextTimes(), _TextDates()  # SQLite hands back its stored text
        out = []
        for (sid, reg, ship, wdate, period, function, berth, voyage, post, gate, pstart, pend,
             admit, exit_, closed_by, admit_id, exit_id, meal) in rows:
            if type(pstart) is str:  # SQLite: naive UTC text
                wdate, pstart, pend = day[wdate], when[pstart], when[pend]
                admit = when.parse(admit) if admit is not None else None
                exit_ = when.parse(exit_) if exit_ is not None else None
            elif pstart.tzinfo is not utc:  # PostgreSQL: aware, in the session's zone
                pstart, pend, admit, exit_ = (as_utc(v) for v in (pstart, pend, admit, exit_))
            out.append(Shift(sid, reg, ship, wdate, period, function, berth, voyage, post, gate,
                             pstart, pend, admit, exit_, closed_by, admit_id, exit_id, bool(meal),
                             tuple(flag_map[sid]) if sid in flag_map else ()))
        return out
    except SQLAlchemyError as exc:
        raise StoreError(f"reading shifts failed: {exc}") from exc


class _TextTimes(dict):
    """SQLite's stored ``DATETIME`` text (naive UTC) -> aware UTC datetime, memoised for the values
    that repeat (period bounds); ``parse`` for those that do not."""

    def __missing__(self, text: str) -> dt.datetime:
        value = self[text] = self.parse(text)
        return value

    @staticmethod
    def parse(text: str) -> dt.datetime:
        try:
            return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        except ValueError:
            raise StoreError(f"reading shifts failed: a stored time is not ISO 8601: {text!r}") from None


class _TextDates(dict):
    """SQLite's stored ``DATE`` text -> date, memoised."""

    def __missing__(self, text: str) -> dt.date:
        try:
            value = self[text] = dt.date.fromisoformat(text)
        except ValueError:
            raise StoreError(f"reading shifts failed: a stored date is not ISO 8601: {text!r}") from None
        return value
