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

Its parts: this module the batch (``LedgerWriter.process``: sorting, the commit and its retries,
``Outcome``); ``writer_dead_letters.py`` the dead letters stored and logged; ``writer_sends.py``
the confiscations' cases, the chain receipts and the presence relay; ``writer_repair.py`` the gap
and tail replays and the periodic ``scan``; ``writer_process.py`` the child process (``run_process``,
``coalesce``); ``db_errors.py`` how a database error is read (``unstorable``, ``db_error``, both
importable from here).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import time
from collections.abc import Callable

import structlog
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.config import CentralConfig
from central.broadcast import blocklist
from central.broadcast.publisher import Publisher, office_signer
from central.db import read_only, unreachable
from central.ingest import event_store as ledger
from central.ingest import status as gate_status
from central.ingest import chain as chain_check
from central.ingest.db_errors import db_error, unstorable  # re-exported: the worker and answers use them
from central.ingest.keys import KeyRing
from central.ingest.repair import GapTracker, TailTracker
from central.ingest.logbudget import DeadLetterBudget, LogBudget
from central.ingest.writer_dead_letters import DeadLetters
from central.ingest.writer_repair import GapRepair
from central.ingest.writer_sends import CommitSends
from wire import connection


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


class LedgerWriter(DeadLetters, CommitSends, GapRepair):
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


def _sequences(accepted) -> dict[str, list[int]]:
    """gate -> the sequences of these accepted events (for ``ledger.update_progress``)."""
    seen: dict[str, list[int]] = {}
    for a in accepted:
        seen.setdefault(a.event.gate_id, []).append(a.event.seq)
    return seen

