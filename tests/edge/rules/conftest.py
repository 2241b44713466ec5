"""Fixtures for the gate rules: a small port built in memory (real engine, real in-memory view)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from edge.memview import MemoryGateView, Presence, Roster
from edge.display.said import worded
from edge.rules.engine import decide
from edge.rules.model import Decision, Now, Presentation
from edge.rules.rulebook import GateRulebook
from portgate.records import (
    Berth, Card, CardKind, CardStatus, EscalaEntry, Voyage, Worker, WorkerStatus,
)

TZ = ZoneInfo("America/Sao_Paulo")
DAY = dt.date(2026, 4, 10)
SHIPS = {"GA": ("9074729", "MSC ALFA", Voyage.LONG_HAUL), "GB": ("9300001", "NAVIO BETA", Voyage.CABOTAGE)}


def local(hour: int, minute: int = 0, second: int = 0, day: dt.date = DAY) -> dt.datetime:
    """A local port time as an aware UTC datetime."""
    return dt.datetime.combine(day, dt.time(hour, minute, second), TZ).astimezone(dt.UTC)


def mono(at: dt.datetime) -> int:
    return int(at.timestamp()) * 1_000_000_000


@dataclasses.dataclass
class Port:
    """A tiny port: workers, cards, escala, shared presence; ``read`` decides and applies."""

    workers: list[Worker] = dataclasses.field(default_factory=list)
    cards: list[Card] = dataclasses.field(default_factory=list)
    escala: list[EscalaEntry] = dataclasses.field(default_factory=list)
    presence: Presence = dataclasses.field(default_factory=Presence)
    rulebook: GateRulebook = dataclasses.field(default_factory=GateRulebook)
    views: dict[str, MemoryGateView] = dataclasses.field(default_factory=dict)
    words: bool = True  # the decision worded at the edge (edge.display.said), as the gate does

    def worker(self, reg: str, **kw) -> str:
        kw.setdefault("status", WorkerStatus.ACTIVE)
        kw.setdefault("health_exam_date", dt.date(2025, 6, 1))
        kw.setdefault("category", "vigia")
        self.workers.append(Worker(registration=reg, name=f"W{reg}", **kw))
        self.cards.append(Card(f"AA00{reg}", CardKind.CONTROL, reg, CardStatus.ACTIVE))
        self.cards.append(Card(f"BB00{reg}", CardKind.BADGE, reg, CardStatus.ACTIVE))
        return f"AA00{reg}"

    def card(self, uid: str, reg: str, kind=CardKind.CONTROL, status=CardStatus.ACTIVE) -> str:
        self.cards.append(Card(uid, kind, reg, status))
        return uid

    def dispatch(self, reg: str, period: str = "07-13", gate: str = "GA", day: dt.date = DAY,
                 post: str = "portalo", function: str = "vigia") -> EscalaEntry:
        ship, name, voyage = SHIPS[gate]
        entry = EscalaEntry(day, period, ship, name, voyage, Berth.BERTHED, gate, post, function, reg)
        self.escala.append(entry)
        return entry

    def view(self, gate: str = "GA") -> MemoryGateView:
        roster = Roster(self.workers, self.cards, self.escala)
        view = self.views.get(gate)
        if view is None:
            view = self.views[gate] = MemoryGateView(gate, roster, self.presence, tz=TZ,
                                                     ship=SHIPS[gate][0])
        view.roster = roster
        return view

    def read(self, uid: str, at: dt.datetime, gate: str = "GA", *, badge: str | None = None,
             badge_at: dt.datetime | None = None, trusted: bool = True, reader: str = "control",
             updated_at: dt.datetime | None | str = "fresh", apply: bool = True,
             rulebook: GateRulebook | None = None, direction: str = "both",
             boot: str | None = "boot-1", mono_ns: int | None = None,
             estimated: bool = False) -> Decision:
        """Decide a read at ``at`` (the gate's wall time, or its estimate when ``estimated``); the
        monotonic clock is ``mono_ns`` of boot ``boot`` (default: ``at`` in ns, boot-1)."""
        view = self.view(gate)
        view.updated_at = at if updated_at == "fresh" else updated_at
        ns = mono(at) if mono_ns is None else mono_ns
        p = Presentation(uid=uid, reader_id=f"{gate}/{reader}", reader_kind=reader, mono_ns=ns,
                         badge_uid=badge,
                         badge_mono_ns=mono(badge_at or at - dt.timedelta(seconds=2)) if badge else None,
                         direction=direction)
        now = Now(wall=at, mono_ns=ns, clock_trusted=trusted and not estimated, estimated=estimated,
                  boot_id=boot)
        rb = rulebook or self.rulebook
        decision = decide(view, p, now, rb)
        if self.words:
            decision = worded(decision)
        if apply:
            view.apply(decision, p, now, inspector_mode_s=rb.g10.inspector_mode_s)
        return decision


@pytest.fixture
def port() -> Port:
    return Port()
