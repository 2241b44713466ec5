"""The check every fault run of the scale-out tiers ends with (testkit/fault_check.py): it holds on a
ledger the journals' events reached intact, and fails on a copy of that ledger with an event
deleted or with an event's stored bytes altered (the shifts differ, the audit finds it)."""

from __future__ import annotations

import datetime as dt
import shutil
import uuid

import msgspec
import pytest
from sqlalchemy import delete, select, update

from central.db import make_engine
from central.ingest.keys import add_gate
from central.ledger.schema import events
from edge.journal import Journal
from portgate.config import read_secret
from testkit.fault_check import (ReplayLog, assert_exactly_once, assert_same_pay, audit_exit, check_fault_run,
                                 ingest_journals, journal_events, shift_tap, signing_gate, split_direct)
from wire.events import decode, encode

GATES = 2
TAPS = 16


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two signing gates' journals of ``TAPS`` shift taps each, and a ledger that received them all."""
    root = tmp_path_factory.mktemp("faultcheck")
    keys = root / "keys"
    keys.mkdir()
    journals = []
    for g in range(GATES):
        gid = f"g{g}"
        j = Journal(root / f"{gid}.journal.db", port="santos", gate_id=gid, key=read_secret(add_gate(keys, gid)),
                    boot_id=str(uuid.uuid4()), signer=signing_gate(keys, root / gid, gid))
        for i in range(TAPS):
            payload, at = shift_tap(g, i)
            j.append(payload, now=at)
        j.close()
        journals.append(j.path)
    ledger = root / "ledger.db"
    ingest_journals(f"sqlite:///{ledger}", journal_events(journals), keys)
    return root, keys, journals, ledger


def copy_of(run, tmp_path) -> str:
    path = tmp_path / "copy.db"
    shutil.copy(run[3], path)
    return f"sqlite:///{path}"


def test_shift_taps_pair_entries_and_exits_of_registered_workers():
    first, at0 = shift_tap(1, 0)
    second, at1 = shift_tap(1, 1)
    assert (first.decision, second.decision) == ("admit", "exit")
    assert first.registration == second.registration == "V007" and first.dispatch == second.dispatch
    assert at0.wall < at1.wall < shift_tap(1, 2)[1].wall and at0.mono_ns < at1.mono_ns
    assert shift_tap(1, 12)[0].registration == "V007" and shift_tap(1, 2)[0].registration == "V008"


def test_the_check_holds_on_a_ledger_with_every_event(run, tmp_path):
    root, keys, journals, _ = run
    done = check_fault_run(copy_of(run, tmp_path), journals, keys, tmp_path)
    assert (done.events, done.direct, done.replayed) == (GATES * TAPS, GATES * TAPS, 0)
    assert done.shifts == GATES * TAPS // 2 == done.statements and done.total > 0 and done.audit == 0


def test_an_event_stored_after_its_gate_replayed_it_counts_as_replayed(run):
    rows = assert_exactly_once(f"sqlite:///{run[3]}", journal_events(run[2]))
    replays = ReplayLog()
    replays.add("g1", [3, 4], dt.datetime(2000, 1, 1, tzinfo=dt.UTC))  # read back before the ledger stored them
    replays.add("g0", [5], dt.datetime(2999, 1, 1, tzinfo=dt.UTC))  # after: it had arrived directly
    assert split_direct(rows, replays) == (GATES * TAPS - 2, 2)


def test_a_missing_event_fails_the_check_and_the_audit(run, tmp_path):
    url = copy_of(run, tmp_path)
    engine = make_engine(url)
    with engine.begin() as c:
        c.execute(delete(events).where(events.c.gate_id == "g1", events.c.seq == 6))
    engine.dispose()
    with pytest.raises(AssertionError, match=r"missing from the ledger \[\('g1', 6\)\] \(1\)"):
        check_fault_run(url, run[2], run[1], tmp_path)
    code, said = audit_exit(url, run[1])
    assert code == 1 and "MISSING" in said, said


