"""The crew hours book: normal hours, overtime and transgressions of a ship's crew (rules K1-K5,
seed 004: Decreto-Lei of 29 June 1939 on the 8-hour day of crews of Brazilian merchant ships).

Pure core: no clock, no files, no database. Input is a list of ``WorkPeriod`` (one crew member's
period of effective work, aware UTC), the ship's time zone (civil days are counted there) and the
local dates of the report. Output is a ``HoursBook``: one ``OvertimeEntry`` per crew member and
civil day with work, one ``WeekEntry`` per crew member and ISO week, and the ``Transgression`` list.

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

import dataclasses
import datetime as dt
import enum
import math
import operator
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from zoneinfo import ZoneInfo

from portgate.errors import BadInput
from portgate.records import parse_aware

HOUR = dt.timedelta(hours=1)
NORMAL_DAY = 8 * HOUR  # K1, art. 1
MIN_INTERMITTENT = HOUR  # K1, art. 1 §3
MAX_WATCH = 4 * HOUR  # K2, art. 1 §4
MIN_WATCH_INTERVAL = 4 * HOUR  # K2, art. 1 §4
PORT_TRAFFIC_WEEK_CAP = 30 * HOUR  # K3, art. 2 §2

PERIOD_COLUMNS = (
    "ship",
    "crew_id",
    "name",
    "role",
    "start",
    "end",
    "kind",
    "watch_type",
    "port_traffic",
    "compensation",
)
REQUIRED_COLUMNS = ("ship", "crew_id", "start", "end", "kind")


class Kind(enum.StrEnum):
    WORK = "work"
    WATCH = "watch"  # serviço de quarto


class WatchType(enum.StrEnum):
    ENGINE = "engine"  # máquinas
    BRIDGE = "bridge"  # passadiço
    VIGILANCE = "vigilance"  # vigilância
    OTHER = "other"  # others named unhealthy by a physician


class Compensation(enum.StrEnum):
    REST = "rest"  # descanso em período equivalente
    PAY = "pay"  # pagamento de um salário correspondente


_TRUE = {"true", "1", "yes", "sim", "y", "s"}
_FALSE = {"false", "0", "no", "nao", "não", "n", ""}
_BOOLS = _TRUE | _FALSE


_CHOSEN: dict[tuple, object] = {}  # (enum, cell text, optional) -> member: a file repeats a few cells


def _choice(cls: type[enum.StrEnum], value: str | None, field: str, *, optional: bool):
    key = (cls, value, optional)
    try:
        return _CHOSEN[key]
    except KeyError:
        pass
    found = _choose(cls, value, field, optional=optional)
    if len(_CHOSEN) < 4096:
        _CHOSEN[key] = found
    return found


def _choose(cls: type[enum.StrEnum], value: str | None, field: str, *, optional: bool):
    text = (value or "").strip().lower()
    if not text and optional:
        return None
    try:
        return cls._value2member_map_[text]
    except KeyError as exc:
        allowed = "|".join(m.value for m in cls) + ("|''" if optional else "")
        raise BadInput(f"{field} {value!r} is not one of {allowed}") from exc


@dataclasses.dataclass(frozen=True, slots=True)
class WorkPeriod:
    """One period of effective work of one crew member (art. 1 §1), ``start``/``end`` aware UTC.

    ``where`` names the source row (``periods.csv:7``) for error messages and the books.
    """

    ship: str
    crew_id: str
    name: str
    role: str
    start: dt.datetime
    end: dt.datetime
    kind: Kind
    watch_type: WatchType | None = None
    port_traffic: bool = False
    compensation: Compensation | None = None
    where: str = ""

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise BadInput("start and end must carry a UTC offset")
        if self.end <= self.start:
            raise BadInput(
                f"end {self.end.isoformat()} is not after start {self.start.isoformat()}"
            )
        if self.kind is Kind.WATCH and self.watch_type is None:
            raise BadInput(
                "watch_type is required when kind is watch (engine|bridge|vigilance|other)"
            )
        if self.kind is Kind.WORK and self.watch_type is not None:
            raise BadInput("watch_type must be empty when kind is work")

    @property
    def length(self) -> dt.timedelta:
        return self.end - self.start

    @classmethod
    def from_row(cls, row: Mapping[str, str], where: str = "") -> WorkPeriod:
        """Build from a periods.csv row (columns ``PERIOD_COLUMNS``). Raises ``BadInput``."""
        get = row.get
        raw_flag = get("port_traffic")
        flag = (raw_flag or "").strip().lower()
        if flag not in _BOOLS:
            raise BadInput(f"port_traffic {raw_flag!r} is not true|false")
        ship = (get("ship") or "").strip()
        if not ship:
            raise BadInput("ship is required")
        crew_id = (get("crew_id") or "").strip()
        if not crew_id:
            raise BadInput("crew_id is required")
        return cls(
            ship=ship,
            crew_id=crew_id,
            name=(get("name") or "").strip(),
            role=(get("role") or "").strip(),
            start=parse_aware(get("start"), "start"),
            end=parse_aware(get("end"), "end"),
            kind=_choice(Kind, get("kind"), "kind", optional=False),
            watch_type=_choice(WatchType, get("watch_type"), "watch_type", optional=True),
            port_traffic=flag in _TRUE,
            compensation=_choice(Compensation, get("compensation"), "compensation", optional=True),
            where=where,
        )


_by_start_end = operator.attrgetter("start", "end")
_by_crew_start = operator.attrgetter("crew_id", "start")


def check_overlaps(periods: Iterable[WorkPeriod]) -> None:
    """Raise one ``BadInput`` naming every pair of overlapping periods of the same crew member.

    Touching periods (one ends when the next starts) do not overlap. A person cannot be in two
    places at once, so an overlap means the schedule is wrong: fix the file, nothing is computed.
    """
    by_person: dict[str, list[WorkPeriod]] = defaultdict(list)
    for p in periods:
        by_person[p.crew_id].append(p)
    errors = []
    for crew_id, items in sorted(by_person.items()):
        items.sort(key=_by_start_end)
        latest = items[0]
        for p in items[1:]:
            if p.start < latest.end:
                errors.append(
                    f"{p.where or '?'}: period of crew_id {crew_id} {p.start.isoformat()}.."
                    f"{p.end.isoformat()} overlaps {latest.where or '?'}"
                )
            if p.end > latest.end:
                latest = p
    if errors:
        raise BadInput("overlapping work periods:\n" + "\n".join(errors))


@dataclasses.dataclass(frozen=True, slots=True)
class Transgression:
    """One entry of the transgressions book (K5, art. 4). ``rule`` is the rule code."""

    crew_id: str
    name: str
    date: dt.date  # civil day (ship's time zone) the transgression is booked on
    rule: str  # K1_SHORT_PERIOD | K2_WATCH_LENGTH | K2_WATCH_INTERVAL | K3_PORT_TRAFFIC_CAP
    article: str
    start: dt.datetime | None  # aware UTC, the period concerned (None for a weekly total)
    end: dt.datetime | None
    amount: dt.timedelta  # the length, gap or weekly total found
    detail_pt: str
    detail_en: str
    where: str = ""  # source rows


@dataclasses.dataclass(frozen=True, slots=True)
class OvertimeEntry:
    """One line of the overtime book (K5, art. 4): a crew member's civil day with work."""

    crew_id: str
    name: str
    role: str
    date: dt.date
    worked: dt.timedelta  # counted effective work (K1 minimum applied)
    normal: dt.timedelta  # at most 8 h (K1)
    overtime: dt.timedelta  # exact overtime (K3)
    overtime_hours: int  # booked whole hours, a fraction counting as a whole hour (K4)
    port_traffic_overtime: dt.timedelta  # exact, the part in port-traffic periods (K3)
    compensation: str  # rest | pay | pending | mixed (K4, art. 3)


