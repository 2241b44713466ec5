"""The audit of every stored signed event's own signature (docs/evidence.md "What ingest checks").

Ingest verifies one signature per run of a gate's linked events (``central.ingest.runs``): the
content of an event inside a run is proven by its successor's signature, its own ``sig`` bytes
are not checked there. ``audit`` checks them after commit, at low priority (``portgate evidence
audit`` runs at nice 19), for each event of the ledger after ledger id ``after_id``:

- a gate is *signing* once it has registered public keys (``<gate>.pub``), from its first seq
  the ingest linked (``event_links``: rows of signed events only), or once a signed event of it was
  met earlier in the audit; a stored event of a signing gate without ``sig`` is a
  ``chain_breaks`` row ``UNSIGNED``, a stored ``raw`` that does not decode is ``MALFORMED`` (any
  gate), a signed event whose signature holds for none of its gate's keys ``BAD_SIGNATURE``
  (``detail`` starts ``CHAIN_BREAK <KIND> gate G seq N: audit: ``), each recorded once (an audit
  run again records nothing new but still reports it among ``failures``); every decoded event's
  stored columns must be what the ingest derives from its ``raw`` (``audit_columns``: else
  ``COLUMN_MISMATCH``), a ``raw`` not bytes is ``RAW_NOT_BYTES``, a second row of a gate's seq no
  ingest FORKED break names ``DUPLICATE_SEQ``;
- a signed event whose own signature holds is compared with its ``event_links`` row (the first
  event stored at its gate and seq only; a later copy is the ingest's FORKED/REPLAYED): no row is a
  ``LINK_MISSING`` break, a row whose ``hash`` is not SHA-256 of the event's canonical bytes or whose
  ``prev`` is not the event's ``prev`` a ``LINK_ALTERED`` break (the ingest checks the next event
  against that row: when seq N+1 names the event's hash, the detail says a PREV_MISMATCH at seq
  N..N+1 is the row's, not the events');
- over the whole ledger at every run, each signing gate's seqs absent from ``events`` between its
  lowest (1) and the highest the office received gaplessly (``gate_progress.contiguous_seq``; the
  highest stored seq when that row is absent), neither a recorded loss (``gate_losses``) nor inside
  a recorded break of another kind, are a ``MISSING`` break (``seq_from..seq_to``, the event named
  the first stored after the gap): an event deleted after commit. Open gaps above that seq are the
  gap repair's (docs/mqtt.md) and not audited;
- a signed event of a gate whose public keys cannot be found or read is *not audited*: it is
  counted in ``unchecked`` (gate → count and reason) and the cursor ``last_id`` stops before the
  first such event.

``audit_rows`` is the pure part: stored rows and key look-ups in, the findings out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from sqlalchemy import and_, func, select
from sqlalchemy.engine import Engine

from central.evidence.audit_columns import (StoredReader, Why, column_problem, copy_problem, link_value_problem,
                                            raw_problem, seq_copies, stored_select)
from central.ingest.check import PREFIX, BreakRow
from central.ingest.keys import KeyRing, KeyUnreadable
from central.ingest.nats_users import registered_in
from central.ledger.gate_ports import gate_ports
from central.ledger.schema import chain_breaks, event_links, events, gate_losses, gate_progress
from portgate.errors import BadInput
from wire import chain
from wire.events import Event, decode

PAGE = 2000  # ledger rows read and checked per transaction

Keys = Callable[[str], "tuple[Sequence, str]"]  # gate -> (public keys oldest first, why none)
Successor = Callable[[str, int], "bytes | None"]  # (gate, seq) -> raw of seq + 1, if stored
FirstSigned = Callable[[str], "int | None"]  # gate -> its first seq the ingest linked (signed), if any
Link = Callable[[str, int], "tuple[bytes, bytes] | None"]  # (gate, seq) -> stored link (hash, prev), if any
Duplicate = Callable[[str, int, int], bool]  # (gate, seq, ledger id) -> an event stored earlier at that seq


@dataclasses.dataclass(frozen=True, slots=True)
class Row:
    id: int  # ledger id
    gate_id: str
    seq: int
    event_id: str
    raw: bytes  # (any type SQLite holds: ``RAW_NOT_BYTES`` if not bytes)
    stored: Mapping[str, object] | None = None  # its columns derived from raw (``audit_columns``; None: not checked)
    first: tuple[int, frozenset[str]] | None = None  # (first ledger id, FORKED event ids) if its seq is stored twice


@dataclasses.dataclass(slots=True)
class Findings:
    checked: int = 0  # signed events whose own signature was verified
    breaks: list[BreakRow] = dataclasses.field(default_factory=list)
    unchecked: dict[str, list] = dataclasses.field(default_factory=dict)  # gate -> [count, reason]
    first_unchecked: int | None = None  # ledger id of the first signed event not verified


@dataclasses.dataclass(frozen=True, slots=True)
class AuditReport:
    checked: int  # signed events whose own signature was verified
    last_id: int  # cursor: every event up to this ledger id was examined and, if signed, verified
    recorded: list[BreakRow]  # breaks recorded by this run
    failures: list[BreakRow] = dataclasses.field(default_factory=list)  # every break found (new or held)
    unchecked: dict[str, tuple[int, str]] = dataclasses.field(default_factory=dict)  # gate -> (events, why)
    examined: int = 0  # ledger rows read after ``after_id``
    through_id: int = 0  # the last ledger id read (``last_id`` stops earlier when some are not audited)


def _break(kind: str, row: Row, text: str, event_id: str | None = None) -> BreakRow:
    return BreakRow(row.gate_id, row.seq, row.seq, kind,
                    f"{PREFIX} {kind} gate {row.gate_id} seq {row.seq}: audit: ledger id {row.id}: {text}",
                    event_id or row.event_id)


def _proven(ev: Event, pubs: Sequence, successor: Successor) -> bool:
    """True if the stored seq + 1 of the gate links to ``ev``'s canonical bytes and its own
    signature holds: then ``ev``'s content is the signed one and only its sig bytes differ."""
    raw = successor(ev.gate_id, ev.seq)
    if raw is None:
        return False
    try:
        nxt = decode(raw)
    except BadInput:
        return False
    return nxt.prev == chain.event_hash(ev) and any(chain.signature_ok(nxt, k) for k in pubs)


