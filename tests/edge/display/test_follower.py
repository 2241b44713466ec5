"""The journal follower against the real ``edge.journal.Journal``: new rows in order, a missing file,
and a journal replaced by a fresh file (quarantine) is followed on."""

from __future__ import annotations

import datetime as dt

from edge.display.follower import JournalFollower
from edge.journal import Journal
from edge.rules.model import Now
from wire.events import TapPayload

NOW = Now(wall=dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC), mono_ns=1, clock_trusted=True)


def _tap(reg: str) -> TapPayload:
    return TapPayload(uid="0A04A10001", reader_id="r", reader_kind="control", decision="admit", registration=reg)


def _journal(path) -> Journal:
    return Journal(path, port="santos", gate_id="g1", key=b"k" * 16, boot_id="b")


def test_follows_commits_in_order_and_survives_a_missing_or_replaced_journal(tmp_path) -> None:
    path = tmp_path / "journal.db"
    f = JournalFollower(path)
    assert f.poll() == [] and not f.online and f.tail(10) == []  # no gate yet: no error
    j = _journal(path)
    j.append(_tap("V001"), now=NOW)
    j.append(_tap("V002"), now=NOW)
    assert [e.payload.registration for e in f.poll()] == ["V001", "V002"]
    assert f.poll() == []  # nothing new: data_version unchanged
    assert f.outbox()[0] == 2
    j.mark_sent([1])
    assert f.poll() == [] and f.outbox()[0] == 1
    j.close()
    for suffix in ("", "-wal", "-shm"):  # the gate moves the journal aside and starts a fresh one
        p = tmp_path / f"journal.db{suffix}"
        if p.exists():
            p.rename(tmp_path / f"old.db{suffix}")
    j2 = _journal(path)
    j2.append(_tap("V003"), now=NOW)
    f.outbox()  # the periodic check notices the new file
    # numbering continues after the .hwm file, the loss alert first (docs/gate.md "Quarantine")
    assert [(e.seq, getattr(e.payload, "code", None) or e.payload.registration) for e in f.poll()] == [
        (3, "STORE_QUARANTINED"), (4, "V003")]
    j2.close()
    f2 = JournalFollower(path)  # a restarted screen shows the last reads again
    assert [e.payload.registration for e in f2.tail(10)] == ["V003"] and f2.last_seq == 4


def test_tail_keeps_the_last_taps_with_their_confiscations(tmp_path) -> None:
    from wire.events import ConfiscationPayload, ReaderPayload

    j = _journal(tmp_path / "journal.db")
    for i in range(12):
        j.append(_tap(f"V{i:03d}"), now=NOW)
        j.append(ReaderPayload(reader_id="r", state="ready"), now=NOW)
    j.append_many([_tap("V100"), ConfiscationPayload(uid="0A04A10001", registration="V100", inspector_uid="i",
                                                      inspector_registration="F001", reason_flag="F", article="a")],
                  now=NOW)
    j.close()
    events = JournalFollower(tmp_path / "journal.db").tail(3)
    assert [type(e.payload).__name__ for e in events] == ["TapPayload", "TapPayload", "TapPayload",
                                                          "ConfiscationPayload"]
    assert [e.payload.registration for e in events[:3]] == ["V010", "V011", "V100"]


def test_lookups_are_read_only_and_absent_files_give_nothing(tmp_path) -> None:
    from edge.display.lookup import Lookup
    from edge.store import Store
    from edge.sync.photos import PhotoStore, sha256_hex
    from portgate.records import Worker, WorkerStatus
    from testkit.display import png
    from wire.downlink import PhotoRef

    look = Lookup(tmp_path)
    assert look.worker("V001") is None and look.photo("V001") is None and look.copies() == {}
    store = Store(tmp_path / "store.db", gate_id="g1")
    store.replace_roster(3, [Worker("V001", "Ana Lima", "vigia", WorkerStatus.ACTIVE)], [], NOW.wall)
    photos = PhotoStore(tmp_path)
    data = png(1)
    photos.replace_index(1, [PhotoRef("V001", sha256_hex(data), len(data), "image/png"),
                             PhotoRef("V002", sha256_hex(png(2)), 10, "image/png")], NOW.wall)
    assert look.photo("V001") is None  # indexed, file not there yet: placeholder
    photos.put(sha256_hex(data), data, "image/png")
    assert look.worker("V001") == ("Ana Lima", "vigia")
    sha, path, media = look.photo("V001")
    assert path.read_bytes() == data and media == "image/png" and sha == sha256_hex(data)
    assert look.photo("V002") is None and look.worker("V404") is None
    assert look.copies()["roster"] == NOW.wall
    look.close()
    store.close()
    photos.close()


def test_the_screen_counts_the_outbox_from_the_sent_ranges_as_the_journal_does(tmp_path) -> None:
    path = tmp_path / "journal.db"
    j = _journal(path)
    j.append_many([_tap(f"V{i:03d}") for i in range(8)], now=NOW)
    j.append(_tap("V100"), now=Now(wall=NOW.wall + dt.timedelta(minutes=5), mono_ns=2), priority=1)  # seq 9
    f = JournalFollower(path)
    j.mark_sent([9, 3, 1, 2])  # the priority row first, then PUBACKs out of order
    assert f.outbox() == (j.outbox_depth(), j.oldest_unsent_at()) == (5, NOW.wall)
    j.mark_sent([4, 5, 6, 7, 8])
    assert f.outbox() == (j.outbox_depth(), j.oldest_unsent_at()) == (0, None)
    j.append(_tap("V200"), now=NOW)
    assert f.outbox() == (1, NOW.wall)
    f.close()
    j.close()


def test_the_screen_counts_the_outbox_of_a_version_0_journal_by_its_sent_column(tmp_path) -> None:
    """Before the gate upgrades an old journal the screen still tells its depth (never a false 0),
    and after the upgrade the ranges give the same figures."""
    from testkit.journal_faults import legacy_copy

    src = _journal(tmp_path / "v2.db")
    src.append_many([_tap("V001") for _ in range(40)], now=NOW)
    src.append(_tap("V002"), now=Now(wall=NOW.wall + dt.timedelta(minutes=5), mono_ns=2, clock_trusted=True))
    src.mark_sent([1, 2, 5])
    src.close()
    path = tmp_path / "journal.db"
    legacy_copy(tmp_path / "v2.db", path)
    f = JournalFollower(path)
    assert f.outbox() == (38, NOW.wall)
    assert f.outbox() == (38, NOW.wall)  # unchanged file: the count is not redone
    j = _journal(path)  # the gate starts and upgrades the file
    assert f.outbox() == (j.outbox_depth(), j.oldest_unsent_at()) == (38, NOW.wall)
    j.mark_sent(range(1, 41))
    assert f.outbox() == (1, NOW.wall + dt.timedelta(minutes=5))
    j.close()


def test_the_screen_says_it_does_not_know_the_outbox_rather_than_0(tmp_path) -> None:
    import sqlite3

    path = tmp_path / "journal.db"
    f = JournalFollower(path)
    assert f.outbox() == (None, None)  # no journal yet
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE journal (seq INTEGER PRIMARY KEY, kind TEXT, body BLOB)")
    c.execute("INSERT INTO journal VALUES (1, 'tap', x'00')")
    c.commit()
    c.close()
    assert f.outbox() == (None, None) and f.online  # tables of no known layout
    assert f.outbox() == (None, None)  # logged once, still unknown
