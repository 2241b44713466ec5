"""The journal: committed appends, gapless seq across restarts, outbox priority, quarantine."""

from __future__ import annotations

import sqlite3

import pytest

from edge.journal import Journal
from testkit.journal_faults import tear
from edge.rules.model import Now
from wire.events import AlertPayload, ConfiscationPayload, TapPayload, decode, encode, verify

from .conftest import GATE, KEY, T0
from testkit.journal_faults import LEGACY_SCHEMA as _LEGACY_SCHEMA  # the layout before schema version 2

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
    from edge.sent_ranges import seq_runs

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


@pytest.mark.parametrize("how", ["truncated", "missing"])
def test_an_empty_or_missing_journal_beside_an_hwm_file_is_a_loss_the_alert_names(tmp_path, how):
    """``: > journal.db`` (or the file gone) with the .hwm file kept: the rows are lost, so it is
    handled as a quarantine: numbering continues after the hwm and the alert says what was lost
    (the office then records 7..10 as lost instead of asking a replay forever)."""
    from wire.chain import segment_loss

    path = tmp_path / "j.db"
    _journal_with(path, 10, 6)
    assert (tmp_path / "j.db.hwm").read_text().split() == ["10", "6"]
    if how == "truncated":
        path.write_bytes(b"")
    else:
        path.unlink()
    j = open_journal(path, boot="boot-2")
    alert = j.outbox_batch(5)
    assert [(e.seq, e.payload.code) for e in alert] == [(11, "STORE_QUARANTINED")]
    assert "resumed_at=11 lost_after=6" in alert[0].payload.detail
    assert segment_loss(alert[0]) == (7, 10)
    if how == "truncated":
        assert j.quarantined_to is not None and j.quarantined_to.read_bytes() == b""
        assert "empty journal file (0 bytes)" in alert[0].payload.detail
    else:
        assert j.quarantined_to is None and "journal file j.db missing" in alert[0].payload.detail
    assert j.append(tap(), now=NOW).seq == 12
    j.close()
    j2 = open_journal(path, boot="boot-3")  # the fresh file holds rows: no second alert
    assert j2.quarantined_to is None and j2.last_seq() == 12 and j2.outbox_depth() == 2
    j2.close()


def test_a_journal_file_without_rows_beside_an_hwm_file_is_a_loss_too(tmp_path):
    path = tmp_path / "j.db"
    _journal_with(path, 5, 5)
    c = sqlite3.connect(path)
    c.execute("DELETE FROM journal")
    c.commit()
    c.close()
    j = open_journal(path, boot="boot-2")
    alert = j.outbox_batch(1)[0]
    assert alert.seq == 6 and "resumed_at=6 lost_after=5" in alert.payload.detail
    assert "journal file without event rows" in alert.payload.detail
    j.close()


@pytest.mark.parametrize("hwm", [None, "0 0\n"])
def test_a_new_gate_without_an_hwm_file_starts_fresh_without_an_alert(tmp_path, hwm):
    path = tmp_path / "j.db"
    path.write_bytes(b"")
    if hwm is not None:
        (tmp_path / "j.db.hwm").write_text(hwm)
    j = open_journal(path)
    assert j.quarantined_to is None and j.outbox_depth() == 0 and j.last_seq() == 0
    assert j.append(tap(), now=NOW).seq == 1
    assert list(tmp_path.glob("j.db.corrupt-*")) == []
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
    from edge.journal_hwm import HWM_EVERY

    path = tmp_path / "j.db"
    j = open_journal(path)
    for _ in range(2 * HWM_EVERY + 3):
        j.append(tap(), now=NOW)
    last, sent = (tmp_path / "j.db.hwm").read_text().split()
    assert int(last) >= 2 * HWM_EVERY and sent == "0"  # a crash now loses at most HWM_EVERY seqs of it
    j._conn.close()  # no close(): as after a power cut



