"""The crew hours book: normal hours, overtime and transgressions of a ship's crew (rules K1-K5,
seed 004: Decreto-Lei of 29 June 1939 on the 8-hour day of crews of Brazilian merchant ships).

Pure core: no clock, no files, no database. Input is a list of ``WorkPeriod`` (one crew member's
period of effective work), the ship's time zone (civil days are counted there) and the local dates
of the report. Output is a ``HoursBook``: one ``OvertimeEntry`` per crew member and civil day with
work, one ``WeekEntry`` per crew member and ISO week, and the ``Transgression`` list.

Inside, times are integers: instants in epoch seconds UTC (``*_s`` fields), durations in seconds,
civil days as indexes into one table of the zone's local midnights built once per book (a civil
day runs from its local 00:00 to the next, in UTC; at a midnight repeated by a DST change the
first 00:00 starts the day). The records are named tuples; their ``datetime``/``timedelta``
properties (``start``, ``worked``, ``amount``...) are for callers, not for the hot path.

Readings (see docs/inspection.md):

- K1: back-to-back periods of one person (end == next start) form one *spell*. A spell shorter than
  1 hour is counted as 1 hour from its start (art. 1 §3: intermittent service is never demanded for
  less than an hour), but never past the start of that person's next period; it is also entered in
  the transgressions book (``K1_SHORT_PERIOD``).
- K3/K4: the overtime of a civil day is the counted work past the 8th hour, in time order. It is
  booked in whole hours, a fraction counting as a whole hour (art. 3 sole paragraph), per crew
  member and civil day. Port-traffic overtime is the part of that overtime lying in periods marked
  ``port_traffic``; its weekly cap (30 h, art. 2 §2) is checked on the exact time served, per ISO
  week (Monday 00:00 to Sunday 24:00, ship's time zone): 30 h 00 min complies, 30 h 01 min does not.
- K2: back-to-back watch rows form one watch. A watch longer than 4 h, or a gap shorter than 4 h
  between the end of one watch and the start of the next, is a transgression (exactly 4 h complies).
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import math
from collections.abc import Iterable, Sequence
from zoneinfo import ZoneInfo

from central.inspection.hours_book import HoursBook, OvertimeEntry, Transgression, WeekEntry
from central.inspection.work_periods import (
    _EPOCH,
    _SECOND,
    Kind,
    WorkPeriod,
    _by_crew_start_end,
    _check_sorted,
    _crew_id,
    check_year,
    _end_s,
    _start_s,
)
from portgate.errors import BadInput
from portgate.gctune import paused

HOUR = dt.timedelta(hours=1)
NORMAL_DAY = 8 * HOUR  # K1, art. 1
MIN_INTERMITTENT = HOUR  # K1, art. 1 §3
MAX_WATCH = 4 * HOUR  # K2, art. 1 §4
MIN_WATCH_INTERVAL = 4 * HOUR  # K2, art. 1 §4
PORT_TRAFFIC_WEEK_CAP = 30 * HOUR  # K3, art. 2 §2
_HOUR_S = 3600  # the same limits in seconds, for the integer hot path
_NORMAL_S = 8 * _HOUR_S
_MAX_WATCH_S = _MIN_INTERVAL_S = 4 * _HOUR_S
_CAP_S = 30 * _HOUR_S

_T0 = dt.time(0)


class _Days:
    """The civil days of ``zone`` covering epoch seconds ``first_s``..``last_s`` (one spare day
    each side): ``mids[i]`` is the UTC start (local 00:00) of day ``i``, ``dates[i]`` its date and
    ``weeks[i]`` its (ISO year, ISO week). ``index(t)`` is the day holding instant ``t``."""

    __slots__ = ("mids", "dates", "weeks")

    def __init__(self, zone: ZoneInfo, first_s: int, last_s: int) -> None:
        first = (_EPOCH + dt.timedelta(seconds=first_s)).astimezone(zone).toordinal() - 1
        last = (_EPOCH + dt.timedelta(seconds=last_s)).astimezone(zone).toordinal() + 2
        self.dates = [dt.date.fromordinal(o) for o in range(first, last + 1)]
        self.mids = [(dt.datetime.combine(d, _T0, zone) - _EPOCH) // _SECOND for d in self.dates]
        self.weeks = [d.isocalendar()[:2] for d in self.dates]

    def index(self, t: int) -> int:
        return bisect.bisect_right(self.mids, t) - 1



def whole_hours(span: dt.timedelta) -> int:
    """Overtime booked in whole hours: a fraction of an hour counts as a whole hour (K4, art. 3
    sole paragraph): 1 min -> 1, 2 h -> 2, 2 h 01 min -> 3, 0 -> 0."""
    return math.ceil(span / HOUR)


def _fmt(seconds: int) -> str:
    minutes = seconds // 60
    return f"{minutes // 60}h{minutes % 60:02d}"


def _wheres(periods: Iterable[WorkPeriod]) -> str:
    return ", ".join(p.where for p in periods if p.where)


def _spells(items: Sequence[WorkPeriod]) -> list[list[WorkPeriod]]:
    """Group a person's sorted periods into runs of back-to-back periods (end == next start)."""
    spells: list[list[WorkPeriod]] = []
    end = None
    for p in items:
        if p.start_s == end:
            spells[-1].append(p)
        else:
            spells.append([p])
        end = p.end_s
    return spells


