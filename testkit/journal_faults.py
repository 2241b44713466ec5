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
