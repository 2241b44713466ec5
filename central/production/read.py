"""Stored production gangs read back: for the office's pay screen (``gangs_of_period``) per gang
its ship, period, rulebook version, labour amount (E1), tonnes, quotas and quota value, the tally it
was paid from (cargo class and quantity, with the file line or message it came from) and each
member's share; for the worker's own pay page (``member_statements``) his statements with his
lines. Read-only; ``central.production.store`` writes them."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.pay.statements_read import StoredLine
from central.production.schema import production_gangs, production_inputs, production_lines, production_members
from portgate.timeutil import as_utc


@dataclasses.dataclass(frozen=True, slots=True)
class GangView:
    gang_id: str
    work_date: dt.date
    ship: str
    period: str
    rulebook: str
    rulebook_version: dt.date
    labour: Decimal
    tonnes: Decimal
    total_quotas: str
    quota_value: str
    tally: tuple[tuple[str, str, str], ...]  # (cargo class, quantity, source)
    members: tuple[dict, ...]  # registration, role, boarded, quotas, total, payable, disputed


def gangs_of_period(conn: Connection, first: dt.date, last: dt.date) -> list[GangView]:
    """Gangs of work dates [first, last] by date, ship, period, gang id."""
    g, i, m = production_gangs, production_inputs, production_members
    rows = conn.execute(select(g).where(g.c.work_date >= first, g.c.work_date <= last)
                        .order_by(g.c.work_date, g.c.ship, g.c.period, g.c.gang_id)).mappings().all()
    ids = [r["id"] for r in rows]
    tally: dict[int, list] = defaultdict(list)
    members: dict[int, list] = defaultdict(list)
    for chunk in range(0, len(ids), 900):
        part = ids[chunk:chunk + 900]
        for gang_row, what, value, source in conn.execute(
                select(i.c.gang_row, i.c.what, i.c.value, i.c.source)
                .where(i.c.gang_row.in_(part), i.c.kind == "tally").order_by(i.c.id)):
            tally[gang_row].append((what, value or "", source))
        for r in conn.execute(select(m).where(m.c.gang_row.in_(part)).order_by(m.c.id)).mappings():
            members[r["gang_row"]].append({
                "registration": r["registration"], "role": r["role"], "boarded": r["boarded"],
                "quotas": r["quotas"], "total": Decimal(r["total_cents"]) / 100,
                "payable": Decimal(r["payable_cents"]) / 100, "disputed": Decimal(r["disputed_cents"]) / 100})
    return [GangView(r["gang_id"], r["work_date"], r["ship"], r["period"], r["rulebook"], r["rulebook_version"],
                     Decimal(r["labour_cents"]) / 100, Decimal(r["tonnes_milli"]) / 1000, r["total_quotas"],
                     r["quota_value"], tuple(tally[r["id"]]), tuple(members[r["id"]])) for r in rows]


@dataclasses.dataclass(frozen=True, slots=True)
class MemberStatement:
    """One stevedore's or dock worker's production statement of one gang (E1-E9, C1-C9), as stored
    by ``portgate production import``: the gang (id, work date, ship, period, rulebook), his role
    and quotas, his lines in order (``StoredLine``: rule, article, description in the language of
    the import, amount BRL), his total, the disputed part (E6: deposited) and the payable part,
    due by ``due_at`` (aware UTC: 24 h after the service, E6)."""

    gang_row: int
    gang_id: str
    work_date: dt.date
    ship: str
    period: str
    rulebook: str
    role: str
    quotas: str
    total: Decimal
    disputed: Decimal
    payable: Decimal
    due_at: dt.datetime | None
    lines: tuple[StoredLine, ...]


def member_statements(conn: Connection, registration: str, first: dt.date, last: dt.date) -> list[MemberStatement]:
    """``registration``'s production statements of the gangs of work dates [first, last] he boarded,
    newest first, each with his member lines (never another member's). Read-only."""
    g, m, ln = production_gangs, production_members, production_lines
    rows = conn.execute(
        select(g.c.id, g.c.gang_id, g.c.work_date, g.c.ship, g.c.period, g.c.rulebook, m.c.role, m.c.quotas,
               m.c.total_cents, m.c.disputed_cents, m.c.payable_cents, m.c.due_at)
        .join(g, g.c.id == m.c.gang_row)
        .where(m.c.registration == registration, m.c.boarded == "yes", g.c.work_date >= first,
               g.c.work_date <= last)
        .order_by(g.c.work_date.desc(), g.c.period.desc(), g.c.gang_id)).all()
    lines: dict[int, list[StoredLine]] = defaultdict(list)
    ids = [r.id for r in rows]
    for chunk in range(0, len(ids), 900):
        for gang_row, rule, article, description, cents in conn.execute(
                select(ln.c.gang_row, ln.c.rule, ln.c.article, ln.c.description, ln.c.amount_cents)
                .where(ln.c.gang_row.in_(ids[chunk:chunk + 900]), ln.c.section == "member",
                       ln.c.registration == registration).order_by(ln.c.gang_row, ln.c.seq)):
            lines[gang_row].append(StoredLine(rule, article, description, Decimal(cents).scaleb(-2)))
    return [MemberStatement(r.id, r.gang_id, r.work_date, r.ship, r.period, r.rulebook, r.role, r.quotas,
                            Decimal(r.total_cents).scaleb(-2), Decimal(r.disputed_cents).scaleb(-2),
                            Decimal(r.payable_cents).scaleb(-2), as_utc(r.due_at) if r.due_at else None,
                            tuple(lines[r.id])) for r in rows]
