"""Faults a real SD card produces but a test cannot wait for: a gate journal file torn by a write
cut short (tests of the journal's quarantine and of the office's loss accounting)."""

from __future__ import annotations

import sqlite3


def tear(path, *, garbage_seq: int | None = None) -> None:
    """Corrupt a closed journal file as a torn SD-card write does: optionally a row with a garbage
    seq lands in the journal table, then a page of another table (journal_meta) is overwritten, so
    ``quick_check`` fails while ``max(seq)`` still reads (the garbage)."""
    c = sqlite3.connect(path)
    c.execute("PRAGMA journal_mode=DELETE")
    if garbage_seq is not None:
        c.execute(
            "INSERT INTO journal (seq, event_id, kind, body, created_at) VALUES (?, 'x', 'tap', x'00', 'x')",
            (garbage_seq,),
        )
    c.executemany("INSERT INTO journal_meta VALUES (?, ?)", [(f"k{i}", "v" * 100) for i in range(100)])
    c.commit()
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'journal_meta'").fetchone()[0]
    size = c.execute("PRAGMA page_size").fetchone()[0]
    c.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * size : root * size] = b"\xa5" * size
    path.write_bytes(bytes(data))


LEGACY_SCHEMA = """
CREATE TABLE journal (
    seq INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    kind TEXT NOT NULL,
    body BLOB NOT NULL,
    sent INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX journal_outbox_high ON journal (priority DESC, seq) WHERE sent = 0 AND priority > 0;
CREATE TABLE journal_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def legacy_copy(src, dst) -> None:
    """Write at ``dst`` the version-0 form (a ``sent`` column per row, ``user_version`` 0, no
    ``journal_sent``) of the closed journal ``src`` written by this software: the same rows, each
    marked sent when one of ``src``'s sent ranges covers it, as a gate before the upgrade left it."""
    with sqlite3.connect(src) as c:
        rows = c.execute("SELECT seq, event_id, priority, kind, body, created_at FROM journal").fetchall()
        ranges = c.execute("SELECT lo, hi FROM journal_sent").fetchall()
    old = sqlite3.connect(dst)
    try:
        old.executescript(LEGACY_SCHEMA)
        old.executemany("INSERT INTO journal VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(*r[:5], int(any(lo <= r[0] <= hi for lo, hi in ranges)), r[5]) for r in rows])
        old.commit()
    finally:
        old.close()
