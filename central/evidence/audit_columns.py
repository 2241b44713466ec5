"""The audit's check of the columns the office reads against the event's stored ``raw`` bytes.

Beside an event's exact wire bytes (``raw``: what its signature and the gate's chain prove) the
ingest stores columns derived from the decoded event (``central.ingest.event_insert.event_columns``:
``event_id``, ``gate_id``, ``seq``, ``occurred_at``, ``registration``, ``decision``, ``payload`` ...),
which the office's pages, exports and look-ups read. An edit of those columns alone leaves the
signature intact, so ``column_problem`` re-derives them from ``raw`` with the ingest's own code and
names each stored value that differs (``COLUMN_MISMATCH``); ``copy_problem`` names a second row
of a gate's seq that no ``FORKED`` break of the ingest explains (``DUPLICATE_SEQ``: a copied or
inserted row); ``raw_problem`` a stored ``raw`` that is not bytes (``RAW_NOT_BYTES``: SQLite keeps
whatever type was written). Values are compared as the office reads them (SQLAlchemy's column
types; a stored time as aware UTC, ``portgate.timeutil.as_utc``; the payload as its JSON value).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping

import msgspec
from sqlalchemy import func, select, type_coerce
from sqlalchemy.types import NullType

from central.ingest.event_insert import event_columns
from central.ledger.schema import chain_breaks, events
from portgate.timeutil import as_utc
from wire.events import Event

# the stored columns derived from ``raw`` (all but ``id``, ``raw`` and ``received_at``)
DERIVED = ("event_id", "port", "gate_id", "boot_id", "seq", "occurred_at", "clock_trusted", "mono_ns", "type",
           "registration", "decision", "payload", "mac")
_PARSED = ("occurred_at", "payload")  # SQLite parses these on read: done per row here, a junk value named
_AS_STORED = ("clock_trusted",)  # read unprocessed: SQLite's Boolean reads any truthy value (text 'yes') as True
_SHOWN = 120  # characters of a value shown in a detail


class Unreadable:
    """A stored value the column's type cannot read (SQLite holds any type in any column)."""

    def __init__(self, value: object, why: str) -> None:
        self.text = f"{value!r} (unreadable: {why})"

    def __repr__(self) -> str:
        return self.text


def stored_select() -> list:
    """The select expressions of the ``DERIVED`` columns (``_PARSED`` ones unprocessed, for ``StoredReader``)."""
    return [type_coerce(events.c[n], NullType()).label(n) if n in _PARSED + _AS_STORED else events.c[n]
            for n in DERIVED]


