"""The local store: round-trips of the office's copies, deltas, blocklist, presence, derived state."""

from __future__ import annotations

import datetime as dt

import pytest

from edge.effects import Effects
from edge.rules.model import InspectorSession, OpenShift, group_by_period
from edge.store import Store
from portgate.errors import BadInput
from portgate.records import Card, CardKind, CardStatus, Worker, WorkerStatus

from .conftest import GATE, SHIP, T0


def test_seeded_copies_round_trip_through_sqlite(store, tmp_path):
    store.close()
    again = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    card = again.card("0A04A10001")
    assert card == Card("0A04A10001", CardKind.CONTROL, "V001", CardStatus.ACTIVE)
    w = again.worker("V001")
    assert (w.name, w.status, w.health_exam_date, w.rotation_number) == (
        "Ana Lima", WorkerStatus.ACTIVE, dt.date(2025, 6, 1), 1)
    assert [e.registration for e in again.gate_dispatches(T0)] == ["V001", "V002", "V005", "V008",
                                                                  "V011", "V012", "V015", "V016"]
    assert [e.ship for e in again.dispatches("V003", T0)] == ["9300002"]
    assert again.versions()["roster"] == (1, T0)
    assert again.data_updated_at() == T0
    again.close()


def test_unknown_card_and_worker_are_none(store):
    assert store.card("DEADBEEF") is None
    assert store.worker("X999") is None
    assert store.dispatches("X999", T0) == []


def test_dispatches_outside_a_day_are_not_returned(store):
    assert store.dispatches("V001", T0 + dt.timedelta(days=3)) == []


def test_roster_delta_applies_on_its_base_version_only(store):
    w = Worker("V099", "Nova Pessoa", "vigia", WorkerStatus.ACTIVE)
    c = Card("0A0A0A0A99", CardKind.CONTROL, "V099", CardStatus.ACTIVE)
    assert store.apply_roster_delta(5, 6, [w], [c], T0) is False  # copy is at 1: ask for a snapshot
    assert store.card("0A0A0A0A99") is None
    assert store.apply_roster_delta(1, 2, [w], [c], T0 + dt.timedelta(hours=1)) is True
    assert store.card("0A0A0A0A99").registration == "V099"
    assert store.versions()["roster"] == (2, T0 + dt.timedelta(hours=1))
    assert store.versions()["cards"][0] == 2


def test_escala_delta_upserts_and_removes(store):
    v001 = store.dispatches("V001", T0)[0]
    moved = type(v001)(**{**{f: getattr(v001, f) for f in v001.__slots__}, "registration": "V030"})
    assert store.apply_escala_delta(1, 2, [moved], [v001], T0) is True
    assert store.dispatches("V001", T0) == []
    assert store.dispatches("V030", T0) == [moved]
    assert store.apply_escala_delta(1, 3, [], [], T0) is False


def test_gate_periods_group_the_gate_dispatches_and_follow_an_escala_change(store, mocker):
    assert store.gate_periods(T0) == group_by_period(store.gate_dispatches(T0))
    assert sum(len(g) for g in store.gate_periods(T0)) == 8
    walk = mocker.spy(store, "gate_dispatches")
    store.gate_periods(T0)
    store.gate_periods(T0 + dt.timedelta(hours=2))  # the same local day: the groups are kept
    assert walk.call_count == 0
    v001 = store.dispatches("V001", T0)[0]
    assert store.apply_escala_delta(1, 2, [], [v001], T0) is True
    assert [e for g in store.gate_periods(T0) for _pos, e in g] == \
        [e for g in group_by_period(store.gate_dispatches(T0)) for _pos, e in g]
    assert v001 not in [e for g in store.gate_periods(T0) for _pos, e in g]


