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

Loading errors raise ``ConfigError`` naming the file and the key (``$.terms[0].lines[2].rate``).
"""

from __future__ import annotations

import datetime as dt
import tomllib
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from central.registry.sanctions import SuspensionLimits
from portgate.config import convert
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
    #: to a ship at anchorage, billed to the shipowner (BRL; 0 = not set, the trip is still listed).
    anchorage_transport_fare: Decimal = Decimal("0")

    def wage_on(self, day: dt.date) -> Decimal:
        """SD in force on ``day``. Raises ``ConfigError`` if the table starts after ``day``."""
        return _in_force(self.day_wages, day, self.id, "day_wages").amount

    def terms_on(self, day: dt.date) -> Terms:
        """The terms in force on ``day``. Raises ``ConfigError`` if none is."""
        return _in_force(self.terms, day, self.id, "terms")

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


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


def _validate(book: Rulebook, path: str | None) -> Rulebook:
    def fail(message: str, key: str) -> ConfigError:
        return ConfigError(message, key=key, path=path)

    try:
        ZoneInfo(book.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise fail(f"unknown time zone {book.timezone!r}", "$.timezone") from exc
    if not book.day_wages:
        raise fail("at least one day wage is required", "$.day_wages")
    if not book.terms:
        raise fail("at least one version of the terms is required", "$.terms")
    if not book.anchorage_transport_fare.is_finite() or book.anchorage_transport_fare < 0:
        raise fail("must be a non-negative amount", "$.anchorage_transport_fare")
    for i, wage in enumerate(book.day_wages):
        if not wage.amount.is_finite() or wage.amount <= 0:
            raise fail("must be a positive amount", f"$.day_wages[{i}].amount")
    for name, items in (("day_wages", book.day_wages), ("terms", book.terms)):
        dates = [item.effective_from for item in items]
        if len(set(dates)) != len(dates):
            raise fail("two entries have the same effective_from", f"$.{name}")
    for t, terms in enumerate(book.terms):
        where = f"$.terms[{t}]"
        try:
            parse_window(terms.night_window, f"{where}.night_window")
        except ConfigError as exc:
            raise fail(exc.args[0].split(": ", 1)[-1], f"{where}.night_window") from exc
        if terms.ordinary_hours <= 0:
            raise fail("must be positive", f"{where}.ordinary_hours")
        if terms.tolerance_minutes < 0:
            raise fail("must not be negative", f"{where}.tolerance_minutes")
        if not terms.functions:
            raise fail("at least one function is required", f"{where}.functions")
        for fname, mult in terms.functions.items():
            if not mult.is_finite() or mult <= 0:
                raise fail("must be a positive multiplier", f"{where}.functions.{fname}")
        if not terms.lines:
            raise fail("at least one line is required", f"{where}.lines")
        seen: set[str] = set()
        for n, line in enumerate(terms.lines):
            lk = f"{where}.lines[{n}]"
            if line.rule in seen:
                raise fail(f"rule {line.rule!r} appears twice", f"{lk}.rule")
            if not line.rate.is_finite() or line.rate < 0:
                raise fail("must be a non-negative number", f"{lk}.rate")
            if line.basis == "lines":
                if not line.of:
                    raise fail("basis 'lines' needs the rule ids to sum", f"{lk}.of")
                for ref in line.of:
                    if ref not in seen:
                        raise fail(f"{ref!r} is not an earlier line", f"{lk}.of")
            if line.basis == "fixed" and (line.amount is None or line.amount < 0):
                raise fail("basis 'fixed' needs a non-negative amount", f"{lk}.amount")
            if line.basis == "extension_hours":
                if line.when != "extension":
                    raise fail("basis 'extension_hours' needs when = 'extension'", f"{lk}.when")
                if line.from_hours < 0 or (line.to_hours is not None and line.to_hours <= line.from_hours):
                    raise fail("the hour band is empty or negative", f"{lk}.to_hours")
            seen.add(line.rule)
    return msgspec.structs.replace(
        book,
        day_wages=sorted(book.day_wages, key=lambda w: w.effective_from),
        terms=sorted(book.terms, key=lambda t: t.effective_from),
    )


def parse_rulebook(raw: object, *, path: str | None = None) -> Rulebook:
    """Convert parsed TOML data to a validated ``Rulebook``; raise ``ConfigError`` naming the key."""
    try:
        book = convert(raw, Rulebook, path=path)
    except InvalidOperation as exc:  # pragma: no cover - msgspec reports bad decimals itself
        raise ConfigError(f"bad number: {exc}", path=path) from exc
    return _validate(book, path)


def load_rulebook(path: str | Path) -> Rulebook:
    """Read and validate a rulebook TOML file. Raises ``ConfigError`` (file, key, reason)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("rulebook file not found", path=str(path)) from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=str(path)) from exc
    return parse_rulebook(raw, path=str(path))