def _links_on(ev: Event, successor: Successor) -> bool:
    """True if the stored seq + 1 of the gate names ``ev``'s hash as its ``prev``."""
    raw = successor(ev.gate_id, ev.seq)
    try:
        return raw is not None and decode(raw).prev == chain.event_hash(ev)
    except BadInput:
        return False


def _link_problem(ev: Event, link: tuple[object, object] | None, successor: Successor) -> tuple[str, str] | None:
    """``(kind, text)`` when the stored link row of an authentic signed event does not match it."""
    if link is None:
        return "LINK_MISSING", f"event {ev.event_id} is signed but has no event_links row"
    digest = chain.event_hash(ev)
    hash_, prev = link
    wrong = [said for name, got, want in (("hash", hash_, digest), ("prev", prev, ev.prev))
             if (said := link_value_problem(name, got, want)) is not None]
    if not wrong:
        return None
    return "LINK_ALTERED", (f"the event_links row of event {ev.event_id} does not match the event: "
                            + "; ".join(wrong) + (f"; seq {ev.seq + 1} names the event's hash: a "
                                                  f"PREV_MISMATCH at seq {ev.seq}..{ev.seq + 1} follows from this "
                                                  "row, not from the events" if _links_on(ev, successor) else ""))


def _decoded(row: Row, breaks: list[BreakRow]) -> Event | None:
    """``row``'s event decoded from its raw, its stored columns and seq checked against it (the
    breaks appended: ``RAW_NOT_BYTES``, ``MALFORMED``, ``COLUMN_MISMATCH``, ``DUPLICATE_SEQ``);
    None when it has no event to audit further."""
    wrong = raw_problem(row.raw)
    if wrong is not None:
        breaks.append(_break("RAW_NOT_BYTES", row, f"event {row.event_id}: {wrong}"))
        return None
    try:
        ev = decode(bytes(row.raw))
    except BadInput as exc:
        breaks.append(_break("MALFORMED", row, f"the stored event {row.event_id} does not decode ({exc})"))
        return None
    if row.stored is not None and (wrong := column_problem(ev, bytes(row.raw), row.stored)) is not None:
        breaks.append(_break("COLUMN_MISMATCH", row, f"event {ev.event_id}: {wrong} (the office's pages and "
                             "exports read the stored columns)", ev.event_id))
    if (wrong := copy_problem(ev, row.id, row.first)) is not None:
        breaks.append(_break("DUPLICATE_SEQ", row, wrong, ev.event_id))
    return ev


