"""workers found by a piece of their name through an index (issue 34, the office's worker list at
50,000 workers): SQLite: an FTS5 trigram table ``worker_name_fts`` over name and registration,
keyed by ``worker_name_keys`` (a worker's stable number), kept current by triggers on
``workers``; PostgreSQL: ``pg_trgm`` and GIN indexes on ``lower(name)`` and ``lower(registration)``
(left out where the extension cannot be created: the search then reads every row, as before).
A frozen copy of ``central.registry.name_search.create``/``drop`` (docs there).

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-06 11:10:00
"""
from __future__ import annotations

from alembic import op
from sqlalchemy.exc import SQLAlchemyError


revision = '0027'
down_revision = '0026'
branch_labels = None
depends_on = None

FTS = "worker_name_fts"
KEYS = "worker_name_keys"
SQLITE = (
    f"CREATE TABLE IF NOT EXISTS {KEYS} (id INTEGER PRIMARY KEY, registration VARCHAR(64) NOT NULL UNIQUE)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5(name, registration, tokenize = 'trigram')",
    f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_insert AFTER INSERT ON workers BEGIN
  INSERT INTO {KEYS} (registration) VALUES (new.registration);
  INSERT INTO {FTS} (rowid, name, registration)
    SELECT id, new.name, new.registration FROM {KEYS} WHERE registration = new.registration;
END""",
    f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_update AFTER UPDATE OF name, registration ON workers BEGIN
  DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {KEYS} WHERE registration = old.registration);
  UPDATE {KEYS} SET registration = new.registration WHERE registration = old.registration;
  INSERT INTO {FTS} (rowid, name, registration)
    SELECT id, new.name, new.registration FROM {KEYS} WHERE registration = new.registration;
END""",
    f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_delete AFTER DELETE ON workers BEGIN
  DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {KEYS} WHERE registration = old.registration);
  DELETE FROM {KEYS} WHERE registration = old.registration;
END""",
    f"DELETE FROM {FTS}",
    f"DELETE FROM {KEYS}",
    f"INSERT INTO {KEYS} (registration) SELECT registration FROM workers ORDER BY registration",
    f"INSERT INTO {FTS} (rowid, name, registration) SELECT k.id, w.name, w.registration "
    f"FROM workers w JOIN {KEYS} k ON k.registration = w.registration",
)
POSTGRESQL = (
    "CREATE INDEX IF NOT EXISTS ix_workers_name_trgm ON workers USING gin (lower(name) gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS ix_workers_registration_trgm ON workers USING gin (lower(registration) gin_trgm_ops)",
)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        version = tuple(int(x) for x in conn.exec_driver_sql("SELECT sqlite_version()").scalar().split(".")[:3])
        if version >= (3, 34, 0):  # FTS5's trigram tokenizer; an older library searches as before
            for ddl in SQLITE:
                conn.exec_driver_sql(ddl)
        return
    if not conn.exec_driver_sql("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'").first():
        return
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except SQLAlchemyError:  # no right to create it: the search reads every row, as before
        return
    for ddl in POSTGRESQL:
        conn.exec_driver_sql(ddl)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        for name in ("workers_name_search_insert", "workers_name_search_update", "workers_name_search_delete"):
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {FTS}")
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {KEYS}")
        return
    conn.exec_driver_sql("DROP INDEX IF EXISTS ix_workers_name_trgm")
    conn.exec_driver_sql("DROP INDEX IF EXISTS ix_workers_registration_trgm")
