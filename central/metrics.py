"""The office's Prometheus gauges (``portgate central run``; default registry, served by
``portgate.metrics.serve``), callbacks over the live ingest workers computed at scrape time.

``portgate_ingest_open_gaps`` (sequence gaps waiting for a replay),
``portgate_ingest_replay_requests`` (replay requests sent since start), ``portgate_ingest_workers_alive``
and ``portgate_mqtt_connected{client="ingest-<n>"}`` (``portgate.metrics``). The event counters
(``portgate_ingest_events_total``, ``_duplicates_total``, ``_dead_letters_total``) live in
``central.ingest.worker``.
"""

from __future__ import annotations

from prometheus_client import Gauge

from portgate.metrics import MQTT_CONNECTED, flag

_office: dict[str, Gauge] = {}  # registered on the first watch_ingest (never on a gate)


def watch_ingest(workers: list) -> None:
    """Attach the office's callback gauges for a list of ``IngestWorker``."""
    if not _office:
        _office["gaps"] = Gauge("portgate_ingest_open_gaps", "Sequence gaps waiting for a replay")
        _office["replays"] = Gauge("portgate_ingest_replay_requests", "Replay requests sent since start")
        _office["alive"] = Gauge("portgate_ingest_workers_alive", "Ingest workers running (session thread and ledger writer)")
    for w in workers:
        MQTT_CONNECTED.labels(f"ingest-{w.index}").set_function(flag(w.connected.is_set))
    _office["gaps"].set_function(lambda: float(sum(w.open_gaps for w in workers)))
    _office["replays"].set_function(lambda: float(sum(w.stats["replay_requests"] for w in workers)))
    _office["alive"].set_function(lambda: float(sum(1 for w in workers if worker_alive(w))))


def worker_alive(worker) -> bool:
    """True while an ingest worker runs (the office's watchdog pings only if all are)."""
    if hasattr(worker, "alive"):
        return worker.alive()
    thread = getattr(worker, "_thread", None)
    return bool(thread is not None and thread.is_alive())
