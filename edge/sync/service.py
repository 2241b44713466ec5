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
- Structure: the decisions (window, pauses, marks, status timing, replays) are the sans-I/O core
  ``edge.sync.uplink.Uplink``; paho is behind ``wire.gate_link.GateLink``, whose callbacks only
  queue ``(kind, ...)`` tuples and wake the pump. This module is the driver: one pump thread drains
  those tuples into the core, then executes the core's commands (publish, read the outbox, mark
  sent, status, depth check) until it has none, and sleeps until the core's ``wake_at``, the next
  input or ``poll_s``. The pump records each mid as soon as ``publish()`` returns and processes
  acks after that, so an early ack finds its mid. A second thread commits the marks (``MarkSent``)
  and returns the outcome as an input, so the window stays full while the journal writes; on stop
  it finishes its marks and the pump marks what is left itself.
- Drain cost per event (bench/outbox_drain.py): the pump publishes the signed bytes stored in the
  journal (``outbox_after``; no decode/re-encode), reads the outbox ``read_ahead`` rows per query
  from after the last row it handed out (rows in flight are not read again),
  marks acknowledged rows in groups (``mark_batch`` / ``mark_every_s``, one transaction, no fsync;
  a lost mark only republishes) and is woken by PUBACKs only, never by itself.
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
- Parts: the office's messages (receipts, signed downlinks, commands, photos, copies) are handled
  in ``edge.sync.inbound``; what a status says and the outbox's depth watch in ``edge.sync.status``
  (both mixins of ``Sync``); the decisions in ``edge.sync.uplink``.