def _counted(
    items: Sequence[WorkPeriod],
) -> tuple[list[tuple[int, int, WorkPeriod]], list[Sequence[WorkPeriod]]]:
    """Counted intervals ``(start_s, end_s, period)`` of one person's sorted periods, in time
    order (K1): a spell (back-to-back periods) shorter than 1 h is extended to 1 h from its
    start, but not past the person's next period. Returns the pieces and the short spells."""
    pieces = []
    short = []
    append = pieces.append
    first = 0  # index of the current spell's first period
    last_k = len(items) - 1
    for k, p in enumerate(items):
        end = p.end_s
        if k < last_k:
            next_start = items[k + 1].start_s
            if next_start == end:  # the spell goes on
                append((p.start_s, end, p))
                continue
        else:
            next_start = None
        spell_start = items[first].start_s
        if end - spell_start < _HOUR_S:
            short.append(items[first:k + 1])
            end = spell_start + _HOUR_S
            if next_start is not None and next_start < end:
                end = next_start
        append((p.start_s, end, p))
        first = k + 1
    return pieces, short


def _days_of(pieces, days: _Days) -> list[tuple[int, int, int, str]]:
    """The person's civil days with work, in order: ``(day index, worked_s, port-traffic
    overtime_s, compensation)``; pieces are cut at local midnight (K1 art. 1 §2) and the overtime
    is the work past the 8th hour of the day, in time order (K3)."""
    mids = days.mids
    out = []
    day = -1
    nxt = mids[0]  # start of the day after ``day``
    elapsed = port = 0
    comp = ""
    for s, e, period in pieces:
        while s < e:
            if s >= nxt:
                if day >= 0:
                    out.append((day, elapsed, port, comp))
                day = bisect.bisect_right(mids, s) - 1
                nxt = mids[day + 1]
                elapsed = port = 0
                comp = ""
            cut = e if e < nxt else nxt
            length = cut - s
            past = elapsed + length - _NORMAL_S
            if past > 0:
                c = period.compensation
                c = "pending" if c is None else c._value_  # (not .value: a Python property)
                comp = c if not comp or comp == c else "mixed"
                if period.port_traffic:
                    port += length if length < past else past
            elapsed += length
            s = cut
    if day >= 0:
        out.append((day, elapsed, port, comp))
    return out


