"""The store file's layout and rows against the landed tree (830f725, the store through SQLAlchemy
Core): a new file has the same ``sqlite_master`` (the same statements), the same pragmas; a file
the landed tree wrote opens unchanged; the same calls write the same rows. (The landed tree made a
table's indexes in the order of a Python set, which varies from run to run; this tree makes them in
a fixed order, so the statements are compared as a set, the rows in order.)

``data/store_schema_830f725.json``: ``sqlite_master`` of a new file made by the landed tree.
``data/store_830f725.sql``: ``iterdump`` of the file the landed tree wrote running ``scenario``
below (this module imports nothing of the tests package, so the landed tree ran it as it is).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
DEMO = Path(__file__).resolve().parents[2] / "config" / "demo"
GATE, SHIP = "g-aurora", "9300001"
T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)


def scenario(path: Path) -> None:
    """Every write of the store API once, with fixed times: seed, deltas, blocks (here and the
    office's), presence, a single apply and a batch of two."""
    from edge.effects import Effects
    from edge.rules.model import InspectorSession, OpenShift
    from edge.store import Store
    from portgate.records import Card, CardKind, CardStatus, Worker, WorkerStatus
    from wire.downlink import BlockedCard

    hour = dt.timedelta(hours=1)
    s = Store(path, gate_id=GATE, ship=SHIP, boot_id="boot-1")
    s.load_csv_files(DEMO / "workers.csv", DEMO / "cards.csv", DEMO / "escala.csv", at=T0)
    s.apply_roster_delta(1, 2, [Worker("V099", "Nova Pessoa", "vigia", WorkerStatus.ACTIVE,
                                       health_exam_date=dt.date(2025, 6, 1), rotation_number=9)],
                         [Card("0A0A0A0A99", CardKind.CONTROL, "V099", CardStatus.ACTIVE)], T0 + hour)
    v001 = s.dispatches("V001", T0)[0]
    moved = type(v001)(**{**{f: getattr(v001, f) for f in v001.__slots__}, "registration": "V030"})
    s.apply_escala_delta(1, 2, [moved], [v001], T0 + hour)
    s.block_card("0A04A10003", "confiscated: BORROWED_CARD", T0)
    s.block_card("0A04A10004", "confiscated: ROTATION_JUMP", T0)
    s.add_office_blocks([BlockedCard(uid="0A04A10001", reason="confiscated", at=T0),
                         BlockedCard(uid="0A04A10002", reason="lost", at=T0)])
    s.add_office_blocks([], unblocked=["0A04A10001"])
    s.replace_office_blocks([BlockedCard(uid="0A04A10002", reason="lost", at=T0),
                             BlockedCard(uid="0A04A10004", reason="confiscated", at=T0 + hour)])
    s.replace_roster(3, [s.worker("V001"), s.worker("V002")],
                     [Card("0A04A10001", CardKind.CONTROL, "V001", CardStatus.ACTIVE),
                      Card("0A04A10003", CardKind.CONTROL, "V002", CardStatus.CONFISCATED)], T0 + 2 * hour)
    s.set_presence("V003", OpenShift("V003", "g-nordic", "9300002", T0), 7)
    s.set_presence("V004", OpenShift("V004", "g-nordic", "9300002", T0), 8, T0 + hour)
    s.set_presence("V004", None, 9, T0 + 2 * hour)
    s.apply(1, Effects(open=OpenShift("V001", GATE, SHIP, T0, moved),
                       flags=(("0A04A10001", "BORROWED_CARD", T0),)))
    with s.batch():
        s.apply(2, Effects(close=("V001", T0 + hour), flags=(("0A04A10002", "ROTATION_JUMP", T0 + hour),)))
        s.apply(3, Effects(inspector=InspectorSession("0A04A10005", "V005", 123_456_789)))
        s.commit()
    with s.batch():  # rolled back: nothing of it in the file
        s.apply(4, Effects(block=("0A04A10001", "confiscated: BORROWED_CARD", T0 + hour), end_inspector=True))
    s.close()


def _master(path: Path) -> list[list]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").fetchall()
    db.close()
    return [list(r) for r in rows]


def _indexes_sorted(dump: str) -> list[str]:
    """The dump's lines with its CREATE INDEX lines sorted (their order is the files' rowid order)."""
    lines = dump.splitlines()
    index = [ln for ln in lines if ln.startswith(("CREATE INDEX", "CREATE UNIQUE INDEX"))]
    return [ln for ln in lines if ln not in index] + sorted(index)


def _dump(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return "\n".join(db.iterdump()) + "\n"
    finally:
        db.close()


def test_a_new_store_file_has_the_landed_schema_statement_for_statement(tmp_path):
    from edge.store import Store

    Store(tmp_path / "store.db", gate_id=GATE).close()
    landed = json.loads((DATA / "store_schema_830f725.json").read_text())["sqlite_master"]
    assert sorted(_master(tmp_path / "store.db")) == sorted(landed)
    assert len(landed) == 27


def test_the_store_connection_has_the_landed_pragmas(tmp_path):
    from edge.store import Store

    s = Store(tmp_path / "store.db", gate_id=GATE)
    got = {p: s._db.execute(f"PRAGMA {p}").fetchone()[0]
           for p in ("journal_mode", "synchronous", "cache_size", "wal_autocheckpoint", "journal_size_limit",
                     "busy_timeout", "foreign_keys")}
    s.close()
    assert got == {"journal_mode": "wal", "synchronous": 1, "cache_size": -2000, "wal_autocheckpoint": 256,
                   "journal_size_limit": 1 << 20, "busy_timeout": 30_000, "foreign_keys": 0}


def test_the_same_calls_write_the_rows_the_landed_store_wrote(tmp_path):
    scenario(tmp_path / "store.db")
    assert _indexes_sorted(_dump(tmp_path / "store.db")) == _indexes_sorted((DATA / "store_830f725.sql").read_text())


def test_a_file_the_landed_store_wrote_opens_unchanged_and_reads_back(tmp_path):
    from edge.store import Store
    from portgate.records import CardStatus

    path = tmp_path / "store.db"
    landed = (DATA / "store_830f725.sql").read_text()
    with sqlite3.connect(path) as db:
        db.executescript(landed)
    db.close()
    s = Store(path, gate_id=GATE, ship=SHIP, boot_id="boot-1")
    assert s.applied_seq == 3
    assert s.block_reason("0A04A10002") == "lost" and s.block_reason("0A04A10004") == "confiscated"  # the office's
    assert s.card("0A04A10001").status is CardStatus.ACTIVE  # unblocked by the office; batch 4 rolled back
    assert s.block_reason("0A04A10003") is None  # the roster showed it: the roster governs
    assert s.card("0A04A10003").status is CardStatus.CONFISCATED
    assert s.worker("V002").name == "Bruno Santos" and s.worker("V099") is None  # the last snapshot
    assert s.open_shift("V001") is None and s.open_shift("V003").gate_id == "g-nordic"
    assert s.last_shift_end("V001") == T0 + dt.timedelta(hours=1)
    assert list(s.pending_flags("0A04A10001")) == ["BORROWED_CARD"]
    assert s.inspector_session().inspector_registration == "V005"
    assert [e.registration for e in s.dispatches("V030", T0)] == ["V030"]
    assert s.versions()["presence"] == (9, T0 + dt.timedelta(hours=2))
    s.close()
    assert _dump(path) == landed
