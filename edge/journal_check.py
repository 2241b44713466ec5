"""Offline check of a gate's journal chain (``portgate edge verify-journal``; docs/evidence.md).

An inspector at the gangway or a technician after a crash checks ``<state_dir>/journal.db`` without
the office: every row is decoded, its ``seq`` column compared with the event's own seq, and the
events handed to the office's pure chain check (``wire.chain.check_chain``: each event's own
Ed25519 signature, the ``prev`` hash links, seq gaps, rollovers and documented quarantine
segments). The file is opened read-only (``edge.display.follower.open_ro``: a ``mode=ro`` URI,
``query_only``), so it works while the gate runs (a WAL reader never blocks the gate's commits) and
after a crash (the committed rows of the ``-wal`` file are read), and never changes the journal.

``check_journal(path, gate_id, keys)`` returns a ``JournalCheck``; ``first_bad`` is the lowest seq involved in
a break (``None``: the chain holds).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import msgspec

from edge.display.follower import open_ro
from portgate.clitext import tr
from portgate.errors import BadInput, StoreError
from wire import chain
from wire import events as wire
from wire.receipts import verify_receipt

_decoder = msgspec.json.Decoder(wire.Event)


@dataclasses.dataclass(frozen=True, slots=True)
class JournalCheck:
    """What ``check_journal`` found: ``rows`` read (seq ``seq_from``..``seq_to``), the chain report
    of the events that decode, ``problems`` (one line each, breaks first, by seq) and ``first_bad``
    (the lowest seq of a problem, ``None`` when the chain holds). ``key``: fingerprint of the key
    the check started from."""

    path: Path
    rows: int
    seq_from: int
    seq_to: int
    report: chain.ChainReport
    problems: tuple[tuple[int, str], ...]
    key: str | None

    @property
    def first_bad(self) -> int | None:
        return min((seq for seq, _ in self.problems), default=None)


def check_journal(path: str | Path, gate_id: str, keys: list, *, office_keys: list = (),
                  port: str = "") -> JournalCheck:
    """Check the journal of gate ``gate_id`` at ``path`` against its public ``keys`` (Ed25519, oldest first; the
    one that signs the first signed event starts the chain, rollovers are followed from there).
    A row whose body does not decode, or whose event names another seq or gate than its row, is a
    problem at that seq (MALFORMED, ROW_MISMATCH); rows missing at the end while the gate's
    ``.hwm`` file says they were journaled are TRUNCATED, and so are rows missing below the seq of the
    office's receipt kept next to the journal (``<journal>.receipt``) once it verifies against one of
    ``office_keys`` for ``port``/``gate_id`` (``wire.receipts.verify_receipt``; a receipt that does not
    verify, or no office key, sets no floor): deleting the ``.hwm`` file with the last rows does not
    hide the cut. Raises ``StoreError`` if the file is missing or
    not a readable journal (the caller exits 2)."""
    path = Path(path)
    try:
        conn = open_ro(path)
    except sqlite3.Error as exc:
        raise StoreError(tr("cli.edge.journal_open_ro", path=path, why=_sqlite_words(exc))) from exc
    try:
        rows = conn.execute("SELECT seq, body FROM journal ORDER BY seq").fetchall()  # one snapshot
    except sqlite3.Error as exc:
        raise StoreError(tr("cli.edge.journal_unreadable", path=path, why=_sqlite_words(exc))) from exc
    finally:
        conn.close()
    problems: list[tuple[int, str]] = []
    events: list[wire.Event] = []
    for seq, body in rows:
        try:
            ev = _decoder.decode(body)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            problems.append((seq, f"MALFORMED seq {seq}: " + tr("cli.edge.fail.malformed", why=str(exc)[:120])))
            continue
        if ev.seq != seq:
            problems.append((seq, f"ROW_MISMATCH seq {seq}: " + tr("cli.edge.fail.row_seq", seq=ev.seq,
                                                                      event=ev.event_id)))
            continue
        events.append(ev)
    foreign = [e for e in events if e.gate_id != gate_id]
    for ev in foreign:
        problems.append((ev.seq, f"ROW_MISMATCH seq {ev.seq}: " + tr("cli.edge.fail.row_gate", gate=ev.gate_id,
                                                                           want=gate_id)))
    events = [e for e in events if e.gate_id == gate_id]
    start = _starting_key(events, keys)
    report = chain.check_chain(gate_id, events, start, first_seq=rows[0][0] if rows else None)
    problems.extend((b.seq_from if b.seq_from > 0 else b.seq_to, break_line(b)) for b in report.breaks)
    last = rows[-1][0] if rows else 0
    problems.extend(_truncated(path, last, office_keys, port, gate_id))
    problems.sort(key=lambda p: p[0])
    return JournalCheck(path, len(rows), rows[0][0] if rows else 0, rows[-1][0] if rows else 0, report,
                        tuple(problems), chain.fingerprint(start) if start is not None else None)


def _sqlite_words(exc: sqlite3.Error) -> str:
    """sqlite3's own English reason in the command line's language (one it does not know: as is)."""
    said = str(exc)
    if said == "file is not a database":
        return tr("cli.edge.sqlite_not_db")
    return tr("cli.edge.sqlite_cannot_open") if said == "unable to open database file" else said


def _starting_key(events: list[wire.Event], keys: list):
    """The key of ``keys`` that signs the first signed event (``keys[0]`` if none does: every
    event then names itself BAD_SIGNATURE), ``None`` without keys."""
    first = next((e for e in events if e.sig), None)
    for k in keys:
        if first is not None and chain.signature_ok(first, k):
            return k
    return keys[0] if keys else None


def _hwm_seq(path: Path) -> int:
    """The last journaled seq the gate wrote in ``<journal>.hwm`` (its first word; the gate rewrites
    it every few dozen appends and at every stop), 0 when there is no readable one."""
    try:
        return int(Path(str(path) + ".hwm").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _truncated(path: Path, last: int, office_keys, port: str, gate_id: str) -> list[tuple[int, str]]:
    """The TRUNCATED problem of a journal ending at seq ``last`` below the gate's ``.hwm`` mark or
    below the seq of the office's verified receipt (``_receipt_seq``), or none: rows cut off the
    end leave a chain that holds, these marks say more was journaled."""
    hwm, received = _hwm_seq(path), _receipt_seq(path, office_keys, port, gate_id)
    if hwm > last and hwm >= received:
        said = tr("cli.edge.fail.truncated", hwm_file=path.name + ".hwm", hwm=hwm, first=last + 1)
    elif received > last:  # the office signed that it received more than the journal holds
        said = tr("cli.edge.fail.truncated_receipt", receipt_file=path.name + ".receipt", seq=received,
                  first=last + 1)
    else:
        return []
    return [(last + 1, f"TRUNCATED after seq {last}: {said}")]


def _receipt_seq(path: Path, office_keys, port: str, gate_id: str) -> int:
    """The seq of the office's receipt in ``<journal>.receipt`` once its signature verifies against
    one of ``office_keys`` and it names ``port``/``gate_id`` (``wire.receipts.verify_receipt``), 0
    when there is none, it cannot be read or it does not verify (no floor then)."""
    try:
        raw = Path(str(path) + ".receipt").read_bytes()
    except OSError:
        return 0
    for key in office_keys:
        try:
            return verify_receipt(raw, key, port=port, gate_id=gate_id).seq
        except BadInput:
            continue
    return 0


def break_line(b: chain.Break) -> str:
    """A chain break as ``verify-journal`` prints it: ``CHAIN_BREAK <KIND> gate <G> seq <N or A..B>: ``
    (machine-read, as ``str(b)``) and the detail in ``cli_lang()`` (``cli.chain.<what>``; the English
    ``detail`` when the break carries no words)."""
    where = f"{b.seq_from}" if b.seq_from == b.seq_to else f"{b.seq_from}..{b.seq_to}"
    detail = tr(f"cli.chain.{b.said[0]}", **b.said[1]) if b.said else b.detail  # lazy msgids: docs/i18n.md
    return f"CHAIN_BREAK {b.kind} gate {b.gate_id} seq {where}: {detail}"
