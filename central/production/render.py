"""Printing production-pay results: JSON (one document) or CSV (one row per line).

JSON: ``{"gangs": [{"summary": {...}, "members": [{..., "lines": [...]}], "billing": [...],
"billing_total": "..."}]}``, money and quantities as decimal strings (never floats), times ISO 8601.
CSV columns: gang_id, section (labour|summary|member|total|billing), registration, rule, article,
description, amount.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from decimal import Decimal

import msgspec

from central.pay.lines import StatementLine, money_str
from central.production.model import GangResult
from portgate.timeutil import iso

CSV_COLUMNS = ("gang_id", "section", "registration", "rule", "article", "description", "amount")


def _line(line: StatementLine) -> dict:
    return {"rule": line.rule, "article": line.article, "description": line.description,
            "amount": money_str(line.amount)}


def _dec(value: Decimal) -> str:
    return format(value, "f")


def result_dict(result: GangResult) -> dict:
    """One gang's result as plain JSON-ready data."""
    s = result.summary
    return {
        "summary": {
            "gang_id": s.gang_id, "ship": s.ship, "date": s.date.isoformat(), "period": s.period,
            "rulebook": s.rulebook, "rulebook_version": s.rulebook_version.isoformat(),
            "labour_lines": [_line(x) for x in s.labour_lines], "labour_amount": money_str(s.labour_amount),
            "tonnes": _dec(s.tonnes), "total_quotas": _dec(s.total_quotas), "quota_value": _dec(s.quota_value),
            "shares_total": money_str(s.shares_total), "rounding_difference": money_str(s.rounding_difference),
            "absent": list(s.absent), "flags": list(s.flags),
        },
        "members": [{
            "registration": m.registration, "role": m.role, "quotas": _dec(m.quotas),
            "minutes_worked": _dec(m.minutes_worked),
            "minutes_typed": None if m.minutes_typed is None else _dec(m.minutes_typed),
            "minutes_difference": None if m.minutes_typed is None else _dec(m.minutes_worked - m.minutes_typed),
            "lines": [_line(x) for x in m.lines],
            "total": money_str(m.total), "disputed": money_str(m.disputed), "payable": money_str(m.payable),
            "due_at": iso(m.due_at),
            "disputes": [{"rule": d.rule, "amount": None if d.amount is None else money_str(d.amount),
                          "reason": d.reason} for d in m.disputes],
        } for m in result.members],
        "billing": [_line(x) for x in result.billing],
        "billing_total": money_str(result.billing_total),
    }


def to_json(results: Iterable[GangResult]) -> str:
    return msgspec.json.format(msgspec.json.encode({"gangs": [result_dict(r) for r in results]}).decode(),
                               indent=2)


def to_csv(results: Iterable[GangResult]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in results:
        s = r.summary
        for line in s.labour_lines:
            writer.writerow((s.gang_id, "labour", "", line.rule, line.article, line.description, money_str(line.amount)))
        writer.writerow((s.gang_id, "summary", "", "", "", f"labour amount; {_dec(s.total_quotas)} quotas; "
                         f"quota value {_dec(s.quota_value)}; tonnes {_dec(s.tonnes)}", money_str(s.labour_amount)))
        for flag in s.flags:
            writer.writerow((s.gang_id, "flag", "", "", "", flag, ""))
        for m in r.members:
            for line in m.lines:
                writer.writerow((s.gang_id, "member", m.registration, line.rule, line.article, line.description,
                                 money_str(line.amount)))
            for what, amount in (("total", m.total), ("disputed (deposited)", m.disputed),
                                 (f"payable by {iso(m.due_at)}", m.payable)):
                writer.writerow((s.gang_id, "total", m.registration, "", "", what, money_str(amount)))
        for line in r.billing:
            writer.writerow((s.gang_id, "billing", "", line.rule, line.article, line.description, money_str(line.amount)))
    return out.getvalue()