def test_blocked_card_reads_as_confiscated_at_once_and_survives_a_stale_snapshot(store, tmp_path):
    store.block_card("0A04A10001", "confiscated: ROTATION_JUMP", T0)
    assert store.card("0A04A10001").status is CardStatus.CONFISCATED
    # an older office snapshot still says active: the local block stands
    store.replace_roster(2, [store.worker("V001")],
                         [Card("0A04A10001", CardKind.CONTROL, "V001", CardStatus.ACTIVE)], T0)
    assert store.card("0A04A10001").status is CardStatus.CONFISCATED
    # once the office's roster shows it confiscated, the roster governs (and can later reactivate)
    store.replace_roster(3, [store.worker("V001")],
                         [Card("0A04A10001", CardKind.CONTROL, "V001", CardStatus.CONFISCATED)], T0)
    store.replace_roster(4, [store.worker("V001")],
                         [Card("0A04A10001", CardKind.CONTROL, "V001", CardStatus.ACTIVE)], T0)
    assert store.card("0A04A10001").status is CardStatus.ACTIVE


def test_a_card_read_again_after_its_confiscation_in_the_same_batch_reads_as_confiscated(store):
    first = store.card("0A04A10001")
    assert store.card("0A04A10001") is first  # the same answer is kept while nothing changed
    with store.batch():  # the confiscation is staged: no write of the office's copies
        store.apply(1, Effects(block=("0A04A10001", "confiscated: ROTATION_JUMP", T0), end_inspector=True))
        assert store.card("0A04A10001") == Card("0A04A10001", CardKind.CONTROL, "V001", CardStatus.CONFISCATED)
        store.commit()
    assert store.card("0A04A10001").status is CardStatus.CONFISCATED
    assert first.status is CardStatus.ACTIVE


def _blocked(uid, reason="confiscated"):
    from wire.downlink import BlockedCard

    return BlockedCard(uid=uid, reason=reason, at=T0)


def test_the_office_blocklist_snapshot_replaces_its_copy_and_a_returned_card_is_admitted(store, tmp_path):
    a, b = "0A04A10001", "0A04A10002"
    store.add_office_blocks([_blocked(a), _blocked(b, "lost")])
    assert store.card(a).status is CardStatus.CONFISCATED and store.block_reason(b) == "lost"
    store.replace_office_blocks([_blocked(b, "lost")])  # a was returned: the office no longer lists it
    assert store.card(a).status is CardStatus.ACTIVE and store.block_reason(a) is None
    store.close()
    again = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)  # the copy survives a restart
    assert again.card(a).status is CardStatus.ACTIVE and again.card(b).status is CardStatus.LOST  # G2: the blocklist status is shown
    again.close()


def test_a_blocklist_delta_adds_and_lifts_the_office_blocks_only(store):
    a, b, here = "0A04A10001", "0A04A10002", "0A04A10003"
    store.block_card(here, "confiscated: BORROWED_CARD", T0)  # the office does not know yet
    store.add_office_blocks([_blocked(a), _blocked(b)])
    store.add_office_blocks([], unblocked=[a, here, "FFFFFFFF"])  # a returned; unknown UIDs are ignored
    assert store.card(a).status is CardStatus.ACTIVE
    assert store.card(b).status is CardStatus.CONFISCATED
    assert store.card(here).status is CardStatus.CONFISCATED, "a confiscation here waits for the office"
    store.add_office_blocks([_blocked(a)], unblocked=[a])  # blocked again in the same delta wins
    assert store.card(a).status is CardStatus.CONFISCATED


def test_a_card_confiscated_here_is_kept_until_the_office_lists_it_then_follows_the_office(store, tmp_path):
    uid = "0A04A10001"
    store.block_card(uid, "confiscated: ROTATION_JUMP", T0)
    store.replace_office_blocks([])  # published before the office had the confiscation
    assert store.card(uid).status is CardStatus.CONFISCATED
    store.replace_office_blocks([_blocked(uid)])  # the office knows: its blocklist governs from now on
    store.close()
    again = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    assert again.card(uid).status is CardStatus.CONFISCATED
    again.replace_office_blocks([])  # returned by the office
    assert again.card(uid).status is CardStatus.ACTIVE
    again.close()


def _old_format_store(path, rows):
    """A store file as the release before ``office_blocks`` wrote it: one ``blocklist`` table for
    the gate's confiscations and the office's blocks alike (roster seeded: the cards are active)."""
    import sqlite3

    from .conftest import DEMO

    s = Store(path, gate_id=GATE, ship=SHIP)
    s.load_csv_files(DEMO / "workers.csv", DEMO / "cards.csv", at=T0)
    s.close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE office_blocks")
        db.executemany("INSERT INTO blocklist (uid, reason, at) VALUES (?, ?, ?)", rows)
    db.close()


