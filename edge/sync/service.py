"""The gate's MQTT link: store-and-forward uplink of the journal, downlinks into the store.

Delivery semantics (DESIGN.md "saved means committed", STYLE.md 7):

- Every event is already committed in the journal (the outbox) before it is published. It is
  published at QoS 1 on a persistent MQTT v5 session (``clean_start=False`` + session expiry) and
  leaves the outbox (``mark_sent``) only when the PUBACK for *its own* message id arrives. A PUBACK
  with a failure reason code (e.g. 0x87 not authorised by the broker ACL) leaves the row unsent and
  pauses publishing for ``reject_backoff_s``.
- A PUBACK "No matching subscribers" (0x10) means the broker delivered the event to nobody: the
  office's subscription is missing, e.g. mosquitto 2.0 does not restore a ``$share`` subscription
  from its persistence file, so after a broker restart the office's session is back without it until
  the office reconnects and subscribes again. Such a row also stays unsent; publishing pauses for
  ``unrouted_backoff_s``, doubling while rows keep coming back unrouted up to
  ``unrouted_backoff_max_s``, back to the minimum on the first routed PUBACK.
- paho calls ``on_publish`` on its network thread, possibly before ``publish()`` has returned the
  message id to us. So callbacks never touch the journal or the mid map: they append
  ``(mid, reason)`` to a deque and wake the pump (no other per-message work on paho's thread). One
  pump thread owns the journal calls and the mid -> seq map; it records the mid as soon as
  ``publish()`` returns and processes acks after that, so an early ack finds its mid.
- Drain cost per event (bench/outbox_drain.py, target >= 70% of bare paho): the pump publishes the
  signed bytes stored in the journal (``outbox_wire``; no decode/re-encode), reads the outbox
  ``read_ahead`` rows per query, marks acknowledged rows in groups (``mark_batch`` /
  ``mark_every_s``, one transaction, no fsync; a lost mark only republishes) and is woken by
  PUBACKs only, never by itself.
- Full disk: publishing needs no disk. When ``mark_sent`` fails (``StoreError``: disk full, I/O
  error) the acknowledged rows stay in memory, are never published again by the read-ahead, and the
  marks are retried every ``MARK_RETRY_S``; the pump keeps draining meanwhile (a mark lost in a
  crash only republishes the row, which the office drops by event id). Every ``check_every_s`` the
  pump also asks the journal to report the reads it refused for a full disk
  (``Journal.report_refusals``), so that alert is journaled and sent as soon as space returns.
- Backlog drain: unsent rows in journal order (priority desc, then seq asc), at most ``window``
  unacknowledged at once (also paho's ``max_inflight_messages``) and at most ``rate`` per second
  (token bucket, ``burst``), so a fleet reconnecting after an outage does not flood the broker.
- Outbox full policy: undelivered events are never dropped. When ``outbox_depth()`` reaches
  ``high_water`` the gate appends one ``OUTBOX_HIGH_WATER`` alert event (priority 1) and sets the
  ``portgate_outbox_depth`` gauge; the journal keeps growing until the disk is full (``StoreError``
  at the journal, handled by the gate loop). The alert re-arms when the depth falls below half.
- Reconnect: paho's network thread reconnects forever with exponential back-off
  (``reconnect_min_s``..``reconnect_max_s``); messages in flight are resent by paho on reconnect.
- Status: retained ``GateStatus`` on ``.../status``: Last Will "offline" (reason will), birth
  "online" on every connect, explicit "offline" (graceful) on ``stop()``; each with the boot id and
  ``sent_seq`` (every event up to it acknowledged by the broker). While connected, an "online"
  (progress) status follows when ``sent_seq`` moved, at most every ``status_every_s``: the office
  asks for a replay of a tail the broker acknowledged but never delivered (a broker crash before
  its autosave, a subscription missing after a restart while someone else was subscribed).
- Commands: ``ReplayCommand(seq_from, seq_to)`` on ``.../cmd`` republishes ``events_between``.
- Photos: ``down/photos/{snapshot,delta,file}`` go to ``edge.sync.photos.PhotoDownlink`` (files on
  disk in the state directory for the watchman's screen; a refused file is a ``downlink.rejected``).
- Downlinks: ``portgate/v1/{port}/down/#`` applied by ``edge.sync.apply_downlink.Downlink``; a delta that
  does not follow the held version makes the gate publish a ``SnapshotRequest`` to the office. A
  request the broker routed to nobody (the office not subscribed, e.g. just after a broker restart)
  is published again after the current unrouted pause.
"""