"""

from __future__ import annotations

import collections
import datetime as dt
import queue
import threading
import time
import uuid
from pathlib import Path
from collections.abc import Callable

import structlog
from prometheus_client import Counter

from edge.sync import uplink as up
from edge.sync.apply_downlink import Downlink
from edge.sync.inbound import SyncInbound
from edge.sync.inspectors import InspectorFile
from edge.sync.outbox import Outbox
from edge.sync.settings import SyncSettings
from edge.sync.status import SyncStatus
from portgate.errors import StoreError
from wire import connection, topics
from wire import downlink as dl
from wire.gate_link import GateLink, reason_name
from wire.signed_downlink import Forward

log = structlog.get_logger("edge.sync")

PUBLISHED = Counter("portgate_uplink_published_total", "Events published (incl. resends)", ["gate_id"])
ACKED = Counter("portgate_uplink_acked_total", "Events acknowledged by the broker", ["gate_id"])
REJECTED = Counter("portgate_uplink_rejected_total", "PUBACKs with a failure reason code", ["gate_id"])
UNROUTED = Counter("portgate_uplink_unrouted_total",
                   "PUBACKs 'No matching subscribers': the office was not subscribed, row kept", ["gate_id"])
NO_MATCHING_SUBSCRIBERS = up.NO_MATCHING_SUBSCRIBERS
MARK_RETRY_S = up.MARK_RETRY_S
MAX_ROUNDS = 16  # polls per wake at most (each answers the commands of the one before)
PAUSE_LOG = {  # Pause.why -> (level, event, hint)
    "rejected": ("error", "uplink.rejected", None),
    "unrouted": ("warning", "uplink.unrouted", "no subscriber for the gate's events: is the office ingest connected?"),
    "request_unrouted": ("warning", "downlink.request_unrouted", "no office subscribed to snapshot requests yet"),
}


def _photo_downlink(photos, gate_id: str):
    """The workers' photos for the screen (``edge.sync.photos.PhotoDownlink`` over the gate's
    ``PhotoStore``), None without one; never in the decision path."""
    if photos is None:
        return None
    from edge.sync.photos import PhotoDownlink

    return PhotoDownlink(photos, gate_id)


def _inspector_file(store):
    """The inspectors' names file beside the store's file (issue 33), or None for a store with no
    file (a test's in-memory store)."""
    path = getattr(store, "path", None)
    if path is None:
        return None
    return InspectorFile(Path(path).parent)


def _system_now():
    from edge.rules.model import Now

    return Now(wall=dt.datetime.now(dt.UTC), mono_ns=time.monotonic_ns(), clock_trusted=True)


class Sync(SyncInbound, SyncStatus):
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
        office_key=None,
        office_next_key=None,
        readers=None,
    ) -> None:
        self.config = mqtt_config
        self.readers = readers  # edge.reader_health.ReaderHealth: in every status; a change sends one at once
        self._readers_version = None
        self._init_office(journal, office_key, office_next_key)
        self.journal = journal
        self.port = topics.check_id(port, "port")
        self.gate_id = topics.check_id(gate_id, "gate_id")
        self.boot_id = boot_id or getattr(journal, "boot_id", None) or str(uuid.uuid4())
        self.settings = settings
        self.now = now
        self.core = up.Uplink(settings, time.monotonic(), sent_through=journal.sent_through())
        self.stats = self.core.stats  # one counter: the core's and the driver's own
        self.downlink = Downlink(store, gate_id, _inspector_file(store)) if store is not None else None
        self.photos = _photo_downlink(photos, gate_id)
        self._init_topics()
        self._init_link(mqtt_config)
        self._alerted = False
        self._init_metrics()

    def _init_office(self, journal: Outbox, office_key, office_next_key) -> None:
        """What the office's messages are checked against (``edge.sync.inbound``)."""
        self.office_key = office_key  # Ed25519PublicKey of the office's receipts (edge.config.office_key)
        self.on_enrol: Callable[[dl.EnrolCommand], None] | None = None  # the gate loop's enrol_command
        # the office's keys a downlink may be signed with (the next one while the office rotates its key)
        self._office_keys = [k for k in (office_key, office_next_key) if k is not None]
        # newest issue number applied per downlink topic, kept in the journal across restarts
        self._forward = Forward(getattr(journal, "downlink_issued", dict)())
        self._refusal_alerted: dict[tuple[str, str], float] = {}

    def _init_link(self, mqtt_config: connection.MqttConfig) -> None:
        """The paho adapter (Last Will, subscriptions, window) and the pump's and marker's plumbing
        (nothing started)."""
        # filled by the link's callbacks on paho's thread, emptied by the pump (thread-safe deque)
        self._inputs: collections.deque = collections.deque()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self.link = GateLink(
            mqtt_config, mqtt_config.client_id or f"gate-{self.port}-{self.gate_id}",
            will=(self.t_status, self._status("offline", "will")),
            subscriptions=[(self.t_cmd, 1), (self.t_receipt, 1), (topics.downlink_filter(self.port), 1)],
            window=self.settings.window, inputs=self._inputs, wake=self._wake_up, gate_id=self.gate_id,
            lanes=self.settings.lanes)
        self.connected = self.link.connected
        self._pump: threading.Thread | None = None
        self._marker: threading.Thread | None = None  # commits MarkSent off the pump thread
        self._marks: queue.SimpleQueue = queue.SimpleQueue()

    def _init_topics(self) -> None:
        port, gate_id = self.port, self.gate_id
        self.t_events = topics.gate_events(port, gate_id)
        self.t_status = topics.gate_status(port, gate_id)
        self.t_cmd = topics.gate_cmd(port, gate_id)
        self.t_receipt = topics.gate_receipt(port, gate_id)  # the office's chain receipt (kept)
        self.t_requests = topics.gate_requests(port, gate_id)

    def _init_metrics(self) -> None:
        """The gate's Prometheus series (published, acknowledged, rejected, unrouted) and the
        counts already added to them."""
        self._published = PUBLISHED.labels(self.gate_id)
        self._counted = {"acked": 0, "rejected": 0, "unrouted": 0}
        self._metrics = {"acked": ACKED.labels(self.gate_id), "rejected": REJECTED.labels(self.gate_id),
                         "unrouted": UNROUTED.labels(self.gate_id)}

    @property
    def client(self):
        """The paho client (``wire.gate_link``), for its callbacks and Last Will."""
        return self.link.client

    # -- life cycle -------------------------------------------------------------------------------
    def start(self) -> Sync:
        """Connect in the background (retrying forever) and start the pump thread."""
        self._marker = threading.Thread(target=self._mark_loop, name=f"sync-marks-{self.gate_id}", daemon=True)
        self._marker.start()
        self._pump = threading.Thread(target=self._run, name=f"sync-{self.gate_id}", daemon=True)
        self._pump.start()
        self.link.start()
        return self

    def stop(self, timeout: float = 5.0) -> dict:
        """Join the pump (its last marks committed), publish the graceful "offline" status (if
        connected), disconnect; each wait at most ``timeout`` s. Returns what the gate logs of it
        (``edge.service``): ``{"pump_ended", "offline_acked"}`` (None: not connected, not sent)."""
        self._stopping.set()
        self._wake.set()
        if self._pump:
            self._pump.join(timeout)
        said = {"pump_ended": not (self._pump and self._pump.is_alive()), "offline_acked": None}
        if self.connected.is_set():
            said["offline_acked"] = self.link.publish_wait(self.t_status, self._status("offline", "graceful"),
                                                           timeout, retain=True)
        self.link.stop()
        return said

    def notify(self) -> None:
        """Tell the pump a new event was journaled (it also polls every ``poll_s``)."""
        self._wake.set()

    @property
    def inflight(self) -> int:
        return self.core.inflight

    def _wake_up(self) -> None:
        if not self._wake.is_set():  # set: the pump has not cleared it yet, so it drains after us
            self._wake.set()

    # -- pump thread: inputs to the core, its commands to the journal and the link ----------------
    def _run(self) -> None:
        while not self._stopping.is_set():
            timeout = min(self.settings.poll_s, max(0.0, self.core.wake_at - time.monotonic()))
            self._wake.wait(timeout)
            self._wake.clear()
            try:
                self._cycle()
            except Exception:  # noqa: BLE001 - the pump must survive anything and keep the outbox
                self.core.abandon()
                self.stats["pump_errors"] += 1
                log.exception("sync.pump_error", gate_id=self.gate_id)
                time.sleep(self.settings.poll_s)
        if self._marker is not None:  # its last answers come back as inputs; then mark here
            self._marks.put(None)
            self._marker.join()
            self._marker = None
        self._drain_inputs()
        self._execute(self.core.flush(time.monotonic()))

    def _mark_loop(self) -> None:
        """The marker thread: commits each ``MarkSent`` (``Journal.mark_sent``) while the pump keeps
        the window full, and hands the outcome back as an input (``marked`` / ``mark_failed``)."""
        while (seqs := self._marks.get()) is not None:
            try:
                self.journal.mark_sent(seqs)
            except StoreError as exc:
                self._inputs.append(("mark_failed", seqs, str(exc)))
            except Exception as exc:  # noqa: BLE001 - the rows stay acknowledged; retried like a full disk
                log.exception("sync.mark_error", gate_id=self.gate_id)
                self._inputs.append(("mark_failed", seqs, repr(exc)))
            else:
                self._inputs.append(("marked", seqs, self.journal.sent_through()))
            self._wake_up()

    def _cycle(self) -> None:
        self._drain_inputs()
        core = self.core
        core.notify()
        now = time.monotonic()
        if self.readers is not None and self.readers.version != self._readers_version:
            self._readers_version = self.readers.version
            core.status_soon(now)  # a reader's fault reaches the office's card without waiting
        health = self._health_mark() if core.status_due(now) else None  # read only when it can matter
        for _ in range(MAX_ROUNDS):
            commands = core.poll(now, health)
            self._execute(commands)
            if not any(type(c) in up.ANSWERED for c in commands):
                break
            now = time.monotonic()
        self._count()

    def _drain_inputs(self) -> None:
        inputs, core = self._inputs, self.core
        now = time.monotonic()
        while inputs:
            item = inputs.popleft()
            kind = item[0]
            if kind == "ack":
                core.ack(item[1], item[2], now)
            elif kind == "message":
                self._message(item[1], item[2])
            elif kind == "marked":
                core.marked(item[1], item[2], now)
            elif kind == "mark_failed":
                core.mark_failed(item[1], item[2], now)
            elif kind == "connect":
                core.connected(now)
            else:
                core.disconnected(now)

    def _execute(self, commands: list) -> None:
        core, journal = self.core, self.journal
        published, rows = 0, []
        for c in commands:
            if type(c) is up.Publish:  # a run of publishes goes to the broker as one write
                rows.append(c)
                continue
            if rows:
                published += self._publish(rows)
                rows = []
            if type(c) is up.MarkSent and self._marker is not None:
                self._marks.put(c.seqs)  # answered through the inputs
            elif type(c) is up.MarkSent:
                try:
                    journal.mark_sent(c.seqs)
                except StoreError as exc:
                    core.mark_failed(c.seqs, str(exc), time.monotonic())
                else:
                    core.marked(c.seqs, journal.sent_through(), time.monotonic())
            elif type(c) is up.ReadOutbox:
                core.rows(*journal.outbox_after(c.after, c.limit))
            elif type(c) is up.SendStatus:
                self.link.publish(self.t_status, self._status("online", c.reason), retain=True)
            elif type(c) is up.PublishRequest:
                core.request_published(self.link.publish(self.t_requests, c.body), c.body)
            elif type(c) is up.CheckDepth:
                self._check_depth()
            elif type(c) is up.Pause:
                level, event, hint = PAUSE_LOG[c.why]
                fields = {"retry_in_s": c.seconds} if c.why != "rejected" else {"reason": reason_name(c.reason)}
                if c.seq is not None:
                    fields["seq"] = c.seq
                if hint:
                    fields["hint"] = hint
                getattr(log, level)(event, gate_id=self.gate_id, **fields)
            elif type(c) is up.Notice:
                getattr(log, c.level)(c.event, gate_id=self.gate_id, **dict(c.fields))
        if rows:
            published += self._publish(rows)
        if published:
            self._published.inc(published)

    def _publish(self, rows: list) -> int:
        """Publish these ``Publish`` commands in order and tell the core each one's message id
        (before any of their acks is read: the pump reads inputs only between executions)."""
        mids = self.link.publish_many(self.t_events, [c.body for c in rows])
        for c, mid in zip(rows, mids, strict=True):
            self.core.published(mid, c.seq)
        return len(rows)

    def _count(self) -> None:
        """The Prometheus counters follow the core's stats."""
        for key, counted in self._counted.items():
            n = self.stats[key]
            if n != counted:
                self._metrics[key].inc(n - counted)
                self._counted[key] = n