@pytest.mark.parametrize("every_s, after_second_mark", [(0.0, "4"), (3600.0, "2")])
def test_marks_rewrite_the_hwm_file_at_most_every_hwm_sent_every_s_and_close_writes_the_rest(
        tmp_path, mocker, every_s, after_second_mark):
    """The rename of the .hwm file costs more than the mark itself on a busy card: marks within
    ``HWM_SENT_EVERY_S`` of the last rewrite leave it; close writes the newest sent seq (a crash in
    between only makes lost_after lower)."""
    import edge.journal_outbox as journal_module

    mocker.patch.object(journal_module, "HWM_SENT_EVERY_S", every_s)
    path = tmp_path / "j.db"
    j = open_journal(path)
    for _ in range(10):
        j.append(tap(), now=NOW)
    j.mark_sent([1, 2])
    assert (tmp_path / "j.db.hwm").read_text().split()[1] == "2"
    j.mark_sent([3, 4])
    assert (tmp_path / "j.db.hwm").read_text().split()[1] == after_second_mark
    j.mark_sent([6])
    j.close()
    assert (tmp_path / "j.db.hwm").read_text().split() == ["10", "6"]


# -- sent bookkeeping (journal_sent ranges, schema version 2) -------------------------------------

def _sent_rows(path):
    c = sqlite3.connect(path)
    try:
        return c.execute("SELECT lo, hi FROM journal_sent ORDER BY lo").fetchall()
    finally:
        c.close()


def test_out_of_order_acks_keep_exactly_the_acknowledged_rows_sent_across_a_restart(tmp_path):
    path = tmp_path / "j.db"
    j = open_journal(path)
    j.append_many([tap() for _ in range(10)], now=NOW)
    j.mark_sent([5, 3, 9])
    assert _sent_rows(path) == [(3, 3), (5, 5), (9, 9)]
    assert j.outbox_depth() == 7 and j.sent_through() == 0
    assert [s for s, _ in j.outbox_wire(20)] == [1, 2, 4, 6, 7, 8, 10]
    j.mark_sent([1, 2, 4])
    assert _sent_rows(path) == [(1, 5), (9, 9)] and j.sent_through() == 5 and j.outbox_depth() == 4
    j.close()
    j2 = open_journal(path)  # depth, low-water mark and the holes come back from the file
    assert j2.outbox_depth() == 4 and j2.sent_through() == 5
    assert [s for s, _ in j2.outbox_wire(20)] == [6, 7, 8, 10]
    j2.mark_sent([6, 7, 8, 10])
    assert _sent_rows(path) == [(1, 10)] and j2.outbox_depth() == 0 and j2.oldest_unsent_at() is None
    j2.close()


def test_outbox_after_reads_on_after_the_rows_handed_out_and_serves_priority_rows_first(journal):
    journal.append_many([tap() for _ in range(5)], now=NOW)
    journal.append(conf(), now=NOW, priority=1)  # seq 6
    journal.append_many([tap() for _ in range(4)], now=NOW)  # 7..10
    rows, through = journal.outbox_after(0, 4)
    assert [s for s, _ in rows] == [6, 1, 2, 3] and through == 3
    rows, through = journal.outbox_after(3, 4)
    assert [s for s, _ in rows] == [6, 4, 5, 7] and through == 7
    journal.mark_sent([6])
    rows, through = journal.outbox_after(7, 100)
    assert [s for s, _ in rows] == [8, 9, 10] and through == 10
    assert journal.outbox_after(10, 100) == ([], 10)
    journal.append(tap(), now=NOW)
    assert [s for s, _ in journal.outbox_after(10, 100)[0]] == [11]


def test_outbox_after_filters_short_sent_ranges_and_jumps_long_ones(journal):
    from edge.journal_outbox import SEGMENT_SKIP

    n = 3 * SEGMENT_SKIP
    journal.append_many([tap() for _ in range(n)], now=NOW)
    journal.mark_sent([4, 5])  # short: read and filtered
    journal.mark_sent(range(10, 10 + SEGMENT_SKIP))  # long: jumped
    unsent = [s for s in range(1, n + 1) if s not in {4, 5} and not 10 <= s < 10 + SEGMENT_SKIP]
    rows, through = journal.outbox_after(0, n)
    assert [s for s, _ in rows] == unsent and through == n
    rows, through = journal.outbox_after(0, 7)
    assert [s for s, _ in rows] == unsent[:7] and through == unsent[6]
    assert journal.outbox_depth() == len(unsent)