from __future__ import annotations

import collections
import datetime as dt
import threading
import time
import uuid
from collections.abc import Callable

import structlog
from prometheus_client import Counter

from edge.sync.apply_downlink import Downlink
from edge.sync.outbox import Outbox
from edge.sync.settings import SyncSettings
from edge.sync.ratelimit import TokenBucket
from portgate.errors import BadInput, StoreError
from wire import connection, topics
from wire import downlink as dl
from wire.events import AlertPayload, encode

log = structlog.get_logger("edge.sync")

from edge.metrics import OUTBOX_DEPTH  # noqa: E402  (shared with the gate service)
PUBLISHED = Counter("portgate_uplink_published_total", "Events published (incl. resends)", ["gate_id"])
ACKED = Counter("portgate_uplink_acked_total", "Events acknowledged by the broker", ["gate_id"])
REJECTED = Counter("portgate_uplink_rejected_total", "PUBACKs with a failure reason code", ["gate_id"])
UNROUTED = Counter("portgate_uplink_unrouted_total",
                   "PUBACKs 'No matching subscribers': the office was not subscribed, row kept", ["gate_id"])
NO_MATCHING_SUBSCRIBERS = 0x10  # MQTT v5 PUBACK reason code
MARK_RETRY_S = 5.0  # after a failed mark_sent (full disk), try again this much later


def _system_now():
    from edge.rules.model import Now

    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


