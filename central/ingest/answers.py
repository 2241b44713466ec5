"""What the office sends the gates because of what came in, shared by both ingests (the MQTT
``IngestWorker`` of central/ingest/worker.py and the NATS ``JetStreamIngest`` of
central/ingest/jetstream.py): answers to the gates' snapshot requests, and the blocklist after a
committed confiscation.

- A request (``gate/<gate_id>/requests``, a ``SnapshotRequest``) is answered from the ledger
  (presence, and the blocklist: the base plus every confiscation) or from the snapshot source
  (roster/escala: ``CsvSnapshots`` or, with ``[publish] source = "registry"``, the
  ``DownlinkPublisher``), only when its ``gate_id`` is its topic's gate (the broker binds a gate's
  topics to its credentials) and its kind was not served within ``[ingest] snapshot_request_min_s``
  (the answer is a retained snapshot every gate gets, so the one sent answers the requests meanwhile).
- After a committed confiscation (``Outcome.confiscations``) the whole blocklist is published as a
  retained snapshot, or, with the registry source, its publisher is woken to send the delta.

``Answers`` counts into the ``stats`` counter it is given (the caller's): ``snapshots_served``,
``requests_refused``, ``requests_limited``, ``blocklist_published``. It is not thread-safe: one
thread answers requests (the worker's requests thread, the JetStream loop's answering thread);
``after_confiscation`` may come from the writer's thread (the same as before the split).
"""

from __future__ import annotations

import collections
import datetime as dt
import time

import structlog
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from central.broadcast import blocklist, presence
from central.broadcast.csv_source import CsvSnapshots
from central.broadcast.publisher import Publisher
from central.broadcast.registry_source import DownlinkPublisher
from central.config import CentralConfig
from central.ingest.event_store import MAX_MESSAGE_BYTES
from central.ingest.logbudget import LogBudget
from central.ingest.writer import db_error
from portgate.errors import BadInput
from wire import downlink as dl
from wire import topics

log = structlog.get_logger("central.ingest")


def snapshot_source(config: CentralConfig, engine: Engine) -> tuple[DownlinkPublisher | None, object]:
    """``(publisher, snapshots)`` for ``[publish]``: with ``source = "registry"`` the (not started)
    ``DownlinkPublisher``, which is also the snapshot source; else ``(None, CsvSnapshots(...))``."""
    p = config.publish
    if p.source == "registry":
        publisher = DownlinkPublisher(config, engine)
        return publisher, publisher
    return None, CsvSnapshots(p.workers_csv, p.cards_csv, p.escala_csv)


