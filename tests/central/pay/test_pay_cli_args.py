"""``--rulebook ""``, a ``--by`` longer than its column and a rulebook of another kind are refused
in one line, exit 2, before anything is stored (a real SQLite ledger that would otherwise be paid)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from central.db import make_engine
from central.ledger.tables import statements
from tests.central.pay.test_pay_cli import run
from tests.central.pay.test_statement_versions import _ledger
from testkit.sqlite_copies import copy_made_once

DAY = ("--from", "2026-03-15", "--to", "2026-03-15")
CLOSE_AT = ("--at", "2026-04-05T00:00:00+00:00")


def _made(path) -> None:
    _ledger(f"sqlite:///{path}").dispose()


@pytest.fixture
def ledger(tmp_path):
    """A SQLite ledger of its own holding SHIFTS' taps: a copy of the one ``_ledger`` migrates and fills
    once per process (``testkit.sqlite_copies``; the migrations have their own tests)."""
    copy_made_once("pay-args-shifts", _made, tmp_path / "ledger.db")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    engine = make_engine(url)
    yield url, engine
    engine.dispose()


def _stored(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(statements)).scalar_one()


@pytest.mark.parametrize("command", [("pay",), ("pay", "close", *CLOSE_AT)], ids=["pay", "close"])
@pytest.mark.parametrize("args, named", [
    (("--rulebook", ""), "--rulebook: is empty"),
    (("--rulebook", "  "), "--rulebook: is empty"),
    (("--by", "x" * 129), "--by: has 129 characters (at most 128)"),
    (("--rulebook", "dl-2032-1940"), "not a watchmen's pay rulebook"),
    (("--rulebook", "gate-default"), "not a watchmen's pay rulebook"),
], ids=["empty-rulebook", "blank-rulebook", "long-by", "production-rulebook", "gate-rulebook"])
def test_a_bad_pay_argument_is_refused_in_one_line(ledger, capsys, command, args, named):
    url, engine = ledger
    code, out, err = run(capsys, *command, "--db", url, *DAY, *args)
    line = err.strip()
    assert code == 2 and out == [], err
    assert len(line.splitlines()) == 1 and named in line, line
    assert "unknown key" not in line
    assert _stored(engine) == 0


def test_a_by_of_exactly_128_characters_is_kept(ledger, capsys):
    url, engine = ledger
    code, _, err = run(capsys, "pay", "close", "--db", url, *DAY, *CLOSE_AT, "--by", "y" * 128)
    assert code == 0, err
    with engine.connect() as conn:
        assert set(conn.execute(select(statements.c.computed_by)).scalars()) == {"y" * 128}


def test_an_empty_what_if_is_refused(ledger, capsys):
    url, _engine = ledger
    code, _, err = run(capsys, "pay", "--db", url, *DAY, "--what-if", "")
    assert code == 2 and "--what-if: is empty" in err


@pytest.mark.parametrize("option", ["--what-if", "--rulebook"])
def test_a_rulebook_nested_too_deeply_is_refused_in_one_line(ledger, capsys, tmp_path, option):
    url, engine = ledger
    deep = tmp_path / "deep.toml"
    deep.write_text("a=" + "[" * 5000, encoding="utf-8")
    code, out, err = run(capsys, "pay", "--db", url, *DAY, option, str(deep))
    line = err.strip()
    assert code == 2 and out == [], err
    assert len(line.splitlines()) == 1 and "the rulebook is nested too deeply" in line, line
    assert str(deep) in line
    assert _stored(engine) == 0


def test_what_if_with_shifts_is_a_usage_error_not_ignored(tmp_path, capsys):
    from tests.central.pay.test_pay_cli import write_csv

    shifts = str(write_csv(tmp_path / "shifts.csv"))
    code, out, err = run(capsys, "pay", "--shifts", shifts, "--what-if", "example-cct-2026")
    line = err.strip()
    assert code == 2 and out == [], err
    assert len(line.splitlines()) == 1 and "--what-if" in line and "--shifts" in line, line
    code, out, _ = run(capsys, "pay", "--shifts", shifts)
    assert code == 0 and out  # the same file without --what-if is paid


def _tables(path) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master ORDER BY name")]
    finally:
        conn.close()


@pytest.mark.parametrize("content", ["tables", "empty"])
def test_a_what_if_on_a_database_without_a_ledger_says_so_and_writes_nothing(tmp_path, capsys, content):
    """A what-if stores nothing: it neither creates the ledger's tables nor touches the file (not
    even its journal mode)."""
    import sqlite3

    path = tmp_path / "other.db"
    if content == "tables":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE notes (x TEXT)")
        conn.execute("INSERT INTO notes VALUES ('kept')")
        conn.commit()
        conn.close()
    else:
        path.write_bytes(b"")
    before = path.read_bytes()
    url = f"sqlite:///{path}"
    code, out, err = run(capsys, "pay", "--db", url, *DAY, "--what-if", "example-cct-2026")
    assert code == 2 and out == [], err
    if content == "tables":
        assert err.strip() == (f"portgate: {url} holds no portgate ledger (no ledger tables); a what-if stores "
                               "nothing and creates none: create the ledger with `portgate ledger migrate --db URL`")
    else:  # a 0-byte file is refused before it is opened, as by every command that reads a ledger
        assert err.strip() == (f"portgate: --db: SQLite file {str(path)!r} is empty (0 bytes): a failed copy or a "
                               "wrong path? Restore the ledger or fix the path; to start a new ledger in this file "
                               "run `portgate ledger migrate --db URL`")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # no -wal, no -shm
    assert _tables(path) == (["notes"] if content == "tables" else [])


def test_a_what_if_on_a_file_that_is_not_a_database_is_refused_as_the_pay_run_is(tmp_path, capsys):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database at all" * 200)
    url = f"sqlite:///{path}"
    for what_if in (("--what-if", "example-cct-2026"), ()):
        code, out, err = run(capsys, "pay", "--db", url, *DAY, *what_if)
        assert code == 2 and out == [], err
        assert err.strip() == f"portgate: {url} is not a database (not a portgate ledger): file is not a database"
    assert path.read_bytes() == b"this is not a database at all" * 200


def test_a_what_if_on_a_ledger_of_an_older_revision_does_not_upgrade_it(tmp_path, capsys):
    from central.ledger.migrate import current, head, upgrade

    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0001")
    code, out, err = run(capsys, "pay", "--db", url, *DAY, "--what-if", "example-cct-2026")
    assert code == 2 and out == [], err
    assert err.strip() == (f"portgate: {url}: the ledger is at revision 0001, this software reads {head()}; "
                           "a what-if writes nothing, not even an upgrade: run `portgate ledger migrate "
                           "--db URL` first")
    assert current(url) == "0001"


def test_a_what_if_on_a_ledger_compares_and_stores_nothing(ledger, capsys):
    url, engine = ledger
    code, _, err = run(capsys, "pay", "--db", url, *DAY, "--what-if", "example-cct-2026")
    assert code == 0, err
    assert "nothing stored" in err and _stored(engine) == 0
