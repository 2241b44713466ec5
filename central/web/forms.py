"""What a person types in the office's forms, read before a service sees it: dates as dd/mm/aaaa
(the way they are written in Brazil; ISO YYYY-MM-DD is accepted too) turned into the ISO text the
services and CSV files use. A typed value that is not a date is kept as typed: the service then
refuses it naming the field, and the form is shown again with it."""

from __future__ import annotations

import datetime as dt
import re

from portgate.errors import BadInput

_BR_DATE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_BR_INSTANT = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})[ T,]+(\d{1,2}):(\d{2})(?::(\d{2}))?")


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


def query_day_text(params) -> str:
    """The day a page's address asks for, stripped (empty: none): ``date`` (what the pages' links
    and forms send), or ``day`` (the what-if page's name for it; typed by hand into the escala's
    address, ``?day=2026-02-31`` was ignored and today's escala shown without a word). ``BadInput``
    when both are given and name different days; the caller checks the text is a day."""
    date, day = ((params.get(k) or "").strip() for k in ("date", "day"))
    if date and day and date != day:
        raise BadInput(f"date {date[:40]!r} and day {day[:40]!r} name two days: give one", where="date")
    return date or day


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


def instant_text(typed: str, tz: dt.tzinfo, field: str) -> str:
    """A date and time as a clerk types it into an office form, as the ISO 8601 text with offset
    the services read: ``dd/mm/aaaa hh:mm`` (seconds optional) and a ``datetime-local`` value
    (``aaaa-mm-ddThh:mm``) are port time (``tz``, the office's ``[web] tz``: the wall clock
    moves with DST, the offset is the one in force then); a full ISO instant with its offset is
    kept as it is; an empty text stays empty (the service says whether it is required).
    ``BadInput`` (``where=field``) for anything else, e.g. ``31/02/2026 10:00``: the form shows
    the error beside the field."""
    text = (typed or "").strip()
    if not text:
        return ""
    m = _BR_INSTANT.fullmatch(text)
    try:
        if m:
            d, mo, y, h, mi, sec = (int(g or 0) for g in m.groups())
            return dt.datetime(y, mo, d, h, mi, sec, tzinfo=tz).isoformat()
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(f"{text!r} is not a date and time (dd/mm/yyyy hh:mm)", where=field) from None
    if "-" not in text[:5] or ("T" not in text and " " not in text):  # a date alone, a bare number
        raise BadInput(f"{text!r} is not a date and time (dd/mm/yyyy hh:mm)", where=field)
    return (when if when.tzinfo else when.replace(tzinfo=tz)).isoformat()
