"""A worker's suspensions follow every record, through the ``portgate`` command line, on SQLite and
PostgreSQL (R2, R4, G3; central.registry.suspensions): the same suspension twice is refused, an
overlapping one extends the worker's period (never shortens it), one apart waits for the running one
to end, a blank reason is refused, the dispatch reads every record, ``list --registration`` filters."""

from __future__ import annotations

import datetime as dt
import itertools
import json

import pytest
from sqlalchemy import func, select

from app.cli import main
from central import db
from central.registry.schema import downlink_changes, penalties
from central.rotation.eligibility import Ineligible
from central.rotation.schema import escala
from testkit.cli import refused_in_pt_and_en
from tests.central.registry.conftest import REQ_COLUMNS, WORKER_COLUMNS, req_row, worker_rows, write_csv

_n = itertools.count(1)
AT = "2026-03-19T12:00:00-03:00"  # the office's clock for a dispatch of 2026-03-20


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """A ledger holding V001..V003 (vigia), imported by ``portgate registry import``."""
    if request.param == "sqlite":
        found = f"sqlite:///{tmp_path / 'office.db'}"
    else:
        found = request.getfixturevalue("pg_cluster").create_database(f"susp{next(_n)}")
    path = write_csv(tmp_path / "w.csv", WORKER_COLUMNS, worker_rows(3))
    assert main(["registry", "import", "--db", found, "--actor", "ana", "--workers", str(path)]) == 0
    return found


def _args(url, start, days, reason="x"):
    return ["registry", "suspend", "V001", "--db", url, "--actor", "b", "--from", start,
            "--days", str(days), "--reason", reason]


def _suspend(url, start, days, reason="x"):
    return main(_args(url, start, days, reason))


def _count(url, table) -> int:
    engine = db.make_engine(url)
    with engine.connect() as conn:
        n = conn.execute(select(func.count()).select_from(table)).scalar()
    engine.dispose()
    return n


def _worker(url, capsys, reg="V001"):
    capsys.readouterr()
    assert main(["registry", "list", "--db", url, "--registration", reg]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["registration"] for r in rows] == [reg]
    return rows[0]


def test_an_overlapping_suspension_extends_the_period_to_their_union(url, capsys):
    assert _suspend(url, "2026-03-20", 5) == 0
    assert _suspend(url, "2026-03-22", 5) == 0
    row = _worker(url, capsys)
    assert (row["suspended_from"], row["suspended_until"]) == ("2026-03-20", "2026-03-26")
    assert _suspend(url, "2026-03-21", 2) == 0  # inside: never shortens the period
    row = _worker(url, capsys)
    assert (row["suspended_from"], row["suspended_until"]) == ("2026-03-20", "2026-03-26")
    assert _count(url, penalties) == 3


def test_the_same_suspension_again_is_refused_in_pt_br_and_english_and_writes_nothing(url, capsys):
    assert _suspend(url, "2026-03-20", 5) == 0
    changes = _count(url, downlink_changes)
    refused_in_pt_and_en(_args(url, "2026-03-20", 5, "y"),
                         "a matrícula V001 já tem a suspensão de 20/03/2026 a 24/03/2026 no registro",
                         "registration V001 already has the suspension 2026-03-20..2026-03-24 on its record")
    assert (_count(url, penalties), _count(url, downlink_changes)) == (1, changes)


def test_a_separate_suspension_while_one_is_ahead_is_refused(url, capsys):
    assert _suspend(url, "2099-03-01", 5) == 0
    refused_in_pt_and_en(_args(url, "2099-04-01", 5), "a matrícula V001 está suspensa de 01/03/2099 a 05/03/2099",
                         "registration V001 is suspended 2099-03-01..2099-03-05: a separate suspension")
    assert _count(url, penalties) == 1


@pytest.mark.parametrize("reason", ["", "   "])
def test_a_blank_reason_is_refused(url, capsys, reason):
    refused_in_pt_and_en(_args(url, "2026-03-20", 5, reason), "o motivo é obrigatório", "the reason is required")
    assert _count(url, penalties) == 0


def test_list_registration_filters_the_workers(url, capsys):
    assert _worker(url, capsys, "V002")["name"] == "Vigia 2"


def _dispatch(url, tmp_path, capsys) -> dict:
    path = write_csv(tmp_path / "req.csv", REQ_COLUMNS, [req_row("A1", date="2026-03-20", workers="2")])
    capsys.readouterr()
    assert main(["rotation", "dispatch", "--at", AT, "--date", "2026-03-20", "--requisitions", str(path),
                 "--db", url, "--actor", "despacho"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_dispatch_follows_every_suspension_on_the_record(url, tmp_path, capsys):
    """An earlier suspension that has ended (today is later) is replaced on the worker row by one
    apart; the dispatch of a day inside the earlier one still finds the worker suspended."""
    assert _suspend(url, "2026-03-20", 5) == 0
    assert _suspend(url, "2026-04-01", 5) == 0
    assert _worker(url, capsys)["suspended_from"] == "2026-04-01"
    out = _dispatch(url, tmp_path, capsys)
    assert (out["dispatched"], out["ineligible"]) == (2, 1), out
    engine = db.make_engine(url)
    with engine.connect() as conn:
        on_escala = set(conn.execute(select(escala.c.registration)).scalars())
    engine.dispose()
    assert on_escala == {"V002", "V003"}


def test_the_worker_page_validity_follows_every_suspension_on_the_record(url):
    """The G3 validity the worker's page shows (central.web.registrymodel) reads every record too."""
    from sqlalchemy.orm import Session

    from central.web.registrymodel import worker_page

    assert _suspend(url, "2026-03-20", 5) == 0
    assert _suspend(url, "2026-04-01", 5) == 0
    engine = db.make_engine(url)
    with Session(engine) as session:
        now = dt.datetime(2026, 3, 21, 12, tzinfo=dt.UTC)
        inside = worker_page(session, "V001", today=dt.date(2026, 3, 21), now=now)
        after = worker_page(session, "V001", today=dt.date(2026, 3, 25), now=now)
    engine.dispose()
    assert Ineligible.SUSPENDED.value in inside.problems
    assert Ineligible.SUSPENDED.value not in after.problems
