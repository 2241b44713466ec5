"""Who is aboard, from the gangway gate's taps in a real SQLite ledger, against the crew list."""

from __future__ import annotations

import datetime as dt
import json

import msgspec
import pytest

from central.db import load_all_tables, make_engine
from central.inspection.aboard import GateTap, Passage, State, who_is_aboard
from central.inspection.aboard_db import gate_taps
from central.ledger.schema import events
from app.cli import main
from portgate.errors import StoreError
from tests.central.inspection.conftest import CREW_COLUMNS, member, write_csv
from wire.events import Event, TapPayload, encode, new_event_id, sign

KEY = b"gate-key-for-tests"
T0 = dt.datetime(2024, 6, 10, 12, 0, tzinfo=dt.UTC)


def tap_event(gate, seq, minutes, registration, decision, *, trusted=True):
    payload = TapPayload(
        uid=f"{seq:08X}",
        reader_id="r1",
        reader_kind="control",
        decision=decision,
        registration=registration,
        card_kind="control",
    )
    return sign(
        Event(
            event_id=new_event_id(),
            port="santos",
            gate_id=gate,
            boot_id="b1",
            seq=seq,
            occurred_at=T0 + dt.timedelta(minutes=minutes),
            clock_trusted=trusted,
            mono_ns=seq * 1000,
            payload=payload,
        ),
        KEY,
    )


def insert(engine, evs):
    with engine.begin() as conn:
        for ev in evs:
            conn.execute(
                events.insert().values(
                    event_id=ev.event_id,
                    port=ev.port,
                    gate_id=ev.gate_id,
                    boot_id=ev.boot_id,
                    seq=ev.seq,
                    occurred_at=ev.occurred_at,
                    clock_trusted=ev.clock_trusted,
                    mono_ns=ev.mono_ns,
                    type="tap",
                    registration=ev.payload.registration,
                    decision=ev.payload.decision,
                    payload=msgspec.to_builtins(ev.payload),
                    mac=ev.mac,
                    raw=encode(ev),
                    received_at=ev.occurred_at,
                )
            )


@pytest.fixture
def ledger(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    engine = make_engine(url)
    load_all_tables().create_all(engine)
    insert(
        engine,
        [
            tap_event("g1", 1, 0, "C1", "admit"),
            tap_event("g1", 2, 10, "C1", "exit"),  # C1 goes ashore
            tap_event("g1", 3, 20, "C2", "exit"),
            tap_event("g1", 4, 30, "C2", "admit"),  # C2 back on board
            tap_event("g1", 5, 40, "W9", "admit"),  # a watchman, not crew
            tap_event("g1", 6, 50, "C4", "deny"),  # a deny moves nobody
            tap_event("g1", 7, 90, "C2", "exit"),  # after the time asked about
            tap_event("g2", 1, 5, "C3", "exit"),  # another gate
        ],
    )
    yield url, engine
    engine.dispose()


CREW = [member("C1", "BR"), member("C2", "PH"), member("C3", "BR"), member("C4", "GB")]


def test_aboard_from_a_real_sqlite_ledger(ledger):
    _, engine = ledger
    at = T0 + dt.timedelta(minutes=60)
    taps = gate_taps(engine, "g1", until=at)
    assert [(t.registration, t.seq, t.passage) for t in taps] == [
        ("C1", 1, Passage.BOARDS),
        ("C1", 2, Passage.ASHORE),
        ("C2", 3, Passage.ASHORE),
        ("C2", 4, Passage.BOARDS),
        ("W9", 5, Passage.BOARDS),
    ]
    assert all(t.at.tzinfo is not None for t in taps)
    report = who_is_aboard(taps, CREW, at=at, gate_id="g1")
    assert [(x.crew_id, x.state, x.on_crew_list) for x in report.lines] == [
        ("C1", State.ASHORE, True),
        ("C2", State.ABOARD, True),
        ("C3", State.PRESUMED_ABOARD, True),
        ("C4", State.PRESUMED_ABOARD, True),
        ("W9", State.ABOARD, False),
    ]
    assert [x.crew_id for x in report.not_on_list] == ["W9"]


def test_later_taps_change_the_answer_for_a_later_time(ledger):
    _, engine = ledger
    at = T0 + dt.timedelta(minutes=90)
    report = who_is_aboard(gate_taps(engine, "g1", until=at), CREW, at=at)
    assert {x.crew_id: x.state for x in report.lines}["C2"] is State.ASHORE


def test_sequence_order_wins_over_an_untrusted_clock():
    # seq 2 (exit) happened after seq 1 (admit) although the unsynchronised clock says earlier.
    taps = [
        GateTap("C1", T0, 1, Passage.BOARDS),
        GateTap("C1", T0 - dt.timedelta(hours=1), 2, Passage.ASHORE, clock_trusted=False),
    ]
    report = who_is_aboard(taps, [member("C1", "BR")], at=T0)
    assert report.lines[0].state is State.ASHORE
    assert report.lines[0].last_tap.clock_trusted is False


def test_aboard_command_against_the_ledger(ledger, tmp_path, capsys):
    url, _ = ledger
    crew = write_csv(
        tmp_path / "crew.csv",
        CREW_COLUMNS,
        [["C1", "Ana", "BR", "officer", "deck", ""], ["C2", "Ben", "PH", "officer", "engine", ""]],
    )
    assert (
        main(
            [
                "crew",
                "aboard",
                "--db",
                url,
                "--gate",
                "g1",
                "--at",
                "2024-06-10T10:00-03:00",
                "--crew",
                str(crew),
                "--format",
                "json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert [(x["crew_id"], x["state"], x["last_tap_seq"]) for x in data["lines"]] == [
        ("C1", "ashore", 2),
        ("C2", "aboard", 4),
        ("W9", "aboard", 5),
    ]
    assert (
        main(
            [
                "crew",
                "aboard",
                "--db",
                url,
                "--gate",
                "g1",
                "--at",
                "2024-06-10T10:00-03:00",
                "--crew",
                str(crew),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "FORA DA LISTA / NOT ON CREW LIST" in text and "A bordo / aboard: 2" in text


def test_an_unusable_ledger_is_a_store_error(tmp_path, capsys):
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    with pytest.raises(StoreError, match="cannot read ledger events"):
        gate_taps(engine, "g1", until=T0)
    engine.dispose()
    crew = write_csv(
        tmp_path / "crew.csv", CREW_COLUMNS, [["C1", "Ana", "BR", "officer", "deck", ""]]
    )
    assert (
        main(
            [
                "crew",
                "aboard",
                "--db",
                f"sqlite:///{tmp_path / 'empty.db'}",
                "--gate",
                "g1",
                "--at",
                "2024-06-10T09:00",
                "--crew",
                str(crew),
            ]
        )
        == 2
    )
    assert "--at '2024-06-10T09:00' has no UTC offset" in capsys.readouterr().err
