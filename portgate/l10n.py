"""Dates, numbers and amounts as a person reads them, in the page's language (Babel's locale data):
``money(Decimal("180"), "pt")`` -> ``"R$ 180,00"``, ``"en"`` -> ``"R$180.00"``. The one place that
formats them for people (pages, PDFs, the command line's messages, the watchman's screen);
exports (CSV, JSON) keep machine formats (``central.pay.lines.money_str``: ``"180.00"``).

A non-breaking space Babel puts between the currency sign and the number is an ordinary space, so
a text reads and searches the same in a page, a PDF and a terminal.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from babel.dates import format_date, format_datetime
from babel.numbers import format_currency, format_decimal

from portgate.i18n import LOCALES, normal_lang

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
    return _plain(format_date(value, DAY[normal_lang(lang)], locale=locale_of(lang)))


def moment(value: dt.datetime, lang: str = "pt", tz: dt.tzinfo | None = None) -> str:
    """An aware time in ``tz`` (the port's; UTC when ``None``), day and time to the second:
    ``14/04/2026 19:05:00`` (pt-BR), ``Apr 14, 2026, 7:05:00 PM`` (English). A naive time raises
    ``ValueError`` (the caller passes aware UTC times)."""
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: pass an aware time")
    local = value.astimezone(tz or dt.timezone.utc)
    return _plain(format_datetime(local, MOMENT[normal_lang(lang)], tzinfo=local.tzinfo, locale=locale_of(lang)))