def _legacy_journal(tmp_path, sent: set[int]):
    """A version-0 file holding 12 real signed events (seq 7 a priority confiscation), ``sent``
    marked in their column, as an older gate left it."""
    src = open_journal(tmp_path / "new.db")
    src.append_many([tap() for _ in range(6)], now=NOW)
    src.append(conf(), now=NOW, priority=1)
    src.append_many([tap() for _ in range(5)], now=NOW)
    src.close()
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(_LEGACY_SCHEMA)
    with sqlite3.connect(tmp_path / "new.db") as c:
        rows = c.execute("SELECT seq, event_id, priority, kind, body, created_at FROM journal").fetchall()
    old.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(*r[:5], int(r[0] in sent), r[5]) for r in rows])
    old.commit()
    assert old.execute("PRAGMA user_version").fetchone()[0] == 0
    old.close()
    return path, {r[0]: r[1] for r in rows}


def test_an_old_journal_with_unsent_rows_is_upgraded_at_open_and_keeps_its_outbox(tmp_path):
    path, ids = _legacy_journal(tmp_path, sent={1, 2, 3, 5, 9, 10})
    j = open_journal(path, boot="boot-2")
    c = sqlite3.connect(path)
    assert c.execute("PRAGMA user_version").fetchone()[0] == 2
    assert c.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'journal_%'"
                     " ORDER BY name").fetchall() == [("journal_high",)]
    c.close()
    assert _sent_rows(path) == [(1, 3), (5, 5), (9, 10)]
    assert j.outbox_depth() == 6 and j.sent_through() == 3 and j.oldest_unsent_at() == T0
    rows = j.outbox_wire(20)
    assert [s for s, _ in rows] == [7, 4, 6, 8, 11, 12]  # the unsent confiscation first
    assert all(decode(body).event_id == ids[s] for s, body in rows)  # the stored bytes, untouched
    assert j.append(tap(), now=NOW).seq == 13 and j.outbox_depth() == 7
    j.mark_sent([4, 7, 6])
    assert j.sent_through() == 7 and [s for s, _ in j.outbox_wire(20)] == [8, 11, 12, 13]
    j.close()
    j2 = open_journal(path, boot="boot-3")  # upgraded once: the next open reads the ranges only
    assert j2.outbox_depth() == 4 and [s for s, _ in j2.outbox_wire(20)] == [8, 11, 12, 13]
    j2.close()


def test_a_failed_upgrade_leaves_the_old_journal_as_it_was(tmp_path, mocker):
    import edge.journal_schema as journal_module
    from portgate.errors import StoreError

    path, _ids = _legacy_journal(tmp_path, sent={1, 2})
    mocker.patch.object(journal_module, "_SENT_FROM_COLUMN", "INSERT INTO journal_sent SELECT nope FROM journal")
    with pytest.raises(StoreError, match="nope"):
        open_journal(path)
    c = sqlite3.connect(path)
    assert c.execute("PRAGMA user_version").fetchone()[0] == 0
    assert c.execute("SELECT name FROM sqlite_master WHERE name = 'journal_sent'").fetchall() == []
    assert c.execute("SELECT count(*) FROM journal WHERE sent = 0").fetchone()[0] == 10
    c.close()
    mocker.stopall()
    j = open_journal(path)  # the next boot upgrades it
    assert j.outbox_depth() == 10 and j.sent_through() == 2
    j.close()


def test_a_journal_of_a_newer_schema_is_refused_with_a_clear_error(tmp_path):
    from portgate.errors import StoreError

    path = tmp_path / "j.db"
    open_journal(path).close()
    c = sqlite3.connect(path)
    c.execute("PRAGMA user_version = 3")
    c.close()
    with pytest.raises(StoreError, match="schema version 3 is newer"):
        open_journal(path)


