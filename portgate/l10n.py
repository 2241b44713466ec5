"""Dates, numbers and amounts as a person reads them, in the page's language (Babel's locale data):
``money(Decimal("180"), "pt")`` -> ``"R$ 180,00"``, ``"en"`` -> ``"R$180.00"``. The one place that
formats them for people (pages, PDFs, the command line's messages, the watchman's screen);
exports (CSV, JSON) keep machine formats (``central.pay.lines.money_str``: ``"180.00"``).

A non-breaking space Babel puts between the currency sign and the number is an ordinary space, so
a text reads and searches the same in a page, a PDF and a terminal.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable
from decimal import Decimal

from babel import Locale
from babel.dates import format_date, format_datetime, parse_pattern
from babel.numbers import format_currency, format_decimal

from portgate.i18n import LOCALES, gettext, normal_lang

CURRENCY = "BRL"


def locale_of(lang: str | None) -> str:
    """The Babel locale of a page language: ``"pt"`` -> ``"pt_BR"``, ``"en"`` -> ``"en"``."""
    return LOCALES[normal_lang(lang)]


def _plain(text: str) -> str:
    return text.replace("\xa0", " ").replace("\u202f", " ")


def money(amount: Decimal | int | str, lang: str = "pt") -> str:
    """BRL ``amount`` (a ``Decimal``; an int or a decimal string is taken as one) with two places:
    ``R$ 1.234,56`` (pt-BR), ``R$1,234.56`` (English), negative ``-R$ 1,00``."""
    return _plain(format_currency(Decimal(amount), CURRENCY, locale=locale_of(lang)))


def number(value: Decimal | int | float | str, lang: str = "pt", places: int | None = None) -> str:
    """A quantity (tonnes, quotas, hours): ``1.234,5`` (pt-BR), ``1,234.5`` (English); ``places``
    fixes the decimals (``number(2, places=2)`` -> ``2,00``), else they are shown as given."""
    value = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    if places is None:
        return _plain(format_decimal(value, locale=locale_of(lang), decimal_quantization=False))
    pattern = "#,##0" + ("." + "0" * places if places else "")
    return _plain(format_decimal(value, format=pattern, locale=locale_of(lang)))


#: the day and day-and-time forms of each page language (Babel patterns or widths)
DAY = {"pt": "dd/MM/yyyy", "en": "medium"}
MOMENT = {"pt": "dd/MM/yyyy HH:mm:ss", "en": "medium"}


def day(value: dt.date, lang: str = "pt") -> str:
    """A calendar day: ``14/04/2026`` (pt-BR), ``Apr 14, 2026`` (English)."""
    return _day(value, normal_lang(lang))


@functools.lru_cache(maxsize=4096)
def _day(value: dt.date, lang: str) -> str:
    # once per day and language: a page names the same few days many times (Babel parses its
    # locale on every call; the live panel names 240 periods' days, docs/performance.md)
    return _plain(format_date(value, DAY[lang], locale=locale_of(lang)))


#: the shapes of a time a page shows (``at``'s ``shape``): pt-BR as the office always wrote them,
#: English from Babel's ``en`` patterns (medium time ``h:mm:ss a``, medium date ``MMM d, y``)
SHAPES = {
    "time": {"pt": "HH:mm:ss", "en": "h:mm:ss a"},
    "minute": {"pt": "HH:mm", "en": "h:mm a"},
    "day_time": {"pt": "dd/MM HH:mm:ss", "en": "MMM d, h:mm:ss a"},
    "moment": {"pt": MOMENT["pt"], "en": "MMM d, y, h:mm:ss a"},
    "moment_minute": {"pt": "dd/MM/yyyy HH:mm", "en": "MMM d, y, h:mm a"},
    "day": {"pt": DAY["pt"], "en": "MMM d, y"},
}


def at(value: dt.datetime, lang: str = "pt", tz: dt.tzinfo | None = None, shape: str = "moment") -> str:
    """An aware time in ``tz`` (the port's; UTC when ``None``) in one of ``SHAPES``: ``"time"``
    ``19:05:00`` / ``7:05:00 PM``, ``"minute"`` ``19:05`` / ``7:05 PM``, ``"day_time"``
    ``14/04 19:05:00`` / ``Apr 14, 7:05:00 PM``, ``"moment"`` (the default) ``14/04/2026 19:05:00`` /
    ``Apr 14, 2026, 7:05:00 PM``, ``"moment_minute"`` without the seconds, ``"day"`` the port's day
    ``14/04/2026`` / ``Apr 14, 2026``. A naive time raises ``ValueError`` (pass aware UTC times), an
    unknown shape ``KeyError`` (a programming error)."""
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: pass an aware time")
    return _shape_formatter(shape, normal_lang(lang))(value.astimezone(tz or dt.timezone.utc))


#: the numeric fields of a Babel pattern, written without Babel (a table's 50 rows x a time each
#: were a tenth of the read log's page in ``format_datetime``: its locale parsed per call)
_NUMERIC_FIELDS: dict[str, Callable[[dt.datetime], str]] = {
    "dd": lambda v: f"{v.day:02d}", "MM": lambda v: f"{v.month:02d}", "yyyy": lambda v: f"{v.year:04d}",
    "HH": lambda v: f"{v.hour:02d}", "mm": lambda v: f"{v.minute:02d}", "ss": lambda v: f"{v.second:02d}",
}
_FIELD = re.compile(r"%\((\w+)\)s")


@functools.cache
def _shape_formatter(shape: str, lang: str) -> Callable[[dt.datetime], str]:
    """``local time -> text`` of ``SHAPES[shape][lang]``, what ``format_datetime`` writes for it:
    a pattern of numeric fields only (pt-BR's) by ``%``-formatting the fields, any other (English
    month names, AM/PM) by Babel's parsed pattern with its locale parsed once. Unknown shape:
    ``KeyError``."""
    pattern = parse_pattern(SHAPES[shape][lang])
    fields = _FIELD.findall(pattern.format)
    if all(f in _NUMERIC_FIELDS for f in fields):
        parts = [(f, _NUMERIC_FIELDS[f]) for f in dict.fromkeys(fields)]
        return lambda local: _plain(pattern.format % {f: fmt(local) for f, fmt in parts})
    locale = Locale.parse(locale_of(lang))
    return lambda local: _plain(pattern.apply(local, locale))


#: a calendar month: ``03/2026`` (pt-BR), ``Mar 2026`` (English)
MONTH = {"pt": "MM/yyyy", "en": "MMM y"}


def month(value: dt.date | str, lang: str = "pt") -> str:
    """A calendar month (a date in it, or ``"2026-03"`` as the reports keep it): ``03/2026`` (pt-BR),
    ``Mar 2026`` (English); a text that is not ``YYYY-MM`` is returned as it is."""
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value + "-01")
        except ValueError:
            return value
    return _plain(format_date(value, MONTH[normal_lang(lang)], locale=locale_of(lang)))


#: a day of a week's span without its year (``week``): ``09/03`` (pt-BR), ``Mar 9`` (English)
DAY_MONTH = {"pt": "dd/MM", "en": "MMM d"}
_ISO_WEEK = re.compile(r"(\d{4})-W(\d{2})")


def week(value: str | dt.date, lang: str = "pt", *, short: bool = False) -> str:
    """An ISO week (``"2026-W11"`` as the reports and their CSV keep it, or a day in it) as a
    person reads it, Monday to Sunday: ``semana de 09/03 a 15/03/2026`` (pt-BR), ``week of Mar 9 –
    Mar 15, 2026`` (English); the first day carries its year when the week spans two
    (``semana de 29/12/2025 a 04/01/2026``). ``short``: the two days only, for a chart's axis
    (``09/03–15/03``, ``Mar 9–Mar 15``). A text that is not an ISO week is returned as it is."""
    if isinstance(value, str):
        m = _ISO_WEEK.fullmatch(value.strip())
        try:
            monday = dt.date.fromisocalendar(int(m[1]), int(m[2]), 1) if m else None
        except ValueError:  # 2026-W54
            monday = None
        if monday is None:
            return value
    else:
        monday = value - dt.timedelta(days=value.weekday())
    sunday = monday + dt.timedelta(days=6)
    lang = normal_lang(lang)
    loc = locale_of(lang)
    if short:
        return "–".join(_plain(format_date(d, DAY_MONTH[lang], locale=loc)) for d in (monday, sunday))
    first = day(monday, lang) if monday.year != sunday.year else _plain(format_date(monday, DAY_MONTH[lang], locale=loc))
    return gettext(lang, "l10n.week").format(first=first, last=day(sunday, lang))


def period(start: dt.datetime, lang: str = "pt", tz: dt.tzinfo | None = None, hours: int = 6) -> str:
    """A work period by its local hours and its day, as the escala names it (RULES art. 9 periods):
    ``19-01 15/03/2026`` (pt-BR), ``19-01 Mar 15, 2026`` (English); ``start`` aware (a naive one
    raises ``ValueError``), ``hours`` long."""
    if start.tzinfo is None:
        raise ValueError(f"naive datetime {start!r}: pass an aware time")
    local = start.astimezone(tz or dt.timezone.utc)
    return f"{local.hour:02d}-{(local.hour + hours) % 24:02d} {day(local.date(), lang)}"


def moment(value: dt.datetime, lang: str = "pt", tz: dt.tzinfo | None = None) -> str:
    """An aware time in ``tz`` (the port's; UTC when ``None``), day and time to the second:
    ``14/04/2026 19:05:00`` (pt-BR), ``Apr 14, 2026, 7:05:00 PM`` (English). A naive time raises
    ``ValueError`` (the caller passes aware UTC times)."""
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: pass an aware time")
    local = value.astimezone(tz or dt.timezone.utc)
    return _plain(format_datetime(local, MOMENT[normal_lang(lang)], tzinfo=local.tzinfo, locale=locale_of(lang)))


# an ISO day or time written into a text (``on 2026-03-15``, ``2026-03-16T10:00:00-03:00``,
# ``2026-03-11 01:01``), not inside an id (``V001/9300001/2026-03-15/01-07``) nor a quoted value
_ISO_IN_TEXT = re.compile(r"(?<![\w/'-])(?P<day>\d{4}-\d\d-\d\d)(?P<time>[T ]\d\d:\d\d(?P<sec>:\d\d(?:\.\d+)?)?"
                          r"(?:Z|[+-]\d\d:\d\d)?)?(?![\w/'-]|\.\w|:\d)")


def _iso_shown(lang: str, m: re.Match) -> str:
    try:
        if m["time"]:
            found = dt.datetime.fromisoformat(m.group(0).replace("Z", "+00:00"))
            shape = "moment" if m["sec"] else "moment_minute"
            if found.tzinfo is None:  # a wall-clock time (the writer's port time): shown as it is
                return at(found.replace(tzinfo=dt.timezone.utc), lang, dt.timezone.utc, shape)
            return at(found, lang, found.tzinfo, shape)
        return day(dt.date.fromisoformat(m["day"]), lang)
    except ValueError:  # 2026-13-45: not a day, shown as written
        return m.group(0)


def dates_in_text(text: str, lang: str = "pt") -> str:
    """``text`` (a service's refusal) with each ISO day or time in it as ``lang`` writes it:
    ``on 2026-03-15`` -> ``on 15/03/2026`` (pt-BR), ``on Mar 15, 2026`` (English); a time with an
    offset in that offset (the services write port time), a time without one as written; a quoted
    value (``'2026-03-15'``: what a person typed), a day inside an id and a day that is not one
    (``2026-13-45``) stay as they are."""
    return _ISO_IN_TEXT.sub(lambda m: _iso_shown(lang, m), text)
