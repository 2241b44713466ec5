"""The scripted port day under ``config/demo/``: what is played, and what must come out.

Files: ``workers.csv``, ``cards.csv``, ``escala.csv``, ``taps.csv`` (DESIGN.md formats),
``stevedores.csv`` and ``production/`` (optional: stevedores and their gangs, docs/production.md),
``expected.csv`` (the decision each control-card read must get, by taps.csv line number) and
``scenario.toml`` (gates, the broker outage window, the expected pay per registration).
Pure: reads files, compares results; starts nothing.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Literal

import msgspec

from portgate import tables
from portgate.config import load_toml
from portgate.records import Tap, load_csv_rows

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "config" / "demo"
EXPECTED_COLUMNS = ("taps_line", "gate_id", "registration", "decision", "rules_failed", "flags")


class GateSpec(msgspec.Struct, forbid_unknown_fields=True):
    """One gate of the scenario. ``exit_reader`` (serial gates): a second control reader declared
    ``direction = "out"`` (G9); taps.csv rows with ``direction = out`` are read on it."""

    gate_id: str
    ship: str
    readers: Literal["serial", "pcsc"]
    card_and_badge_required: bool = False
    exit_reader: bool = False


class Outage(msgspec.Struct, forbid_unknown_fields=True):
    from_line: int
    to_line: int
    seconds: float = 20.0


class ScenarioFile(msgspec.Struct, forbid_unknown_fields=True):
    port: str
    timezone: str
    day: dt.date
    gates: list[GateSpec]
    outage: Outage | None = None
    expected_pay: dict[str, str] = {}
    # P8: the port's fare per watchman round trip quay <-> ship at anchorage (BRL text), set in the
    # demo's copy of the rulebook (the shipped one leaves it unset); the expected billing total per
    # ship of the day (BRL text).
    anchorage_transport_fare: str | None = None
    expected_billing: dict[str, str] = {}


class Expected(msgspec.Struct, frozen=True):
    taps_line: int
    gate_id: str
    registration: str
    decision: str
    rules_failed: tuple[str, ...]
    flags: tuple[str, ...]


class Scenario:
    """A loaded scenario directory. ``taps`` are (line number, Tap) in play order."""

    def __init__(self, directory: str | Path = DEFAULT_DIR) -> None:
        self.dir = Path(directory)
        self.spec = load_toml(self.dir / "scenario.toml", ScenarioFile)
        self.workers_csv = self.dir / "workers.csv"
        self.cards_csv = self.dir / "cards.csv"
        self.escala_csv = self.dir / "escala.csv"
        self.taps_csv = self.dir / "taps.csv"
        # stevedores (registry only: they pass no demo gate) and their gangs' production pay
        # (``production/``: gang, tally, tariffs, interruptions as ``portgate production import``)
        self.stevedores_csv = self.dir / "stevedores.csv"
        self.production_dir = self.dir / "production"
        self.taps: list[tuple[int, Tap]] = [(int(where.rsplit(":", 1)[1]), tap)
                                            for where, tap in load_csv_rows(self.taps_csv, Tap)]
        self.expected: dict[int, Expected] = {}
        for _where, row in tables.iter_rows(self.dir / "expected.csv", EXPECTED_COLUMNS,
                                            known=EXPECTED_COLUMNS):
            exp = Expected(
                taps_line=int(row["taps_line"]), gate_id=row["gate_id"],
                registration=row["registration"], decision=row["decision"],
                rules_failed=tuple(row["rules_failed"].split()), flags=tuple(row["flags"].split()),
            )
            self.expected[exp.taps_line] = exp
        self.expected_pay = {reg: Decimal(v) for reg, v in self.spec.expected_pay.items()}

    def anchored_ships(self) -> set[str]:
        """Ships at anchorage on the escala of the scenario's day at a gate the scenario runs (their
        watchmen's shifts get P8 billing lines; a ship whose gate is not played has no shift)."""
        gates = {g.gate_id for g in self.spec.gates}
        return {row["ship"] for _where, row in tables.iter_rows(self.escala_csv, ("ship",))
                if row.get("berth") == "anchored" and row.get("date") == self.spec.day.isoformat()
                and row.get("gate_id") in gates}

    def gate(self, gate_id: str) -> GateSpec:
        for g in self.spec.gates:
            if g.gate_id == gate_id:
                return g
        raise KeyError(gate_id)


def check_decision(exp: Expected, decision: str, rules_failed, flags) -> str | None:
    """Compare one decision with its expectation; return a mismatch description or None.

    Rules failed must match exactly; the expected flags must all be present (others may be too).
    """
    problems = []
    if decision != exp.decision:
        problems.append(f"decision {decision} != {exp.decision}")
    if tuple(rules_failed) != exp.rules_failed:
        problems.append(f"rules {list(rules_failed)} != {list(exp.rules_failed)}")
    missing = [f for f in exp.flags if f not in flags]
    if missing:
        problems.append(f"flags lack {missing}")
    if not problems:
        return None
    return f"taps.csv:{exp.taps_line} ({exp.gate_id} {exp.registration}): " + "; ".join(problems)


def check_pay(expected: dict[str, Decimal], totals: dict[str, Decimal]) -> list[str]:
    """Compare pay totals per registration with the expectation; return mismatch descriptions."""
    out = []
    for reg, amount in sorted(expected.items()):
        got = totals.get(reg)
        if got != amount:
            out.append(f"pay {reg}: {got} != expected {amount}")
    for reg in sorted(set(totals) - set(expected)):
        out.append(f"pay {reg}: unexpected statement of {totals[reg]}")
    return out