def audit_rows(rows: Iterable[Row], keys_of: Keys, successor: Successor, signing: set[str],
               found: Findings | None = None, first_signed: FirstSigned = lambda _g: None,
               link_of: Link | None = None, duplicate: Duplicate = lambda _g, _s, _i: False) -> Findings:
    """The findings over stored ``rows`` (ledger id order). ``signing``: gates known to sign,
    updated in place. ``keys_of(gate)`` gives ``(public keys oldest first, reason when empty)``;
    ``link_of`` the stored link of a (gate, seq) (``None``: links not checked)."""
    out = found if found is not None else Findings()
    for row in rows:
        pubs, why = keys_of(row.gate_id)
        if pubs:
            signing.add(row.gate_id)
        elif row.gate_id not in signing:
            first = first_signed(row.gate_id)
            if first is not None and row.seq >= first:
                signing.add(row.gate_id)
        ev = _decoded(row, out.breaks)
        if ev is None:
            continue
        if not ev.sig:
            if row.gate_id in signing:
                out.breaks.append(_break("UNSIGNED", row, f"event {ev.event_id} is stored without a "
                                         "signature from a signing gate"))
            continue
        signing.add(row.gate_id)
        if not pubs:
            count = out.unchecked.setdefault(row.gate_id, [0, why])
            count[0] += 1
            if out.first_unchecked is None:
                out.first_unchecked = row.id
            continue
        out.checked += 1
        if not any(chain.signature_ok(ev, k) for k in reversed(pubs)):
            cause = (f"its content is proven by seq {ev.seq + 1}'s link, its sig bytes were replaced after "
                     "signing" if _proven(ev, pubs, successor) else "edited, or forged without the gate's key")
            out.breaks.append(_break("BAD_SIGNATURE", row, f"event {ev.event_id} is stored but its own "
                                     f"signature does not verify with the gate's registered key(s) ({cause})"))
            continue
        if link_of is not None:
            problem = _link_problem(ev, link_of(row.gate_id, row.seq), successor)
            if problem is not None and not duplicate(row.gate_id, row.seq, row.id):
                out.breaks.append(_break(problem[0], row, problem[1]))
    return out


