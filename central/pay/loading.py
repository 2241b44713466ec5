"""The pay set-up read at the edge: rulebook TOML files, the port TOML, and the port's holiday
calendar built from the ``holidays`` package. The engine (``central.pay.watchmen``) receives what
these return as data and reads no file, package calendar or clock itself.

- ``load_rulebook(path) -> Rulebook``; ``parse_rulebook(raw, path=) -> Rulebook`` (already parsed
  TOML data, validated once, STYLE.md 12);
- ``load_port_config(path) -> PortConfig`` (``config/port.example.toml``);
- ``holiday_calendar(state, timezone, ...) -> HolidayCalendar`` and ``calendar_from_config(port)``:
  the dates of every year in ``years`` (default 1999-2100, every local work day pay accepts: the
  engine refuses times before 2000-01-01 UTC and from 2101 on).

A holiday (RULES.md, definition of Holiday; P4/P5) is a national public holiday of Brazil or a
holiday of the port's state (``country_holidays("BR", subdiv=STATE, language="pt_BR")``), a
municipal or collective-agreement date of the port configuration (the package has no municipal
calendars), or an optional day (Carnaval, Corpus Christi, ...) that the configuration lists by its
pt-BR name as the package spells it. Every error is a ``ConfigError`` naming the file and key.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Callable, Iterable
from decimal import InvalidOperation
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import holidays
import msgspec

from central.pay.calendar import HolidayCalendar, LocalHoliday, PortConfig
from central.pay.rulebook import LineRule, Rulebook, Terms, parse_window
from portgate.config import convert, load_toml, nesting_guard
from portgate import docbr
from portgate.errors import BadInput, ConfigError

#: The example port configuration (time zone, holidays, rulebook), the default of the pay commands.
DEFAULT_PORT_CONFIG = Path(__file__).resolve().parents[2] / "config" / "port.example.toml"
#: Local work days pay can meet: a time in 2000-01-01..2100-12-31 UTC falls on 1999-12-31 or later.
PAYABLE_YEARS = range(1999, 2101)


# -- rulebooks -------------------------------------------------------------------------------------

#: ``fail(message, key)``: the ``ConfigError`` to raise, naming the key and the rulebook's path
_Fail = Callable[[str, str], ConfigError]


def _validate(book: Rulebook, path: str | None) -> Rulebook:
    """``book`` with its day wages and terms sorted by ``effective_from``, once every check passed:
    the book's own settings (``_check_book``), then each version of the terms (``_check_terms``)
    and its lines (``_check_line``). Raises ``ConfigError`` naming the key of the first problem and
    ``path``."""
    def fail(message: str, key: str) -> ConfigError:
        return ConfigError(message, key=key, path=path)

    _check_book(book, fail)
    for t, terms in enumerate(book.terms):
        _check_terms(terms, f"$.terms[{t}]", fail)
    return msgspec.structs.replace(
        book,
        day_wages=sorted(book.day_wages, key=lambda w: w.effective_from),
        terms=sorted(book.terms, key=lambda t: t.effective_from),
    )


def _check_book(book: Rulebook, fail: _Fail) -> None:
    """The time zone, the day wages (at least one, positive), the terms (at least one), the P8 fare
    (non-negative, in reais with at most 2 decimals) and no two wages or terms from the same day;
    raises ``fail(message, key)``."""
    try:
        ZoneInfo(book.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise fail(f"unknown time zone {book.timezone!r}", "$.timezone") from exc
    if not book.day_wages:
        raise fail("at least one day wage is required", "$.day_wages")
    if not book.terms:
        raise fail("at least one version of the terms is required", "$.terms")
    fare = book.anchorage_transport_fare
    if fare is not None and (not fare.is_finite() or fare < 0):
        raise fail("must be a non-negative amount", "$.anchorage_transport_fare")
    if fare is not None and not -2 <= fare.as_tuple().exponent <= 0:  # "45.001", "1e3": not guessed
        raise fail(f"must be written in reais with at most 2 decimals, as \"45.00\" (not {fare!s})",
                   "$.anchorage_transport_fare")
    for i, wage in enumerate(book.day_wages):
        if not wage.amount.is_finite() or wage.amount <= 0:
            raise fail("must be a positive amount", f"$.day_wages[{i}].amount")
    for name, items in (("day_wages", book.day_wages), ("terms", book.terms)):
        dates = [item.effective_from for item in items]
        if len(set(dates)) != len(dates):
            raise fail("two entries have the same effective_from", f"$.{name}")


def _check_terms(terms: Terms, where: str, fail: _Fail) -> None:
    """One version of the terms at key ``where``: its night window, ordinary hours, tolerance,
    functions (positive multipliers) and lines (at least one, each by ``_check_line``, in order);
    raises ``fail(message, key)``."""
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
        _check_line(line, f"{where}.lines[{n}]", seen, fail)
        seen.add(line.rule)


def _check_line(line: LineRule, lk: str, seen: set[str], fail: _Fail) -> None:
    """One line of the terms at key ``lk``: a rule not in ``seen`` (the earlier lines' rules), a
    non-negative rate and what its basis needs (``lines``: earlier rule ids; ``fixed``: an amount;
    ``extension_hours``: ``when = 'extension'`` and a non-empty hour band); raises ``fail``."""
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
    if line.basis == "fixed" and (line.amount is None or not line.amount.is_finite()
                                  or line.amount < 0):
        raise fail("basis 'fixed' needs a non-negative amount", f"{lk}.amount")
    if line.basis == "extension_hours":
        if line.when != "extension":
            raise fail("basis 'extension_hours' needs when = 'extension'", f"{lk}.when")
        if not line.from_hours.is_finite() or line.from_hours < 0 or (
                line.to_hours is not None and (not line.to_hours.is_finite()
                                               or line.to_hours <= line.from_hours)):
            raise fail("the hour band is empty or negative", f"{lk}.to_hours")


def parse_rulebook(raw: object, *, path: str | None = None) -> Rulebook:
    """Convert parsed TOML data to a validated ``Rulebook``; raise ``ConfigError`` naming the key
    (a table with neither ``day_wages`` nor ``terms``, e.g. a production or gate rulebook: ``not a
    watchmen's pay rulebook``)."""
    if isinstance(raw, dict) and not {"day_wages", "terms"} & raw.keys():
        other = raw.get("id") or raw.get("name")
        named = f" ({other!r} has no [[day_wages]] or [[terms]])" if isinstance(other, str) else ""
        raise ConfigError(f"not a watchmen's pay rulebook (RULES.md P){named}", path=path)
    try:
        book = convert(raw, Rulebook, path=path)
    except InvalidOperation as exc:  # pragma: no cover - msgspec reports bad decimals itself
        raise ConfigError(f"bad number: {exc}", path=path) from exc
    return _validate(book, path)


def load_rulebook(path: str | Path) -> Rulebook:
    """Read and validate a rulebook TOML file. Raises ``ConfigError`` (file, key, reason), ``BadInput``
    (``portgate.config.TOO_DEEP``) for one nested too deeply to parse."""
    path = Path(path)
    with nesting_guard(str(path)):
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError("rulebook file not found", path=str(path)) from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"not valid TOML: {exc}", path=str(path)) from exc
        return parse_rulebook(raw, path=str(path))


# -- the port and its holidays -----------------------------------------------------------------------

def load_port_config(path: str | Path) -> PortConfig:
    """Read the port TOML; resolve ``rulebook`` relative to the file; ``[employer] cnpj`` checked
    by its check digits and kept as its 14 bare characters. Raises ``ConfigError`` naming the key."""
    path = Path(path)
    port = load_toml(path, PortConfig)
    if port.employer is not None:
        try:
            cnpj = docbr.cnpj(port.employer.cnpj, "cnpj")
        except BadInput as exc:
            raise ConfigError(exc.reason, key="$.employer.cnpj", path=str(path)) from None
        if not port.employer.name.strip():
            raise ConfigError("the paying entity's name is required", key="$.employer.name", path=str(path))
        port = msgspec.structs.replace(port, employer=msgspec.structs.replace(port.employer, cnpj=cnpj))
    rulebook = Path(port.rulebook)
    if not rulebook.is_absolute():
        candidate = (path.parent / rulebook).resolve()
        rulebook = candidate if candidate.exists() else rulebook.resolve()
    return msgspec.structs.replace(port, rulebook=str(rulebook))


def _parse_local(item: LocalHoliday, key: str) -> tuple[int | None, int, int]:
    parts = item.date.split("-")
    try:
        if len(parts) == 3:
            day = dt.date.fromisoformat(item.date)
            return day.year, day.month, day.day
        if len(parts) == 2:
            month, day = int(parts[0]), int(parts[1])
            dt.date(2024, month, day)  # a leap year accepts 02-29
            return None, month, day
    except ValueError:
        pass
    raise ConfigError(f"{item.date!r} is not YYYY-MM-DD or MM-DD", key=key)


@lru_cache(maxsize=1)
def _optional_names() -> frozenset[str]:
    names: set[str] = set()
    optional = holidays.country_holidays(
        "BR", language="pt_BR", years=range(2020, 2031), categories=("optional",)
    )
    for name in optional.values():
        names.update(name.split("; "))
    return frozenset(names)


def holiday_calendar(
    state: str,
    timezone: str = "America/Sao_Paulo",
    *,
    municipal: Iterable[LocalHoliday] = (),
    agreement: Iterable[LocalHoliday] = (),
    optional_days: Iterable[str] = (),
    years: range = PAYABLE_YEARS,
) -> HolidayCalendar:
    """The holidays of a port in state ``state`` (``"SP"``) for every year of ``years``, as data.

    Raises ``ConfigError`` naming the key: an unknown time zone (``timezone``), a state that is not
    a Brazilian state code (``state``), a local date that is not ``YYYY-MM-DD`` or ``MM-DD``
    (``municipal_holidays[i].date``), an optional day the package does not know (``optional_days[i]``).
    """
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"unknown time zone {timezone!r}", key="timezone") from exc
    if state not in holidays.country_holidays("BR").subdivisions:
        raise ConfigError(f"{state!r} is not a Brazilian state code", key="state")
    local: list[tuple[int | None, int, int, str]] = []
    for key, items in (("municipal_holidays", municipal), ("agreement_holidays", agreement)):
        for i, item in enumerate(items):
            year, month, day = _parse_local(item, f"{key}[{i}].date")
            local.append((year, month, day, item.name))
    chosen_optional = _checked_optional(optional_days)
    days: dict[dt.date, str] = dict(
        holidays.country_holidays("BR", subdiv=state, language="pt_BR", years=years))
    if chosen_optional:
        wanted = frozenset(chosen_optional)
        optional = holidays.country_holidays("BR", subdiv=state, language="pt_BR", years=years,
                                             categories=("optional",))
        for day, name in optional.items():
            picked = [n for n in name.split("; ") if n in wanted]
            if picked:
                days.setdefault(day, "; ".join(picked))
    for year in years:
        for y, month, day, name in local:
            if y is None or y == year:
                try:
                    days.setdefault(dt.date(year, month, day), name)
                except ValueError:  # 02-29 in a year that has none
                    continue
    return HolidayCalendar(zone, days, years)


def _checked_optional(optional_days: Iterable[str]) -> list[str]:
    """The optional days asked for, each one the ``holidays`` package knows (else ``ConfigError``
    naming ``optional_days[i]`` and the known ones)."""
    chosen = list(optional_days)
    known = _optional_names()
    for i, name in enumerate(chosen):
        if name not in known:
            raise ConfigError(f"{name!r} is not an optional day (one of: {', '.join(sorted(known))})",
                              key=f"optional_days[{i}]")
    return chosen


def calendar_from_config(port: PortConfig, default_timezone: str = "America/Sao_Paulo",
                         *, years: range = PAYABLE_YEARS) -> HolidayCalendar:
    """``holiday_calendar`` of a port configuration (its time zone, or ``default_timezone``)."""
    return holiday_calendar(port.state, port.timezone or default_timezone,
                            municipal=port.municipal_holidays, agreement=port.agreement_holidays,
                            optional_days=port.optional_days, years=years)
