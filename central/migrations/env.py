"""Alembic environment of the office database. Target metadata: every table module listed in
``central.db.TABLE_MODULES`` (``central.db.load_all_tables()``).

The URL comes from ``config.attributes["connection"]`` (an open connection, used by
``central.ledger.migrate``), else the ``sqlalchemy.url`` option, else ``PORTGATE_DB`` in the
environment (for ``alembic revision --autogenerate`` from the command line). SQLite uses batch mode
so ALTERs work.
"""

from __future__ import annotations

import os

from alembic import context

from central.db import load_all_tables, make_engine

config = context.config
target_metadata = load_all_tables()


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("PORTGATE_DB")
    if not url:
        raise RuntimeError("set sqlalchemy.url or PORTGATE_DB to the database URL")
    return url


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        engine = make_engine(_url())
        with engine.connect() as conn:
            _run(conn)
        engine.dispose()