# -- the layout decides the schema version (a restored file loses PRAGMA user_version) -----------

def _restore_by_dump(src, dst):
    """``sqlite3 src .dump | sqlite3 dst``, the operator's restore (PRAGMA user_version is not dumped)."""
    import subprocess

    dump = subprocess.run(["sqlite3", str(src), ".dump"], capture_output=True, check=True).stdout
    subprocess.run(["sqlite3", str(dst)], input=dump, check=True)


def _user_version(path):
    c = sqlite3.connect(path)
    try:
        return c.execute("PRAGMA user_version").fetchone()[0]
    finally:
        c.close()


def test_a_journal_restored_with_dump_is_recognised_as_version_2_and_keeps_its_outbox(tmp_path):
    src = tmp_path / "j.db"
    _journal_with(src, 12, 8)
    _restore_by_dump(src, tmp_path / "new.db")
    assert _user_version(tmp_path / "new.db") == 0
    j = open_journal(tmp_path / "new.db", boot="boot-2")
    assert _user_version(tmp_path / "new.db") == 2
    assert j.outbox_depth() == 4 and j.sent_through() == 8 and [s for s, _ in j.outbox_wire(10)] == [9, 10, 11, 12]
    assert j.append(tap(), now=NOW).seq == 13
    j.close()


def test_an_upgraded_old_journal_restored_with_dump_keeps_its_ranges_not_the_stale_column(tmp_path):
    """An upgraded version-0 file keeps its (unused) sent column: the ranges, not the column, say
    what was sent."""
    path, _ids = _legacy_journal(tmp_path, sent={1, 2})
    j = open_journal(path)
    j.mark_sent(range(3, 11))
    j.close()
    _restore_by_dump(path, tmp_path / "restored.db")
    j = open_journal(tmp_path / "restored.db", boot="boot-2")
    assert _sent_rows(tmp_path / "restored.db") == [(1, 10)]
    assert j.outbox_depth() == 2 and [s for s, _ in j.outbox_wire(10)] == [11, 12]
    j.close()


@pytest.mark.parametrize("version", [1, -5])
def test_a_version_2_file_labelled_another_old_version_is_relabelled(tmp_path, version, capsys):
    path = tmp_path / "j.db"
    _journal_with(path, 5, 2)
    c = sqlite3.connect(path)
    c.execute(f"PRAGMA user_version = {version}")
    c.close()
    j = open_journal(path)
    assert _user_version(path) == 2 and j.outbox_depth() == 3 and j.sent_through() == 2
    j.close()
    assert "journal_schema_version_restored" in capsys.readouterr().out


