"""Pay statements in the ledger: compute from stored shifts, store with the due time, list overdue
ones, mark paid (Lei 9.719 art. 2 §1: pay is due 48 h after the end of the service).

A shift flagged for review (``central.ledger.shifts.REVIEW_FLAGS``: EARLY_EXIT, G9) is paid as
computed and its statement is stored on hold (``hold_reason``): ``mark_paid`` refuses it until the
office releases it (``release_holds``, RULES.md P: "paid as computed unless the office records the
infraction"). A rebuild replaces unpaid statements of the shifts it pays and never touches a paid
one; a release is kept while the hold reason stays the same.
"""

from __future__ import annotations

import dataclasses
import contextlib
import datetime as dt
import gc
from decimal import Decimal

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.ledger.bulk import insert_rows
from central.ledger.shifts import Shift
from central.ledger.store import as_utc, read_shifts
from central.ledger.tables import statement_lines, statements
from central.pay.calendar import HolidayCalendar
from central.pay.lines import StatementLine
from central.pay.rulebook import Rulebook
from central.pay.watchmen import ShiftPayer, Statement, ordinary_period_problem
from portgate.errors import BadInput, StoreError


@dataclasses.dataclass(frozen=True, slots=True)
class Held:
    """A shift that was not paid and why (its hold flags, or the pay engine's refusal)."""

    shift: Shift
    reasons: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class PayRun:
    statements: list[Statement]
    held: list[Held]


def pay_shifts(found: list[Shift], rulebook: Rulebook, calendar: HolidayCalendar) -> PayRun:
    """Pay every shift that is not held (pure). Held shifts, periods that are not an ordinary period
    of the rulebook (``ordinary_period_problem``) and engine refusals (``BadInput``) are returned in
    ``held`` with their reasons; nothing is silently dropped."""
    payer = ShiftPayer(rulebook, calendar)
    paid: list[Statement] = []
    held: list[Held] = []
    period_problems: dict[tuple[dt.datetime, dt.datetime], str | None] = {}  # periods repeat
    for s in found:
        if s.held:
            held.append(Held(s, tuple(f"{f.code}: {f.detail}" for f in s.flags)))
            continue
        try:
            shift = s.to_pay()
            key = (shift.period_start, shift.period_end)
            if key not in period_problems:
                period_problems[key] = ordinary_period_problem(shift, rulebook, calendar.zone)
            if period_problems[key] is not None:
                raise BadInput(f"{period_problems[key]}: held", where=s.shift_id)
            statement = payer.pay(shift)
            review = s.review_reasons
            if review:  # RULES.md P: paid as computed, on hold for the office's review
                statement = dataclasses.replace(statement, hold_reason="; ".join(review))
            paid.append(statement)
        except BadInput as exc:
            held.append(Held(s, (str(exc),)))
    return PayRun(paid, held)


def pay_from_ledger(engine: Engine, date_from: dt.date, date_to: dt.date, rulebook: Rulebook,
                    calendar: HolidayCalendar, *, now: dt.datetime, store: bool = True) -> PayRun:
    """Pay the stored shifts of work dates [date_from, date_to]; store the statements unless
    ``store`` is False. Raises ``StoreError`` on a database failure."""
    # A month is ~10^5 long-lived objects built in a burst: the cyclic collector would rescan them
    # again and again (none of them form cycles), so it is paused for the read and the pay run.
    with _no_cyclic_gc():
        try:
            with engine.connect() as conn:
                found = read_shifts(conn, date_from, date_to)
        except SQLAlchemyError as exc:
            raise StoreError(f"reading shifts failed: {exc}") from exc
        run = pay_shifts(found, rulebook, calendar)
    if store:
        save_statements(engine, run.statements, now=now)
    return run


@contextlib.contextmanager
def _no_cyclic_gc():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def statement_id(st: Statement) -> str:
    return f"{st.shift_id}@{st.rulebook}"


def _cents(amount: Decimal) -> int:
    return int(amount * 100)