def _watch_transgressions(items: Sequence[WorkPeriod], days: _Days) -> list[Transgression]:
    out = []
    watches = _spells([p for p in items if p.kind is Kind.WATCH])
    prev = None
    for watch in watches:
        first, last = watch[0], watch[-1]
        length = last.end_s - first.start_s
        day = days.dates[days.index(first.start_s)]
        if length > _MAX_WATCH_S:
            out.append(
                Transgression(
                    first.crew_id,
                    first.name,
                    day,
                    "K2_WATCH_LENGTH",
                    "DL 1939 art. 1 §4",
                    first.start_s,
                    last.end_s,
                    length,
                    f"quarto de {_fmt(length)} excede o máximo de 4h00",
                    f"watch of {_fmt(length)} exceeds the 4h00 maximum",
                    _wheres(watch),
                )
            )
        if prev is not None:
            gap = first.start_s - prev.end_s
            if gap < _MIN_INTERVAL_S:
                out.append(
                    Transgression(
                        first.crew_id,
                        first.name,
                        day,
                        "K2_WATCH_INTERVAL",
                        "DL 1939 art. 1 §4",
                        prev.end_s,
                        first.start_s,
                        gap,
                        f"intervalo de {_fmt(gap)} entre quartos é menor que 4h00",
                        f"interval of {_fmt(gap)} between watches is shorter than 4h00",
                        ", ".join(x for x in (prev.where, _wheres(watch)) if x),
                    )
                )
        prev = last
    return out


_NO_START = float("inf")  # sorts a weekly total after the day's periods


def _trans_key(t: Transgression):
    return (t.date, t.crew_id, _NO_START if t.start_s is None else t.start_s)


def _short_transgressions(crew_id: str, name: str, short: Sequence[Sequence[WorkPeriod]],
                          days: _Days) -> list[Transgression]:
    """The K1_SHORT_PERIOD entries of one person's spells shorter than 1 h (``_counted``), each
    booked on the civil day it starts (DL 1939 art. 1 §3)."""
    trans: list[Transgression] = []
    dates = days.dates
    for spell in short:
        length = spell[-1].end_s - spell[0].start_s
        trans.append(
            Transgression(
                crew_id,
                name,
                dates[days.index(spell[0].start_s)],
                "K1_SHORT_PERIOD",
                "DL 1939 art. 1 §3",
                spell[0].start_s,
                spell[-1].end_s,
                length,
                f"período intermitente de {_fmt(length)} (menor que 1h00), computado como 1h00",
                f"intermittent period of {_fmt(length)} (under 1h00), counted as 1h00",
                _wheres(spell),
            )
        )
    return trans


def _cap_transgression(crew_id: str, name: str, year: int, week: int, monday: dt.date,
                       port_week: int) -> Transgression:
    """The K3_PORT_TRAFFIC_CAP entry of a week past the 30 h cap (DL 1939 art. 2 §2), booked on
    its Sunday; ``port_week``: the week's port-traffic overtime in seconds."""
    return Transgression(
        crew_id,
        name,
        monday + dt.timedelta(days=6),
        "K3_PORT_TRAFFIC_CAP",
        "DL 1939 art. 2 §2",
        None,
        None,
        port_week,
        f"{_fmt(port_week)} de horas extraordinárias para tráfego no porto "
        f"na semana {year}-W{week:02d}, acima do limite de 30h00",
        f"{_fmt(port_week)} of port-traffic overtime in week "
        f"{year}-W{week:02d}, above the 30h00 cap",
    )