class Answers:
    """Snapshot answers and the blocklist after a confiscation (module doc), sent with
    ``broadcast`` (a ``Publisher`` on the caller's MQTT client, signing with the office key)."""

    def __init__(self, config: CentralConfig, engine: Engine, broadcast: Publisher, snapshots,
                 stats: collections.Counter) -> None:
        self.engine = engine
        self.broadcast = broadcast
        self.snapshots = snapshots
        self.registry = config.publish.source == "registry"  # snapshots is then a DownlinkPublisher
        self.min_s = config.ingest.snapshot_request_min_s
        self.stats = stats
        self._served: dict[str, float] = {}  # snapshot kind -> when it was last served (monotonic)
        self._log_budget = LogBudget()  # ingest.bad_request / request_refused warnings: 20 a minute

    def after_confiscation(self, now: dt.datetime) -> None:
        """A batch with a new confiscation committed: wake the registry's publisher (it sends the
        blocklist delta now) or publish the whole blocklist (``now``: aware UTC)."""
        if self.registry:
            self.snapshots.wake()
        else:
            self.publish_blocklist(now)

    def publish_blocklist(self, now: dt.datetime) -> None:
        """Publish the whole blocklist (retained snapshot); a database error is one log line (the
        next confiscation or request publishes it)."""
        snap = self.blocklist_snapshot(now)
        if snap is None:
            return
        self.broadcast.send("cards", "snapshot", snap)
        self.stats["blocklist_published"] += 1
        log.info("ingest.blocklist_published", version=snap.version, blocked=len(snap.blocked))

    def blocklist_snapshot(self, now: dt.datetime) -> dl.CardsSnapshot | None:
        """The blocklist (base from the snapshot source plus the ledger's confiscations), or None
        after a database error (logged)."""
        if self.registry:
            try:
                return self.snapshots.snapshot("cards", now)
            except SQLAlchemyError as exc:
                log.error("ingest.blocklist_failed", error=db_error(exc))
                return None
        try:
            base = self.snapshots.snapshot("cards", now) if self.snapshots is not None else None
        except BadInput as exc:
            log.error("ingest.snapshot_failed", kind="cards", error=str(exc))
            base = None
        try:
            with self.engine.connect() as conn:
                return blocklist.snapshot(conn, now, base)
        except SQLAlchemyError as exc:
            log.error("ingest.blocklist_failed", error=db_error(exc))
            return None

    def allowed(self, topic: str, req: dl.SnapshotRequest) -> bool:
        """A request is answered only when its ``gate_id`` is the gate whose topic it came on (the
        broker's ACL lets a gate write only its own: its credentials), and its kind was not served
        within ``[ingest] snapshot_request_min_s``. Refusals are counted (``requests_refused``,
        ``requests_limited``) and logged within the log budget."""
        try:
            _port, gate_id, _leaf = topics.parse_gate_topic(topic)
        except BadInput:
            gate_id = None
        if gate_id != req.gate_id:
            self.stats["requests_refused"] += 1
            swallowed = self._log_budget.take()
            if swallowed is not None:
                log.warning("ingest.request_refused", topic=topic[:255], gate_id=req.gate_id[:64],
                            reason="the request names another gate than its topic's", suppressed=swallowed)
            return False
        now = time.monotonic()
        last = self._served.get(req.kind)
        if last is not None and now - last < self.min_s:
            self.stats["requests_limited"] += 1
            return False
        self._served[req.kind] = now
        return True

    def answer(self, topic: str, payload: bytes) -> None:
        """Answer one message of a requests topic: a bad one is a warning within the log budget, a
        refused or limited one is counted, an allowed ``SnapshotRequest`` gets the retained snapshot
        of its kind (``snapshots_served``). Database errors of the snapshot source are logged here;
        others (the ledger's, a broken source) are raised: the caller logs them and goes on (the
        gate asks again)."""
        try:
            if len(payload) > MAX_MESSAGE_BYTES:
                raise BadInput(f"oversize: {len(payload)} bytes, more than {MAX_MESSAGE_BYTES}", where=topic)
            req = dl.decode(bytes(payload), dl.Command, where=topic)
        except BadInput as exc:
            swallowed = self._log_budget.take()
            if swallowed is not None:
                log.warning("ingest.bad_request", error=str(exc)[:300], suppressed=swallowed)
            return
        if not isinstance(req, dl.SnapshotRequest):
            return
        if not self.allowed(topic, req):
            return
        now = dt.datetime.now(dt.UTC)
        if req.kind == "presence":
            with self.engine.connect() as conn:
                snap = presence.snapshot(conn, now)
        elif req.kind == "cards":
            snap = self.blocklist_snapshot(now)
        elif self.snapshots is not None:
            try:
                snap = self.snapshots.snapshot(req.kind, now)
            except SQLAlchemyError as exc:
                log.error("ingest.snapshot_failed", kind=req.kind, error=db_error(exc))
                return
            except BadInput as exc:
                log.error("ingest.snapshot_failed", kind=req.kind, error=str(exc))
                return
        else:
            snap = None
        if snap is None:
            log.warning("ingest.snapshot_unavailable", kind=req.kind, gate_id=req.gate_id)
            return
        self.broadcast.send(req.kind, "snapshot", snap)
        self.stats["snapshots_served"] += 1
