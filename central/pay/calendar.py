"""The port's holiday calendar and the port configuration that defines it (RULES.md, definition of
Holiday; P4/P5).

A holiday is: a national public holiday of Brazil or a holiday of the port's state (the ``holidays``
package, ``country_holidays("BR", subdiv=STATE, language="pt_BR")``), or a municipal or
collective-agreement date listed in the port configuration (the package has no municipal calendars),
or an optional day (Carnaval, Corpus Christi, ...) only if the configuration lists it by its pt-BR
name as the package spells it.

``PortConfig`` is the TOML of ``config/port.example.toml``; ``HolidayCalendar`` is pure (no clock):
``name_of(date)`` returns the holiday's name or ``None``.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import holidays
import msgspec

from portgate.config import load_toml
from portgate.errors import ConfigError

#: The example port configuration (time zone, holidays, rulebook), the default of the pay commands.
DEFAULT_PORT_CONFIG = Path(__file__).resolve().parents[2] / "config" / "port.example.toml"


class LocalHoliday(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A municipal or agreement date: ``date`` is ``YYYY-MM-DD`` (that day only) or ``MM-DD``
    (every year)."""

    date: str
    name: str


class PortConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The port's configuration as far as pay is concerned."""

    port_id: str
    state: str  # Brazilian state code of the port (ISO 3166-2 subdivision), e.g. "SP"
    rulebook: str  # path of the pay rulebook TOML, relative to this file's folder if not absolute
    timezone: str | None = None  # default: the rulebook's timezone
    municipal_holidays: list[LocalHoliday] = []
    agreement_holidays: list[LocalHoliday] = []
    optional_days: list[str] = []  # e.g. ["Carnaval", "Corpus Christi"]


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


class HolidayCalendar:
    """Holidays of one port. Build with ``HolidayCalendar.from_config`` or directly for tests."""

    def __init__(
        self,
        state: str,
        timezone: str = "America/Sao_Paulo",
        *,
        municipal: list[LocalHoliday] = (),
        agreement: list[LocalHoliday] = (),
        optional_days: list[str] = (),
    ) -> None:
        try:
            self.zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ConfigError(f"unknown time zone {timezone!r}", key="timezone") from exc
        self.timezone = timezone
        if state not in holidays.country_holidays("BR").subdivisions:
            raise ConfigError(f"{state!r} is not a Brazilian state code", key="state")
        self.state = state
        self._local: list[tuple[int | None, int, int, str]] = []
        for key, items in (("municipal_holidays", municipal), ("agreement_holidays", agreement)):
            for i, item in enumerate(items):
                year, month, day = _parse_local(item, f"{key}[{i}].date")
                self._local.append((year, month, day, item.name))
        known = _optional_names()
        for i, name in enumerate(optional_days):
            if name not in known:
                raise ConfigError(
                    f"{name!r} is not an optional day (one of: {', '.join(sorted(known))})",
                    key=f"optional_days[{i}]",
                )
        self.optional_days = frozenset(optional_days)
        self._years: dict[int, dict[dt.date, str]] = {}

    @classmethod
    def from_config(cls, port: PortConfig, default_timezone: str = "America/Sao_Paulo") -> HolidayCalendar:
        return cls(
            port.state,
            port.timezone or default_timezone,
            municipal=port.municipal_holidays,
            agreement=port.agreement_holidays,
            optional_days=port.optional_days,
        )

    def _year(self, year: int) -> dict[dt.date, str]:
        found = self._years.get(year)
        if found is None:
            found = dict(
                holidays.country_holidays("BR", subdiv=self.state, language="pt_BR", years=year)
            )
            if self.optional_days:
                optional = holidays.country_holidays(
                    "BR", subdiv=self.state, language="pt_BR", years=year, categories=("optional",)
                )
                for day, name in optional.items():
                    chosen = [n for n in name.split("; ") if n in self.optional_days]
                    if chosen:
                        found.setdefault(day, "; ".join(chosen))
            for y, month, day, name in self._local:
                if y is None or y == year:
                    found.setdefault(dt.date(year, month, day), name)
            self._years[year] = found
        return found

    def name_of(self, day: dt.date) -> str | None:
        """The holiday's name on local date ``day``, or ``None`` if it is not a holiday."""
        return self._year(day.year).get(day)

    def is_holiday(self, day: dt.date) -> bool:
        return self.name_of(day) is not None


@lru_cache(maxsize=1)
def _optional_names() -> frozenset[str]:
    names: set[str] = set()
    optional = holidays.country_holidays(
        "BR", language="pt_BR", years=range(2020, 2031), categories=("optional",)
    )
    for name in optional.values():
        names.update(name.split("; "))
    return frozenset(names)


def load_port_config(path: str | Path) -> PortConfig:
    """Read the port TOML; resolve ``rulebook`` relative to the file. Raises ``ConfigError``."""
    path = Path(path)
    port = load_toml(path, PortConfig)
    rulebook = Path(port.rulebook)
    if not rulebook.is_absolute():
        candidate = (path.parent / rulebook).resolve()
        rulebook = candidate if candidate.exists() else rulebook.resolve()
    return msgspec.structs.replace(port, rulebook=str(rulebook))
