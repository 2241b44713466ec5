"""The registry's substring index on workers' names and registrations (issue 34: the office's
worker list searched by a piece of a name at 50,000 workers), kept by the database itself.

A name is searched without accents and case on both databases (migration 0030): the registry
keeps each worker's folded name in ``workers.name_folded`` (``portgate.textfold.fold``: ``João``
-> ``joao``; written with the name by ``central.registry.store.save_worker`` and by the column's
default on any insert), the search folds its text the same way and the index is on the folded
name (SQLite 3.40's trigram tokenizer has no ``remove_diacritics``; PostgreSQL's ``unaccent``
would fold differently from SQLite).

- SQLite (3.34 or later): an FTS5 table ``worker_name_fts(name_folded, registration)`` with the
  ``trigram`` tokenizer (case folded), whose rowid is a worker's stable number in
  ``worker_name_keys(id, registration)`` (a worker table's own rowid may change on ``VACUUM``:
  it has no INTEGER PRIMARY KEY); triggers on ``workers`` keep both current on every INSERT,
  UPDATE of the folded name or registration, and DELETE, whoever writes.
- PostgreSQL: the ``pg_trgm`` extension (in Debian's ``postgresql-NN`` package, "trusted": a
  database owner may create it) and GIN indexes on ``name_folded`` and ``lower(registration)``
  (``gin_trgm_ops``), which the planner uses for the search's ``LIKE '%text%'`` as it is
  (no narrowing query: ``selective`` is False there). Where the extension cannot be
  created (not installed, no right) the indexes are left out and the search reads every row, as
  before.

The index only narrows: ``candidates`` gives a superset of the workers the text search finds
(``central.web.registrymodel.list_conditions``: the folded name contains the folded text, or the
registration begins with the text, any case), which keeps its own conditions, so the rows found
are the same with or without it. A trigram index cannot look up fewer than three characters:
such a text is searched without it.

``create(conn)`` makes it all (idempotent; the caller owns the transaction; it also folds the
names of rows written without ``name_folded``), hooked to the ``workers`` table's
``after_create`` (``create_all``) and dropped with it; migration 0030 holds its own frozen copy
(0027 made the first one, over the raw names). A later migration that recreates ``workers`` (Alembic's batch mode on
SQLite copies the table) loses its triggers and must call its own copy of ``create`` again:
``tests/central/registry/test_name_search.py`` fails on a head without them.
"""

from __future__ import annotations

import weakref

from sqlalchemy import Integer, String, bindparam, column, event, literal_column, select, table
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from central.registry.schema import workers
from portgate.textfold import fold

#: the SQLite version that has FTS5's trigram tokenizer
SQLITE_TRIGRAM = (3, 34, 0)
#: the shortest text a trigram index can look up (characters)
MIN_CHARS = 3

FTS = "worker_name_fts"
KEYS = "worker_name_keys"
SQLITE_TRIGGERS = ("workers_name_search_insert", "workers_name_search_update", "workers_name_search_delete")
PG_INDEXES = ("ix_workers_name_folded_trgm", "ix_workers_registration_trgm")

