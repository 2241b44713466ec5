"""Registry: all-or-nothing import, every command changes state and emits a change row with the
actor, suspensions carry their dates to the gates, the change feed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central import db
from central.registry import store
from central.registry.api import changes_since, roster_snapshot
from central.registry.schema import audit_log, card_events, downlink_changes, penalties, workers
from central.rotation.eligibility import Ineligible, registration_problems
from app.cli import main
from portgate.errors import BadInput
from testkit.sqlite_copies import copy_made_once
from tests.central.registry.conftest import WORKER_COLUMNS, worker_rows, write_csv

CARD_COLUMNS = ("uid", "kind", "registration", "status")


def _files(folder: Path) -> tuple[Path, Path]:
    w = write_csv(folder / "workers.csv", WORKER_COLUMNS, worker_rows(3))
    c = write_csv(folder / "cards.csv", CARD_COLUMNS, [
        dict(uid="1a2b3c4d", kind="control", registration="V001", status="active"),
        dict(uid="AABBCCDD", kind="badge", registration="V001", status="active"),
        dict(uid="11223344", kind="control", registration="V002", status="active"),
        dict(uid="99887766", kind="inspector", registration="F01", status="active"),
    ])
    return w, c


@pytest.fixture
def files(tmp_path):
    return _files(tmp_path)


@pytest.fixture
def db_url(tmp_path, sqlite_ledger) -> str:
    """tmp_path/office.db: a copy of the session's migrated ledger (tests/central/conftest.py), what
    the first command makes of a new file (issue 32: the migrations took ~0.5 s of every test
    under load; they have their own tests in tests/central/ledger, and ``imported`` makes its
    ledger from a new file once)."""
    return sqlite_ledger(tmp_path / "office.db")


def run(*args) -> int:
    return main(list(args))


def count(db_url, table) -> int:
    engine = db.make_engine(db_url)
    db.load_all_tables().create_all(engine)
    with engine.connect() as conn:
        n = conn.execute(select(func.count()).select_from(table)).scalar()
    engine.dispose()
    return n


def changes(db_url):
    engine = db.make_engine(db_url)
    with Session(engine) as s:
        rows = s.execute(select(downlink_changes).order_by(downlink_changes.c.id)).all()
    engine.dispose()
    return rows


def test_import_writes_workers_cards_inspectors_and_a_change_row_each(db_url, files, capsys):
    w, c = files
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(w),
               "--cards", str(c)) == 0
    assert "imported 3 worker(s), 4 card(s)" in capsys.readouterr().out
    rows = changes(db_url)
    assert [(r.kind, r.key) for r in rows][:3] == [("roster", "V001"), ("roster", "V002"),
                                                   ("roster", "V003")]
    assert {r.key for r in rows if r.kind == "cards"} == {"1A2B3C4D", "AABBCCDD", "11223344",
                                                          "99887766"}
    assert {r.actor for r in rows} == {"ana"}
    assert count(db_url, audit_log) == 7


def test_import_with_a_bad_row_names_every_bad_line_and_imports_nothing(db_url, tmp_path, files,
                                                                        capsys):
    rows = worker_rows(4)
    rows[1]["status"] = "retired"
    rows[3]["health_exam_date"] = "10/03/2025"
    bad = write_csv(tmp_path / "bad.csv", WORKER_COLUMNS, rows)
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(bad)) == 2
    err = capsys.readouterr().err
    assert "bad.csv:3: status 'retired'" in err and "bad.csv:5: health_exam_date" in err
    assert count(db_url, workers) == 0 and count(db_url, downlink_changes) == 0


def test_a_rotation_number_already_held_in_the_category_is_refused_naming_the_holder(
        db_url, tmp_path, capsys):
    rows = worker_rows(3)
    rows[2]["rotation_number"] = "1"
    bad = write_csv(tmp_path / "bad.csv", WORKER_COLUMNS, rows)
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(bad)) == 2
    assert "bad.csv:4: rotation_number 1 is already held by V001 (vigia)" in capsys.readouterr().err
    assert count(db_url, workers) == 0
    good = write_csv(tmp_path / "good.csv", WORKER_COLUMNS, worker_rows(3))
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(good)) == 0
    late = worker_rows(30)[29] | {"rotation_number": "2"}
    again = write_csv(tmp_path / "again.csv", WORKER_COLUMNS, [late])
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(again)) == 2
    assert "again.csv:2: rotation_number 2 is already held by V002 (vigia)" in capsys.readouterr().err
    other_list = worker_rows(1, category="estivador", prefix="E")
    mixed = write_csv(tmp_path / "mixed.csv", WORKER_COLUMNS, worker_rows(3) + other_list)
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(mixed)) == 0
    assert count(db_url, workers) == 4


def test_a_card_of_an_unregistered_worker_rejects_both_files(db_url, tmp_path, files, capsys):
    w, _ = files
    c = write_csv(tmp_path / "cards.csv", CARD_COLUMNS, [
        dict(uid="01020304", kind="control", registration="V001", status="active"),
        dict(uid="05060708", kind="control", registration="V404", status="active")])
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(w),
               "--cards", str(c)) == 2
    assert "cards.csv:3: registration 'V404' is not registered" in capsys.readouterr().err
    assert count(db_url, workers) == 0


def _import(path: Path) -> None:
    """A new ledger at ``path`` holding ``_files``' workers and cards, imported by ``portgate
    registry import`` (actor ana)."""
    w, c = _files(path.parent)
    assert run("registry", "import", "--db", f"sqlite:///{path}", "--actor", "ana", "--workers", str(w),
               "--cards", str(c)) == 0


@pytest.fixture
def imported(db_url, files):
    """``db_url`` holding ``_files``' import: a copy of the ledger this process imported them into
    once (testkit.sqlite_copies; the same command and assertion as for each test before issue 32)."""
    copy_made_once("registry_imported", _import, Path(db_url.removeprefix("sqlite:///")))
    return db_url


def last_change(db_url):
    return changes(db_url)[-1]


def test_suspend_records_dates_penalty_and_a_roster_change_by_the_actor(imported):
    assert run("registry", "suspend", "V002", "--db", imported, "--actor", "bruno",
               "--from", "2026-03-12", "--days", "10", "--reason", "art. 20 a") == 0
    change = last_change(imported)
    assert (change.kind, change.op, change.key, change.actor) == ("roster", "upsert", "V002",
                                                                  "bruno")
    assert change.body["suspended_from"] == "2026-03-12"
    assert change.body["suspended_until"] == "2026-03-21"
    assert count(imported, penalties) == 1


def test_a_suspension_takes_effect_on_its_start_date_at_the_gates(imported, engine):
    with Session(engine) as s, s.begin():
        store.suspend(s, "V001", start=dt.date(2026, 3, 12), days=10, reason="x",
                      article="83.611 art. 21 a", actor="bruno")
    with Session(engine) as s:
        _version, roster, _cards = roster_snapshot(s)
    v001 = next(w for w in roster if w.registration == "V001")
    assert registration_problems(v001, dt.date(2026, 3, 11)) == []
    assert registration_problems(v001, dt.date(2026, 3, 12)) == [Ineligible.SUSPENDED]
    assert registration_problems(v001, dt.date(2026, 3, 21)) == [Ineligible.SUSPENDED]
    assert registration_problems(v001, dt.date(2026, 3, 22)) == []


RULEBOOKS = Path(__file__).resolve().parents[3] / "config" / "rulebooks"


@pytest.mark.parametrize("rulebook,days,ok,article", [
    (None, "5", True, "83.611 art. 21 a"),          # the port's default rulebook: up to 30 days
    (None, "1", True, "83.611 art. 21 a"),
    (None, "31", False, "83.611 art. 21 a"),
    ("dl-2032-1940.toml", "1", True, "DL 2.032 art. 30"),
    ("dl-2032-1940.toml", "31", False, "DL 2.032 art. 30"),
    ("example-cct-2026.toml", "9", False, "Lei 12.815 art. 33"),   # today's law: 10 to 30
    ("example-cct-2026.toml", "10", True, "Lei 12.815 art. 33"),
])
def test_r4_suspension_limits_come_from_the_rulebook(imported, rulebook, days, ok, article, capsys):
    extra = ["--rulebook", str(RULEBOOKS / rulebook)] if rulebook else []
    assert run("registry", "suspend", "V002", "--db", imported, "--actor", "b", "--from",
               "2026-03-12", "--days", days, "--reason", "x", *extra) == (0 if ok else 2)
    if ok:
        with db.make_engine(imported).connect() as conn:
            row = conn.execute(select(penalties)).mappings().one()
        assert row["article"] == article and row["rule"] == "R4"
        assert (row["ends_on"] - row["starts_on"]).days == int(days) - 1
    else:
        assert f"days ({article}), not {days}" in capsys.readouterr().err
        assert count(imported, penalties) == 0


def test_r4_a_bad_suspension_table_is_a_config_error(imported, tmp_path, capsys):
    book = tmp_path / "book.toml"
    book.write_text('id = "x"\n[suspension]\nmin_days = 20\nmax_days = 10\n')
    assert run("registry", "suspend", "V002", "--db", imported, "--actor", "b", "--from",
               "2026-03-12", "--days", "15", "--reason", "x", "--rulebook", str(book)) == 2
    assert "min_days 20 is above max_days 10" in capsys.readouterr().err


def test_cancel_sends_a_cancelled_roster_row_and_refuses_a_second_time(imported, capsys):
    assert run("registry", "cancel", "V003", "--db", imported, "--actor", "carla", "--on",
               "2026-03-10", "--reason", "art. 20 j reincidente") == 0
    change = last_change(imported)
    assert (change.key, change.body["status"], change.actor) == ("V003", "cancelled", "carla")
    assert run("registry", "cancel", "V003", "--db", imported, "--actor", "carla", "--on",
               "2026-03-10", "--reason", "again") == 2
    assert "already cancelled" in capsys.readouterr().err


def test_lost_card_is_blocked_then_replaced_by_a_new_card(imported):
    assert run("registry", "lost", "1a2b3c4d", "--db", imported, "--actor", "dora") == 0
    change = last_change(imported)
    assert (change.kind, change.key, change.body["status"], change.actor) == (
        "cards", "1A2B3C4D", "lost", "dora")
    assert run("registry", "replace-card", "1A2B3C4D", "--new-uid", "0A0B0C0D", "--db", imported,
               "--actor", "dora") == 0
    old, new = changes(imported)[-2:]
    assert (old.key, old.body["status"]) == ("1A2B3C4D", "replaced")
    assert (new.key, new.body["status"], new.body["registration"]) == ("0A0B0C0D", "active", "V001")
    assert count(imported, card_events) == 4 + 3


def test_illegal_card_moves_are_refused(imported, capsys):
    assert run("registry", "return-card", "11223344", "--decision", "x", "--db", imported,
               "--actor", "e") == 2
    assert "not confiscated" in capsys.readouterr().err
    assert run("registry", "lost", "DEADBEEF", "--db", imported, "--actor", "e") == 2
    assert "no card with uid 'DEADBEEF'" in capsys.readouterr().err
    assert run("registry", "replace-card", "11223344", "--new-uid", "AABBCCDD", "--db", imported,
               "--actor", "e") == 2
    assert "already exists" in capsys.readouterr().err


def test_list_prints_workers_cards_and_the_registration_record(imported, capsys):
    run("registry", "suspend", "V002", "--db", imported, "--actor", "b", "--from", "2026-03-12",
        "--days", "15", "--reason", "falta")
    capsys.readouterr()
    assert run("registry", "list", "--db", imported, "--actor", "x") == 0
    assert capsys.readouterr().out.count("\n") == 3
    assert run("registry", "list", "--what", "cards", "--registration", "V001", "--db", imported,
               "--actor", "x") == 0
    assert capsys.readouterr().out.count("\n") == 2
    assert run("registry", "list", "--what", "record", "--registration", "V002", "--db", imported,
               "--actor", "x") == 0
    assert '"suspension"' in capsys.readouterr().out


def test_changes_since_returns_only_newer_changes_of_one_kind(imported, engine):
    with Session(engine) as s:
        version, roster, cards = roster_snapshot(s)
        assert (len(roster), len(cards)) == (3, 4)
    with Session(engine) as s, s.begin():
        store.transition_card(s, "11223344", "lost", actor="f", now=store.utcnow())
        store.suspend(s, "V001", start=dt.date(2026, 4, 1), days=20, reason="x", article="a",
                      actor="f")
    with Session(engine) as s:
        assert [c.key for c in changes_since(s, "cards", version)] == ["11223344"]
        roster_changes = changes_since(s, "roster", version)
        assert [(c.key, c.actor) for c in roster_changes] == [("V001", "f")]
        assert changes_since(s, "roster", roster_changes[-1].version) == []
        with pytest.raises(BadInput):
            changes_since(s, "presence", 0)


def test_missing_actor_is_refused(imported, engine):
    with Session(engine) as s, s.begin(), pytest.raises(BadInput, match="actor"):
        store.transition_card(s, "11223344", "lost", actor=" ", now=store.utcnow())


def test_health_exam_and_booklet_update_the_roster_copy(imported, capsys):
    assert run("registry", "exam", "V001", "--date", "2026-02-01", "--db", imported, "--actor",
               "med") == 0
    change = last_change(imported)
    assert (change.key, change.body["health_exam_date"], change.actor) == ("V001", "2026-02-01",
                                                                           "med")
    assert run("registry", "booklet", "V001", "--year", "2027", "--db", imported, "--actor",
               "ana") == 0
    assert last_change(imported).body["booklet_revalidated_year"] == 2027
    assert run("registry", "exam", "V999", "--date", "2026-02-01", "--db", imported, "--actor",
               "med") == 2
    assert "no worker with registration 'V999'" in capsys.readouterr().err


def test_the_rotation_core_imports_no_database_or_clock_code():
    import subprocess
    import sys

    code = ("import sys, central.rotation.engine, central.rotation.eligibility; "
            "bad = [m for m in ('sqlalchemy', 'paho', 'central.db') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_R4_suspend_on_a_missing_database_is_refused_and_creates_nothing(tmp_path, capsys):
    missing = tmp_path / "nonexistent.db"
    assert run("registry", "suspend", "V002", "--db", f"sqlite:///{missing}", "--actor", "bruno",
               "--from", "2026-03-12", "--days", "10", "--reason", "x") == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "no worker" not in err
    assert not missing.exists()


def test_R4_suspend_refuses_a_gate_rulebook_as_its_limits(imported, capsys):
    gate_rulebook = Path(__file__).resolve().parents[3] / "config" / "rulebooks" / "gate-default.toml"
    assert run("registry", "suspend", "V002", "--db", imported, "--actor", "bruno",
               "--from", "2026-03-12", "--days", "200", "--reason", "x",
               "--rulebook", str(gate_rulebook)) == 2
    err = capsys.readouterr().err
    assert "not a pay rulebook" in err and "id" in err


@pytest.mark.parametrize("text,reason", [(None, "file not found"), ("id = = 1\n", "not valid TOML")])
def test_suspension_limits_from_a_missing_or_broken_file_are_one_config_error(tmp_path, text, reason):
    from central.registry.sanctions import load_suspension_limits
    from portgate.errors import ConfigError

    path = tmp_path / "book.toml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_suspension_limits(path)
    assert caught.value.path == str(path) and caught.value.reason.startswith(reason)


def card_rows(db_url):
    engine = db.make_engine(db_url)
    with Session(engine) as s:
        rows = {r.uid: (r.registration, r.status) for r in s.execute(select(store.cards))}
        events = s.execute(select(func.count()).select_from(card_events)).scalar()
    engine.dispose()
    return rows, events


@pytest.mark.parametrize("move, row, reason", [
    (("lost", "1a2b3c4d"), dict(uid="1A2B3C4D", kind="control", registration="V001", status="active"),
     "card 1A2B3C4D is lost: an import does not make it active; use "
     "`portgate registry return-card 1A2B3C4D --decision TEXT`"),
    (("replace-card", "1a2b3c4d", "--new-uid", "0A0B0C0D"),
     dict(uid="1A2B3C4D", kind="control", registration="V001", status="active"),
     "card 1A2B3C4D is replaced: an import does not make it active; a replaced card is never used again"),
    (None, dict(uid="1A2B3C4D", kind="control", registration="V001", status="lost"),
     "card 1A2B3C4D is active: an import does not make it lost; use `portgate registry lost 1A2B3C4D`"),
    (None, dict(uid="1A2B3C4D", kind="control", registration="V001", status="confiscated"),
     "card 1A2B3C4D is active: an import does not make it confiscated; only a union inspector "
     "confiscates a card, at the gate (G10)"),
    (None, dict(uid="1A2B3C4D", kind="control", registration="V002", status="active"),
     "card 1A2B3C4D is active and held by V001: an import does not move a card to another "
     "registration (give V002 a card with a new uid)"),
    (None, dict(uid="1A2B3C4D", kind="badge", registration="V001", status="active"),
     "card 1A2B3C4D is active and a control card: an import does not change a card's kind"),
])
def test_an_import_never_moves_a_registered_card_through_its_lifecycle(imported, tmp_path, capsys,
                                                                       move, row, reason):
    if move:
        assert run("registry", *move, "--db", imported, "--actor", "dora") == 0
    before = card_rows(imported), count(imported, downlink_changes), count(imported, audit_log)
    new = dict(uid="5A5B5C5D", kind="control", registration="V003", status="active")
    c = write_csv(tmp_path / "again.csv", CARD_COLUMNS, [new, row])
    capsys.readouterr()
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--cards", str(c)) == 2
    assert f"again.csv:3: {reason}" in capsys.readouterr().err
    assert (card_rows(imported), count(imported, downlink_changes),
            count(imported, audit_log)) == before  # the whole file refused, 5A5B5C5D not issued


def test_a_confiscated_card_comes_back_only_by_return_card_which_closes_its_case(imported, engine,
                                                                                tmp_path, capsys):
    from central.registry.confiscation import record_confiscation
    from central.registry.schema import cases
    from tests.central.registry.test_confiscation import confiscation, event
    with Session(engine) as s, s.begin():
        record_confiscation(s, event(confiscation(uid="11223344", registration="V002")))
    c = write_csv(tmp_path / "cards.csv", CARD_COLUMNS,
                  [dict(uid="11223344", kind="control", registration="V002", status="active")])
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--cards", str(c)) == 2
    assert ("cards.csv:2: card 11223344 is confiscated: an import does not make it active; use "
            "`portgate registry return-card 11223344 --decision TEXT` (it closes the card's open "
            "case)") in capsys.readouterr().err
    with Session(engine) as s:
        assert s.execute(select(cases.c.status)).scalars().all() == ["open"]
        assert s.execute(select(store.cards.c.status).where(
            store.cards.c.uid == "11223344")).scalar() == "confiscated"


def test_reimporting_cards_as_they_are_is_a_no_op(imported, files, capsys):
    assert run("registry", "lost", "aabbccdd", "--db", imported, "--actor", "dora") == 0
    c = write_csv(files[1].parent / "now.csv", CARD_COLUMNS, [
        dict(uid="1a2b3c4d", kind="control", registration="V001", status="active"),
        dict(uid="AABBCCDD", kind="badge", registration="V001", status="lost")])
    before = card_rows(imported), count(imported, downlink_changes)
    capsys.readouterr()
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--cards", str(c)) == 0
    assert capsys.readouterr().out.strip() == "nothing changed: 2 row(s) already registered as given"
    assert (card_rows(imported), count(imported, downlink_changes)) == before


def test_reimporting_the_same_files_changes_and_reports_nothing(imported, files, capsys):
    w, c = files
    before = count(imported, downlink_changes), count(imported, audit_log)
    capsys.readouterr()
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--workers", str(w), "--cards", str(c)) == 0
    assert capsys.readouterr().out.strip() == "nothing changed: 7 row(s) already registered as given"
    assert (count(imported, downlink_changes), count(imported, audit_log)) == before


def test_an_import_reports_only_the_rows_that_changed(imported, files, capsys):
    w = write_csv(files[0].parent / "one.csv", WORKER_COLUMNS, [
        dict(registration="V001", name="Outro Nome", category="vigia", status="active"),
        dict(registration="V009", name="Novo", category="vigia", status="active")])
    capsys.readouterr()
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--workers", str(w)) == 0
    assert capsys.readouterr().out.strip() == "imported 2 worker(s), 0 card(s)"
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--workers", str(w),
               "--cards", str(files[1])) == 0
    assert capsys.readouterr().out.strip() == "nothing changed: 6 row(s) already registered as given"


def test_a_category_with_blanks_or_capitals_joins_the_category_s_rotation_list(db_url, tmp_path, capsys):
    first = write_csv(tmp_path / "a.csv", WORKER_COLUMNS, worker_rows(2))
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(first)) == 0
    typed = worker_rows(3)[2] | {"category": "Vigia ", "rotation_number": "2"}
    again = write_csv(tmp_path / "b.csv", WORKER_COLUMNS, [typed])
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(again)) == 2
    assert "b.csv:2: rotation_number 2 is already held by V002 (vigia)" in capsys.readouterr().err
    spaced = write_csv(tmp_path / "c.csv", WORKER_COLUMNS,
                       [typed | {"category": "  VIGIA\u00a0", "rotation_number": "3"}])
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(spaced)) == 0
    engine = db.make_engine(db_url)
    with engine.connect() as conn:
        assert set(conn.execute(select(workers.c.category)).scalars()) == {"vigia"}
    engine.dispose()


def test_a_second_active_card_of_a_kind_is_refused_naming_replace_card(imported, tmp_path, capsys):
    assert run("registry", "replace-card", "11223344", "--new-uid", "0A04A10904", "--db", imported,
               "--actor", "dora") == 0
    c = write_csv(tmp_path / "cards.csv", CARD_COLUMNS, [
        dict(uid="0A04A10905", kind="control", registration="V002", status="active"),
        dict(uid="0A04A10906", kind="badge", registration="V003", status="active"),
        dict(uid="0A04A10907", kind="badge", registration="V003", status="active")])
    before = card_rows(imported)
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--cards", str(c)) == 2
    err = capsys.readouterr().err
    assert ("cards.csv:2: registration V002 already has active control card 0A04A10904; use "
            "`portgate registry replace-card 0A04A10904 --new-uid 0A04A10905`") in err
    assert "cards.csv:4: registration V003 already has active badge card 0A04A10906" in err
    assert "cards.csv:3" not in err and card_rows(imported) == before


def test_import_refusal_names_a_move_outside_the_lifecycle():
    from portgate.records import Card, CardKind, CardStatus
    old = Card("0A04A10008", CardKind.CONTROL, "V008", CardStatus.CONFISCATED)
    lost = Card("0A04A10008", CardKind.CONTROL, "V008", CardStatus.LOST)
    assert store.import_refusal(old, lost) == (
        "card 0A04A10008 is confiscated: an import does not make it lost; not a card lifecycle move "
        "(docs/office.md)")
    assert store.import_refusal(old, old) is None


@pytest.mark.parametrize("sanction,row,reason", [
    (("cancel", "V002", "--on", "2026-03-01", "--reason", "falta grave"), {},
     "registration V002 is cancelled (R4): an import does not reinstate a worker"),
    (("suspend", "V002", "--from", "2026-03-10", "--days", "20", "--reason", "x"), {},
     "registration V002 is suspended 2026-03-10..2026-03-29 (R4): an import does not change a suspension"),
    (None, {"status": "suspended", "suspended_from": "2026-04-01", "suspended_until": "2026-04-10"},
     "registration V002 is active: an import does not suspend a worker (use `portgate registry suspend`"),
    (None, {"status": "cancelled"},
     "registration V002 is active: an import does not cancel a worker (use `portgate registry cancel`"),
])
def test_an_import_never_lifts_changes_or_imposes_a_sanction(imported, tmp_path, capsys, sanction, row, reason):
    """R4 (83.611 arts. 20 §3, 21): re-importing the office's usual workers.csv must not give a
    cancelled or suspended worker back to the gates as active (G3), nor sanction anyone without the
    penalty on the record; the whole file is refused, nothing written."""
    if sanction:
        assert run("registry", *sanction, "--db", imported, "--actor", "dora") == 0
    rows = worker_rows(3)
    rows[1].update(row)
    w = write_csv(tmp_path / "again.csv", WORKER_COLUMNS, rows)
    before = count(imported, workers), count(imported, downlink_changes), count(imported, audit_log)
    capsys.readouterr()
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--workers", str(w)) == 2
    assert f"again.csv:3: {reason}" in capsys.readouterr().err
    assert (count(imported, workers), count(imported, downlink_changes), count(imported, audit_log)) == before


def test_a_sanction_restated_as_the_registry_holds_it_imports(imported, tmp_path):
    assert run("registry", "suspend", "V002", "--from", "2026-03-10", "--days", "20", "--reason", "x",
               "--db", imported, "--actor", "dora") == 0
    rows = worker_rows(3)
    rows[1].update(status="suspended", suspended_from="2026-03-10", suspended_until="2026-03-29")
    rows[2]["name"] = "Vigia Três"  # the other fields are the import's to change
    w = write_csv(tmp_path / "again.csv", WORKER_COLUMNS, rows)
    assert run("registry", "import", "--db", imported, "--actor", "ana", "--workers", str(w)) == 0


@pytest.mark.parametrize("field,value,reason", [
    ("health_exam_date", "9999-12-31", "health_exam_date '9999-12-31' is outside 2000-01-01..2100-12-31"),
    ("health_exam_date", "0001-01-01", "health_exam_date '0001-01-01' is outside 2000-01-01..2100-12-31"),
    ("booklet_revalidated_year", "99999", "booklet_revalidated_year 99999 is outside 2000..2100"),
    ("booklet_revalidated_year", "1", "booklet_revalidated_year 1 is outside 2000..2100"),
])
def test_implausible_dates_and_years_are_refused_naming_the_row(db_url, tmp_path, capsys, field, value, reason):
    """A 9999 exam would keep a registration valid for ever (G3) and broke the worker page."""
    rows = worker_rows(2)
    rows[1][field] = value
    w = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, rows)
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(w)) == 2
    assert f"workers.csv:3: {reason}" in capsys.readouterr().err
    assert count(db_url, workers) == 0


def test_repeated_keys_are_named_with_the_other_bad_rows_of_both_files_in_one_pass(db_url, tmp_path, capsys):
    rows = worker_rows(3)
    rows[1] = rows[1] | {"status": "retired"}  # line 3: bad
    w = write_csv(tmp_path / "w.csv", WORKER_COLUMNS, rows + [rows[0]])  # line 5 repeats line 2
    c = write_csv(tmp_path / "c.csv", CARD_COLUMNS, [
        dict(uid="1A2B3C4D", kind="control", registration="V001", status="active"),
        dict(uid="1a2b3c4d", kind="badge", registration="V001", status="active"),  # repeats line 2
        dict(uid="55667788", kind="chip", registration="V002", status="active")])  # bad kind
    assert run("registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(w), "--cards", str(c)) == 2
    err = capsys.readouterr().err
    named = [line.split(": ", 2)[1] if line.startswith("portgate: ") else line.split(": ", 1)[0]
             for line in err.strip().splitlines()]
    assert named == ["w.csv:3", "w.csv:5", "c.csv:3", "c.csv:4"], err
    assert "w.csv:5: registration V001 repeats line 2" in err and "c.csv:3: uid 1A2B3C4D repeats line 2" in err
    assert count(db_url, workers) == 0
