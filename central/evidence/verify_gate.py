"""One gate's part of an evidence bundle, checked offline (``central.evidence.verify`` steps 2-4):
its chain from the raw signed events (with the breaks the office recorded on ingest), the canonical
bytes and signature of each event, and the office's receipt. Split from ``verify`` (issue 32)."""

from __future__ import annotations

import json

from cryptography.exceptions import InvalidSignature

from portgate.clitext import tr
from portgate.errors import BadInput
from wire import chain
from wire.events import canonical_bytes, decode


def public_keys(text: str) -> list:
    """The Ed25519 public keys of a PEM text holding one or more ``PUBLIC KEY`` blocks."""
    end = "-----END PUBLIC KEY-----"
    return [chain.load_public(block + end) for block in text.split(end) if "-----BEGIN" in block]


def _office_breaks(gate: str, files: dict[str, bytes]) -> list[tuple[str, int, int]] | None:
    """``(kind, seq_from, seq_to)`` of each break the office recorded (``chain/<gate>.json``), or
    ``None`` if that file is not readable."""
    try:
        recorded = json.loads(files.get(f"chain/{gate}.json", b"{}")).get("breaks_recorded_on_ingest") or []
        return [(str(b["kind"]), int(b["seq_from"]), int(b["seq_to"])) for b in recorded]
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _after_ingest(gate: str, files: dict[str, bytes], report) -> list:
    """The ``PREV_MISMATCH`` breaks of the bundle's events (both events' own signatures hold:
    ``check_chain`` names a bad one BAD_SIGNATURE instead) that the office recorded at the same
    seqs on ingest: the gate signed seq n+1 over another seq n than the one the ledger had already
    verified and linked (its journal edited, or restored, and the gate restarted)."""
    recorded = {(a, b) for kind, a, b in _office_breaks(gate, files) or () if kind == "PREV_MISMATCH"}
    return [b for b in report.breaks if b.kind == "PREV_MISMATCH" and (b.seq_from, b.seq_to) in recorded
            and b.seq_to == b.seq_from + 1]


def _split_check(gate: str, events: list, keys: list, first_seq: int, later: list) -> chain.ChainReport:
    """``check_chain`` of each part of ``events`` between the ``later`` breaks (each part from its
    first seq; stored order kept), combined: the links inside every part and every event's own
    signature are checked as before, only the broken link itself is not (``later`` names it)."""
    cuts = sorted(b.seq_to for b in later)
    parts: list[list] = [[] for _ in range(len(cuts) + 1)]
    for ev in events:
        parts[sum(1 for c in cuts if ev.seq >= c)].append(ev)
    reports = [chain.check_chain(gate, part, starting_key(part, keys), first_seq=start)
               for part, start in zip(parts, [first_seq, *cuts]) if part]
    last = reports[-1]
    return chain.ChainReport(gate, sum(r.verified for r in reports), last.head_seq, last.head,
                             tuple(b for r in reports for b in r.breaks), tuple(s for r in reports for s in r.segments),
                             sum(r.unsigned_legacy for r in reports))


def _recorded_breaks(gate, files, report, notes, later=()) -> None:
    """A note per break the office's ledger recorded (``chain/<gate>.json``, ingest and audit),
    saying whether the bundle's own events, checked here from their raw bytes (never from the
    ledger's ``event_links``), break at those seqs too."""
    ranges = _office_breaks(gate, files)
    if ranges is None:
        notes.append(tr("cli.evidence.note.breaks_unreadable", gate=gate))
        return
    found = [(b.seq_from, b.seq_to) for b in (*report.breaks, *later)]
    for kind, a, b in ranges:
        here = any(x <= b and a <= y for x, y in found)
        fields = {"gate": gate, "kind": kind, "first": a, "last": b}
        notes.append(tr("cli.evidence.note.office_break_too", **fields) if here
                     else tr("cli.evidence.note.office_break_only", **fields))


def check_gate(gate, info, files, office, fail, notes, verified_ids, gate_keys) -> None:
    """One gate's part of the bundle: its key, its chain (with the office's recorded breaks), the
    canonical bytes of each event and the office's receipt. Failures go to ``fail``, facts to
    ``notes``, verified events to ``verified_ids``, the gate's key and chain to ``gate_keys``."""
    name = f"events/{gate}.jsonl"
    try:
        keys = public_keys(files[f"keys/{gate}.pem"].decode("ascii"))
    except (KeyError, BadInput, UnicodeDecodeError):
        fail.append(f"keys/{gate}.pem: " + tr("cli.evidence.fail.no_public_key"))
        return
    events = _bundle_events(name, files, fail)
    if not events:
        fail.append(f"{name}: " + tr("cli.evidence.fail.no_events"))
        return
    key = starting_key(events, keys)
    first_seq = events[0].seq if info.seq_from is None else info.seq_from
    report = chain.check_chain(gate, events, key, first_seq=first_seq)
    later = _after_ingest(gate, files, report)
    if later:  # the ledger's verified copies count; each such break is reported beside them
        report = _split_check(gate, events, keys, first_seq, later)
        notes.extend(_after_ingest_note(gate, b) for b in later)
    if key is not None:
        gate_keys[gate] = _key_and_chain(gate, key, events, first_seq)
    fail.extend(f"{name}: {b}" for b in report.breaks)
    for seg in report.segments:
        notes.append(tr("cli.evidence.note.segment_break", gate=gate, seq=seg.seq, first=seg.lost_from,
                        last=seg.lost_to, head=seg.last_head[:16]))
    by_seq = _check_canonical(gate, events, report, files, verified_ids, fail)
    notes.append(tr("cli.evidence.note.gate_verified", gate=gate, n=report.verified, first=info.seq_from,
                    last=report.head_seq, head=report.head[:16]))
    _recorded_breaks(gate, files, report, notes, later)
    _check_receipt(gate, files, office, by_seq, fail, notes)


