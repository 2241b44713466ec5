"""Fixtures for production pay: the real rulebooks of config/rulebooks, a small tariff table, and
builders for gangs so each worked example reads as its own hand computation.

Hand figures used throughout: SD = R$ 180.00, hourly wage SD/8 = R$ 22.50, half day R$ 90.00.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from central.production.csvio import period_end
from central.production.model import GangWork, Interruption, Member, Tariff, TariffTable, TallyRow, Dispute
from central.production.rulebook import find_rulebook

DAY = dt.date(2026, 3, 10)
ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "config" / "examples" / "production"


@pytest.fixture(scope="session")
def stevedoring():
    return find_rulebook("dl-2032-1940")


@pytest.fixture(scope="session")
def dock():
    return find_rulebook("dl-3844-1941")


@pytest.fixture(scope="session")
def tariffs():
    return TariffTable((
        Tariff("bagged", "t", Decimal("3.20"), dt.date(2026, 1, 1)),
        Tariff("general", "t", Decimal("4.50"), dt.date(2026, 1, 1)),
        Tariff("containers", "unit", Decimal("25.00"), dt.date(2026, 1, 1)),
        Tariff("bagged", "t", Decimal("9.99"), dt.date(2027, 1, 1)),  # not yet in force in 2026
    ))


def member(reg, role="stevedore", minutes=300, holds=1, boarded=True):
    return Member(reg, role, holds_worked=holds, boarded=boarded, minutes_worked=Decimal(minutes),
                  source=f"gang.csv:{reg}")


def gang(members, tally, stops=(), disputes=(), period="07-13", day=DAY):
    return GangWork(
        gang_id="T1", ship="9123456", date=day, period=period,
        service_end=period_end(day, period, __import__("zoneinfo").ZoneInfo("America/Sao_Paulo")),
        members=tuple(members),
        tally=tuple(TallyRow(cls, Decimal(q), source=f"tally.csv:{i + 2}") for i, (cls, q) in enumerate(tally)),
        interruptions=tuple(Interruption(kind, Decimal(m), source=f"interruptions.csv:{i + 2}")
                            for i, (kind, m) in enumerate(stops)),
        disputes=tuple(disputes),
    )


def amounts(statement, rule=None):
    """The amounts of a member's lines as strings, optionally only those of ``rule``."""
    return [str(line.amount) for line in statement.lines if rule is None or line.rule == rule]


def by_reg(result):
    return {m.registration: m for m in result.members}


__all__ = ["DAY", "EXAMPLES", "member", "gang", "amounts", "by_reg", "Dispute"]
