"""``central.ledger.bulk.first_column`` (the month close's read of its raw events): the first column
of a query's rows as SQLAlchemy reads them, on PostgreSQL asked for in binary format (a ``bytea``
as its bytes), parameters (an expanding ``IN`` included) bound as the query says; a database error
comes as SQLAlchemy's."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import Column, DateTime, Integer, LargeBinary, MetaData, String, Table, insert, select
from sqlalchemy.exc import DBAPIError

from central.db import make_engine
from central.ledger.bulk import first_column

T0 = dt.datetime(2026, 3, 1, 10, 0, tzinfo=dt.UTC)
_meta = MetaData()
blobs = Table("first_column_blobs", _meta, Column("id", Integer, primary_key=True),
              Column("kind", String(16), nullable=False), Column("at", DateTime(timezone=True), nullable=False),
              Column("raw", LargeBinary, nullable=False))
missing = Table("first_column_missing", MetaData(), Column("raw", LargeBinary))


@pytest.fixture
def db_url(migrated_url):
    """A copy of the session's migrated ledger, on SQLite and on PostgreSQL, with a table of bytes."""
    engine = make_engine(migrated_url)
    with engine.begin() as conn:
        _meta.create_all(conn)
    engine.dispose()
    return migrated_url


def test_the_rows_come_as_sqlalchemy_reads_them_bytes_as_bytes(db_url):
    engine = make_engine(db_url)
    raws = [b'{"a":1}', b"\x00\xff\x01 not text", "São Paulo ✓".encode(), b"", b"\\x41"]
    with engine.begin() as conn:
        conn.execute(insert(blobs), [{"id": i, "kind": ("tap", "meal", "other")[i % 3],
                                      "at": T0 + dt.timedelta(hours=i), "raw": raw} for i, raw in enumerate(raws)])
    query = select(blobs.c.raw).where(blobs.c.kind.in_(("tap", "meal")),
                                      blobs.c.at >= T0 + dt.timedelta(minutes=30)).order_by(blobs.c.id)
    with engine.connect() as conn:
        got = first_column(conn, query)
        expected = [bytes(r) for r in conn.execute(query).scalars().all()]
    engine.dispose()
    assert got == expected == [raws[1], raws[3], raws[4]]
    assert all(type(r) is bytes for r in got)


def test_a_database_error_is_sqlalchemys_and_the_transaction_rolls_back(db_url):
    engine = make_engine(db_url)
    with engine.connect() as conn:
        with pytest.raises(DBAPIError, match="first_column_missing"):
            first_column(conn, select(missing.c.raw))
        conn.rollback()  # the failed transaction is the connection's: its rollback ends it
        assert first_column(conn, select(blobs.c.raw).where(blobs.c.id < 0)) == []
    engine.dispose()
