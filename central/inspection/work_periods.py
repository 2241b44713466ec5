"""The input of the crew hours book (``central.inspection.crew_hours``): one crew member's period
of effective work (``WorkPeriod``, built from a periods.csv row or from values, every cell
checked) and the check that one person's periods do not overlap. Instants are epoch seconds UTC.
"""

from __future__ import annotations

import datetime as dt
import enum
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from portgate.cells import parse_aware
from portgate.errors import BadInput

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_SECOND = dt.timedelta(seconds=1)

# the instants a book handles (docs/inspection.md): years 1900-2199 UTC, and a period at most
# 31 days long; beyond them a row is refused (the calendar's ends and a book's cost stay far away)
FIRST_YEAR, LAST_YEAR = 1900, 2199
_MIN_S = (dt.datetime(FIRST_YEAR, 1, 1, tzinfo=dt.UTC) - _EPOCH) // _SECOND
_END_S = (dt.datetime(LAST_YEAR + 1, 1, 1, tzinfo=dt.UTC) - _EPOCH) // _SECOND
MAX_PERIOD_DAYS = 31
_MAX_LEN_S = MAX_PERIOD_DAYS * 86400

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
_FLAGS = {text: text in _TRUE for text in _BOOLS}


# (kind, watch_type, port_traffic, compensation) cell texts -> their values, once valid together:
# a file repeats a few combinations
_TAILS: dict[tuple, tuple] = {}


def _choose(cls: type[enum.StrEnum], value: str | None, field: str, *, optional: bool):
    text = (value or "").strip().lower()
    if not text and optional:
        return None
    try:
        return cls._value2member_map_[text]
    except KeyError as exc:
        allowed = "|".join(m.value for m in cls) + ("|''" if optional else "")
        raise BadInput(f"{field} {value!r} is not one of {allowed}") from exc


_STAMPS: dict[str, int] = {}  # timestamp text -> epoch seconds: crew members share watch times


def _seconds(value: str | None, field: str) -> int:
    """Epoch seconds (UTC) of an ISO 8601 timestamp with an offset; ``BadInput`` as
    ``parse_aware``, and for a fraction of a second (periods are kept to the second)."""
    found = _STAMPS.get(value)
    if found is not None:
        return found
    stamp = parse_aware(value, field)
    if stamp.microsecond:
        raise BadInput(f"{field} {value!r} has a fraction of a second")
    found = (stamp - _EPOCH) // _SECOND
    if not _MIN_S <= found < _END_S:
        raise BadInput(f"{field} {value!r} is outside the years {FIRST_YEAR}-{LAST_YEAR} (UTC)")
    if len(_STAMPS) >= 65536:
        _STAMPS.clear()
    _STAMPS[value] = found
    return found


def check_year(day: dt.date, what: str) -> None:
    """``BadInput`` unless ``day`` (a book's --from/--to) is in ``FIRST_YEAR``..``LAST_YEAR``."""
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise BadInput(f"{what} is outside the years {FIRST_YEAR}-{LAST_YEAR}")


def _order(start_s: int, end_s: int, start: str, end: str) -> None:
    """``BadInput`` for an end not after its start or a period longer than ``MAX_PERIOD_DAYS``;
    ``start``/``end``: the times as written (with their offset), quoted in the message."""
    if end_s <= start_s:
        raise BadInput(f"end {end!r} is not after start {start!r}")
    if end_s - start_s > _MAX_LEN_S:
        raise BadInput(f"period {start!r}..{end!r} is longer than {MAX_PERIOD_DAYS} days")


class _PeriodFields(NamedTuple):
    ship: str
    crew_id: str
    name: str
    role: str
    start_s: int  # epoch seconds, UTC
    end_s: int
    kind: Kind
    watch_type: WatchType | None
    port_traffic: bool
    compensation: Compensation | None
    where: str


_new = tuple.__new__  # builds a named tuple from checked values without its __new__


