"""Billing lines in the ledger, and the billing statements read back per shipowner and period.

``billing_lines`` holds the P8 lines of the watchmen's stays aboard anchored ships, computed by
``portgate pay billing`` from the current statements and their shifts (replaced for the billed
work days); the E7 / C5 lines of production stay with their gang (``production_lines``, section
``billing``). ``central.billing.read_billing`` reads both (it sits above pay and production, which
prices with pay). Money as integer cents.

    store_watchmen_billing(engine, rulebook, first, last, now=...) -> lines written
    read_shipowners(path) -> {ship: shipowner}
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import BigInteger, Column, Date, DateTime, Index, String, Table, Text, delete, insert, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.db import metadata, store_failure
from central.ledger.tables import shifts, statements
from central.pay.billing import AnchoredShift, BillingLine, watchmen_billing
from central.pay.rulebook import Rulebook
from central.pay.versions import PAY_CONFLICT
from portgate import tables
from portgate.errors import BadInput, StoreError
from portgate.timeutil import as_utc

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


def anchored_shifts(engine: Engine, first: dt.date, last: dt.date) -> list[AnchoredShift]:
    """The shifts on a ship at anchorage with a current (not superseded) statement of work days
    [first, last], as P8 bills them: start = admit (else period start), end = exit (else period
    end), aware UTC. Raises ``StoreError`` if the database cannot be read."""
    st, sh = statements, shifts
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(st.c.shift_id, st.c.registration, st.c.work_day, sh.c.ship, sh.c.period,
                       sh.c.admit_at, sh.c.exit_at, sh.c.period_start, sh.c.period_end)
                .join(sh, sh.c.shift_id == st.c.shift_id)
                .where(st.c.superseded_at.is_(None), st.c.work_day >= first, st.c.work_day <= last,
                       sh.c.berth == "anchored")).all()
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read the anchored shifts: {exc}") from exc
    return [AnchoredShift(r.shift_id, r.registration, r.ship, r.work_day, r.period,
                          as_utc(r.admit_at or r.period_start), as_utc(r.exit_at or r.period_end))
            for r in rows]


def store_watchmen_billing(engine: Engine, rulebook: Rulebook, first: dt.date, last: dt.date, *,
                           now: dt.datetime) -> list[BillingLine]:
    """P8: bill the stays aboard anchored ships of work days [first, last] (``anchored_shifts``,
    ``central.pay.billing.watchmen_billing``) and replace the stored watchmen billing of those
    days with them. Returns the lines. Raises ``FareNotSet`` (nothing changed) when there is a
    trip to bill and the rulebook sets no fare; ``StoreError`` if the database fails."""
    lines = watchmen_billing(anchored_shifts(engine, first, last), rulebook)
    try:
        with engine.begin() as conn:
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