def _book_days(crew_id: str, name: str, role: str, person_days: list[tuple[int, int, int, str]],
               days: _Days, report: tuple[int, int], date_from: dt.date, date_to: dt.date,
               ) -> tuple[list[OvertimeEntry], list[WeekEntry], list[Transgression]]:
    """One person's overtime book lines (the civil days of the report, ``report``: their first and
    last day index), ISO weeks touching the report and weekly cap transgressions, from
    ``_days_of``: K3/K4 (the overtime past the 8th hour, booked in whole hours) and the 30 h
    port-traffic cap."""
    entries: list[OvertimeEntry] = []
    weeks: list[WeekEntry] = []
    weekly: list[Transgression] = []
    dates, week_of = days.dates, days.weeks
    lo, hi = report
    week_key = None
    port_week = hours_week = 0
    for n, (i, worked, port, comp) in enumerate(person_days):
        if worked > _NORMAL_S:
            over = worked - _NORMAL_S
            hours = -(-over // _HOUR_S)
            normal = _NORMAL_S
        else:
            over = hours = 0
            normal = worked
        if lo <= i <= hi:
            entries.append(
                OvertimeEntry(
                    crew_id, name, role, dates[i], worked, normal, over, hours, port, comp)
            )
        port_week += port
        hours_week += hours
        week_key = week_of[i]
        if n + 1 < len(person_days) and week_of[person_days[n + 1][0]] == week_key:
            continue
        year, week = week_key
        monday = dt.date.fromisocalendar(year, week, 1)
        if monday <= date_to and monday + dt.timedelta(days=6) >= date_from:
            over_cap = port_week > _CAP_S
            weeks.append(
                WeekEntry(crew_id, name, year, week, monday, port_week, hours_week, over_cap)
            )
            if over_cap:
                weekly.append(_cap_transgression(crew_id, name, year, week, monday, port_week))
        port_week = hours_week = 0
    return entries, weeks, weekly


@paused()
def compute_book(
    periods: Iterable[WorkPeriod],
    *,
    ship: str,
    date_from: dt.date,
    date_to: dt.date,
    tz: str | ZoneInfo,
) -> HoursBook:
    """Compute the overtime book and the transgressions book of ``ship`` (K1-K5, DL 1939 art. 1-4).

    ``periods``: every known period (all ships; other ships' rows are ignored after the overlap
    check). ``date_from``/``date_to``: civil days of the report, inclusive, in ``tz`` (the ship's
    time zone, e.g. ``America/Sao_Paulo``). Days outside the range are still used to judge the ISO
    weeks and watch intervals that touch it. Raises ``BadInput`` if periods of one person overlap,
    if the ship has none, if ``date_to`` is before ``date_from`` or either is past 1900-2199.
    """
    zone = ZoneInfo(tz) if isinstance(tz, str) else tz
    if date_to < date_from:
        raise BadInput(f"--to {date_to} is before --from {date_from}")
    check_year(date_from, "--from"), check_year(date_to, "--to")
    periods = sorted(periods, key=_by_crew_start_end)
    _check_sorted(periods, zone)
    mine = [p for p in periods if p.ship == ship]
    if not mine:
        raise BadInput(f"no work periods for ship {ship!r}")
    days = _Days(zone, min(map(_start_s, mine)), max(map(_end_s, mine)))
    dates = days.dates

    entries: list[OvertimeEntry] = []
    weeks: list[WeekEntry] = []
    trans: list[Transgression] = []
    weekly: list[Transgression] = []  # already limited to the weeks touching the range
    first = dates[0].toordinal()
    lo, hi = date_from.toordinal() - first, date_to.toordinal() - first  # day indexes
    for crew_id, group in itertools.groupby(mine, _crew_id):  # sorted by crew_id
        items = list(group)
        person = items[0]
        name, role = person.name, person.role
        pieces, short = _counted(items)
        trans += _short_transgressions(crew_id, name, short, days)
        trans.extend(_watch_transgressions(items, days))
        person_entries, person_weeks, person_weekly = _book_days(
            crew_id, name, role, _days_of(pieces, days), days, (lo, hi), date_from, date_to)
        entries += person_entries
        weeks += person_weeks
        weekly += person_weekly
    trans = [t for t in trans if date_from <= t.date <= date_to] + weekly
    trans.sort(key=_trans_key)
    return HoursBook(ship, date_from, date_to, str(zone.key), entries, weeks, trans)
