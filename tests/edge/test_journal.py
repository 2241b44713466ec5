"""The journal: committed appends, gapless seq across restarts, outbox priority, quarantine."""

from __future__ import annotations

import sqlite3

import pytest

from edge.journal import Journal
from testkit.journal_faults import tear
from edge.rules.model import Now
from wire.events import AlertPayload, ConfiscationPayload, TapPayload, decode, encode, verify

from .conftest import GATE, KEY, T0

NOW = Now(wall=T0, mono_ns=5, clock_trusted=False)


def tap(uid="0A04A10001", decision="admit"):
    return TapPayload(uid=uid, reader_id="r1", reader_kind="control", decision=decision)


def conf(uid="0A04A10001"):
    return ConfiscationPayload(uid=uid, registration="V001", inspector_uid="1F", inspector_registration="F1",
                               reason_flag="ROTATION_JUMP", article="83.611 art. 20 i")


def open_journal(path, boot="boot-1"):
    return Journal(path, port="santos", gate_id=GATE, key=KEY, boot_id=boot)


def test_append_returns_a_signed_event_already_committed(journal, tmp_path):
    ev = journal.append(tap(), now=NOW)
    assert (ev.seq, ev.gate_id, ev.port, ev.boot_id, ev.occurred_at, ev.clock_trusted, ev.mono_ns) == (
        1, GATE, "santos", "boot-1", T0, False, 5)
    assert verify(ev, KEY)
    # a second, independent connection sees the row: it was committed before append returned
    other = sqlite3.connect(tmp_path / "journal.db")
    assert other.execute("SELECT seq, event_id FROM journal").fetchall() == [(1, ev.event_id)]
    other.close()


def test_seq_is_gapless_and_continues_across_restarts(tmp_path):
    j = open_journal(tmp_path / "j.db")
    seqs = [j.append(tap(), now=NOW).seq for _ in range(5)]
    j.close()
    j2 = open_journal(tmp_path / "j.db", boot="boot-2")
    more = [j2.append(tap(), now=NOW) for _ in range(3)]
    assert seqs + [e.seq for e in more] == list(range(1, 9))
    assert {e.boot_id for e in more} == {"boot-2"}
    assert [e.seq for e in j2.events_between(1, 100)] == list(range(1, 9))
    j2.close()


def test_outbox_serves_priority_first_then_seq_and_forgets_only_what_was_marked_sent(journal):
    journal.append(tap("01010101"), now=NOW)
    journal.append(tap("02020202"), now=NOW)
    journal.append(conf(), now=NOW, priority=1)
    journal.append(tap("03030303"), now=NOW)
    assert [e.seq for e in journal.outbox_batch(10)] == [3, 1, 2, 4]
    assert [e.seq for e in journal.outbox_batch(2)] == [3, 1]
    assert journal.outbox_depth() == 4
    assert journal.oldest_unsent_at() == T0
    journal.mark_sent([3, 1, 1, 999])
    assert journal.outbox_depth() == 2
    assert [e.seq for e in journal.outbox_batch(10)] == [2, 4]
    journal.mark_sent([2, 4])
    assert journal.outbox_batch(10) == [] and journal.oldest_unsent_at() is None
    assert [e.seq for e in journal.events_between(2, 3)] == [2, 3]  # replay serves sent rows too


def test_outbox_wire_serves_the_stored_signed_bytes_in_outbox_order(journal):
    evs = [journal.append(tap("01010101"), now=NOW), journal.append(conf(), now=NOW, priority=1),
           journal.append(tap("02020202"), now=NOW)]
    wire_rows = journal.outbox_wire(10)
    assert [seq for seq, _ in wire_rows] == [2, 1, 3] == [e.seq for e in journal.outbox_batch(10)]
    by_seq = {e.seq: e for e in evs}
    for seq, body in wire_rows:
        assert isinstance(body, bytes) and body == encode(by_seq[seq])  # published as they are
        assert decode(body) == by_seq[seq] and verify(decode(body), KEY)
    assert journal.outbox_wire(1) == wire_rows[:1]


def test_mark_sent_marks_exactly_the_given_seqs_not_the_gaps_between_runs(journal):
    for i in range(8):
        journal.append(tap(f"{i:08X}"), now=NOW)
    journal.mark_sent([7, 1, 2, 4, 5, 2])  # runs 1-2, 4-5, 7; 3, 6 and 8 were not acknowledged
    assert [e.seq for e in journal.outbox_batch(10)] == [3, 6, 8]
    assert journal.outbox_depth() == 3 and journal.oldest_unsent_at() == T0
    journal.mark_sent([3, 6, 8])
    assert journal.outbox_depth() == 0 and journal.outbox_batch(10) == []


def test_mark_sent_skips_the_fsync_but_appends_stay_synchronous_full(journal):
    journal.append(tap(), now=NOW)
    full = journal._conn.execute("PRAGMA synchronous").fetchone()[0]
    journal.mark_sent([1])
    assert full == 2 and journal._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again


def test_a_failed_mark_sent_raises_store_error_marks_nothing_and_keeps_appends_full(journal, mocker):
    from portgate.errors import StoreError

    journal.append(tap(), now=NOW)
    real = journal._conn
    # sqlite3.Connection is immutable: wrap it to fail the UPDATE (a real disk error is not on demand)
    conn = mocker.MagicMock(wraps=real)
    conn.executemany.side_effect = sqlite3.OperationalError("disk I/O error")
    type(conn).in_transaction = mocker.PropertyMock(side_effect=lambda: real.in_transaction)
    journal._conn = conn
    try:
        with pytest.raises(StoreError, match="mark_sent"):
            journal.mark_sent([1])
    finally:
        journal._conn = real
    assert not real.in_transaction and real.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert journal.outbox_depth() == 1 and [e.seq for e in journal.outbox_batch(5)] == [1]


