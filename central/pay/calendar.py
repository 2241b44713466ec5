"""The port's holiday calendar as data, and the port configuration's types (RULES.md, definition of
Holiday; P4/P5). Pure: no clock, no files, no holiday package; ``central.pay.loading`` builds the
calendar (``holiday_calendar``, ``calendar_from_config``) and reads ``PortConfig`` from its TOML.

``HolidayCalendar(zone, days, years)``: the port's time zone, every holiday of the years it covers
(local date -> pt-BR name) and those years; ``name_of(date)`` is the holiday's name or ``None``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from types import MappingProxyType
from zoneinfo import ZoneInfo

import msgspec

from portgate.errors import ConfigError


class LocalHoliday(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A municipal or agreement date: ``date`` is ``YYYY-MM-DD`` (that day only) or ``MM-DD``
    (every year)."""

    date: str
    name: str


class Employer(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``[employer]``: the paying entity printed at the top of every payslip (the OGMO or the
    operator): its name, CNPJ (checked by its check digits when the file is read) and address."""

    name: str
    cnpj: str
    address: str = ""


class PortConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The port's configuration as far as pay is concerned."""

    port_id: str
    state: str  # Brazilian state code of the port (ISO 3166-2 subdivision), e.g. "SP"
    rulebook: str  # path of the pay rulebook TOML, relative to this file's folder if not absolute
    timezone: str | None = None  # default: the rulebook's timezone
    municipal_holidays: list[LocalHoliday] = []
    agreement_holidays: list[LocalHoliday] = []
    optional_days: list[str] = []  # e.g. ["Carnaval", "Corpus Christi"]
    employer: Employer | None = None  # the payslips' header; none: the slips print no paying entity


class HolidayCalendar:
    """Holidays of one port: ``zone`` (the port's time zone), ``days`` (local date -> name) for
    every year in ``years``. Build it with ``central.pay.loading.holiday_calendar``."""

    __slots__ = ("zone", "timezone", "days", "years")

    def __init__(self, zone: ZoneInfo, days: Mapping[dt.date, str], years: range) -> None:
        self.zone = zone
        self.timezone = zone.key
        self.days = MappingProxyType(dict(days))
        self.years = years

    def name_of(self, day: dt.date) -> str | None:
        """The holiday's name on local date ``day``, or ``None`` if it is not a holiday. Raises
        ``ConfigError`` for a year the calendar does not cover (it cannot tell)."""
        if day.year not in self.years:
            raise ConfigError(f"the holiday calendar covers {self.years.start}..{self.years.stop - 1}, "
                              f"not {day.isoformat()}", key="years")
        return self.days.get(day)

    def is_holiday(self, day: dt.date) -> bool:
        return self.name_of(day) is not None
