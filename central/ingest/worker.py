"""One ingest worker: an MQTT v5 persistent session on a shared subscription, writing batches to the
ledger and acknowledging each message only after the ledger commit.

- Session: ``clean_start=False`` always, session expiry from config, ``manual_ack=True``. paho then
  sends the PUBACK only when we call ``client.ack(mid, qos)``, which we do after the batch's
  transaction committed. A crash between receive and commit leaves the messages unacknowledged: the
  broker redelivers them to the session (or to another worker of the share group) and the
  ``event_id`` dedupe makes the second copy a no-op.
- Subscription: ``$share/<group>/portgate/v1/<port>/gate/+/events`` so N workers split the stream;
  N workers give the same ledger as one (dedupe + per-gate progress recomputed from the ledger).
- Batches: up to ``batch_size`` messages or ``batch_time_s``, one transaction. A database error
  keeps the batch (no ack) and retries it after a back-off; nothing is dropped.
- Rejects (malformed, bad MAC, unknown gate, topic/gate mismatch) become ``dead_letters`` rows in
  the same transaction, and are acknowledged (they will never become valid).
- After commit: a ``PresenceDelta`` per new admit/exit. Gap repair in rounds: once a gate has had a
  missing range for ``gap_grace_s``, one round sends a ``ReplayCommand`` for EVERY missing
  range of that gate (up to ``ledger.MAX_GAP_RANGES`` ranges / ``MAX_GAP_EVENTS`` sequences). The
  next round for the gate comes when the previous round's ranges are all filled (more holes beyond
  the bound) or, for ranges still open, after ``replay_every_s``.
- A gate's journal ``STORE_QUARANTINED`` alert records its lost range in ``gate_losses`` in the
  same transaction (``ledger.record_losses``), so that range is never chased as a gap.
- Snapshot requests from gates (``office/requests``, shared too) are answered from the ledger
  (presence) or from a snapshot source (roster/cards/escala).
- With ``[publish] source = "registry"``: each new confiscation also opens its case in the registry
  (``record_confiscation``, same transaction as the ledger write) and the ``DownlinkPublisher``
  (central/downlink.py) answers snapshot requests and publishes the blocklist delta.
"""

from __future__ import annotations

import collections
import datetime as dt
import queue
import threading
import time

import structlog
from prometheus_client import Counter
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.config import CentralConfig
from central.ingest import blocklist, ledger, presence
from central.ingest.keys import KeyRing
from portgate.errors import BadInput
from wire import connection, topics
from wire import downlink as dl
from wire.events import ConfiscationPayload

log = structlog.get_logger("central.ingest")

INGESTED = Counter("portgate_ingest_events_total", "Events newly written to the ledger")
DUPLICATES = Counter("portgate_ingest_duplicates_total", "Events already in the ledger")
DEAD = Counter("portgate_ingest_dead_letters_total", "Messages rejected to dead_letters")


def _overlap(asked, gaps) -> bool:
    """True if any gap intersects any of the ``asked`` (from, to) ranges (both inclusive)."""
    return any(a <= g.seq_to and g.seq_from <= b for a, b in asked for g in gaps)


