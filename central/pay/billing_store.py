"""Billing lines in the ledger, and the billing statements read back per shipowner and period.

``billing_lines`` holds the P8 lines of watchmen's pay runs (rebuilt with the statements of the
same work days); the E7 / C5 lines of production stay with their gang (``production_lines``,
section ``billing``). ``central.billing.read_billing`` reads both (it sits above pay and
production, which prices with pay). Money as integer cents.

    store_watchmen_billing(engine, run, rulebook, first, last, now=...) -> lines written
    read_shipowners(path) -> {ship: shipowner}
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import BigInteger, Column, Date, DateTime, Index, String, Table, Text, delete, insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import metadata, store_failure
from central.ledger.tables import shifts
from central.pay.billing import BillingLine, watchmen_billing
from central.pay.rulebook import Rulebook
from central.pay.versions import PAY_CONFLICT
from portgate import tables
from portgate.errors import BadInput

billing_lines = Table(
    "billing_lines",
    metadata,
    Column("billing_id", String(200), primary_key=True),  # "P8:" + shift id
    Column("source", String(16), nullable=False),  # watchmen
    Column("ship", String(32), nullable=False),
    Column("work_day", Date, nullable=False),
    Column("ref", String(160), nullable=False),  # shift id
    Column("registration", String(64), nullable=True),
    Column("rule", String(16), nullable=False),
    Column("article", String(128), nullable=False),
    Column("description", Text, nullable=False),
    Column("amount_cents", BigInteger, nullable=False),
    Column("computed_at", DateTime(timezone=True), nullable=False),
)
Index("ix_billing_lines_work_day", billing_lines.c.work_day)


def store_watchmen_billing(engine: Engine, statements, rulebook: Rulebook, first: dt.date,
                           last: dt.date, *, now: dt.datetime) -> list[BillingLine]:
    """Compute the P8 lines of ``statements`` (paid shifts of work days [first, last]) from the
    stored shifts' ship and berth, and replace the stored watchmen billing of those days with them.
    Returns the lines. Raises ``StoreError`` if the database fails."""
    try:
        with engine.begin() as conn:
            berth_of = {sid: (ship, berth) for sid, ship, berth in conn.execute(
                select(shifts.c.shift_id, shifts.c.ship, shifts.c.berth)
                .where(shifts.c.work_date >= first, shifts.c.work_date <= last,
                       shifts.c.berth == "anchored"))}
            lines = watchmen_billing(statements, berth_of, rulebook)
            conn.execute(delete(billing_lines).where(billing_lines.c.source == "watchmen",
                                                     billing_lines.c.work_day >= first,
                                                     billing_lines.c.work_day <= last))
            if lines:
                conn.execute(insert(billing_lines), [{
                    "billing_id": x.billing_id, "source": x.source, "ship": x.ship,
                    "work_day": x.work_day, "ref": x.ref, "registration": x.registration,
                    "rule": x.rule, "article": x.article, "description": x.description,
                    "amount_cents": int(x.amount * 100), "computed_at": now} for x in lines])
            return lines
    except SQLAlchemyError as exc:
        raise store_failure("saving billing lines failed", exc, PAY_CONFLICT) from exc


def read_shipowners(path: str | Path) -> dict[str, str]:
    """``shipowners.csv`` (columns ship, shipowner; ``portgate.tables``) → {ship: shipowner}.
    Raises ``BadInput`` naming the file and row for a missing file, a missing or unknown column,
    an empty value or a ship listed twice."""
    out: dict[str, str] = {}
    errors = []
    for where, row in tables.iter_rows(path, ("ship", "shipowner"), known=("ship", "shipowner")):
        ship, owner = (row.get("ship") or "").strip(), (row.get("shipowner") or "").strip()
        if not ship or not owner:
            errors.append(f"{where}: ship and shipowner are required")
        elif ship in out:
            errors.append(f"{where}: ship {ship} is listed twice")
        else:
            out[ship] = owner
    if errors:
        raise BadInput("\n".join(errors))
    return out