def _bundle_events(name: str, files, fail: list[str]) -> list:
    """The events of ``events/<gate>.jsonl`` in file order; a line that is not an event is a failure."""
    events = []
    for n, line in enumerate(files.get(name, b"").splitlines(), 1):
        try:
            events.append(decode(line))
        except BadInput as exc:
            fail.append(f"{name}:{n}: " + tr("cli.evidence.fail.not_an_event", why=exc.reason[:120]))
    return events


def _after_ingest_note(gate: str, b) -> str:
    return (f"gate {gate}: {b} -- recorded by the office on ingest, after seq {b.seq_from} was received, "
            f"verified and linked: seq {b.seq_from} as the ledger holds it counts (its signature and its "
            f"link to the events before hold); seq {b.seq_to}, signed by the gate too, does not link to it "
            f"(the gate's journal edited or restored after seq {b.seq_from} was sent): review the gate "
            "(portgate edge verify-journal)")


def _key_and_chain(gate: str, key, events, first_seq: int) -> tuple[str, str]:
    """(the starting key's fingerprint, the chain it signs and the keys it rolled over to)."""
    rolled = [tr("cli.evidence.key.from_seq", key=chain.fingerprint(k), seq=e.seq) for e in events
              if (k := chain.key_change(e)) is not None and chain.fingerprint(k) != chain.fingerprint(key)]
    return chain.fingerprint(key), tr("cli.evidence.key.used_chain", gate=gate, seq=first_seq) + (
        tr("cli.evidence.key.rolled", keys=", ".join(rolled)) if rolled else "")


def _check_canonical(gate, events, report, files, verified_ids, fail) -> dict:
    """Every signed event's ``canonical/<gate>/<seq>-<id>.bin/.sig`` are its canonical bytes and
    signature; signed events outside a break go to ``verified_ids``. Returns the events by seq."""
    broken = {s for b in report.breaks for s in range(b.seq_from, b.seq_to + 1)}
    by_seq = {}
    for ev in events:
        by_seq.setdefault(ev.seq, ev)
        if ev.sig and ev.seq not in broken:
            verified_ids[ev.event_id] = ev
        base = f"canonical/{gate}/{ev.seq}-{ev.event_id}"
        if ev.sig and (files.get(base + ".bin") != canonical_bytes(ev)
                       or files.get(base + ".sig") != bytes.fromhex(ev.sig)):
            fail.append(f"{base}.bin/.sig: " + tr("cli.evidence.fail.not_canonical"))
    return by_seq


def _check_receipt(gate, files, office, by_seq, fail, notes) -> None:
    """The office's receipt for the gate, if the bundle has one: signed by the office key, of this
    gate, at a seq of the bundle whose chain head it names (else the history was rewritten)."""
    raw = files.get(f"receipts/{gate}.json")
    if raw is None:
        notes.append(tr("cli.evidence.note.no_receipt", gate=gate))
        return
    try:
        receipt = json.loads(raw)
        body = receipt["body"].encode("utf-8")
        if office is None:
            raise ValueError("no office key")
        office.verify(bytes.fromhex(receipt["sig"]), body)
        said = json.loads(body)
    except (ValueError, KeyError, TypeError, InvalidSignature):
        fail.append(f"receipts/{gate}.json: " + tr("cli.evidence.fail.receipt_unsigned"))
        return
    at = by_seq.get(int(said.get("seq", -1)))
    if said.get("gate_id") != gate:
        fail.append(f"receipts/{gate}.json: " + tr("cli.evidence.fail.receipt_other_gate", gate=said.get("gate_id")))
    elif at is None:
        fail.append(f"receipts/{gate}.json: " + tr("cli.evidence.fail.receipt_seq", seq=said.get("seq")))
    elif chain.event_hash(at) != said.get("head"):
        fail.append(f"receipts/{gate}.json: " + tr("cli.evidence.fail.receipt_head", head=str(said.get("head"))[:16],
                                                        seq=at.seq, bundle=chain.event_hash(at)[:16]))
    else:
        notes.append(tr("cli.evidence.note.receipt_matches", gate=gate, seq=at.seq))


def starting_key(events, keys):
    """The registered key that signs the first signed event (rollovers are followed from there);
    the first key if none does (every event then fails as BAD_SIGNATURE)."""
    first = next((e for e in sorted(events, key=lambda e: e.seq) if e.sig), None)
    for k in keys:
        if first is not None and chain.signature_ok(first, k):
            return k
    return keys[0] if keys else None
