"""``central.db.unreachable`` / ``read_only``: which database errors mean "the ledger is failing over,
retry (through the multi-host URL)" -- the ingest's short retry and the web's 503 "reconnecting"
(issue 37 item 2; the real failover is tests/ops/test_ha_ledger.py)."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import DataError, IntegrityError, InternalError, OperationalError

from central.db import read_only, unreachable


class _Orig(Exception):
    pass


def wrap(kind, text: str):
    return kind("INSERT ...", {}, _Orig(text))


@pytest.mark.parametrize("text", [
    "the connection is lost",
    "terminating connection due to unexpected postmaster exit",
    'connection failed: connection to server at "127.0.0.1", port 5432 failed: session is read-only',
    'connection failed: connection to server at "127.0.0.1", port 5433 failed: Connection refused',
    "server closed the connection unexpectedly",
    "the database system is starting up",
    "the database system is shutting down",
    # a standby Patroni is still promoting or restarting (issue 37: the web answered 500 to these)
    "the database system is not yet accepting connections",
    "the database system is not accepting connections",
    'connection failed: connection to server at "127.0.0.1", port 5433 failed: server is in hot standby mode',
    # libpq's connect_timeout (central.db.make_engine adds one): a host that does not answer
    'connection failed: connection to server at "10.0.0.9", port 5432 failed: timeout expired',
])
def test_failover_errors_are_unreachable(text):
    assert unreachable(wrap(OperationalError, text))


def test_a_write_on_a_demoted_primary_is_unreachable_and_read_only():
    exc = wrap(InternalError, "cannot execute INSERT in a read-only transaction")
    assert unreachable(exc) and read_only(exc)
    assert not read_only(wrap(OperationalError, "the connection is lost"))


@pytest.mark.parametrize("exc", [
    wrap(OperationalError, "database is locked"),  # busy: the busy path, a shorter wait is not a failover
    wrap(IntegrityError, 'duplicate key value violates unique constraint "events_pkey"'),
    wrap(DataError, "value too long for type character varying(64)"),
    ValueError("connection is lost"),  # not a database error at all
])
def test_other_errors_are_not(exc):
    assert not unreachable(exc)