class WorkPeriod(_PeriodFields):
    """One period of effective work of one crew member (art. 1 §1): a named tuple whose instants
    are ``start_s``/``end_s``, epoch seconds UTC; ``start``/``end`` give them as aware UTC
    datetimes, ``length`` as a timedelta.

    Built as ``WorkPeriod(ship, crew_id, name, role, start, end, kind, watch_type=None,
    port_traffic=False, compensation=None, where="")`` with ``start``/``end`` aware datetimes
    (whole seconds), or from a periods.csv row (``from_row``, ``from_cells``). ``where`` names the
    source row (``periods.csv:7``) for error messages and the books. Raises ``BadInput`` for a
    naive time, an end not after its start, a time outside the years 1900-2199 UTC, a period
    longer than ``MAX_PERIOD_DAYS``, or a watch_type missing on a watch / set on work.
    """

    __slots__ = ()

    def __new__(
        cls,
        ship: str,
        crew_id: str,
        name: str,
        role: str,
        start: dt.datetime,
        end: dt.datetime,
        kind: Kind,
        watch_type: WatchType | None = None,
        port_traffic: bool = False,
        compensation: Compensation | None = None,
        where: str = "",
    ) -> WorkPeriod:
        if start.tzinfo is None or end.tzinfo is None:
            raise BadInput("start and end must carry a UTC offset")
        if start.microsecond or end.microsecond:
            raise BadInput("start and end are kept to the second (no fraction)")
        start_s, end_s = (start - _EPOCH) // _SECOND, (end - _EPOCH) // _SECOND
        for s_, text in ((start_s, "start"), (end_s, "end")):
            if not _MIN_S <= s_ < _END_S:
                raise BadInput(f"{text} is outside the years {FIRST_YEAR}-{LAST_YEAR} (UTC)")
        _order(start_s, end_s, start.isoformat(), end.isoformat())
        return cls._checked(
            ship, crew_id, name, role, start_s, end_s, kind, watch_type, port_traffic,
            compensation, where)

    @classmethod
    def _checked(cls, ship, crew_id, name, role, start_s, end_s, kind, watch_type, port_traffic,
                 compensation, where) -> WorkPeriod:
        if kind is Kind.WATCH:
            if watch_type is None:
                raise BadInput(
                    "watch_type is required when kind is watch (engine|bridge|vigilance|other)"
                )
        elif watch_type is not None:
            raise BadInput("watch_type must be empty when kind is work")
        return _new(cls, (ship, crew_id, name, role, start_s, end_s, kind, watch_type,
                          port_traffic, compensation, where))

    @property
    def start(self) -> dt.datetime:
        return _EPOCH + dt.timedelta(seconds=self.start_s)

    @property
    def end(self) -> dt.datetime:
        return _EPOCH + dt.timedelta(seconds=self.end_s)

    @property
    def length(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.end_s - self.start_s)

    @classmethod
    def from_row(cls, row: Mapping[str, str | None], where: str = "") -> WorkPeriod:
        """Build from a periods.csv row (columns ``PERIOD_COLUMNS``). Raises ``BadInput``."""
        return cls.from_cells(tuple(map(row.get, PERIOD_COLUMNS)), where)

    @classmethod
    def from_cells(cls, cells: Sequence[str | None], where: str = "") -> WorkPeriod:
        """Build from the cells of a periods.csv row in ``PERIOD_COLUMNS`` order (text, or None
        for an absent cell). Raises ``BadInput`` naming the first bad cell."""
        # once per row of a year's file: the four enum/flag cells are looked up as one key
        # (cached only once valid together), the timestamps by their text
        ship, crew_id, name, role, start, end, kind, watch_type, port_traffic, compensation = cells
        tail = _TAILS.get((kind, watch_type, port_traffic, compensation))
        if tail is None:
            return cls._from_new_cells(cells, where)
        ship = (ship or "").strip()
        if not ship:
            raise BadInput("ship is required")
        crew_id = (crew_id or "").strip()
        if not crew_id:
            raise BadInput("crew_id is required")
        start_s = _STAMPS.get(start)
        if start_s is None:
            start_s = _seconds(start, "start")
        end_s = _STAMPS.get(end)
        if end_s is None:
            end_s = _seconds(end, "end")
        if end_s <= start_s or end_s - start_s > _MAX_LEN_S:
            _order(start_s, end_s, start, end)
        kind_, watch_type_, flag, comp = tail
        return _new(cls, (ship, crew_id, (name or "").strip(), (role or "").strip(), start_s,
                          end_s, kind_, watch_type_, flag, comp, where))

    @classmethod
    def _from_new_cells(cls, cells: Sequence[str | None], where: str) -> WorkPeriod:
        """``from_cells`` for a row whose enum/flag cells are not cached yet: every check in
        the order of the columns, then the combination is cached."""
        ship, crew_id, name, role, start, end, kind, watch_type, port_traffic, compensation = cells
        flag = _FLAGS.get((port_traffic or "").strip().lower())
        if flag is None:
            raise BadInput(f"port_traffic {port_traffic!r} is not true|false")
        ship = (ship or "").strip()
        if not ship:
            raise BadInput("ship is required")
        crew_id = (crew_id or "").strip()
        if not crew_id:
            raise BadInput("crew_id is required")
        start_s, end_s = _seconds(start, "start"), _seconds(end, "end")
        _order(start_s, end_s, start, end)
        period = cls._checked(
            ship,
            crew_id,
            (name or "").strip(),
            (role or "").strip(),
            start_s,
            end_s,
            _choose(Kind, kind, "kind", optional=False),
            _choose(WatchType, watch_type, "watch_type", optional=True),
            flag,
            _choose(Compensation, compensation, "compensation", optional=True),
            where,
        )
        if len(_TAILS) >= 4096:
            _TAILS.clear()
        _TAILS[kind, watch_type, port_traffic, compensation] = period[6:10]
        return period


_by_crew_start_end = operator.itemgetter(1, 4, 5)  # (crew_id, start_s, end_s)
_crew_id, _start_s, _end_s = operator.itemgetter(1), operator.itemgetter(4), operator.itemgetter(5)


def _check_sorted(periods: Sequence[WorkPeriod], zone: dt.tzinfo = dt.UTC) -> None:
    """``check_overlaps`` on periods already sorted by ``_by_crew_start_end``; times are named
    in ``zone`` (the book's --tz), with their offset and the zone's name."""
    errors = []
    crew_id = latest = None
    for p in periods:
        if p.crew_id != crew_id:
            crew_id, latest = p.crew_id, p
            continue
        if p.start_s < latest.end_s:
            errors.append(
                f"{p.where or '?'}: period of crew_id {crew_id} "
                f"{p.start.astimezone(zone).isoformat()!r}..{p.end.astimezone(zone).isoformat()!r}"
                f" ({zone}) overlaps {latest.where or '?'}"
            )
        if p.end_s > latest.end_s:
            latest = p
    if errors:
        raise BadInput("overlapping work periods:\n" + "\n".join(errors))


def check_overlaps(periods: Iterable[WorkPeriod]) -> None:
    """Raise one ``BadInput`` naming every pair of overlapping periods of the same crew member.

    Touching periods (one ends when the next starts) do not overlap. A person cannot be in two
    places at once, so an overlap means the schedule is wrong: fix the file, nothing is computed.
    """
    _check_sorted(sorted(periods, key=_by_crew_start_end))
