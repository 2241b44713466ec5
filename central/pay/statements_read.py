"""Stored pay statements read back with their lines, for the office's screens, payslips and the
payroll export. Read-only; computing and storing is ``central.pay.statements_store``."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.store import as_utc
from central.ledger.tables import statement_lines, statements
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

    @property
    def on_hold(self) -> bool:
        return bool(self.hold_reason) and self.released_at is None and self.paid_at is None


def read_statements(conn: Connection, date_from: dt.date, date_to: dt.date, *,
                    registration: str | None = None, ids: list[str] | None = None) -> list[StatementView]:
    """Statements of work days [date_from, date_to] (optionally one worker's, or only ``ids``),
    by registration, work day, shift id; each with its lines."""
    stmt = select(statements).where(statements.c.work_day >= date_from, statements.c.work_day <= date_to)
    if registration:
        stmt = stmt.where(statements.c.registration == registration)
    if ids is not None:
        stmt = stmt.where(statements.c.statement_id.in_(ids))
    rows = conn.execute(stmt.order_by(statements.c.registration, statements.c.work_day,
                                      statements.c.shift_id)).mappings().all()
    lines: dict[str, list[StoredLine]] = defaultdict(list)
    wanted = {r["statement_id"] for r in rows}
    if wanted:  # one pass over the period's lines (joined, unsorted: ordered per statement below)
        q = (select(statement_lines.c.statement_id, statement_lines.c.position, statement_lines.c.rule,
                    statement_lines.c.article, statement_lines.c.description, statement_lines.c.amount_cents)
             .join(statements, statements.c.statement_id == statement_lines.c.statement_id)
             .where(statements.c.work_day >= date_from, statements.c.work_day <= date_to))
        if registration:
            q = q.where(statements.c.registration == registration)
        found: dict[str, list[tuple]] = defaultdict(list)
        for row in conn.execute(q):
            if row[0] in wanted:
                found[row[0]].append(row[1:])
        for sid, items in found.items():
            items.sort()
            lines[sid] = [StoredLine(rule, article, desc, Decimal(cents).scaleb(-2))
                          for _pos, rule, article, desc, cents in items]
    return [StatementView(
        r["statement_id"], r["shift_id"], r["registration"], r["rulebook"], r["work_day"],
        Decimal(r["total_cents"]) / 100, tuple(f for f in (r["flags"] or "").split(",") if f),
        as_utc(r["due_at"]), as_utc(r["paid_at"]) if r["paid_at"] else None, r["paid_ref"],
        r["hold_reason"], as_utc(r["hold_released_at"]) if r["hold_released_at"] else None,
        r["hold_note"], tuple(lines[r["statement_id"]])) for r in rows]
