"""``central.db.make_engine`` bounds the connection to a PostgreSQL host that does not answer (a
node of a replicated ledger cut off, issue 37 item 2): libpq's ``connect_timeout`` is added to a
URL that names none, so the office's web and CLI get "timeout expired" (``unreachable``: the web's
503 page) instead of psycopg's default wait of 130 s. The silent host is a real TCP listener that accepts and
never answers the start-up packet."""

from __future__ import annotations

import socket
import threading

import pytest
from sqlalchemy import text

from central.db import CONNECT_TIMEOUT_S, make_engine, unreachable


@pytest.fixture
def silent_host():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)  # the kernel completes the handshakes; nobody ever reads or answers
    yield srv.getsockname()[1]
    srv.close()


def _connect(url: str) -> list:
    outcome: list = []

    def run():
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                conn.execute(text("select 1"))
            outcome.append("connected")
        except Exception as exc:  # the outcome is asserted by the caller
            outcome.append(exc)
        finally:
            engine.dispose()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    # 12x the timeout: generous under load, and well under psycopg's own default of 130 s (what the
    # office waited before: a login that hung for two minutes)
    worker.join(CONNECT_TIMEOUT_S * 12)
    return outcome


def test_a_silent_host_fails_the_connection_as_unreachable(silent_host):
    outcome = _connect(f"postgresql+psycopg://postgres@127.0.0.1:{silent_host}/ledger")
    assert outcome, "the connection to a silent host was still waiting"
    assert unreachable(outcome[0]), outcome
    assert "timeout" in str(outcome[0]).lower(), outcome


def test_the_urls_own_timeout_wins(silent_host):
    outcome = _connect(f"postgresql+psycopg://postgres@127.0.0.1:{silent_host}/ledger?connect_timeout=2")
    assert outcome and unreachable(outcome[0]), outcome


def test_sqlite_gets_no_connect_timeout(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'x.db'}")  # sqlite3 would refuse an unknown argument
    with engine.connect() as conn:
        assert conn.execute(text("select 1")).scalar() == 1
    engine.dispose()
