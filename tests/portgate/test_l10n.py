"""Dates, numbers and amounts in the page's language through Babel (portgate/l10n.py, docs/i18n.md)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from central.pay.payslip import brl
from portgate.l10n import day, moment, money, number


def test_amounts_read_the_pt_br_way_and_the_english_way():
    assert money(Decimal("180")) == "R$ 180,00"
    assert money(Decimal("1234567.5")) == "R$ 1.234.567,50"
    assert money(Decimal("-1")) == "-R$ 1,00"
    assert money("696.60", "en") == "R$696.60"
    assert brl(Decimal("180")) == money(Decimal("180"))  # the payslip's and the pages' one formatter


def test_quantities_days_and_times():
    assert number(Decimal("1234.5")) == "1.234,5"
    assert number(2, places=2) == "2,00"
    assert number("1234.5", "en") == "1,234.5"
    assert day(dt.date(2026, 4, 14)) == "14/04/2026"
    assert day(dt.date(2026, 4, 14), "en") == "Apr 14, 2026"
    at = dt.datetime(2026, 4, 14, 22, 5, tzinfo=dt.timezone.utc)
    assert moment(at, "pt", ZoneInfo("America/Sao_Paulo")) == "14/04/2026 19:05:00"


def test_a_naive_time_is_refused():
    with pytest.raises(ValueError, match="naive"):
        moment(dt.datetime(2026, 4, 14, 22, 5))


def test_the_pages_quantities_group_thousands_through_babel():
    """``quantity_text`` (pay and reports pages, the production CSV's descriptions) wrote
    ``1234,5`` by hand; Babel groups thousands."""
    from central.production.render import quantity_text
    assert quantity_text(Decimal("1234.5"), "pt") == "1.234,5"
    assert quantity_text(Decimal("1234.5"), "en") == "1,234.5"
    assert quantity_text(Decimal("90.09230769230769230769230769"), "pt-BR") == "90,092"
    assert quantity_text("n/a", "pt") == "n/a"


def test_a_time_in_every_shape_the_pages_show_in_port_time_and_the_page_s_language():
    """The office's ``when`` (central.web.render) wrote ``dd/mm/aaaa`` by hand on English pages too;
    every shape now goes through Babel in the port's time zone (issue 33)."""
    from portgate.l10n import at, month, period
    tz = ZoneInfo("America/Sao_Paulo")
    utc = dt.datetime(2026, 3, 15, 22, 5, 9, tzinfo=dt.timezone.utc)  # 19:05:09 in Santos
    shapes = {"time": ("19:05:09", "7:05:09 PM"), "minute": ("19:05", "7:05 PM"),
              "day_time": ("15/03 19:05:09", "Mar 15, 7:05:09 PM"),
              "moment": ("15/03/2026 19:05:09", "Mar 15, 2026, 7:05:09 PM"),
              "moment_minute": ("15/03/2026 19:05", "Mar 15, 2026, 7:05 PM"),
              "day": ("15/03/2026", "Mar 15, 2026")}
    for shape, (pt, en) in shapes.items():
        assert (at(utc, "pt", tz, shape), at(utc, "en", tz, shape)) == (pt, en), shape
    late = dt.datetime(2026, 3, 16, 2, 30, tzinfo=dt.timezone.utc)  # 23:30 of the 15th in port time
    assert at(late, "pt", tz, "day") == "15/03/2026"
    assert period(dt.datetime(2026, 3, 15, 22, 0, tzinfo=dt.timezone.utc), "pt", tz) == "19-01 15/03/2026"
    assert period(dt.datetime(2026, 3, 15, 22, 0, tzinfo=dt.timezone.utc), "en", tz) == "19-01 Mar 15, 2026"
    assert (month("2026-03"), month("2026-03", "en"), month("n/a")) == ("03/2026", "Mar 2026", "n/a")
    with pytest.raises(ValueError, match="naive"):
        period(dt.datetime(2026, 3, 15, 22, 0), "pt", tz)
    with pytest.raises(ValueError, match="naive"):
        at(dt.datetime(2026, 3, 15, 22, 0), "pt", tz)


def test_an_iso_week_reads_as_its_monday_to_sunday():
    from portgate.l10n import week

    assert week("2026-W11") == "semana de 09/03 a 15/03/2026"
    assert week("2026-W11", "en") == "week of Mar 9 – Mar 15, 2026"
    assert week(dt.date(2026, 3, 15)) == week("2026-W11")  # a day in it: its week
    assert week("2026-W01") == "semana de 29/12/2025 a 04/01/2026"  # two years: both named
    assert week("2026-W01", "en") == "week of Dec 29, 2025 – Jan 4, 2026"
    assert week("2026-W11", short=True) == "09/03–15/03" and week("2026-W11", "en", short=True) == "Mar 9–Mar 15"
    for not_a_week in ("2026-W54", "2026-11", "semana", ""):
        assert week(not_a_week) == not_a_week


def test_every_shape_writes_what_babel_s_format_datetime_writes():
    """``at`` formats pt-BR's numeric shapes without Babel and the others with a parsed pattern and
    locale kept (a table of 50 times parsed Babel's locale 50 times); the text is Babel's own,
    years below 1000 and both page languages included."""
    import random

    from babel.dates import format_datetime

    from portgate.l10n import SHAPES, _plain, at, locale_of, normal_lang
    rng = random.Random(7)
    zones = (ZoneInfo("America/Sao_Paulo"), ZoneInfo("America/Manaus"), dt.timezone.utc)
    start = dt.datetime(1, 1, 2, tzinfo=dt.timezone.utc)
    for _ in range(400):
        value = start + dt.timedelta(seconds=rng.randrange(9998 * 365 * 86400))
        for tz in zones:
            local = value.astimezone(tz)
            for shape, by_lang in SHAPES.items():
                for lang in ("pt", "en", "pt-BR", "en_US"):
                    babel = format_datetime(local, by_lang[normal_lang(lang)], tzinfo=tz, locale=locale_of(lang))
                    assert at(value, lang, tz, shape) == _plain(babel), (value, tz, shape, lang)