_SQLITE_DDL = (
    f"CREATE TABLE IF NOT EXISTS {KEYS} (id INTEGER PRIMARY KEY, registration VARCHAR(64) NOT NULL UNIQUE)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5(name_folded, registration, tokenize = 'trigram')",
    f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_insert AFTER INSERT ON workers BEGIN
  INSERT INTO {KEYS} (registration) VALUES (new.registration);
  INSERT INTO {FTS} (rowid, name_folded, registration)
    SELECT id, new.name_folded, new.registration FROM {KEYS} WHERE registration = new.registration;
END""",
    f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_update AFTER UPDATE OF name_folded, registration ON workers
BEGIN
  DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {KEYS} WHERE registration = old.registration);
  UPDATE {KEYS} SET registration = new.registration WHERE registration = old.registration;
  INSERT INTO {FTS} (rowid, name_folded, registration)
    SELECT id, new.name_folded, new.registration FROM {KEYS} WHERE registration = new.registration;
END""",
    f"""CREATE TRIGGER IF NOT EXISTS workers_name_search_delete AFTER DELETE ON workers BEGIN
  DELETE FROM {FTS} WHERE rowid = (SELECT id FROM {KEYS} WHERE registration = old.registration);
  DELETE FROM {KEYS} WHERE registration = old.registration;
END""",
)
_SQLITE_FILL = (
    f"DELETE FROM {FTS}",
    f"DELETE FROM {KEYS}",
    f"INSERT INTO {KEYS} (registration) SELECT registration FROM workers ORDER BY registration",
    f"INSERT INTO {FTS} (rowid, name_folded, registration) SELECT k.id, w.name_folded, w.registration "
    f"FROM workers w JOIN {KEYS} k ON k.registration = w.registration",
)
_PG_DDL = (
    "CREATE INDEX IF NOT EXISTS ix_workers_name_folded_trgm ON workers USING gin (name_folded gin_trgm_ops)",
    "CREATE INDEX IF NOT EXISTS ix_workers_registration_trgm ON workers USING gin (lower(registration) gin_trgm_ops)",
)


def sqlite_has_trigram(conn: Connection) -> bool:
    """True when the SQLite library behind ``conn`` has FTS5's trigram tokenizer (3.34+)."""
    version = conn.exec_driver_sql("SELECT sqlite_version()").scalar()
    return tuple(int(x) for x in version.split(".")[:3]) >= SQLITE_TRIGRAM


def fill_folded(conn: Connection) -> int:
    """Write the folded name (``portgate.textfold.fold``) of every worker row that has none (a
    row written before migration 0030, or by a writer that gave no ``name_folded``); returns how
    many. Idempotent."""
    rows = conn.execute(select(workers.c.registration, workers.c.name).where(workers.c.name_folded.is_(None))).all()
    if rows:
        conn.execute(workers.update().where(workers.c.registration == bindparam("reg")).values(
            name_folded=bindparam("folded")), [{"reg": r.registration, "folded": fold(r.name)} for r in rows])
    return len(rows)


def create(conn: Connection) -> bool:
    """Make the index of the database behind ``conn`` and fill it from ``workers`` (idempotent;
    the folded names a row lacks are written first, ``fill_folded``).
    Returns False when the database cannot have one (SQLite older than 3.34; PostgreSQL without
    ``pg_trgm`` available or the right to create it: its failure is rolled back to a savepoint,
    the caller's transaction goes on), True otherwise. Raises what SQLAlchemy raises otherwise."""
    fill_folded(conn)
    if conn.dialect.name == "sqlite":
        if not sqlite_has_trigram(conn):
            return False
        for ddl in _SQLITE_DDL + _SQLITE_FILL:
            conn.exec_driver_sql(ddl)
        return True
    if conn.dialect.name != "postgresql":
        return False
    if not conn.exec_driver_sql("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'").first():
        return False
    try:
        with conn.begin_nested():
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except SQLAlchemyError:  # no right to create it: the search reads every row, as before
        return False
    for ddl in _PG_DDL:
        conn.exec_driver_sql(ddl)
    return True


def drop(conn: Connection) -> None:
    """Remove the index (the triggers, the FTS and key tables; PostgreSQL: the GIN indexes, the
    extension stays: other databases of the server may use it)."""
    if conn.dialect.name == "sqlite":
        for name in SQLITE_TRIGGERS:
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {FTS}")
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {KEYS}")
    elif conn.dialect.name == "postgresql":
        for name in PG_INDEXES:
            conn.exec_driver_sql(f"DROP INDEX IF EXISTS {name}")


_KNOWN: weakref.WeakKeyDictionary[Engine, bool] = weakref.WeakKeyDictionary()


