"""The journal's WAL checkpoint runs after the light, never inside a tap's commit (issue 32 item 4,
``edge.journal_wal``): the database file (written by checkpoints only) is the same at each light
as before its read, while the ``-wal`` file stays near its limit over many taps; the loop's idle tick
checkpoints what the uplink's marks wrote; a reader's snapshot holds back only what it reads; a
checkpoint that fails on a full disk after the light is logged and the gate keeps deciding."""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest
from structlog.testing import capture_logs

from edge.indicator import RecordingIndicator
from edge.journal import Journal
from edge.loop import GateLoop
from edge.rules.model import Outcome
from edge.rules.rulebook import default_gate_rulebook
from edge.sqlite_files import WAL_AUTOCHECKPOINT_PAGES
from testkit.tmpfs import mounted_tmpfs
from wire.events import TapPayload

from .conftest import GATE, KEY, card_read

FRAME = 4096 + 24  # a -wal frame: the page and its header (4 KiB pages, SQLite's default)
LIMIT = 32 + WAL_AUTOCHECKPOINT_PAGES * FRAME  # the -wal file's bytes when a checkpoint is due


def size(path) -> int:
    return path.stat().st_size if path.exists() else 0


def in_db_file(db, sql: str):
    """``sql``'s first row on a copy of ``db`` without its WAL: what the checkpoints copied into it."""
    copy = db.with_name("copy-of-db-file.db")
    subprocess.run(["cp", str(db), str(copy)], check=True)  # another process: closing a descriptor of
    # journal.db here would drop this process's (the journal's) locks on it
    conn = sqlite3.connect(f"file:{copy}?immutable=1", uri=True)
    try:
        return conn.execute(sql).fetchone()
    finally:
        conn.close()
        copy.unlink()


def unknown(i: int) -> str:
    return f"FF{i:08X}"  # a card not on the roster: DENY G1, journaled like any tap


def test_the_commit_before_the_light_never_checkpoints_and_the_wal_stays_bounded(make_loop, clock, tmp_path):
    db, wal = tmp_path / "journal.db", tmp_path / "journal.db-wal"
    loop = make_loop()
    before, seen = {}, []

    def show(decision, lang, event=None):  # the light: what the files are when it is shown
        seen.append((event.seq, before["db"], size(db), size(wal)))

    loop.indicator.show = show
    for i in range(700):
        clock.advance(4)  # past the debounce window
        before["db"] = size(db)
        loop.handle(card_read(unknown(i), clock))
    assert len(seen) == 700 and all(seq is not None for seq, *_ in seen)
    # the database file grows only when a checkpoint copies the WAL into it: never inside a commit
    assert [(seq, b, a) for seq, b, a, _w in seen if a != b] == []
    checkpoints = sum(1 for (_s, _b, a, _w), (_s2, b2, _a2, _w2) in zip(seen, seen[1:]) if b2 > a)
    assert checkpoints >= 3, checkpoints  # ~2-3 frames a tap: one checkpoint every ~100 taps, after a light
    assert max(w for *_x, w in seen) <= LIMIT + 8 * FRAME  # bounded as with SQLite's own checkpoint


def test_the_idle_tick_checkpoints_what_the_marks_wrote(make_loop, journal, tmp_path):
    db = tmp_path / "journal.db"
    loop = make_loop()
    tap = TapPayload(uid=unknown(1), reader_id="r-control", reader_kind="control", decision="deny",
                     message="Cartão desconhecido")
    now = loop.clock.now()
    for _ in range(8):
        journal.append_many([tap] * 100, now=now)
    for seq in range(1, 801, 2):  # PUBACKs one at a time, each a commit of its own (no batch block)
        journal.mark_sent([seq])
    assert size(tmp_path / "journal.db-wal") >= LIMIT  # the marks' commits ran no checkpoint
    assert in_db_file(db, "SELECT count(*) FROM journal_sent")[0] < 400
    assert loop.handle(None) == []  # the loop's tick, no read
    assert in_db_file(db, "SELECT count(*) FROM journal_sent")[0] == 400
    assert in_db_file(db, "SELECT max(seq) FROM journal")[0] == 800


