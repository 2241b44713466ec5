"""The gate uplink as a state machine with no I/O (STYLE.md 1, the h11 style).

``Uplink`` holds what the uplink decides: the in-flight window (message id -> outbox seq), the
read-ahead of outbox rows, the rows acknowledged but not yet marked sent, the reject and "no
matching subscribers" pauses, the rate limit, the status beacon's timing, tail replays and the
office snapshot requests. It imports no paho, no SQLite and reads no clock: every input carries
``now``, monotonic seconds (float). The driver (``edge.sync.service.Sync``) feeds it what happened
and executes what ``poll`` returns, in order:

========================  ====================================================================
input                     meaning
========================  ====================================================================
``connected(now)``        a session is up (paho resends what was in flight by itself)
``disconnected(now)``     the session is gone
``notify()``              the outbox may hold new rows (the driver calls it on every wake)
``published(mid, seq)``   ``Publish(seq)`` went to the client, which gave it message id ``mid``
``ack(mid, rc, now)``     the PUBACK of ``mid``; ``rc`` the MQTT v5 reason code (int)
``rows(rows, through)``   the answer to ``ReadOutbox``: ``[(seq, wire bytes), ...]`` and the
                          journal's ``through`` (``Journal.outbox_after``)
``marked(...)``           ``MarkSent`` committed; ``mark_failed(...)``: it raised ``StoreError``
``replay(rows)``          rows of a ``ReplayCommand`` (the office's tail or gap repair)
``request(body)``         a snapshot request to send the office; ``request_published(mid, body)``
``reread()``              a priority row was journaled: the read-ahead is dropped
========================  ====================================================================

Commands out of ``poll(now, health)``: ``Publish``, ``PublishRequest``, ``ReadOutbox``,
``MarkSent``, ``SendStatus``, ``CheckDepth``, ``Pause`` and ``Notice`` (lines for the log), defined
in ``edge.sync.uplink_commands`` and importable from here.

Delivery rules (DESIGN.md "saved means committed", STYLE.md 7): a row is marked sent only on the
PUBACK of *its own* message id. A PUBACK whose mid is not in the window (a status, a mid already
given up after ``ack_timeout_s``) marks nothing; a mid the client reuses (paho's ids wrap at
65535) replaces the row it named, which goes out again. A failure reason (>= 0x80, e.g. 0x87 not
authorised) leaves the row unsent and pauses publishing ``reject_backoff_s``; reason 0x10 "No
matching subscribers" (the office's subscription is missing) leaves it unsent and pauses
``unrouted_backoff_s``, doubling for each new pause up to ``unrouted_backoff_max_s`` and back to
the minimum on the first routed PUBACK. Connected, with rows in flight and no PUBACK for
``ack_timeout_s``, the window is given up and its rows published again (the office drops
duplicates by event id). The driver must call ``published`` before it hands over that mid's
``ack`` (an ack for a mid not published yet is ignored).

Reading on: each ``ReadOutbox`` asks for the ordinary rows after ``after``, the highest seq the
journal said it had served (``through``) once the read-ahead holding them is spent, so rows in
flight or acknowledged are not read again. Whenever a row handed out must go out again (a refused
or unrouted PUBACK, the ack timeout, a reused mid, an abandoned execution) ``after`` falls back to
0: the next read starts at the journal's lowest unsent row and skips what is in flight.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable

from edge.sync.ratelimit import TokenBucket
from edge.sync.settings import SyncSettings
from edge.sync.uplink_commands import (  # noqa: F401  (the driver and the tests name them up.<name>)
    ANSWERED, CheckDepth, Command, MarkSent, Notice, Pause, Publish, PublishRequest, ReadOutbox, Row, SendStatus,
)

NO_MATCHING_SUBSCRIBERS = 0x10  # MQTT v5 PUBACK reason code
FAILURE = 0x80  # reason codes from here up are failures
MARK_RETRY_S = 5.0  # after a failed MarkSent (full disk), try again this much later
MAX_REQUESTS = 100  # snapshot requests waiting for their PUBACK; beyond, the oldest is forgotten


class Uplink:
    """The uplink's state; see the module docstring for the inputs and commands.

    ``sent_through``: the journal's ``sent_through()`` at start (every seq up to it delivered).
    ``stats`` counts published, acked, rejected, unrouted, requests_unrouted, ack_timeouts,
    mark_failures, replayed and connects."""

    def __init__(self, settings: SyncSettings, now: float, *, sent_through: int = 0) -> None:
        self.settings = settings
        self.sent_seq = sent_through
        self.is_connected = False
        self.stats: collections.Counter = collections.Counter()
        self.wake_at = float("inf")  # poll again by then at the latest (monotonic seconds)
        self._inflight: dict[int, int] = {}  # mid -> seq
        self._inflight_seqs: set[int] = set()
        self._pending: set[int] = set()  # Publish returned by poll, published() not called yet
        self._progress_at: float | None = None  # when the window last moved (None: not timing)
        self._unmarked: set[int] = set()  # acknowledged, MarkSent not yet returned
        self._marking: set[int] = set()  # in a MarkSent being executed
        self._next_mark = 0.0
        self._marks_failing = False
        self._replay: collections.deque[Row] = collections.deque()
        self._ahead: collections.deque[Row] = collections.deque()
        self._reading = False  # a ReadOutbox is out
        self._asked = 0  # the limit of the last ReadOutbox
        self._read_again = True  # the outbox may hold rows the read-ahead lacks
        self._after = 0  # the next ReadOutbox reads ordinary rows after this seq
        self._through = 0  # ... the journal's through of the last read: _after once its rows are spent
        self._paused_until = 0.0
        self._unrouted_wait = settings.unrouted_backoff_s
        self._notes: list[Command] = []
        self._to_request: list[bytes] = []
        self._requests: dict[int, bytes] = {}  # mid -> request body, until its PUBACK
        self._unrouted_requests: list[bytes] = []
        self._requests_at = 0.0
        self._request_wait = settings.unrouted_backoff_s
        self._status_mark: tuple | None = None
        self._health: tuple = ()
        self._next_status = 0.0
        self._next_check = 0.0
        self._bucket = TokenBucket(settings.rate, settings.burst, now)

    # -- inputs -------------------------------------------------------------------------------------
    @property
    def inflight(self) -> int:
        """Publishes waiting for their PUBACK."""
        return len(self._inflight)

    def connected(self, now: float) -> None:
        """A session is up: the birth status goes out and the window's timer restarts (the client
        resends what was in flight; give it ``ack_timeout_s``)."""
        self.is_connected = True
        self._progress_at = None
        self._read_again = True
        self.stats["connects"] += 1
        self._notes.append(SendStatus("birth"))

    def disconnected(self, now: float) -> None:
        self.is_connected = False

    def notify(self) -> None:
        """New rows may be in the outbox: the next poll reads it if the read-ahead runs short."""
        self._read_again = True

    def reread(self) -> None:
        """A priority row was journaled: drop the read-ahead so it goes before the rows held (they
        are read again: the next read starts where the one that brought them did)."""
        if self._ahead:
            self._through = self._after
        self._ahead.clear()
        self._read_again = True

    def _restart(self) -> None:
        """A row handed out goes out again: the next read starts at the lowest unsent row."""
        self._ahead.clear()
        self._after = self._through = 0
        self._read_again = True

    def published(self, mid: int, seq: int) -> None:
        """Row ``seq`` was handed to the client as message ``mid``. A mid still in the window (the
        client's ids wrapped) no longer names its old row, which is published again."""
        self._pending.discard(seq)
        old = self._inflight.get(mid)
        if old is not None and old != seq:
            self._inflight_seqs.discard(old)
            self._restart()
        self._inflight[mid] = seq
        self._inflight_seqs.add(seq)
        self.stats["published"] += 1

    def ack(self, mid: int, rc: int, now: float) -> None:
        """The PUBACK of ``mid`` with reason code ``rc``."""
        seq = self._inflight.pop(mid, None)
        if seq is None:
            self._request_acked(mid, rc, now)
            return
        self._inflight_seqs.discard(seq)
        self._progress_at = now  # the window moves
        if rc == NO_MATCHING_SUBSCRIBERS:
            self._unrouted(seq, rc, now)
        elif rc >= FAILURE:
            self.stats["rejected"] += 1
            self._paused_until = now + self.settings.reject_backoff_s
            # re-read, so the refused row goes out again before the later rows held (per-gate order)
            self._restart()
            self._notes.append(Pause("rejected", self.settings.reject_backoff_s, seq, rc))
        else:
            self._unrouted_wait = self.settings.unrouted_backoff_s
            self._unmarked.add(seq)
            self.stats["acked"] += 1

    def rows(self, rows: Iterable[Row], through: int = 0) -> None:
        """The answer to ``ReadOutbox``: unsent rows in outbox order and the journal's ``through``
        (every unsent ordinary row up to it is in ``rows``; 0: unknown, read from the start again).
        Rows in flight or acknowledged are skipped; fewer rows than asked means the outbox is read
        to its end."""
        self._reading = False
        self._through = through
        rows = list(rows)
        skip = self._inflight_seqs | self._unmarked | self._marking | self._pending
        self._ahead.clear()
        self._ahead.extend(r for r in rows if r[0] not in skip)
        self._read_again = len(rows) >= self._asked

    def marked(self, seqs: Iterable[int], sent_through: int, now: float) -> None:
        """``MarkSent`` committed; ``sent_through`` the journal's gapless sent prefix now."""
        self._marking.difference_update(seqs)
        self.sent_seq = sent_through
        if self._marks_failing:
            self._notes.append(Notice("info", "uplink.marks_recovered", (("marked", len(tuple(seqs))),)))
            self._marks_failing = False

    def mark_failed(self, seqs: Iterable[int], error: str, now: float) -> None:
        """``MarkSent`` raised (a full disk): the rows stay acknowledged in memory, are never
        published again, and the marks are retried every ``MARK_RETRY_S``."""
        seqs = set(seqs)
        self._marking -= seqs
        self._unmarked |= seqs
        self.stats["mark_failures"] += 1
        if not self._marks_failing:
            self._notes.append(Notice("error", "uplink.marks_deferred", (
                ("pending", len(self._unmarked)), ("retry_every_s", MARK_RETRY_S), ("error", error),
                ("hint", "publishing continues; free disk space on the state directory"))))
        self._marks_failing = True
        self._next_mark = now + MARK_RETRY_S

    def replay(self, rows: Iterable[Row]) -> None:
        """Rows the office asked for again (``ReplayCommand``): published before the outbox's."""
        rows = list(rows)
        self._replay.extend(rows)
        self.stats["replayed"] += len(rows)

    def request(self, body: bytes) -> None:
        """Send the office this snapshot request (at the next poll)."""
        self._to_request.append(body)

    def request_published(self, mid: int, body: bytes) -> None:
        if len(self._requests) >= MAX_REQUESTS:  # PUBACKs that never came (a lost session)
            self._requests.pop(next(iter(self._requests)))
        self._requests[mid] = body

    def abandon(self) -> None:
        """The driver failed half-way through executing commands: forget what it did not confirm
        (rows to publish are read again, marks are asked again)."""
        self._pending.clear()
        self._restart()
        self._unmarked |= self._marking
        self._marking.clear()
        self._reading = False

    # -- commands -----------------------------------------------------------------------------------
    def status_soon(self, now: float) -> None:
        """Something the office must see at once changed (a reader's state): the next progress
        status may go out now, whatever ``status_every_s`` says."""
        self._next_status = min(self._next_status, now)

    def status_due(self, now: float) -> bool:
        """Whether a progress status may go out now (so the driver need read its health only then)."""
        return now >= self._next_status

    def poll(self, now: float, health: tuple | None = None) -> list[Command]:
        """What to do now, in order. ``health``: what else a progress status reports besides
        ``sent_seq`` (the driver's clock trust and copies' update time; a change sends one); None:
        as last given. Sets ``wake_at``. Call again after executing a ``ReadOutbox``, ``MarkSent``
        or ``CheckDepth`` (their answers can make more to do); other commands need no answer."""
        if health is not None:
            self._health = health
        health = self._health
        self.wake_at = float("inf")
        out, self._notes = self._notes, []
        if now >= self._next_check:
            self._next_check = now + self.settings.check_every_s
            out.append(CheckDepth())
        self._wake(self._next_check)
        while self._to_request:
            out.append(PublishRequest(self._to_request.pop(0)))
        if self.is_connected:
            self._expire_window(now, out)
            self._fill(now, out)
            self._status(now, health, out)
            self._retry_requests(now, out)
        # marks after the publishes: the window is full while the journal commits
        mark = self._marks(now, force=not self._inflight and not self._pending)
        if mark:
            out.append(mark)
        return out

    def flush(self, now: float) -> list[Command]:
        """On stop: the pending marks, whatever the timers say."""
        mark = self._marks(now, force=True, stopping=True)
        return [mark] if mark else []

    # -- internals ----------------------------------------------------------------------------------
    def _wake(self, at: float) -> None:
        self.wake_at = min(self.wake_at, at)

    def _marks(self, now: float, *, force: bool, stopping: bool = False) -> MarkSent | None:
        """A ``MarkSent`` of the acknowledged rows when nothing is in flight, before each outbox
        read, when ``mark_batch`` piled up, every ``mark_every_s``, or on stop; during a mark
        failure only at its retry time."""
        if not self._unmarked:
            return None
        if self._marks_failing and now < self._next_mark and not stopping:
            self._wake(self._next_mark)
            return None
        if force or len(self._unmarked) >= self.settings.mark_batch or now >= self._next_mark:
            seqs = tuple(sorted(self._unmarked))
            self._marking.update(seqs)
            self._unmarked.clear()
            self._next_mark = now + self.settings.mark_every_s  # also while this one is being committed
            return MarkSent(seqs)
        self._wake(self._next_mark)
        return None

    def _expire_window(self, now: float, out: list[Command]) -> None:
        if not self._inflight:
            self._progress_at = None
            return
        if self._progress_at is None:
            self._progress_at = now
        if now - self._progress_at < self.settings.ack_timeout_s:
            self._wake(self._progress_at + self.settings.ack_timeout_s)
            return
        pending = len(self._inflight)
        self._inflight.clear()
        self._inflight_seqs.clear()
        self._restart()
        self._progress_at = None
        self.stats["ack_timeouts"] += 1
        out.append(Notice("warning", "uplink.ack_timeout", (("republished", pending),
                                                              ("after_s", self.settings.ack_timeout_s))))

    def _fill(self, now: float, out: list[Command]) -> None:
        """Top the window up: replayed rows first, then the read-ahead, one token each; when the
        read-ahead runs out with room left, mark what is acknowledged and read the outbox on."""
        if now < self._paused_until:
            self._wake(self._paused_until)
            return
        free = self.settings.window - len(self._inflight) - len(self._pending)
        if free <= 0 or self._reading:
            return
        for source in (self._replay, self._ahead):
            while source and free > 0:
                if not self._bucket.take(now):
                    self._wake(now + max(0.001, self._bucket.wait_time()))
                    return
                seq, body = source.popleft()
                self._pending.add(seq)
                out.append(Publish(seq, body))
                free -= 1
        if free > 0 and self._read_again:
            # room left and the read-ahead is spent: read on, after the publishes above went out
            mark = self._marks(now, force=True)  # so the read need not pass acknowledged rows
            if mark:
                out.append(mark)
            skip = len(self._inflight_seqs) + len(self._unmarked) + len(self._marking) + len(self._pending)
            self._asked = skip + max(self.settings.read_ahead, self.settings.window)
            self._reading = True
            self._after = self._through  # the rows of the last read are spent
            out.append(ReadOutbox(self._asked, self._after))

    def _status(self, now: float, health: tuple, out: list[Command]) -> None:
        """A progress status when ``sent_seq`` or ``health`` changed, at most every ``status_every_s``."""
        mark = (self.sent_seq, *health)
        if mark == self._status_mark:
            return
        if now < self._next_status:
            self._wake(self._next_status)
            return
        out.append(SendStatus("progress"))
        self._status_mark = mark
        self._next_status = now + self.settings.status_every_s

    def _unrouted(self, seq: int, rc: int, now: float) -> None:
        """Row ``seq`` reached no subscriber: it stays unsent and publishing pauses; each new pause
        (an attempt after the last one ended) is twice as long, up to the maximum."""
        self.stats["unrouted"] += 1
        self._restart()
        if now < self._paused_until:
            return  # the rest of a window sent before the pause began
        self._paused_until = now + self._unrouted_wait
        self._notes.append(Pause("unrouted", self._unrouted_wait, seq, rc))
        self._unrouted_wait = min(self._unrouted_wait * 2, self.settings.unrouted_backoff_max_s)

    def _request_acked(self, mid: int, rc: int, now: float) -> None:
        """A snapshot request routed to nobody goes out again after a pause (doubling like the
        events' pause, back to the minimum once one is routed)."""
        body = self._requests.pop(mid, None)
        if body is None:
            return  # a status, or a mid given up: marks nothing
        if rc != NO_MATCHING_SUBSCRIBERS:
            self._request_wait = self.settings.unrouted_backoff_s
            return
        self.stats["requests_unrouted"] += 1
        if not self._unrouted_requests:
            self._requests_at = now + self._request_wait
            self._notes.append(Pause("request_unrouted", self._request_wait, None, rc))
            self._request_wait = min(self._request_wait * 2, self.settings.unrouted_backoff_max_s)
        self._unrouted_requests.append(body)

    def _retry_requests(self, now: float, out: list[Command]) -> None:
        if not self._unrouted_requests:
            return
        if now < self._requests_at:
            self._wake(self._requests_at)
            return
        out.extend(PublishRequest(b) for b in self._unrouted_requests)
        self._unrouted_requests.clear()