class IngestWorker:
    """One worker (thread + MQTT session). ``start()``/``stop()``; ``stats`` counts what it did."""

    def __init__(
        self, config: CentralConfig, engine: Engine, keys: KeyRing, *, index: int = 0, snapshots=None
    ) -> None:
        self.config = config
        self.settings = config.ingest
        self.engine = engine
        self.keys = keys
        self.snapshots = snapshots
        self.registry = config.publish.source == "registry"  # snapshots is then a DownlinkPublisher
        self.port = config.port
        self.index = index
        client_id = config.mqtt.client_id or f"ledger-{config.port}"
        self.client = connection.make_client(config.mqtt, f"{client_id}-{index}", manual_ack=True)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.max_queued_messages_set(0)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = threading.Event()
        self.stats: collections.Counter = collections.Counter()
        self._gaps: dict[str, float] = {}  # gate -> since when it has had an open gap (monotonic)
        self._rounds: dict[str, tuple[float, tuple]] = {}  # gate -> (last round, ranges asked)
        self._next_gap_scan = 0.0
        self.t_events = topics.shared_gate_events(self.port, self.settings.share_group)
        self.t_requests = f"$share/{self.settings.share_group}/{topics.office_requests(self.port)}"

    def start(self) -> IngestWorker:
        self._thread = threading.Thread(target=self._run, name=f"ingest-{self.index}", daemon=True)
        self._thread.start()
        connection.start(self.client, self.config.mqtt, receive_maximum=max(10, self.settings.batch_size * 2))
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the current batch, then disconnect (the session and unacked messages stay)."""
        self._stopping.set()
        if self._thread:
            self._thread.join(timeout)
        self.client.disconnect()
        self.client.loop_stop()

    # paho network thread ---------------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.warning("ingest.connect_refused", reason=str(reason_code))
            return
        client.subscribe([(self.t_events, 1), (self.t_requests, 1)])
        self.connected.set()
        log.info("ingest.connected", worker=self.index, session_present=flags.session_present)

    def _on_message(self, client, userdata, message) -> None:
        self._queue.put(message)

    # worker thread ---------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping.is_set():
            batch = self._collect()
            if batch:
                self._process(batch)
            self._scan_gaps()

    def _collect(self) -> list:
        try:
            first = self._queue.get(timeout=0.2)
        except queue.Empty:
            return []
        batch = [first]
        deadline = time.monotonic() + self.settings.batch_time_s
        while len(batch) < self.settings.batch_size:
            remaining = deadline - time.monotonic()
            try:
                batch.append(self._queue.get(timeout=max(0.0, remaining)) if remaining > 0 else self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _process(self, batch: list) -> None:
        accepted, rejected, requests = [], [], []
        t_requests = topics.office_requests(self.port)
        for msg in batch:
            if msg.topic == t_requests:
                requests.append(msg)
                continue
            verdict = ledger.check(msg.topic, bytes(msg.payload), self.port, self.keys)
            (accepted if isinstance(verdict, ledger.Accepted) else rejected).append(verdict)
        seen: dict[str, list[int]] = {}  # gate -> sequences of this batch (for update_progress)
        for a in accepted:
            seen.setdefault(a.event.gate_id, []).append(a.event.seq)
        delay = 0.5
        while True:
            now = dt.datetime.now(dt.UTC)
            try:
                with self.engine.begin() as conn:
                    inserted = ledger.write_batch(conn, accepted, rejected, now)
                    if self.registry:
                        confiscated = self._record_confiscations(conn, inserted, now)
                    losses = ledger.record_losses(conn, inserted, now)
                    gaps = ledger.update_progress(conn, seen, now, seen=seen)
                break
            except SQLAlchemyError:
                log.exception("ingest.commit_failed", worker=self.index, retry_in=delay)
                if self._stopping.is_set():
                    return  # not acknowledged: the broker redelivers after restart
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
        for msg in batch:  # only now, after the commit
            self.client.ack(msg.mid, msg.qos)
        n_new = len(inserted)
        self.stats["inserted"] += n_new
        self.stats["duplicates"] += len(accepted) - n_new
        self.stats["dead_letters"] += len(rejected)
        INGESTED.inc(n_new)
        DUPLICATES.inc(len(accepted) - n_new)
        DEAD.inc(len(rejected))
        for loss in losses:
            self.stats["losses_recorded"] += 1
            log.warning(
                "ingest.gate_loss_recorded", gate_id=loss.gate_id, seq_from=loss.seq_from, seq_to=loss.seq_to,
                event_id=loss.event_id, reason="journal quarantined on the gate; not replayable",
            )
        for d in rejected:
            log.warning("ingest.dead_letter", topic=d.topic, reason=d.reason, gate_id=d.gate_id)
        if self.settings.relay_presence:
            self._relay(inserted, now)
        if blocklist.has_confiscation(inserted):
            if self.registry:
                self.stats["cases_opened"] += confiscated
                self.snapshots.wake()  # the publisher sends the blocklist delta now
            else:
                self._publish_blocklist(now)
        self._handle_gaps(gaps)
        self._forget_gaps(set(seen) - {g.gate_id for g in gaps})
        for msg in requests:
            self._answer(msg)

    def _relay(self, inserted, now) -> None:
        for row_id, event in inserted:
            delta = presence.delta_for(row_id, event, now)
            if delta is not None:
                self.client.publish(topics.downlink(self.port, "presence", "delta"), dl.encode(delta), qos=1)
                self.stats["presence_relayed"] += 1

    def _record_confiscations(self, conn, inserted, now: dt.datetime) -> int:
        """Registry source: open the case and block the card in the registry for each new
        confiscation (``record_confiscation``, idempotent by event id), in the ledger's transaction.
        A confiscation the registry refuses (``BadInput``, e.g. an unknown registration) is logged
        and stays in the ledger (its card is still blocked through the ledger part of the blocklist)."""
        from sqlalchemy.orm import Session

        from central.registry.confiscation import record_confiscation

        done = 0
        with Session(bind=conn, join_transaction_mode="create_savepoint") as session:
            for _row, event in inserted:
                if not isinstance(event.payload, ConfiscationPayload):
                    continue
                try:
                    with session.begin_nested():
                        record_confiscation(session, event, now=now)
                    done += 1
                except BadInput as exc:
                    log.error("ingest.confiscation_not_recorded", event_id=event.event_id, error=str(exc))
            session.commit()  # releases the session's savepoint; the ledger transaction commits it
        return done

    def _publish_blocklist(self, now: dt.datetime) -> None:
        """Publish the whole blocklist (retained snapshot) after a confiscation was committed."""
        snap = self._blocklist_snapshot(now)
        if snap is None:
            return
        self.client.publish(topics.downlink(self.port, "cards", "snapshot"), dl.encode(snap), qos=1, retain=True)
        self.stats["blocklist_published"] += 1
        log.info("ingest.blocklist_published", version=snap.version, blocked=len(snap.blocked))

    def _blocklist_snapshot(self, now: dt.datetime):
        if self.registry:
            try:
                return self.snapshots.snapshot("cards", now)
            except SQLAlchemyError:
                log.exception("ingest.blocklist_failed")
                return None
        try:
            base = self.snapshots.snapshot("cards", now) if self.snapshots is not None else None
        except BadInput as exc:
            log.error("ingest.snapshot_failed", kind="cards", error=str(exc))
            base = None
        try:
            with self.engine.connect() as conn:
                return blocklist.snapshot(conn, now, base)
        except SQLAlchemyError:
            log.exception("ingest.blocklist_failed")
            return None

    def _handle_gaps(self, gaps: list[ledger.Gap]) -> None:
        """Send replay rounds for ``gaps`` (all open gaps of the gates they name).

        Per gate, once it has had an open gap for ``gap_grace_s`` (messages still in flight fill
        most holes by then), a round asks for every open range at once (one ``ReplayCommand``
        each; a range that was still in flight arrives twice, and the second copy is a no-op). A new
        round is sent when no open gap overlaps the previous round's ranges (they
        were all filled: ask for the next ones now) or ``replay_every_s`` after the previous one.
        """
        now = time.monotonic()
        by_gate: dict[str, list[ledger.Gap]] = {}
        for gap in gaps:
            by_gate.setdefault(gap.gate_id, []).append(gap)
        for gate_id, ripe in by_gate.items():
            since = self._gaps.setdefault(gate_id, now)
            if now - since < self.settings.gap_grace_s:
                continue
            last, asked = self._rounds.get(gate_id, (None, ()))
            if last is not None and now - last < self.settings.replay_every_s and _overlap(asked, ripe):
                continue  # the previous round is still being answered (or part of it cannot be)
            at = dt.datetime.now(dt.UTC)
            for gap in ripe:
                cmd = dl.ReplayCommand(seq_from=gap.seq_from, seq_to=gap.seq_to, at=at)
                self.client.publish(topics.gate_cmd(self.port, gate_id), dl.encode(cmd), qos=1)
            self._rounds[gate_id] = (now, tuple((g.seq_from, g.seq_to) for g in ripe))
            self.stats["replay_requests"] += len(ripe)
            self.stats["replay_rounds"] += 1
            log.warning(
                "ingest.gap_replay", gate_id=gate_id, ranges=len(ripe),
                events=sum(g.seq_to - g.seq_from + 1 for g in ripe),
                first=(ripe[0].seq_from, ripe[0].seq_to), last=(ripe[-1].seq_from, ripe[-1].seq_to),
            )

    def _forget_gaps(self, gate_ids) -> None:
        """Drop the gap bookkeeping of gates that have no open gap any more."""
        for gate_id in gate_ids:
            self._gaps.pop(gate_id, None)
            self._rounds.pop(gate_id, None)

    def _scan_gaps(self) -> None:
        """Re-check open gaps periodically, also when the gate has gone quiet."""
        now = time.monotonic()
        if now < self._next_gap_scan:
            return
        self._next_gap_scan = now + max(0.2, self.settings.gap_grace_s / 2)
        try:
            with self.engine.begin() as conn:
                gates = ledger.open_gaps(conn)
                gaps = ledger.update_progress(conn, gates, dt.datetime.now(dt.UTC)) if gates else []
        except SQLAlchemyError:
            log.exception("ingest.gap_scan_failed")
            return
        if gates:
            self._handle_gaps(gaps)
        gone = (set(self._gaps) | set(self._rounds)) - set(gates)
        if gone:
            self._forget_gaps(gone)

    def _answer(self, msg) -> None:
        try:
            req = dl.decode(bytes(msg.payload), dl.Command, where=msg.topic)
        except BadInput as exc:
            log.warning("ingest.bad_request", error=str(exc))
            return
        if not isinstance(req, dl.SnapshotRequest):
            return
        now = dt.datetime.now(dt.UTC)
        if req.kind == "presence":
            with self.engine.connect() as conn:
                snap = presence.snapshot(conn, now)
        elif req.kind == "cards":
            snap = self._blocklist_snapshot(now)
        elif self.snapshots is not None:
            try:
                snap = self.snapshots.snapshot(req.kind, now)
            except SQLAlchemyError:
                log.exception("ingest.snapshot_failed", kind=req.kind)
                return
            except BadInput as exc:
                log.error("ingest.snapshot_failed", kind=req.kind, error=str(exc))
                return
        else:
            snap = None
        if snap is None:
            log.warning("ingest.snapshot_unavailable", kind=req.kind, gate_id=req.gate_id)
            return
        self.client.publish(topics.downlink(self.port, req.kind, "snapshot"), dl.encode(snap), qos=1, retain=True)
        self.stats["snapshots_served"] += 1