def test_a_reader_snapshot_holds_back_only_what_it_reads_and_the_wal_is_reused_once_it_ends(
        journal, clock, tmp_path):
    db, wal = tmp_path / "journal.db", tmp_path / "journal.db-wal"
    from edge.rules.model import Now

    def tap(i):
        clock.advance(1)
        journal.append(TapPayload(uid=unknown(i), reader_id="r-control", reader_kind="control",
                                  decision="deny", message="x" * 60),
                       now=Now(clock.wall(), clock.mono_ns(), True))

    for i in range(50):
        tap(i)
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    held = reader.execute("SELECT max(seq) FROM journal").fetchone()[0]  # a snapshot, as verify-journal holds
    i = 50
    while size(wal) < 2 * LIMIT:  # past the limit twice over: the gate appends on, the reader keeps its frames
        tap(i)
        i += 1
    assert (in_db_file(db, "SELECT max(seq) FROM journal")[0] or 0) <= held  # nothing it may read was copied
    assert reader.execute("SELECT max(seq) FROM journal").fetchone()[0] == held  # its snapshot kept
    reader.execute("COMMIT")
    reader.close()
    tap(i)  # the next batch checkpoints everything
    assert in_db_file(db, "SELECT max(seq) FROM journal")[0] == journal.last_seq()
    grown = size(wal)
    for k in range(i + 1, i + 400):
        tap(k)
    assert size(wal) <= grown  # written from its start again (and cut back to its size limit), not grown
    assert in_db_file(db, "SELECT max(seq) FROM journal")[0] > journal.last_seq() - 150


def fill(directory) -> None:
    """Write ``directory/filler`` until the file system refuses (ENOSPC)."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (1 << 16, 4096, 1):
            while True:
                try:
                    os.write(fd, b"\0" * chunk)
                except OSError:
                    break
    finally:
        os.close(fd)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root")
def test_a_checkpoint_failing_after_the_light_is_logged_and_the_gate_keeps_deciding(store, clock, tmp_path):
    from edge.clock import GuardedClock

    with mounted_tmpfs(tmp_path / "state", "4m") as state:
        journal = Journal(state / "journal.db", port="santos", gate_id=GATE, key=KEY, boot_id="boot-1")
        wal = state / "journal.db-wal"
        indicator = RecordingIndicator()
        shown, filled = indicator.show, []

        def show(decision, lang, event=None):  # the disk fills between the light and the checkpoint
            shown(decision, lang, event=event)
            if size(wal) >= LIMIT and not filled:
                fill(state)
                filled.append(event.seq)

        indicator.show = show
        loop = GateLoop(readers=[], store=store, journal=journal, clock=GuardedClock(clock),
                        indicator=indicator, rulebook=default_gate_rulebook())
        try:
            with capture_logs() as logs:
                i = 0
                while not filled and i < 1000:
                    clock.advance(4)
                    loop.handle(card_read(unknown(i), clock))
                    i += 1
                assert filled and filled == [journal.last_seq()]
                filled_at = journal.last_seq()
                failed = [e for e in logs if e["event"] == "journal_checkpoint_failed"]
                assert len(failed) == 1 and "full" in failed[0]["error"], failed
                assert size(wal) >= LIMIT  # kept: every committed event is still in it
                # the gate keeps deciding: on the full disk each read is refused and shown as such
                for _ in range(3):
                    clock.advance(4)
                    i += 1
                    [d] = loop.handle(card_read(unknown(i), clock))
                    assert d.outcome is Outcome.DENY and d.rules_failed == ("INTERNAL",)
                assert journal.last_seq() == filled_at
                (state / "filler").unlink()  # space returns
                start = i
                while not [e for e in logs if e["event"] == "journal_checkpoint_recovered"] and i < start + 200:
                    clock.advance(4)
                    i += 1
                    [d] = loop.handle(card_read(unknown(i), clock))
                    assert d.rules_failed == ("G1",)  # journaled and decided as usual
            assert [e for e in logs if e["event"] == "journal_checkpoint_recovered"]  # retried after a light
            assert len([e for e in logs if e["event"] == "journal_checkpoint_failed"]) == 1  # logged once
            assert in_db_file(state / "journal.db", "SELECT max(seq) FROM journal")[0] == journal.last_seq()
            assert journal.events_between(filled_at, filled_at)[0].seq == filled_at  # nothing lost
        finally:
            journal.close()


def test_the_wal_index_descriptor_is_closed_with_the_journal(tmp_path, clock):
    from edge.rules.model import Now

    j = Journal(tmp_path / "j.db", port="santos", gate_id=GATE, key=KEY, boot_id="boot-1")
    j.append(TapPayload(uid=unknown(1), reader_id="r-control", reader_kind="control", decision="deny",
                        message="x"), now=Now(clock.wall(), clock.mono_ns(), True))

    def shm_fds():
        shm = str((tmp_path / "j.db-shm").resolve())  # " (deleted)" once SQLite removed it at close
        return [fd for fd in os.listdir("/proc/self/fd") if os.path.realpath(f"/proc/self/fd/{fd}").startswith(shm)]

    assert shm_fds()  # SQLite's own and the journal's wal-index reader
    j.close()
    assert shm_fds() == []
