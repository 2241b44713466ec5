"""What a person types in the office's forms, read before a service sees it: dates as dd/mm/aaaa
(the way they are written in Brazil; ISO YYYY-MM-DD is accepted too) turned into the ISO text the
services and CSV files use. A typed value that is not a date is kept as typed: the service then
refuses it naming the field, and the form is shown again with it."""

from __future__ import annotations

import datetime as dt
import re

_BR_DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")


def iso_date_text(typed: str) -> str:
    """``dd/mm/aaaa`` (or ``d/m/aaaa``) -> ``aaaa-mm-dd``; an empty text stays empty; ISO text and
    anything that is not a real date are returned as typed (``31/02/2026`` too: the service's
    check names it)."""
    text = (typed or "").strip()
    m = _BR_DATE.fullmatch(text)
    if not m:
        return text
    try:
        return dt.date(int(m.group(3)), int(m.group(2)), int(m.group(1))).isoformat()
    except ValueError:
        return text


def br_date_text(value) -> str:
    """A date (or ISO text) as the form shows it, ``dd/mm/aaaa``; None and other text as they are."""
    if isinstance(value, dt.date):
        return value.strftime("%d/%m/%Y")
    if value is None:
        return ""
    try:
        return dt.date.fromisoformat(str(value)).strftime("%d/%m/%Y")
    except ValueError:
        return str(value)
