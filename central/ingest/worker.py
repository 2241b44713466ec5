"""One ingest worker: an MQTT v5 persistent session on a shared subscription, handing batches to
its ledger writer (central/ingest/writer.py) and acknowledging each message only after the writer
reported the batch's commit.

- Session: ``clean_start=False`` always, session expiry from config, ``manual_ack=True``. paho then
  sends the PUBACK only when we call ``client.ack(mid, qos)``, which we do after the writer's
  transaction committed. A crash anywhere between receive and commit leaves the messages
  unacknowledged: the broker redelivers them to the session (or to another worker of the share
  group) and the ``event_id`` dedupe makes the second copy a no-op.
- Subscription: ``$share/<group>/portgate/v1/<port>/gate/+/events`` so N workers split the stream;
  N workers give the same ledger as one (dedupe + per-gate progress recomputed from the ledger).
- Batches: up to ``batch_size`` messages or ``batch_time_s`` after the first one. paho's network
  thread appends each message to the open batch and hands a full batch to the writer itself
  (``[ingest] writer``: a child process by default, central/ingest/link.py); a small flusher thread
  hands over a batch that is due by time. No other thread touches a message on its way in:
  measured on a 2-core machine, a sender thread between paho and the writer cost a third of the
  rate (GIL hand-overs), against paho's thread doing it all at the rate of a bare subscriber.
  The broker sends at most ``3 * batch_size`` unacknowledged messages (receive maximum), which
  bounds what is in hand. QoS 1 messages without properties come from ``wire.connection``'s
  ``on_raw_publish`` (mid, topic bytes, payload: no paho message object); others from ``on_message``.
- Acknowledgements: the committed batch's message ids go to a queue that paho's own thread drains on
  its next message, one write of PUBACKs per batch (``ack_many``) (no wake-up of the network thread per PUBACK; acknowledging from another thread
  cost a GIL hand-over per message); when no message comes within 2 ms, the link's thread drains it.
- Snapshot requests from gates (``gate/<gate_id>/requests``, shared too) are answered here from the
  ledger (presence) or from a snapshot source (roster/cards/escala), only when the request's
  ``gate_id`` is its topic's gate (the ACL binds a gate's topics to its username) and its kind was
  not served within ``[ingest] snapshot_request_min_s``; after a committed confiscation the
  blocklist is published here (or, with ``[publish] source = "registry"``, the
  ``DownlinkPublisher`` of central/broadcast/registry_source.py is woken to send its delta). Both
  are ``central.ingest.answers.Answers``, shared with the JetStream ingest.
"""

from __future__ import annotations

import collections
import datetime as dt
import itertools
import queue
import threading
import time

import paho.mqtt.client as mqtt
import structlog
from prometheus_client import Counter
from sqlalchemy.engine import Engine

from central.config import CentralConfig
from central.broadcast.publisher import Publisher, office_signer
from central.ingest.answers import Answers
from central.ingest.keys import KeyRing
from central.ingest.link import WriterProcess, WriterThread
from central.ingest.writer import Outcome, db_error
from wire import connection, topics

log = structlog.get_logger("central.ingest")

INGESTED = Counter("portgate_ingest_events_total", "Events newly written to the ledger")
DUPLICATES = Counter("portgate_ingest_duplicates_total", "Events already in the ledger")
DEAD = Counter("portgate_ingest_dead_letters_total", "Messages rejected to dead_letters")
RETRIES = Counter("portgate_ingest_commit_retries_total", "Ledger commits that failed and were retried")

_STOP = object()  # requests thread: end
_EVENT, _STATUS, _REQUEST = range(3)  # what a topic carries (``IngestWorker._classify``)
MAX_TOPICS = 100_000  # topics remembered with their kind (one per gate and kind in practice)
ACK_GRACE_S = 0.002  # how long the link's thread leaves a committed batch's PUBACKs to paho's thread


def mqtt_message(mid: int, topic: bytes, payload: bytes, qos: int) -> mqtt.MQTTMessage:
    """A paho message (for the requests thread, which reads ``topic``, ``payload``, ``mid``, ``qos``)."""
    msg = mqtt.MQTTMessage(mid, topic)
    msg.payload, msg.qos = payload, qos
    return msg


