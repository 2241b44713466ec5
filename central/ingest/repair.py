"""The office's repair decisions, pure: which replays to ask of which gate, and when.

No SQL, no MQTT, no clock: the writer (central/ingest/writer.py) feeds them what the ledger says
(open gaps, each gate's progress, whether a gate's replayed events were dead-lettered) and the
time (``now``: monotonic seconds; ``wall``: aware UTC for the command's ``at``), and sends the
``ReplayCommand`` of each answer.

``scan_sequences``: a gate's contiguous progress, the sequences present after it and its lost
ranges → the new contiguous progress and the missing runs (bounded per round).

``GapTracker`` (holes with later events after them): once a gate has had an open gap for
``grace_s`` (messages still in flight fill most holes by then), one round asks for EVERY open range
of that gate (``GapRound``). The next round comes when no open gap overlaps the previous round's
ranges (they were all filled: ask for the next ones now) or ``every_s`` after it. The grace is per
hole: a hole filled and a new one opened restarts it.

``TailTracker`` (events the broker acknowledged that never reached the ledger, with no later event
to show the hole): a gate's signed retained status claims ``sent_seq``; once its ledger progress
has stayed below the claim for ``grace_s`` (no new event of it meanwhile), ``TailAsk`` for
``progress + 1 .. sent_seq`` (at most ``max_events``), again after ``every_s`` doubling (at most
``max_wait_s``) while the ledger does not move. Before a repeat round it asks the caller whether
the gate's replayed events were dead-lettered since the last ask (``TailCheck`` → ``answer``): if
so the tail is refused (``TailRefused``) and asked again only after ``max_wait_s``, or at once if
the ledger moves for the gate.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable

MAX_GAP_RANGES = 50  # missing ranges asked of one gate per round (one ReplayCommand each)
MAX_GAP_EVENTS = 10_000  # missing sequences asked of one gate per round, in total
TAIL_MAX_WAIT_S = 3600.0  # longest pause between two tail rounds that did not move the ledger


def scan_sequences(
    contiguous: int,
    seqs,
    losses,
    *,
    window_end: int | None = None,
    max_ranges: int = MAX_GAP_RANGES,
    max_events: int = MAX_GAP_EVENTS,
) -> tuple[int, list[tuple[int, int]]]:
    """Pure: from ``contiguous`` (all of 1..contiguous accounted for), the sorted present sequences
    ``seqs`` (> contiguous) and the lost ranges ``losses`` [(from, to) inclusive], return the new
    contiguous sequence and the missing runs [(from, to) inclusive] (at most ``max_ranges`` runs and
    ``max_events`` sequences; the last run cut to fit). ``window_end``: ``seqs`` is only known up to
    this sequence (a ``LIMIT``-ed read), so lost ranges starting after it are ignored for now.
    """
    covered = [(s, s) for s in seqs]
    covered += [(a, b) for a, b in losses if b > contiguous and (window_end is None or a <= window_end + 1)]
    covered.sort()
    cursor = contiguous  # every sequence <= cursor is present or lost
    first_hole: int | None = None
    holes: list[tuple[int, int]] = []
    budget = max_events
    for a, b in covered:
        if a > cursor + 1:
            if first_hole is None:
                first_hole = cursor
            if len(holes) < max_ranges and budget > 0:
                hi = min(a - 1, cursor + budget)
                holes.append((cursor + 1, hi))
                budget -= hi - cursor
        cursor = max(cursor, b)
    return (first_hole if first_hole is not None else cursor), holes


@dataclasses.dataclass(frozen=True, slots=True)
class GapRound:
    """Ask ``gate_id`` to replay each of ``ranges`` ((from, to) inclusive), one command each."""

    gate_id: str
    ranges: tuple[tuple[int, int], ...]


class GapTracker:
    """Replay rounds for open gaps (see the module docstring). ``open``: gates with an open gap."""

    def __init__(self, grace_s: float, every_s: float) -> None:
        self.grace_s = grace_s
        self.every_s = every_s
        self._held: dict[str, tuple[int, float]] = {}  # gate -> (its first missing seq, since when)
        self._rounds: dict[str, tuple[float, tuple]] = {}  # gate -> (last round, ranges asked)

    @property
    def open(self) -> int:
        return len(self._held)

    def gates(self) -> set[str]:
        """Gates with bookkeeping (an open gap or a round asked)."""
        return set(self._held) | set(self._rounds)

    def rounds(self, gaps: Iterable, now: float) -> list[GapRound]:
        """The rounds due for ``gaps`` (objects with ``gate_id``, ``seq_from``, ``seq_to``: every
        open gap of the gates they name, in seq order per gate) at ``now`` (monotonic seconds)."""
        by_gate: dict[str, list] = {}
        for gap in gaps:
            by_gate.setdefault(gap.gate_id, []).append(gap)
        due: list[GapRound] = []
        for gate_id, ripe in by_gate.items():
            first = ripe[0].seq_from
            held = self._held.get(gate_id)
            if held is None or held[0] != first:
                self._held[gate_id] = held = (first, now)
            if now - held[1] < self.grace_s:
                continue
            last, asked = self._rounds.get(gate_id, (None, ()))
            if last is not None and now - last < self.every_s and _overlap(asked, ripe):
                continue  # the previous round is still being answered (or part of it cannot be)
            ranges = tuple((g.seq_from, g.seq_to) for g in ripe)
            self._rounds[gate_id] = (now, ranges)
            due.append(GapRound(gate_id, ranges))
        return due

    def forget(self, gate_ids: Iterable[str]) -> None:
        """Drop the bookkeeping of gates that have no open gap any more."""
        for gate_id in gate_ids:
            self._held.pop(gate_id, None)
            self._rounds.pop(gate_id, None)


def _overlap(asked, gaps) -> bool:
    """True if any gap intersects any of the ``asked`` (from, to) ranges (both inclusive)."""
    return any(a <= g.seq_to and g.seq_from <= b for a, b in asked for g in gaps)


@dataclasses.dataclass(frozen=True, slots=True)
class TailAsk:
    """Ask ``gate_id`` to replay ``seq_from..seq_to`` (round ``round``; it claims ``sent_seq``)."""

    gate_id: str
    seq_from: int
    seq_to: int
    sent_seq: int
    round: int
    at: dt.datetime


@dataclasses.dataclass(frozen=True, slots=True)
class TailCheck:
    """Question to the caller: was a message of ``gate_id`` dead-lettered at or after ``since``?
    (``TailTracker.answer`` with the answer gives the next step.)"""

    gate_id: str
    since: dt.datetime


@dataclasses.dataclass(frozen=True, slots=True)
class TailRefused:
    """The replayed tail of ``gate_id`` (``seq_from..sent_seq``) was dead-lettered: not asked again
    for ``TAIL_MAX_WAIT_S``, or until the ledger moves for the gate."""

    gate_id: str
    seq_from: int
    sent_seq: int


@dataclasses.dataclass(slots=True)
class _Tail:
    have: int  # the gate's ledger progress when this wait began
    since: float  # monotonic
    asked: float | None = None  # last round (monotonic) ...
    asked_at: dt.datetime | None = None  # ... and its UTC instant
    rounds: int = 0
    refused: bool = False


class TailTracker:
    """Tail replays from the gates' claimed ``sent_seq`` (see the module docstring)."""

    def __init__(self, grace_s: float, every_s: float, *, max_events: int,
                 max_wait_s: float = TAIL_MAX_WAIT_S) -> None:
        self.grace_s = grace_s
        self.every_s = every_s
        self.max_wait_s = max_wait_s
        self.max_events = max_events
        self.claims: dict[str, int] = {}  # gate -> the sent_seq its statuses claim
        self._tails: dict[str, _Tail] = {}

    def claim(self, gate_id: str, sent_seq: int | None, reason: str | None) -> None:
        """A verified status of ``gate_id`` claims ``sent_seq``: the newest status's counts, except
        that a Last Will (``reason == "will"``, set when the gate connected, so older) never lowers
        it; a gate whose journal started again says a lower one."""
        if sent_seq is None:
            return
        held = self.claims.get(gate_id, 0)
        self.claims[gate_id] = max(held, sent_seq) if reason == "will" else sent_seq

    def poll(self, seen: dict[str, int], now: float, wall: dt.datetime) -> list[TailAsk | TailCheck]:
        """The next steps at ``now`` (monotonic) / ``wall`` (UTC), from ``seen`` (gate -> its ledger
        progress: the larger of contiguous and highest seq; absent: 0)."""
        steps: list[TailAsk | TailCheck] = []
        for gate_id, claim in list(self.claims.items()):
            have = seen.get(gate_id, 0)
            if have >= claim:
                del self.claims[gate_id]
                self._tails.pop(gate_id, None)
                continue
            tail = self._tails.get(gate_id)
            if tail is None or tail.have != have:  # new, or the ledger moved: still arriving
                self._tails[gate_id] = _Tail(have, now)
                continue
            if now - tail.since < self.grace_s:
                continue
            if tail.asked is not None:
                if tail.refused:
                    if now - tail.asked < self.max_wait_s:
                        continue
                    tail.refused = False  # once more: the key may have been fixed
                else:
                    wait = min(self.every_s * 2 ** (tail.rounds - 1), self.max_wait_s)
                    if now - tail.asked < wait:
                        continue
                    if tail.asked_at is not None:
                        steps.append(TailCheck(gate_id, tail.asked_at))
                        continue
            steps.append(self._ask(gate_id, tail, now, wall))
        return steps

    def answer(self, check: TailCheck, dead_lettered: bool, now: float, wall: dt.datetime) -> TailAsk | TailRefused | None:
        """The step after ``check``: ``TailRefused`` if the gate's replayed events were
        dead-lettered, else the next ``TailAsk`` (None if the gate is no longer tracked)."""
        tail = self._tails.get(check.gate_id)
        claim = self.claims.get(check.gate_id)
        if tail is None or claim is None:
            return None
        if dead_lettered:
            tail.refused = True
            return TailRefused(check.gate_id, tail.have + 1, claim)
        return self._ask(check.gate_id, tail, now, wall)

    def _ask(self, gate_id: str, tail: _Tail, now: float, wall: dt.datetime) -> TailAsk:
        claim = self.claims[gate_id]
        tail.asked, tail.asked_at = now, wall
        tail.rounds += 1
        return TailAsk(gate_id, tail.have + 1, min(claim, tail.have + self.max_events), claim, tail.rounds, wall)
