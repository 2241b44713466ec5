"""The office's CSV files for production pay, read into ``GangWork`` values (docs/production.md).

- ``tariffs.csv``: cargo_class, unit (t|unit), labour_tariff (BRL), effective_from (YYYY-MM-DD),
  optional per_fraction (yes|no, C7) and surcharge (a note of the rulebook's table, C8)
- ``gang.csv``: gang_id, registration, role, holds_worked, boarded (yes|no), minutes_worked,
  optional extra (yes|no: a member added for special conditions, C9)
- ``tally.csv``: gang_id, ship, date, period, cargo_class, quantity, optional unit (hold, deck,
  auxiliary, crane, door: a key of the composition table) and units (how many, default 1)
- ``interruptions.csv``: gang_id, kind, minutes | start,end (ISO 8601 with offset), optional
  transport (BRL, ``anchorage_travel`` rows only: the launch's cost, E7)
- ``disputes.csv``: gang_id, registration, rule, amount (empty: the whole line), reason

Each reader returns every record or raises one ``BadInput`` naming every bad row ``file:line``;
``assemble`` groups rows by gang and checks that the files agree (a tally for a gang with no
members, members with no tally, rows of one gang on different ships/dates). Row builders take a
mapping and a ``source`` so the bus ingest (``central.production.ingest``) reuses them.
"""

from __future__ import annotations

import re
import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo

from central.production.model import (
    Dispute,
    GangWork,
    Interruption,
    Member,
    Tariff,
    TariffTable,
    TallyRow,
)
from portgate import cells, tables
from portgate.cells import parse_aware
from portgate.errors import BadInput
from portgate.records import build_each, build_rows, parse_period, period_bounds

R = TypeVar("R")
SIXTY = Decimal(60)
#: The most a tariff (R$ per t or unit) and a tally quantity (t or units of one gang and period)
#: may be: far above any port's table or any ship's hold, and low enough that every amount fits
#: the ledger's cents (``BigInteger``) and the money arithmetic (28 significant digits).
MAX_TARIFF = Decimal(1_000_000)
MAX_QUANTITY = Decimal(1_000_000)
#: a tariff's ``surcharge``: the key of a note in the rulebook's surcharge table (C8: ``d``, ``e``, ``f``)
SURCHARGE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,15}")

COLUMNS = {
    "tariffs": ("cargo_class", "unit", "labour_tariff", "effective_from"),
    "gang": ("gang_id", "registration", "role"),  # optional: holds_worked, boarded, minutes_worked
    "tally": ("gang_id", "ship", "date", "period", "cargo_class", "quantity"),
    "interruptions": ("gang_id", "kind"),  # and minutes, or start and end
    "disputes": ("gang_id", "registration", "rule"),  # optional: amount, reason
    "minimums": ("registration", "monthly_minimum"),
}
# the optional columns of each kind: a header column in neither tuple is refused (``file.csv:1``)
OPTIONAL = {
    "gang": ("holds_worked", "boarded", "minutes_worked", "extra"),
    "tariffs": ("per_fraction", "surcharge"),
    "tally": ("unit", "units"),
    "interruptions": ("minutes", "start", "end", "transport"),
    "disputes": ("amount", "reason"),
}


def _at_most(value: Decimal, limit: Decimal, field: str) -> Decimal:
    """``value``, or ``BadInput`` naming ``field`` when it is more than ``limit``."""
    if value > limit:
        raise BadInput(f"{field} {value} is more than {limit}")
    return value


