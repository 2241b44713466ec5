"""Stored production gangs read back for the office's pay screen: per gang its ship, period,
rulebook version, labour amount (E1), tonnes, quotas and quota value, the tally it was paid from
(cargo class and quantity, with the file line or message it came from) and each member's share.
Read-only; ``central.production.store`` writes them."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.production.schema import production_gangs, production_inputs, production_members


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