def test_an_old_store_file_moves_the_office_blocks_out_of_the_local_blocklist(tmp_path):
    from structlog.testing import capture_logs

    returned, lost, here = "0A04A10001", "0A04A10002", "0A04A10003"
    _old_format_store(tmp_path / "store.db", [
        (returned, "confiscated", T0.isoformat()),  # the office's blocks (plain card statuses)
        (lost, "lost", T0.isoformat()),
        (here, "confiscated: BORROWED_CARD", T0.isoformat()),  # confiscated at this gate
    ])
    with capture_logs() as logs:
        s = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    assert [(e["office_blocks"], e["kept_local"]) for e in logs if e["event"] == "store_upgraded"] == [(2, 1)]
    assert all(s.card(uid).status is CardStatus.CONFISCATED for uid in (returned, here))
    assert s.card(lost).status is CardStatus.LOST  # G2: the blocklist status is shown
    assert s.block_reason(lost) == "lost"
    s.replace_office_blocks([_blocked(lost, "lost")])  # the office returned the first card before the upgrade
    assert s.card(returned).status is CardStatus.ACTIVE and s.block_reason(returned) is None
    assert s.card(lost).status is CardStatus.LOST
    assert s.card(here).status is CardStatus.CONFISCATED, "the gate's own confiscation waits for the office"
    s.close()
    with capture_logs() as logs:  # upgraded once: a later open moves nothing
        again = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    assert not [e for e in logs if e["event"] == "store_upgraded"]
    assert again.card(returned).status is CardStatus.ACTIVE and again.card(here).status is CardStatus.CONFISCATED
    again.close()


def test_an_old_store_file_with_only_gate_confiscations_keeps_them_local(tmp_path):
    here = "0A04A10003"
    _old_format_store(tmp_path / "store.db", [(here, "confiscated: ROTATION_JUMP", T0.isoformat())])
    s = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    s.replace_office_blocks([])
    assert s.block_reason(here) == "confiscated: ROTATION_JUMP"
    s.close()


def test_a_new_store_file_is_not_upgraded(tmp_path):
    from structlog.testing import capture_logs

    with capture_logs() as logs:
        s = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    assert not [e for e in logs if e["event"] == "store_upgraded"]
    s.close()


def test_an_upgrade_that_fails_leaves_the_old_file_to_upgrade_at_the_next_open(tmp_path):
    """A write SQLite aborts mid-upgrade (a trigger in the real file raises on the move's last
    statement, as a disk error would): the whole move is rolled back (no office_blocks table, the
    rows still in blocklist) and redone at the next open."""
    import sqlite3

    from portgate.errors import StoreError

    _old_format_store(tmp_path / "store.db", [("0A04A10001", "lost", T0.isoformat())])
    # the move's last statement (after office_blocks was made and filled) fails
    with sqlite3.connect(tmp_path / "store.db") as db:
        db.execute("CREATE TRIGGER blocklist_fail BEFORE DELETE ON blocklist "
                   "BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END")
    db.close()
    with pytest.raises(StoreError, match="disk I/O error"):
        Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    with sqlite3.connect(tmp_path / "store.db") as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'office_blocks'").fetchall() == []
        assert db.execute("SELECT uid, reason FROM blocklist").fetchall() == [("0A04A10001", "lost")]
        db.execute("DROP TRIGGER blocklist_fail")
    db.close()
    s = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP)
    s.replace_office_blocks([])
    assert s.card("0A04A10001").status is CardStatus.ACTIVE
    s.close()


def test_a_blocklist_write_that_fails_changes_nothing(store, tmp_path):
    """A write SQLite aborts (a trigger in the real file raises, as a disk error would) leaves the
    copy as it was."""
    import sqlite3

    from portgate.errors import StoreError

    store.add_office_blocks([_blocked("0A04A10001")])
    with sqlite3.connect(tmp_path / "store.db") as db:
        db.execute("CREATE TRIGGER office_blocks_fail BEFORE DELETE ON office_blocks "
                   "BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END")
    db.close()
    with pytest.raises(StoreError, match="disk I/O error"):
        store.replace_office_blocks([])
    with pytest.raises(StoreError):
        store.add_office_blocks([], unblocked=["0A04A10001"])
    assert store.card("0A04A10001").status is CardStatus.CONFISCATED