@dataclasses.dataclass(frozen=True, slots=True)
class WeekEntry:
    """A crew member's port-traffic overtime in one ISO week vs the 30 h cap (K3, art. 2 §2)."""

    crew_id: str
    name: str
    iso_year: int
    iso_week: int
    first_day: dt.date  # Monday
    port_traffic_overtime: dt.timedelta
    overtime_hours: int  # whole hours booked in the week (sum of K4 daily figures)
    exceeds_cap: bool


@dataclasses.dataclass(frozen=True, slots=True)
class HoursBook:
    ship: str
    date_from: dt.date
    date_to: dt.date
    tz: str
    overtime: list[OvertimeEntry]
    weeks: list[WeekEntry]
    transgressions: list[Transgression]


# A counted interval of one person: (start, end, period), aware UTC; plain tuples (tens of
# thousands per book, built and cut at midnight on the hot path).
_Piece = tuple[dt.datetime, dt.datetime, WorkPeriod]
_by_start = operator.itemgetter(0)


def _spells(items: Sequence[WorkPeriod], kinds: set[Kind]) -> list[list[WorkPeriod]]:
    """Group a person's sorted periods of the given kinds into runs of back-to-back periods."""
    spells: list[list[WorkPeriod]] = []
    for p in items:
        if p.kind not in kinds:
            continue
        if spells and spells[-1][-1].end == p.start:
            spells[-1].append(p)
        else:
            spells.append([p])
    return spells


