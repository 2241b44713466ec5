"""G13 (RULES.md, operational): the gate never stops deciding because of its clock. A wall clock
before 2000, before the gate's last trusted time or before its rulebook's first version is
untrusted; the gate decides on its estimate and the newest rulebook version, flags
CLOCK_UNTRUSTED, journals boot id, seq and monotonic time, and never refuses an exit for a gate
fault. Real store, journal and engine; a fake clock."""

from __future__ import annotations

import datetime as dt

from edge.clock import FakeClock, GuardedClock
from edge.indicator import RecordingIndicator
from edge.loop import GateLoop
from edge.rules.model import Flag, Outcome
from edge.rules.rulebook import G8Settings, GateRulebook, GateRulebooks
from portgate.errors import StoreError
from wire.events import AlertPayload, TapPayload

from .conftest import T0, card_read

V001_CARD = "0A04A10001"
EPOCH_BOOT = dt.datetime(1970, 1, 1, 0, 0, 12, tzinfo=dt.UTC)


def _events(journal):
    return journal.events_between(1, 10**9)


def _taps(journal):
    return [e for e in _events(journal) if isinstance(e.payload, TapPayload)]


def _alerts(journal):
    return [e.payload.code for e in _events(journal) if isinstance(e.payload, AlertPayload)]


def _loop(store, journal, clock, rulebook=None):
    return GateLoop(readers=[], store=store, journal=journal, clock=clock,
                    indicator=RecordingIndicator(), rulebook=rulebook or GateRulebooks())


def test_G13_guarded_clock_distrusts_a_time_before_the_last_trusted_one_and_estimates():
    inner = FakeClock(T0 - dt.timedelta(hours=2), mono_ns=5_000_000_000)  # fake-hwclock: restored stale
    clock = GuardedClock(inner, last_trusted=T0)
    now = clock.now()
    assert now.estimated and not now.clock_trusted and now.wall == T0
    inner.advance(30)
    assert clock.now().wall == T0 + dt.timedelta(seconds=30)  # floor + monotonic time since start
    inner.set_wall(T0 + dt.timedelta(minutes=5))  # NTP synchronised
    now = clock.now()
    assert now.clock_trusted and not now.estimated and now.wall == T0 + dt.timedelta(minutes=5)
    assert clock.last_raw == now.wall


def test_G13_guarded_clock_distrusts_before_2000_and_before_the_rulebooks_first_version():
    inner = FakeClock(dt.datetime(1999, 12, 31, tzinfo=dt.UTC))
    assert GuardedClock(inner).now().estimated
    inner.set_wall(dt.datetime(2025, 6, 1, tzinfo=dt.UTC))
    assert not GuardedClock(inner).now().estimated
    books = GateRulebooks(version=(GateRulebook(effective_from=dt.date(2026, 1, 1)),))
    assert GuardedClock(inner, not_before=books.first_start).now().estimated


def test_G13_journal_knows_its_last_trusted_time(store, journal):
    clock = FakeClock(T0)
    loop = _loop(store, journal, GuardedClock(clock))
    loop.handle(card_read(V001_CARD, clock))
    clock.set_wall(EPOCH_BOOT)
    clock.advance(5)
    loop.handle(card_read("0A04A10002", clock))
    assert journal.last_trusted_at() == T0


def test_G13_a_gate_starting_at_1970_decides_on_the_newest_rulebook_and_journals_boot_seq_mono(store, journal):
    # Two versions: the newest denies on an untrusted clock (G8 deny mode), so its use is visible.
    books = GateRulebooks(version=(
        GateRulebook(effective_from=dt.date(2026, 1, 1)),
        GateRulebook(effective_from=dt.date(2026, 3, 1), g8=G8Settings(stale_mode="deny")),
    ))
    inner = FakeClock(EPOCH_BOOT, mono_ns=7_000_000_000)
    clock = GuardedClock(inner, last_trusted=T0, not_before=books.first_start)
    loop = _loop(store, journal, clock, books)  # today: ConfigError "no gate rulebook version in force"
    loop.handle(None)  # the first tick journals the clock alert
    [decision] = loop.handle(card_read(V001_CARD, inner))
    assert decision.outcome is Outcome.DENY and decision.rules_failed == ("G8",)
    assert Flag.CLOCK_UNTRUSTED in decision.flags
    [tap] = _taps(journal)
    assert (tap.boot_id, tap.seq, tap.mono_ns, tap.clock_trusted) == ("boot-1", 2, 7_000_000_000, False)
    assert tap.occurred_at == T0  # the estimate, never 1970
    assert _alerts(journal) == ["CLOCK_UNTRUSTED"]
    assert "1970-01-01T00:00:12" in _events(journal)[0].payload.detail