class StoredReader:
    """``reader(row) -> {column: value as the office reads it}`` for rows of ``stored_select``, on
    ``dialect``; a value its column type cannot read becomes an ``Unreadable`` (never raises)."""

    def __init__(self, dialect) -> None:
        self.parse = {n: events.c[n].type.dialect_impl(dialect).result_processor(dialect, None) for n in _PARSED}

    def __call__(self, row) -> dict:
        out = {n: row._mapping[n] for n in DERIVED}
        for name, parse in self.parse.items():
            if parse is not None and out[name] is not None:
                try:
                    out[name] = parse(out[name])
                except (ValueError, TypeError, OverflowError) as exc:
                    out[name] = Unreadable(out[name], str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return out


def _same(a: object, b: object) -> bool:
    """Equal values of equal types, recursively (a JSON ``true`` is not ``1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _show(value: object) -> str:
    if isinstance(value, dt.datetime):
        text = as_utc(value).isoformat()
    elif isinstance(value, dict | list):
        text = msgspec.json.encode(value).decode()
    else:
        text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def column_problem(ev: Event, raw: bytes, stored: Mapping[str, object]) -> str | None:
    """What differs between the ``stored`` columns (``StoredReader``) and those the ingest derives
    from ``ev`` (decoded from ``raw``): ``"registration stored 'V001', signed 'V017'; ..."`` (``in
    raw`` for an unsigned event), or None when every ``DERIVED`` column matches."""
    derived = event_columns(ev, raw)
    source = "signed" if ev.sig else "in raw"
    wrong = []
    for name in DERIVED:
        got, want = stored[name], derived[name]
        if name == "occurred_at":
            ok = isinstance(got, dt.datetime) and as_utc(got) == want
        elif name == "payload":  # the JSON text the ingest stores, as read back (the same text, re-encoded)
            ok = _encoded(got) == want.encode() or _same(got, want := msgspec.json.decode(want))
        elif name in _AS_STORED:  # a bool, or SQLite's integer 0/1; anything else ('yes', 2) is not the signed value
            ok = _same(got, want) or (type(got) is int and got == int(want))
        else:
            ok = _same(got, want)
        if not ok:
            wrong.append(f"{name} stored {_show(got)}, {source} {_show(want)}")
    return "; ".join(wrong) or None


def _encoded(value: object) -> bytes | None:
    try:
        return msgspec.json.encode(value)
    except (TypeError, ValueError):
        return None


def copy_problem(ev: Event, ledger_id: int, first: tuple[int, frozenset[str]] | None) -> str | None:
    """Why the row ``ledger_id`` holding ``ev`` is a second row of its gate's seq that the ingest
    did not record (``first``: the lowest ledger id stored at that gate and seq and the events
    its ``FORKED`` breaks name, when more than one row holds it; ``seq_copies``), or None."""
    if first is None or first[0] >= ledger_id or ev.event_id in first[1]:
        return None
    return (f"seq {ev.seq} of gate {ev.gate_id} is stored again (ledger id {first[0]} holds it first) and no "
            f"FORKED break of the ingest names event {ev.event_id}: a copied or inserted row")


def raw_problem(raw: object) -> str | None:
    """Why a stored ``raw`` is not the event's bytes (its type), or None when it is bytes."""
    if isinstance(raw, bytes | bytearray | memoryview):
        return None
    return f"the stored raw is {type(raw).__name__} {_show(raw)}, not bytes: the wire bytes are not kept"


def seq_copies(conn, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, frozenset[str]]]:
    """For the ``(gate_id, seq)`` ``keys`` held by more than one ledger row: the lowest ledger id
    holding it and the event ids its ``FORKED`` breaks name. One statement per gate (its seq span)."""
    span: dict[str, list[int]] = {}
    for gate, seq in keys:
        lo_hi = span.setdefault(gate, [seq, seq])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], seq), max(lo_hi[1], seq)
    out = {}
    for gate, (lo, hi) in span.items():
        held = conn.execute(select(events.c.seq, func.min(events.c.id)).where(
            events.c.gate_id == gate, events.c.seq.between(lo, hi)).group_by(events.c.seq)
            .having(func.count() > 1)).all()
        if not held:
            continue
        forks: dict[int, set[str]] = {}
        for seq, event_id in conn.execute(select(chain_breaks.c.seq_from, chain_breaks.c.event_id).where(
                chain_breaks.c.gate_id == gate, chain_breaks.c.kind == "FORKED",
                chain_breaks.c.seq_from.between(lo, hi))):
            forks.setdefault(int(seq), set()).add(event_id)
        out.update({(gate, int(seq)): (int(first), frozenset(forks.get(int(seq), ()))) for seq, first in held})
    return out


def link_value_problem(name: str, got: object, want: str) -> str | None:
    """``None`` when a link column (``hash``/``prev``, 32 bytes) holds the event's value ``want``
    (hex); else what it holds, said for a finding: its hex, or a value of another type (SQLite keeps
    any: text, a number) named as such (``hash stored as text '9f…', not bytes``), never decoded."""
    if isinstance(got, bytes | bytearray | memoryview):
        held = bytes(got).hex() or "empty (0 bytes)"
        return None if held == want else f"{name} {held} (the event's is {want})"
    kind = "text" if isinstance(got, str) else type(got).__name__
    return f"{name} stored as {kind} {str(got)[:80]!r}, not bytes (the event's is {want})"


class Why(str):
    """A reason in English (the report's value) that carries its catalog message id and fields, so a
    command prints it in its own language (``clitext.tr(why.msgid, **why.fields)``)."""

    def __new__(cls, english: str, msgid: str, **fields: object) -> Why:
        out = super().__new__(cls, english)
        out.msgid, out.fields = msgid, fields
        return out
