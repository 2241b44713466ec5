"""Only the current statement of each shift is owed (the fresh tester's finding): stored statements
read back (``read_statements``: listed, summed, exported, on slips) leave the superseded versions
out unless asked for them; ``pay mark-paid`` with an id given twice marks and counts it once. On
SQLite and PostgreSQL, the statements superseded by a real second pay run."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import select

from app.cli import main
from central.ledger.tables import statements
from central.pay.payslip import build_slips
from central.pay.statements_read import read_statements
from central.pay.statements_store import superseded_among
from central.registry.schema import audit_log
from tests.central.pay.test_pay_cli import run
from tests.central.pay.test_statement_versions import CHIEF, MONTH, _ledger

FIRST, LAST = dt.date(2026, 3, 1), dt.date(2026, 3, 31)
OLD = f"{CHIEF}@decreto-83611-1979"
NEW = f"{CHIEF}@example-cct-2026#v2"


@pytest.fixture
def db_url(migrated_url):
    """A copy of the session's migrated ledger (SQLite and PostgreSQL; tests/central/conftest.py)."""
    return migrated_url


@pytest.fixture
def superseded(db_url, capsys):
    """The ledger paid twice (the second time with another rulebook): 4 shifts, 8 statements, the
    4 first ones superseded and unpaid; an engine on it."""
    engine = _ledger(db_url)
    assert run(capsys, "pay", "--db", db_url, *MONTH)[0] == 0
    assert run(capsys, "pay", "--db", db_url, *MONTH, "--rulebook", "example-cct-2026", "--reason", "CCT")[0] == 0
    yield engine
    engine.dispose()


def _current_cents(engine) -> dict[str, int]:
    with engine.connect() as conn:
        return dict(conn.execute(select(statements.c.statement_id, statements.c.total_cents)
                                 .where(statements.c.superseded_at.is_(None))).all())


def test_read_statements_gives_only_the_current_version_of_each_shift(superseded):
    current = _current_cents(superseded)
    with superseded.connect() as conn:
        found = read_statements(conn, FIRST, LAST)
        every = read_statements(conn, FIRST, LAST, current_only=False)
        by_id = read_statements(conn, FIRST, LAST, ids=[OLD, NEW])
        old_by_id = read_statements(conn, FIRST, LAST, ids=[OLD], current_only=False)
        chief = read_statements(conn, FIRST, LAST, registration="101")
    assert {s.statement_id: int(s.total * 100) for s in found} == current and len(found) == 4
    assert all(s.superseded_by is None for s in found)
    assert sum(s.total for s in found) == Decimal(sum(current.values())) / 100  # the period's total: owed
    assert len(every) == 8 and sum(1 for s in every if s.superseded_by) == 4
    assert [s.statement_id for s in by_id] == [NEW]  # an old id is not read as owed
    assert [(s.statement_id, s.superseded_by, s.total) for s in old_by_id] == [(OLD, NEW, Decimal("696.60"))]
    assert old_by_id[0].lines and sum(x.amount for x in old_by_id[0].lines) == Decimal("696.60")
    assert [s.statement_id for s in chief] == [NEW]
    assert sum(x.amount for x in chief[0].lines) == chief[0].total  # its own lines, not the old one's


def test_a_payslip_sums_only_the_current_statements(superseded):
    current = _current_cents(superseded)
    with superseded.connect() as conn:
        slips = build_slips(conn, FIRST, LAST)
    assert sorted(st.statement_id for slip in slips for st in slip.statements) == sorted(current)
    assert sum(slip.total for slip in slips) == Decimal(sum(current.values())) / 100


def test_superseded_among_names_unpaid_old_versions_with_their_successor(superseded):
    with superseded.connect() as conn:
        assert superseded_among(conn, [NEW, OLD, OLD, "nope@x"]) == [f"{OLD} (by {NEW})"]
        assert superseded_among(conn, []) == [] and superseded_among(conn, [NEW]) == []


def _cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_mark_paid_with_an_id_given_twice_marks_and_counts_it_once(superseded, db_url, capsys):
    code, out, err = _cli(capsys, "pay", "mark-paid", "--db", db_url, "--ref", "lote-1", NEW, NEW)
    assert code == 0 and out.strip() == "1 statement(s) marked paid"
    assert err.strip() == f"1 repeated statement id(s) counted once: {NEW}"
    with superseded.connect() as conn:
        subject, detail = conn.execute(select(audit_log.c.subject, audit_log.c.detail)
                                       .where(audit_log.c.action == "pay.mark_paid")).one()
    assert subject == "1 statement(s)" and detail["statements"] == [NEW] and len(detail["paid"]) == 1
    code, out, err = _cli(capsys, "pay", "reverse-paid", "--db", db_url, "--reason", "lote errado", NEW, NEW)
    assert code == 0 and out.strip() == "1 payment mark(s) reversed" and "1 repeated statement id(s)" in err
    code, out, err = _cli(capsys, "pay", "mark-paid", "--db", db_url, NEW)  # no repetition: nothing said
    assert code == 0 and out.strip() == "1 statement(s) marked paid" and err == ""


def test_mark_paid_of_a_superseded_id_given_twice_is_refused_once(superseded, db_url, capsys):
    code, out, err = _cli(capsys, "pay", "mark-paid", "--db", db_url, OLD, OLD)
    assert code == 2 and out == "" and err.count(f"superseded: {OLD} (by {NEW})") == 1
    assert f"{OLD} (by {NEW}), {OLD}" not in err


def test_a_version_superseded_twice_is_refused_naming_the_current_one(superseded, db_url, capsys):
    """Paid a third time (the first rulebook again): v1 and v2 are both old; posting v1 names v3,
    the one to pay, not v2 (old too: the second fresh tester's finding)."""
    assert run(capsys, "pay", "--db", db_url, *MONTH, "--rulebook", "decreto-83611-1979", "--reason", "back")[0] == 0
    with superseded.connect() as conn:
        current = conn.execute(select(statements.c.statement_id).where(
            statements.c.shift_id == CHIEF, statements.c.superseded_at.is_(None))).scalar_one()
        assert current not in (OLD, NEW)
        assert superseded_among(conn, [OLD, NEW]) == [f"{OLD} (by {current})", f"{NEW} (by {current})"]
    code, _out, err = run(capsys, "pay", "mark-paid", "--db", db_url, OLD)
    assert code != 0 and f"{OLD} (by {current})" in err and NEW not in err, err