def test_seq_runs_groups_contiguous_seqs():
    from edge.journal import seq_runs

    assert seq_runs([5, 1, 2, 3, 9, 2]) == [(1, 3), (5, 5), (9, 9)]
    assert seq_runs([]) == [] and seq_runs(range(10, 0, -1)) == [(1, 10)]


def test_append_many_commits_consecutive_seqs_together(journal):
    evs = journal.append_many([tap(), conf()], now=NOW, priority=1)
    assert [e.seq for e in evs] == [1, 2] and journal.last_seq() == 2
    assert [type(e.payload).__name__ for e in journal.outbox_batch(5)] == ["TapPayload", "ConfiscationPayload"]


def test_outbox_depth_survives_restart(tmp_path):
    j = open_journal(tmp_path / "j.db")
    for _ in range(4):
        j.append(tap(), now=NOW)
    j.mark_sent([1])
    j.close()
    j2 = open_journal(tmp_path / "j.db")
    assert j2.outbox_depth() == 3 and j2.last_seq() == 4
    j2.close()


def test_corrupt_journal_is_quarantined_and_numbering_continues_with_an_alert_first(tmp_path):
    path = tmp_path / "j.db"
    j = open_journal(path)
    for _ in range(10):
        j.append(tap(), now=NOW)
    j.mark_sent(range(1, 7))
    j.close()
    # scribble over the middle of the file (a torn SD-card write)
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)
    path.write_bytes(bytes(data))

    j2 = open_journal(path, boot="boot-2")
    assert j2.quarantined_to is not None and j2.quarantined_to.exists()
    first = j2.outbox_batch(1)[0]
    assert isinstance(first.payload, AlertPayload) and first.payload.code == "STORE_QUARANTINED"
    assert first.seq == 11  # never goes backwards: the office sees no repeated seq
    assert "resumed_at=11 lost_after=6" in first.payload.detail
    assert j2.append(tap(), now=NOW).seq == 12
    j2.close()


def test_garbage_journal_file_without_hwm_starts_at_one_with_the_alert(tmp_path):
    path = tmp_path / "j.db"
    path.write_bytes(b"\x00garbage" * 1000)
    j = open_journal(path)
    ev = j.outbox_batch(5)
    assert [(e.seq, e.payload.code) for e in ev] == [(1, "STORE_QUARANTINED")]
    assert "lost_after=-1" in ev[0].payload.detail
    assert [p.name.split(".corrupt-")[0] for p in tmp_path.glob("j.db.corrupt-*")] == ["j.db"]
    j.close()


def _journal_with(path, n, sent):
    j = open_journal(path)
    j.append_many([tap() for _ in range(n)], now=NOW)
    j.mark_sent(range(1, sent + 1))
    j.close()


def test_a_garbage_seq_salvaged_from_a_corrupt_journal_loses_to_the_hwm_file(tmp_path):
    path = tmp_path / "j.db"
    _journal_with(path, 417, 400)
    assert (tmp_path / "j.db.hwm").read_text().split() == ["417", "400"]
    tear(path, garbage_seq=637482)
    from edge.sqlite_files import salvage_max
    j = open_journal(path, boot="boot-2")
    assert j.quarantined_to is not None
    assert salvage_max(j.quarantined_to, "SELECT max(seq) FROM journal") == 637482  # the tester's case
    alert = j.outbox_batch(1)[0]
    assert alert.seq == 418 and "resumed_at=418 lost_after=400" in alert.payload.detail
    assert j.append(tap(), now=NOW).seq == 419
    j.close()


def test_a_plausible_salvaged_seq_ahead_of_a_stale_hwm_file_is_kept(tmp_path):
    path = tmp_path / "j.db"
    _journal_with(path, 417, 400)
    (tmp_path / "j.db.hwm").write_text("400 400\n")  # the hwm file lags the journal (crash before close)
    tear(path)
    j = open_journal(path, boot="boot-2")
    alert = j.outbox_batch(1)[0]
    assert alert.seq == 418 and "resumed_at=418 lost_after=400" in alert.payload.detail
    j.close()


def test_without_an_hwm_file_the_salvaged_seq_is_all_there_is(tmp_path):
    path = tmp_path / "j.db"
    _journal_with(path, 20, 0)
    (tmp_path / "j.db.hwm").unlink()
    tear(path)
    j = open_journal(path, boot="boot-2")
    alert = j.outbox_batch(1)[0]
    assert alert.seq == 21 and "lost_after=-1" in alert.payload.detail
    j.close()


def test_the_hwm_file_follows_appends_without_a_close_or_mark_sent(tmp_path):
    from edge.journal import HWM_EVERY

    path = tmp_path / "j.db"
    j = open_journal(path)
    for _ in range(2 * HWM_EVERY + 3):
        j.append(tap(), now=NOW)
    last, sent = (tmp_path / "j.db.hwm").read_text().split()
    assert int(last) >= 2 * HWM_EVERY and sent == "0"  # a crash now loses at most HWM_EVERY seqs of it
    j._conn.close()  # no close(): as after a power cut