def test_presence_relayed_by_the_office_is_an_open_shift_elsewhere(store):
    shift = OpenShift("V003", "g-nordic", "9300002", T0)
    store.set_presence("V003", shift, 7)
    assert store.open_shift("V003") == shift
    assert store.versions()["presence"][0] == 7
    store.set_presence("V003", None, 8)
    assert store.open_shift("V003") is None


def test_derived_state_is_applied_once_per_journal_seq_and_persists(store, tmp_path):
    entry = store.dispatches("V001", T0)[0]
    store.apply(1, Effects(open=OpenShift("V001", GATE, SHIP, T0, entry),
                           flags=(("0A04A10001", "ROTATION_JUMP", T0),)))
    store.apply(1, Effects(close=("V001", T0)))  # same seq again: ignored
    assert store.open_shift("V001").dispatch == entry
    store.apply(2, Effects(inspector=InspectorSession("1F1F1F1F", "F001", 99)))
    store.close()
    again = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP, boot_id="boot-1")
    assert again.applied_seq == 2
    assert again.open_shift("V001").dispatch == entry
    assert again.pending_flags("0A04A10001") == ["ROTATION_JUMP"]
    assert again.inspector_session() == InspectorSession("1F1F1F1F", "F001", 99)
    again.apply(3, Effects(close=("V001", T0 + dt.timedelta(hours=6))))
    assert again.open_shift("V001") is None
    assert again.last_shift_end("V001") == T0 + dt.timedelta(hours=6)
    again.close()
    other_boot = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP, boot_id="boot-2")
    assert other_boot.inspector_session() is None  # mono time restarted: the session is gone
    other_boot.close()


def test_pending_flags_expire_after_a_day(store):
    store.apply(1, Effects(flags=(("0A04A10001", "BORROWED_CARD", T0),)))
    later = T0 + dt.timedelta(hours=25)
    store.apply(2, Effects(flags=(("0A04A10002", "ROTATION_JUMP", later),)))
    assert store.pending_flags("0A04A10001") == ()
    assert store.pending_flags("0A04A10002") == ["ROTATION_JUMP"]


def test_a_refreshed_flag_outlives_its_first_raising_and_expiry_matches_the_file(store, tmp_path):
    h = dt.timedelta(hours=1)
    store.apply(1, Effects(flags=(("0A04A10001", "BORROWED_CARD", T0),
                                  ("0A04A10002", "ROTATION_JUMP", T0))))
    store.apply(2, Effects(flags=(("0A04A10001", "BORROWED_CARD", T0 + 20 * h),)))  # raised again
    store.apply(3, Effects(block=("0A04A10002", "confiscated: ROTATION_JUMP", T0 + 21 * h)))
    store.apply(4, Effects(flags=(("0A04A10003", "LATE_ARRIVAL", T0 + 30 * h),)))
    assert store.pending_flags("0A04A10001") == ["BORROWED_CARD"]  # 10 h old, not 30 h
    assert store.pending_flags("0A04A10002") == ()
    store.apply(5, Effects(flags=(("0A04A10003", "NO_ENTRY", T0 + 45 * h),)))
    assert store.pending_flags("0A04A10001") == ()
    assert store.pending_flags("0A04A10003") == ["LATE_ARRIVAL", "NO_ENTRY"]
    store.close()
    again = Store(tmp_path / "store.db", gate_id=GATE, ship=SHIP, boot_id="boot-1")
    assert again.pending_flags("0A04A10001") == ()
    assert again.pending_flags("0A04A10003") == ["LATE_ARRIVAL", "NO_ENTRY"]
    again.apply(6, Effects(flags=(("0A04A10004", "NO_ENTRY", T0 + 55 * h),)))  # heap rebuilt at boot
    assert again.pending_flags("0A04A10003") == ["NO_ENTRY"]
    again.close()


