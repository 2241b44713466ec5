"""The gate journals the rulebook it decides by (edge/rulebook_record.py): once per change, with
its name, digest and text; a real gate process does it at start-up (issue 34: the office's what-if
starts from the rulebook in force)."""

from __future__ import annotations

import datetime as dt
import hashlib
import signal

from edge.clock import FakeClock
from edge.journal import Journal
from edge.rulebook_record import MARK, journal_rulebook
from tests.edge.conftest import GATE, KEY
from wire.events import RULEBOOK_MAX_CHARS, RulebookPayload

T0 = dt.datetime(2026, 3, 15, 10, 0, tzinfo=dt.UTC)


def _rulebooks(journal: Journal) -> list[RulebookPayload]:
    return [e.payload for e in journal.events_after(0) if isinstance(e.payload, RulebookPayload)]


def test_a_rulebook_is_journaled_once_per_change_with_its_text_and_digest(tmp_path):
    book = tmp_path / "rules.toml"
    book.write_text('name = "porto-x"\n[[version]]\neffective_from = 2026-01-01\n', encoding="utf-8")
    journal = Journal(tmp_path / "journal.db", port="santos", gate_id=GATE, key=KEY, boot_id="b1")
    clock = FakeClock(T0)
    try:
        first = journal_rulebook(journal, tmp_path, str(book), "porto-x", clock.now())
        assert first is not None and first.payload.toml == book.read_text()
        assert first.payload.sha256 == hashlib.sha256(book.read_bytes()).hexdigest()
        assert journal_rulebook(journal, tmp_path, str(book), "porto-x", clock.now()) is None  # unchanged
        book.write_text(book.read_text() + "# g4 changed\n", encoding="utf-8")
        assert journal_rulebook(journal, tmp_path, str(book), "porto-x", clock.now()) is not None
        (tmp_path / MARK).write_bytes(b"\xff\xfe")  # an unreadable mark: journaled again, not a crash
        assert journal_rulebook(journal, tmp_path, str(book), "porto-x", clock.now()) is not None
        seq = journal.last_seq()
        digest = hashlib.sha256(book.read_bytes()).hexdigest()
        (tmp_path / MARK).write_text(f"{digest} {seq + 5}\n")  # a mark beyond the journal: started anew
        assert journal_rulebook(journal, tmp_path, str(book), "porto-x", clock.now()) is not None
        assert journal_rulebook(journal, tmp_path, None, "gate-default", clock.now()).payload.toml == ""
        book.write_text("#" * (RULEBOOK_MAX_CHARS + 1), encoding="utf-8")
        big = journal_rulebook(journal, tmp_path, str(book), "porto-x", clock.now())
        assert big.payload.toml == "" and big.payload.sha256 == hashlib.sha256(book.read_bytes()).hexdigest()
        assert len(_rulebooks(journal)) == 6
    finally:
        journal.close()


def test_a_real_gate_journals_its_rulebook_at_start_and_not_again_on_a_restart(tmp_path):
    """``portgate edge run`` twice on one state directory with the built-in rulebook: one
    ``rulebook`` event (gate-default, the empty text's digest), not one per start."""
    from testkit.gate_process import kill_gate, start_gate_and_wait, write_gate_config

    cfg = write_gate_config(tmp_path, key=KEY)
    for _ in range(2):
        proc = start_gate_and_wait(cfg)
        assert kill_gate(proc, signal.SIGTERM) == 0
    journal = Journal(tmp_path / "state" / "journal.db", port="santos", gate_id="g-aurora", key=KEY,
                      boot_id="read")
    try:
        books = _rulebooks(journal)
    finally:
        journal.close()
    assert [(b.name, b.sha256, b.toml) for b in books] == [("gate-default", hashlib.sha256(b"").hexdigest(), "")]