def tariff_from_row(row: Mapping[str, str], source: str) -> Tariff:
    unit = cells.required(row.get("unit"), "unit")
    if unit not in ("t", "unit"):
        raise BadInput(f"unit {unit!r} is not t|unit")
    tariff = _at_most(cells.decimal(row.get("labour_tariff"), "labour_tariff"), MAX_TARIFF, "labour_tariff")
    per_fraction = None
    if (row.get("per_fraction") or "").strip():
        per_fraction = cells.yes_no(row.get("per_fraction"), "per_fraction", default=False)
        if per_fraction and unit != "t":
            raise BadInput("per_fraction yes is for a tariff per tonne (unit t): C7, per tonne or fraction")
    surcharge = (row.get("surcharge") or "").strip() or None
    if surcharge is not None and not SURCHARGE_KEY.fullmatch(surcharge):
        raise BadInput(f"surcharge {surcharge!r} is not a note of the rulebook's surcharge table "
                       f"(a letter or word: d, e, f; C8)")
    return Tariff(cargo_class=cells.required(row.get("cargo_class"), "cargo_class"), unit=unit,  # type: ignore[arg-type]
                  labour_tariff=tariff,
                  effective_from=cells.date(row.get("effective_from"), "effective_from"), source=source,
                  per_fraction=per_fraction, surcharge=surcharge)


def member_from_row(row: Mapping[str, str], source: str) -> tuple[str, Member]:
    holds = cells.whole(row.get("holds_worked"), "holds_worked", optional=True, default=1)
    if holds < 0:
        raise BadInput(f"holds_worked {str(holds)!r} must not be negative")
    boarded = cells.yes_no(row.get("boarded"), "boarded", default=True)
    minutes = cells.decimal(row.get("minutes_worked"), "minutes_worked", optional=True)
    if boarded and minutes is None:
        raise BadInput("minutes_worked is required for a member who boarded")
    extra = cells.yes_no(row.get("extra"), "extra", default=False)
    return cells.required(row.get("gang_id"), "gang_id"), Member(
        registration=cells.required(row.get("registration"), "registration"), role=cells.required(row.get("role"), "role"), holds_worked=holds,
        boarded=boarded, minutes_worked=minutes or Decimal(0), source=source, extra=extra)


def tally_from_row(row: Mapping[str, str], source: str) -> tuple[tuple[str, str, dt.date, str], TallyRow]:
    period = cells.required(row.get("period"), "period")
    parse_period(period)
    key = (cells.required(row.get("gang_id"), "gang_id"), cells.required(row.get("ship"), "ship"), cells.date(row.get("date"), "date"), period)
    unit = (row.get("unit") or "").strip() or None
    if (row.get("units") or "").strip() and not unit:
        raise BadInput("units needs unit (hold, deck, crane...)")
    units = cells.whole(row.get("units"), "units", optional=True, default=1)
    if units < 1:
        raise BadInput(f"units must be at least 1, not {units}")
    return key, TallyRow(cargo_class=cells.required(row.get("cargo_class"), "cargo_class"),
                         quantity=_at_most(cells.decimal(row.get("quantity"), "quantity", places=3), MAX_QUANTITY,
                                           "quantity"), source=source, unit=unit, units=units)


