"""Values too long or too large for their database column are refused where they enter (the CSV
row, the command-line option), on SQLite and on PostgreSQL alike: one ``BadInput`` naming the file,
line and column, one line ``portgate: ...`` with exit 2 from the command line, nothing written
(``central.bounds`` reads the sizes from the tables)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.cli import main
from central import bounds
from central.db import make_engine
from central.registry import store
from central.registry.edit import edit_worker
from central.registry.schema import booklet_revalidations, workers
from central.rotation.dispatch_file import dispatch_file
from central.rotation.requisitions import COLUMNS as REQ_COLUMNS, load_requisitions
from central.rotation.schema import escala, requisitions
from portgate.errors import BadInput

# the office's clock for the rotation commands (--at): the evening before 2026-03-10, when none of
# its periods has ended (the machine's date is later: a past escala is refused)
AT = "2026-03-09T21:00:00+00:00"

NOW = dt.datetime(2026, 3, 9, 12, tzinfo=dt.UTC)
HEADER = "registration,name,category,status,booklet_revalidated_year,rotation_number\n"
GOOD = "V001,Ana,vigia,active,2026,1\n"
REQ_HEADER = "date,period,operator,ship,ship_name,voyage,berth,gate_id,post,function,workers\n"


def _req(post="portalo", operator="Op A", gate="g1") -> str:
    return f"2026-03-10,07-13,{operator},9123456,Ship,long_haul,berthed,{gate},{post},vigia,1\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path, ledgers) -> str:
    """A ledger of the test's own at the newest revision: a copy of the session's migrated SQLite
    file or PostgreSQL template (``ledgers``, tests/central/conftest.py; issue 32: the migrations
    took ~0.8 s of every test under load; they have their own tests in tests/central/ledger)."""
    return ledgers.url(request, request.param, tmp_path)


@pytest.fixture
def engine(db_url):
    e = make_engine(db_url)
    yield e
    e.dispose()


def _count(engine, table) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar()


def _run(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


def _one_line(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def test_the_sizes_come_from_the_tables():
    assert bounds.text_limit(workers, "registration") == 64
    assert bounds.int_range(workers, "rotation_number") == (-2**31, 2**31 - 1)
    assert bounds.problem(workers, "category", "x" * 64) is None
    assert bounds.problem(workers, "category", "x" * 65) == "category is longer than 64 characters (65)"
    assert bounds.problem(workers, "rotation_number", 2**31) == (
        "rotation_number 2147483648 is outside -2147483648..2147483647")
    assert bounds.problem(workers, "name", "a\x00b") == "name contains a NUL character"


def test_the_escala_columns_hold_whatever_a_requisition_holds():
    for name in REQ_COLUMNS:
        if name in escala.c and bounds.text_limit(requisitions, name) is not None:
            assert bounds.text_limit(escala, name) >= bounds.text_limit(requisitions, name), name


@pytest.mark.parametrize("row, reason", [
    ("R" * 100 + ",Ana,vigia,active,2026,2\n", "registration is longer than 64 characters (100)"),
    ("V002,Ana," + "c" * 100 + ",active,2026,1\n", "category is longer than 64 characters (100)"),
    ("V002,Ana,vigia,active,2026,99999999999999999999999\n",
     "rotation_number 99999999999999999999999 is outside -2147483648..2147483647"),
    ("V002,Ana,vigia,active,99999999999,2\n",
     "booklet_revalidated_year 99999999999 is outside 2000..2100"),
])
def test_a_workers_row_that_does_not_fit_is_refused_naming_file_line_and_column(engine, tmp_path, row, reason):
    path = tmp_path / "w.csv"
    path.write_text(HEADER + GOOD + row, encoding="utf-8")
    with pytest.raises(BadInput) as caught, Session(engine) as s, s.begin():
        store.import_files(s, workers_csv=path, actor="t", now=NOW)
    assert str(caught.value) == f"w.csv:3: {reason}"
    assert _count(engine, workers) == 0


def test_the_registry_import_command_refuses_a_huge_rotation_number_in_one_line(engine, db_url, tmp_path, capsys):
    path = tmp_path / "w.csv"
    path.write_text(HEADER + "V001,Ana,vigia,active,2026,99999999999999999999999\n", encoding="utf-8")
    code, err = _run(capsys, "registry", "import", "--db", db_url, "--workers", str(path))
    _one_line(code, err, "portgate: w.csv:2: rotation_number 99999999999999999999999 is outside")
    assert _count(engine, workers) == 0


@pytest.mark.parametrize("row, reason", [
    (_req(post="p" * 100), "post is longer than 64 characters (100)"),
    (_req(operator="o" * 200), "operator is longer than 128 characters (200)"),
    (_req(gate="g" * 65), f"gate_id {'g' * 65!r} is not a valid id"),  # the gate's own id check first
])
def test_a_requisition_that_does_not_fit_is_refused_and_nothing_is_dispatched(engine, tmp_path, row, reason):
    path = tmp_path / "req.csv"
    path.write_text(REQ_HEADER + _req() + row, encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        load_requisitions(path)
    assert str(caught.value).startswith(f"req.csv:3: {reason}")
    with pytest.raises(BadInput), Session(engine) as s, s.begin():
        dispatch_file(s, dt.date(2026, 3, 10), path, actor="t", now=NOW)
    assert _count(engine, requisitions) == 0


def test_the_rotation_dispatch_command_refuses_a_long_post_in_one_line(engine, db_url, tmp_path, capsys):
    path = tmp_path / "req.csv"
    path.write_text(REQ_HEADER + _req(post="p" * 100), encoding="utf-8")
    code, err = _run(capsys, "rotation", "dispatch", "--at", AT, "--db", db_url, "--date", "2026-03-10",
                     "--requisitions", str(path))
    _one_line(code, err, "req.csv:2: post is longer than 64 characters (100)")


@pytest.fixture
def registered(engine, tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(HEADER + GOOD, encoding="utf-8")
    with Session(engine) as s, s.begin():
        store.import_files(s, workers_csv=path, actor="t", now=NOW)
    return engine


@pytest.mark.parametrize("field, value, reason", [
    ("category", "c" * 100, "category is longer than 64 characters (100)"),
    ("rotation_number", "99999999999", "rotation_number 99999999999 is outside -2147483648..2147483647"),
])
def test_an_edit_that_does_not_fit_is_refused_and_the_worker_is_unchanged(registered, field, value, reason):
    with pytest.raises(BadInput) as caught, Session(registered) as s, s.begin():
        edit_worker(s, "V001", {field: value}, actor="t", now=NOW)
    assert str(caught.value) == reason
    with Session(registered) as s:
        w = store.get_worker(s, "V001")
    assert (w.category, w.rotation_number) == ("vigia", 1)


def test_a_registration_with_a_nul_is_refused_not_looked_up(registered):
    with pytest.raises(BadInput) as caught, Session(registered) as s:
        store.get_worker(s, "V\x00")
    assert str(caught.value) == "registration: registration contains a NUL character"


def test_the_booklet_command_refuses_a_year_out_of_range_in_one_line(registered, db_url, capsys):
    code, err = _run(capsys, "registry", "booklet", "--db", db_url, "V001", "--year", "99999999999")
    _one_line(code, err, "portgate: --year: year 99999999999 is outside -2147483648..2147483647")
    assert _count(registered, booklet_revalidations) == 1  # the import's only


def test_a_suspension_from_outside_the_office_s_days_is_refused_in_one_line(registered, db_url, capsys):
    code, err = _run(capsys, "registry", "suspend", "--db", db_url, "V001", "--from", "9999-12-30",
                     "--days", "30", "--reason", "x")
    _one_line(code, err, "--from", "'9999-12-30' is outside 2000-01-01..2100-12-31")
    with Session(registered) as s:
        assert store.get_worker(s, "V001").status.value == "active"


def test_a_suspension_ending_after_the_last_date_is_a_bad_input_not_an_overflow(registered):
    with pytest.raises(BadInput) as caught, Session(registered) as s, s.begin():
        store.suspend(s, "V001", start=dt.date(9999, 12, 30), days=30, reason="x", article="a", actor="t", now=NOW)
    assert str(caught.value) == "start: the suspension would end after 9999-12-31"


@pytest.mark.parametrize("argv, words", [
    (("rotation", "presence", "--date", "0001-01-01"), "'0001-01-01' is outside 2000-01-01..2100-12-31"),
    (("rotation", "sizing", "--month", "0001-01-01"), "'0001-01-01' is outside 2000-01-01..2100-12-31"),
    (("rotation", "fairness", "--month", "2026-13"), "'2026-13' is not YYYY-MM"),
    (("rotation", "fairness", "--month", "9999-12"), "'9999-12' is outside 2000-01..2100-12"),
    (("rotation", "hours", "--month", "9999-12"), "portgate: a number or date is out of range (date value out of range)"),
])
def test_an_office_day_or_month_out_of_range_is_one_line(registered, db_url, capsys, argv, words):
    code, err = _run(capsys, *argv, "--db", db_url)
    _one_line(code, err, words)


def test_an_escala_entry_too_large_for_any_id_is_no_entry_in_one_line(registered, db_url, capsys):
    code, err = _run(capsys, "rotation", "refuse", "--at", AT, "--db", db_url, "--entry", "99999999999999999999",
                     "--reason", "x")
    _one_line(code, err, "portgate: --entry: no escala entry 99999999999999999999")


def test_an_actor_too_long_for_the_audit_log_is_refused_in_one_line(registered, db_url, capsys):
    code, err = _run(capsys, "registry", "exam", "--db", db_url, "--actor", "a" * 200, "V001",
                     "--date", "2026-03-01")
    _one_line(code, err, "--actor", "actor is longer than 128 characters (200)")


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)  # SQLite stores any length
def test_a_value_the_database_refuses_past_the_checks_reads_as_one_line(registered):
    from sqlalchemy.exc import DataError

    from app.cli import _describe

    with pytest.raises(DataError) as caught, registered.begin() as conn:
        conn.execute(workers.update().values(category="c" * 100))
    line = _describe(caught.value)
    assert line.startswith("the database refused a value (too long or out of range: value too long")
    assert "\n" not in line and line.endswith("nothing was written")
