"""PostgreSQL's bulk path (``central.ledger.bulk``): ``COPY`` in binary format where every column's
type allows it, in text format otherwise (a ``jsonb`` column: its binary form is not the text the
caller bound); a naive time bound for a ``timestamptz`` column is refused (``TypeError``) instead of
being read in the session's zone; ``bind_tuples`` keeps native booleans as they are and still
converts other values (1 -> True); ``central.pay.versions_save._by_ids`` sends the ids joined in one
text parameter, or as an array when an id is empty or holds the separator (the same rows)."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite

from central.db import make_engine
from central.ledger.bulk import bind_tuples, insert_tuples
from central.ledger.tables import close_digests, shifts, statements
from central.pay import versions_save

T0 = dt.datetime(2026, 3, 1, 10, 0, tzinfo=dt.UTC)
DIGEST_COLUMNS = ("scope", "kind", "registration", "input_digest", "output_digest", "recorded_at")


@pytest.fixture
def pg(request, tmp_path, ledgers):
    """A migrated PostgreSQL ledger of its own (the session's template, tests/central/conftest.py)."""
    engine = make_engine(ledgers.url(request, "postgresql", tmp_path))
    yield engine
    engine.dispose()


def test_a_jsonb_column_goes_as_text(pg):
    t = Table("with_json", MetaData(), Column("id", Integer, primary_key=True), Column("doc", JSONB))
    t.create(pg)
    with pg.begin() as c:
        insert_tuples(c, t, ("id", "doc"), [(1, '{"a": 1}')], bound=True)  # the JSON text, bound
    with pg.connect() as c:
        assert c.execute(select(t.c.doc)).scalar_one() == {"a": 1}  # binary would store a string


def test_binary_copy_stores_the_instant_and_refuses_a_naive_time(pg):
    with pg.begin() as c:
        insert_tuples(c, close_digests, DIGEST_COLUMNS, [("s", "shifts", "r1", "i", "o", T0)], bound=True)
    with pg.connect() as c:
        assert c.execute(select(close_digests.c.recorded_at)).scalar_one() == T0
    with pytest.raises(TypeError), pg.begin() as c:
        insert_tuples(c, close_digests, DIGEST_COLUMNS, [("s", "shifts", "r2", "i", "o", T0.replace(tzinfo=None))],
                      bound=True)
    with pg.connect() as c:
        assert c.execute(select(close_digests.c.registration)).scalars().all() == ["r1"]


def test_bind_tuples_keeps_native_booleans_and_converts_the_rest(pg):
    names = ("shift_id", "held")
    got = bind_tuples(pg.dialect, shifts, names, [("a", True), ("b", 1), ("c", False)])
    assert got == [("a", True), ("b", True), ("c", False)] and type(got[1][1]) is bool
    kept = bind_tuples(pg.dialect, shifts, names, [["a", True], ("b", False)])
    assert kept == [("a", True), ("b", False)] and all(type(r) is tuple for r in kept)
    assert bind_tuples(SQLiteDialect_pysqlite(), shifts, names, [("a", True), ("b", False)]) == [("a", 1), ("b", 0)]


def _statement(shift_id: str) -> dict:
    return {"statement_id": f"{shift_id}@rb", "shift_id": shift_id, "registration": "r", "rulebook": "rb",
            "work_day": dt.date(2026, 3, 1), "total_cents": 100, "flags": "", "service_end": T0,
            "due_at": T0, "computed_at": T0, "version": 1, "digest": None}


def test_ids_by_joined_text_or_by_array_find_the_same_rows(pg):
    sep = versions_save._SEP
    with pg.begin() as c:
        c.execute(statements.insert(), [_statement(s) for s in ("a", "b", f"a{sep}b", "")])
    with pg.connect() as c:
        def found(ids):
            return sorted(versions_save._history(c, ids))
        assert found(["a", "b"]) == ["a", "b"]
        assert found([f"a{sep}b"]) == [f"a{sep}b"]  # the separator inside: by array, not split
        assert found(["", "a"]) == ["", "a"]  # an empty id: by array (the text would drop it)
        assert found([]) == [] and found(["x"]) == []