def interruption_from_row(row: Mapping[str, str], source: str) -> tuple[str, Interruption]:
    minutes = cells.decimal(row.get("minutes"), "minutes", optional=True)
    start_raw, end_raw = (row.get("start") or "").strip(), (row.get("end") or "").strip()
    start = end = None
    if start_raw or end_raw:
        if not (start_raw and end_raw):
            raise BadInput("start and end go together")
        start, end = parse_aware(start_raw, "start"), parse_aware(end_raw, "end")
        if end <= start:
            raise BadInput("end must be after start")
        spanned = Decimal((end - start) // dt.timedelta(seconds=1)) / SIXTY
        if minutes is not None and minutes != spanned:
            raise BadInput(f"minutes {minutes} disagrees with start..end ({spanned} min)")
        minutes = spanned
    if minutes is None:
        raise BadInput("give minutes, or start and end")
    if minutes <= 0:
        raise BadInput("minutes must be > 0")
    kind = cells.required(row.get("kind"), "kind")
    transport = cells.decimal(row.get("transport"), "transport", places=2, optional=True)
    if transport is not None and kind != "anchorage_travel":
        raise BadInput(f"transport is only for anchorage_travel rows (E7, DL 2.032 art. 16), not {kind}")
    return cells.required(row.get("gang_id"), "gang_id"), Interruption(
        kind=kind, minutes=minutes, source=source, transport=transport, start=start, end=end)


def dispute_from_row(row: Mapping[str, str], source: str) -> tuple[str, Dispute]:
    return cells.required(row.get("gang_id"), "gang_id"), Dispute(
        registration=cells.required(row.get("registration"), "registration"), rule=cells.required(row.get("rule"), "rule"),
        amount=cells.decimal(row.get("amount"), "amount", places=2, optional=True),
        reason=(row.get("reason") or "").strip(), source=source)


def read_rows(path: str | Path, kind: str, build: Callable[[Mapping[str, str], str], R]) -> list[R]:
    """Read a CSV file of ``kind`` (a key of ``COLUMNS``) with ``build(row, source)``.

    Raises ``BadInput`` if the file is missing, not UTF-8, lacks a column, names a column that is
    neither in ``COLUMNS`` nor ``OPTIONAL`` (a misspelt ``holds_worked``: ``gang.csv:1``), or has
    bad rows (every bad row is listed as ``file:line``; in ``gang.csv`` a member listed twice in
    one gang among the good rows is named with them, in line order, so one run names every row).
    """
    known = COLUMNS[kind] + OPTIONAL.get(kind, ())
    built, errors = build_each(tables.read_rows(path, COLUMNS[kind], known=known), build)
    if errors:
        if kind == "gang":
            errors = sorted(errors + _listed_twice(built), key=_line)
        raise BadInput("\n".join(errors))
    return built


def _line(error: str) -> int:
    tail = error.split(": ", 1)[0].rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _listed_twice(members: list[tuple[str, Member]]) -> list[str]:
    """``gang.csv:5: E001 is listed twice in gang T1`` for each good row repeating a member (as
    ``assemble`` words it)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for gang, member in members:
        if (gang, member.registration) in seen:
            out.append(f"{member.source}: {member.registration} is listed twice in gang {gang}")
        seen.add((gang, member.registration))
    return out




def read_tariffs(path: str | Path) -> TariffTable:
    """Read ``tariffs.csv``; a class listed twice with the same ``effective_from`` is an error."""
    tariffs = read_rows(path, "tariffs", tariff_from_row)
    seen: dict[tuple[str, dt.date], str] = {}
    errors = []
    for t in tariffs:
        key = (t.cargo_class, t.effective_from)
        if key in seen:
            errors.append(f"{t.source}: {t.cargo_class} from {t.effective_from} already given at {seen[key]}")
        seen[key] = t.source
    if errors:
        raise BadInput("\n".join(errors))
    return TariffTable(tuple(tariffs))


def assemble(members: Iterable[tuple[str, Member]],
             tally: Iterable[tuple[tuple[str, str, dt.date, str], TallyRow]],
             interruptions: Iterable[tuple[str, Interruption]] = (),
             disputes: Iterable[tuple[str, Dispute]] = (),
             *, tz: str | ZoneInfo = "America/Sao_Paulo") -> list[GangWork]:
    """Group the rows by gang into ``GangWork`` values, in the order gangs first appear in the tally.

    ``service_end`` is the end of the gang's period on its date in the port's time zone ``tz``.
    Raises ``BadInput`` naming every row that does not fit: a tally for a gang with no members or
    nobody who boarded, tally rows of one gang on different ships/dates/periods, members, waits or
    disputes for a gang with no tally, a registration twice in one gang, an interruption whose start
    or end falls outside the gang's period (``outside_period``), an interruption longer than the
    gang's period or interruptions adding up to more (``period_minutes``: 360 for ``07-13``)."""
    zone = ZoneInfo(tz) if isinstance(tz, str) else tz
    errors: list[str] = []
    heads, rows = _tally_by_gang(tally, errors)
    crew = _crews(members, heads, errors)
    stops = _interruptions(interruptions, heads, zone, errors)
    doubts: dict[str, list[Dispute]] = {g: [] for g in heads}
    for gang, dispute in disputes:
        if gang not in heads:
            errors.append(f"{dispute.source}: gang {gang} has no row in the tally")
        else:
            doubts[gang].append(dispute)
    if errors:
        raise BadInput("\n".join(errors))
    works = []
    for gang, (ship, day, period, _source) in heads.items():
        named = [r for r in rows[gang] if r.unit is not None]
        works.append(GangWork(gang_id=gang, ship=ship, date=day, period=period,
                              service_end=period_end(day, period, zone), members=tuple(crew[gang]),
                              tally=tuple(rows[gang]), interruptions=tuple(stops[gang]),
                              disputes=tuple(doubts[gang]),
                              unit=named[0].unit if named else None, units=named[0].units if named else 1,
                              ordinary_minutes=period_minutes(day, period, zone)))
    return works


_Head = tuple[str, dt.date, str, str]  # a gang's ship, date, period and the source of its first tally row


def _tally_by_gang(tally, errors: list[str]) -> tuple[dict[str, _Head], dict[str, list[TallyRow]]]:
    """Each gang's head (from its first tally row) and its tally rows; a row of the gang on another
    ship, date or period is an error (one gang, one ship, date and period)."""
    heads: dict[str, _Head] = {}
    rows: dict[str, list[TallyRow]] = {}
    for (gang, ship, day, period), row in tally:
        if gang not in heads:
            heads[gang] = (ship, day, period, row.source)
            rows[gang] = []
        elif heads[gang][:3] != (ship, day, period):
            errors.append(f"{row.source}: gang {gang} is on {heads[gang][0]} {heads[gang][1]} "
                          f"{heads[gang][2]} at {heads[gang][3]}; one gang, one ship, date and period")
            continue
        rows[gang].append(row)
    return heads, rows


def _crews(members, heads: dict[str, _Head], errors: list[str]) -> dict[str, list[Member]]:
    """Each gang's members; a member of a gang without tally, a registration twice in a gang, a gang
    with nobody listed or nobody who boarded are errors."""
    crew: dict[str, list[Member]] = {g: [] for g in heads}
    for gang, member in members:
        if gang not in crew:
            errors.append(f"{member.source}: gang {gang} has no row in the tally (enter quantity 0 if "
                          f"it moved nothing)")
        elif any(m.registration == member.registration for m in crew[gang]):
            errors.append(f"{member.source}: {member.registration} is listed twice in gang {gang}")
        else:
            crew[gang].append(member)
    for gang, (_ship, _day, _period, source) in heads.items():
        if not crew[gang]:
            errors.append(f"{source}: tally for gang {gang}, but gang.csv lists nobody for it")
        elif not any(m.boarded for m in crew[gang]):
            errors.append(f"{source}: tally for gang {gang}, but nobody of that gang boarded")
    return crew


def _interruptions(interruptions, heads: dict[str, _Head], zone: ZoneInfo,
                   errors: list[str]) -> dict[str, list[Interruption]]:
    """Each gang's interruptions; one outside the gang's period, longer than it, or taking the
    gang's interruptions past its length (``period_minutes``) is an error."""
    stops: dict[str, list[Interruption]] = {g: [] for g in heads}
    for gang, stop in interruptions:
        if gang not in heads:
            errors.append(f"{stop.source}: gang {gang} has no row in the tally")
            continue
        _ship, day, period, _source = heads[gang]
        outside = outside_period(stop, gang, day, period, zone)
        if outside:
            errors.append(f"{stop.source}: {outside}")
        length = period_minutes(day, period, zone)
        so_far = sum((s.minutes for s in stops[gang] if s.minutes <= length), Decimal(0)) + stop.minutes
        if stop.minutes > length:
            errors.append(f"{stop.source}: minutes {stop.minutes} is longer than gang {gang}'s period "
                          f"{period} ({length} min)")
        elif so_far > length:
            errors.append(f"{stop.source}: gang {gang}'s interruptions add up to {so_far} min, longer "
                          f"than its period {period} ({length} min)")
        stops[gang].append(stop)
    return stops


def _local(at: dt.datetime, zone: ZoneInfo) -> str:
    return at.astimezone(zone).strftime("%Y-%m-%d %H:%M")


def outside_period(stop: Interruption, gang: str, day: dt.date, period: str, zone: ZoneInfo) -> str | None:
    """Why ``stop``'s ``start``/``end`` fall outside the gang's work period, or None (also when the
    row gave minutes only). The period is ``period`` begun on local ``day`` in ``zone`` (``19-01``
    of 10/03 runs 10/03 19:00 to 11/03 01:00); the bounds are inclusive, with no tolerance: E4, E5,
    E7 and E8 pay time within the period, and the times are typed or sent to the minute, so a
    time outside it is a wrong date or hour, not clock drift. Names the first field outside:
    ``start 2026-03-11 08:00 is outside gang T1's period 07-13 of 2026-03-10 (2026-03-10
    07:00..2026-03-10 13:00, port time)``."""
    if stop.start is None or stop.end is None:
        return None
    first, last = period_bounds(day, period, zone)
    for field, at in (("start", stop.start), ("end", stop.end)):
        if not first <= at <= last:
            return (f"{field} {_local(at, zone)} is outside gang {gang}'s period {period} of {day} "
                    f"({_local(first, zone)}..{_local(last, zone)}, port time)")
    return None


def period_minutes(day: dt.date, period: str, zone: ZoneInfo) -> Decimal:
    """Length in minutes of ``period`` begun on local ``day`` (``07-13``: 360; a period across a
    daylight-saving change is an hour longer or shorter): the most minutes an interruption of the
    gang can last (E4, E5, E7, E8 are paid for time within the period)."""
    start, end = period_bounds(day, period, zone)
    return Decimal((end - start) // dt.timedelta(seconds=1)) / SIXTY


def period_end(day: dt.date, period: str, zone: ZoneInfo) -> dt.datetime:
    """End of ``period`` (``07-11``, ``19-01``) begun on local ``day``, as aware UTC
    (``portgate.records.period_bounds``). Raises ``BadInput`` for a malformed period."""
    return period_bounds(day, period, zone)[1]


def read_gang_work(gang: str | Path, tally: str | Path, interruptions: str | Path | None = None,
                   disputes: str | Path | None = None, *, tz: str = "America/Sao_Paulo") -> list[GangWork]:
    """Read the office's files into ``GangWork`` values. Every file is read and checked before any
    error is raised, so one run names every bad row of every file."""
    errors: list[str] = []
    parts: dict[str, list] = {}
    jobs = [("members", gang, "gang", member_from_row), ("tally", tally, "tally", tally_from_row),
            ("interruptions", interruptions, "interruptions", interruption_from_row),
            ("disputes", disputes, "disputes", dispute_from_row)]
    for name, path, kind, build in jobs:
        if path is None:
            parts[name] = []
            continue
        try:
            parts[name] = read_rows(path, kind, build)
        except BadInput as exc:
            errors.append(str(exc))
    if errors:
        raise BadInput("\n".join(errors))
    return assemble(parts["members"], parts["tally"], parts["interruptions"], parts["disputes"], tz=tz)


def minimum_from_row(row: Mapping[str, str], source: str) -> tuple[str, Decimal]:
    return cells.required(row.get("registration"), "registration"), cells.decimal(row.get("monthly_minimum"), "monthly_minimum", places=2)


def read_minimums(path: str | Path) -> list[tuple[str, Decimal]]:
    """Read ``minimums.csv`` (registration, monthly_minimum BRL) for C6."""
    return read_rows(path, "minimums", minimum_from_row)
