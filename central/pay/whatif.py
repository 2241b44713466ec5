"""What-if pay: statements under another rulebook beside the ones on record, nothing stored.

``read_current`` reads the current (not superseded) stored statements of some shifts with their
lines, as computed: an adjustment line (``ADJ``, what earlier versions were paid) is left out and
its total is the computed one (the stored total less the adjustment), so a statement is compared
with what the other rulebook computes, not what is still owed after a payment; ``diff_rows`` (pure) compares them with newly computed statements, one row per worker, shift
and rule (``recorded`` / ``what_if`` amounts as strings, ``None`` where a side has no such line,
``diff`` = what_if - recorded) and a ``TOTAL`` row per shift.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.tables import statement_lines, statements
from central.pay.lines import money_str
from central.pay.versions import ADJUSTMENT_RULE
from central.pay.statements_store import pay_from_ledger
from central.pay.watchmen import Statement


@dataclasses.dataclass(frozen=True, slots=True)
class Recorded:
    """A stored current statement: its id, rulebook, computed total and ``{rule: amount}`` (summed;
    no ``ADJ`` line)."""

    statement_id: str
    rulebook: str
    total: Decimal
    lines: dict[str, Decimal]


def read_current(conn: Connection, shift_ids: list[str]) -> dict[str, Recorded]:
    """The current stored statement of each of these shifts that has one (by shift id)."""
    out: dict[str, Recorded] = {}
    for chunk in range(0, len(shift_ids), 500):
        part = shift_ids[chunk:chunk + 500]
        heads = conn.execute(select(statements.c.statement_id, statements.c.shift_id,
                                    statements.c.rulebook, statements.c.total_cents)
                             .where(statements.c.shift_id.in_(part),
                                    statements.c.superseded_at.is_(None))).all()
        by_id = {sid: (shift, rb, Decimal(cents) / 100, {}) for sid, shift, rb, cents in heads}
        if not by_id:
            continue
        paid_before: dict[str, Decimal] = {}
        for sid, rule, cents in conn.execute(
                select(statement_lines.c.statement_id, statement_lines.c.rule,
                       statement_lines.c.amount_cents)
                .where(statement_lines.c.statement_id.in_(list(by_id)))):
            if rule == ADJUSTMENT_RULE:  # what earlier versions were paid: not a computed amount
                paid_before[sid] = paid_before.get(sid, Decimal(0)) + Decimal(cents) / 100
                continue
            lines = by_id[sid][3]
            lines[rule] = lines.get(rule, Decimal(0)) + Decimal(cents) / 100
        for sid, (shift, rb, total, lines) in by_id.items():
            out[shift] = Recorded(sid, rb, total - paid_before.get(sid, Decimal(0)), lines)
    return out


def _money(value: Decimal | None) -> str | None:
    return None if value is None else money_str(value)


def diff_rows(new: list[Statement], recorded: dict[str, Recorded]) -> list[dict]:
    """Rows comparing each new statement with the recorded one of its shift (pure). A shift with
    no recorded statement has ``recorded: None`` on every row. Rows: ``{registration, work_day,
    shift_id, rule, recorded, what_if, diff, changed}``; lines in the new statement's order, then
    rules only the recorded one had, then ``TOTAL`` (with both rulebook ids)."""
    rows: list[dict] = []
    for st in new:
        old = recorded.get(st.shift_id)
        base = {"registration": st.registration, "work_day": st.work_day.isoformat(),
                "shift_id": st.shift_id}
        mine: dict[str, Decimal] = {}
        for line in st.lines:
            mine[line.rule] = mine.get(line.rule, Decimal(0)) + line.amount
        theirs = old.lines if old else {}
        for rule in [*mine, *[r for r in theirs if r not in mine]]:
            rows.append(_row(base, rule, theirs.get(rule) if old else None, mine.get(rule)))
        total = _row(base, "TOTAL", old.total if old else None, st.total)
        total["rulebook"] = {"recorded": old.rulebook if old else None, "what_if": st.rulebook}
        rows.append(total)
    return rows


def _row(base: dict, rule: str, was: Decimal | None, now: Decimal | None) -> dict:
    diff = (now or Decimal(0)) - (was or Decimal(0))
    return {**base, "rule": rule, "recorded": _money(was), "what_if": _money(now),
            "diff": money_str(diff), "changed": was is None or now is None or diff != 0}


@dataclasses.dataclass(frozen=True, slots=True)
class PayWhatIf:
    """A what-if run: the ``diff_rows`` rows, the shifts held (``(shift, reasons)``, not paid by
    either side), how many statements were computed and how many totals change."""

    rulebook: str
    rows: list[dict]
    held: list[tuple]
    statements: int

    @property
    def changed(self) -> int:
        return sum(1 for r in self.rows if r["rule"] == "TOTAL" and r["changed"])


def pay_what_if(engine, date_from, date_to, rulebook, calendar, *, now, shifts_check=None) -> PayWhatIf:
    """The stored shifts of work days [date_from, date_to] paid under ``rulebook`` (P1-P7) beside
    the current stored statements; nothing is written (``pay_from_ledger(store=False)`` and reads
    only; ``shifts_check`` as there). Raises ``StoreError`` on a database failure."""
    run = pay_from_ledger(engine, date_from, date_to, rulebook, calendar, now=now, store=False,
                          shifts_check=shifts_check)
    with engine.connect() as conn:
        recorded = read_current(conn, [st.shift_id for st in run.statements])
    return PayWhatIf(rulebook.id, diff_rows(run.statements, recorded),
                     [(h.shift, h.reasons) for h in run.held], len(run.statements))
