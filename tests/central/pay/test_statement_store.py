"""Statement storage in bulk: the digest is the SHA-256 of the sorted-key JSON the versions rule
names (checked against ``json.dumps`` on arbitrary text), and a run spanning several history
queries stores and supersedes exactly as one does."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from sqlalchemy import select

import central.pay.versions_save as versions
from central.ledger.tables import statement_lines, statements
from central.pay.lines import StatementLine
from central.pay.versions import statement_digest
from central.pay.watchmen import Statement
from tests.central.pay.test_statement_versions import MONTH, _ledger, _rows
from tests.central.pay.test_pay_cli import run

cents = st.integers(-10**12, 10**12)
text = st.text()


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


@settings(max_examples=500, deadline=None)
@given(rulebook=text, flags=st.lists(text, max_size=4), hold=st.none() | text,
       lines=st.lists(st.tuples(text, text, text, cents), max_size=6), total=cents)
def test_the_digest_is_the_sha256_of_the_sorted_key_json(rulebook, flags, hold, lines, total):
    import datetime as dt

    at = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    stmt = Statement(shift_id="s", registration="r", rulebook=rulebook, work_day=at.date(),
                     lines=tuple(StatementLine(r, a, d, Decimal(c) / 100) for r, a, d, c in lines),
                     total=Decimal(total) / 100, flags=tuple(flags), service_end=at, due_at=at,
                     hold_reason=hold)
    body = {"rulebook": rulebook, "total_cents": total, "flags": flags, "hold_reason": hold,
            "lines": [[r, a, d, c] for r, a, d, c in lines]}
    try:
        raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 form either way
        return
    assert statement_digest(stmt) == hashlib.sha256(raw).hexdigest()


def test_a_run_over_several_history_chunks_stores_and_supersedes_like_one(db_url, capsys, monkeypatch):
    engine = _ledger(db_url)
    monkeypatch.setattr(versions, "CHUNK", 1)
    try:
        assert run(capsys, "pay", "--db", db_url, *MONTH, "--by", "ana")[0] == 0
        first = _rows(engine)
        assert len(first) == 4 and {r["version"] for r in first} == {1}
        code, _out, err = run(capsys, "pay", "--db", db_url, *MONTH, "--by", "ana")
        assert code == 0 and _rows(engine) == first  # unchanged: nothing written
        code, _out, err = run(capsys, "pay", "--db", db_url, *MONTH, "--rulebook", "example-cct-2026",
                              "--by", "bruno")
        assert code == 0 and "4 superseded" in err
        rows = _rows(engine)
        assert len(rows) == 8 and sum(r["superseded_at"] is None for r in rows) == 4
        with engine.connect() as conn:
            n_lines = {sid: n for sid, n in conn.execute(
                select(statement_lines.c.statement_id, statement_lines.c.position)
                .order_by(statement_lines.c.position))}
            ids = set(conn.execute(select(statements.c.statement_id)).scalars())
        assert set(n_lines) == ids
    finally:
        engine.dispose()


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.tuples(st.sampled_from(("r1", "r2")), st.lists(text, max_size=3), st.none() | text,
                                st.lists(st.tuples(text, text, text, cents), max_size=4), cents),
                      max_size=8),
       by=st.none() | text)
def test_a_first_close_plans_its_first_versions_as_one_by_one(items, by):
    """``_add_first_versions`` (a first close's statements, one loop) plans the rows, lines, ids
    and counts ``_add_version`` plans for each shift's first version, in the same order."""
    import datetime as dt

    at = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
    found = [Statement(shift_id=f"{reg}/s/{i}", registration=reg, rulebook="rb", work_day=at.date(),
                       lines=tuple(StatementLine(r, a, d, Decimal(c) / 100) for r, a, d, c in lines),
                       total=Decimal(total) / 100, flags=tuple(flags), service_end=at, due_at=at,
                       hold_reason=hold)
             for i, (reg, flags, hold, lines, total) in enumerate(items)]
    todo = [(s, *[versions.digest_and_cents(s)[0]], versions.digest_and_cents(s)[1:]) for s in found]
    one_by_one, in_one_loop = versions._Run(), versions._Run()
    for s, digest, cents in todo:
        versions._add_version(s, digest, None, [], None, False, one_by_one, now=at, by=by, cents=list(cents))
    versions._add_first_versions(todo, in_one_loop, now=at, by=by)
    assert in_one_loop == one_by_one
    assert in_one_loop.on_hold == sum(1 for s in found if s.hold_reason)
