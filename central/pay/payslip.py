"""Payslips: one per worker and period, from the stored statements (``statements_read``), with a
verification code the office can check against the ledger (``verify``).

The code is HMAC-SHA256, under the office's payslip key, of the slip's canonical content: a
compact JSON of the registration, name, category, period, and per statement its id, shift, work
day, rulebook id, due time, every line (rule, article, cents) and total, then the slip's total.
It is printed on the slip and named in the PDF's metadata; ``verify`` recomputes the slip from the
ledger, so a PDF whose figures were edited, or whose ledger rows changed since, fails.

Formats are pt-BR: ``R$ 1.234,56``, ``dd/mm/aaaa``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import json
from collections import defaultdict
from decimal import Decimal
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.engine import Connection

from portgate.gctune import paused as no_cyclic_gc
from portgate.l10n import money
from central.pay.statements_read import StatementView, read_statements
from central.registry.schema import workers

CODE_HEX = 24  # 96 bits of the HMAC, printed in groups of four


def brl(amount: Decimal, lang: str = "pt") -> str:
    """``Decimal('1234.56')`` -> ``'R$ 1.234,56'`` (negative: ``'-R$ 1,00'``); Babel's locale
    formatting (``portgate.l10n.money``), English ``'R$1,234.56'``."""
    return money(amount, lang)


def date_br(day: dt.date) -> str:
    return day.strftime("%d/%m/%Y")


def time_br(at: dt.datetime, tz: ZoneInfo) -> str:
    return at.astimezone(tz).strftime("%d/%m/%Y %H:%M")


@dataclasses.dataclass(frozen=True, slots=True)
class Slip:
    """One worker's payslip for work days [date_from, date_to]: its statements and total."""

    registration: str
    name: str
    category: str
    date_from: dt.date
    date_to: dt.date
    statements: tuple[StatementView, ...]

    @property
    def total(self) -> Decimal:
        return sum((s.total for s in self.statements), Decimal("0.00"))

    @property
    def rulebooks(self) -> tuple[str, ...]:
        return tuple(sorted({s.rulebook for s in self.statements}))


def build_slips(conn: Connection, date_from: dt.date, date_to: dt.date, *,
                registration: str | None = None) -> list[Slip]:
    """The payslips of the period (one per worker with statements), by registration."""
    with no_cyclic_gc(long_lived=True):  # ~10^5 acyclic statements kept: no collector passes over them
        found = read_statements(conn, date_from, date_to, registration=registration)
    by_reg: dict[str, list[StatementView]] = defaultdict(list)
    for st in found:
        by_reg[st.registration].append(st)
    people = {}
    regs = list(by_reg)
    for chunk in range(0, len(regs), 900):
        for reg, name, cat in conn.execute(select(workers.c.registration, workers.c.name, workers.c.category)
                                           .where(workers.c.registration.in_(regs[chunk:chunk + 900]))):
            people[reg] = (name, cat)
    return [Slip(reg, *people.get(reg, ("", "")), date_from, date_to, tuple(sts))
            for reg, sts in sorted(by_reg.items())]


def canonical(slip: Slip) -> bytes:
    """The slip's canonical content (UTF-8 JSON, sorted keys, no spaces)."""
    body = {
        "v": 1, "registration": slip.registration, "name": slip.name, "category": slip.category,
        "from": slip.date_from.isoformat(), "to": slip.date_to.isoformat(),
        "statements": [{
            "id": s.statement_id, "shift": s.shift_id, "day": s.work_day.isoformat(), "rulebook": s.rulebook,
            "due": s.due_at.isoformat(), "total": int(s.total * 100),
            "lines": [[x.rule, x.article, int(x.amount * 100)] for x in s.lines]} for s in slip.statements],
        "total": int(slip.total * 100),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def code(key: bytes, slip: Slip) -> str:
    """The verification code: the first ``CODE_HEX`` hex digits of HMAC-SHA256(key, canonical)."""
    return hmac.new(key, canonical(slip), hashlib.sha256).hexdigest()[:CODE_HEX].upper()


def grouped(c: str) -> str:
    """``'ABCD1234...'`` -> ``'ABCD-1234-...'`` as printed."""
    return "-".join(c[i:i + 4] for i in range(0, len(c), 4))
