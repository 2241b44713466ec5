"""The ingest writer's repair of what is missing (a mixin of ``central.ingest.writer.LedgerWriter``):
the replay rounds for sequence gaps, the gates' claimed tails (``GateStatus.sent_seq``), and the
periodic scan (``scan``) that re-checks both and notices a registry card change (the CSV source's
blocklist). The decisions are ``central.ingest.repair`` (``GapTracker``, ``TailTracker``); this
module sends the ``ReplayCommand``s and reads the ledger for them.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING

import structlog
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from central.ingest import event_store as ledger
from central.ingest.check import UNKNOWN, check_status
from central.ingest.db_errors import db_error
from central.ingest.repair import TAIL_MAX_WAIT_S, TailAsk, TailCheck, TailRefused
from central.ledger.schema import dead_letters, gate_progress
from central.registry.schema import downlink_changes
from portgate.errors import BadInput
from wire import downlink as dl
from wire import topics

if TYPE_CHECKING:
    from central.ingest.writer import Outcome

log = structlog.get_logger("central.ingest")


class GapRepair:
    """The gaps, tails and scan of ``LedgerWriter`` (its ``config``, ``settings``, ``engine``,
    ``keys``, ``port``, ``broadcast``, ``_stats``, ``_gaps``, ``_tails``, ``_next_gap_scan``,
    ``_cards_seen``, ``_report``)."""

    def _handle_gaps(self, gaps: list[ledger.Gap]) -> None:
        """Send the replay rounds due for ``gaps`` (all open gaps of the gates they name; the
        decisions: ``central.ingest.repair.GapTracker``), one ``ReplayCommand`` per range."""
        rounds = self._gaps.rounds(gaps, time.monotonic())
        if not rounds:
            return
        at = dt.datetime.now(dt.UTC)
        for r in rounds:
            for seq_from, seq_to in r.ranges:
                cmd = dl.ReplayCommand(seq_from=seq_from, seq_to=seq_to, at=at)
                self.broadcast.command(r.gate_id, cmd)
            self._stats["replay_requests"] += len(r.ranges)
            self._stats["replay_rounds"] += 1
            log.warning(
                "ingest.gap_replay", gate_id=r.gate_id, ranges=len(r.ranges),
                events=sum(b - a + 1 for a, b in r.ranges), first=r.ranges[0], last=r.ranges[-1],
            )

    # -- tails ---------------------------------------------------------------------------------------
    def _claim(self, topic: str, payload: bytes, rejected: list) -> dl.GateStatus | None:
        """Note the ``sent_seq`` a gate's retained status claims (``TailTracker.claim``) once
        ``check_status`` accepts it (signed with the gate's key); else a dead letter ``bad status: …``."""
        try:
            gate_id = topics.parse_gate_topic(topic)[1]
        except BadInput:
            gate_id = None
        known = ledger.gate_keys(self.keys, gate_id, public=False) if gate_id else UNKNOWN
        status = check_status(topic, payload, self.port, known)
        if isinstance(status, ledger.DeadLetter):
            rejected.append(status)
            return None
        self._tails.claim(status.gate_id, status.sent_seq, status.reason)
        return status

    def _check_tails(self) -> None:
        """Ask for the tail of each gate whose ledger stays below its claimed ``sent_seq`` (the
        decisions: ``central.ingest.repair.TailTracker``; the module docstring). A round whose
        replayed events were dead-lettered (the gate's key changed, unreadable) is logged as
        ``ingest.tail_refused`` and the next waits ``TAIL_MAX_WAIT_S``. Raises ``SQLAlchemyError``
        (the caller logs; the next scan tries again)."""
        now, wall = time.monotonic(), dt.datetime.now(dt.UTC)
        with self.engine.connect() as conn:
            seen = {g: max(c, h) for g, c, h in conn.execute(
                select(gate_progress.c.gate_id, gate_progress.c.contiguous_seq, gate_progress.c.highest_seq)
                .where(gate_progress.c.gate_id.in_(list(self._tails.claims))))}
            for step in self._tails.poll(seen, now, wall):
                if isinstance(step, TailCheck):
                    step = self._tails.answer(step, _dead_letters_since(conn, step.gate_id, step.since), now, wall)
                if isinstance(step, TailRefused):
                    self._stats["tail_refused"] += 1
                    log.error("ingest.tail_refused", gate_id=step.gate_id, seq_from=step.seq_from,
                              sent_seq=step.sent_seq,
                              reason="the replayed events were dead-lettered (see dead_letters: the gate's key?)",
                              action=f"asked again in {TAIL_MAX_WAIT_S:g} s, or at once when the ledger moves")
                elif isinstance(step, TailAsk):
                    self._ask_tail(step)

    def _ask_tail(self, ask: TailAsk) -> None:
        cmd = dl.ReplayCommand(seq_from=ask.seq_from, seq_to=ask.seq_to, at=ask.at)
        self.broadcast.command(ask.gate_id, cmd)
        self._stats["replay_requests"] += 1
        self._stats["tail_replays"] += 1
        log.warning("ingest.tail_replay", gate_id=ask.gate_id, seq_from=ask.seq_from, seq_to=ask.seq_to,
                    sent_seq=ask.sent_seq, round=ask.round,
                    reason="the gate's broker-acknowledged events never reached the ledger")

    def _forget_gaps(self, gate_ids) -> None:
        """Drop the gap bookkeeping of gates that have no open gap any more."""
        self._gaps.forget(gate_ids)

    @property
    def scan_every_s(self) -> float:
        return max(0.2, self.settings.gap_grace_s / 2)

    def scan(self) -> Outcome | None:
        """Re-check open gaps if a scan is due (every ``scan_every_s``), also when the gate has gone
        quiet; return a report if something changed (replays sent, gaps opened or closed)."""
        now = time.monotonic()
        if now < self._next_gap_scan:
            return None
        self._next_gap_scan = now + self.scan_every_s
        open_before = self._gaps.open
        try:
            with self.engine.begin() as conn:
                gates = ledger.open_gaps(conn)
                gaps = ledger.update_progress(conn, gates, dt.datetime.now(dt.UTC)) if gates else []
        except SQLAlchemyError as exc:
            log.error("ingest.gap_scan_failed", error=db_error(exc))
            return None
        if gates:
            self._handle_gaps(gaps)
        gone = self._gaps.gates() - set(gates)
        if gone:
            self._forget_gaps(gone)
        if self._tails.claims:
            try:
                self._check_tails()
            except SQLAlchemyError as exc:
                log.error("ingest.tail_scan_failed", error=db_error(exc))
        cards_changed = self._registry_cards_changed()
        if self._gaps.open == open_before and not self._stats and not cards_changed:
            return None
        return self._report(None, confiscations=cards_changed)

    def _registry_cards_changed(self) -> bool:
        """With ``[publish] source = "csv"``: True when a registry card changed since the last scan
        (a card reported lost on the office's or the worker's page), so the worker republishes the
        blocklist (``central.broadcast.blocklist.snapshot`` holds the registry's cards that are not
        active). The registry source publishes its own deltas: always False there."""
        if self.config.publish.source == "registry":
            return False
        try:
            with self.engine.connect() as conn:
                newest = conn.execute(select(func.max(downlink_changes.c.id))
                                      .where(downlink_changes.c.kind == "cards")).scalar() or 0
        except SQLAlchemyError as exc:
            log.error("ingest.card_scan_failed", error=db_error(exc))
            return False
        seen, self._cards_seen = self._cards_seen, newest
        return seen is not None and newest > seen


def _dead_letters_since(conn, gate_id: str, since: dt.datetime | None) -> bool:
    """True if a message of ``gate_id`` was dead-lettered at or after ``since`` (aware UTC)."""
    if since is None:
        return False
    return conn.execute(select(dead_letters.c.id).where(
        dead_letters.c.gate_id == gate_id, dead_letters.c.received_at >= since).limit(1)).first() is not None

