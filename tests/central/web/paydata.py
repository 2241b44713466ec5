"""Stored pay statements for the web tests: signed gate events for the worked examples of RULES.md
P (V017 is worked example 2: vigia_chefe, Sunday 19-01 at anchorage, exit 02:30 -> R$ 696,60) and
an EARLY_EXIT shift (on hold), inserted, rebuilt into shifts and paid by ``central.pay.statements_store``."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from central.ledger.store import insert_events, rebuild_shifts
from central.pay.cli import load_setup
from central.pay.statements_store import pay_from_ledger
from testkit.shift_events import ShiftEvents, dispatch

Z = ZoneInfo("America/Sao_Paulo")
FIRST, LAST = dt.date(2026, 3, 1), dt.date(2026, 3, 31)

# (registration, function, ship, berth, date, period, admit local, exit local, exit flags)
SHIFTS = [
    ("V001", "vigia", "9300001", "berthed", dt.date(2026, 3, 10), "07-13", (3, 10, 6, 55), (3, 10, 13, 5), ()),
    ("V017", "vigia_chefe", "9300002", "anchored", dt.date(2026, 3, 15), "19-01", (3, 15, 18, 58), (3, 16, 2, 30), ()),
    ("V003", "vigia", "9300001", "berthed", dt.date(2026, 3, 31), "19-01", (3, 31, 19, 0), (4, 1, 1, 40), ()),
    ("V008", "vigia", "9300003", "berthed", dt.date(2026, 3, 14), "07-13", (3, 14, 7, 0), (3, 14, 10, 0), ("EARLY_EXIT",)),
]


def seed_pay(engine) -> None:
    gates = {ship: ShiftEvents(f"g{ship[-1]}") for ship in ("9300001", "9300002", "9300003")}
    evs = []
    for reg, fn, ship, berth, day, period, admit, exit_, flags in SHIFTS:
        d = dispatch(day, period, ship, berth=berth, function=fn)
        evs.append((dt.datetime(2026, *admit, tzinfo=Z), gates[ship], "admit", reg, d, ()))
        evs.append((dt.datetime(2026, *exit_, tzinfo=Z), gates[ship], "exit", reg, d, flags))
    evs.sort(key=lambda e: e[0])
    built = [g.tap(kind, reg, at.astimezone(dt.UTC), d, flags=fl) for at, g, kind, reg, d, fl in evs]
    with engine.begin() as conn:
        insert_events(conn, built, dt.datetime(2026, 4, 5, tzinfo=dt.UTC))
    _port, rulebook, calendar = load_setup(None)
    now = dt.datetime(2026, 4, 5, tzinfo=dt.UTC)
    rebuild_shifts(engine, FIRST, LAST, calendar.zone, now=now)
    pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=now)


def raise_first_line(engine, registration: str, cents: int = 100) -> str:
    """Raise the first line of ``registration``'s statement by ``cents`` behind the ledger's back
    (the statement's total left as it was); the statement's id."""
    from sqlalchemy import select, update

    from central.ledger.tables import statement_lines, statements

    with engine.begin() as conn:
        sid = conn.execute(select(statements.c.statement_id).where(
            statements.c.registration == registration)).scalar_one()
        conn.execute(update(statement_lines).where(statement_lines.c.statement_id == sid,
                                                   statement_lines.c.position == 0)
                     .values(amount_cents=statement_lines.c.amount_cents + cents))
    return sid


CHIEF_SHIFT = "V017/9300002/2026-03-15/19-01"  # worked example 2: R$ 696,60 as computed first


def supersede_chief(engine) -> tuple[str, str]:
    """The office corrects V017's shift (the meal interval worked, P6: ``ledger correct-meal``) and
    pay is run again: V017's first statement (R$ 696,60, unpaid) is superseded by a second one
    (R$ 1.020,60), as in the fresh tester's repro. Returns ``(old id, current id)``."""
    from sqlalchemy import select

    from central.ledger.corrections import record_meal
    from central.ledger.tables import statements

    now = dt.datetime(2026, 4, 6, tzinfo=dt.UTC)
    record_meal(engine, CHIEF_SHIFT, worked=True, actor="t", reason="refeição trabalhada", now=now)
    _port, rulebook, calendar = load_setup(None)
    rebuild_shifts(engine, FIRST, LAST, calendar.zone, now=now)
    pay_from_ledger(engine, FIRST, LAST, rulebook, calendar, now=now, reason="refeição corrigida")
    with engine.connect() as conn:
        rows = conn.execute(select(statements.c.statement_id, statements.c.superseded_at, statements.c.total_cents)
                            .where(statements.c.shift_id == CHIEF_SHIFT).order_by(statements.c.version)).all()
    assert [(r.superseded_at is None, r.total_cents) for r in rows] == [(False, 69660), (True, 102060)], rows
    return rows[0].statement_id, rows[1].statement_id