def _counted(items: Sequence[WorkPeriod]) -> tuple[list[_Piece], list[list[WorkPeriod]]]:
    """Counted intervals of one person (K1): a spell shorter than 1 h is extended to 1 h from its
    start, but not past the person's next period. Returns the pieces and the short spells."""
    pieces: list[_Piece] = []
    short: list[list[WorkPeriod]] = []
    spells = _spells(items, {Kind.WORK, Kind.WATCH})
    for i, spell in enumerate(spells):
        for p in spell[:-1]:
            pieces.append((p.start, p.end, p))
        last = spell[-1]
        end = last.end
        if end - spell[0].start < MIN_INTERMITTENT:
            short.append(spell)
            end = spell[0].start + MIN_INTERMITTENT
            if i + 1 < len(spells):
                end = min(end, spells[i + 1][0].start)
        pieces.append((last.start, end, last))
    return pieces, short


def _split_days(pieces: Iterable[_Piece], zone: ZoneInfo) -> dict[dt.date, list[_Piece]]:
    """Cut pieces at local midnight (civil day 00:00-24:00 in the ship's zone, K1 art. 1 §2)."""
    days: dict[dt.date, list[_Piece]] = defaultdict(list)
    midnights: dict[dt.date, dt.datetime] = {}  # local day -> its end (next local midnight), UTC
    for start, end, period in pieces:
        while start < end:
            local_day = start.astimezone(zone).date()
            midnight = midnights.get(local_day)
            if midnight is None:
                midnight = midnights[local_day] = dt.datetime.combine(
                    local_day + dt.timedelta(days=1), dt.time(0), zone).astimezone(dt.UTC)
            cut = end if end < midnight else midnight
            days[local_day].append((start, cut, period))
            start = cut
    return days


_ZERO = dt.timedelta()


def whole_hours(span: dt.timedelta) -> int:
    """Overtime booked in whole hours: a fraction of an hour counts as a whole hour (K4, art. 3
    sole paragraph): 1 min -> 1, 2 h -> 2, 2 h 01 min -> 3, 0 -> 0."""
    return math.ceil(span / HOUR)


