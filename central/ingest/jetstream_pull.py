"""A lean pull from a JetStream durable consumer: batches without an asyncio task per message (issue 37).

nats-py's ``PullSubscription.fetch`` awaits each message of a batch through ``asyncio.wait_for``
(a new task per message): on the 3-node cluster bench that was 0.4-0.5 s of the ingest thread's
CPU per 6,000 events, more than the ledger writer's (docs/performance.md). ``LeanPull`` speaks the
same JetStream pull protocol with nats-py's public core API: one inbox subscription with a callback
(nats-py runs one task per *subscription*) that appends each delivered message to a buffer, and
``$JS.API.CONSUMER.MSG.NEXT.<stream>.<durable>`` requests of a whole batch published to it.

- ``fetch(n, wait_s)``: what the buffer holds, up to ``n``; when it is empty, first a ``no_wait``
  request (JetStream delivers what it has, up to ``n``, then ends the request with a status), and
  if that brought nothing a waiting request (``expires`` = what is left of ``wait_s``) that returns
  at its first delivery. ``[]`` when nothing came within ``wait_s``.
- One request open at a time. It ends with its last message (``n`` delivered), a status (404 no
  messages, 408 expired, 409 e.g. max ack pending reached) or, when no status can come (the node
  that held it died), ``wait_s`` + ``STALE_GRACE_S`` after it was made. Messages delivered after
  ``fetch`` returned stay in the buffer for the next call: nothing delivered is dropped.
- The messages are nats-py ``Msg`` objects with their ``$JS.ACK`` reply: ``ack()``/``nak()`` as before.
  The guarantees are the consumer's (explicit acks, ``ack_wait``, ``max_ack_pending``): a message
  fetched and never acknowledged goes to another fetcher after ``ack_wait``.

Errors: ``fetch`` raises what ``nc.publish`` raises (connection closed); statuses are not errors
(counted in ``statuses``; a 409, a refused request, is logged ``jetstream.pull_refused`` once per
description: a consumer whose ``max_batch`` is below the batch refuses every request).
``leftover()`` hands the buffered, never returned messages to the caller on stop (to ``nak``).
"""

from __future__ import annotations

import asyncio
import collections
import json
import time

import structlog

log = structlog.get_logger("central.ingest")
STALE_GRACE_S = 1.0  # a request with no status this long after its expiry is taken as lost
API_PREFIX = "$JS.API"


class LeanPull:
    """Batches from the durable pull consumer ``durable`` of ``stream`` on the connection ``nc``."""

    def __init__(self, nc, stream: str, durable: str) -> None:
        self._nc = nc
        self._next = f"{API_PREFIX}.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self._inbox = nc.new_inbox()
        self._buf: collections.deque = collections.deque()
        self._arrived = asyncio.Event()
        self._owed = 0  # messages the open request may still deliver; 0: no request open
        self._open_until = 0.0  # monotonic: a request still open after this is taken as lost
        self._sub = None
        self.statuses: collections.Counter = collections.Counter()  # status code -> how many
        self.last_refusal: str | None = None  # the last 409's description (e.g. "Exceeded MaxRequestBatch of 5")

    async def start(self) -> LeanPull:
        """Subscribe the inbox (raises what ``nc.subscribe`` raises: connection closed); returns self."""
        self._sub = await self._nc.subscribe(self._inbox, cb=self._on_msg)
        return self

    async def stop(self) -> None:
        """Unsubscribe the inbox: messages delivered after it are redelivered after ``ack_wait``."""
        if self._sub is not None:
            await self._sub.unsubscribe()
            self._sub = None

    async def _on_msg(self, msg) -> None:
        status = msg.headers.get("Status") if msg.headers else None
        if status:
            if status != "100":  # 100: an idle heartbeat (not asked for); anything else ends the request
                self.statuses[status] += 1
                self._owed = 0
            if status == "409":  # refused (a consumer setting, a leader change): logged once per reason
                why = msg.headers.get("Description", "")
                if why != self.last_refusal:
                    log.warning("jetstream.pull_refused", status=status, description=why)
                self.last_refusal = why
        else:
            self._buf.append(msg)
            self._owed = max(0, self._owed - 1)
        self._arrived.set()

    def _open(self) -> bool:
        if self._owed and time.monotonic() > self._open_until:
            self.statuses["stale"] += 1
            self._owed = 0
        return self._owed > 0

    async def _request(self, n: int, expires_s: float | None) -> None:
        body: dict = {"batch": n}
        if expires_s is None:
            body["no_wait"] = True
        else:
            body["expires"] = int(expires_s * 1e9)
        self._owed = n
        self._open_until = time.monotonic() + (expires_s or 0.0) + STALE_GRACE_S
        await self._nc.publish(self._next, json.dumps(body).encode(), reply=self._inbox)

    async def _until(self, done, deadline: float) -> None:
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._arrived.clear()
            if done():
                return
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except TimeoutError:
                return

    def _take(self, n: int) -> list:
        return [self._buf.popleft() for _ in range(min(n, len(self._buf)))]

    async def fetch(self, n: int, wait_s: float) -> list:
        """Up to ``n`` messages (nats-py ``Msg``), waiting at most about ``wait_s`` seconds for the
        first; ``[]`` if none came."""
        deadline = time.monotonic() + wait_s
        if not self._buf and not self._open():  # what the consumer has now, up to n
            await self._request(n, None)
            await self._until(lambda: len(self._buf) >= n or not self._open(), deadline)
        if not self._buf and self._open():  # an earlier fetch's request, still open: it may deliver
            await self._until(lambda: self._buf or not self._open(), deadline)
        if not self._buf and not self._open() and time.monotonic() < deadline:
            # nothing: a waiting request for the first delivery (also when the earlier fetch's
            # request ended while this one waited: without it, a fetch that began while that
            # request was open sat out the whole wait_s with no request, messages stored meanwhile
            # undelivered until the next fetch: up to fetch_wait_s of latency after a quiet moment)
            await self._request(n, max(0.05, deadline - time.monotonic()))
            await self._until(lambda: self._buf or not self._open(), deadline)
        if not self._buf:  # ended early by a status (409): no new request before wait_s is up
            await self._until(lambda: self._buf, deadline)
        return self._take(n)

    def leftover(self) -> list:
        """The messages delivered and never returned by ``fetch`` (on stop: to hand back)."""
        return self._take(len(self._buf))