def available(conn: Connection) -> bool:
    """True when the SQLite database behind ``conn`` has the index (its FTS table and the three
    triggers; a database adopted by ``create_all`` over an older one may lack them), or it is a
    PostgreSQL database (whose ``LIKE`` uses the GIN indexes when they exist and reads every row
    when not: the same rows either way). Cached per engine once found; read-only."""
    engine = conn.engine
    if _KNOWN.get(engine):
        return True
    if conn.dialect.name == "postgresql":
        found = True
    elif conn.dialect.name == "sqlite":
        names = set(conn.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE (type = 'table' AND name = ?) OR (type = 'trigger' AND tbl_name = "
            "'workers' AND name LIKE 'workers_name_search_%')", (FTS,)).scalars())
        found = names >= {FTS, *SQLITE_TRIGGERS}
    else:
        found = False
    if found:
        _KNOWN[engine] = True
    return found


#: SQLite: more candidates than this and the list walks its name index instead (a text found in so
#: many names fills a page of 50 within the first few thousand names, in name order, while every
#: candidate of the index is read and sorted: at 50,000 workers the two cost the same near 1,000)
MAX_CANDIDATES = 1000


def selective(conn: Connection, text: str) -> bool:
    """Whether narrowing the search for ``text`` (the search text as typed, stripped) by the index
    pays: on SQLite, when the trigram table finds at most ``MAX_CANDIDATES`` rows for it (counted up
    to one more, read-only); on PostgreSQL never: its planner uses the GIN indexes for the search's
    own ``LIKE`` conditions when they are selective, by its statistics (a union of candidates forced
    on it was slower at 50,000 workers: 54 ms for a common name against 3 ms). A text shorter than
    ``MIN_CHARS``, folded or not: False."""
    if not _long_enough(text) or conn.dialect.name != "sqlite":
        return False
    found = conn.exec_driver_sql(
        f"SELECT count(*) FROM (SELECT 1 FROM {FTS} WHERE {FTS} MATCH ? LIMIT ?)", (match(text), MAX_CANDIDATES + 1))
    return found.scalar() <= MAX_CANDIDATES


def _long_enough(text: str) -> bool:
    """Whether the trigram index can look ``text`` up, as typed and folded (folding may drop a
    character: a lone combining accent)."""
    return min(len(text), len(fold(text))) >= MIN_CHARS


_fts = table(FTS, column("rowid", Integer))
_keys = table(KEYS, column("id", Integer), column("registration", String))


def phrase(text: str) -> str:
    """``text`` as an FTS5 string (double quotes doubled): every character taken literally."""
    return '"' + text.replace('"', '""') + '"'


def match(text: str) -> str:
    """The FTS5 query of the search text ``text`` (as typed): its folded form in the folded names,
    or the text itself in the registrations (the trigram tokenizer folds their case)."""
    return f"name_folded : {phrase(fold(text))} OR registration : {phrase(text)}"


def candidates(dialect: str, text: str) -> list | None:
    """``SELECT registration`` statements whose union holds every worker whose folded name contains
    ``text`` folded (``portgate.textfold.fold``), whose registration begins with ``text`` (any case)
    or equals it (``text``: the search text as typed, stripped), found through the index: a
    superset of what those conditions find, or ``None`` where the index cannot help (a text
    shorter than ``MIN_CHARS``; a dialect without one). On SQLite ``text`` is looked up in the
    trigram table (``match``). PostgreSQL: None (its GIN indexes serve the search's own ``LIKE``
    conditions, see ``selective``)."""
    if not _long_enough(text):
        return None
    by_key = select(workers.c.registration).where(workers.c.registration == text)
    if dialect == "sqlite":
        found = select(_keys.c.registration).where(_keys.c.id.in_(
            select(_fts.c.rowid).where(literal_column(FTS).op("MATCH")(bindparam("name_phrase", match(text))))))
        return [found, by_key]
    return None


@event.listens_for(workers, "after_create")
def _after_create(target, connection: Connection, **_kw) -> None:
    """``create_all``: the index with the ``workers`` table."""
    create(connection)


@event.listens_for(workers, "before_drop")
def _before_drop(target, connection: Connection, **_kw) -> None:
    """``drop_all``: the FTS and key tables with the ``workers`` table (else a later
    ``create_all`` would find them holding the dropped workers)."""
    drop(connection)