class IngestWorker:
    """One worker (MQTT session + sender thread + ledger writer). ``start()``/``stop()``; ``stats``
    counts what it did (summed from the writer's reports); ``open_gaps`` is the writer's last count."""

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
        self.client.on_subscribe = self._on_subscribe
        self.client.on_raw_publish = self._on_raw  # QoS 1 without properties: the stream's messages
        self.client.on_message = self._on_message  # any other (QoS 0, properties); no topic filters: cheaper
        self.client.max_queued_messages_set(0)
        self.broadcast = Publisher(self.client, self.port, office_signer(config.keys_dir))
        if self.settings.writer == "process":
            self.link = WriterProcess(config, index, self._on_outcome, restore=self._held_statuses)
        else:
            self.link = WriterThread(config, engine, keys, index, self._on_outcome)
        self._batch: list[tuple[str, bytes]] = []  # the open batch: received, not yet handed to the writer
        self._batch_mids: list[int] = []  # its QoS 1 message ids, to acknowledge after its commit
        self._topics: dict[bytes, tuple[str, int]] = {}  # topic bytes -> (topic, _EVENT/_STATUS/_REQUEST)
        self._opened = 0.0  # when its first message came (monotonic)
        self._batch_lock = threading.Lock()  # the open batch (paho's thread and the flusher)
        self._pending: dict[int, list[int]] = {}  # batch id -> QoS 1 message ids to acknowledge
        self._batch_ids = itertools.count(1)
        self._acks: collections.deque = collections.deque()  # committed batches' message ids (lists)
        self._ack_lock = threading.Lock()
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._requests_thread: threading.Thread | None = None
        self.connected = threading.Event()
        self._subscribe_mid: int | None = None
        self.stats: collections.Counter = collections.Counter()
        self.open_gaps = 0
        self.answers = Answers(config, engine, self.broadcast, snapshots, self.stats)  # requests, blocklist
        self._statuses: dict[str, bytes] = {}  # status topic -> newest payload (worker 0 only)
        self._statuses_lock = threading.Lock()
        self.t_events = topics.shared_gate_events(self.port, self.settings.share_group)
        self.t_requests = f"$share/{self.settings.share_group}/{topics.all_gate_requests(self.port)}"

    def start(self) -> IngestWorker:
        self.link.start()
        self._thread = threading.Thread(target=self._flush_due, name=f"ingest-flusher-{self.index}", daemon=True)
        self._thread.start()
        self._requests_thread = threading.Thread(target=self._serve_requests, name=f"ingest-requests-{self.index}",
                                                 daemon=True)
        self._requests_thread.start()
        connection.start(self.client, self.config.mqtt, receive_maximum=max(10, self.settings.batch_size * 3))
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Hand over the open batch, let the writer commit what it has, acknowledge it, then
        disconnect (the session, and anything not acknowledged, stay on the broker). Everything
        within ``timeout`` seconds: a writer that cannot finish (database down) is killed."""
        self.begin_stop()
        deadline = time.monotonic() + timeout
        if self._thread:
            self._thread.join(max(0.0, deadline - time.monotonic()))
        self.link.stop(max(0.5, deadline - time.monotonic()))
        self._drain_acks()
        if self._requests_thread:
            self._requests_thread.join(max(0.1, deadline - time.monotonic()))
        self.client.disconnect()
        self.client.loop_stop()

    def begin_stop(self) -> None:
        """Stop taking messages and hand over what is in hand (``stop`` then waits for it)."""
        self._stopping.set()
        self._requests.put(_STOP)

    def alive(self) -> bool:
        """True while the flusher and requests threads and the writer link run (the office's watchdog)."""
        threads = (self._thread, self._requests_thread)
        return all(t is not None and t.is_alive() for t in threads) and self.link.alive()

    def _held_statuses(self) -> list[tuple[str, bytes]]:
        """The newest status of each gate, for a writer started again (``WriterProcess.restore``)."""
        with self._statuses_lock:
            return list(self._statuses.items())

    # paho network thread ---------------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.warning("ingest.connect_refused", reason=str(reason_code))
            return
        subscriptions = [(self.t_events, 1), (self.t_requests, 1)]
        if self.index == 0:  # the gates' retained statuses (sent_seq) for the tail check (writer.py)
            subscriptions.append((topics.all_gate_status(self.port), 1))
        _rc, self._subscribe_mid = client.subscribe(subscriptions)
        log.info("ingest.connected", worker=self.index, session_present=flags.session_present)

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        """``connected`` is set once the broker acknowledged the subscriptions (SUBACK): before it,
        a fresh session misses what is published (the gates send again what is not acknowledged,
        but a caller waiting for ``wait_connected`` means "receiving")."""
        if mid != self._subscribe_mid:
            return
        refused = [str(rc) for rc in reason_codes if rc.is_failure]
        if refused:
            log.warning("ingest.subscribe_refused", worker=self.index, reasons=refused)
            return
        self.connected.set()

    def _on_raw(self, mid: int, topic: bytes, payload: bytes) -> None:
        """A QoS 1 message from ``wire.connection``'s fast path (no ``MQTTMessage`` built)."""
        self._take(mid, topic, payload, 1)

    def _on_message(self, client, userdata, message) -> None:
        """Any other message (QoS 0, or with properties): the same handling."""
        self._take(message.mid, message._topic, bytes(message.payload), message.qos)

    def _take(self, mid: int, topic: bytes, payload: bytes, qos: int) -> None:
        if self._acks:
            self._drain_acks(wait=False)
        known = self._topics.get(topic)
        if known is None:
            known = self._classify(topic)
        name, kind = known
        if kind == _REQUEST:
            if not self._stopping.is_set():
                msg = mqtt_message(mid, topic, payload, qos)
                self._requests.put(msg)
            return
        if kind == _STATUS:  # kept for a restarted writer (its claims are in memory)
            with self._statuses_lock:
                self._statuses[name] = payload
        with self._batch_lock:
            if self._stopping.is_set():
                return  # not acknowledged: redelivered to the next session
            # plain values, not paho's message objects: a batch of those kept alive (each with its
            # properties and reference cycles) made every collection slower (measured: a fifth of the rate)
            batch = self._batch
            batch.append((name, payload))
            if qos:
                self._batch_mids.append(mid)
            if len(batch) == 1:
                self._opened = time.monotonic()
            if len(batch) >= self.settings.batch_size:
                self._submit_open()

    def _classify(self, topic: bytes) -> tuple[str, int]:
        """``(topic text, kind)`` of a topic, remembered (up to ``MAX_TOPICS`` topics). A topic that
        is not UTF-8 keeps its bytes shown with replacement characters (the writer dead-letters it)."""
        name = topic.decode(errors="replace")
        kind = _REQUEST if name.endswith("/requests") else _STATUS if name.endswith("/status") else _EVENT
        if len(self._topics) < MAX_TOPICS:
            self._topics[topic] = (name, kind)
        return name, kind

    def _drain_acks(self, wait: bool = True) -> None:
        """Send the PUBACKs of committed batches, in order, one write per batch (one thread at a time)."""
        if not self._ack_lock.acquire(blocking=wait):
            return  # the other thread is sending them
        try:
            while True:
                try:
                    mids = self._acks.popleft()
                except IndexError:
                    return
                self.client.ack_many(mids)
        finally:
            self._ack_lock.release()

    # flusher thread ------------------------------------------------------------------------------
    def _flush_due(self) -> None:
        """Hand over the open batch once its first message has waited ``batch_time_s`` (checked
        every quarter of it, so a batch waits at most 1.25 times that); on stop, whatever is open."""
        wait_s = self.settings.batch_time_s
        while not self._stopping.wait(wait_s / 4):
            if self._batch and time.monotonic() - self._opened >= wait_s:  # a peek; decided under the lock
                with self._batch_lock:
                    if self._batch and time.monotonic() - self._opened >= wait_s:
                        self._submit_open()
        with self._batch_lock:  # _on_message takes nothing more once stopping is set
            if self._batch:
                self._submit_open()

    def _submit_open(self) -> None:
        """Hand the open batch to the writer (caller holds ``_batch_lock``, so batches go in order)."""
        batch, self._batch = self._batch, []
        mids, self._batch_mids = self._batch_mids, []
        batch_id = next(self._batch_ids)
        self._pending[batch_id] = mids
        self.link.submit(batch_id, batch)

    # writer link thread ----------------------------------------------------------------------------
    def _on_outcome(self, out: Outcome) -> None:
        if out.batch_id is not None:
            mids = self._pending.pop(out.batch_id, None)
            if mids:
                self._acks.append(mids)
        for name, value in out.stats.items():
            self.stats[name] += value
        INGESTED.inc(out.stats.get("inserted", 0))
        DUPLICATES.inc(out.stats.get("duplicates", 0))
        DEAD.inc(out.stats.get("dead_letters", 0))
        RETRIES.inc(out.stats.get("commit_retries", 0))
        self.open_gaps = out.open_gaps
        if out.confiscations:  # the blocklist published, or the registry's publisher woken
            self.answers.after_confiscation(dt.datetime.now(dt.UTC))
        if self._acks:
            time.sleep(ACK_GRACE_S)  # paho's thread usually sends them with its next message
            self._drain_acks()

    # requests thread -------------------------------------------------------------------------------
    def _serve_requests(self) -> None:
        while True:
            msg = self._requests.get()
            if msg is _STOP:
                return
            try:
                self.answers.answer(msg.topic, msg.payload)
            except Exception as exc:  # noqa: BLE001 - a request must never stop this thread (its acks keep the window open)
                log.error("ingest.snapshot_failed", topic=msg.topic, error=db_error(exc))  # the gate asks again
            self.client.ack(msg.mid, msg.qos)
