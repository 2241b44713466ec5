"""Issue 34: a period that has ended is neither dispatched nor changed, decided against the clock the
caller passes (``--at`` here, never the machine's date), and a requisition naming a function the
office does not know is refused; through ``portgate rotation`` on SQLite (the web app on SQLite and
PostgreSQL: tests/central/web/test_escala_menu_web.py; in a browser: test_escala_demo_browser.py)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.cli import main
from central.registry.schema import audit_log, downlink_changes, penalties
from central.rotation.engine import FUNCTION_CATEGORY, category_of, ended_at, known_functions
from central.rotation.schema import escala, refusals, requisitions
from edge.rules.rulebook import DEFAULT_CATEGORY_FUNCTIONS
from portgate.records import Berth, EscalaEntry, Voyage
from testkit.sqlite_copies import copy_made_once
from tests.central.registry.conftest import REQ_COLUMNS, WORKER_COLUMNS, req_row, worker_rows, write_csv

TZ = "America/Sao_Paulo"
EVE = "2026-03-09T21:00:00+00:00"  # 18:00 of 2026-03-09 in the port: 2026-03-10 still to come
# 07-13 of 2026-03-10 ends at 13:00 port time = 16:00 UTC
LAST_MINUTE = "2026-03-10T15:59:00+00:00"
ENDED = "2026-03-10T16:00:00+00:00"


def _entry(period: str = "07-13", day: dt.date = dt.date(2026, 3, 10)) -> EscalaEntry:
    return EscalaEntry(day, period, "9123456", "Ship", Voyage.LONG_HAUL, Berth.BERTHED, "g1", "portalo",
                       "vigia", "V001")


def test_a_period_ends_at_its_end_hour_in_port_time_and_a_19_01_on_the_next_day():
    end = ended_at(_entry(), dt.datetime(2026, 3, 10, 16, 0, tzinfo=dt.UTC), TZ)
    assert end is not None and (end.isoformat()) == "2026-03-10T13:00:00-03:00"
    assert ended_at(_entry(), dt.datetime(2026, 3, 10, 15, 59, 59, tzinfo=dt.UTC), TZ) is None
    # 19-01 of the 10th ends at 01:00 of the 11th (04:00 UTC)
    assert ended_at(_entry("19-01"), dt.datetime(2026, 3, 11, 3, 59, tzinfo=dt.UTC), TZ) is None
    assert ended_at(_entry("19-01"), dt.datetime(2026, 3, 11, 4, 0, tzinfo=dt.UTC), TZ) is not None
    with pytest.raises(ValueError, match="aware"):
        ended_at(_entry(), dt.datetime(2026, 3, 10, 16, 0), TZ)  # a naive clock is a programming error


def test_the_office_functions_are_the_gates_default_g12_table():
    """The office's function -> category table is the gate's default G12 table read the other way,
    so a function the office dispatches is one some category may fill at the gate."""
    assert FUNCTION_CATEGORY == {f: c for c, fs in DEFAULT_CATEGORY_FUNCTIONS.items() for f in fs}
    assert category_of("conferente") == "capatazia" and category_of("arrumador") == "arrumador"
    assert known_functions(["arrumador"]) == frozenset(FUNCTION_CATEGORY) | {"arrumador"}


def _register(path: Path) -> None:
    """A new office ledger at ``path`` with V001..V004 (vigia) and A001 (arrumador, a category new to
    the office: refused without ``--new-category``), imported by ``portgate registry import``."""
    db_url = f"sqlite:///{path}"
    rows = worker_rows(4) + [dict(worker_rows(1)[0], registration="A001", name="Arrumador 1",
                                  category="arrumador", rotation_number="1")]
    w = write_csv(path.parent / "workers.csv", WORKER_COLUMNS, rows)
    assert main(["registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(w)]) == 2  # a new category
    assert main(["registry", "import", "--db", db_url, "--actor", "ana", "--workers", str(w),
                 "--new-category", "arrumador"]) == 0


@pytest.fixture
def office(db_url):
    """``db_url`` (a new SQLite file's URL) holding ``_register``'s office: a copy of the ledger this
    process registered once (testkit.sqlite_copies; issue 32: the migrations and two imports took
    ~1.5 s of every test's set-up under load)."""
    copy_made_once("past_and_functions_office", _register, Path(db_url.removeprefix("sqlite:///")))
    return db_url


def _counts(engine) -> tuple[int, ...]:
    with engine.connect() as c:
        return tuple(c.execute(select(func.count()).select_from(t)).scalar()
                     for t in (escala, requisitions, refusals, penalties, downlink_changes, audit_log))


def _run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err.strip()


def _dispatch(office, tmp_path, capsys, rows, at: str = EVE) -> tuple[int, str, str]:
    path = write_csv(tmp_path / "requisitions.csv", REQ_COLUMNS, rows)
    return _run(capsys, "rotation", "dispatch", "--at", at, "--date", "2026-03-10", "--requisitions", str(path),
                "--db", office, "--actor", "disp")


def _one_entry(office, tmp_path, capsys) -> int:
    code, out, err = _dispatch(office, tmp_path, capsys, [req_row("A1")])
    assert code == 0, err
    code, out, _err = _run(capsys, "rotation", "list", "--date", "2026-03-10", "--db", office, "--actor", "x")
    [entry] = [json.loads(line) for line in out.splitlines()]
    return entry["id"]


@pytest.mark.parametrize("command, extra", [
    ("refuse", ()), ("refuse", ("--health-proof", "atestado 1")),
    ("substitute", ()), ("substitute", ("--registration", "V004")),
])
def test_a_refusal_or_substitution_after_the_period_ended_is_refused_and_writes_nothing(
        office, tmp_path, capsys, engine, command, extra):
    entry = _one_entry(office, tmp_path, capsys)
    before = _counts(engine)
    code, out, err = _run(capsys, "rotation", command, "--at", ENDED, "--entry", str(entry), "--reason", "tarde",
                          *extra, "--db", office, "--actor", "disp")
    assert (code, out) == (2, "")
    assert err == (f"portgate: --entry: escala entry {entry} (2026-03-10 07-13) ended at 2026-03-10 13:00 "
                   "port time: a past escala is not changed")
    assert _counts(engine) == before  # no refusal, infraction, change row or audit row
    # a minute before the end the same command is a late change, accepted
    code, out, err = _run(capsys, "rotation", command, "--at", LAST_MINUTE, "--entry", str(entry), "--reason",
                          "tarde", *extra, "--db", office, "--actor", "disp")
    assert code == 0, err
    with engine.connect() as c:
        assert c.execute(select(escala.c.status).where(escala.c.id == entry)).scalar() == "removed"


def test_the_machines_date_does_not_decide_an_explicit_clock_does(office, tmp_path, capsys, engine):
    """The machine's date (2026-12 or later) is long after 2026-03-10: without ``--at`` the period has
    ended; with the evening before it has not."""
    entry = _one_entry(office, tmp_path, capsys)
    code, _out, err = _run(capsys, "rotation", "refuse", "--entry", str(entry), "--reason", "x", "--db", office,
                           "--actor", "disp")
    assert code == 2 and "a past escala is not changed" in err
    code, _out, err = _run(capsys, "rotation", "refuse", "--now", EVE, "--entry", str(entry), "--reason", "x",
                           "--db", office, "--actor", "disp")
    assert code == 0, err


def test_a_requisition_for_a_period_that_has_ended_is_refused_naming_its_row(office, tmp_path, capsys, engine):
    before = _counts(engine)
    code, out, err = _dispatch(office, tmp_path, capsys,
                               [req_row("A1", period="01-07"), req_row("A2", period="19-01")],
                               at="2026-03-10T12:00:00+00:00")  # 09:00 in the port: 01-07 is over
    assert (code, out) == (2, "")
    assert err == ("portgate: A1: the period 01-07 of 2026-03-10 ended at 2026-03-10 07:00 port time: "
                   "a past escala is not dispatched")
    assert _counts(engine) == before
    # the same file an hour before 01-07's end (06:00 port time) is dispatched
    code, out, err = _dispatch(office, tmp_path, capsys,
                               [req_row("A1", period="01-07"), req_row("A2", period="19-01")],
                               at="2026-03-10T09:00:00+00:00")
    assert code == 0 and json.loads(out)["dispatched"] == 2, err


@pytest.mark.parametrize("at, words", [
    ("2026-03-10T12:00:00", "--at"),  # no offset
    ("amanhã", "--at"),
    ("1999-12-31T23:00:00+00:00", "outside 2000-01-01..2100-12-31"),
])
def test_a_bad_clock_is_one_line_and_nothing_written(office, tmp_path, capsys, engine, at, words):
    before = _counts(engine)
    code, out, err = _dispatch(office, tmp_path, capsys, [req_row("A1")], at=at)
    assert code == 2 and out == "" and "\n" not in err and words in err, err
    assert _counts(engine) == before


def test_a_requisition_with_an_unknown_function_is_a_bad_row_and_nothing_is_dispatched(
        office, tmp_path, capsys, engine):
    before = _counts(engine)
    rows = [req_row("A1"), req_row("A2", function="vigia_xefe", post="proa"),
            req_row("A3", function=" Feitor ", post="popa", gate_id="g/x")]
    code, out, err = _dispatch(office, tmp_path, capsys, rows)
    assert (code, out) == (2, "")
    lines = err.removeprefix("portgate: ").splitlines()
    assert lines[0] == ("requisitions.csv:3: function 'vigia_xefe' is unknown to the office (no category fills "
                        "it): the functions are ajudante_feitor, arrumador, conferente, contramestre, "
                        "contramestre_geral, estivador, feitor, motorista_armazem, motorista_guindaste, trabalhador, "
                        "vigia, vigia_chefe"), err
    assert lines[1].startswith("requisitions.csv:4: gate_id"), err  # the other bad rows named in the same run
    assert len(lines) == 2, err
    assert _counts(engine) == before


def test_a_registered_category_and_a_capatazia_function_are_functions(office, tmp_path, capsys, engine):
    """``arrumador`` (a category of the registry) is its own function; ``conferente`` draws on the
    ``capatazia`` rotation (nobody registered: a shortfall, reported, not an error)."""
    code, out, err = _dispatch(office, tmp_path, capsys, [
        req_row("A1", function="arrumador", post="porao"), req_row("A2", function="conferente", post="cais")])
    assert code == 0, err
    summary = json.loads(out)
    assert summary["dispatched"] == 1 and summary["shortfalls"] == {"A2": 1}
    with engine.connect() as c:
        assert c.execute(select(escala.c.registration, escala.c.function)).all() == [("A001", "arrumador")]
