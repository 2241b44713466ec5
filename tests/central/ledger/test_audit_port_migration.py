"""Migration 0031 (the audit log's port, issue 37 item 4) on SQLite and PostgreSQL: a 0030 ledger's
audit entries become every port's (``*``: shown only to all-ports users, the migration cannot know
their port), an entry written afterwards without a port too (the column's default); the downgrade
takes the column and its index away and a second upgrade gives the same ports again."""

from __future__ import annotations

import datetime as dt

from alembic import command
from sqlalchemy import inspect, text

from central.db import make_engine
from central.ledger.migrate import alembic_config, upgrade

T = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)


def _entry(c, subject: str) -> None:
    c.execute(text("INSERT INTO audit_log (at, actor, action, subject, detail) VALUES (:t, 'web:a', 'worker.edit', "
                   ":s, '{}')"), {"t": T, "s": subject})


def _ports(engine) -> list:
    with engine.connect() as c:
        return c.execute(text("SELECT subject, port FROM audit_log ORDER BY id")).all()


def test_older_entries_are_every_ports_and_the_downgrade_takes_the_column_away(db_url):
    upgrade(db_url, "0030")
    engine = make_engine(db_url)
    try:
        with engine.begin() as c:
            _entry(c, "W1")
        assert upgrade(db_url, "0031") == "0031"
        with engine.begin() as c:
            _entry(c, "W2")  # a writer naming no port
            c.execute(text("INSERT INTO audit_log (at, actor, action, subject, detail, port) "
                           "VALUES (:t, 'web:a', 'worker.edit', 'W3', '{}', NULL)"), {"t": T})
        assert _ports(engine) == [("W1", "*"), ("W2", "*"), ("W3", None)]
        assert "ix_audit_log_port" in {ix["name"] for ix in inspect(engine).get_indexes("audit_log")}
        command.downgrade(alembic_config(db_url), "0030")
        assert "port" not in {col["name"] for col in inspect(engine).get_columns("audit_log")}
        assert "ix_audit_log_port" not in {ix["name"] for ix in inspect(engine).get_indexes("audit_log")}
        assert "ix_audit_log_subject" in {ix["name"] for ix in inspect(engine).get_indexes("audit_log")}
        assert upgrade(db_url, "0031") == "0031"
        assert _ports(engine) == [("W1", "*"), ("W2", "*"), ("W3", "*")]  # NULL was lost with the column
    finally:
        engine.dispose()
