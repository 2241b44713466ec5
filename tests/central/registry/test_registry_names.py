"""``registry import`` refuses a NUL, a control character or a line break in a name or id with the
file and line, exit 2, on SQLite and on PostgreSQL (which refuses NUL in text: once a traceback)."""

from __future__ import annotations

import itertools

import pytest
from sqlalchemy import func, select

from app.cli import main
from central import db
from central.registry.schema import workers
from tests.central.registry.conftest import WORKER_COLUMNS, worker_rows, write_csv

_n = itertools.count(1)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'office.db'}"
    return request.getfixturevalue("pg_cluster").create_database(f"names{next(_n)}")


@pytest.mark.parametrize("field, value, says", [
    ("name", "Ana\x00Silva", "NUL"),
    ("name", "Ana\nSilva", "control character or line break"),
    ("name", "Ana\x07", "control character or line break"),
    ("registration", "V0\r01", "control character or line break"),
    ("category", "vi\u2028gia", "control character or line break"),
])
def test_a_bad_character_in_a_name_is_refused_with_file_and_line(url, tmp_path, capsys, field, value, says):
    rows = worker_rows(3)
    rows[2][field] = value
    path = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, rows)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\r\n", "\n").replace("\n", "\n\n", 1), encoding="utf-8")  # a blank line 2
    assert main(["registry", "import", "--db", url, "--actor", "ana", "--workers", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "workers.csv:5: " in err and says in err, err
    engine = db.make_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(workers)).scalar() == 0
    finally:
        engine.dispose()


def test_a_repeated_registration_is_named_by_its_file_line_after_a_blank_line(url, tmp_path, capsys):
    rows = worker_rows(2)
    rows.append(dict(rows[0]))
    path = write_csv(tmp_path / "workers.csv", WORKER_COLUMNS, rows)
    path.write_text(path.read_text().replace("\r\n", "\n").replace("\n", "\n\n", 1))
    assert main(["registry", "import", "--db", url, "--actor", "ana", "--workers", str(path)]) == 2
    err = capsys.readouterr().err
    assert "workers.csv:5: registration V001 repeats line 3" in err, err
