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
    (left to the open, which names the error) or holds tables of an unknown or inconsistent layout
    (``journal_layout``: a renamed ``journal`` table is refused at the open, not quarantined)."""
    if not path.exists():
        return f"no journal file; the .hwm file says seqs up to {hwm} were journaled"
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            layout = journal_layout(conn)
            if layout is None or layout.startswith("inconsistent"):
                return None  # not a loss: the open refuses the layout (exit 2), the file stays
            top = conn.execute("SELECT max(seq) FROM journal").fetchone()[0] if layout != "empty" else None
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


def sent_ranges_problem(conn: sqlite3.Connection) -> str | None:
    """What is wrong with a version-2 file's ``journal_sent`` ranges, one line, or None. They must
    be integers, ``1 <= lo <= hi``, disjoint, and within the file's rows (``mark_sent`` clamps every
    range to them): a range with ``lo > hi`` or ``lo < 1``, overlapping another or beyond the file's last seq
    was not written by the gate. Raises ``sqlite3.Error``."""
    top = conn.execute("SELECT max(seq) FROM journal").fetchone()[0] or 0
    prev: tuple[int, int] | None = None
    for lo, hi in conn.execute("SELECT lo, hi FROM journal_sent ORDER BY lo"):
        if not (isinstance(lo, int) and isinstance(hi, int)):
            return f"journal_sent range ({lo!r}, {hi!r}) is not two integers"
        if lo > hi:
            return f"journal_sent range {lo}..{hi} has lo > hi"
        if lo < 1:
            return f"journal_sent range {lo}..{hi} starts below seq 1"
        if prev is not None and lo <= prev[1]:
            return f"journal_sent ranges {prev[0]}..{prev[1]} and {lo}..{hi} overlap"
        if hi > top:
            return f"journal_sent range {lo}..{hi} goes beyond the journal's last seq {top}"
        prev = (lo, hi)
    return None
