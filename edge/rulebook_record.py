"""The gate rulebook in force, journaled (RULES.md section G): at start-up the gate journals a
``rulebook`` event (``wire.events.RulebookPayload``: name, SHA-256 of the TOML text, the text)
when the rulebook it loaded differs from the last one it journaled, so the office knows which rules
a gate decided by from when (the what-if page starts from it) and an evidence bundle can show them.

The digest of the last journaled rulebook and the seq of its event are kept in
``<state_dir>/rulebook.journaled`` (written after the journal commit; a crash in between journals
the same rulebook again at the next start, which is harmless). A journal that no longer reaches
that seq (quarantined and started anew) gets the rulebook again. Reading it costs one small file at
start-up, not a scan of the journal.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from edge.rules.model import Now
from edge.journal import Journal
from wire import events as wire
from wire.events import RULEBOOK_MAX_CHARS, RulebookPayload

MARK = "rulebook.journaled"


def rulebook_text(path: str | None) -> str:
    """The TOML text of the rulebook file ``path`` ("" for the built-in default, ``path`` None).
    ``OSError`` / ``UnicodeDecodeError`` as reading it raises (the gate already loaded it)."""
    return Path(path).read_text(encoding="utf-8") if path else ""


def journal_rulebook(journal: Journal, state_dir: str | Path, path: str | None, name: str,
                     now: Now) -> wire.Event | None:
    """Journal the rulebook of ``path`` (named ``name``) unless it is the last one journaled;
    return the event, or None when nothing was journaled. A text longer than
    ``RULEBOOK_MAX_CHARS`` is journaled by name and digest only (``toml`` empty)."""
    text = rulebook_text(path)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    mark = Path(state_dir) / MARK
    try:
        said, _, seq = mark.read_text(encoding="ascii").strip().partition(" ")
        if said == digest and seq.isdigit() and int(seq) <= journal.last_seq():
            return None
    except (OSError, UnicodeDecodeError):
        pass  # no mark yet, or an unreadable one: journal it
    event = journal.append(RulebookPayload(name=name[:64], sha256=digest,
                                           toml=text if len(text) <= RULEBOOK_MAX_CHARS else ""), now=now)
    tmp = mark.with_name(MARK + ".tmp")
    tmp.write_text(f"{digest} {event.seq}\n", encoding="ascii")
    os.replace(tmp, mark)
    return event
