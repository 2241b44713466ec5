"""The records of the crew hours book (``central.inspection.crew_hours``): the overtime book's
lines, the weekly port-traffic totals, the transgressions book's entries (K5, DL 1939 art. 4) and
the book that holds them. Durations in seconds, instants in epoch seconds UTC; properties give
them as timedeltas and aware UTC datetimes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import NamedTuple

from central.inspection.work_periods import _EPOCH

class Transgression(NamedTuple):
    """One entry of the transgressions book (K5, art. 4). ``rule`` is the rule code; ``start_s``
    and ``end_s`` the period concerned in epoch seconds UTC (None for a weekly total),
    ``amount_s`` the length, gap or weekly total found in seconds; ``start``, ``end`` and
    ``amount`` give them as aware UTC datetimes and a timedelta."""

    crew_id: str
    name: str
    date: dt.date  # civil day (ship's time zone) the transgression is booked on
    rule: str  # K1_SHORT_PERIOD | K2_WATCH_LENGTH | K2_WATCH_INTERVAL | K3_PORT_TRAFFIC_CAP
    article: str
    start_s: int | None
    end_s: int | None
    amount_s: int
    detail_pt: str
    detail_en: str
    where: str = ""  # source rows

    @property
    def start(self) -> dt.datetime | None:
        return None if self.start_s is None else _EPOCH + dt.timedelta(seconds=self.start_s)

    @property
    def end(self) -> dt.datetime | None:
        return None if self.end_s is None else _EPOCH + dt.timedelta(seconds=self.end_s)

    @property
    def amount(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.amount_s)


class OvertimeEntry(NamedTuple):
    """One line of the overtime book (K5, art. 4): a crew member's civil day with work. Durations
    in seconds (``*_s``); ``worked``, ``normal``, ``overtime`` and ``port_traffic_overtime`` give
    them as timedeltas."""

    crew_id: str
    name: str
    role: str
    date: dt.date
    worked_s: int  # counted effective work (K1 minimum applied)
    normal_s: int  # at most 8 h (K1)
    overtime_s: int  # exact overtime (K3)
    overtime_hours: int  # booked whole hours, a fraction counting as a whole hour (K4)
    port_traffic_overtime_s: int  # exact, the part in port-traffic periods (K3)
    compensation: str  # rest | pay | pending | mixed (K4, art. 3); "" without overtime

    @property
    def worked(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.worked_s)

    @property
    def normal(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.normal_s)

    @property
    def overtime(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.overtime_s)

    @property
    def port_traffic_overtime(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.port_traffic_overtime_s)


class WeekEntry(NamedTuple):
    """A crew member's port-traffic overtime in one ISO week vs the 30 h cap (K3, art. 2 §2);
    ``port_traffic_overtime_s`` in seconds (``port_traffic_overtime`` as a timedelta)."""

    crew_id: str
    name: str
    iso_year: int
    iso_week: int
    first_day: dt.date  # Monday
    port_traffic_overtime_s: int
    overtime_hours: int  # whole hours booked in the week (sum of K4 daily figures)
    exceeds_cap: bool

    @property
    def port_traffic_overtime(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.port_traffic_overtime_s)


@dataclasses.dataclass(frozen=True, slots=True)
class HoursBook:
    ship: str
    date_from: dt.date
    date_to: dt.date
    tz: str
    overtime: list[OvertimeEntry]
    weeks: list[WeekEntry]
    transgressions: list[Transgression]