def test_G13_a_clock_falling_back_while_running_still_lets_the_worker_out(store, journal):
    inner = FakeClock(T0)
    loop = _loop(store, journal, GuardedClock(inner))
    [admit] = loop.handle(card_read(V001_CARD, inner))
    assert admit.outcome is Outcome.ADMIT
    inner.advance(5 * 3600)
    inner.set_wall(EPOCH_BOOT)  # the wall clock falls back to 1970 while the gate runs
    [out] = loop.handle(card_read(V001_CARD, inner))  # today: DENY "falha interna"
    assert out.outcome is Outcome.EXIT and Flag.CLOCK_UNTRUSTED in out.flags
    assert store.open_shift("V001") is None
    exit_tap = _taps(journal)[-1]
    assert not exit_tap.clock_trusted and exit_tap.occurred_at == T0 + dt.timedelta(hours=5)
    inner.set_wall(T0 + dt.timedelta(hours=5, seconds=20))  # NTP again
    loop.handle(None)
    assert _alerts(journal) == ["CLOCK_UNTRUSTED", "CLOCK_TRUSTED"]
    anchor = _events(journal)[-1]
    assert anchor.clock_trusted and anchor.boot_id == exit_tap.boot_id and anchor.seq > exit_tap.seq


def test_G13_an_internal_failure_never_refuses_an_exit(store, journal):
    inner = FakeClock(T0)
    loop = _loop(store, journal, GuardedClock(inner))
    loop.handle(card_read(V001_CARD, inner))
    inner.advance(6 * 3600)

    def broken(*_a):
        raise KeyError("bug")

    loop.decide = broken
    [out] = loop.handle(card_read(V001_CARD, inner))
    assert out.outcome is Outcome.EXIT and out.rules_failed == ("INTERNAL",)
    assert "saída registrada" in out.message_pt.lower()
    assert store.open_shift("V001") is None
    assert _taps(journal)[-1].payload.decision == "exit"
    [deny] = loop.handle(card_read("0A04A10002", inner))  # not aboard: still a DENY
    assert deny.outcome is Outcome.DENY and deny.rules_failed == ("INTERNAL",)


def test_G13_a_journal_that_cannot_commit_lets_the_worker_out_unrecorded(store, journal, mocker):
    inner = FakeClock(T0)
    loop = _loop(store, journal, GuardedClock(inner))
    loop.handle(card_read(V001_CARD, inner))
    inner.advance(6 * 3600)
    # a full disk cannot be produced on demand here: the fault is injected at the journal boundary
    mocker.patch("edge.journal_batch.JournalBatch.commit", side_effect=StoreError("disk I/O error"))
    [out] = loop.handle(card_read(V001_CARD, inner))
    assert out.outcome is Outcome.EXIT and "NÃO registrada" in out.message_pt
    assert store.open_shift("V001") is not None  # nothing journaled, nothing changed


def test_G13_a_fresh_gate_at_1970_estimates_from_the_offices_stamp_on_its_copies(tmp_path, journal):
    from edge.store import Store
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "config" / "demo"
    store = Store(tmp_path / "fresh.db", gate_id="g-aurora", ship="9300001", boot_id="boot-1")
    store.load_csv_files(demo / "workers.csv", demo / "cards.csv", demo / "escala.csv",
                         at=T0 - dt.timedelta(minutes=20))  # stamped by the office
    inner = FakeClock(EPOCH_BOOT)
    clock = GuardedClock(inner, not_before=GateRulebooks().first_start)  # no journal yet: no last trusted time
    loop = _loop(store, journal, clock)
    loop.handle(None)  # the tick learns the stamp
    inner.advance(20 * 60)
    [decision] = loop.handle(card_read(V001_CARD, inner))
    assert decision.outcome is Outcome.ADMIT and Flag.CLOCK_UNTRUSTED in decision.flags
    assert _taps(journal)[0].occurred_at == T0  # stamp + 20 min of monotonic time
    store.close()


