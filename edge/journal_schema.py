"""The tables of the gate's journal file (``edge.journal``) and their schema versions: what a new
file is given and how a version-0 file (``sent`` a column of each row) is upgraded to version 2
(``journal_sent`` ranges), in one transaction at open. See the journal's module doc.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import structlog

from edge.journal_files import journal_layout, sent_ranges_problem
from portgate.errors import StoreError

log = structlog.get_logger("edge.journal")

SCHEMA_VERSION = 2  # PRAGMA user_version of the file; 0: sent was a column of each row
_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    kind TEXT NOT NULL,
    body BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS journal_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Version 2 on top of either a fresh file or a version-0 one (in one transaction, see _migrate).
_SCHEMA_2 = """
CREATE TABLE IF NOT EXISTS journal_sent (lo INTEGER PRIMARY KEY, hi INTEGER NOT NULL);
DROP INDEX IF EXISTS journal_outbox;
DROP INDEX IF EXISTS journal_outbox_high;
-- Only priority rows are indexed (a partial index is not touched by ordinary inserts, keeping the
-- hot-path commit small), their unsent seqs are held in memory from the open.
CREATE INDEX IF NOT EXISTS journal_high ON journal (seq) WHERE priority > 0;
"""
# version 0 -> 2: each run of consecutive sent rows becomes one range (gaps and islands)
_SENT_FROM_COLUMN = """
INSERT INTO journal_sent (lo, hi)
SELECT min(seq), max(seq) FROM (SELECT seq, seq - row_number() OVER (ORDER BY seq) AS island
                                FROM journal WHERE sent <> 0) GROUP BY island
"""


def migrate(c: sqlite3.Connection, path: Path) -> None:
    """Bring the file to ``SCHEMA_VERSION`` (see the module doc), all in one transaction: a
    crash half-way leaves the old version, upgraded again at the next open. Raises
    ``sqlite3.Error``, or ``StoreError`` for a file newer than this code."""
    version = c.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(f"journal {path}: schema version {version} is newer than this software's "
                         f"({SCHEMA_VERSION}); install the newer gate software or move the file aside")
    layout = journal_layout(c)
    if layout is None or layout.startswith("inconsistent"):
        problem = layout.removeprefix("inconsistent: ") if layout else "tables of another kind"
        raise StoreError(f"journal {path}: not a journal layout this software knows (schema version "
                         f"{version}; {problem}); move the file aside")
    if layout == "v0" and version != 0:
        raise StoreError(f"journal {path}: schema version {version} but the version-0 layout (a sent "
                         f"column, no journal_sent table); set PRAGMA user_version = 0 to have it upgraded, "
                         f"or move the file aside")
    if layout == "v2" and (problem := sent_ranges_problem(c)) is not None:
        raise StoreError(f"journal {path}: {problem}; move the file aside")
    if layout == "v2" and version == SCHEMA_VERSION:
        return
    legacy = layout == "v0"
    c.execute("BEGIN IMMEDIATE")
    try:
        for statement in (_SCHEMA + _SCHEMA_2).split(";"):
            if statement.strip():
                c.execute(statement)
        if legacy:
            c.execute(_SENT_FROM_COLUMN)
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        c.execute("COMMIT")
    except BaseException:
        if c.in_transaction:
            c.execute("ROLLBACK")
        raise
    if layout == "v2":  # a restored file (``.dump | sqlite3``) loses its user_version
        log.warning("journal_schema_version_restored", path=str(path), from_version=version,
                    to_version=SCHEMA_VERSION)
    if legacy:
        ranges = c.execute("SELECT count(*), coalesce(sum(hi - lo + 1), 0) FROM journal_sent").fetchone()
        log.info("journal_schema_upgraded", path=str(path), from_version=version, to_version=SCHEMA_VERSION,
                 sent_ranges=ranges[0], sent_rows=ranges[1])
