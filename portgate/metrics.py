"""Prometheus metrics shared by the gate and the office (prometheus-client, default registry).

Each service calls ``serve(port, addr)`` once at start (``metrics_port`` in its config; 0 = off)
and then ``watch_gate(...)`` or ``watch_ingest(...)``, which attach *callback gauges*: their value
is computed at scrape time from the live objects (journal, clock, MQTT clients), so they are never
stale and cost nothing between scrapes. Counters and the histogram are updated where things happen.

Gate (``portgate edge run``):

- ``portgate_decisions_total{outcome,rule}``: decisions shown; ``rule`` is the first rule that
  failed (the one whose message the watchman sees) or ``none`` for an ADMIT/EXIT without objection.
- ``portgate_tap_latency_seconds``: histogram, read (monotonic time the reader saw the card) ->
  decision shown on the indicator; includes the pairing window when a control card waits for a badge.
- ``portgate_outbox_depth{gate_id}``, ``portgate_outbox_oldest_age_seconds{gate_id}``: unsent
  events and how long the oldest has waited (0 when the outbox is empty).
- ``portgate_clock_synchronised{gate_id}``: 1 when the kernel says NTP has synchronised the clock
  (events carry the same flag as ``clock_trusted``, rule G8).
- ``portgate_mqtt_connected{client}``: 1 while the MQTT session is up (absent on a standalone gate).
- ``portgate_reader_up{reader_id}``, ``portgate_reader_faults_total{reader_id,kind}``: from
  ``drivers.metrics``.

Office (``portgate central run``): ``portgate_ingest_events_total`` (events committed to the ledger),
``portgate_ingest_duplicates_total``, ``portgate_ingest_dead_letters_total`` (from
``central.ingest.worker``), ``portgate_ingest_open_gaps`` (sequence gaps waiting for a replay),
``portgate_ingest_replay_requests_total``, ``portgate_ingest_workers_alive`` and
``portgate_mqtt_connected{client}``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable

import structlog
from prometheus_client import REGISTRY, Counter, Gauge, Histogram, start_http_server

log = structlog.get_logger(__name__)

DECISIONS = Counter("portgate_decisions_total", "Gate decisions shown, by outcome and first failed rule",
                    ["outcome", "rule"])
TAP_LATENCY = Histogram(
    "portgate_tap_latency_seconds", "Card read to decision shown on the indicator (seconds)",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 2.0, 5.0),
)
OUTBOX_DEPTH = Gauge("portgate_outbox_depth", "Unsent events in the gate outbox", ["gate_id"])
OUTBOX_OLDEST_AGE = Gauge("portgate_outbox_oldest_age_seconds",
                          "Age of the oldest unsent event in the gate outbox (0 if empty)", ["gate_id"])
CLOCK_SYNCHRONISED = Gauge("portgate_clock_synchronised",
                           "1 when the gate's wall clock is NTP-synchronised (events carry clock_trusted)",
                           ["gate_id"])
MQTT_CONNECTED = Gauge("portgate_mqtt_connected", "1 while the MQTT session is connected", ["client"])
_office: dict[str, Gauge] = {}  # office-only gauges, registered by watch_ingest (not on a gate)


def serve(port: int, addr: str = "127.0.0.1"):
    """Start the HTTP endpoint (``GET /metrics``) on ``addr:port`` in a daemon thread.

    ``port`` 0 means metrics are off: returns None. Returns the server object otherwise. Raises
    ``OSError`` if the port is taken (the service then stops: a misconfigured port is a config error
    the operator must see).
    """
    if not port:
        return None
    result = start_http_server(port, addr=addr, registry=REGISTRY)
    server = result[0] if isinstance(result, tuple) else result
    log.info("metrics_listening", addr=addr, port=port)
    return server


def observe_decision(outcome: str, rules_failed: Iterable[str], latency_s: float | None) -> None:
    """Count one decision shown and, when the read time is known, its read -> indicator latency."""
    rules = list(rules_failed)
    DECISIONS.labels(outcome=outcome, rule=rules[0] if rules else "none").inc()
    if latency_s is not None and latency_s >= 0:
        TAP_LATENCY.observe(latency_s)


def _age_s(oldest: Callable[[], dt.datetime | None]) -> float:
    at = oldest()
    if at is None:
        return 0.0
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.UTC)
    return max(0.0, (dt.datetime.now(dt.UTC) - at).total_seconds())


def _flag(fn: Callable[[], object]) -> Callable[[], float]:
    def get() -> float:
        try:
            return 1.0 if fn() else 0.0
        except Exception:  # a scrape must never break the service
            return 0.0

    return get


def watch_gate(gate_id: str, journal, clock, sync=None) -> None:
    """Attach the gate's callback gauges: outbox depth and oldest age (``journal``), clock
    synchronised (``clock.now().clock_trusted``), MQTT connected (``sync.connected``, if any)."""
    import drivers.metrics  # noqa: F401  (reader_up / reader_faults_total families, always exposed)

    OUTBOX_DEPTH.labels(gate_id).set_function(lambda: float(journal.outbox_depth()))
    OUTBOX_OLDEST_AGE.labels(gate_id).set_function(lambda: _age_s(journal.oldest_unsent_at))
    inner = getattr(clock, "inner", clock)  # GuardedClock wraps the SystemClock (NTP probe)
    synced = inner.trusted if hasattr(inner, "trusted") else (lambda: clock.now().clock_trusted)
    CLOCK_SYNCHRONISED.labels(gate_id).set_function(_flag(synced))
    if sync is not None:
        MQTT_CONNECTED.labels(f"gate-{gate_id}").set_function(_flag(sync.connected.is_set))


def watch_ingest(workers: list) -> None:
    """Attach the office's callback gauges for a list of ``IngestWorker``."""
    if not _office:
        _office["gaps"] = Gauge("portgate_ingest_open_gaps", "Sequence gaps waiting for a replay")
        _office["replays"] = Gauge("portgate_ingest_replay_requests", "Replay requests sent since start")
        _office["alive"] = Gauge("portgate_ingest_workers_alive", "Ingest workers running (session thread and ledger writer)")
    for w in workers:
        MQTT_CONNECTED.labels(f"ingest-{w.index}").set_function(_flag(w.connected.is_set))
    _office["gaps"].set_function(lambda: float(sum(w.open_gaps for w in workers)))
    _office["replays"].set_function(lambda: float(sum(w.stats["replay_requests"] for w in workers)))
    _office["alive"].set_function(lambda: float(sum(1 for w in workers if worker_alive(w))))


def worker_alive(worker) -> bool:
    """True while an ingest worker runs (the office's watchdog pings only if all are)."""
    if hasattr(worker, "alive"):
        return worker.alive()
    thread = getattr(worker, "_thread", None)
    return bool(thread is not None and thread.is_alive())
