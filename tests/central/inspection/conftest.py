"""Fixtures and small builders for the inspection tests (crew hours, crew share, aboard)."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pytest

from central.inspection.work_periods import PERIOD_COLUMNS, Kind, WatchType, WorkPeriod
from central.inspection.crew_share import CREW_COLUMNS, Branch, CrewMember, Level  # noqa: F401

SP = dt.timezone(dt.timedelta(hours=-3))  # America/Sao_Paulo has had no DST since 2019
TZ = "America/Sao_Paulo"


def at(day: str, hhmm: str) -> dt.datetime:
    """Aware time in the ship's zone: at('2024-06-10', '08:00')."""
    h, m = hhmm.split(":")
    base = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(0), SP)
    return base + dt.timedelta(hours=int(h), minutes=int(m))


def work(
    crew_id: str,
    day: str,
    start: str,
    end: str,
    *,
    end_day: str | None = None,
    kind: Kind = Kind.WORK,
    watch: WatchType | None = None,
    port: bool = False,
    comp=None,
    ship: str = "9300001",
    where: str = "",
) -> WorkPeriod:
    return WorkPeriod(
        ship=ship,
        crew_id=crew_id,
        name=f"Tripulante {crew_id}",
        role="marinheiro",
        start=at(day, start),
        end=at(end_day or day, end),
        kind=kind,
        watch_type=watch,
        port_traffic=port,
        compensation=comp,
        where=where,
    )


def watch(
    crew_id: str,
    day: str,
    start: str,
    end: str,
    *,
    end_day: str | None = None,
    wt: WatchType = WatchType.ENGINE,
    **kw,
) -> WorkPeriod:
    return work(crew_id, day, start, end, end_day=end_day, kind=Kind.WATCH, watch=wt, **kw)


def member(
    crew_id: str, nationality: str, level: Level = Level.OFFICER, branch: Branch = Branch.DECK
) -> CrewMember:
    return CrewMember(crew_id, f"Pessoa {crew_id}", nationality, level, branch)


def write_csv(path: Path, columns, rows) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        w.writerows(rows)
    return path


def period_row(
    crew_id,
    start,
    end,
    kind="work",
    watch_type="",
    port_traffic="false",
    compensation="",
    ship="9300001",
    name="",
    role="marinheiro",
):
    return [
        ship,
        crew_id,
        name or f"Tripulante {crew_id}",
        role,
        start,
        end,
        kind,
        watch_type,
        port_traffic,
        compensation,
    ]


@pytest.fixture
def periods_csv(tmp_path):
    def make(rows, name="periods.csv"):
        return write_csv(tmp_path / name, PERIOD_COLUMNS, rows)

    return make


@pytest.fixture
def crew_csv(tmp_path):
    def make(rows, name="crew.csv"):
        return write_csv(tmp_path / name, CREW_COLUMNS, rows)

    return make
