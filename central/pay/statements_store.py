"""Pay statements in the ledger: compute from stored shifts, store with the due time, list overdue
ones, mark paid (Lei 9.719 art. 2 §1: pay is due 48 h after the end of the service).

A shift flagged for review (``central.ledger.shifts.REVIEW_FLAGS``: EARLY_EXIT, G9) is paid as
computed and its statement is stored on hold (``hold_reason``): ``mark_paid`` refuses it until the
office releases it (``release_holds``, RULES.md P: "paid as computed unless the office records the
infraction"). Storing a run supersedes the current statement of a shift when the new one differs
(``central.pay.versions``: kept, marked superseded, a paid one answered by an adjustment line);
only the current statement is listed overdue, paid or released.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from zoneinfo import ZoneInfo

import msgspec
from sqlalchemy import select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.ledger.shifts import Shift
from central.ledger.store import read_shifts
from central.ledger.tables import statements
from central.pay.calendar import HolidayCalendar
from central.pay.lines import StatementLine
from central.pay.payments import lost_payments, record_payment, record_reversal
from central.pay.rulebook import Rulebook
from central.pay.versions import SaveResult, statement_id  # noqa: F401
from central.pay.versions_save import save_statements
from central.pay.watchmen import ShiftPayer, Statement, WatchShift, ordinary_period_problem
from portgate.errors import BadInput, StoreError
from portgate.records import period_bounds
from portgate.gctune import paused as gc_paused
from portgate.timeutil import as_utc


def watch_shift(s: Shift) -> WatchShift:
    """The pay engine's view of a reconstructed shift. A shift closed at the period end has no
    extension (its ``exit_at`` is ``None``)."""
    return WatchShift(
        shift_id=s.shift_id, registration=s.registration, function=s.function,
        ship=s.ship, berth=s.berth, period_start=s.period_start,
        period_end=s.period_end, admit_at=s.admit_at,
        exit_at=s.exit_at if s.closed_by == "exit" else None,
        meal_worked=s.meal_worked,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Held:
    """A shift that was not paid and why (its hold flags, or the pay engine's refusal)."""

    shift: Shift
    reasons: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PayRun:
    statements: list[Statement]
    held: list[Held]
    saved: SaveResult | None = None  # what storing did (versions, central.pay.versions)


#: A shift with no exit read may still get one until its period's end plus this grace: the at most
#: 2 h extension of the period (83.611 art. 9 §1; the gate's G9 ``exit_grace_min`` default, 120).
OPEN_GRACE = dt.timedelta(hours=2)
_UNSEEN = object()  # a period not yet checked (``None`` means checked and ordinary)


def open_until(s: Shift, grace: dt.timedelta = OPEN_GRACE) -> dt.datetime | None:
    """When a shift with no exit read stops being open (period end + ``grace``); None if it has
    its exit."""
    return None if s.closed_by == "exit" else s.period_end + grace


def pay_shifts(found: list[Shift], rulebook: Rulebook, calendar: HolidayCalendar, *,
               now: dt.datetime | None = None, open_grace: dt.timedelta = OPEN_GRACE) -> PayRun:
    """Pay every shift that is not held (pure). Held shifts, periods that are not an ordinary period
    of the rulebook (``ordinary_period_problem``) and engine refusals (``BadInput``) are returned in
    ``held`` with their reasons; nothing is silently dropped.

    With ``now`` (aware), a shift with no exit read whose period end plus ``open_grace`` is after
    ``now`` is still OPEN: held with the reason ``OPEN: ...`` (its exit may yet come; paying it now
    would pay a full shift nobody has finished), and paid by a run after that time."""
    payer = ShiftPayer(rulebook, calendar)
    paid: list[Statement] = []
    held: list[Held] = []
    period_problems: dict[tuple[dt.datetime, dt.datetime], str | None] = {}  # periods repeat
    for s in found:
        if now is not None and s.closed_by != "exit" and now < s.period_end + open_grace:
            until = open_until(s, open_grace)
            held.append(Held(s, (f"OPEN: no exit read yet; the shift is open until {until.isoformat()} "
                                 "(period end + exit grace), paid by a run after that",)))
            continue
        if s.flags and s.held:
            held.append(Held(s, tuple(f"{f.code}: {f.detail}" for f in s.flags)))
            continue
        try:
            shift = watch_shift(s)
            key = (shift.period_start, shift.period_end)
            problem = period_problems.get(key, _UNSEEN)
            if problem is _UNSEEN:
                problem = period_problems[key] = ordinary_period_problem(shift, rulebook, calendar.zone)
            if problem is not None:
                raise BadInput(f"{problem}: held", where=s.shift_id)
            statement = payer.pay(shift)
            if s.flags:
                review = s.review_reasons
                if review:  # RULES.md P: paid as computed, on hold for the office's review
                    statement = msgspec.structs.replace(statement, hold_reason="; ".join(review))
            paid.append(statement)
        except BadInput as exc:
            held.append(Held(s, (str(exc),)))
    return PayRun(paid, held)


def pay_from_ledger(engine: Engine, date_from: dt.date, date_to: dt.date, rulebook: Rulebook,
                    calendar: HolidayCalendar, *, now: dt.datetime, store: bool = True,
                    by: str | None = None, reason: str | None = None,
                    shifts_check: Callable[[Connection, list, ZoneInfo], list] | None = None) -> PayRun:
    """Pay the stored shifts of work dates [date_from, date_to]; store the statements unless
    ``store`` is False, as new versions superseding the current ones that differ
    (``central.pay.versions``; ``by``: who ran it, ``reason``: why). A shift still open at ``now``
    (no exit, period end + ``OPEN_GRACE`` not reached) is held OPEN, not paid. ``shifts_check``:
    ``(conn, shifts, zone) -> shifts`` adding hold flags that other records decide, read in the
    same transaction — R10's ``central.production.fromledger.shifts_against_gangs`` (a gangway shift
    of a worker also in a gang on another ship), handed in by the commands and pages above pay
    (pay never imports production). Raises ``StoreError`` on a database failure."""
    # A month is ~10^5 long-lived objects built in a burst: the cyclic collector would rescan them
    # again and again (none of them form cycles), so it is paused for the read and the pay run.
    with gc_paused():
        try:
            with engine.connect() as conn:
                found = read_shifts(conn, date_from, date_to)
                if shifts_check is not None:
                    found = shifts_check(conn, found, calendar.zone)  # R10: held if also in a gang
                lost = lost_payments(conn, date_from, date_to) if store else {}
                run = pay_shifts(found, rulebook, calendar, now=now)
                if store:
                    run = hold_stored(conn, run, rulebook, calendar)
        except SQLAlchemyError as exc:
            raise StoreError(f"reading shifts failed: {exc}") from exc
    if store:
        run = dataclasses.replace(run, saved=save_statements(engine, run.statements, now=now, by=by, reason=reason,
                                                             lost={k: v[1] for k, v in lost.items()}))
    return run


def hold_stored(conn: Connection, run: PayRun, rulebook: Rulebook, calendar: HolidayCalendar) -> PayRun:
    """A shift held for its flags (a DOUBLE_ASSIGNMENT found after its statement was stored: a gang
    imported later, R10; a late gate event) whose current statement is in the ledger: that statement
    is computed again and stored on hold, the flags as its reason, so it supersedes the payable one
    and cannot be marked paid before the office's review. A held shift with nothing stored stays only
    held, as before. Returns ``run`` with those statements added."""
    flagged = {h.shift.shift_id: h for h in run.held if h.shift.flags and h.shift.held}
    if not flagged:
        return run
    stored = set(conn.execute(select(statements.c.shift_id).where(
        statements.c.shift_id.in_(list(flagged)), statements.c.superseded_at.is_(None))).scalars())
    if not stored:
        return run
    payer, extra = ShiftPayer(rulebook, calendar), []
    for shift_id in sorted(stored):
        h = flagged[shift_id]
        try:
            st = payer.pay(watch_shift(h.shift))
        except BadInput:
            continue  # it stays held (printed with its reasons); the stored version is not touched
        extra.append(msgspec.structs.replace(st, hold_reason="; ".join(h.reasons)))
    return dataclasses.replace(run, statements=run.statements + extra)


@dataclasses.dataclass(frozen=True, slots=True)
class StoredStatement:
    statement_id: str
    shift_id: str
    registration: str
    work_day: dt.date
    total: Decimal
    due_at: dt.datetime
    paid_at: dt.datetime | None
    lines: tuple[StatementLine, ...] = ()
    hold_reason: str | None = None  # set while on hold (not released)


def overdue(conn: Connection, at: dt.datetime) -> list[StoredStatement]:
    """Unpaid current (not superseded) statements whose due time is before ``at`` (aware), oldest
    first."""
    rows = conn.execute(
        select(statements).where(statements.c.paid_at.is_(None), statements.c.due_at < at,
                                 statements.c.superseded_at.is_(None))
        .order_by(statements.c.due_at, statements.c.statement_id)
    ).mappings()
    return [StoredStatement(r["statement_id"], r["shift_id"], r["registration"], r["work_day"],
                            Decimal(r["total_cents"]) / 100, as_utc(r["due_at"]), None,
                            hold_reason=_on_hold(r))
            for r in rows]


def _on_hold(row) -> str | None:
    return row["hold_reason"] if row["hold_reason"] and row["hold_released_at"] is None else None


def _payment_states(conn, ids: list[str]) -> dict:
    """``{statement_id: row}`` of the ids that exist: paid_at, hold_reason, hold_released_at,
    superseded_by (what mark-paid and release check)."""
    found = conn.execute(select(statements.c.statement_id, statements.c.paid_at,
                                statements.c.hold_reason, statements.c.hold_released_at,
                                statements.c.superseded_by, statements.c.shift_id,
                                statements.c.total_cents, statements.c.work_day)
                         .where(statements.c.statement_id.in_(ids))).mappings().all()
    return {r["statement_id"]: r for r in found}


def superseded_among(conn, ids: list[str]) -> list[str]:
    """The unpaid superseded statements among ``ids``, each as ``"id (by newer id)"`` in the order
    given: what ``mark_paid`` refuses as ``superseded: ...`` (a page asks before it confirms)."""
    return _stale(conn, _payment_states(conn, ids), list(dict.fromkeys(ids))) if ids else []


def _stale(conn, rows: dict, ids: list[str]) -> list[str]:
    """The unpaid superseded ids among ``ids``, each named with its shift's current statement (the
    one to pay: a version superseded twice names the newest, not the next, which is old too)."""
    stale = [i for i in ids if i in rows and rows[i]["paid_at"] is None and rows[i]["superseded_by"]]
    if not stale:
        return []
    shifts = list({rows[i]["shift_id"] for i in stale})
    current = dict(conn.execute(select(statements.c.shift_id, statements.c.statement_id)
                                .where(statements.c.shift_id.in_(shifts), statements.c.superseded_at.is_(None))).all())
    return [f"{i} (by {current.get(rows[i]['shift_id'], rows[i]['superseded_by'])})" for i in stale]


def shift_start(shift_id: str, work_day: dt.date, tz: ZoneInfo) -> dt.datetime:
    """The start (aware UTC) of the shift ``shift_id`` (``registration/ship/YYYY-MM-DD/HH-HH``) on
    its ``work_day`` (the local date its period starts) in the port's time zone ``tz``; a shift id
    that names no period starts at the work day's local midnight."""
    try:
        return period_bounds(work_day, shift_id.rsplit("/", 1)[-1], tz)[0]
    except BadInput:
        return dt.datetime.combine(work_day, dt.time(0), tz).astimezone(dt.UTC)


def _local_iso(at: dt.datetime, tz: ZoneInfo) -> str:
    return at.astimezone(tz).isoformat(timespec="minutes")


def ids_given(ids: list[str]) -> None:
    """Raises ``BadInput`` when no id is given or one is empty or blank (``''`` names no statement)."""
    if not ids:
        raise BadInput("no statement id given", where="statement")
    blank = [n for n, i in enumerate(ids, start=1) if not i.strip()]
    if blank:
        raise BadInput(f"statement id number {', '.join(map(str, blank))} is empty (give the ids "
                       "`portgate pay overdue` lists)", where="statement")


#: ``statements.paid_ref`` holds at most this many characters; a longer reference is refused, not cut.
MAX_PAID_REF = 128
#: How far ahead of the office's clock a payment may be dated (a transfer booked for tomorrow).
PAID_AHEAD = dt.timedelta(days=1)
#: The port's time zone when the caller names none (a payment's date against the work day).
PORT_TZ = ZoneInfo("America/Sao_Paulo")


def mark_paid(engine: Engine, ids: list[str], at: dt.datetime, ref: str | None = None, *,
              now: dt.datetime, actor: str = "unknown", tz: ZoneInfo = PORT_TZ) -> None:
    """Mark statements paid at ``at`` (aware) with the payment reference ``ref`` (at most
    ``MAX_PAID_REF`` characters). ``now`` is the office's clock, read by the caller (the CLI, the
    web application): a payment more than ``PAID_AHEAD`` (a day) after ``now`` is refused, and so
    is one before the start of a statement's shift (``shift_start``: a 19-01 shift of the 15th
    starts at 19:00 of the 15th in the port's time zone ``tz``; paid at 23:00 of the 15th or at
    00:30 of the 16th is fine, at 18:59 of the 15th is refused).
    Raises ``BadInput`` for those, a longer ``ref``, an empty id (``ids_given``), and naming ids
    that do not exist, are already paid, are superseded by a newer version, or are on hold for
    review (RULES.md P; nothing is changed then). The payment is also recorded, in the same
    transaction, as one ``pay.mark_paid`` audit row naming ``actor``
    (``central.pay.payments.record_payment``)."""
    if ref is not None and len(ref) > MAX_PAID_REF:
        raise BadInput(f"the payment reference has {len(ref)} characters (at most {MAX_PAID_REF})", where="ref")
    if at > now + PAID_AHEAD:
        raise BadInput(f"the payment time {at.astimezone(tz).isoformat()} is more than a day after now "
                       f"({now.astimezone(tz).isoformat(timespec='seconds')})", where="--at")
    ids_given(ids)
    ids = list(dict.fromkeys(ids))  # an id given twice is one statement, marked once
    with engine.begin() as conn:
        rows = _payment_states(conn, ids)
        unknown = [i for i in ids if i not in rows]
        already = [i for i in ids if i in rows and rows[i]["paid_at"] is not None]
        stale = _stale(conn, rows, ids)
        held = [i for i in ids if i in rows and rows[i]["paid_at"] is None
                and not rows[i]["superseded_by"] and _on_hold(rows[i])]
        starts = {i: shift_start(rows[i]["shift_id"], rows[i]["work_day"], tz) for i in ids if i in rows}
        early = [f"{i} ({_local_iso(start, tz)})" for i, start in starts.items() if as_utc(at) < start]
        if early:
            raise BadInput(f"the payment time {_local_iso(at, tz)} is before the start of the shift of "
                           f"{', '.join(early)}", where="--at")
        if unknown or already or stale or held:
            parts = ([f"unknown: {', '.join(unknown)}"] if unknown else []) + (
                [f"already paid: {', '.join(already)}"] if already else []) + (
                [f"superseded: {', '.join(stale)}"] if stale else []) + (
                [f"on hold for review (release it first): {', '.join(held)}"] if held else [])
            raise BadInput("; ".join(parts), where="statement")
        conn.execute(update(statements).where(statements.c.statement_id.in_(ids))
                     .values(paid_at=at, paid_ref=ref))
        record_payment(conn, actor=actor, ids=ids, rows=rows, ref=ref, at=at)


#: A reversal's reason: 1 to this many characters (who decided and why; kept in the audit log).
MAX_REVERSAL_REASON = 255


def reverse_paid(engine: Engine, ids: list[str], reason: str, *, at: dt.datetime, actor: str) -> dict[str, dict]:
    """Reverse a mistaken ``mark_paid`` of statements ``ids`` (Lei 9.719 art. 2 §1: a service is
    paid once, so a wrong mark must be undone on the record, not edited away): their ``paid_at``
    and ``paid_ref`` are cleared and, in the same transaction, one ``pay.reverse_paid`` audit row
    names each mark reversed (when, reference, total) with ``reason`` and ``actor``
    (``central.pay.payments.record_reversal``); the statements are payable again and the next
    close does not hold them as a lost payment. ``at``: the office's clock (aware).

    Raises ``BadInput`` (nothing changed) for a reason that is blank or longer than
    ``MAX_REVERSAL_REASON``, an empty id (``ids_given``), and naming ids that do not exist or are
    not marked paid. Returns ``{id: the reversed row}`` (shift_id, total_cents, paid_at,
    paid_ref)."""
    reason = (reason or "").strip()
    if not reason or len(reason) > MAX_REVERSAL_REASON:
        raise BadInput(f"a reversal needs a reason of 1 to {MAX_REVERSAL_REASON} characters", where="reason")
    ids_given(ids)
    ids = list(dict.fromkeys(ids))
    with engine.begin() as conn:
        found = conn.execute(select(statements.c.statement_id, statements.c.shift_id, statements.c.total_cents,
                                    statements.c.paid_at, statements.c.paid_ref)
                             .where(statements.c.statement_id.in_(ids))).mappings().all()
        rows = {r["statement_id"]: dict(r) for r in found}
        unknown = [i for i in ids if i not in rows]
        unpaid = [i for i in ids if i in rows and rows[i]["paid_at"] is None]
        if unknown or unpaid:
            parts = ([f"unknown: {', '.join(unknown)}"] if unknown else []) + (
                [f"not marked paid: {', '.join(unpaid)}"] if unpaid else [])
            raise BadInput("; ".join(parts), where="statement")
        ordered = {i: rows[i] for i in ids}
        conn.execute(update(statements).where(statements.c.statement_id.in_(ids))
                     .values(paid_at=None, paid_ref=None))
        record_reversal(conn, actor=actor, rows=ordered, reason=reason, at=at)
    return ordered


def hold_releases(engine: Engine, shift_ids: list[str]) -> dict[str, tuple[str, dt.datetime, str | None]]:
    """The stored releases of the current statements of ``shift_ids``: ``{shift_id: (hold reason,
    released_at, note)}`` for those the office released (``release_holds``); a superseded version's
    release does not count. Raises ``StoreError``."""
    found: dict[str, tuple[str, dt.datetime, str | None]] = {}
    try:
        with engine.connect() as conn:
            for chunk in range(0, len(shift_ids), 500):
                for sid, reason, at, note in conn.execute(select(
                        statements.c.shift_id, statements.c.hold_reason,
                        statements.c.hold_released_at, statements.c.hold_note).where(
                        statements.c.shift_id.in_(shift_ids[chunk:chunk + 500]),
                        statements.c.superseded_at.is_(None),
                        statements.c.hold_released_at.is_not(None))):
                    found[sid] = (reason, at, note)
    except SQLAlchemyError as exc:
        raise StoreError(f"reading hold releases failed: {exc}") from exc
    return found


def release_holds(engine: Engine, ids: list[str], at: dt.datetime, note: str) -> None:
    """The office reviewed these held statements and releases them to be paid as computed
    (RULES.md P). Raises ``BadInput`` naming ids that do not exist, are paid, are superseded, or are
    not on hold (nothing is changed then); ``note`` (1-255 characters) says who decided and why."""
    note = (note or "").strip()
    if not note or len(note) > 255:
        raise BadInput("a release needs a note of 1 to 255 characters", where="--note")
    ids_given(ids)
    ids = list(dict.fromkeys(ids))
    with engine.begin() as conn:
        rows = _payment_states(conn, ids)
        unknown = [i for i in ids if i not in rows]
        not_held = [i for i in ids if i in rows and (rows[i]["paid_at"] is not None
                    or rows[i]["superseded_by"] or not _on_hold(rows[i]))]
        if unknown or not_held:
            parts = ([f"unknown: {', '.join(unknown)}"] if unknown else []) + (
                [f"not on hold: {', '.join(not_held)}"] if not_held else [])
            raise BadInput("; ".join(parts), where="statement")
        conn.execute(update(statements).where(statements.c.statement_id.in_(ids))
                     .values(hold_released_at=at, hold_note=note))
