"""Pay rulebooks: TOML files in ``config/rulebooks/`` with effective dates, parsed at start-up into
typed, frozen objects (STYLE.md 12). Every percentage, the day-wage table, the extension tolerance and
rounding, the night window, the function multipliers and the list of statement lines are data, so a
port can express a present-day collective agreement without a code change (RULES.md, P).

Layout (see docs/pay.md for the full reference and both examples)::

    id = "decreto-83611-1979"
    title = "..."
    timezone = "America/Sao_Paulo"       # default port time zone (the port config may override)

    [[day_wages]]                        # SD table: the wage in force from each date (BRL)
    effective_from = 2026-01-01
    amount = "180.00"

    [[terms]]                            # versions of the terms, each in force from its date
    effective_from = 1979-06-25
    ordinary_hours = 6                   # art. 9
    tolerance_minutes = 10               # CLT art. 58 §1
    rounding = "ceil_hour"               # or "minute"
    extension_cap_hours = 2              # beyond: flag EXTENSION_OVER_CAP (still paid)
    night_window = "19-07"
    functions = { vigia = "1.0", vigia_chefe = "1.5" }   # SDe = SD x multiplier (art. 26 §3)

    [[terms.lines]]                      # one statement line each, computed in this order
    rule = "P1"
    article = "83.611 art. 25"
    description = "salário-dia"
    when = "always"                      # always|night|sunday|holiday|meal_worked|anchored|extension
    basis = "day_wage"                   # day_wage (x SDe) | extension_hours (x SH, hour band)
    rate = "1.00"                        #   | lines (x sum of the rounded lines listed in ``of``)

The types here are pure data; ``central.pay.loading`` reads and validates the files
(``load_rulebook``, ``parse_rulebook``): errors raise ``ConfigError`` naming the file and the key
(``$.terms[0].lines[2].rate``).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Literal

import msgspec

from central.registry.sanctions import SuspensionLimits
from portgate.errors import BadInput, ConfigError
from portgate.records import parse_period

When = Literal["always", "night", "sunday", "holiday", "meal_worked", "anchored", "extension"]
Basis = Literal["day_wage", "extension_hours", "lines", "fixed"]


class DayWage(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The day wage SD (BRL) in force from ``effective_from`` (local date of the work day)."""

    effective_from: dt.date
    amount: Decimal


class LineRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One statement line of the rulebook.

    ``when`` is the condition (RULES.md definitions); ``basis`` what ``rate`` multiplies:
    ``day_wage`` = SDe; ``extension_hours`` = SH x the counted extension hours that fall in the band
    [``from_hours``, ``to_hours``) (no ``to_hours``: no upper bound); ``lines`` = the sum of the
    already-rounded lines named in ``of`` (P7); ``fixed`` = ``amount`` BRL.
    """

    rule: str
    article: str
    description: str
    when: When
    basis: Basis
    rate: Decimal = Decimal("1")
    from_hours: Decimal = Decimal("0")
    to_hours: Decimal | None = None
    of: list[str] = []
    amount: Decimal | None = None


class Terms(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A version of the terms, in force from ``effective_from`` (local date of the work day)."""

    effective_from: dt.date
    functions: dict[str, Decimal]
    lines: list[LineRule]
    ordinary_hours: int = 6
    tolerance_minutes: int = 10
    rounding: Literal["ceil_hour", "minute"] = "ceil_hour"
    extension_cap_hours: Decimal = Decimal("2")
    night_window: str = "19-07"
    night_min_share: Decimal = Decimal("0.5")


class Rulebook(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A whole rulebook: wage table and terms, each a list ordered by effective date."""

    id: str
    title: str
    day_wages: list[DayWage]
    terms: list[Terms]
    timezone: str = "America/Sao_Paulo"
    payment_due_hours: int = 48  # Lei 9.719 art. 2 §1
    suspension: SuspensionLimits | None = None  # R4 (central.registry.sanctions)
    #: P8 (83.611 art. 27 sole paragraph): the launch fare of one watchman's round trip from the quay
    #: to a ship at anchorage, billed to the shipowner (BRL). None = not set (the shipped rulebooks):
    #: ``portgate pay billing`` refuses to bill a trip at no fare; a port whose transport is free
    #: sets 0.00 explicitly.
    anchorage_transport_fare: Decimal | None = None

    def wage_on(self, day: dt.date) -> Decimal:
        """SD in force on ``day``. Raises ``ConfigError`` if the table starts after ``day``."""
        return _in_force(self.day_wages, day, self.id, "day_wages").amount

    def terms_on(self, day: dt.date) -> Terms:
        """The terms in force on ``day``. Raises ``ConfigError`` if none is."""
        return _in_force(self.terms, day, self.id, "terms")


def _in_force(items, day: dt.date, book: str, key: str):
    chosen = None
    for item in items:  # sorted by effective_from at load time
        if item.effective_from <= day:
            chosen = item
        else:
            break
    if chosen is None:
        raise ConfigError(f"nothing in force on {day.isoformat()}", key=f"{book}:{key}")
    return chosen


def parse_window(text: str, key: str) -> tuple[int, int]:
    """``"19-07"`` -> (19, 7) (``portgate.records.parse_period``); raises ``ConfigError`` naming ``key``."""
    try:
        return parse_period(text)
    except BadInput as exc:
        raise ConfigError(exc.reason.removeprefix("period "), key=key) from exc
