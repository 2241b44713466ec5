"""What a gate journal file holds, read before ``edge.journal.Journal`` trusts it: the layout its
tables show (``journal_layout``: the schema version the tables say, whatever ``PRAGMA user_version``
says) and whether rows were lost (``lost_rows``: the file is missing or empty while its ``.hwm`` file
says seqs were journaled, or its rows stop below the seq the ``.hwm`` file names: an older copy put
back). Documented in docs/gate.md "Journal and outbox" and "Quarantine"."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SIDE_FILES = ("-wal", "-shm", "-journal")
_EVENT_COLUMNS = ("seq", "event_id", "priority", "kind", "body", "created_at")


def journal_layout(conn: sqlite3.Connection) -> str | None:
    """The schema a journal file's tables show, whatever its ``PRAGMA user_version`` says:
    ``"empty"`` (no tables: a new file), ``"v2"`` (``journal`` and ``journal_sent``; a ``sent``
    column left by the version-0 upgrade is unused), ``"v0"`` (``journal`` with a ``sent`` column, no
    ``journal_sent``), ``"inconsistent: <what is wrong>"``, or None (tables that are not a
    journal's). Raises ``sqlite3.Error``."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return "empty"
    if "journal" not in tables:
        return "inconsistent: no journal table" if tables & {"journal_sent", "journal_meta"} else None
    columns = {r[1] for r in conn.execute("PRAGMA table_info(journal)")}
    missing = [name for name in _EVENT_COLUMNS if name not in columns]
    if missing:
        return f"inconsistent: the journal table has no column {', '.join(missing)}"
    if "journal_sent" in tables:
        ranges = {r[1] for r in conn.execute("PRAGMA table_info(journal_sent)")}
        if not {"lo", "hi"} <= ranges:
            return "inconsistent: the journal_sent table has no lo/hi columns"
        return "v2"
    if "sent" in columns:
        return "v0"
    return "inconsistent: no journal_sent table and no sent column"


def lost_rows(path: Path, hwm: int) -> str | None:
    """A one-line reason when the journal at ``path`` lacks event rows its ``.hwm`` file says were
    journaled (seqs up to ``hwm`` > 0): the file is missing, zero bytes long (``: > journal.db``),
    has no ``journal`` rows, or its highest seq is below ``hwm`` (an older copy restored, e.g. from a
    ``.dump``: the ``.hwm`` file is rewritten only after a commit, so it never leads a whole file).
    Such a file is treated like a corrupt one (quarantined, ``STORE_QUARANTINED`` naming the loss and
    starting a new chain segment). None when it holds rows up to ``hwm``, or cannot be read here
    (left to the open, which names the error)."""
    if not path.exists():
        return f"no journal file; the .hwm file says seqs up to {hwm} were journaled"
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            top = conn.execute("SELECT max(seq) FROM journal").fetchone()[0] if "journal" in tables else None
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    if top is not None and top >= hwm:
        return None
    if top is not None:
        return f"journal file behind its .hwm file (last seq {top}, the .hwm file says {hwm}; an older copy?)"
    size = path.stat().st_size
    what = "empty journal file (0 bytes)" if size == 0 else "journal file without event rows"
    return f"{what}; the .hwm file says seqs up to {hwm} were journaled"