def save_statements(engine: Engine, found: list[Statement], *, now: dt.datetime) -> int:
    """Insert statements and their lines, replacing unpaid ones with the same id; a paid statement
    is kept as it is. Returns how many were written."""
    if not found:
        return 0
    try:
        with engine.begin() as conn:
            ids = [statement_id(s) for s in found]
            paid: set[str] = set()
            released: dict[str, tuple[str, dt.datetime, str | None]] = {}
            for chunk in range(0, len(ids), 500):
                part = ids[chunk:chunk + 500]
                paid.update(conn.execute(select(statements.c.statement_id).where(
                    statements.c.statement_id.in_(part), statements.c.paid_at.is_not(None))).scalars())
                for sid, reason, at, note in conn.execute(select(
                        statements.c.statement_id, statements.c.hold_reason,
                        statements.c.hold_released_at, statements.c.hold_note).where(
                        statements.c.statement_id.in_(part), statements.c.paid_at.is_(None),
                        statements.c.hold_released_at.is_not(None))):
                    released[sid] = (reason, at, note)
                unpaid = [i for i in part if i not in paid]
                conn.execute(delete(statement_lines).where(statement_lines.c.statement_id.in_(unpaid)))
                conn.execute(delete(statements).where(statements.c.statement_id.in_(unpaid)))
            todo = [s for s in found if statement_id(s) not in paid]
            if todo:
                insert_rows(conn, statements, [{
                    "statement_id": statement_id(s), "shift_id": s.shift_id,
                    "registration": s.registration, "rulebook": s.rulebook, "work_day": s.work_day,
                    "total_cents": _cents(s.total), "flags": ",".join(s.flags),
                    "service_end": s.service_end, "due_at": s.due_at, "computed_at": now,
                    "hold_reason": s.hold_reason, **_kept_release(s, released.get(statement_id(s))),
                } for s in todo])
                insert_rows(conn, statement_lines, [{
                    "statement_id": statement_id(s), "position": n, "rule": line.rule,
                    "article": line.article, "description": line.description,
                    "amount_cents": _cents(line.amount),
                } for s in todo for n, line in enumerate(s.lines)])
            return len(todo)
    except SQLAlchemyError as exc:
        raise StoreError(f"saving statements failed: {exc}") from exc


def _kept_release(st: Statement, old: tuple[str, dt.datetime, str | None] | None) -> dict:
    """The release of the statement this one replaces, kept if it released the same hold."""
    if old is not None and st.hold_reason is not None and old[0] == st.hold_reason:
        return {"hold_released_at": old[1], "hold_note": old[2]}
    return {"hold_released_at": None, "hold_note": None}


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
    """Unpaid statements whose due time is before ``at`` (aware), oldest first."""
    rows = conn.execute(
        select(statements).where(statements.c.paid_at.is_(None), statements.c.due_at < at)
        .order_by(statements.c.due_at, statements.c.statement_id)
    ).mappings()
    return [StoredStatement(r["statement_id"], r["shift_id"], r["registration"], r["work_day"],
                            Decimal(r["total_cents"]) / 100, as_utc(r["due_at"]), None,
                            hold_reason=_on_hold(r))
            for r in rows]


def _on_hold(row) -> str | None:
    return row["hold_reason"] if row["hold_reason"] and row["hold_released_at"] is None else None


def mark_paid(engine: Engine, ids: list[str], at: dt.datetime, ref: str | None = None) -> None:
    """Mark statements paid at ``at``. Raises ``BadInput`` naming ids that do not exist, are
    already paid, or are on hold for review (RULES.md P; nothing is changed then)."""
    with engine.begin() as conn:
        found = conn.execute(select(statements.c.statement_id, statements.c.paid_at,
                                    statements.c.hold_reason, statements.c.hold_released_at)
                             .where(statements.c.statement_id.in_(ids))).mappings().all()
        rows = {r["statement_id"]: r for r in found}
        unknown = [i for i in ids if i not in rows]
        already = [i for i in ids if i in rows and rows[i]["paid_at"] is not None]
        held = [i for i in ids if i in rows and rows[i]["paid_at"] is None and _on_hold(rows[i])]
        if unknown or already or held:
            parts = ([f"unknown: {', '.join(unknown)}"] if unknown else []) + (
                [f"already paid: {', '.join(already)}"] if already else []) + (
                [f"on hold for review (release it first): {', '.join(held)}"] if held else [])
            raise BadInput("; ".join(parts), where="statement")
        conn.execute(update(statements).where(statements.c.statement_id.in_(ids))
                     .values(paid_at=at, paid_ref=ref))


def release_holds(engine: Engine, ids: list[str], at: dt.datetime, note: str) -> None:
    """The office reviewed these held statements and releases them to be paid as computed
    (RULES.md P). Raises ``BadInput`` naming ids that do not exist, are paid, or are not on hold
    (nothing is changed then); ``note`` (1-255 characters) says who decided and why."""
    note = (note or "").strip()
    if not note or len(note) > 255:
        raise BadInput("a release needs a note of 1 to 255 characters", where="--note")
    with engine.begin() as conn:
        found = conn.execute(select(statements.c.statement_id, statements.c.paid_at,
                                    statements.c.hold_reason, statements.c.hold_released_at)
                             .where(statements.c.statement_id.in_(ids))).mappings().all()
        rows = {r["statement_id"]: r for r in found}
        unknown = [i for i in ids if i not in rows]
        not_held = [i for i in ids if i in rows and (rows[i]["paid_at"] is not None or not _on_hold(rows[i]))]
        if unknown or not_held:
            parts = ([f"unknown: {', '.join(unknown)}"] if unknown else []) + (
                [f"not on hold: {', '.join(not_held)}"] if not_held else [])
            raise BadInput("; ".join(parts), where="statement")
        conn.execute(update(statements).where(statements.c.statement_id.in_(ids))
                     .values(hold_released_at=at, hold_note=note))
