"""workers found by a piece of their name without regard to accents or case (issue 34's tester:
``joao`` did not find João): ``workers.name_folded``, the name case-folded, decomposed (NFKD) and
without its combining marks, filled here for every worker; the substring index of 0027 moved
from the raw name to it. SQLite: the FTS5 table ``worker_name_fts`` made again over
``(name_folded, registration)`` with its triggers (SQLite 3.40's trigram tokenizer has no
``remove_diacritics``); PostgreSQL: the GIN index ``ix_workers_name_folded_trgm`` on
``name_folded`` replaces ``ix_workers_name_trgm`` on ``lower(name)``. The list's indexes by name
(0020, 0026) carry ``name_folded`` as their last column (a search walking the list's order tests
each name in the index, not the row). A frozen copy of
``portgate.textfold.fold`` and ``central.registry.name_search.create``/``drop`` (docs there).

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06 14:20:00
"""
from __future__ import annotations

import unicodedata

import sqlalchemy as sa
from alembic import op
from sqlalchemy.exc import SQLAlchemyError


revision = '0030'
down_revision = '0029'
branch_labels = None
depends_on = None

FTS = "worker_name_fts"
KEYS = "worker_name_keys"
TRIGGERS = ("workers_name_search_insert", "workers_name_search_update", "workers_name_search_delete")


def _fts(column: str) -> tuple[str, ...]:
    """The SQLite index over ``column`` (``name_folded`` now, ``name`` as 0027 made it)."""
    watched = "name_folded" if column == "name_folded" else "name"
    return (
        f"CREATE TABLE IF NOT EXISTS {KEYS} (id INTEGER PRIMARY KEY, registration VARCHAR(64) NOT NULL UNIQUE)",
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5({column}, registration, tokenize = 'trigram')",
        f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_insert AFTER INSERT ON workers BEGIN
  INSERT INTO {KEYS} (registration) VALUES (new.registration);
  INSERT INTO {FTS} (rowid, {column}, registration)
    SELECT id, new.{column}, new.registration FROM {KEYS} WHERE registration = new.registration;
END""",
        f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_update AFTER UPDATE OF {watched}, registration ON workers
BEGIN
  DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {KEYS} WHERE registration = old.registration);
  UPDATE {KEYS} SET registration = new.registration WHERE registration = old.registration;
  INSERT INTO {FTS} (rowid, {column}, registration)
    SELECT id, new.{column}, new.registration FROM {KEYS} WHERE registration = new.registration;
END""",
        f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_delete AFTER DELETE ON workers BEGIN
  DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {KEYS} WHERE registration = old.registration);
  DELETE FROM {KEYS} WHERE registration = old.registration;
END""",
        f"DELETE FROM {FTS}",
        f"DELETE FROM {KEYS}",
        f"INSERT INTO {KEYS} (registration) SELECT registration FROM workers ORDER BY registration",
        f"INSERT INTO {FTS} (rowid, {column}, registration) SELECT k.id, w.{column}, w.registration "
        f"FROM workers w JOIN {KEYS} k ON k.registration = w.registration",
    )


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _drop_sqlite_index(conn) -> None:
    for name in TRIGGERS:
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {FTS}")
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {KEYS}")


def _sqlite_trigram(conn) -> bool:
    version = conn.exec_driver_sql("SELECT sqlite_version()").scalar()
    return tuple(int(x) for x in version.split(".")[:3]) >= (3, 34, 0)


def _pg_trgm(conn) -> bool:
    """Whether ``pg_trgm`` is there (0027 made it where it could) or can be made now."""
    if not conn.exec_driver_sql("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'").first():
        return False
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except SQLAlchemyError:  # no right to create it: the search reads every row
        return False
    return True


LIST_INDEXES = {"ix_workers_name_registration": ["name", "registration"],
                "ix_workers_category_name_registration": ["category", "name", "registration"]}


def upgrade() -> None:
    op.add_column('workers', sa.Column('name_folded', sa.Text(), nullable=True))
    for name, columns in LIST_INDEXES.items():  # the folded name rides along in the list's indexes
        op.drop_index(name, table_name='workers')
        op.create_index(name, 'workers', [*columns, 'name_folded'], unique=False)
    conn = op.get_bind()
    workers = sa.table('workers', sa.column('registration', sa.String), sa.column('name', sa.String),
                       sa.column('name_folded', sa.Text))
    rows = conn.execute(sa.select(workers.c.registration, workers.c.name)).all()
    for i in range(0, len(rows), 5000):
        conn.execute(workers.update().where(workers.c.registration == sa.bindparam('reg')).values(
            name_folded=sa.bindparam('folded')),
            [{'reg': r.registration, 'folded': _fold(r.name)} for r in rows[i:i + 5000]])
    if conn.dialect.name == "sqlite":
        if _sqlite_trigram(conn):
            _drop_sqlite_index(conn)
            for ddl in _fts("name_folded"):
                conn.exec_driver_sql(ddl)
        return
    conn.exec_driver_sql("DROP INDEX IF EXISTS ix_workers_name_trgm")
    if _pg_trgm(conn):
        conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_workers_name_folded_trgm ON workers "
                             "USING gin (name_folded gin_trgm_ops)")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        _drop_sqlite_index(conn)
    else:
        conn.exec_driver_sql("DROP INDEX IF EXISTS ix_workers_name_folded_trgm")
    for name, columns in LIST_INDEXES.items():
        op.drop_index(name, table_name='workers')
        op.create_index(name, 'workers', columns, unique=False)
    with op.batch_alter_table('workers', schema=None) as batch_op:
        batch_op.drop_column('name_folded')
    if conn.dialect.name == "sqlite":  # 0027's index, over the raw name, once the table is as it was
        if _sqlite_trigram(conn):
            for ddl in _fts("name"):
                conn.exec_driver_sql(ddl)
    elif _pg_trgm(conn):
        conn.exec_driver_sql("CREATE INDEX IF NOT EXISTS ix_workers_name_trgm ON workers "
                             "USING gin (lower(name) gin_trgm_ops)")