def _fmt(span: dt.timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes // 60}h{minutes % 60:02d}"


def _day_entry(person: WorkPeriod, day: dt.date, pieces: list[_Piece]) -> OvertimeEntry:
    pieces.sort(key=_by_start)
    zero = _ZERO
    elapsed = zero
    port = zero
    comps: set[str] = set()
    for start, end, period in pieces:  # the overtime is the work past the 8th hour, in time order (K3)
        length = end - start
        past = elapsed + length - NORMAL_DAY
        if past > zero:
            over = length if length < past else past
            comps.add(period.compensation.value if period.compensation else "pending")
            if period.port_traffic:
                port += over
        elapsed += length
    worked = elapsed
    overtime = max(dt.timedelta(), worked - NORMAL_DAY)
    comp = "" if not comps else comps.pop() if len(comps) == 1 else "mixed"
    return OvertimeEntry(
        crew_id=person.crew_id,
        name=person.name,
        role=person.role,
        date=day,
        worked=worked,
        normal=min(worked, NORMAL_DAY),
        overtime=overtime,
        overtime_hours=whole_hours(overtime),
        port_traffic_overtime=port,
        compensation=comp,
    )


def _watch_transgressions(items: Sequence[WorkPeriod], zone: ZoneInfo) -> list[Transgression]:
    out = []
    watches = _spells(items, {Kind.WATCH})
    for i, watch in enumerate(watches):
        first, last = watch[0], watch[-1]
        length = last.end - first.start
        day = first.start.astimezone(zone).date()
        if length > MAX_WATCH:
            where = ", ".join(p.where for p in watch if p.where)
            out.append(
                Transgression(
                    first.crew_id,
                    first.name,
                    day,
                    "K2_WATCH_LENGTH",
                    "DL 1939 art. 1 §4",
                    first.start,
                    last.end,
                    length,
                    f"quarto de {_fmt(length)} excede o máximo de 4h00",
                    f"watch of {_fmt(length)} exceeds the 4h00 maximum",
                    where,
                )
            )
        if i > 0:
            prev = watches[i - 1][-1]
            gap = first.start - prev.end
            if gap < MIN_WATCH_INTERVAL:
                where = ", ".join(p.where for p in watch if p.where)
                out.append(
                    Transgression(
                        first.crew_id,
                        first.name,
                        day,
                        "K2_WATCH_INTERVAL",
                        "DL 1939 art. 1 §4",
                        prev.end,
                        first.start,
                        gap,
                        f"intervalo de {_fmt(gap)} entre quartos é menor que 4h00",
                        f"interval of {_fmt(gap)} between watches is shorter than 4h00",
                        ", ".join(x for x in (prev.where, where) if x),
                    )
                )
    return out


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
    if the ship has no periods, or if ``date_to`` is before ``date_from``.
    """
    zone = ZoneInfo(tz) if isinstance(tz, str) else tz
    if date_to < date_from:
        raise BadInput(f"--to {date_to} is before --from {date_from}")
    periods = list(periods)
    check_overlaps(periods)
    mine = sorted((p for p in periods if p.ship == ship), key=_by_crew_start)
    if not mine:
        raise BadInput(f"no work periods for ship {ship!r}")
    people: dict[str, list[WorkPeriod]] = defaultdict(list)
    for p in mine:
        people[p.crew_id].append(p)

    entries: list[OvertimeEntry] = []
    weeks: list[WeekEntry] = []
    trans: list[Transgression] = []
    weekly: list[Transgression] = []  # already limited to the weeks touching the range
    in_range = lambda d: date_from <= d <= date_to  # noqa: E731
    for crew_id, items in sorted(people.items()):
        person = items[0]
        pieces, short = _counted(items)
        for spell in short:
            day = spell[0].start.astimezone(zone).date()
            length = spell[-1].end - spell[0].start
            trans.append(
                Transgression(
                    crew_id,
                    person.name,
                    day,
                    "K1_SHORT_PERIOD",
                    "DL 1939 art. 1 §3",
                    spell[0].start,
                    spell[-1].end,
                    length,
                    f"período intermitente de {_fmt(length)} (menor que 1h00), computado como 1h00",
                    f"intermittent period of {_fmt(length)} (under 1h00), counted as 1h00",
                    ", ".join(p.where for p in spell if p.where),
                )
            )
        trans.extend(_watch_transgressions(items, zone))
        days = {d: _day_entry(person, d, ps) for d, ps in _split_days(pieces, zone).items()}
        entries.extend(days[d] for d in sorted(days) if in_range(d))
        by_week: dict[tuple[int, int], list[OvertimeEntry]] = defaultdict(list)
        for d, e in days.items():
            by_week[d.isocalendar()[:2]].append(e)
        for (year, week), es in sorted(by_week.items()):
            monday = dt.date.fromisocalendar(year, week, 1)
            if not (monday <= date_to and monday + dt.timedelta(days=6) >= date_from):
                continue
            port = sum((e.port_traffic_overtime for e in es), dt.timedelta())
            over_cap = port > PORT_TRAFFIC_WEEK_CAP
            weeks.append(
                WeekEntry(
                    crew_id,
                    person.name,
                    year,
                    week,
                    monday,
                    port,
                    sum(e.overtime_hours for e in es),
                    over_cap,
                )
            )
            if over_cap:
                weekly.append(
                    Transgression(
                        crew_id,
                        person.name,
                        monday + dt.timedelta(days=6),
                        "K3_PORT_TRAFFIC_CAP",
                        "DL 1939 art. 2 §2",
                        None,
                        None,
                        port,
                        f"{_fmt(port)} de horas extraordinárias para tráfego no porto na semana "
                        f"{year}-W{week:02d}, acima do limite de 30h00",
                        f"{_fmt(port)} of port-traffic overtime in week {year}-W{week:02d}, "
                        f"above the 30h00 cap",
                    )
                )
    trans = [t for t in trans if in_range(t.date)] + weekly
    trans.sort(key=lambda t: (t.date, t.crew_id, t.start or dt.datetime.max.replace(tzinfo=dt.UTC)))
    return HoursBook(ship, date_from, date_to, str(zone.key), entries, weeks, trans)
