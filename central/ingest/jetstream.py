"""The office's ingest from a NATS JetStream cluster (issue 37, first slice): ``[nats]`` in central.toml.

Gates publish over MQTT 3.1.1 to any node of the cluster (``[mqtt] protocol = "3.1.1"``); NATS's
MQTT layer maps the topic ``portgate/v1/santos/gate/g1/events`` to the subject
``portgate.v1.santos.gate.g1.events`` (NATS 2.9 refuses a ``.`` in an MQTT topic, so each subject
token is one topic level and the way back is ``.`` -> ``/``).

- Stream: one per port, ``<[nats] stream>_<port>`` (default ``PORTGATE_santos``), file storage,
  ``replicas`` copies (3), capturing the port's ``portgate.v1.<port>.gate.*.events`` and
  ``.status`` (the gate's retained status carries ``sent_seq``, which drives the tail repair).
  One stream per port because NATS 2.9 takes one filter subject per consumer, which must lie
  inside one of the stream's subjects (a filter ``portgate.v1.santos.gate.>`` over a stream of
  ``portgate.v1.*.gate.*.events`` and ``.status`` is refused, error 10093). Created if missing; an
  existing stream is used as it is (one that does not capture the port's events: ``ConfigError``).
- Consumer: one durable pull consumer per port (``ledger-<port>``, the whole port stream, explicit
  acks, ``ack_wait_s``). Several office processes on one
  config share it: JetStream hands each message to one fetcher, and a message a dead process
  fetched but never acknowledged goes to the others after ``ack_wait_s`` (no MQTT shared
  subscription whose unacknowledged messages stay with a dead session).
- Batches: up to ``[ingest] batch_size`` messages per fetch go through the same path as the MQTT
  ingest, ``LedgerWriter.process`` (decode, verify, dedupe by event id, dead letters, gap and tail
  repair, receipts), in one transaction; each message is acknowledged only after that commit. A
  crash before the acks redelivers the batch and the event-id dedupe makes it a no-op. A commit
  the writer gives up (``Abandoned``, on stop) is not acknowledged. The next batch is fetched while
  the writer commits the one in hand (one ahead; ``max_ack_pending`` at least two batches), so the
  writer does not sit idle through each fetch's round trip (docs/performance.md, issue 37); on
  stop the batch fetched ahead is handed back (``nak``) for another process to take at once.
  Batches come through ``central.ingest.jetstream_pull.LeanPull`` (whole-batch pull requests on one
  inbox subscription), not nats-py's ``fetch``, which spends a task per message.
- The writer's replay commands and receipts go to the gates over MQTT (``[mqtt]``, which then names
  the cluster's MQTT listeners with ``protocol = "3.1.1"``).

- Snapshot requests: a second stream per port, ``<[nats] stream>_<port>_requests`` (work queue,
  ``replicas``, requests dropped after ``REQUESTS_MAX_AGE_S``), captures the gates'
  ``portgate.v1.<port>.gate.*.requests`` (published over MQTT 3.1.1 by the gate's Sync, as on
  mosquitto); one durable pull consumer ``<durable>-requests`` shared by the office processes hands
  each request to one of them, which answers it with ``central.ingest.answers.Answers`` (the MQTT
  ingest's code: own-gate check, ``snapshot_request_min_s``, roster/cards/escala/presence) on its
  answering thread and acknowledges it. Not an MQTT subscription: NATS has no ``$share``, every
  process would answer every request, and two signed answers crossing on the way make the gate
  refuse the older one (``wire.signed_downlink.Forward``: a ``DOWNLINK_REFUSED`` alert) and may
  leave that older one retained. A request made while no office runs waits in the stream.
- Blocklist: after a committed batch with a confiscation (``Outcome.confiscations``) the whole
  blocklist is published retained (``Answers.after_confiscation``, on the answering thread), or,
  with ``[publish] source = "registry"``, the ``DownlinkPublisher`` this ingest then runs
  (``publisher``, watched by the runner) is woken to send its delta.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import datetime as dt
import itertools
import ssl
import threading

import nats
import structlog
from nats.js.api import AckPolicy, ConsumerConfig, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from central.config import CentralConfig, NatsSettings
from central.db import make_engine
from central.ingest.answers import Answers, snapshot_source
from central.ingest.jetstream_ask import ASK_S, asked_again
from central.ingest.jetstream_pull import LeanPull
from central.ingest.jetstream_why import ConnectFailures, config_error, explain
from central.ingest.keys import KeyRing
from central.ingest.writer import Abandoned, LedgerWriter, Outcome, db_error
from central.ledger.migrate import upgrade_engine
from portgate.config import read_secret
from portgate.errors import ConfigError

log = structlog.get_logger("central.ingest")
REQUESTS_MAX_AGE_S = 3600.0  # a snapshot request not answered within an hour is dropped (the gate asks again)
REQUESTS_FETCH = 20  # requests fetched at once

def connect_auth(s: NatsSettings) -> dict:
    """``nats.connect`` keyword arguments for ``[nats] user``/``password_file``/``tls_ca_file``
    (none when unset). ``ConfigError`` for a password file unreadable or readable by others."""
    kw: dict = {}
    if s.user:
        kw["user"] = s.user
        kw["password"] = read_secret(s.password_file, what="NATS password").decode().strip()
    if s.tls_ca_file:
        kw["tls"] = ssl.create_default_context(cafile=s.tls_ca_file)
    return kw


def port_subjects(port: str) -> list[str]:
    """The subjects the port's stream captures: its gates' events and statuses."""
    return [f"portgate.v1.{port}.gate.*.events", f"portgate.v1.{port}.gate.*.status"]


def request_subjects(port: str) -> list[str]:
    """The subject the port's requests stream captures: its gates' snapshot requests."""
    return [f"portgate.v1.{port}.gate.*.requests"]


def stream_name(prefix: str, port: str) -> str:
    """``PORTGATE`` + ``santos`` -> ``PORTGATE_santos`` (``.`` is not allowed in a stream name)."""
    return f"{prefix}_{port}".replace(".", "_")


def subject_to_topic(subject: str) -> str:
    """``portgate.v1.santos.gate.g1.events`` -> ``portgate/v1/santos/gate/g1/events``."""
    return subject.replace(".", "/")


SETUP_RETRY_MAX_S = 10.0  # the longest pause before the ingest loop starts again after a failure


class JetStreamIngest:
    """One pull-consumer loop (its own thread and asyncio loop) feeding one ``LedgerWriter``.

    Exposes what ``central.runner.run_central`` watches: ``workers`` (itself), ``connected``,
    ``stats``, ``open_gaps``, ``alive()``; ``start()``, ``stop()``, ``wait_connected()``.
    ``engine``/``keys`` as for ``central.ingest.service.Ingest``.
    """

    index = 0

    def __init__(self, config: CentralConfig, *, engine=None, keys=None, create_tables: bool = True) -> None:
        if not config.nats.servers:
            raise ConfigError("the JetStream ingest needs [nats] servers", key="nats.servers")
        self.config = config
        self.settings = config.nats
        self.engine = engine or make_engine(config.database_url)
        if create_tables:
            upgrade_engine(self.engine)
        self.keys = keys or KeyRing(config.keys_dir)
        self.durable = self.settings.durable or f"ledger-{config.port}"
        self.stream = stream_name(self.settings.stream, config.port)
        self.connected = threading.Event()
        self.stats: collections.Counter = collections.Counter()
        self.open_gaps = 0
        self.requests_stream = f"{self.stream}_requests"
        self.requests_durable = f"{self.durable}-requests"
        self.publisher, snapshots = snapshot_source(config, self.engine)  # [publish] source
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._quick = None  # the JetStream context for info asks, made per connection (_run)
        self._connect_failures = ConnectFailures(self.settings, log, self._stopping.is_set)
        self._batches = itertools.count(1)
        self._writer = LedgerWriter(config, self.engine, self.keys, abandon=self._stopping.is_set,
                                    notify=self._on_outcome)
        # the writer's calls stay on one thread (it is not thread-safe), off the asyncio loop
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="jetstream-writer")
        # snapshot requests and the blocklist after a confiscation, on the writer's MQTT client;
        # requests answered on their own thread (a batch being committed does not hold them up)
        self.answers = Answers(config, self.engine, self._writer.broadcast, snapshots, self.stats)
        self._answer_pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="jetstream-requests")

    @property
    def workers(self) -> list:
        return [self]

    def start(self) -> JetStreamIngest:
        if self.publisher is not None:
            self.publisher.start()
        self._writer.start()
        self._thread = threading.Thread(target=self._main, name="jetstream-ingest", daemon=True)
        self._thread.start()
        return self

    def begin_stop(self) -> None:
        self._stopping.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the batch in hand (acknowledged if it committed), close the NATS connection and
        the writer's MQTT client."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._pool.shutdown(wait=True)
        self._answer_pool.shutdown(wait=True)
        self._writer.close()
        if self.publisher is not None:
            self.publisher.stop()

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_connected(self, timeout: float = 10.0) -> bool:
        parts = [self, *([self.publisher] if self.publisher is not None else [])]
        return all(p.connected.wait(timeout) for p in parts)

    def _on_outcome(self, out: Outcome) -> None:
        for name, value in out.stats.items():
            self.stats[name] += value
        self.open_gaps = out.open_gaps
        if out.confiscations:  # a committed batch with a confiscation: the blocklist goes out now,
            try:  # from the answering thread (a database read; not on the asyncio loop)
                self._answer_pool.submit(self.answers.after_confiscation, dt.datetime.now(dt.UTC))
            except RuntimeError:  # stopping: the next start publishes it on the next confiscation or request
                log.warning("jetstream.blocklist_not_published", reason="stopping")

    # -- the loop ---------------------------------------------------------------------------------
    def _main(self) -> None:
        """The thread: the loop until stopped. A ``ConfigError`` (a stream that does not capture the
        port; ``replicas`` > 1 on a server not clustered: ``jetstream_why.config_error``) is one
        error line and the thread ends (``alive()`` False: the office's watchdog stops pinging,
        systemd restarts it, and the operator reads why). Any other failure (a JetStream
        API call unanswered within ``[nats] request_timeout_s``, a connection lost while the stream
        and consumer are set up: a loaded or electing cluster) is logged and the loop starts again
        after a pause (``reconnect_wait_s`` doubling to ``SETUP_RETRY_MAX_S``), as the MQTT ingest
        reconnects (the line's ``cause``, ``hint``: ``jetstream_why.explain``; a traceback at debug)."""
        pause = self.settings.reconnect_wait_s
        while not self._stopping.is_set():
            try:
                asyncio.run(self._run())
                return
            except Exception as exc:  # noqa: BLE001 - reported; the loop starts again unless permanent
                wrong = exc if isinstance(exc, ConfigError) else config_error(exc)
                if wrong is not None:
                    log.error("jetstream.config_error", error=str(wrong), setting=getattr(wrong, "key", None))
                    return
                self.stats["restarts"] += 1
                log.error("jetstream.ingest_failed", retry_in=pause, **explain(exc, self.settings))
                log.debug("jetstream.ingest_failed_traceback", exc_info=exc)
            if self._stopping.wait(pause):
                return
            pause = min(pause * 2, SETUP_RETRY_MAX_S)

    async def _run(self) -> None:
        s = self.settings
        nc = await nats.connect(servers=list(s.servers), name=self.durable, max_reconnect_attempts=-1,
                                reconnect_time_wait=s.reconnect_wait_s, connect_timeout=s.connect_timeout_s,
                                allow_reconnect=True, error_cb=self._connect_failures.report, **connect_auth(s))
        self._connect_failures.reset()
        try:
            js = nc.jetstream(timeout=s.request_timeout_s)
            self._quick = nc.jetstream(timeout=min(ASK_S, s.request_timeout_s))  # info asks (asked_again)
            sub = await self._subscribe(nc, js)
            requests = await self._subscribe_requests(js)
            self.connected.set()
            log.info("jetstream.consuming", stream=self.stream, durable=self.durable)
            loop = asyncio.get_running_loop()
            answering = asyncio.create_task(self._serve_requests(loop, requests))
            try:
                await self._consume(loop, sub)
            finally:
                await self._hand_back(sub.leftover())
                await sub.stop()
            await answering
        finally:
            self.connected.clear()
            await nc.close()

    async def _consume(self, loop, sub) -> None:
        """Until stopped: fetch a batch, commit it, acknowledge it. The next fetch is made while
        the writer commits the batch in hand (one fetch ahead, never more: the writer is not idle
        during a fetch's round trip); batches are still committed one after the other, in the
        order fetched, and each message acknowledged only after its own batch's commit. On stop
        the batch fetched ahead is not committed: its messages are handed back (``nak``), so
        another office process gets them at once rather than after ``ack_wait_s``."""
        ahead = asyncio.ensure_future(self._fetch(sub))
        try:
            while not self._stopping.is_set():
                msgs = await ahead
                ahead = asyncio.ensure_future(self._fetch(sub))
                if msgs:
                    await self._ingest(loop, msgs)
                out = await loop.run_in_executor(self._pool, self._writer.scan)
                if out is not None:
                    self._on_outcome(out)
        finally:
            await self._hand_back(await ahead)

    async def _fetch(self, sub) -> list:
        """Up to ``[ingest] batch_size`` messages, waiting at most ``fetch_wait_s``; ``[]`` when none
        came or the fetch failed (a node lost mid-fetch: counted in ``fetch_errors``, logged, and a
        pause of ``reconnect_wait_s`` while the client reconnects)."""
        try:
            return await sub.fetch(self.config.ingest.batch_size, self.settings.fetch_wait_s)
        except Exception as exc:  # noqa: BLE001 - a node lost mid-fetch: the client reconnects
            self.stats["fetch_errors"] += 1
            log.warning("jetstream.fetch_failed", error=repr(exc))
            await asyncio.sleep(self.settings.reconnect_wait_s)
            return []

    async def _hand_back(self, msgs) -> None:
        """Fetched, never committed (stopping): ``nak`` each message, so JetStream redelivers it now
        (to another process) instead of after ``ack_wait_s``. A ``nak`` that fails is left to
        ``ack_wait_s``; nothing is lost either way."""
        for m in msgs:
            try:
                await m.nak()
            except Exception as exc:  # noqa: BLE001 - redelivered after ack_wait anyway
                log.warning("jetstream.nak_failed", error=repr(exc))
                return
        if msgs:
            self.stats["handed_back"] += len(msgs)

    async def _subscribe(self, nc, js):
        s, port, name = self.settings, self.config.port, self.stream
        try:
            info = await self._stream_info(name)
        except NotFoundError:
            await js.add_stream(StreamConfig(name=name, subjects=port_subjects(port), num_replicas=s.replicas,
                                             storage=StorageType.FILE, max_age=s.max_age_s or None))
            log.info("jetstream.stream_created", stream=name, replicas=s.replicas)
        else:
            subjects = info.config.subjects or []
            if not any(_covers(pattern, f"portgate.v1.{port}.gate.x.events") for pattern in subjects):
                raise ConfigError(f"stream {name} ({subjects}) does not capture port {port}'s gate events",
                                  key="nats.stream")
        try:  # an existing consumer is used as it is (as nats-py's pull_subscribe does)
            await asked_again(lambda: self._quick.consumer_info(name, self.durable), s.request_timeout_s,
                              f"consumer {self.durable}")
        except NotFoundError:
            await js.add_consumer(name, ConsumerConfig(
                name=self.durable, durable_name=self.durable, ack_policy=AckPolicy.EXPLICIT, ack_wait=s.ack_wait_s,
                # the batch being committed and the one fetched ahead
                max_ack_pending=max(s.max_ack_pending, 2 * self.config.ingest.batch_size)))
        return await LeanPull(nc, name, self.durable).start()

    async def _stream_info(self, name: str):
        """``STREAM.INFO`` asked again every ``ASK_S`` until ``[nats] request_timeout_s`` (a stream
        without a leader yet leaves the ask unanswered: ``central.ingest.jetstream_ask``)."""
        return await asked_again(lambda: self._quick.stream_info(name), self.settings.request_timeout_s,
                                 f"stream {name}")

    async def _ingest(self, loop, msgs) -> None:
        items = [(subject_to_topic(m.subject), m.data) for m in msgs]
        batch_id = next(self._batches)
        try:
            out = await loop.run_in_executor(self._pool, self._writer.process, batch_id, items)
        except Abandoned:
            log.info("jetstream.batch_abandoned", batch=batch_id, messages=len(msgs))
            return  # not acknowledged: JetStream redelivers after ack_wait
        self._on_outcome(out)
        for m in msgs:  # only now: the batch is committed
            await m.ack()
        self.stats["acked"] += len(msgs)
        self.stats["batches"] += 1

    # -- snapshot requests -------------------------------------------------------------------------
    async def _subscribe_requests(self, js):
        """The port's requests stream (``<stream>_<port>_requests``, work queue: a request is
        removed once acknowledged, and dropped after ``REQUESTS_MAX_AGE_S``), created if missing,
        and its durable pull consumer ``<durable>-requests``, shared by every office process like
        the events' one: each request goes to one process. An existing stream that does not
        capture the port's requests: ``ConfigError``."""
        s, port, name = self.settings, self.config.port, self.requests_stream
        try:
            info = await self._stream_info(name)
        except NotFoundError:
            await js.add_stream(StreamConfig(name=name, subjects=request_subjects(port), num_replicas=s.replicas,
                                             retention=RetentionPolicy.WORK_QUEUE, storage=StorageType.FILE,
                                             max_age=REQUESTS_MAX_AGE_S))
            log.info("jetstream.stream_created", stream=name, replicas=s.replicas)
        else:
            subjects = info.config.subjects or []
            if not any(_covers(pattern, f"portgate.v1.{port}.gate.x.requests") for pattern in subjects):
                raise ConfigError(f"stream {name} ({subjects}) does not capture port {port}'s gate requests",
                                  key="nats.stream")
        return await js.pull_subscribe(
            "", durable=self.requests_durable, stream=name,
            config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=s.ack_wait_s))

    async def _serve_requests(self, loop, sub) -> None:
        """Until stopped: fetch requests, answer each (``Answers.answer``, on the answering thread),
        acknowledge it. A request whose answer failed is acknowledged too (logged; the gate asks
        again), as in the MQTT ingest; a process that dies before the ack leaves it to another."""
        s = self.settings
        while not self._stopping.is_set():
            try:
                msgs = await sub.fetch(REQUESTS_FETCH, timeout=s.fetch_wait_s)
            except TimeoutError:  # nothing to answer (nats' or asyncio's, as above)
                continue
            except Exception as exc:  # noqa: BLE001 - a node lost mid-fetch: the client reconnects
                self.stats["fetch_errors"] += 1
                log.warning("jetstream.requests_fetch_failed", error=repr(exc))
                await asyncio.sleep(s.reconnect_wait_s)
                continue
            for m in msgs:
                topic = subject_to_topic(m.subject)
                try:
                    await loop.run_in_executor(self._answer_pool, self.answers.answer, topic, m.data)
                except Exception as exc:  # noqa: BLE001 - one request never stops the answering
                    log.error("ingest.snapshot_failed", topic=topic, error=db_error(exc))
                try:
                    await m.ack()
                except Exception as exc:  # noqa: BLE001 - redelivered after ack_wait: answered again (limited)
                    log.warning("jetstream.request_ack_failed", error=repr(exc))


def _covers(pattern: str, subject: str) -> bool:
    """Does the NATS subject ``pattern`` (``*`` one token, ``>`` the rest) match ``subject``?"""
    p, s = pattern.split("."), subject.split(".")
    for i, token in enumerate(p):
        if token == ">":
            return len(s) > i
        if i >= len(s) or (token != "*" and token != s[i]):
            return False
    return len(p) == len(s)