def _minus(a: int, b: int, cut: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``a..b`` (inclusive) outside every range of ``cut``."""
    parts = [(a, b)]
    for c, d in cut:
        parts = [p for lo, hi in parts for p in ((lo, min(hi, c - 1)), (max(lo, d + 1), hi)) if p[0] <= p[1]]
    return parts


def missing_ranges(stored: Sequence[int], upto: int, cut: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The seqs ``1..upto`` absent from the sorted distinct ``stored`` seqs, minus ``cut`` (losses,
    recorded breaks), as inclusive ranges in seq order."""
    out, expect = [], 1
    for seq in stored:
        if seq > upto:
            break
        if seq > expect:
            out += _minus(expect, seq - 1, cut)
        expect = max(expect, seq + 1)
    return out


def _gaps(conn, gates: Iterable[str], now: dt.datetime) -> list[BreakRow]:
    """The ``MISSING`` breaks of the signing ``gates`` over the whole ledger (``missing_ranges``)."""
    out = []
    for gate in sorted(gates):
        progress = conn.execute(select(gate_progress.c.contiguous_seq)
                                .where(gate_progress.c.gate_id == gate)).scalar()
        seqs = [int(s) for s in conn.execute(select(events.c.seq).where(events.c.gate_id == gate)
                                             .distinct().order_by(events.c.seq)).scalars()
                if isinstance(s, int)]  # (a seq edited to text in SQLite: COLUMN_MISMATCH)
        if not seqs:
            continue
        upto = int(progress) if progress is not None else seqs[-1]
        cut = [(int(a), int(b)) for a, b in conn.execute(
            select(gate_losses.c.seq_from, gate_losses.c.seq_to).where(gate_losses.c.gate_id == gate))]
        cut += [(int(a), int(b)) for a, b in conn.execute(
            select(chain_breaks.c.seq_from, chain_breaks.c.seq_to)
            .where(chain_breaks.c.gate_id == gate, chain_breaks.c.kind != "MISSING"))]
        for a, b in missing_ranges(seqs, upto, cut):
            after = conn.execute(select(events.c.id, events.c.event_id).where(
                events.c.gate_id == gate, events.c.seq > b).order_by(events.c.seq, events.c.id).limit(1)).first()
            named = ("" if after is None else
                     f"; the first event stored after it is {after.event_id} (ledger id {after.id})")
            out.append(BreakRow(gate, a, b, "MISSING",
                                f"{PREFIX} MISSING gate {gate} seq {a}..{b}: audit: seq {a}..{b} was received "
                                f"(gapless up to seq {upto}) but is not in the ledger and is no recorded loss"
                                f"{named}", None if after is None else after.event_id))
    return out


def _keys_of(home: KeyRing, gate_rings: Mapping[str, KeyRing], not_served: Mapping[str, str],
             gate: str) -> tuple[Sequence, str]:
    """``(public keys, why none)`` of ``gate`` for ``audit_rows``, read from its port's keys dir
    (``gate_rings``, else ``home``): ``((), reason)`` when its key file is missing or unreadable,
    or its port (``not_served``: gate -> port) is not one the config serves."""
    if gate in not_served:
        return (), Why(f"port {not_served[gate]}, not served by this config: audit with a config naming it "
                       "(ports, port_keys_dirs)", "cli.evidence.why_not_served", port=not_served[gate])
    keys = gate_rings.get(gate, home)
    try:
        pubs = keys.public_keys(gate)
    except KeyUnreadable as exc:
        return (), str(exc)
    where = keys.keys_dir / (gate + ".pub")
    return pubs, "" if pubs else Why(f"no public key {where}", "cli.evidence.why_no_public_key", file=where)


class _PageReads:
    """The ledger reads ``audit_rows`` needs for one page of events, on the page's connection;
    ``firsts`` (a gate's first linked seq) is kept across pages by the caller."""

    def __init__(self, conn, firsts: dict[str, int | None]) -> None:
        self.conn, self.firsts = conn, firsts

    def successor(self, gate: str, seq: int) -> bytes | None:
        """The raw bytes of the first stored event ``seq + 1`` of ``gate``, or None."""
        raw = self.conn.execute(select(events.c.raw).where(events.c.gate_id == gate, events.c.seq == seq + 1)
                                .order_by(events.c.id).limit(1)).scalar()
        return bytes(raw) if isinstance(raw, bytes | bytearray | memoryview) else None

    def first_signed(self, gate: str) -> int | None:
        """The lowest seq of ``gate`` with a stored link (its first signed event), or None."""
        if gate not in self.firsts:
            self.firsts[gate] = self.conn.execute(select(func.min(event_links.c.seq))
                                                  .where(event_links.c.gate_id == gate)).scalar()
        return self.firsts[gate]

    def links_of(self, rows):
        """The stored links of the page's (gate, seq)s, read with one statement per gate: a lookup
        ``(gate, seq) -> (hash, prev) | None``."""
        span: dict[str, list[int]] = {}
        for r in rows:
            lo_hi = span.setdefault(r.gate_id, [r.seq, r.seq])
            lo_hi[0], lo_hi[1] = min(lo_hi[0], r.seq), max(lo_hi[1], r.seq)
        stored = {}
        for gate, (lo, hi) in span.items():
            for r in self.conn.execute(select(event_links.c.seq, event_links.c.hash, event_links.c.prev).where(
                    event_links.c.gate_id == gate, event_links.c.seq.between(lo, hi))):
                if type(r.seq) is int:  # a seq kept as text (SQLite) is no link of an event: LINK_MISSING
                    stored[(gate, r.seq)] = (r.hash, r.prev)  # as stored: link_value_problem reads the type
        return lambda gate, seq: stored.get((gate, seq))

    def duplicate(self, gate: str, seq: int, ledger_id: int) -> bool:
        """Whether an event of ``gate`` with ``seq`` is stored under a lower ledger id."""
        return self.conn.execute(select(events.c.id).where(events.c.gate_id == gate, events.c.seq == seq,
                                                           events.c.id < ledger_id).limit(1)).first() is not None


def _key(r) -> tuple[str, int]:
    """``(gate_id, seq)`` of a ledger row; a gate id or seq of another type (SQLite keeps any) is
    looked up as text / seq 0 (its column is still compared: ``COLUMN_MISMATCH``)."""
    gate, seq = r.gate_id, r.seq
    return gate if isinstance(gate, str) else str(gate), seq if type(seq) is int else 0


def _record_breaks(conn, found_now: Iterable[BreakRow], now: dt.datetime) -> list[BreakRow]:
    """Insert each break of ``found_now`` not already a ``chain_breaks`` row (same gate, first seq,
    kind and event), stamped ``now``; returns the ones inserted."""
    inserted = []
    for b in found_now:
        held = conn.execute(select(chain_breaks.c.id).where(and_(
            chain_breaks.c.gate_id == b.gate_id, chain_breaks.c.seq_from == b.seq_from,
            chain_breaks.c.kind == b.kind,
            chain_breaks.c.event_id.is_(None) if b.event_id is None else chain_breaks.c.event_id == b.event_id,
        ))).first()
        if held is None:
            conn.execute(chain_breaks.insert().values(
                gate_id=b.gate_id, seq_from=b.seq_from, seq_to=b.seq_to, kind=b.kind,
                detail=b.detail, event_id=b.event_id, recorded_at=now))
            inserted.append(b)
    return inserted


def audit(engine: Engine, keys: KeyRing, *, after_id: int = 0, now: dt.datetime,
          gate_rings: Mapping[str, KeyRing] | None = None, served: Sequence[str] = ()) -> AuditReport:
    """Examine every event with ledger id > ``after_id`` (``audit_rows``) and record each break
    not yet recorded as a ``chain_breaks`` row (one transaction per ``PAGE`` rows). ``keys``: the
    home port's keys dir; ``gate_rings``: gate id -> the keys dir of its port for the gates of the
    other ports a config serves (``gate_rings_of``); ``served``: the config's ports, the gates of
    any other port (their events' port, ``gate_ports``) not audited and said so (none: every gate
    read from the keys dirs). Raises SQLAlchemy's ``OperationalError`` if the ledger cannot be read
    or written (locked, down)."""

    gate_rings = dict(gate_rings or {})
    with engine.connect() as conn:
        not_served = {g: p for g, p in gate_ports(conn).items() if p not in served} if served else {}
    keys_of = functools.partial(_keys_of, keys, gate_rings, not_served)
    firsts: dict[str, int | None] = {}

    def record(conn, found_now: Iterable[BreakRow]) -> None:
        recorded.extend(_record_breaks(conn, found_now, now))

    found, signing, last, examined, recorded = Findings(), set(), after_id, 0, []
    stored_of = StoredReader(engine.dialect)
    while True:
        with engine.begin() as conn:
            rows = conn.execute(select(events.c.id, events.c.raw, *stored_select()).where(events.c.id > last)
                                .order_by(events.c.id).limit(PAGE)).all()
            if not rows:
                break
            start = len(found.breaks)
            reads = _PageReads(conn, firsts)
            at = [_key(r) for r in rows]
            copies = seq_copies(conn, at)
            page = [Row(r.id, *k, r.event_id, r.raw, stored_of(r), copies.get(k)) for r, k in zip(rows, at)]
            audit_rows(page, keys_of, reads.successor, signing, found, reads.first_signed, reads.links_of(page),
                       reads.duplicate)
            examined, last = examined + len(rows), rows[-1].id
            record(conn, found.breaks[start:])
    with engine.begin() as conn:
        linked = set(conn.execute(select(event_links.c.gate_id).distinct()).scalars())
        registered = {p.stem for ring in {keys, *gate_rings.values()} if ring.keys_dir.is_dir()
                      for p in ring.keys_dir.glob("*.pub")}
        gaps = _gaps(conn, signing | linked | registered, now)
        found.breaks.extend(gaps)
        record(conn, gaps)
    cursor = last if found.first_unchecked is None else found.first_unchecked - 1
    return AuditReport(found.checked, cursor, recorded, found.breaks,
                       {g: (n, why) for g, (n, why) in found.unchecked.items()}, examined, last)


def gate_rings_of(home_dir: str | Path, port_dirs: Mapping[str, str | Path]) -> dict[str, KeyRing]:
    """gate id -> a ``KeyRing`` of its port's keys dir, for the gates the keys dirs ``port_dirs``
    (port -> dir: the home port's ``keys_dir`` and ``port_keys_dirs``, ``CentralConfig``) register
    at a port other than the home dir's (``central.ingest.nats_users.registered_in``, as the office
    reads them). ``ConfigError`` for a keys dir that is not a directory."""
    home = str(home_dir)
    rings: dict[str, KeyRing] = {}
    out = {}
    for gate, port in registered_in(port_dirs.values()).items():
        where = port_dirs.get(port)
        if where is not None and str(where) != home:
            out[gate] = rings.setdefault(str(where), KeyRing(where))
    return out
