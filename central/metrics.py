"""The office's Prometheus gauges (``portgate central run``; default registry, served by
``portgate.metrics.serve``), callbacks over the live ingest workers computed at scrape time.

``portgate_ingest_open_gaps`` (gauge: sequence gaps waiting for a replay),
``portgate_ingest_replay_requests_total`` (counter: replay requests sent since start, summed over
the workers' ``stats`` at scrape time), ``portgate_ingest_workers_alive`` and
``portgate_mqtt_connected{client="ingest-<n>"}``. The event counters
(``portgate_ingest_events_total``, ``_duplicates_total``, ``_dead_letters_total``) live in
``central.ingest.worker``. Registered on the first ``watch_ingest``, so a process that only imports
this module (a gate, a test) does not expose them; no gate family is imported here.
"""

from __future__ import annotations

from prometheus_client import REGISTRY, Gauge
from prometheus_client.core import CounterMetricFamily

from portgate.metrics import flag

_office: dict[str, object] = {}  # registered on the first watch_ingest (never on a gate)


class ReplayRequests:
    """``portgate_ingest_replay_requests_total``: a counter read from the workers' ``stats`` at
    scrape time (the workers count; nothing is incremented twice)."""

    def __init__(self) -> None:
        self.workers: list = []

    def describe(self):
        return [CounterMetricFamily("portgate_ingest_replay_requests", "Replay requests sent since start")]

    def collect(self):
        family = CounterMetricFamily("portgate_ingest_replay_requests", "Replay requests sent since start")
        family.add_metric([], float(sum(w.stats["replay_requests"] for w in self.workers)))
        yield family


def watch_ingest(workers: list) -> None:
    """Attach the office's callback gauges for a list of ``IngestWorker``."""
    if not _office:
        _office["gaps"] = Gauge("portgate_ingest_open_gaps", "Sequence gaps waiting for a replay")
        _office["replays"] = ReplayRequests()
        REGISTRY.register(_office["replays"])
        _office["alive"] = Gauge("portgate_ingest_workers_alive", "Ingest workers running (session thread and ledger writer)")
        _office["connected"] = Gauge("portgate_mqtt_connected", "1 while the ingest worker's MQTT session is connected",
                                     ["client"])
    ports = [getattr(getattr(w, "config", None), "port", "") for w in workers]
    several = len(set(ports)) > 1  # several ports (central/ingest/ports.py)
    for w, port in zip(workers, ports):
        client = f"ingest-{port}-{w.index}" if several else f"ingest-{w.index}"
        _office["connected"].labels(client).set_function(flag(w.connected.is_set))
    _office["gaps"].set_function(lambda: float(sum(w.open_gaps for w in workers)))
    _office["replays"].workers = list(workers)
    _office["alive"].set_function(lambda: float(sum(1 for w in workers if worker_alive(w))))


def worker_alive(worker) -> bool:
    """True while an ingest worker runs (the office's watchdog pings only if all are)."""
    if hasattr(worker, "alive"):
        return worker.alive()
    thread = getattr(worker, "_thread", None)
    return bool(thread is not None and thread.is_alive())
