"""Stored pay statements read back with their lines, for the office's screens, payslips and the
payroll export. Read-only; computing and storing is ``central.pay.statements_store``."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.tables import statement_lines, statements
from portgate.timeutil import as_utc
from typing import NamedTuple


class StoredLine(NamedTuple):
    """A stored statement line (the fields of ``central.pay.lines.StatementLine``; the amount was
    rounded to the cent when computed and is exact from its cents)."""

    rule: str
    article: str
    description: str
    amount: Decimal


@dataclasses.dataclass(frozen=True, slots=True)
class StatementView:
    """One stored statement: ids, rulebook id, work day, lines in order, total (BRL), due time
    (48 h after the service, Lei 9.719 art. 2 §1), payment mark, and the hold (RULES.md P:
    ``hold_reason`` with ``released_at``/``hold_note`` once the office released it)."""

    statement_id: str
    shift_id: str
    registration: str
    rulebook: str
    work_day: dt.date
    total: Decimal
    flags: tuple[str, ...]
    due_at: dt.datetime
    paid_at: dt.datetime | None
    paid_ref: str | None
    hold_reason: str | None
    released_at: dt.datetime | None
    hold_note: str | None
    lines: tuple[StoredLine, ...]
    superseded_by: str | None = None  # set on an older version (read only with ``current_only=False``)

    @property
    def on_hold(self) -> bool:
        return bool(self.hold_reason) and self.released_at is None and self.paid_at is None


def read_statements(conn: Connection, date_from: dt.date, date_to: dt.date, *,
                    registration: str | None = None, ids: list[str] | None = None,
                    current_only: bool = True) -> list[StatementView]:
    """Statements of work days [date_from, date_to] (optionally one worker's, or only ``ids``),
    by registration, work day, shift id; each with its lines. Only the current statement of each
    shift (``superseded_at IS NULL``: what is owed, listed, summed, exported and printed on a slip;
    ``central.pay.versions``) unless ``current_only`` is False: then the older versions too, each
    with its ``superseded_by`` (for a caller that must name a superseded id, as the mark-paid
    confirmation refusing it)."""
    c = statements.c
    stmt = select(c.statement_id, c.shift_id, c.registration, c.rulebook, c.work_day, c.total_cents, c.flags,
                  c.due_at, c.paid_at, c.paid_ref, c.hold_reason, c.hold_released_at, c.hold_note,
                  c.superseded_by).where(c.work_day >= date_from, c.work_day <= date_to)
    if current_only:
        stmt = stmt.where(c.superseded_at.is_(None))
    if registration:
        stmt = stmt.where(statements.c.registration == registration)
    if ids is not None:
        stmt = stmt.where(statements.c.statement_id.in_(ids))
    rows = conn.execute(stmt.order_by(statements.c.registration, statements.c.work_day,
                                      statements.c.shift_id)).all()
    lines = _lines_of(conn, rows, date_from, date_to, registration, ids, current_only) if rows else {}
    totals: dict[int, Decimal] = {}  # equal totals and flag sets share one value
    flag_sets: dict[str, tuple[str, ...]] = {}
    out = []
    for (sid, shift_id, reg, rulebook, work_day, total_cents, flags, due_at, paid_at, paid_ref, hold_reason,
         released_at, hold_note, superseded_by) in rows:
        total = totals.get(total_cents)
        if total is None:
            total = totals[total_cents] = Decimal(total_cents) / 100
        flag_set = flag_sets.get(flags)
        if flag_set is None:
            flag_set = flag_sets[flags] = tuple(f for f in (flags or "").split(",") if f)
        items = lines.get(sid, ())
        if len(items) > 1:
            items.sort()  # by position (equal positions: by the line's fields)
        out.append(StatementView(
            sid, shift_id, reg, rulebook, work_day, total, flag_set, as_utc(due_at),
            as_utc(paid_at) if paid_at else None, paid_ref, hold_reason,
            as_utc(released_at) if released_at else None, hold_note, tuple([ln for _pos, ln in items]),
            superseded_by))
    return out


class OldVersion(NamedTuple):
    """A superseded statement as its history shows it: id, total (BRL), when and why it was
    superseded and by which statement, and its payment mark if it had one. Never owed, never summed."""

    statement_id: str
    total: Decimal
    superseded_at: dt.datetime
    superseded_by: str
    reason: str | None
    paid_at: dt.datetime | None


def superseded_versions(conn: Connection, date_from: dt.date, date_to: dt.date, *,
                        registration: str | None = None) -> dict[str, list[OldVersion]]:
    """``{shift id: [its superseded statements, oldest first]}`` of work days [date_from, date_to]
    (optionally one worker's): the history the pay page shows under a current statement."""
    c = statements.c
    q = (select(c.shift_id, c.statement_id, c.total_cents, c.superseded_at, c.superseded_by, c.superseded_reason,
                c.paid_at).where(c.work_day >= date_from, c.work_day <= date_to, c.superseded_at.is_not(None))
         .order_by(c.shift_id, c.version, c.statement_id))
    if registration:
        q = q.where(c.registration == registration)
    out: dict[str, list[OldVersion]] = defaultdict(list)
    for shift_id, sid, cents, at, by, why, paid_at in conn.execute(q):
        out[shift_id].append(OldVersion(sid, Decimal(cents) / 100, as_utc(at), by, why,
                                        as_utc(paid_at) if paid_at else None))
    return dict(out)


def _lines_of(conn: Connection, rows, date_from: dt.date, date_to: dt.date, registration: str | None,
              ids: list[str] | None, current_only: bool) -> dict[str, list[tuple[int, StoredLine]]]:
    """``statement id -> [(position, line)]`` of ``rows``' statements, unsorted, in one pass over the
    period's lines (joined to their statements; only the current ones' with ``current_only``);
    equal lines share one (immutable) value."""
    q = (select(statement_lines.c.statement_id, statement_lines.c.position, statement_lines.c.rule,
                statement_lines.c.article, statement_lines.c.description, statement_lines.c.amount_cents)
         .join(statements, statements.c.statement_id == statement_lines.c.statement_id)
         .where(statements.c.work_day >= date_from, statements.c.work_day <= date_to))
    if registration:
        q = q.where(statements.c.registration == registration)
    if current_only:
        q = q.where(statements.c.superseded_at.is_(None))
    wanted = {r[0] for r in rows} if ids is not None else None  # else the same filter as ``rows``
    lines: dict[str, list[tuple[int, StoredLine]]] = defaultdict(list)
    same: dict[tuple, StoredLine] = {}
    for sid, position, rule, article, desc, cents in conn.execute(q).all():
        if wanted is not None and sid not in wanted:
            continue
        key = (rule, article, desc, cents)
        line = same.get(key)
        if line is None:
            line = same[key] = StoredLine(rule, article, desc, Decimal(cents).scaleb(-2))
        lines[sid].append((position, line))
    return lines
