"""G11 live at the gate (RULES.md G11, 83.611 arts. 5-8): the loop's tick raises COVERAGE_GAP from
the local escala copy when no gangway watchman is aboard a long-haul ship 30 min after the start of
a period, keeps it raised until a watchman is admitted, and journals the start and the end as
``coverage`` events (priority 1, through the ordinary outbox). Real store, journal and engine."""

from __future__ import annotations

import datetime as dt

from edge.clock import FakeClock, GuardedClock
from edge.indicator import RecordingIndicator
from edge.loop import GateLoop
from edge.rules.model import Outcome
from edge.rules.rulebook import GateRulebooks
from wire.events import CoveragePayload

from .conftest import card_read

# Demo escala: MSC Aurora (9300001, long haul) at g-aurora, period 01-07 local = 04:00-10:00 UTC.
P0107 = dt.datetime(2026, 3, 15, 4, 0, tzinfo=dt.UTC)
V001_CARD, V002_CARD = "0A04A10001", "0A04A10002"


def _coverage(journal):
    return [e for e in journal.events_between(1, 10**9) if isinstance(e.payload, CoveragePayload)]


def _loop(store, journal, clock):
    return GateLoop(readers=[], store=store, journal=journal, clock=GuardedClock(clock),
                    indicator=RecordingIndicator(), rulebook=GateRulebooks(), coverage_every_s=5)


def test_G11_no_watchman_aboard_30_min_after_the_start_raises_coverage_gap_until_one_is_admitted(store, journal):
    clock = FakeClock(P0107 + dt.timedelta(minutes=29))
    loop = _loop(store, journal, clock)
    loop.handle(None)
    assert _coverage(journal) == []  # inside the grace
    clock.advance(61)
    loop.handle(None)
    [raised] = _coverage(journal)
    p = raised.payload
    assert (p.state, p.ship, p.date, p.period, p.voyage) == ("raised", "9300001", dt.date(2026, 3, 15), "01-07", "long_haul")
    assert p.due_at == P0107 + dt.timedelta(minutes=30) and p.period_end == P0107 + dt.timedelta(hours=6)
    assert p.dispatched == ["V001"]  # the gangway post's watchman
    assert journal.outbox_batch(1)[0].event_id == raised.event_id  # priority: leaves first
    clock.advance(60)
    loop.handle(None)
    assert len(_coverage(journal)) == 1  # stays raised, journaled once
    clock.advance(60)
    [admit] = loop.handle(card_read(V002_CARD, clock))  # the hold's watchman: a watchman aboard
    assert admit.outcome is Outcome.ADMIT
    raised_, ended = _coverage(journal)
    assert (ended.payload.state, ended.payload.ended_by, ended.payload.watchman) == ("ended", "watchman_admitted", "V002")
    assert ended.seq > raised_.seq


def test_G11_a_gap_nobody_covers_ends_with_its_period(store, journal):
    clock = FakeClock(P0107 + dt.timedelta(hours=5, minutes=59))
    loop = _loop(store, journal, clock)
    loop.handle(None)
    clock.advance(120)
    loop.handle(None)
    states = [(e.payload.period, e.payload.state, e.payload.ended_by) for e in _coverage(journal)]
    assert states[:2] == [("01-07", "raised", None), ("01-07", "ended", "period_end")]


def test_G11_a_watchman_aboard_in_time_raises_nothing(store, journal):
    clock = FakeClock(P0107 + dt.timedelta(minutes=10))
    loop = _loop(store, journal, clock)
    loop.handle(card_read(V001_CARD, clock))
    clock.advance(3600)
    loop.handle(None)
    assert _coverage(journal) == []


def test_G11_not_evaluated_on_an_untrusted_clock(store, journal):
    clock = FakeClock(P0107 + dt.timedelta(hours=1), trusted=False)
    loop = _loop(store, journal, clock)
    loop.handle(None)
    assert _coverage(journal) == []


def test_G11_the_gap_ended_event_names_the_watchman_who_ended_it_not_a_stevedore_aboard(
        tmp_path, journal):
    """A stevedore of the same period admitted first does not end the gap; the watchman does, and
    the ``ended`` event names him (not the stevedore aboard since earlier)."""
    import shutil

    from edge.store import Store

    from .conftest import DEMO, GATE, SHIP
    workers, cards, escala = (tmp_path / n for n in ("w.csv", "c.csv", "e.csv"))
    shutil.copy(DEMO / "workers.csv", workers)
    shutil.copy(DEMO / "cards.csv", cards)
    with workers.open("a") as fh:
        fh.write("S001,Davi,estivador,active,,,2025-10-01,2026,90\n")
    with cards.open("a") as fh:
        fh.write("0A0450E001,control,S001,active\n0B0B90BADE,badge,S001,active\n")
    escala.write_text("date,period,ship,ship_name,voyage,berth,gate_id,post,function,registration\n"
                      "2026-03-15,01-07,9300001,MSC Aurora,long_haul,berthed,g-aurora,porao,estivador,S001\n"
                      "2026-03-15,01-07,9300001,MSC Aurora,long_haul,berthed,g-aurora,portalo,vigia,V001\n")
    store = Store(tmp_path / "own.db", gate_id=GATE, ship=SHIP, boot_id="boot-1")
    store.load_csv_files(workers, cards, escala, at=P0107)
    try:
        clock = FakeClock(P0107 + dt.timedelta(minutes=31))
        loop = _loop(store, journal, clock)
        loop.handle(None)
        assert [e.payload.state for e in _coverage(journal)] == ["raised"]
        loop.handle(card_read("0A0450E001", clock))  # the stevedore, 31 min late (within 60)
        [stevedore] = loop.handle(card_read("0B0B90BADE", clock, kind="badge"))
        assert stevedore.outcome is Outcome.ADMIT and stevedore.registration == "S001"
        assert [e.payload.state for e in _coverage(journal)] == ["raised"]  # not a watchman
        clock.advance(9 * 60)
        decisions = loop.handle(card_read(V001_CARD, clock))
        assert [d.outcome for d in decisions] == [Outcome.ADMIT], decisions
        _, ended = _coverage(journal)
        assert (ended.payload.state, ended.payload.watchman) == ("ended", "V001")
    finally:
        store.close()
