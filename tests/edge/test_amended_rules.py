"""The amended G2, G6 and G9 through the gate loop (real store, journal, engine) and the gate.toml
reader ``direction`` (validated at start-up, STYLE.md 12)."""

from __future__ import annotations

import shutil

import pytest

from edge.config import load_gate_config
from edge.indicator import COLOURS
from edge.rules.model import Flag, Outcome
from edge.store import Store
from portgate.errors import ConfigError
from testkit.gate_process import write_gate_config
from wire.events import TapPayload

from .conftest import DEMO, GATE, SHIP, T0, card_read

V001_CARD, V002_CARD = "0A04A10001", "0A04A10002"
V001_OLD = "0A04A1F001"  # V001's lost card


def taps(journal):
    return [e.payload for e in journal.events_between(1, 10**9) if isinstance(e.payload, TapPayload)]


def test_g9_a_card_left_on_the_reader_is_aboard_journaled_as_aboard_and_changes_nothing(
        make_loop, clock, journal, store):
    loop = make_loop()
    loop.handle(card_read(V001_CARD, clock))
    admitted = store.open_shift("V001").admitted_at
    clock.advance(4)  # past the 3 s debounce, inside min_stay_minutes
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.ABOARD and COLOURS[decision.outcome] == "amber"
    assert decision.message_pt.startswith("JÁ A BORDO")
    assert store.open_shift("V001").admitted_at == admitted and store.last_shift_end("V001") is None
    assert [(p.decision, p.rules_failed) for p in taps(journal)] == [("admit", []), ("aboard", [])]
    clock.advance(5 * 60)
    [decision] = loop.handle(card_read(V001_CARD, clock))
    assert decision.outcome is Outcome.EXIT and store.open_shift("V001") is None


def test_g2_a_blocked_card_of_the_holder_aboard_leaves_his_shift_open_in_the_store(
        make_loop, clock, journal, tmp_path):
    cards = tmp_path / "cards.csv"
    shutil.copy(DEMO / "cards.csv", cards)
    with cards.open("a", encoding="utf-8") as fh:
        fh.write(f"{V001_OLD},control,V001,lost\n")
    own = Store(tmp_path / "own-store.db", gate_id=GATE, ship=SHIP, boot_id="boot-1")
    own.load_csv_files(DEMO / "workers.csv", cards, DEMO / "escala.csv", at=T0)
    try:
        loop = make_loop()
        loop.store = own
        loop.handle(card_read(V001_CARD, clock))
        clock.advance(3600)
        [decision] = loop.handle(card_read(V001_OLD, clock))
        assert decision.outcome is Outcome.DENY and decision.flags == (Flag.RETAIN_CARD,)
        assert "perdido" in decision.message_pt
        assert own.open_shift("V001") is not None and own.last_shift_end("V001") is None
        clock.advance(5 * 3600 + 40 * 60)  # 07:00 local, the end of period 01-07
        [decision] = loop.handle(card_read(V001_CARD, clock))
        assert decision.outcome is Outcome.EXIT and decision.flags == ()
        assert [p.decision for p in taps(journal)] == ["admit", "deny", "exit"]
    finally:
        own.close()


def test_g9_the_loop_gives_each_presentation_its_readers_declared_direction(make_loop, clock, journal, store):
    loop = make_loop(directions={"r-out": "out", "r-in": "in"})
    [d] = loop.handle(card_read(V002_CARD, clock, reader_id="r-out"))
    assert d.outcome is Outcome.EXIT and d.flags == (Flag.NO_ENTRY,)
    assert taps(journal)[-1].flags == ["NO_ENTRY"] and store.open_shift("V002") is None
    [d] = loop.handle(card_read(V001_CARD, clock, reader_id="r-in"))
    assert d.outcome is Outcome.ADMIT
    clock.advance(6 * 3600)
    [d] = loop.handle(card_read(V001_CARD, clock, reader_id="r-in"))
    assert d.outcome is Outcome.ABOARD and store.open_shift("V001") is not None
    clock.advance(4)  # the same card on any reader within 3 s is the same read (G9 debounce)
    [d] = loop.handle(card_read(V001_CARD, clock, reader_id="r-out"))
    assert d.outcome is Outcome.EXIT and store.open_shift("V001") is None


def test_g6_a_late_arrival_is_denied_through_the_loop_and_opens_nothing(make_loop, clock, journal, store):
    loop = make_loop()
    clock.advance(2 * 3600)  # 03:20 local: period 01-07 started 2 h 20 ago
    [d] = loop.handle(card_read(V001_CARD, clock))
    assert d.outcome is Outcome.DENY and d.flags == (Flag.LATE_ARRIVAL,)
    assert store.open_shift("V001") is None and store.last_shift_end("V001") is None
    assert [(p.decision, p.flags) for p in taps(journal)] == [("deny", ["LATE_ARRIVAL"])]


# -- gate.toml: readers' direction -----------------------------------------------------------------

def test_reader_direction_is_read_from_gate_toml(tmp_path):
    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text().replace('driver = "fifo"', 'driver = "fifo"\ndirection = "out"'))
    loaded = load_gate_config(cfg)
    assert loaded.directions() == {"r-control": "out"}


def test_reader_direction_defaults_to_both(tmp_path):
    assert load_gate_config(write_gate_config(tmp_path)).directions() == {"r-control": "both"}


@pytest.mark.parametrize("extra,key,text", [
    ('direction = "sideways"', "readers[0].direction", "Invalid enum value 'sideways'"),
    ('direction = "in"', "$.readers", "no exit could be recorded"),
])
def test_bad_reader_direction_is_refused_naming_the_key(tmp_path, extra, key, text):
    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text().replace('driver = "fifo"', f'driver = "fifo"\n{extra}'))
    with pytest.raises(ConfigError) as err:
        load_gate_config(cfg)
    assert key in str(err.value) and text in str(err.value)


def test_a_badge_reader_takes_no_direction(tmp_path):
    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text().replace(
        '[seed]', '[[readers]]\nid = "r-badge"\nkind = "badge"\ndriver = "fake"\ndirection = "out"\n\n[seed]'))
    with pytest.raises(ConfigError) as err:
        load_gate_config(cfg)
    assert "$.readers[1].direction" in str(err.value) and "badge reader" in str(err.value)


def test_g7_a_no_entry_exit_with_no_period_records_no_shift_end_at_the_gate(make_loop, clock, store):
    """G7/G9: a NO_ENTRY exit (out reader, no open shift) matched to no period starts no rest."""
    loop = make_loop()
    loop.directions = {"r-out": "out"}
    clock.advance(12 * 3600)  # far from any of V001's periods (+ exit grace)
    [d] = loop.handle(card_read(V001_CARD, clock, reader_id="r-out"))
    assert d.outcome is Outcome.EXIT and d.flags == (Flag.NO_ENTRY,) and d.dispatch is None
    assert store.last_shift_end("V001") is None