def test_roster_copy_with_missing_fields_is_refused_naming_rows_and_changes_nothing(store):
    rows = [
        {"registration": "V200", "name": "Ok", "category": "vigia", "status": "active"},
        {"registration": "V201", "category": "vigia", "status": "active"},  # no name
        {"registration": "V202", "name": "X", "category": "vigia", "status": "on_leave"},
    ]
    with pytest.raises(BadInput) as err:
        store.replace_roster(9, rows, [], T0)
    text = str(err.value)
    assert "roster.workers:2: missing column(s) name" in text
    assert "roster.workers:3: status 'on_leave'" in text
    assert store.versions()["roster"][0] == 1
    assert store.worker("V001") is not None and store.worker("V200") is None


def test_roster_rows_from_json_with_numbers_are_accepted(store):
    rows = [{"registration": "V300", "name": "Json", "category": "vigia", "status": "active",
             "rotation_number": 42, "booklet_revalidated_year": None}]
    store.replace_roster(10, rows, [{"uid": "0a:0b:0c:0d", "kind": "control", "registration": "V300",
                                     "status": "active"}], T0)
    assert store.worker("V300").rotation_number == 42
    assert store.card("0A0B0C0D").registration == "V300"


def test_escala_for_another_gate_only_leaves_this_gate_without_dispatches(store):
    nordic = [e for e in store.dispatches("V003", T0)]
    store.replace_escala(5, nordic, T0)
    assert store.gate_dispatches(T0) == []
    assert store.dispatches("V003", T0) == nordic  # still known for G5 (double assignment)


def test_corrupt_store_file_is_quarantined_and_a_fresh_one_created(tmp_path):
    path = tmp_path / "store.db"
    path.write_bytes(b"this is not a database at all" * 200)
    s = Store(path, gate_id=GATE)
    assert s.quarantined_to is not None and s.quarantined_to.exists()
    assert s.quarantined_to.read_bytes().startswith(b"this is not")
    assert s.card("0A04A10001") is None and s.versions()["roster"] == (0, None)
    s.close()


def test_a_partial_read_finds_the_card_by_its_low_bits_through_an_index(store):
    """G1: DEZ10 (low 32 bits) and W26 (low 24 bits) reads name the card enrolled by its EM ID."""
    store.apply_roster_delta(1, 2, [], [Card("62E3086CD5", CardKind.CONTROL, "V001", CardStatus.ACTIVE)], T0)
    assert store.card("decimal10:E3086CD5").uid == "62E3086CD5"
    assert store.card("wiegand26:086CD5").registration == "V001"
    assert store.cards_sharing("wiegand26:086CD5") == 1
    assert store.card("decimal10:E3086CD6") is None and store.cards_sharing("decimal10:E3086CD6") == 0
    for bits in (32, 24):
        plan = store._db.execute(
            f"EXPLAIN QUERY PLAN SELECT uid FROM cards WHERE substr(uid, -{bits // 4}) = ?", ("X",)
        ).fetchall()
        assert any(f"ix_cards_low{bits}" in row[-1] for row in plan), plan  # an index probe, no scan


def test_cards_sharing_the_bits_of_a_partial_read_name_none(store):
    store.apply_roster_delta(1, 2, [], [Card("62E3086CD5", CardKind.CONTROL, "V001", CardStatus.ACTIVE),
                                        Card("7700086CD5", CardKind.CONTROL, "V002", CardStatus.ACTIVE)], T0)
    assert store.card("wiegand26:086CD5") is None
    assert store.cards_sharing("dez8:086CD5") == 2
    assert store.card("decimal10:E3086CD5").registration == "V001"  # 32 bits tell them apart


def test_a_card_blocked_here_is_blocked_whichever_number_reads_it(store):
    store.apply_roster_delta(1, 2, [], [Card("62E3086CD5", CardKind.CONTROL, "V001", CardStatus.ACTIVE)], T0)
    store.block_card("62E3086CD5", "confiscated: BORROWED_CARD", T0)
    assert store.card("wiegand26:086CD5").status is CardStatus.CONFISCATED


def test_a_store_file_made_before_the_bit_indexes_gets_them_at_open(tmp_path):
    path = tmp_path / "old.db"
    Store(path, gate_id=GATE).close()
    import sqlite3

    with sqlite3.connect(path) as c:
        c.execute("DROP INDEX ix_cards_low32")
    again = Store(path, gate_id=GATE)
    names = {r[0] for r in again._db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"ix_cards_low32", "ix_cards_low24"} <= names
    again.close()