@pytest.mark.parametrize("script, words", [
    ("PRAGMA user_version = 2", "schema version 2 but the version-0 layout"),
    ("DROP INDEX journal_outbox_high; ALTER TABLE journal DROP COLUMN sent",
     "no journal_sent table and no sent column"),
    ("DROP INDEX journal_outbox_high; ALTER TABLE journal DROP COLUMN sent; ALTER TABLE journal DROP COLUMN kind",
     "the journal table has no column kind"),
    ("DROP TABLE journal; CREATE TABLE other (x)", "no journal table"),
    ("DROP TABLE journal; DROP TABLE journal_meta; CREATE TABLE other (x)", "tables of another kind"),
])
def test_an_inconsistent_journal_layout_is_refused_with_a_one_line_message(tmp_path, script, words):
    from portgate.errors import StoreError

    path, _ids = _legacy_journal(tmp_path, sent=set())
    c = sqlite3.connect(path)
    c.executescript(script)
    c.close()
    with pytest.raises(StoreError, match=words) as err:
        open_journal(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_an_older_copy_restored_behind_the_hwm_file_is_a_loss_that_starts_a_new_chain_segment(tmp_path):
    """The tester's case: gate stopped, a ``.dump`` taken 6 seqs earlier restored, gate started.
    The rows the copy lacks are lost like an emptied file's: the copy is quarantined, numbering
    continues after the hwm, and the signed alert names the last head and the loss, so the office's
    chain check sees a documented segment instead of a PREV_MISMATCH."""
    from wire import chain

    signer = chain.new_private_key()
    path, backup = tmp_path / "j.db", tmp_path / "backup.db"

    def signed(boot):
        return Journal(path, port="santos", gate_id=GATE, key=KEY, boot_id=boot, signer=signer)

    j = signed("boot-1")
    j.append_many([tap() for _ in range(4)], now=NOW)
    j.close()
    _restore_by_dump(path, backup)  # the operator's backup, 6 seqs before the end
    j = signed("boot-2")
    j.append_many([tap() for _ in range(6)], now=NOW)
    j.mark_sent(range(1, 9))
    before = j.events_between(1, 10)
    j.close()
    path.unlink()
    _restore_by_dump(backup, path)

    j = signed("boot-3")
    assert j.quarantined_to is not None and j.last_seq() == 11
    alert = j.outbox_batch(1)[0]
    assert (alert.seq, alert.payload.code) == (11, "STORE_QUARANTINED")
    assert "journal file behind its .hwm file (last seq 4, the .hwm file says 10" in alert.payload.detail
    assert "resumed_at=11 lost_after=8" in alert.payload.detail and chain.segment_loss(alert) == (9, 10)
    head = chain.event_hash(before[-1])
    assert alert.prev == head and f"last_head_seq=10 last_head={head}" in alert.payload.detail
    after = j.append(tap(), now=NOW)
    j.close()
    report = chain.check_chain(GATE, before + [alert, after], signer.public_key(), first_seq=1)
    assert report.breaks == () and [(s.seq, s.lost_from, s.lost_to) for s in report.segments] == [(11, 9, 10)]
    assert report.head_seq == 12
    kept = sqlite3.connect(j.quarantined_to)  # the restored copy is kept for forensics
    assert kept.execute("SELECT max(seq) FROM journal").fetchone() == (4,)
    kept.close()


def test_a_renamed_journal_table_beside_an_hwm_file_is_refused_not_quarantined(tmp_path):
    """docs/gate.md: a missing table stops the gate with one line (exit 2); the file, which still
    holds every row, is not moved aside as if its rows were lost."""
    from portgate.errors import StoreError

    path = tmp_path / "j.db"
    _journal_with(path, 5, 2)
    c = sqlite3.connect(path)
    c.execute("ALTER TABLE journal RENAME TO journal_old")
    c.close()
    with pytest.raises(StoreError, match="no journal table") as err:
        open_journal(path, boot="boot-2")
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert list(tmp_path.glob("j.db.corrupt-*")) == [] and path.exists()


@pytest.mark.parametrize("script, words", [
    ("INSERT INTO journal_sent VALUES (7, 6)", "journal_sent range 7..6 has lo > hi"),
    ("INSERT INTO journal_sent VALUES (-5, -1)", "journal_sent range -5..-1 starts below seq 1"),
    ("INSERT INTO journal_sent VALUES (0, 0)", "journal_sent range 0..0 starts below seq 1"),
    ("INSERT INTO journal_sent VALUES (3, 8)", "journal_sent ranges 1..4 and 3..8 overlap"),
    ("INSERT INTO journal_sent VALUES (8, 12)", "journal_sent range 8..12 goes beyond the journal's last seq 10"),
    ("UPDATE journal_sent SET hi = 11", "journal_sent range 1..11 goes beyond the journal's last seq 10"),
    ("INSERT INTO journal_sent VALUES (6, 'x')", "journal_sent range (6, 'x') is not two integers"),
])
def test_sent_ranges_the_gate_cannot_have_written_are_refused_at_open(tmp_path, script, words):
    from portgate.errors import StoreError

    path = tmp_path / "j.db"
    _journal_with(path, 10, 4)
    c = sqlite3.connect(path)
    c.execute(script)
    c.commit()
    c.close()
    with pytest.raises(StoreError) as err:
        open_journal(path, boot="boot-2")
    assert str(err.value) == f"journal {path}: {words}; move the file aside"
    assert list(tmp_path.glob("j.db.corrupt-*")) == []
