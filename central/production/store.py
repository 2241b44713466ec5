"""Write production-pay results into the ledger database, all or nothing, and read them back for
the monthly minimum (C6).

``import_results`` writes every gang of a batch in ONE transaction: if any gang cannot be written
(already imported, a database error) nothing of the batch is written. SQLAlchemy errors are
translated here (``BadInput`` for a duplicate gang, ``StoreError`` for anything else).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import insert, select
from sqlalchemy import func
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.ledger.migrate import upgrade_engine
from central.pay.lines import CENT, StatementLine
from central.production.model import GangResult, GangWork
from central.production.schema import (
    TABLES,
    production_gangs,
    production_inputs,
    production_lines,
    production_members,
)
from portgate.errors import BadInput, StoreError
from portgate.timeutil import require_aware


def cents(amount: Decimal) -> int:
    """Whole cents of an amount already rounded to the cent."""
    return int((amount / CENT).to_integral_value())


def from_cents(value: int) -> Decimal:
    return (Decimal(value) * CENT).quantize(CENT)


def ensure_tables(engine: Engine) -> None:
    """Bring the office database to the newest schema (Alembic, ``central/migrations``), which
    includes the production tables. Raises ``StoreError`` if it cannot be reached or migrated."""
    upgrade_engine(engine)


def import_results(engine: Engine, batch: Sequence[tuple[GangWork, GangResult]], *,
                   imported_at: dt.datetime, source: str = "csv",
                   on_stored: Sequence[tuple[int, str]] = ()) -> list[int]:
    """Store every (work, result) pair of ``batch`` in one transaction; return the gang row ids.
    ``on_stored``: ``(production_gangs.id, note)`` flags for gangs imported earlier (R10: the
    earlier gang of a double assignment is flagged too, ``central.production.fromledger``), stored
    in the same transaction as ``production_inputs`` rows of kind ``flag``.

    Raises ``BadInput`` naming the gang if it was already imported for that date (nothing of the
    batch is written), ``StoreError`` for any other database failure (nothing written either)."""
    imported_at = require_aware(imported_at, "imported_at")
    ids: list[int] = []
    g = production_gangs
    try:
        with engine.begin() as conn:
            for work, _result in batch:
                if conn.execute(select(g.c.id).where(g.c.gang_id == work.gang_id,
                                                     g.c.work_date == work.date)).first() is not None:
                    raise BadInput(f"gang {work.gang_id} of {work.date} is already imported; nothing of "
                                   f"this batch was written", where=source)
            for work, result in batch:
                ids.append(_write_gang(conn, work, result, imported_at, source))
            if on_stored:
                conn.execute(insert(production_inputs), [
                    dict(gang_row=row, kind="flag", what=note.split(":", 1)[0], registration=None,
                         value=None, note=note, source=source) for row, note in on_stored])
    except SQLAlchemyError as exc:
        raise StoreError(f"production import failed, nothing written: {exc}") from exc
    return ids


def _write_gang(conn: Connection, work: GangWork, result: GangResult, at: dt.datetime, source: str) -> int:
    s = result.summary
    row = conn.execute(insert(production_gangs).values(
        gang_id=work.gang_id, work_date=work.date, ship=work.ship, period=work.period,
        rulebook=s.rulebook, rulebook_version=s.rulebook_version, labour_cents=cents(s.labour_amount),
        tonnes_milli=int(s.tonnes * 1000), total_quotas=str(s.total_quotas), quota_value=str(s.quota_value),
        rounding_difference_cents=cents(s.rounding_difference), billing_cents=cents(result.billing_total),
        service_end=work.service_end, source=source, imported_at=at,
    )).inserted_primary_key[0]
    lines = [dict(section="labour", registration=None, seq=i, line=line) for i, line in enumerate(s.labour_lines)]
    for st in result.members:
        lines += [dict(section="member", registration=st.registration, seq=i, line=line)
                  for i, line in enumerate(st.lines)]
    lines += [dict(section="billing", registration=None, seq=i, line=line) for i, line in enumerate(result.billing)]
    if lines:
        conn.execute(insert(production_lines), [
            dict(gang_row=row, section=x["section"], registration=x["registration"], seq=x["seq"],
                 rule=x["line"].rule, article=x["line"].article, description=x["line"].description,
                 amount_cents=cents(x["line"].amount)) for x in lines])
    members = [dict(gang_row=row, registration=st.registration, role=st.role, boarded="yes",
                    quotas=str(st.quotas), minutes_worked=str(st.minutes_worked), total_cents=cents(st.total),
                    disputed_cents=cents(st.disputed), payable_cents=cents(st.payable), due_at=st.due_at)
               for st in result.members]
    members += [dict(gang_row=row, registration=m.registration, role=m.role, boarded="no", quotas="0",
                     minutes_worked="0", total_cents=0, disputed_cents=0, payable_cents=0, due_at=None)
                for m in work.members if not m.boarded]
    conn.execute(insert(production_members), members)
    inputs = [dict(kind="tally", what=t.cargo_class, registration=None, value=str(t.quantity), note=None,
                   source=t.source) for t in work.tally]
    inputs += [dict(kind="interruption", what=i.kind, registration=None, value=str(i.minutes), note=None,
                    source=i.source) for i in work.interruptions]
    inputs += [dict(kind="flag", what=flag.split(":", 1)[0], registration=None, value=None, note=flag,
                    source=work.gang_id) for flag in s.flags]
    inputs += [dict(kind="extra", what=st.lines[0].rule, registration=st.registration, value=str(st.total),
                    note="C9: the port administration's cost", source=work.gang_id)
               for st in result.members if st.extra]  # C9: extra members, their pay apart
    inputs += [dict(kind="dispute", what=d.rule, registration=d.registration,
                    value=None if d.amount is None else str(d.amount), note=d.reason, source=d.source)
               for d in work.disputes]
    if inputs:
        conn.execute(insert(production_inputs), [dict(x, gang_row=row) for x in inputs])
    return row


def month_lines(engine: Engine, rulebook: str, month: str) -> dict[str, list[StatementLine]]:
    """Every member line stored for ``rulebook`` in ``month`` (``YYYY-MM``), by registration.

    Raises ``BadInput`` for a malformed month, ``StoreError`` if the database cannot be read."""
    try:
        first = dt.date.fromisoformat(f"{month}-01")
    except ValueError as exc:
        raise BadInput(f"month {month!r} is not YYYY-MM") from exc
    after = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    g, ln = production_gangs, production_lines
    query = (select(ln.c.registration, ln.c.rule, ln.c.article, ln.c.description, ln.c.amount_cents)
             .join(g, g.c.id == ln.c.gang_row)
             .where(g.c.rulebook == rulebook, g.c.work_date >= first, g.c.work_date < after,
                    ln.c.section == "member")
             .order_by(ln.c.registration, g.c.work_date, ln.c.id))
    out: dict[str, list[StatementLine]] = {}
    try:
        with engine.connect() as conn:
            for reg, rule, article, description, amount in conn.execute(query):
                out.setdefault(reg, []).append(StatementLine(rule, article, description, from_cents(amount)))
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read production lines: {exc}") from exc
    return out


def stored_gangs(engine: Engine) -> list[tuple[str, dt.date]]:
    """(gang_id, work_date) of every stored gang, oldest first (for reports and tests)."""
    with engine.connect() as conn:
        return [(r.gang_id, r.work_date) for r in conn.execute(
            select(production_gangs.c.gang_id, production_gangs.c.work_date).order_by(production_gangs.c.id))]


def count_rows(engine: Engine) -> dict[str, int]:
    """Rows per production table (used to prove an import wrote nothing)."""
    with engine.connect() as conn:
        return {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in TABLES}