def test_G13_a_hint_never_makes_a_plausible_reading_untrusted():
    inner = FakeClock(T0)
    clock = GuardedClock(inner)
    clock.hint(T0 + dt.timedelta(seconds=10))  # another clock a little ahead
    now = clock.now()
    assert now.clock_trusted and now.wall == T0


def test_G13_a_worker_admitted_before_a_restart_at_1970_is_let_out_with_clock_untrusted(tmp_path):
    """RULES.md G13 with G9 (issue 31 item 1), through the loop, the store and journal files: V001
    admitted at T0 (01:20 local, trusted) in boot-A; the gate restarts (boot-B) at 1970, its
    estimate T0 + 5 s of monotonic time, inside min_stay_minutes (5 min) of the admit. The shift
    was admitted in another boot: EXIT flagged CLOCK_UNTRUSTED (before: ALREADY ABOARD)."""
    from edge.journal import Journal
    from edge.store import Store
    from pathlib import Path

    from .conftest import KEY

    demo = Path(__file__).resolve().parents[2] / "config" / "demo"

    def open_gate(boot: str):
        store = Store(tmp_path / "store.db", gate_id="g-aurora", ship="9300001", boot_id=boot)
        journal = Journal(tmp_path / "journal.db", port="santos", gate_id="g-aurora", key=KEY, boot_id=boot)
        return store, journal

    store, journal = open_gate("boot-A")
    store.load_csv_files(demo / "workers.csv", demo / "cards.csv", demo / "escala.csv", at=T0)
    inner = FakeClock(T0, mono_ns=3_600_000_000_000)
    [admit] = _loop(store, journal, GuardedClock(inner)).handle(card_read(V001_CARD, inner))
    assert admit.outcome is Outcome.ADMIT
    store.close()
    journal.close()

    store, journal = open_gate("boot-B")  # the power came back
    try:
        inner = FakeClock(EPOCH_BOOT, mono_ns=2_000_000_000)
        loop = _loop(store, journal, GuardedClock(inner, last_trusted=journal.last_trusted_at()))
        loop.recover()
        assert store.open_shift("V001") is not None
        inner.advance(5)
        [out] = loop.handle(card_read(V001_CARD, inner))
        assert out.outcome is Outcome.EXIT and out.flags == (Flag.CLOCK_UNTRUSTED,)
        assert store.open_shift("V001") is None
        exit_tap = _taps(journal)[-1]
        assert exit_tap.boot_id == "boot-B" and exit_tap.occurred_at == T0 + dt.timedelta(seconds=5)
    finally:
        store.close()
        journal.close()


def test_G13_in_the_same_boot_a_rolled_back_batch_keeps_the_stay_on_the_monotonic_clock(
        store, journal, mocker):
    """G9/G13: admitted in this boot; a later batch that the journal could not commit reloads the
    store's caches; the clock then falls to 1970. 60 s of monotonic time since the admit < 5 min:
    ALREADY ABOARD (the admit's boot and monotonic time survived the reload); at 6 min: EXIT."""
    inner = FakeClock(T0)
    loop = _loop(store, journal, GuardedClock(inner))
    [admit] = loop.handle(card_read(V001_CARD, inner))
    assert admit.outcome is Outcome.ADMIT
    inner.advance(5)
    failing = mocker.patch("edge.journal_batch.JournalBatch.commit", side_effect=StoreError("disk I/O error"))
    loop.handle(card_read("0A04A10002", inner))  # V002's admit: not journaled, the store rolled back
    mocker.stop(failing)
    assert store.open_shift("V002") is None and store.open_shift("V001").boot_id == "boot-1"
    inner.set_wall(EPOCH_BOOT)
    inner.advance(55)
    [aboard] = loop.handle(card_read(V001_CARD, inner))
    assert aboard.outcome is Outcome.ABOARD and Flag.CLOCK_UNTRUSTED in aboard.flags
    inner.advance(300)
    [out] = loop.handle(card_read(V001_CARD, inner))
    assert out.outcome is Outcome.EXIT and store.open_shift("V001") is None
