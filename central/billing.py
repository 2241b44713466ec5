"""The shipowners' billing lines read back for a period: the watchmen's P8 lines that pay stored
(``central.pay.billing_store.billing_lines``) and the production gangs' E7 / C5 lines
(``central.production.schema``, section ``billing``). It sits above both packages (production
prices with pay), so neither imports the other for it. ``portgate pay billing`` groups the lines
per shipowner (``central.pay.billing.billing_statements``).

    read_billing(engine, first, last) -> [BillingLine]
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.pay.billing import BillingLine
from central.pay.billing_store import billing_lines
from central.production.schema import production_gangs, production_lines
from portgate.errors import StoreError


def read_billing(engine: Engine, first: dt.date, last: dt.date) -> list[BillingLine]:
    """Every billing line of work days [first, last]: watchmen P8 lines and the production gangs'
    billing lines (E7, C5). Raises ``StoreError`` if the database cannot be read."""
    b, g, ln = billing_lines, production_gangs, production_lines
    out: list[BillingLine] = []
    try:
        with engine.connect() as conn:
            for r in conn.execute(select(b).where(b.c.work_day >= first, b.c.work_day <= last)).mappings():
                out.append(BillingLine(r["billing_id"], r["source"], r["ship"], r["work_day"], r["ref"],
                                       r["registration"], r["rule"], r["article"], r["description"],
                                       Decimal(r["amount_cents"]) / 100))
            for r in conn.execute(
                select(g.c.id, g.c.gang_id, g.c.ship, g.c.work_date, g.c.period, ln.c.seq, ln.c.rule,
                       ln.c.article, ln.c.description, ln.c.amount_cents)
                .join(g, g.c.id == ln.c.gang_row)
                .where(ln.c.section == "billing", g.c.work_date >= first, g.c.work_date <= last)
                .order_by(g.c.id, ln.c.seq)
            ).mappings():
                out.append(BillingLine(f"gang:{r['id']}:{r['seq']}", "production", r["ship"], r["work_date"],
                                       f"{r['gang_id']} {r['period']}", None, r["rule"], r["article"],
                                       r["description"], Decimal(r["amount_cents"]) / 100))
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read billing lines: {exc}") from exc
    return out
