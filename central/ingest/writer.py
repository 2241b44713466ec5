"""The ledger writer of one ingest worker: checks a batch of uplink messages, commits it to the
ledger in one transaction, then sends what follows from that commit (presence relay, replay
requests for sequence gaps) on its own MQTT client.

The worker (central/ingest/worker.py) owns the MQTT session, hands each batch over as
``(batch_id, [(topic, payload bytes), ...])`` and acknowledges the batch's messages only when the
writer reports the commit with an ``Outcome``. The writer never acknowledges anything, so a crash
anywhere before the report means redelivery, and the ``event_id`` dedupe makes a second copy a no-op.

Where it runs (``[ingest] writer``, central/ingest/link.py): ``"process"`` (the default) a child
process per worker, so that paho's network thread, which reads one packet per ``select()`` with
several system calls, never queues for the GIL behind decoding, MAC checks and database writes (in
one process the two took turns and the ingest ran at a third of a bare subscriber's rate);
``"thread"`` a thread of the worker process (an in-memory SQLite ledger, or when a second process
per worker is unwanted).

The decisions are pure and tested in memory: each message's verdict is ``central.ingest.check``
(through ``event_store.check``, which looks the gate's keys up), the replay rounds are
``central.ingest.repair`` (``GapTracker``, ``TailTracker``); this module does the I/O around them
(the ledger's transaction, the MQTT publishes, the clock).

- Batches: one transaction per batch. A database error keeps the batch and retries it after a
  back-off (0.5 s doubling to 30 s; to 5 s while the ledger fails over: connection lost, a
  standby refusing writes, ``central.db.unreachable``) until it commits or the worker goes away;
  nothing is dropped. With a multi-host URL the retry reaches the new primary (docs/operations.md).
- Rejects (malformed, bad MAC, unknown gate, topic/gate mismatch) become ``dead_letters`` rows in
  the same transaction (they will never become valid; the worker acknowledges them with the batch).
  A message over ``ledger.MAX_MESSAGE_BYTES`` is refused before decoding; a dead letter keeps the
  first ``ledger.DEAD_RAW_KEPT`` bytes and the SHA-256 of the whole. At most 20 ``ingest.dead_letter``
  warnings a minute are written (``LogBudget``); the next one says how many were ``suppressed``.
- After commit: a ``PresenceDelta`` per new admit/exit. Gap repair in rounds: once a gate has had a
  missing range for ``gap_grace_s``, one round sends a ``ReplayCommand`` for EVERY missing range of
  that gate (up to ``ledger.MAX_GAP_RANGES`` ranges / ``MAX_GAP_EVENTS`` sequences). The next round
  for the gate comes when the previous round's ranges are all filled (more holes beyond the bound)
  or, for ranges still open, after ``replay_every_s``. Open gaps are also re-checked periodically
  (``scan``), so a gate that went quiet still gets its replay.
- Tails: worker 0 also reads the gates' retained ``GateStatus`` (``sent_seq``: every event up to
  it acknowledged by the broker). A gate whose ledger progress stays below its ``sent_seq`` for
  ``tail_grace_s`` (no new event of it in the ledger meanwhile) is asked to replay the rest
  (``ReplayCommand(seen + 1, sent_seq)``, at most ``MAX_GAP_EVENTS``, again every
  ``replay_every_s``): events the broker acknowledged but never delivered (lost in a broker crash
  before its autosave, or routed to another subscriber while the office's was missing after a
  restart) leave no hole for the gap repair to see when no later event follows.
- A gate's journal ``STORE_QUARANTINED`` alert records its lost range in ``gate_losses`` in the same
  transaction (``ledger.record_losses``), so that range is never chased as a gap.
- Each new confiscation also opens its case in the registry (``record_confiscation``, same
  transaction), whatever the downlink source: an inspector's confiscation always reaches ``cases``.
  ``Outcome.confiscations`` tells the worker to publish the blocklist (or wake the registry's
  downlink publisher).
- Each gate's retained status (worker 0) is kept in ``gate_status`` in the batch's transaction
  (``central.ingest.status``), for the office's live view.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import os
import queue
import signal
import threading
import time
from collections.abc import Callable

import msgspec
import structlog
from sqlalchemy import func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, SQLAlchemyError, StatementError
from sqlalchemy.orm import Session

from central.config import CentralConfig
from central.broadcast import blocklist, presence
from central.broadcast.publisher import Publisher, office_signer
from central.db import make_engine, read_only, unreachable
from central.ingest import event_store as ledger
from central.ingest import status as gate_status
from central.ingest import chain as chain_check
from central.ingest import receipts
from central.ingest.check import UNKNOWN, check_status
from central.ingest.keys import KeyRing
from central.ingest.verify import Verifier
from central.ingest.repair import TAIL_MAX_WAIT_S, GapTracker, TailAsk, TailCheck, TailRefused, TailTracker
from central.ingest.logbudget import DeadLetterBudget, LogBudget
from central.ledger.schema import dead_letters, gate_progress
from central.registry.confiscation import record_confiscation
from central.registry.schema import downlink_changes
from portgate.errors import BadInput, ConfigError
from portgate.gctune import tune_for_service
from portgate.logs import configure_logging
from wire import connection, topics
from wire import downlink as dl
from wire.events import ConfiscationPayload

log = structlog.get_logger("central.ingest")
FAILOVER_RETRY_MAX_S = 5.0  # retry interval cap while the ledger fails over (central.db.unreachable)


class Abandoned(Exception):
    """The batch was not committed because the writer is going away (worker stopped or gone); it
    was not acknowledged either, so the broker redelivers it."""


@dataclasses.dataclass(slots=True)
class Outcome:
    """What the writer reports to its worker.

    ``batch_id``: the committed batch (its messages may now be acknowledged), or None for a report
    of a periodic gap scan. ``stats``: counts since the previous report (``inserted``,
    ``duplicates``, ``dead_letters``, ``presence_relayed``, ``replay_requests``, ``replay_rounds``,
    ``losses_recorded``, ``cases_opened``, ``commit_retries``). ``confiscations``: a new confiscation was committed.
    ``open_gaps``: gates that currently have a missing range.
    """

    batch_id: int | None
    stats: dict[str, int]
    confiscations: bool = False
    open_gaps: int = 0


class LedgerWriter:
    """Checks and commits batches; ``start()`` connects its publish-only MQTT client
    (``<client_id>-<index>-writer``), ``close()`` disconnects it.

    ``abandon()`` is asked between retries of a failed commit: True gives up the batch
    (``Abandoned``, not acknowledged, redelivered later). ``notify(outcome)`` receives the reports
    made while a commit is being retried (``batch_id`` None), so a stuck database shows at once.
    """

    def __init__(
        self, config: CentralConfig, engine: Engine, keys: KeyRing, *, index: int = 0,
        abandon: Callable[[], bool] = lambda: False, notify: Callable[[Outcome], None] = lambda _out: None,
    ) -> None:
        self.config = config
        self.settings = config.ingest
        self.engine = engine
        self.keys = keys
        self.index = index
        self.port = config.port
        self.registry = config.publish.source == "registry"
        self.abandon = abandon
        self.notify = notify
        client_id = config.mqtt.client_id or f"ledger-{config.port}"
        self.client = connection.make_client(config.mqtt, f"{client_id}-{index}-writer")
        self.client.max_queued_messages_set(0)
        self.broadcast = Publisher(self.client, self.port, office_signer(config.keys_dir))
        self._stats: collections.Counter = collections.Counter()
        self._gaps = GapTracker(self.settings.gap_grace_s, self.settings.replay_every_s)
        self._next_gap_scan = 0.0
        self._cards_seen: int | None = None  # newest registry card change seen (csv source: blocklist)
        self._tails = TailTracker(self.settings.tail_grace_s, self.settings.replay_every_s,
                                  max_events=ledger.MAX_GAP_EVENTS)
        self._log_budget = LogBudget()  # dead-letter warnings: 20 a minute, the rest counted
        self._dead_budget = DeadLetterBudget(self.settings.dead_letters_per_gate_min)  # stored, per gate a minute
        self._office_key = None  # Ed25519 key signing chain receipts, loaded at the first commit
        self._receipts_out: list[dict] = []

    def start(self) -> LedgerWriter:
        connection.start(self.client, self.config.mqtt)
        self._registry_cards_changed()  # the registry's newest card change now: later ones republish
        return self

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _report(self, batch_id: int | None, confiscations: bool = False) -> Outcome:
        stats, self._stats = dict(self._stats), collections.Counter()
        return Outcome(batch_id, stats, confiscations, self._gaps.open)

    # -- one batch ---------------------------------------------------------------------------------
    def process(self, batch_id: int, items: list[tuple[str, bytes]], verified=None, decoded=None) -> Outcome:
        """Check and commit one batch of ``(topic, payload)``; then relay presence and ask for gaps.
        ``verified``, ``decoded``: the batch's signature verdicts and decoded events computed ahead
        (``Verifier.verdicts``, one per item or None); an item with neither has its signature
        verified here (``event_store.batch_verdicts``, the same chain-covered verification).

        Returns the ``Outcome`` once committed. Raises ``Abandoned`` if the commit kept failing
        until ``abandon()`` said so (the caller must not acknowledge the batch).
        """
        accepted, rejected, statuses = self._sort(items, verified, decoded)
        rejected = self._limit_dead_letters(rejected)
        n_rejected = len(rejected)
        now, (inserted, opened, losses, gaps, seen, rejected) = self._commit_retrying(
            batch_id, accepted, rejected, statuses)
        n_new = len(inserted)
        self._stats["inserted"] += n_new
        self._stats["duplicates"] += len(accepted) - n_new - (len(rejected) - n_rejected)
        self._stats["dead_letters"] += len(rejected)
        self._stats["cases_opened"] += opened
        self._log_losses_and_dead_letters(losses, rejected)
        self._publish_receipts()
        if self.settings.relay_presence:
            self._relay(inserted, now)
        self._handle_gaps(gaps)
        self._forget_gaps(set(seen) - {g.gate_id for g in gaps})
        return self._report(batch_id, blocklist.has_confiscation(inserted))

    def _sort(self, items: list[tuple[str, bytes]], verified, decoded) -> tuple[list, list, list]:
        """``(accepted, rejected, statuses)`` of the batch: each event checked (``ledger.check``,
        its signature verified here when not ahead), each status message claimed."""
        accepted, rejected, statuses = [], [], []
        memo: dict = {}  # gate -> its keys, looked up once per batch
        verified = list(verified) if verified else [None] * len(items)
        decoded = list(decoded) if decoded else [None] * len(items)
        missing = [i for i, v in enumerate(verified) if v is None and decoded[i] is None]
        if missing:  # not prepared ahead (no helpers, no signing gate then): the same verification, here
            found, events = ledger.batch_verdicts([items[i] for i in missing], self.port, self.keys, memo)
            for i, v, e in zip(missing, found, events, strict=True):
                verified[i], decoded[i] = v, e
        for i, (topic, payload) in enumerate(items):
            if topic.endswith("/status"):
                status = self._claim(topic, payload, rejected)
                if status is not None:
                    statuses.append(status)
                continue
            verdict = ledger.check(topic, payload, self.port, self.keys, verified[i], memo,
                                   decoded[i])
            (accepted if isinstance(verdict, ledger.Accepted) else rejected).append(verdict)
        return accepted, rejected, statuses

    def _commit_retrying(self, batch_id: int, accepted, rejected, statuses) -> tuple[dt.datetime, tuple]:
        """``(now, _commit's result)``: the batch committed, retried after a database error (0.5 s
        doubling, at most ``FAILOVER_RETRY_MAX_S`` while the ledger fails over, else 30 s). Raises
        ``Abandoned`` when ``abandon()`` says so between tries."""
        delay = 0.5
        while True:
            now = dt.datetime.now(dt.UTC)
            try:
                return now, self._commit(accepted, rejected, now, statuses)
            except SQLAlchemyError as exc:
                log.error("ingest.commit_failed", worker=self.index, retry_in=delay, error=db_error(exc),
                          events=len(accepted))
                self._stats["commit_retries"] += 1
                self.notify(self._report(None))  # visible now (metrics, tests), not only after the commit
                if self.abandon():
                    raise Abandoned(batch_id) from None
                if read_only(exc):
                    self.engine.dispose()  # pooled connections to a demoted primary: reconnect (multi-host URL)
                time.sleep(delay)
                # a failover (connection lost, a standby): the new primary takes writes within
                # seconds, so retry at least every FAILOVER_RETRY_MAX_S; other errors back off to 30 s
                delay = min(delay * 2, FAILOVER_RETRY_MAX_S if unreachable(exc) else 30.0)
                if self.abandon():
                    raise Abandoned(batch_id) from None

    def _log_losses_and_dead_letters(self, losses, rejected) -> None:
        for loss in losses:
            self._stats["losses_recorded"] += 1
            log.warning(
                "ingest.gate_loss_recorded", gate_id=loss.gate_id, seq_from=loss.seq_from, seq_to=loss.seq_to,
                event_id=loss.event_id, reason="journal quarantined on the gate; not replayable",
            )
        for d in rejected:
            swallowed = self._log_budget.take()
            if swallowed is not None:
                log.warning("ingest.dead_letter", topic=d.topic[:255], reason=d.reason[:300], gate_id=d.gate_id,
                            suppressed=swallowed)

    def _limit_dead_letters(self, rejected: list) -> list:
        """The dead letters to store: per sending gate (its topic's) at most
        ``[ingest] dead_letters_per_gate_min`` a minute, then one summary row, the rest counted
        (``dead_letters_dropped``) and logged within the log budget (``DeadLetterBudget``)."""
        kept = []
        for d in rejected:
            try:
                sender = topics.parse_gate_topic(d.topic)[1]
            except BadInput:
                sender = d.topic[:255]
            verdict = self._dead_budget.keep(sender)
            if verdict == "store":
                kept.append(d)
            elif verdict == "summary":
                kept.append(ledger.DeadLetter(
                    topic=d.topic, raw=b"", gate_id=d.gate_id,
                    reason=(f"rate limited: more than {self._dead_budget.per_window} dead letters a minute from "
                            f"{sender}; the rest of this minute are counted (dead_letters_dropped), not stored")))
                log.warning("ingest.dead_letters_limited", sender=sender, per_minute=self._dead_budget.per_window)
            else:
                self._stats["dead_letters_dropped"] += 1
        return kept

    def _commit(self, accepted, rejected, now, statuses=()):
        """The batch in one transaction. If the database refuses it for what is in it (``unstorable``:
        a value it cannot hold; retrying would refuse it again and stall the ingest), the batch goes
        in again one event per transaction and the refused events become dead letters
        (``unstorable: <driver message>``) with their raw bytes. Other database errors propagate
        (the caller retries the batch)."""
        try:
            with self.engine.begin() as conn:
                inserted = ledger.write_batch(conn, accepted, rejected, now)
                opened = self._record_confiscations(conn, inserted, now)
                losses = ledger.record_losses(conn, inserted, now)
                gate_status.store(conn, list(statuses), now)
                chain_check.record(conn, inserted, rejected, now, accepted)
                seen = _sequences(accepted)
                gaps = ledger.update_progress(conn, seen, now, seen=seen)
                self._issue_receipts(conn, seen, now)
            return inserted, opened, losses, gaps, seen, rejected
        except Exception as exc:
            if not unstorable(exc):
                raise
            log.error("ingest.batch_unstorable", worker=self.index, error=db_error(exc), events=len(accepted),
                      action="one event per transaction; the refused ones become dead letters")
        inserted, opened, losses, refused = [], 0, [], []
        for a in accepted:
            try:
                with self.engine.begin() as conn:
                    mine = ledger.write_batch(conn, [a], [], now)
                    opened += self._record_confiscations(conn, mine, now)
                    losses += ledger.record_losses(conn, mine, now)
                    chain_check.record(conn, mine, [], now, [a])
                inserted += mine
            except Exception as exc:
                if not unstorable(exc):
                    raise
                refused.append(ledger.DeadLetter(a.topic, f"unstorable: {db_error(exc)}", a.raw, a.event.gate_id,
                                                 a.event.event_id))
        gone = {d.event_id for d in refused}
        kept = [a for a in accepted if a.event.event_id not in gone]
        with self.engine.begin() as conn:
            ledger.write_batch(conn, [], rejected + refused, now)
            gate_status.store(conn, list(statuses), now)
            chain_check.record(conn, [], rejected, now)
            seen = _sequences(kept)
            gaps = ledger.update_progress(conn, seen, now, seen=seen)
        inserted.sort(key=lambda r: r[0])
        return inserted, opened, losses, gaps, seen, rejected + refused

    def _issue_receipts(self, conn, seen, now) -> None:
        """Signed receipts of the gates whose chain advanced (central.ingest.receipts), kept to
        be published once the batch is committed. Without a usable office key: logged, none."""
        if self._office_key is None:
            try:
                self._office_key = receipts.office_key(self.keys.keys_dir)
            except (ConfigError, OSError) as exc:
                self._office_key = False
                log.error("ingest.office_key_unusable", error=str(exc), action="no chain receipts")
        if self._office_key:
            self._receipts_out = receipts.issue(conn, self._office_key, self.port, seen, now)

    def _publish_receipts(self) -> None:
        for r in self._receipts_out:
            body = msgspec.json.encode({"body": r["body"].decode("utf-8"), "sig": r["sig"]})
            self.client.publish(topics.gate_receipt(self.port, r["gate_id"]), body, qos=1, retain=True)
            self._stats["receipts_issued"] += 1
        self._receipts_out = []

    def _relay(self, inserted, now) -> None:
        for row_id, event in inserted:
            delta = presence.delta_for(row_id, event, now)
            if delta is not None:
                self.broadcast.send("presence", "delta", delta)
                self._stats["presence_relayed"] += 1

    def _record_confiscations(self, conn, inserted, now: dt.datetime) -> int:
        """Open the case (and block the card in the registry, when it holds the card) for each new
        confiscation (``record_confiscation``, idempotent by event id), in the ledger's transaction.
        A confiscation the registry refuses (``BadInput``, e.g. an unknown registration) is logged
        and stays in the ledger (its card is still blocked through the ledger part of the blocklist)."""
        done = 0
        found = [event for _row, event in inserted if isinstance(event.payload, ConfiscationPayload)]
        if not found:
            return done
        with Session(bind=conn, join_transaction_mode="create_savepoint") as session:
            for event in found:
                try:
                    with session.begin_nested():
                        record_confiscation(session, event)
                    done += 1
                except BadInput as exc:
                    log.error("ingest.confiscation_not_recorded", event_id=event.event_id, error=str(exc))
            session.commit()  # releases the session's savepoint; the ledger transaction commits it
        return done

    # -- gaps --------------------------------------------------------------------------------------
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


def _sequences(accepted) -> dict[str, list[int]]:
    """gate -> the sequences of these accepted events (for ``ledger.update_progress``)."""
    seen: dict[str, list[int]] = {}
    for a in accepted:
        seen.setdefault(a.event.gate_id, []).append(a.event.seq)
    return seen


def unstorable(exc: BaseException) -> bool:
    """True for an error caused by the data itself, which a retry would meet again: the database's
    ``DataError``/``IntegrityError`` (e.g. PostgreSQL refusing a NUL character in text), or the
    driver refusing a value (``OverflowError``/``ValueError``/``TypeError``, raised directly or
    wrapped in a ``StatementError``). Connection, lock and disk errors are not: they pass."""
    if isinstance(exc, (DataError, IntegrityError)):
        return True
    if isinstance(exc, StatementError) and not isinstance(exc, DBAPIError):
        exc = exc.orig
    return isinstance(exc, (OverflowError, ValueError, TypeError, UnicodeError))


def db_error(exc: BaseException) -> str:
    """One short line for a database error: the driver's message without SQLAlchemy's statement and
    parameters (a batch's statement carries every payload, hundreds of kilobytes)."""
    orig = getattr(exc, "orig", None) if isinstance(exc, SQLAlchemyError) else None
    text = f"{type(orig).__name__}: {orig}" if orig is not None else f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0][:300] if text else type(exc).__name__


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _read_ahead(conn, verifier: Verifier | None = None) -> queue.SimpleQueue:
    """Read the worker's batches as soon as they come, on a thread, into a queue: the worker hands
    them over from paho's network thread, which must not wait for a commit to finish before its
    send completes. The queue holds at most what the broker's receive maximum lets the worker hold
    unacknowledged. Each batch goes in as ``(batch_id, items, pending)``: already prepared and its
    signatures handed to ``verifier`` (None: none). End of file or a broken pipe is put in the queue as the
    exception."""
    inbox: queue.SimpleQueue = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                message = conn.recv()
                if message:
                    batch_id, items = message
                    message = (batch_id, items, verifier.submit(items) if verifier is not None else None)
                inbox.put(message)
                if message is None:
                    return
        except (EOFError, OSError) as exc:
            inbox.put(exc)

    threading.Thread(target=read, name="ingest-writer-reader", daemon=True).start()
    return inbox


MAX_COALESCED = 5000  # messages of batches already waiting for the writer committed together
_NOTHING = object()


def coalesce(first: tuple, inbox: queue.SimpleQueue, limit: int = MAX_COALESCED) -> tuple[list, object]:
    """``first`` (``(batch_id, items, pending)``) and the batches already waiting behind it in
    ``inbox``, while the total stays within ``limit`` messages: a writer that fell behind commits
    them in one transaction (the statements, progress, receipts and commit of a batch are paid
    once), in arrival order, and answers each batch. Returns ``(group, held)``: ``held`` is the
    entry taken that does not join (the stop ``None``, an exception, a batch that does not fit),
    or ``_NOTHING``."""
    group, n = [first], len(first[1])
    while True:
        try:
            nxt = inbox.get_nowait()
        except queue.Empty:
            return group, _NOTHING
        if not nxt or isinstance(nxt, BaseException) or n + len(nxt[1]) > limit:
            return group, nxt
        group.append(nxt)
        n += len(nxt[1])


def _or_exit(work, *args):
    """Run the writer's ``work``; an unexpected error is logged with its traceback and ends the
    process with status 1 (the link logs the death and starts a new writer). Without this, an
    ``OSError`` from the work (a file it reads) would pass for the worker's pipe closing: a silent
    exit with status 0."""
    try:
        return work(*args)
    except Abandoned:
        raise
    except Exception:
        log.exception("ingest.writer_failed")
        raise SystemExit(1) from None


def run_process(conn, config: CentralConfig, index: int, worker_pid: int) -> None:
    """Entry point of the writer child process (``multiprocessing``, central/ingest/link.py).

    Reads ``(batch_id, items)`` from ``conn`` (read ahead on a thread) and answers each with an
    ``Outcome`` once committed (batches already waiting are committed together: ``coalesce``; the
    last one's outcome carries the counts); between batches, runs the periodic gap scan and reports it (``Outcome(batch_id=None)``).
    ``None`` from the worker: finish and exit. The worker gone (end of file on ``conn``, or process
    ``worker_pid`` no longer there while a commit is being retried): exit without acknowledging
    anything. SIGINT and SIGTERM are ignored: the
    worker decides when its writer stops (after the batches already handed over).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    configure_logging(json=config.log_json, level=config.log_level,  # every thread of this process
                      fields={"service": "central", "port": config.port, "worker": index, "role": "writer"})
    engine = make_engine(config.database_url)
    keys = KeyRing(config.keys_dir)
    verifier = Verifier(keys, config.port, config.ingest.verify_processes).start()
    writer = LedgerWriter(config, engine, keys, index=index,
                          abandon=lambda: _gone(worker_pid), notify=conn.send).start()
    tune_for_service(inherited=True)  # forked from the forkserver: its heap is not walked
    inbox = _read_ahead(conn, verifier)
    held = _NOTHING
    try:
        while True:
            if held is not _NOTHING:
                message, held = held, _NOTHING
            else:
                try:
                    message = inbox.get(timeout=writer.scan_every_s)
                except queue.Empty:
                    message = ()
            if message is None:
                break
            if isinstance(message, BaseException):
                raise message
            if message:
                group, held = coalesce(message, inbox)
                items = [item for _id, part, _pending in group for item in part]
                parts = [(verifier.verdicts(pending), len(part)) for _id, part, pending in group]
                verified = decoded = None
                if any(v is not None for v, _n in parts):
                    verified = [x for v, n in parts for x in (v[0] if v is not None else [None] * n)]
                    decoded = [x for v, n in parts for x in (v[1] if v is not None else [None] * n)]
                out = _or_exit(writer.process, group[-1][0], items, verified, decoded)
                for batch_id, _part, _pending in group[:-1]:  # committed in the same transaction
                    conn.send(Outcome(batch_id, {}, False, out.open_gaps))
                conn.send(out)
            report = _or_exit(writer.scan)
            if report is not None:
                conn.send(report)
    except (EOFError, OSError, Abandoned):
        pass  # the worker is gone: nothing more can be acknowledged
    finally:
        writer.close()
        verifier.close()
        engine.dispose()