def test_an_event_stored_twice_or_from_no_journal_fails(run, tmp_path):
    url = copy_of(run, tmp_path)
    engine = make_engine(url)
    with engine.begin() as c:
        c.execute(update(events).where(events.c.gate_id == "g0", events.c.seq == 2).values(event_id="forged"))
    engine.dispose()
    with pytest.raises(AssertionError, match=r"missing from the ledger \[\('g0', 2\)\].*in no journal \[\('g0', 2\)\]"):
        assert_exactly_once(url, journal_events(run[2]))


def test_a_tampered_event_changes_a_shift_and_fails_the_audit(run, tmp_path):
    """An exit's stored bytes altered (two hours later, the gate's signature kept): every event id is
    still there once, but the shift and its pay differ from the fault-free run's, and the audit
    records a bad signature."""
    url = copy_of(run, tmp_path)
    engine = make_engine(url)
    with engine.begin() as c:
        raw = c.execute(select(events.c.raw).where(events.c.gate_id == "g0", events.c.seq == 4)).scalar_one()
        ev = decode(raw)
        later = msgspec.structs.replace(ev, occurred_at=ev.occurred_at + dt.timedelta(hours=2))
        c.execute(update(events).where(events.c.gate_id == "g0", events.c.seq == 4)
                  .values(raw=encode(later), occurred_at=later.occurred_at))
    engine.dispose()
    journaled = journal_events(run[2])
    assert_exactly_once(url, journaled)
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    ingest_journals(reference, journaled, run[1])
    with pytest.raises(AssertionError, match="shifts differ from the fault-free run's"):
        assert_same_pay(url, reference, journaled)
    code, said = audit_exit(url, run[1])
    assert code == 1 and "BAD_SIGNATURE" in said, said


def test_a_journal_without_shifts_is_refused_unless_told(tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    j = Journal(tmp_path / "g0.journal.db", port="santos", gate_id="g0", key=read_secret(add_gate(keys, "g0")),
                boot_id=str(uuid.uuid4()), signer=signing_gate(keys, tmp_path / "g0", "g0"))
    payload, at = shift_tap(0, 0)
    j.append(msgspec.structs.replace(payload, decision="deny", registration=None, dispatch=None), now=at)
    j.close()
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    ingest_journals(url, journal_events([j.path]), keys)
    with pytest.raises(AssertionError, match="made no shift"):
        check_fault_run(url, [j.path], keys, tmp_path)
    assert check_fault_run(url, [j.path], keys, tmp_path / "again", shifts_expected=False).shifts == 0


def test_replays_are_read_from_a_gate_log_and_a_gate_process_file(tmp_path):
    log = tmp_path / "gate.log"
    log.write_text('not json\n{"event": "uplink.connected", "gate_id": "g-aurora"}\n'
                   '{"event": "uplink.replay", "gate_id": "g-aurora", "seq_from": 4, "seq_to": 6, "n": 3, '
                   '"timestamp": "2026-12-07T02:00:00.5Z"}\n')
    lines = tmp_path / "replays.jsonl"
    lines.write_text('{"gate": "g3", "seqs": [9], "at": "2026-12-07T02:00:01+00:00"}\n'
                     '{"gate": "g3", "seqs": [9, 10], "at": "2026-12-07T02:00:02+00:00"}\n')
    replays = ReplayLog()
    replays.read_gate_log(log)
    replays.read_jsonl(lines)
    replays.read_jsonl(tmp_path / "absent.jsonl")
    at = dt.datetime(2026, 12, 7, 2, tzinfo=dt.UTC)
    half = at + dt.timedelta(seconds=0.5)
    assert replays.first == {("g-aurora", 4): half, ("g-aurora", 5): half, ("g-aurora", 6): half,
                             ("g3", 9): at + dt.timedelta(seconds=1), ("g3", 10): at + dt.timedelta(seconds=2)}