class Sync:
    """MQTT sync of one gate. ``start()`` returns at once (connects in the background);
    ``stop()`` publishes the graceful offline status and disconnects."""

    def __init__(
        self,
        mqtt_config: connection.MqttConfig,
        journal: Outbox,
        store=None,
        *,
        port: str,
        gate_id: str,
        boot_id: str | None = None,
        settings: SyncSettings = SyncSettings(),
        now: Callable[[], object] = _system_now,
        photos=None,
    ) -> None:
        self.config = mqtt_config
        self.journal = journal
        self._sent_seq = journal.sent_through()  # every seq up to it acknowledged; refreshed after each mark flush
        self.port = topics.check_id(port, "port")
        self.gate_id = topics.check_id(gate_id, "gate_id")
        self.boot_id = boot_id or getattr(journal, "boot_id", None) or str(uuid.uuid4())
        self.settings = settings
        self.now = now
        self.downlink = Downlink(store, gate_id) if store is not None else None
        # workers' photos for the screen (edge.sync.photos.PhotoStore); never in the decision path
        self.photos = None
        if photos is not None:
            from edge.sync.photos import PhotoDownlink

            self.photos = PhotoDownlink(photos, gate_id)
        self.t_events = topics.gate_events(port, gate_id)
        self.t_status = topics.gate_status(port, gate_id)
        self.t_cmd = topics.gate_cmd(port, gate_id)
        self.t_receipt = topics.gate_receipt(port, gate_id)  # the office's chain receipt (kept)
        self.client = connection.make_client(mqtt_config, mqtt_config.client_id or f"gate-{port}-{gate_id}")
        self.client.max_inflight_messages_set(settings.window)
        self.client.max_queued_messages_set(0)
        self.client.will_set(self.t_status, self._status("offline", "will"), qos=1, retain=True)
        self.client.on_connect = self._on_connect
        self._log_disconnect = self.client.on_disconnect  # wire.connection.log_disconnect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.on_message = self._on_message
        self.connected = threading.Event()
        # filled by paho callbacks, emptied by the pump (deque append/popleft are thread-safe)
        self._acks: collections.deque[tuple[int, object]] = collections.deque()
        self._inbox: collections.deque[tuple[str, bytes]] = collections.deque()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._inflight: dict[int, int] = {}  # mid -> seq of outbox/replayed rows (pump thread only)
        self._oldest_unacked: float | None = None  # monotonic time the window last made progress
        self._inflight_seqs: set[int] = set()
        self._unmarked: set[int] = set()  # acknowledged, mark_sent pending (pump thread only)
        self._next_mark = 0.0
        self._marks_failing = False  # mark_sent failed; retried at _next_mark (MARK_RETRY_S)
        self._wake_at = float("inf")
        # (seq, wire bytes) waiting to be published: replay commands first, then the outbox read-ahead
        self._replay: collections.deque[tuple[int, bytes]] = collections.deque()
        self._ahead: collections.deque[tuple[int, bytes]] = collections.deque()
        self._paused_until = 0.0
        self._requests: dict[int, bytes] = {}  # mid -> snapshot request published, until its PUBACK
        self._unrouted_requests: collections.deque[bytes] = collections.deque()  # to publish again
        self._requests_at = 0.0  # when to publish them again (monotonic)
        self._request_wait = settings.unrouted_backoff_s  # doubling like the events' pause
        self._unrouted_wait = settings.unrouted_backoff_s  # next pause after an unrouted PUBACK
        self._alerted = False
        self._next_check = 0.0
        self._status_seq: tuple | None = None  # (sent_seq, clock trust, copies time) of the last progress status
        self._next_status = 0.0
        self._bucket = TokenBucket(settings.rate, settings.burst, time.monotonic())
        self._pump: threading.Thread | None = None
        self.stats = collections.Counter()
        self._published = PUBLISHED.labels(self.gate_id)
        self._acked = ACKED.labels(self.gate_id)

    # -- life cycle -------------------------------------------------------------------------------
    def start(self) -> Sync:
        """Connect in the background (retrying forever) and start the pump thread."""
        self._pump = threading.Thread(target=self._run, name=f"sync-{self.gate_id}", daemon=True)
        self._pump.start()
        connection.start(self.client, self.config)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Publish the graceful "offline" status (if connected), disconnect, join the pump."""
        self._stopping.set()
        self._wake.set()
        if self._pump:
            self._pump.join(timeout)
        if self.connected.is_set():
            info = self.client.publish(self.t_status, self._status("offline", "graceful"), qos=1, retain=True)
            try:
                info.wait_for_publish(timeout)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()

    def notify(self) -> None:
        """Tell the pump a new event was journaled (it also polls every ``poll_s``)."""
        self._wake.set()

    @property
    def inflight(self) -> int:
        return len(self._inflight)

    # -- paho callbacks (network thread): only queue and wake -----------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            log.warning("mqtt.connect_refused", gate_id=self.gate_id, reason=str(reason_code))
            return
        client.subscribe([(self.t_cmd, 1), (self.t_receipt, 1), (topics.downlink_filter(self.port), 1)])
        client.publish(self.t_status, self._status("online", "birth"), qos=1, retain=True)
        self.connected.set()
        self._oldest_unacked = None  # paho resends what was in flight: give it time to be acked
        self.stats["connects"] += 1
        log.info("mqtt.connected", gate_id=self.gate_id, session_present=flags.session_present)
        self._wake.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        self._log_disconnect(client, userdata, flags, reason_code, properties)
        log.info("mqtt.disconnected", gate_id=self.gate_id, reason=str(reason_code))

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        self._acks.append((mid, reason_code))
        if not self._wake.is_set():  # set: the pump has not cleared it yet, so it drains after us
            self._wake.set()

    def _on_message(self, client, userdata, message) -> None:
        self._inbox.append((message.topic, bytes(message.payload)))
        self._wake.set()

    # -- pump thread -------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping.is_set():
            timeout = min(self.settings.poll_s, max(0.0, self._wake_at - time.monotonic()))
            self._wake.wait(timeout)
            self._wake.clear()
            self._wake_at = float("inf")
            try:
                self._drain_acks()
                self._drain_inbox()
                if self.connected.is_set():
                    self._expire_stale_window()
                    self._fill_window()
                    self._progress_status()
                    self._retry_requests()
                self._check_depth()
            except Exception:  # noqa: BLE001 - the pump must survive anything and keep the outbox
                self.stats["pump_errors"] += 1
                log.exception("sync.pump_error", gate_id=self.gate_id)
                time.sleep(self.settings.poll_s)
        self._drain_acks()
        self._flush_marks(force=True)

    def _drain_acks(self) -> None:
        done: list[int] = []
        moved = False
        acks, inflight = self._acks, self._inflight
        while acks:
            mid, reason = acks.popleft()
            seq = inflight.pop(mid, None)
            if seq is None:
                self._request_acked(mid, reason)  # or a status: not tracked
                continue
            self._inflight_seqs.discard(seq)
            moved = True
            if reason.value == NO_MATCHING_SUBSCRIBERS:
                self._unrouted(seq)
            elif reason.is_failure:
                REJECTED.labels(self.gate_id).inc()
                self.stats["rejected"] += 1
                self._paused_until = time.monotonic() + self.settings.reject_backoff_s
                # Re-read from the journal at the next fill, so the refused row goes out again
                # before the later rows waiting in the read-ahead (per-gate order).
                self._ahead.clear()
                log.error("uplink.rejected", gate_id=self.gate_id, seq=seq, reason=str(reason))
            else:
                done.append(seq)
        if moved:
            self._oldest_unacked = time.monotonic()  # the window moves
        if done:
            self._unrouted_wait = self.settings.unrouted_backoff_s
            self._unmarked.update(done)
            self._acked.inc(len(done))
            self.stats["acked"] += len(done)
        self._flush_marks(force=not self._inflight)  # the link went idle: mark now

    def _request_acked(self, mid: int, reason) -> None:
        """A snapshot request routed to nobody is published again after a pause (``unrouted_backoff_s``
        doubling up to ``unrouted_backoff_max_s``, back to the minimum once one is routed)."""
        body = self._requests.pop(mid, None)
        if body is None:
            return
        if reason.value != NO_MATCHING_SUBSCRIBERS:
            self._request_wait = self.settings.unrouted_backoff_s
            return
        self.stats["requests_unrouted"] += 1
        if not self._unrouted_requests:
            self._requests_at = time.monotonic() + self._request_wait
            log.warning("downlink.request_unrouted", gate_id=self.gate_id, retry_in_s=self._request_wait,
                        hint="no office subscribed to snapshot requests yet")
            self._request_wait = min(self._request_wait * 2, self.settings.unrouted_backoff_max_s)
        self._unrouted_requests.append(body)

    def _publish_request(self, body: bytes) -> None:
        info = self.client.publish(topics.office_requests(self.port), body, qos=1)
        if len(self._requests) >= 100:  # PUBACKs that never came (a lost session): forget the oldest
            self._requests.pop(next(iter(self._requests)))
        self._requests[info.mid] = body

    def _retry_requests(self) -> None:
        if not self._unrouted_requests:
            return
        now = time.monotonic()
        if now < self._requests_at:
            self._wake_later(self._requests_at - now)
            return
        while self._unrouted_requests:
            self._publish_request(self._unrouted_requests.popleft())

    def _unrouted(self, seq: int) -> None:
        """The broker routed row ``seq`` to no subscriber (PUBACK 0x10): the row stays unsent and
        publishing pauses; each new pause (an attempt after the last one ended) is twice as long,
        up to ``unrouted_backoff_max_s``. The rows are re-read from the journal afterwards, so the
        unrouted ones go out again first (per-gate order)."""
        UNROUTED.labels(self.gate_id).inc()
        self.stats["unrouted"] += 1
        self._ahead.clear()
        now = time.monotonic()
        if now < self._paused_until:
            return  # the rest of a window sent before the pause began
        self._paused_until = now + self._unrouted_wait
        log.warning("uplink.unrouted", gate_id=self.gate_id, seq=seq, retry_in_s=self._unrouted_wait,
                    hint="no subscriber for the gate's events: is the office ingest connected?")
        self._unrouted_wait = min(self._unrouted_wait * 2, self.settings.unrouted_backoff_max_s)

    def _flush_marks(self, force: bool = False) -> None:
        """``mark_sent`` the acknowledged rows in one journal transaction (one ``UPDATE`` per
        contiguous run, no fsync: see ``Journal.mark_sent``): when nothing is in flight any more,
        before each outbox read (``_read_ahead``), when ``mark_batch`` piled up, every
        ``mark_every_s``, or on stop. Until then they are excluded from publishing. Each flush
        blocks the pump while PUBACKs keep arriving, so it is done per group, never per PUBACK."""
        if not self._unmarked:
            return
        now = time.monotonic()
        if self._marks_failing and now < self._next_mark and not self._stopping.is_set():
            self._wake_later(self._next_mark - now)  # a full disk: wait for the retry, keep publishing
            return
        if force or len(self._unmarked) >= self.settings.mark_batch or now >= self._next_mark:
            try:
                self.journal.mark_sent(sorted(self._unmarked))
            except StoreError as exc:
                self.stats["mark_failures"] += 1
                if not self._marks_failing:
                    log.error("uplink.marks_deferred", gate_id=self.gate_id, pending=len(self._unmarked),
                              retry_every_s=MARK_RETRY_S, error=str(exc),
                              hint="publishing continues; free disk space on the state directory")
                self._marks_failing = True
                self._next_mark = now + MARK_RETRY_S
                self._wake_later(MARK_RETRY_S)
                return
            if self._marks_failing:
                log.info("uplink.marks_recovered", gate_id=self.gate_id, marked=len(self._unmarked))
                self._marks_failing = False
            self._unmarked.clear()
            self._next_mark = now + self.settings.mark_every_s
            self._sent_seq = self.journal.sent_through()
        else:
            self._wake_later(self._next_mark - now)

    def _expire_stale_window(self) -> None:
        """At-least-once even if a PUBACK never comes (a message lost between paho and a broker
        that restarted): when connected and no outbox PUBACK arrived for ``ack_timeout_s`` while
        rows are in flight, forget those message ids and publish the rows again (the office
        dedupes by event id). Rows are still marked sent only on their own PUBACK."""
        now = time.monotonic()
        if not self._inflight:
            self._oldest_unacked = None
            return
        if self._oldest_unacked is None:
            self._oldest_unacked = now
            return
        if now - self._oldest_unacked < self.settings.ack_timeout_s:
            self._wake_later(self.settings.ack_timeout_s - (now - self._oldest_unacked))
            return
        pending = len(self._inflight)
        self._inflight.clear()
        self._inflight_seqs.clear()
        self._ahead.clear()
        self._oldest_unacked = None
        self.stats["ack_timeouts"] += 1
        log.warning("uplink.ack_timeout", gate_id=self.gate_id, republished=pending,
                    after_s=self.settings.ack_timeout_s)

    def _fill_window(self) -> None:
        """Top the window up at once: replayed rows first, then the outbox read-ahead, each publish
        taking a token from the rate limiter. Rows come from memory; the journal is queried only
        when the read-ahead holds fewer rows than there are free slots (once per ``read_ahead``
        rows while draining a backlog). The pump is woken again by the next PUBACK or ``notify``."""
        now = time.monotonic()
        if now < self._paused_until:
            self._wake_later(self._paused_until - now)
            return
        free = self.settings.window - len(self._inflight)
        if free <= 0:
            return
        rows: list[tuple[tuple[int, bytes], bool]] = []  # ((seq, wire bytes), came from a replay command)
        while self._replay and len(rows) < free:
            rows.append((self._replay.popleft(), True))
        if len(rows) + len(self._ahead) < free:
            # running short: read again (rows still held are unpublished, so they come back first)
            self._ahead.clear()
            self._read_ahead()
        while self._ahead and len(rows) < free:
            rows.append((self._ahead.popleft(), False))
        published = 0
        for i, ((seq, body), _replayed) in enumerate(rows):
            if not self._bucket.take(time.monotonic()):
                # not published: back to the front of where they came from, in order
                self._replay.extendleft(reversed([e for e, r in rows[i:] if r]))
                self._ahead.extendleft(reversed([e for e, r in rows[i:] if not r]))
                self._wake_later(self._bucket.wait_time())
                break
            info = self.client.publish(self.t_events, body, qos=1)
            self._inflight[info.mid] = seq
            self._inflight_seqs.add(seq)
            published += 1
        if published:
            self._published.inc(published)
            self.stats["published"] += published

    def _read_ahead(self) -> None:
        """Refill the in-memory read-ahead with up to ``read_ahead`` unsent rows in outbox order
        (one journal query per refill instead of one per window refill), as the stored wire bytes
        (``Outbox.outbox_wire``: published as they are, never decoded and re-encoded). Rows in
        flight are skipped; the pending marks are flushed first so the query need not read past
        acknowledged rows."""
        self._flush_marks(force=True)
        want = max(self.settings.read_ahead, self.settings.window)
        rows = self.journal.outbox_wire(len(self._inflight_seqs) + len(self._unmarked) + want)
        skip = self._inflight_seqs | self._unmarked  # acknowledged, mark pending (a full disk)
        self._ahead.extend(r for r in rows if r[0] not in skip)

    def _progress_status(self) -> None:
        """Publish an "online" (progress) status when ``sent_seq`` moved since the last one, at most
        every ``status_every_s`` (retained, QoS 1; not an outbox row, so not tracked); also when the
        clock's trust or the local copies' update time changed (the office's live view shows them)."""
        mark = (self._sent_seq, *self._health_mark())
        if mark == self._status_seq:
            return
        now = time.monotonic()
        if now < self._next_status:
            self._wake_later(self._next_status - now)
            return
        self.client.publish(self.t_status, self._status("online", "progress"), qos=1, retain=True)
        self._status_seq = mark
        self._next_status = now + self.settings.status_every_s

    def _wake_later(self, delay: float) -> None:
        """Make the pump's next wait end after ``delay`` seconds at the latest."""
        self._wake_at = min(self._wake_at, time.monotonic() + max(0.001, delay))

    def _drain_inbox(self) -> None:
        while self._inbox:
            topic, payload = self._inbox.popleft()
            try:
                if topic == self.t_cmd:
                    self._command(dl.decode(payload, dl.Command, where=topic))
                elif topic == self.t_receipt:
                    self.stats["receipts_kept"] += bool(self.journal.keep_receipt(payload))
                elif self.downlink is not None or self.photos is not None:
                    _port, kind, form = topics.parse_downlink_topic(topic)
                    msg = dl.decode_downlink(payload, kind, form, where=topic)
                    if kind == "photos":
                        if self.photos is None:
                            continue
                        request = self.photos.apply(form, msg, dt.datetime.now(dt.UTC))
                    elif self.downlink is None:
                        continue
                    else:
                        request = self.downlink.apply(kind, form, msg, dt.datetime.now(dt.UTC))
                    if request is not None:
                        self._publish_request(dl.encode(request))
                        log.info("downlink.snapshot_requested", gate_id=self.gate_id, kind=kind)
            except BadInput as exc:
                self.stats["bad_downlink"] += 1
                log.warning("downlink.rejected", gate_id=self.gate_id, topic=topic, error=str(exc))

    def _command(self, cmd) -> None:
        if isinstance(cmd, dl.ReplayCommand):
            events = self.journal.events_between(cmd.seq_from, cmd.seq_to)
            self._replay.extend((e.seq, encode(e)) for e in events)
            self.stats["replayed"] += len(events)
            log.info("uplink.replay", gate_id=self.gate_id, seq_from=cmd.seq_from, seq_to=cmd.seq_to, n=len(events))

    def _check_depth(self) -> None:
        now = time.monotonic()
        if now < self._next_check:
            return
        self._next_check = now + self.settings.check_every_s
        report = getattr(self.journal, "report_refusals", None)
        if report is not None and report(now=self.now()):
            self._ahead.clear()  # re-read: the priority alert goes before the rows read ahead
            self._wake.set()
        depth = self.journal.outbox_depth()
        OUTBOX_DEPTH.labels(self.gate_id).set(depth)
        if depth >= self.settings.high_water and not self._alerted:
            try:
                self.journal.append(
                    AlertPayload(code="OUTBOX_HIGH_WATER", detail=f"{depth} events unsent"),
                    now=self.now(),
                    priority=1,
                )
            except StoreError as exc:  # a full disk: raised again at the next check
                log.warning("outbox.high_water_not_journaled", gate_id=self.gate_id, error=str(exc))
                return
            self._alerted = True
            self._ahead.clear()  # re-read: the priority alert goes before the rows read ahead
            log.warning("outbox.high_water", gate_id=self.gate_id, depth=depth)
        elif depth < self.settings.high_water // 2:
            self._alerted = False

    def _status(self, state: str, reason: str) -> bytes:
        """The retained status with what the office's live view shows: outbox depth and oldest
        unsent event, clock trusted (G8/G13), when the local copies were last updated (G8); signed
        with the gate's key (the journal's, ``wire.downlink.sign_status``)."""
        status = dl.GateStatus(
            port=self.port, gate_id=self.gate_id, boot_id=self.boot_id, state=state,
            reason=reason, at=dt.datetime.now(dt.UTC), sent_seq=self._sent_seq, **self._health(),
        )
        key = getattr(self.journal, "key", None)  # signed like events: the office refuses it unsigned
        return dl.encode(dl.sign_status(status, key) if key else status)

    def _health_mark(self) -> tuple:
        """What changes a status besides ``sent_seq``: clock trust and the copies' update time."""
        store = getattr(self.downlink, "store", None)
        updated = getattr(store, "data_updated_at", None)
        return (getattr(self.now(), "clock_trusted", None), updated() if updated is not None else None)

    def _health(self) -> dict:
        out: dict = {}
        depth = getattr(self.journal, "outbox_depth", None)
        if depth is not None:
            out["outbox_depth"] = depth()
        oldest = getattr(self.journal, "oldest_unsent_at", None)
        if oldest is not None:
            value = oldest()
            out["oldest_unsent_at"] = value if value is not None and value.tzinfo else None  # naive: not said
        trusted = getattr(self.now(), "clock_trusted", None)
        if isinstance(trusted, bool):
            out["clock_trusted"] = trusted
        store = getattr(self.downlink, "store", None)
        updated = getattr(store, "data_updated_at", None)
        if updated is not None:
            value = updated()
            out["copies_updated_at"] = value if value is not None and value.tzinfo else None  # naive: not said
        return out
