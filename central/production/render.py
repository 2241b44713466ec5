"""Printing production-pay results: JSON (one document) or CSV (one row per line).

JSON: ``{"gangs": [{"summary": {...}, "members": [{..., "lines": [...]}], "billing": [...],
"billing_total": "..."}]}``, money and quantities as decimal strings (never floats), times ISO 8601.
CSV columns: gang_id, section (labour|summary|flag|administration|member|total|billing), registration, rule, article,
description, amount.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from zoneinfo import ZoneInfo

import msgspec

from central.pay.lines import StatementLine, money_str
from central.production.model import GangResult
from portgate.l10n import number
from portgate import csvout
from portgate.timeutil import iso

CSV_COLUMNS = ("gang_id", "section", "registration", "rule", "article", "description", "amount")


def _line(line: StatementLine) -> dict:
    return {"rule": line.rule, "article": line.article, "description": line.description,
            "amount": money_str(line.amount)}


def _dec(value: Decimal) -> str:
    return format(value, "f")


PORT_TZ = ZoneInfo("America/Sao_Paulo")


def quantity_text(value: Decimal | str, lang: str, places: int = 3) -> str:
    """A quantity, quota count or quota value for a person: rounded half up to at most ``places``
    decimals, no trailing zeros, the decimal comma and thousands dot in pt-BR (``lang``
    ``pt``/``pt-BR``), the point and comma in English (``en``):
    ``Decimal('90.09230769230769230769230769')`` -> ``'90,092'``, ``1234.5`` -> ``'1.234,5'``.
    The exact value stays in the JSON and the ledger; a text that is not a number is returned as
    it is."""
    try:
        rounded = Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP).normalize()
    except (InvalidOperation, ValueError, TypeError):
        return str(value)
    return number(rounded, lang)  # Babel's locale format (portgate.l10n): 1.234,5 in pt-BR, 1,234.5 in English


def local_due(at: dt.datetime, lang: str, tz: ZoneInfo = PORT_TZ) -> str:
    """A due time in the port's time, as the office pages show it: ``12/03/2026 19:00`` (pt-BR),
    ``2026-03-12 19:00`` (English)."""
    local = at.astimezone(tz)
    return local.strftime("%Y-%m-%d %H:%M" if lang == "en" else "%d/%m/%Y %H:%M")


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
            "extra_members": list(s.extra_members), "administration_total": money_str(s.administration_total),
        },
        "members": [{
            "registration": m.registration, "role": m.role, "extra": m.extra, "quotas": _dec(m.quotas),
            "minutes_worked": _dec(m.minutes_worked),
            "minutes_typed": None if m.minutes_typed is None else _dec(m.minutes_typed),
            "minutes_difference": None if m.minutes_typed is None else _dec(m.minutes_worked - m.minutes_typed),
            "lines": [_line(x) for x in m.lines],
            "total": money_str(m.total), "disputed": money_str(m.disputed), "payable": money_str(m.payable),
            "due_at": iso(m.due_at),
            "disputes": [{"rule": d.rule, "amount": None if d.amount is None else money_str(d.amount),
                          "reason": d.reason} for d in m.disputes],
            "flags": list(m.flags),
        } for m in result.members],
        "billing": [_line(x) for x in result.billing],
        "billing_total": money_str(result.billing_total),
    }


def to_json(results: Iterable[GangResult]) -> str:
    return msgspec.json.format(msgspec.json.encode({"gangs": [result_dict(r) for r in results]}).decode(),
                               indent=2)


# the CSV's own descriptions of its summary and total rows (the statement lines come described in
# the run's language from the engine)
_CSV_WORDS = {
    "pt-BR": {"summary": "mão de obra; {quotas} cotas; valor da cota {value}; toneladas {tonnes}",
              "total": "total", "disputed": "em disputa (depositado)", "payable": "a pagar até {due}",
              "administration": "membros extras (C9) {who}: custo da administração do porto"},
    "en": {"summary": "labour amount; {quotas} quotas; quota value {value}; tonnes {tonnes}",
           "total": "total", "disputed": "disputed (deposited)", "payable": "payable by {due}",
           "administration": "extra members (C9) {who}: the port administration's cost"},
}


def to_csv(results: Iterable[GangResult], lang: str = "pt-BR", tz: ZoneInfo = PORT_TZ) -> str:
    """One row per line (``CSV_COLUMNS``); the summary and total rows described in ``lang``
    (``pt-BR`` or ``en``, as the statement lines): quotas, quota value and tonnes with at most 3
    decimals (``quantity_text``: decimal comma in pt-BR), the due time in the port's time ``tz``
    (``local_due``). The amounts column stays machine-readable (``123.45``)."""
    words = _CSV_WORDS.get(lang, _CSV_WORDS["pt-BR"])
    out = io.StringIO()
    writer = csvout.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in results:
        s = r.summary
        for line in s.labour_lines:
            writer.writerow((s.gang_id, "labour", "", line.rule, line.article, line.description, money_str(line.amount)))
        summary = words["summary"].format(quotas=quantity_text(s.total_quotas, lang),
                                          value=quantity_text(s.quota_value, lang),
                                          tonnes=quantity_text(s.tonnes, lang))
        writer.writerow((s.gang_id, "summary", "", "", "", summary, money_str(s.labour_amount)))
        for flag in s.flags:
            writer.writerow((s.gang_id, "flag", "", "", "", flag, ""))
        if s.extra_members:  # C9: the extras' pay, the port administration's cost, apart
            writer.writerow((s.gang_id, "administration", "", "", "",
                             words["administration"].format(who=" ".join(s.extra_members)),
                             money_str(s.administration_total)))
        for m in r.members:
            for line in m.lines:
                writer.writerow((s.gang_id, "member", m.registration, line.rule, line.article, line.description,
                                 money_str(line.amount)))
            for flag in m.flags:
                writer.writerow((s.gang_id, "flag", m.registration, "", "", flag, ""))
            for what, amount in ((words["total"], m.total), (words["disputed"], m.disputed),
                                 (words["payable"].format(due=local_due(m.due_at, lang, tz)), m.payable)):
                writer.writerow((s.gang_id, "total", m.registration, "", "", what, money_str(amount)))
        for line in r.billing:
            writer.writerow((s.gang_id, "billing", "", line.rule, line.article, line.description, money_str(line.amount)))
    return out.getvalue()
